/* The `peak` slot: this GPU's memory bandwidth and FMA throughput,
 * measured with the module's own kernels, beside the vendor figures
 * (devinfo.h) computed from what cudart reports.
 *
 * Bandwidth: copy (a = b), read (s += a) and triad (a = b + s * c) over
 * f32 arrays of tb_di_stream_elems elements (each >= 8 x the L2, so a
 * pass reads DRAM, not the L2), float4 accesses in a grid-stride loop
 * of 4 blocks of 256 threads per SM; bytes per pass from
 * tb_di_stream_bytes.  FMA: independent chains of fma() per thread
 * (tb_di_fma_flops counts them), f32 and f64, at full occupancy.  Each
 * figure is `reps` repetitions, each a run of launches timed by CUDA
 * events on the instance's stream that lasts at least rep_s; best =
 * fastest, median beside it.  Results that a compiler could drop are
 * stored under a condition no input meets, so every load and FMA
 * stays. */
#include <algorithm>
#include <cstring>
#include <vector>

#include "cuda_internal.cuh"
#include "devinfo.h"
#include "peak.cuh"

namespace {

constexpr int PK_THREADS = 256;

__global__ void pk_copy(float4 *__restrict__ a,
                        const float4 *__restrict__ b, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += step)
        a[i] = b[i];
}

__global__ void pk_read(const float4 *__restrict__ a, int64_t n,
                        float *sink)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    float s = 0;
    for (; i < n; i += step) {
        float4 v = a[i];
        s += v.x + v.y + v.z + v.w;
    }
    if (s == -1.0f) /* never: the inputs are >= 0 */
        *sink = s;
}

__global__ void pk_triad(float4 *__restrict__ a,
                         const float4 *__restrict__ b,
                         const float4 *__restrict__ c, float s, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += step) {
        float4 x = b[i], y = c[i];
        a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z,
                           x.w + s * y.w);
    }
}

template <typename T>
__global__ void pk_fma(T *sink, int64_t trips, T x, T y)
{
    T acc[TB_DI_FMA_CHAINS];
#pragma unroll
    for (int c = 0; c < TB_DI_FMA_CHAINS; c++)
        acc[c] = (T)(threadIdx.x + c) * (T)1e-3;
    for (int64_t k = 0; k < trips; k++) {
#pragma unroll
        for (int u = 0; u < TB_DI_FMA_UNROLL; u++)
#pragma unroll
            for (int c = 0; c < TB_DI_FMA_CHAINS; c++)
                acc[c] = fma(acc[c], x, y);
    }
    T s = 0;
#pragma unroll
    for (int c = 0; c < TB_DI_FMA_CHAINS; c++)
        s += acc[c];
    if (s == (T)-1) /* never: every chain stays positive */
        *sink = s;
}

struct pk_env {
    cu_ctx *c;
    cudaEvent_t e0, e1;
    int64_t blocks;
};

