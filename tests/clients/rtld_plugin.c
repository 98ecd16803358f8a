/* SPDX-License-Identifier: MIT */
/*
 * libcbtplugin: opened with dlopen(RTLD_LOCAL).  dlsym(RTLD_DEFAULT, ...)
 * from here searches the plugin's own scope too, so it finds its dependency's
 * cbt_dep_value; from the program's or the shim's point of view it is not
 * visible.  It also looks the batch up by dlsym on a libcuda handle, as
 * plugins that find the driver themselves do.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

int cbt_dep_value(void);
int cbt_plugin_lookup(char *out, size_t len);
void *cbt_plugin_batch_symbol(void);

int cbt_plugin_lookup(char *out, size_t len)
{
    int (*f)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "cbt_dep_value");
    if (!f)
        return snprintf(out, len, "RTLD_DEFAULT cbt_dep_value: not found");
    return snprintf(out, len, "RTLD_DEFAULT cbt_dep_value: %d%s", f(), f == cbt_dep_value ? " (its dependency's)" : " (another)");
}

void *cbt_plugin_batch_symbol(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    return h ? dlsym(h, "cuMemcpy3DBatchAsync_v2") : NULL;
}
