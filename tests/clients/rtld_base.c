/* SPDX-License-Identifier: MIT */
/* libcbtbase: the definition that libcbtnext's wrapper finds with RTLD_NEXT. */
const char *cbt_who(void);
const char *cbt_base_name(void);
const char *cbt_base_name(void) { return "base"; }
const char *cbt_who(void) { return cbt_base_name(); }