/* Seconds of `launches` calls of fn (which queues one launch). */
template <typename F>
static cudaError_t pk_time(pk_env *pe, int64_t launches, F fn, double *s)
{
    cudaError_t e = cudaEventRecord(pe->e0, pe->c->stream);
    for (int64_t k = 0; k < launches && e == cudaSuccess; k++) {
        fn();
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaEventRecord(pe->e1, pe->c->stream);
    if (e == cudaSuccess)
        e = cudaEventSynchronize(pe->e1);
    float ms = 0;
    if (e == cudaSuccess)
        e = cudaEventElapsedTime(&ms, pe->e0, pe->e1);
    *s = (double)ms * 1e-3;
    return e;
}

/* One figure: `units` (bytes or FLOPs) per call of fn; calls per
 * repetition chosen from one timed call so a repetition lasts >= rep_s.
 * best and median rate over reps. */
template <typename F>
static cudaError_t pk_figure(pk_env *pe, int reps, double rep_s,
                             double units, F fn, double *best,
                             double *median)
{
    double t1 = 0;
    cudaError_t e = pk_time(pe, 1, fn, &t1); /* also the warm-up */
    if (e != cudaSuccess)
        return e;
    int64_t k = t1 > 0 ? (int64_t)(rep_s / t1) + 1 : 1000;
    k = std::min<int64_t>(std::max<int64_t>(k, 1), 100000);
    std::vector<double> rate;
    for (int r = 0; r < reps; r++) {
        double t = 0;
        if ((e = pk_time(pe, k, fn, &t)) != cudaSuccess)
            return e;
        if (t > 0)
            rate.push_back(units * (double)k / t);
    }
    if (rate.empty())
        return cudaSuccess;
    std::sort(rate.begin(), rate.end());
    *best = rate.back();
    size_t n = rate.size();
    *median = n % 2 ? rate[n / 2] : (rate[n / 2 - 1] + rate[n / 2]) / 2;
    return cudaSuccess;
}

static int attr(int *v, cudaDeviceAttr a, int dev)
{
    *v = 0;
    if (cudaDeviceGetAttribute(v, a, dev) != cudaSuccess) {
        cudaGetLastError();
        *v = 0;
        return -1;
    }
    return 0;
}

/* The device's description and vendor figures. */
static void pk_describe(cu_ctx *c, tb_dev_peaks *out)
{
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, c->device) == cudaSuccess)
        snprintf(out->name, sizeof out->name, "%.127s", p.name);
    else
        cudaGetLastError();
    int mem_khz, sm_khz, bus, l2;
    attr(&out->cc_major, cudaDevAttrComputeCapabilityMajor, c->device);
    attr(&out->cc_minor, cudaDevAttrComputeCapabilityMinor, c->device);
    attr(&out->sms, cudaDevAttrMultiProcessorCount, c->device);
    attr(&mem_khz, cudaDevAttrMemoryClockRate, c->device);
    attr(&sm_khz, cudaDevAttrClockRate, c->device);
    attr(&bus, cudaDevAttrGlobalMemoryBusWidth, c->device);
    attr(&l2, cudaDevAttrL2CacheSize, c->device);
    out->mem_clock_khz = mem_khz;
    out->sm_clock_khz = sm_khz;
    out->bus_bits = bus;
    out->l2_bytes = l2;
    size_t fr = 0, tot = 0;
    if (cudaMemGetInfo(&fr, &tot) == cudaSuccess) {
        out->free_bytes = (double)fr;
        out->mem_bytes = (double)tot;
    } else {
        cudaGetLastError();
    }
    out->vendor_bw = tb_di_vendor_bw(mem_khz, bus);
    out->vendor_flops[TB_F32] = tb_di_vendor_flops(
        out->sms, tb_di_fp32_lanes(out->cc_major, out->cc_minor), sm_khz);
    out->vendor_flops[TB_F64] = tb_di_vendor_flops(
        out->sms, tb_di_fp64_lanes(out->cc_major, out->cc_minor), sm_khz);
}

static void pk_why(tb_dev_peaks *out, const char *what, cudaError_t e)
{
    size_t u = strlen(out->why);
    if (u < sizeof out->why)
        snprintf(out->why + u, sizeof out->why - u, "%s%s: %s (error %d)",
                 u ? "; " : "", what, cudaGetErrorString(e), (int)e);
}

} // namespace

