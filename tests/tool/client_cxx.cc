// SPDX-License-Identifier: MIT
// A C++ client of the test double for tests/tool/callsite.sh: one batch of
// two ops that write the same bytes (an overlap_dst_dst hazard), made from
// a member function template in a namespace, so that its call site has a
// mangled name.  The line of the call is marked CALL-SITE.
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CK(x)                                                            \
    do {                                                                 \
        if ((x) != CUDA_SUCCESS) {                                       \
            std::fprintf(stderr, "client_cxx: %s failed\n", #x);         \
            std::exit(2);                                                \
        }                                                                \
    } while (0)

namespace app {
template <typename T> struct Copier {
    static CUresult copy(CUDA_MEMCPY3D_BATCH_OP *ops, size_t n, CUstream s)
    {
        return cuMemcpy3DBatchAsync(n, ops, 0, s); // CALL-SITE
    }
};
} // namespace app

static CUmemcpy3DOperand ptr(CUdeviceptr p)
{
    CUmemcpy3DOperand o;
    std::memset(&o, 0, sizeof o);
    o.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    o.op.ptr.ptr = p;
    return o;
}

int main()
{
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    CUdeviceptr a, b;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc(&a, 8192));
    CK(cuMemAlloc(&b, 4096));
    CUDA_MEMCPY3D_BATCH_OP ops[2];
    for (int i = 0; i < 2; i++) {
        std::memset(&ops[i], 0, sizeof ops[i]);
        ops[i].src = ptr(a + 4096 * (CUdeviceptr)i);
        ops[i].dst = ptr(b);
        ops[i].extent.width = 4096;
        ops[i].extent.height = ops[i].extent.depth = 1;
        ops[i].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    }
    CK(app::Copier<int>::copy(ops, 2, s));
    CK(cuStreamSynchronize(s));
    std::printf("client_cxx: 1 batch\n");
    return 0;
}
