/* tbench-cuda.so: the CUDA backend, loaded at run time by
 * src/backends/module.c, which calls the one exported function
 * tb_module_backend_3() and forwards every slot of the `cuda` backend.
 *
 * Availability.  The probe never touches CUDA in the calling process:
 * `tbench run` probes in the parent and forks its workers afterwards,
 * and a process that initialised the CUDA driver cannot use it again in
 * a forked child.  So the probe forks a short-lived child that asks
 * cudart for the runtime and driver versions and the device count and
 * sends back the verdict; the parent caches it.  Each failure gives
 * TB_EUNAVAILABLE with the cudart call, its message and its number,
 * prefixed with what it means here: no driver (error 35 and no driver
 * version), a driver older than the runtime (35 with a version), a stub
 * libcuda (34), no device (100, or a count of 0).
 *
 * Instances.  One per device (axis `device`), created in the worker
 * process: a non-blocking stream that every kernel, copy and sync of the
 * instance uses, and a scratch buffer for reduction partials
 * (2 x resident threads doubles, allocated once at create and not
 * counted as a tensor allocation).  Tensors are cudaMalloc'd (counted),
 * or with axis pool=true cudaMallocAsync'd on the stream from a pool of
 * the instance that keeps what cudaFreeAsync gives back (also counted:
 * device_allocs counts the allocation calls either way),
 * uploads and downloads are cudaMemcpyAsync on the stream followed by
 * cudaStreamSynchronize: the caller may reuse its host buffer at once,
 * and a copy is ordered after the kernels queued before it (a plain
 * cudaMemcpy runs on the legacy default stream, which a non-blocking
 * stream does not wait for).
 *
 * Kernels: elementwise.cu (binary with broadcasting, scalar, unary,
 * activations; in-place forms run the same kernels), reduce.cu (sum,
 * mean, softmax, log_softmax), then through ext.cu: layout.cu
 * (transpose, permute), create.cu (creation ops), fused.cu (add_relu),
 * optim.cu (optimizer steps), pool.cu (max/avg pooling), blas.cu
 * (matmul, linear, conv2d by cuBLAS), linalg.cu (svd, qr, eigh by
 * cuSOLVER), lanes.cu (max, min, argmax, var), norm.cu (layer_norm,
 * rms_norm and their gradients), attn.cu (sdpa, causal_mask) and
 * embed.cu (cross_entropy and its gradient, embedding and its gradient,
 * dropout), norm2.cu (batch_norm, group_norm and their gradients),
 * optim2.cu (lamb, adabound, lbfgs) and attn_bw.cu (sdpa_backward);
 * then transfer.cu (the
 * copy ops copy_h2d, copy_d2h, copy_d2d and their host staging buffer).
 * Any other op is NULL = unsupported; there is no fallback.
 *
 * Device timer: CUDA events around each batch on the instance's stream
 * (timer_start/timer_stop), beside the harness's host wall time.
 *
 * Dtypes: f32 and f64 for every kernel; bf16 and f16 (half.cuh: 16-bit
 * storage, f32 arithmetic, each result rounded once as the cpu backend's
 * half rows) for the element-wise ops and activations, sum, mean,
 * softmax, log_softmax, layer_norm, rms_norm and their gradients, the
 * creation ops, the copies, max/avg pooling, and matmul, linear and
 * conv2d (cuBLAS tensor cores); any other 16-bit case is unsupported.  Axis tf32 (on/off)
 * puts the instance's f32 GEMMs on TF32 tensor cores (blas.cu). */
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_internal.cuh"
#include "kernels_ext.cuh"
#include "transfer.cuh"
#include "xfer.h"
#include "l2.cuh"
#include "peak.cuh"

#ifndef TB_GPU_ARCHS
#define TB_GPU_ARCHS "unknown"
#endif

static const tb_backend *cu_self(void);
/* The counting pass (count.cu). */
int cu_count(void *ctx, tb_count_run_fn run, void *arg, uint64_t iters,
             tb_dev_counts *out);

/* One per thread for the whole module (every .cu file), so that a
 * device set by one file is known to the others. */