int cu_peak(void *ctx, int reps, double rep_s, tb_dev_peaks *out)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!c || !out || reps < 1 || !(rep_s > 0))
        return TB_EINVAL;
    memset(out, 0, sizeof *out);
    out->reps = reps;
    int rc = cu_use_device(c->device);
    if (rc)
        return rc;
    pk_describe(c, out);
    pk_env pe;
    pe.c = c;
    int per_sm = 0;
    attr(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, c->device);
    pe.blocks = (int64_t)(out->sms > 0 ? out->sms : 1) *
                (per_sm >= PK_THREADS ? per_sm / PK_THREADS : 4);
    cudaError_t e;
    if ((e = cudaEventCreate(&pe.e0)) != cudaSuccess) {
        pk_why(out, "cudaEventCreate", e);
        return cu_err(e);
    }
    if ((e = cudaEventCreate(&pe.e1)) != cudaSuccess) {
        cudaEventDestroy(pe.e0);
        pk_why(out, "cudaEventCreate", e);
        return cu_err(e);
    }
    float *sink = NULL;
    double *sinkd = NULL;
    float4 *arr[3] = {NULL, NULL, NULL};
    int64_t n = tb_di_stream_elems((int64_t)out->l2_bytes,
                                   (int64_t)out->free_bytes, 4, 3);
    n -= n % 4;
    int64_t n4 = n / 4;
    if ((e = cudaMalloc(&sink, sizeof(float))) != cudaSuccess ||
        (e = cudaMalloc(&sinkd, sizeof(double))) != cudaSuccess) {
        pk_why(out, "cudaMalloc (sink)", e);
        goto done;
    }
    if (n4 < 1) {
        size_t u = strlen(out->why);
        snprintf(out->why + u, sizeof out->why - u,
                 "%sbandwidth not measured: %.0f MiB free is less than "
                 "twice three arrays of 8 x the L2",
                 u ? "; " : "", out->free_bytes / (1 << 20));
    } else {
        out->array_bytes = (double)n * sizeof(float);
        for (int i = 0; i < 3 && e == cudaSuccess; i++)
            if ((e = cudaMalloc(&arr[i], (size_t)n * sizeof(float))) ==
                cudaSuccess)
                e = cudaMemsetAsync(arr[i], 0, (size_t)n * sizeof(float),
                                    c->stream);
        if (e != cudaSuccess) {
            pk_why(out, "cudaMalloc (bandwidth arrays)", e);
        } else {
            int64_t blocks = pe.blocks;
            cudaStream_t st = c->stream;
            float4 *a = arr[0], *b = arr[1], *cc = arr[2];
            e = pk_figure(&pe, reps, rep_s,
                          tb_di_stream_bytes(TB_DI_COPY, n, 4),
                          [&] { pk_copy<<<(unsigned)blocks, PK_THREADS, 0,
                                          st>>>(a, b, n4); },
                          &out->bw_best[TB_DEV_PEAK_COPY],
                          &out->bw_median[TB_DEV_PEAK_COPY]);
            if (e == cudaSuccess)
                e = pk_figure(&pe, reps, rep_s,
                              tb_di_stream_bytes(TB_DI_READ, n, 4),
                              [&] { pk_read<<<(unsigned)blocks, PK_THREADS,
                                              0, st>>>(b, n4, sink); },
                              &out->bw_best[TB_DEV_PEAK_READ],
                              &out->bw_median[TB_DEV_PEAK_READ]);
            if (e == cudaSuccess)
                e = pk_figure(&pe, reps, rep_s,
                              tb_di_stream_bytes(TB_DI_TRIAD, n, 4),
                              [&] { pk_triad<<<(unsigned)blocks,
                                               PK_THREADS, 0, st>>>(
                                        a, b, cc, 0.5f, n4); },
                              &out->bw_best[TB_DEV_PEAK_TRIAD],
                              &out->bw_median[TB_DEV_PEAK_TRIAD]);
            if (e != cudaSuccess)
                pk_why(out, "bandwidth kernels", e);
        }
    }
    {
        int64_t blocks = pe.blocks, trips = 256;
        cudaStream_t st = c->stream;
        float *s32 = sink;
        double *s64 = sinkd;
        cudaError_t f = pk_figure(
            &pe, reps, rep_s, tb_di_fma_flops(blocks, PK_THREADS, trips),
            [&] { pk_fma<float><<<(unsigned)blocks, PK_THREADS, 0, st>>>(
                      s32, trips, 0.999999f, 1e-6f); },
            &out->flops_best[TB_F32], &out->flops_median[TB_F32]);
        if (f == cudaSuccess)
            f = pk_figure(
                &pe, reps, rep_s,
                tb_di_fma_flops(blocks, PK_THREADS, trips / 8),
                [&] { pk_fma<double><<<(unsigned)blocks, PK_THREADS, 0,
                                       st>>>(s64, trips / 8, 0.999999,
                                             1e-6); },
                &out->flops_best[TB_F64], &out->flops_median[TB_F64]);
        if (f != cudaSuccess) {
            pk_why(out, "FMA kernels", f);
            e = f;
        }
    }
done:
    for (int i = 0; i < 3; i++)
        cudaFree(arr[i]);
    cudaFree(sink);
    cudaFree(sinkd);
    cudaEventDestroy(pe.e0);
    cudaEventDestroy(pe.e1);
    return e == cudaSuccess ? 0 : cu_err(e);
}
