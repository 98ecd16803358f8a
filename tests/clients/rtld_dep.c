/* SPDX-License-Identifier: MIT */
/* libcbtdep: a dependency of libcbtplugin, hence only in the plugin's local scope. */
int cbt_dep_value(void);
int cbt_dep_value(void) { return 42; }