thread_local int cu_current_device = -1;

/* ---- probe ---------------------------------------------------------------- */

struct probe_msg {
    int rc; /* 0 or TB_EUNAVAILABLE */
    int devices;
    char reason[480];
};

static void cu_version(int v, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", v / 1000, v % 1000 / 10);
}

/* Runs in the probe's child process only. */
static void probe_here(probe_msg *m)
{
    int rt = 0, drv = 0, n = 0;
    cudaRuntimeGetVersion(&rt);
    cudaError_t dv = cudaDriverGetVersion(&drv);
    cudaError_t e = cudaGetDeviceCount(&n);
    char rts[16], drs[16];
    cu_version(rt, rts, sizeof rts);
    cu_version(drv, drs, sizeof drs);
    m->devices = 0;
    m->rc = TB_EUNAVAILABLE;
    if (e != cudaSuccess) {
        char what[160];
        if (e == cudaErrorInsufficientDriver && (dv != cudaSuccess || !drv))
            snprintf(what, sizeof what, "no CUDA driver");
        else if (e == cudaErrorInsufficientDriver)
            snprintf(what, sizeof what,
                     "CUDA driver %s is older than the runtime %s this "
                     "module is built with",
                     drs, rts);
        else if (e == cudaErrorStubLibrary)
            snprintf(what, sizeof what,
                     "the CUDA driver loaded is the toolkit's stub "
                     "libcuda.so (a stubs directory is on the library "
                     "path)");
        else if (e == cudaErrorNoDevice)
            snprintf(what, sizeof what, "no CUDA device");
        else
            snprintf(what, sizeof what, "CUDA cannot be used");
        snprintf(m->reason, sizeof m->reason,
                 "%s: cudaGetDeviceCount: %s (error %d)", what,
                 cudaGetErrorString(e), (int)e);
        return;
    }
    if (n < 1) {
        snprintf(m->reason, sizeof m->reason,
                 "no CUDA device: cudaGetDeviceCount found 0 devices");
        return;
    }
    m->devices = n;
    m->rc = 0;
    m->reason[0] = '\0';
}

static bool probe_done;
static probe_msg probe_cached;

