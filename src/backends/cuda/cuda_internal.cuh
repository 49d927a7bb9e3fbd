/* Shared by the CUDA module's translation units (CUDA C++ only).
 *
 * The module is self-contained: it includes tbench's C headers for
 * their types and inline functions only, and never calls a function of
 * the tbench executable (which exports none; the link uses -z defs). */
#ifndef TB_BACKENDS_CUDA_INTERNAL_CUH
#define TB_BACKENDS_CUDA_INTERNAL_CUH

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <utility>

#include <cuda_runtime.h>

extern "C" {
#include "../../base/error.h"
#include "../../ops/op.h"
#include "../../ops/tensor.h"
#include "../backend.h"
}

#include "geometry.h"
#include "half.cuh"

static_assert(TB_GEOM_MAX_DIMS == TB_MAX_DIMS, "geometry.h dims");

/* One backend instance: a device, a stream all work is queued on, a
 * scratch buffer for reduction partials, and the counters. */
struct cu_ctx {
    int device;
    cudaStream_t stream;
    int64_t target_threads; /* SMs x max resident threads per SM */
    int64_t max_blocks;     /* grid cap of grid-stride launches */
    double *scratch;        /* reduction partials */
    int64_t scratch_elems;
    std::atomic<uint64_t> launches;
    std::atomic<uint64_t> memcpy_count, memcpy_bytes;
    std::atomic<uint64_t> device_allocs, device_alloc_bytes;
    void *blas; /* blas.cu's cuBLAS handle and workspace, or NULL */
    cudaEvent_t ev_start, ev_stop; /* the device timer of a batch */
    void *solver; /* linalg.cu's cuSOLVER handle and workspace, or NULL */
    void *xfer;   /* transfer.cu's host staging buffer, or NULL */
    bool use_pool;          /* axis pool=true: cudaMallocAsync */
    cudaMemPool_t mem_pool; /* the stream-ordered pool it allocates from */
    bool l2_cold;           /* axis l2=cold (l2.cu) */
    void *l2_flush;         /* the buffer sample_prep overwrites */
    int64_t l2_flush_bytes;
    int l2_flush_gen;       /* the byte it writes next */
    bool tf32; /* axis tf32=on: f32 GEMMs on TF32 tensor cores (blas.cu) */
    /* the einsum ops by operand count, as cu_kernel was asked for them:
     * their einsum_plan slot reads the equation (blas.cu's kf_einsum) */
    const tb_op *einsum_op[TB_MAX_INPUTS + 1];
};

/* A cudart error as a TB_E* code: allocation failures are TB_ENOMEM,
 * every other failure of queued work TB_EIO (the harness then records
 * the case as an error).  The CUDA error's name and text go to stderr
 * with the call site (the run's log keeps them; TB_EIO alone says only
 * "I/O error").  An error that leaves the context unusable (an illegal
 * address, a failed or timed-out launch, a device assert: every later
 * call of this process fails with it) aborts the process: in a worker
 * the harness records the case as `crashed` (SIGABRT) and starts a
 * clean worker with a new context for the next case, instead of failing
 * every case that follows. */
static inline bool cu_err_sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
        return true;
    default:
        return false;
    }
}

static inline int cu_err_at(cudaError_t e, const char *file, int line)
{
    if (e == cudaSuccess)
        return 0;
    fprintf(stderr, "tbench-cuda: %s:%d: %s: %s (error %d)\n", file, line,
            cudaGetErrorName(e), cudaGetErrorString(e), (int)e);
    if (cu_err_sticky(e)) {
        fprintf(stderr, "tbench-cuda: the CUDA context is unusable after "
                        "%s; aborting this process\n",
                cudaGetErrorName(e));
        fflush(stderr);
        abort();
    }
    return e == cudaErrorMemoryAllocation ? TB_ENOMEM : TB_EIO;
}
#define cu_err(e) cu_err_at((e), __FILE__, __LINE__)

/* Make `device` current on this thread (allocations and launches go
 * to the current device; a worker may hold instances of two devices).
 * Remembers the last device set, so the common case costs a compare. */
extern thread_local int cu_current_device; /* module.cu; -1: unknown */

static inline int cu_use_device(int device)
{
    if (cu_current_device == device)
        return 0;
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess)
        return cu_err(e);
    cu_current_device = device;
    return 0;
}

/* The module's one launch wrapper: every kernel goes through it, so
 * kernel_launches counts exactly the launches queued on the instance's
 * stream.  A launch error (bad configuration, no kernel image for this
 * GPU) is returned at once; errors of the running kernel surface at the
 * next synchronize. */
template <typename... KArgs, typename... Args>
static int cu_launch(cu_ctx *c, void (*kernel)(KArgs...), int64_t blocks,
                     int threads, size_t smem, Args &&...args)
{
    int rc = cu_use_device(c->device);
    if (rc)
        return rc;
    kernel<<<(unsigned)blocks, (unsigned)threads, smem, c->stream>>>(
        std::forward<Args>(args)...);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) /* a refused launch queued nothing */
        c->launches.fetch_add(1, std::memory_order_relaxed);
    return cu_err(e);
}

/* Copy n bytes of device memory back to the host after the work queued
 * on the instance's stream, and wait: a kernel's verdict (a flag, an
 * info word).  0 or the cudart error as cu_err's code. */
