/* Warm and cold L2 (axis `l2`), and the instance's PCI bus id.
 *
 * l2=warm (the default): samples are batches of calls, each call finding
 * in the L2 what the previous one left there, as a loop in a program
 * does.  l2=cold: before each sample the harness calls sample_prep,
 * which overwrites a device buffer of twice the L2 size on the
 * instance's stream (cudaMemsetAsync: every byte written through the
 * L2, evicting what the case's tensors left) and waits for it, so that
 * neither the flush nor its wait is inside the sample's clocks (host or
 * device events); the sample is then one call, the only one that finds
 * a cold L2 (as nvbench's cold measurement does).  The flush buffer is
 * allocated at create and not counted as a tensor allocation. */
#include <cstring>

#include "cuda_internal.cuh"
#include "devinfo.h"
#include "l2.cuh"

int cu_l2_setup(cu_ctx *c, const char *value, char *err, size_t len)
{
    c->l2_cold = false;
    c->l2_flush = NULL;
    c->l2_flush_bytes = 0;
    if (!value || !strcmp(value, "warm"))
        return 0;
    if (strcmp(value, "cold")) {
        if (err && len)
            snprintf(err, len, "cuda: l2=\"%s\": expected warm or cold",
                     value);
        return TB_EPARAM;
    }
    int l2 = 0;
    if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, c->device) !=
        cudaSuccess) {
        cudaGetLastError();
        l2 = 0; /* unknown: tb_di_l2_flush_bytes takes a size above all */
    }
    int64_t nb = tb_di_l2_flush_bytes(l2);
    cudaError_t e = cudaMalloc(&c->l2_flush, (size_t)nb);
    if (e != cudaSuccess) {
        c->l2_flush = NULL;
        cudaGetLastError();
        if (err && len)
            snprintf(err, len, "cuda: cudaMalloc of the %lld-byte L2 "
                     "flush buffer (l2=cold): %s (error %d)",
                     (long long)nb, cudaGetErrorString(e), (int)e);
        return e == cudaErrorMemoryAllocation ? TB_ENOMEM : TB_EUNAVAILABLE;
    }
    c->l2_flush_bytes = nb;
    c->l2_cold = true;
    return 0;
}

void cu_l2_release(cu_ctx *c)
{
    if (c && c->l2_flush)
        cudaFree(c->l2_flush);
    if (c) {
        c->l2_flush = NULL;
        c->l2_cold = false;
    }
}

int cu_sample_prep(void *ctx)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!c)
        return TB_EINVAL;
    if (!c->l2_cold)
        return 0;
    int rc = cu_use_device(c->device);
    if (rc)
        return rc;
    /* a different byte each time, so no layer can skip the writes */
    c->l2_flush_gen = (c->l2_flush_gen + 1) & 0xff;
    cudaError_t e = cudaMemsetAsync(c->l2_flush, c->l2_flush_gen,
                                    (size_t)c->l2_flush_bytes, c->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(c->stream);
    return e == cudaSuccess ? 1 : cu_err(e);
}

int cu_device_pci(void *ctx, char *buf, size_t len)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!c || !buf || len < 2)
        return TB_EINVAL;
    cudaError_t e = cudaDeviceGetPCIBusId(buf, (int)len, c->device);
    if (e != cudaSuccess) {
        buf[0] = '\0';
        return cu_err(e);
    }
    return 0;
}