/* Fork, probe in the child, read its verdict. */
static void probe_fork(probe_msg *m)
{
    memset(m, 0, sizeof *m);
    m->rc = TB_EUNAVAILABLE;
    int fd[2];
    if (pipe(fd)) {
        snprintf(m->reason, sizeof m->reason,
                 "probe: pipe failed: %s", strerror(errno));
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(m->reason, sizeof m->reason,
                 "probe: fork failed: %s", strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return;
    }
    if (pid == 0) {
        close(fd[0]);
        probe_msg r;
        memset(&r, 0, sizeof r);
        probe_here(&r);
        const char *p = (const char *)&r;
        size_t left = sizeof r;
        while (left) {
            ssize_t w = write(fd[1], p, left);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            p += w;
            left -= (size_t)w;
        }
        _exit(0); /* no atexit handlers: cudart's belong to the parent */
    }
    close(fd[1]);
    probe_msg r;
    char *p = (char *)&r;
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t k = read(fd[0], p + got, sizeof r - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (got == sizeof r) {
        *m = r;
        m->reason[sizeof m->reason - 1] = '\0';
    } else if (WIFSIGNALED(st)) {
        snprintf(m->reason, sizeof m->reason,
                 "probe: the probing process died of signal %d in cudart "
                 "(cudaGetDeviceCount)",
                 WTERMSIG(st));
    } else {
        snprintf(m->reason, sizeof m->reason,
                 "probe: the probing process exited (status %d) without "
                 "an answer",
                 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
}

static int cu_probe(const tb_backend *self, char *reason, size_t len)
{
    (void)self;
    if (!probe_done) {
        probe_fork(&probe_cached);
        probe_done = true;
    }
    if (reason && len)
        snprintf(reason, len, "%s", probe_cached.reason);
    return probe_cached.rc;
}

/* ---- axes, instances ------------------------------------------------------ */

static const char *const cu_device_names[TB_MAX_AXIS_VALUES] = {
    "0",  "1",  "2",  "3",  "4",  "5",  "6",  "7",  "8",  "9",  "10",
    "11", "12", "13", "14", "15", "16", "17", "18", "19", "20", "21",
    "22", "23", "24", "25", "26", "27", "28", "29", "30", "31",
};

static int cu_axes(const tb_backend *self, tb_axis *out, int max)
{
    if (!out || max < 1 || cu_probe(self, NULL, 0))
        return 0;
    memset(&out[0], 0, sizeof out[0]);
    out[0].name = "device";
    int n = probe_cached.devices;
    out[0].n_values = n < TB_MAX_AXIS_VALUES ? n : TB_MAX_AXIS_VALUES;
    for (int i = 0; i < out[0].n_values; i++)
        out[0].values[i] = cu_device_names[i];
    out[0].def = 0;
    out[0].doc = "CUDA device index (cudaSetDevice)";
    /* the two-valued axes, default the first value */
    static const struct {
        const char *name, *v0, *v1, *doc;
    } two[] = {
        {"pool", "false", "true",
         "tensor memory: false = cudaMalloc/cudaFree per tensor, "
         "true = cudaMallocAsync/cudaFreeAsync on the instance's "
         "stream from a stream-ordered pool that keeps freed memory"},
        {"l2", "warm", "cold",
         "L2 cache before each sample: warm (batches of calls) "
         "or cold (flushed, one call per sample)"},
        {"tf32", "off", "on",
         "f32 matmul, linear and conv2d: off = true FP32 GEMMs, "
         "on = TF32 tensor cores (cublasSetMathMode "
         "CUBLAS_TF32_TENSOR_OP_MATH: inputs rounded to 10 "
         "significand bits, f32 accumulation; checked at tf32's "
         "tolerance)"},
    };
    int k = 1;
    for (size_t a = 0; a < sizeof two / sizeof two[0] && k < max; a++, k++) {
        memset(&out[k], 0, sizeof out[k]);
        out[k].name = two[a].name;
        out[k].n_values = 2;
        out[k].values[0] = two[a].v0;
        out[k].values[1] = two[a].v1;
        out[k].def = 0;
        out[k].doc = two[a].doc;
    }
    return k;
}

/* "cuda: CALL: message (error N)" into err. */
static int cu_fail(char *err, size_t len, const char *call, cudaError_t e)
{
    if (err && len)
        snprintf(err, len, "cuda: %s: %s (error %d)", call,
                 cudaGetErrorString(e), (int)e);
    return TB_EUNAVAILABLE;
}

static void cu_destroy(void *ctx)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!c)
        return;
    cu_use_device(c->device);
    if (c->stream)
        cudaStreamSynchronize(c->stream);
    if (c->mem_pool)
        cudaMemPoolDestroy(c->mem_pool); /* after the stream's frees */
    cu_blas_release(c);
    cu_solver_release(c);
    cu_transfer_release(c);
    if (c->ev_start)
        cudaEventDestroy(c->ev_start);
    if (c->ev_stop)
        cudaEventDestroy(c->ev_stop);
    cudaFree(c->scratch);
    cu_l2_release(c);
    if (c->stream)
        cudaStreamDestroy(c->stream);
    delete c;
}

static int cu_create(const tb_backend *self, const char *const *values,
                     void **ctx, char *err, size_t len)
{
    (void)self;
    if (err && len)
        err[0] = '\0';
    if (!ctx)
        return TB_EINVAL;
    *ctx = NULL;
    int dev = 0;
    const char *v = values ? values[0] : NULL;
    if (v) {
        char *end = NULL;
        errno = 0;
        long d = strtol(v, &end, 10);
        if (v[0] < '0' || v[0] > '9' || errno || *end || d < 0 ||
            d >= TB_MAX_AXIS_VALUES) {
            if (err && len)
                snprintf(err, len, "cuda: device=\"%s\": expected a "
                         "device index", v);
            return TB_EPARAM;
        }
        dev = (int)d;
    }
    int pool = tb_xfer_pool_value(values ? values[1] : NULL);
    if (pool < 0) {
        if (err && len)
            snprintf(err, len, "cuda: pool=\"%s\": expected false or true",
                     values[1]);
        return TB_EPARAM;
    }
    const char *tf = values ? values[3] : NULL;
    if (tf && strcmp(tf, "off") && strcmp(tf, "on")) {
        if (err && len)
            snprintf(err, len, "cuda: tf32=\"%s\": expected off or on", tf);
        return TB_EPARAM;
    }
    const bool tf32 = tf && !strcmp(tf, "on");
    cudaError_t e;
    if ((e = cudaSetDevice(dev)) != cudaSuccess)
        return cu_fail(err, len, "cudaSetDevice", e);
    cu_use_device(dev); /* note it for later calls */
    int sms = 0, per_sm = 0;
    if ((e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
                                    dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&per_sm,
                                    cudaDevAttrMaxThreadsPerMultiProcessor,
                                    dev)) != cudaSuccess)
        return cu_fail(err, len, "cudaDeviceGetAttribute", e);
    cu_ctx *c = new (std::nothrow) cu_ctx();
    if (!c)
        return TB_ENOMEM;
    c->device = dev;
    c->target_threads = (int64_t)(sms > 0 ? sms : 1) *
                        (per_sm > 0 ? per_sm : 1024);
    c->max_blocks = c->target_threads / TB_CU_BLOCK * 4;
    if (c->max_blocks < 1)
        c->max_blocks = 1;
    c->scratch_elems = 2 * c->target_threads;
    if ((e = cudaStreamCreateWithFlags(&c->stream,
                                       cudaStreamNonBlocking)) !=
        cudaSuccess) {
        c->stream = NULL;
        cu_destroy(c);
        return cu_fail(err, len, "cudaStreamCreateWithFlags", e);
    }
    if ((e = cudaMalloc((void **)&c->scratch,
                        (size_t)c->scratch_elems * sizeof(double))) !=
        cudaSuccess) {
        c->scratch = NULL;
        cu_destroy(c);
        return cu_fail(err, len, "cudaMalloc (reduction scratch)", e);
    }
    if ((e = cudaEventCreate(&c->ev_start)) != cudaSuccess ||
        (e = cudaEventCreate(&c->ev_stop)) != cudaSuccess) {
        cu_destroy(c);
        return cu_fail(err, len, "cudaEventCreate", e);
    }
    if (pool) {
        /* An instance pool of device memory that keeps what is freed
         * (release threshold: everything), so that a stream-ordered
         * allocation after a free of the same size is served without
         * the driver, as a framework's caching allocator does. */
        cudaMemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = dev;
        uint64_t keep = UINT64_MAX;
        if ((e = cudaMemPoolCreate(&c->mem_pool, &props)) != cudaSuccess) {
            c->mem_pool = NULL;
            cu_destroy(c);
            return cu_fail(err, len, "cudaMemPoolCreate", e);
        }
        if ((e = cudaMemPoolSetAttribute(c->mem_pool,
                                         cudaMemPoolAttrReleaseThreshold,
                                         &keep)) != cudaSuccess) {
            cu_destroy(c);
            return cu_fail(err, len, "cudaMemPoolSetAttribute", e);
        }
        c->use_pool = true;
    }
    int l2rc = cu_l2_setup(c, values ? values[2] : NULL, err, len);
    if (l2rc) {
        cu_destroy(c);
        return l2rc;
    }
    c->tf32 = tf32;
    *ctx = c;
    return 0;
}

static void cu_counters(void *ctx, tb_backend_counters *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    const cu_ctx *c = (const cu_ctx *)ctx;
    if (!c)
        return;
    out->kernel_launches = c->launches.load(std::memory_order_relaxed);
    out->memcpy_count = c->memcpy_count.load(std::memory_order_relaxed);
    out->memcpy_bytes = c->memcpy_bytes.load(std::memory_order_relaxed);
    out->device_allocs = c->device_allocs.load(std::memory_order_relaxed);
    out->device_alloc_bytes =
        c->device_alloc_bytes.load(std::memory_order_relaxed);
}

/* ---- memory --------------------------------------------------------------- */

static bool cu_header_ok(const tb_tensor *t)
{
    if (!t || (unsigned)t->dtype >= TB_DTYPE_COUNT || t->ndim < 0 ||
        t->ndim > TB_MAX_DIMS)
        return false;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] < 0)
            return false;
    return cu_contiguous(t);
}

