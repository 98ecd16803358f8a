/* SPDX-License-Identifier: MIT */
/* Fill the driver table from the linked libcuda (clients linked with -lcuda). */
#include "common.h"

void cc_load_direct(void)
{
    cc.Init = cuInit;
    cc.DeviceGet = cuDeviceGet;
    cc.DevicePrimaryCtxRetain = cuDevicePrimaryCtxRetain;
    cc.CtxSetCurrent = cuCtxSetCurrent;
    cc.MemAlloc = cuMemAlloc;
    cc.MemFree = cuMemFree;
    cc.MemAllocHost = cuMemAllocHost;
    cc.MemFreeHost = cuMemFreeHost;
    cc.MemAllocManaged = cuMemAllocManaged;
    cc.StreamCreate = cuStreamCreate;
    cc.StreamSynchronize = cuStreamSynchronize;
    cc.Array3DCreate = cuArray3DCreate;
    cc.ArrayDestroy = cuArrayDestroy;
}
