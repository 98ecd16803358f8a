/* SPDX-License-Identifier: MIT */
/*
 * dlsym as seen by its caller.  Linked to libcbtnext (wrappers of cbt_who and
 * puts that use RTLD_NEXT) and libcbtbase; opens libcbtplugin (argument 1)
 * with RTLD_LOCAL and asks it to resolve its dependency's symbol through
 * RTLD_DEFAULT.  Every line printed must be the same with and without the
 * shim.  Finally the plugin looks up cuMemcpy3DBatchAsync_v2 with dlsym on a
 * libcuda handle and the client makes a batch through what it got: with the
 * shim that is the shim's door "symbol" (the trace shows it).
 */
#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>
#include <stdio.h>

const char *cbt_who(void);

int main(int argc, char **argv)
{
    if (argc < 2)
        cc_fail("usage: client_rtld PATH-TO-libcbtplugin.so");
    printf("cbt_who: %s\n", cbt_who());
    puts("puts through its RTLD_NEXT wrapper");
    printf("main RTLD_DEFAULT cbt_dep_value: %s\n", dlsym(RTLD_DEFAULT, "cbt_dep_value") ? "found" : "not found");
    void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!plugin)
        cc_fail("dlopen(%s): %s", argv[1], dlerror());
    int (*lookup)(char *, size_t) = (int (*)(char *, size_t))dlsym(plugin, "cbt_plugin_lookup");
    void *(*batch_symbol)(void) = (void *(*)(void))dlsym(plugin, "cbt_plugin_batch_symbol");
    if (!lookup || !batch_symbol)
        cc_fail("plugin entry points missing");
    char line[128];
    lookup(line, sizeof line);
    printf("plugin %s\n", line);
    printf("main RTLD_NEXT cbt_who: %s\n", dlsym(RTLD_NEXT, "cbt_who") ? "found" : "not found");
    fflush(stdout);

    cc_load_direct();
    CUstream s = cc_setup();
    struct cc_door door = {.v2 = (cc_batch_v2_fn)batch_symbol()};
    if (!door.v2)
        cc_fail("dlsym(libcuda, cuMemcpy3DBatchAsync_v2) failed");
    int bad = cc_simple_batch(door, s, 2, 128, 7);
    cc_summary(NULL);
    return bad ? 1 : 0;
}