static int cu_alloc(void *ctx, tb_tensor *t)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!c || !cu_header_ok(t))
        return TB_EINVAL;
    size_t nb = (size_t)cu_numel(t) * cu_dtype_size(t->dtype);
    void *p = NULL;
    if (cu_use_device(c->device))
        return TB_EIO;
    /* at least one byte, so that an empty tensor has a non-NULL pointer;
     * with the pool, ordered on the stream after the work queued so far
     * (and the frees before it) */
    cudaError_t e = c->use_pool
                        ? cudaMallocFromPoolAsync(&p, nb ? nb : 1,
                                                  c->mem_pool, c->stream)
                        : cudaMalloc(&p, nb ? nb : 1);
    if (e != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky-free error state */
        return TB_ENOMEM;
    }
    t->data = p;
    t->owns = true;
    t->backend = cu_self();
    t->backend_ctx = ctx;
    c->device_allocs.fetch_add(1, std::memory_order_relaxed);
    c->device_alloc_bytes.fetch_add(nb, std::memory_order_relaxed);
    return 0;
}

static void cu_free(void *ctx, tb_tensor *t)
{
    if (!t || t->backend != cu_self())
        return;
    const cu_ctx *c = (const cu_ctx *)(t->backend_ctx ? t->backend_ctx
                                                      : ctx);
    if (t->owns && t->data) {
        /* the tensor's device (review M6: with several GPUs the current
         * one may be another instance's) */
        if (c)
            cu_use_device(c->device);
        if (c && c->use_pool)
            cudaFreeAsync(t->data, c->stream); /* back to the pool */
        else
            cudaFree(t->data);
    }
    t->data = NULL;
    t->owns = false;
}