static inline int cu_read_back(cu_ctx *c, void *host, const void *dev,
                               size_t n)
{
    cudaError_t e = cudaMemcpyAsync(host, dev, n, cudaMemcpyDeviceToHost,
                                    c->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(c->stream);
    return cu_err(e);
}

/* ---- tensors and parameters (no calls into tbench) -------------------- */

static inline int64_t cu_numel(const tb_tensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= t->shape[d];
    return n;
}

/* Bytes per element: 8, 4, and 2 for the 16-bit storage formats. */
static inline size_t cu_dtype_size(tb_dtype dt)
{
    switch (dt) {
    case TB_F64:
        return sizeof(double);
    case TB_BF16:
        return sizeof(cu_bf16);
    case TB_F16:
        return sizeof(cu_f16);
    default:
        return sizeof(float);
    }
}

static inline bool cu_contiguous(const tb_tensor *t)
{
    int64_t s = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] != 1 && t->strides[d] != s)
            return false;
        s *= t->shape[d];
    }
    return true;
}

/* A well-formed contiguous tensor of dtype dt with data. */
static inline bool cu_operand_ok(const tb_tensor *t, tb_dtype dt)
{
    if (!t || t->dtype != dt || t->ndim < 0 || t->ndim > TB_MAX_DIMS ||
        !t->data)
        return false;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] < 0)
            return false;
    return cu_contiguous(t);
}

/* The first check of a kernel: an instance, both operand arrays, and
 * in[0..n_in) and out[0] well-formed contiguous tensors of dtype dt. */
static inline bool cu_args_ok(const cu_ctx *c, const tb_tensor *in,
                              int n_in, const tb_tensor *out, tb_dtype dt)
{
    if (!c || !in || !out || !cu_operand_ok(&out[0], dt))
        return false;
    for (int i = 0; i < n_in; i++)
        if (!cu_operand_ok(&in[i], dt))
            return false;
    return true;
}

/* The start of a broadcasting binary kernel: the operand checks
 * (TB_EINVAL), in[0] and in[1] broadcast (*bc their plan) to out[0]'s
 * shape (else TB_ESHAPE), and out[0]'s element count in *n.  0 when the
 * kernel may run. */
static inline int cu_binary_begin(const cu_ctx *c, const tb_tensor *in,
                                  const tb_tensor *out, tb_dtype dt,
                                  tb_bcast *bc, int64_t *n)
{
    if (!cu_args_ok(c, in, 2, out, dt))
        return TB_EINVAL;
    int64_t oshape[TB_MAX_DIMS];
    int ond = 0;
    if (tb_bcast_init(bc, in[0].shape, in[0].ndim, in[1].shape, in[1].ndim,
                      oshape, &ond) ||
        out[0].ndim != ond)
        return TB_ESHAPE;
    for (int d = 0; d < ond; d++)
        if (out[0].shape[d] != oshape[d])
            return TB_ESHAPE;
    *n = cu_numel(&out[0]);
    return 0;
}

static inline bool cu_same_shape(const tb_tensor *a, const tb_tensor *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return false;
    return true;
}

/* The start of a kernel of one input of the output's shape: the
 * operand checks (TB_EINVAL), then the shapes (TB_ESHAPE); 0 if it may
 * run. */
static inline int cu_unary_begin(const cu_ctx *c, const tb_tensor *in,
                                 const tb_tensor *out, tb_dtype dt)
{
    if (!cu_args_ok(c, in, 1, out, dt))
        return TB_EINVAL;
    return cu_same_shape(&in[0], &out[0]) ? 0 : TB_ESHAPE;
}

/* Parameter idx as set in p.  The harness fills every non-optional
 * parameter with its schema default before a kernel runs
 * (tb_params_defaults), so an unset one is a caller error. */
static inline int cu_param(const tb_params *p, int idx, double *v)
{
    if (!p || idx < 0 || idx >= TB_MAX_PARAMS || !(p->set >> idx & 1u))
        return TB_EPARAM;
    *v = p->v[idx];
    return 0;
}

static inline bool cu_param_has(const tb_params *p, int idx)
{
    return p && idx >= 0 && idx < TB_MAX_PARAMS && (p->set >> idx & 1u);
}

/* sdpa's and sdpa_backward's parameters: causal (0), and scale (1):
 * absent or 0 means 1 / sqrt(D); a negative scale is TB_EPARAM. */
static inline int cu_sdpa_params(const tb_params *p, int64_t D,
                                 double *causal, double *scale)
{
    int rc = cu_param(p, 0, causal);
    if (rc)
        return rc;
    *scale = cu_param_has(p, 1) ? p->v[1] : 0;
    if (!(*scale >= 0))
        return TB_EPARAM;
    if (*scale == 0)
        *scale = 1 / sqrt((double)D);
    return 0;
}

/* One row of a kernel table: op, a kernel per dtype (NULL: none) and
 * their implementation names. */
struct cu_ext_entry {
    tb_op_id id;
    tb_kernel_fn fn[TB_DTYPE_COUNT];
    const char *name[TB_DTYPE_COUNT];
};

/* The names of op's four kernels: "op_f32_<how>" ... "op_f16_<how>". */
#define CU_NAMES4(op, how)                                                \
    {#op "_f32_" how, #op "_f64_" how, #op "_bf16_" how, #op "_f16_" how}

/* Row id of table t[0..n): its kernel in dtype dt and its name. */
static inline tb_kernel_fn cu_ext_find(const cu_ext_entry *t, size_t n,
                                       tb_op_id id, tb_dtype dt,
                                       const char **impl)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].id == id) {
            if (impl)
                *impl = t[i].name[dt];
            return t[i].fn[dt];
        }
    return NULL;
}
#define CU_EXT_FIND(t, id, dt, impl)                                      \
    cu_ext_find((t), sizeof(t) / sizeof((t)[0]), (id), (dt), (impl))

/* Kernel tables of the other translation units: the kernel for op id in
 * dtype dt (and its implementation name), or NULL. */
tb_kernel_fn cu_elementwise_kernel(tb_op_id id, tb_dtype dt,
                                   const char **impl);
tb_kernel_fn cu_reduce_kernel(tb_op_id id, tb_dtype dt, const char **impl);

#endif