/* Copy between a host tensor and a device tensor of equal dtype and
 * shape, both contiguous; waits for the copy. */
static int cu_copy(cu_ctx *c, tb_tensor *dst, const tb_tensor *src,
                   cudaMemcpyKind kind)
{
    if (!c || !cu_header_ok(dst) || !cu_header_ok(src))
        return TB_EINVAL;
    if (dst->dtype != src->dtype || !cu_same_shape(dst, src))
        return TB_ESHAPE;
    size_t nb = (size_t)cu_numel(src) * cu_dtype_size(src->dtype);
    if (nb && (!dst->data || !src->data))
        return TB_EINVAL;
    if (nb) {
        cudaError_t e = cudaMemcpyAsync(dst->data, src->data, nb, kind,
                                        c->stream);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(c->stream);
        if (e != cudaSuccess)
            return cu_err(e);
    }
    c->memcpy_count.fetch_add(1, std::memory_order_relaxed);
    c->memcpy_bytes.fetch_add(nb, std::memory_order_relaxed);
    return 0;
}

static int cu_upload(void *ctx, tb_tensor *dst, const tb_tensor *src)
{
    if (!dst || dst->backend != cu_self() || (src && src->backend))
        return TB_EINVAL;
    return cu_copy((cu_ctx *)ctx, dst, src, cudaMemcpyHostToDevice);
}

static int cu_download(void *ctx, tb_tensor *dst, const tb_tensor *src)
{
    if (!src || src->backend != cu_self() || (dst && dst->backend))
        return TB_EINVAL;
    return cu_copy((cu_ctx *)ctx, dst, src, cudaMemcpyDeviceToHost);
}

static int cu_sync(void *ctx)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!c)
        return TB_EINVAL;
    return cu_err(cudaStreamSynchronize(c->stream));
}

/* ---- device timer ----------------------------------------------------------
 * CUDA events on the instance's stream around a batch: the elapsed time
 * between them is what the GPU spent on the batch's queued work (event
 * resolution about 0.5 us), next to the harness's host wall time, whose
 * excess is launch and synchronisation overhead. */

static int cu_timer_start(void *ctx)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!c)
        return TB_EINVAL;
    int rc = cu_use_device(c->device);
    return rc ? rc : cu_err(cudaEventRecord(c->ev_start, c->stream));
}

static int cu_timer_stop(void *ctx, double *ns)
{
    cu_ctx *c = (cu_ctx *)ctx;
    if (!c || !ns)
        return TB_EINVAL;
    float ms = 0;
    cudaError_t e = cudaEventRecord(c->ev_stop, c->stream);
    if (e == cudaSuccess)
        e = cudaEventSynchronize(c->ev_stop);
    if (e == cudaSuccess)
        e = cudaEventElapsedTime(&ms, c->ev_start, c->ev_stop);
    if (e != cudaSuccess)
        return cu_err(e);
    *ns = (double)ms * 1e6;
    return 0;
}

/* ---- kernels ---------------------------------------------------------------- */

/* The fn of a kernel; cu_kernel hands it out with the instance. */
static tb_kernel_fn cu_kernel_fn(void *ctx, const tb_op *op, tb_dtype dt,
                                 const char **impl)
{
    if (impl)
        *impl = NULL;
    if (!op || (unsigned)op->id >= TB_OP_COUNT ||
        (unsigned)dt >= TB_DTYPE_COUNT)
        return NULL;
    /* In-place forms run their op's kernel: each thread reads element i
     * of the first input before it writes element i of the output, so
     * an output that is that input is safe. */
    tb_op_id id = op->category == TB_CAT_INPLACE ? op->base : op->id;
    tb_kernel_fn fn = cu_elementwise_kernel(id, dt, impl);
    if (!fn)
        fn = cu_reduce_kernel(id, dt, impl);
    if (!fn)
        fn = cu_ext_kernel(id, dt, impl);
    if (!fn)
        fn = cu_transfer_kernel((cu_ctx *)ctx, id, dt, impl);
    const char *tf32 = fn && ctx && ((cu_ctx *)ctx)->tf32 && dt == TB_F32
                           ? cu_blas_tf32_impl(id)
                           : NULL;
    if (tf32 && impl)
        *impl = tf32; /* the same kernel; its handle's math mode differs */
    return fn;
}

static tb_kernel cu_kernel(void *ctx, const tb_op *op, tb_dtype dt,
                           const tb_params *p, const char **impl)
{
    (void)p; /* every supported op takes every parameter value */
    tb_kernel k;
    k.fn = cu_kernel_fn(ctx, op, dt, impl);
    if (k.fn && ctx && op->einsum_plan && op->n_in >= 1 &&
        op->n_in <= TB_MAX_INPUTS)
        ((cu_ctx *)ctx)->einsum_op[op->n_in] = op;
    k.ctx = k.fn ? ctx : NULL;
    return k;
}

static tb_backend cu_make_backend(void)
{
    tb_backend b;
    memset(&b, 0, sizeof b);
    b.name = "cuda";
    /* the registry's placeholder says the same (module.c) */
    b.doc = "CUDA kernels (run-time loaded module tbench-cuda.so, built "
            "for " TB_GPU_ARCHS ")";
    b.probe = cu_probe;
    b.axes = cu_axes;
    b.create = cu_create;
    b.destroy = cu_destroy;
    b.alloc = cu_alloc;
    b.free = cu_free;
    b.upload = cu_upload;
    b.download = cu_download;
    b.sync = cu_sync;
    b.kernel = cu_kernel;
    b.counters = cu_counters;
    b.count = cu_count;
    b.timer_start = cu_timer_start;
    b.timer_stop = cu_timer_stop;
    b.sample_prep = cu_sample_prep;
    b.device_pci = cu_device_pci;
    b.peak = cu_peak;
    b.device_memory = true;
    return b;
}

static const tb_backend *cu_self(void)
{
    static const tb_backend b = cu_make_backend();
    return &b;
}

extern "C" __attribute__((visibility("default"))) const tb_backend *
tb_module_backend_3(void)
{
    return cu_self();
}
