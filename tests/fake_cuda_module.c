/* A stand-in tbench-cuda.so for tests/test_gpu_fake.py: what the real
 * module offers the harness besides its kernels - the device, l2 and
 * tf32 axes, sample_prep (l2=cold), device_pci, a device timer and the
 * peak slot - on the CPU, so that `tbench list/run/peak/report` can be
 * run end to end on a machine without a GPU (TBENCH_MODULE_DIR points
 * src/backends/module.c at it).  Its kernels are add and matmul (2-D) in
 * f32 on host memory; with tf32=on matmul rounds its inputs to TF32 as
 * a tensor core does and names an impl ending in "_tf32" (or, with
 * FAKE_TF32_IMPL=plain, the f32 one: a tf32 result the runner must then
 * fail at f32's tolerance); its "device" charges FAKE_WARM_NS per call,
 * FAKE_COLD_NS to the first call after a sample_prep.  Self-contained:
 * the executable exports nothing to modules. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "base/error.h"

#define EXPORT __attribute__((visibility("default")))
#define FAKE_WARM_NS 1000.0
#define FAKE_COLD_NS 5000.0

typedef struct {
    int tf32; /* axis tf32=on */
    int cold_axis;
    int cold; /* the next call finds a cold cache */
    double dev_ns, mark;
} fk_ctx;

static const tb_backend *fk_self(void);

static int fk_probe(const tb_backend *self, char *r, size_t n)
{
    (void)self;
    if (r && n)
        r[0] = '\0';
    return 0;
}

static int fk_axes(const tb_backend *self, tb_axis *out, int max)
{
    (void)self;
    if (max < 3)
        return 0;
    memset(out, 0, 3 * sizeof *out);
    out[0].name = "device";
    out[0].n_values = 1;
    out[0].values[0] = "0";
    out[0].doc = "fake device index";
    out[1].name = "l2";
    out[1].n_values = 2;
    out[1].values[0] = "warm";
    out[1].values[1] = "cold";
    out[1].doc = "fake L2 state";
    out[2].name = "tf32";
    out[2].n_values = 2;
    out[2].values[0] = "off";
    out[2].values[1] = "on";
    out[2].doc = "fake TF32 matmul";
    return 3;
}

static int fk_create(const tb_backend *self, const char *const *v,
                     void **ctx, char *e, size_t n)
{
    (void)self;
    fk_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(e, n, "out of memory");
        return TB_ENOMEM;
    }
    c->cold_axis = v && v[1] && !strcmp(v[1], "cold");
    c->tf32 = v && v[2] && !strcmp(v[2], "on");
    *ctx = c;
    return 0;
}

static void fk_destroy(void *ctx) { free(ctx); }

static int64_t numel(const tb_tensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= t->shape[d];
    return n;
}

static size_t nbytes(const tb_tensor *t)
{
    return (size_t)numel(t) * (t->dtype == TB_F64 ? 8 : 4);
}

static int fk_alloc(void *ctx, tb_tensor *t)
{
    size_t nb = nbytes(t);
    t->data = aligned_alloc(64, (nb + 63) / 64 * 64 + 64);
    if (!t->data)
        return TB_ENOMEM;
    t->owns = true;
    t->backend = fk_self();
    t->backend_ctx = ctx;
    return 0;
}

static void fk_free(void *ctx, tb_tensor *t)
{
    (void)ctx;
    if (t->owns)
        free(t->data);
    t->data = NULL;
    t->owns = false;
}

static int fk_copy(void *ctx, tb_tensor *d, const tb_tensor *s)
{
    (void)ctx;
    memcpy(d->data, s->data, nbytes(s));
    return 0;
}

static int fk_add(void *ctx, const tb_tensor *in, tb_tensor *out,
                  const tb_params *p)
{
    (void)p;
    fk_ctx *c = ctx;
    const float *a = in[0].data, *b = in[1].data;
    float *o = out[0].data;
    int64_t n = numel(&out[0]);
    if (numel(&in[0]) != n || numel(&in[1]) != n)
        return TB_ESHAPE;
    for (int64_t i = 0; i < n; i++)
        o[i] = a[i] + b[i];
    c->dev_ns += c->cold ? FAKE_COLD_NS : FAKE_WARM_NS;
    c->cold = 0;
    return 0;
}

/* f as TF32 holds it: 10 stored significand bits, nearest even. */
static float fk_tf32(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7f800000u) == 0x7f800000u) /* infinity, NaN */
        return f;
    x += 0xfffu + ((x >> 13) & 1u);
    x &= ~0x1fffu;
    memcpy(&f, &x, sizeof f);
    return f;
}

/* [M, K] @ [K, N], f32 sums; tf32=on: the inputs rounded first. */
static int fk_matmul(void *ctx, const tb_tensor *in, tb_tensor *out,
                     const tb_params *p)
{
    (void)p;
    fk_ctx *c = ctx;
    const float *a = in[0].data, *b = in[1].data;
    float *o = out[0].data;
    if (in[0].ndim != 2 || in[1].ndim != 2 ||
        in[1].shape[0] != in[0].shape[1])
        return TB_ESHAPE;
    int64_t M = in[0].shape[0], K = in[0].shape[1], N = in[1].shape[1];
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            float s = 0;
            for (int64_t k = 0; k < K; k++) {
                float x = a[i * K + k], y = b[k * N + j];
                s += c->tf32 ? fk_tf32(x) * fk_tf32(y) : x * y;
            }
            o[i * N + j] = s;
        }
    c->dev_ns += FAKE_WARM_NS;
    return 0;
}

static tb_kernel fk_kernel(void *ctx, const tb_op *op, tb_dtype dt,
                           const tb_params *p, const char **impl)
{
    (void)p;
    const fk_ctx *c = ctx;
    if (dt != TB_F32)
        return (tb_kernel){NULL, NULL};
    if (op->id == TB_OP_add) {
        *impl = "add_f32_fakecuda";
        return (tb_kernel){fk_add, ctx};
    }
    if (op->id != TB_OP_matmul)
        return (tb_kernel){NULL, NULL};
    const char *plain = getenv("FAKE_TF32_IMPL");
    *impl = c && c->tf32 && !(plain && !strcmp(plain, "plain"))
                ? "matmul_f32_fakecuda_tf32"
                : "matmul_f32_fakecuda";
    return (tb_kernel){fk_matmul, ctx};
}

static int fk_timer_start(void *ctx)
{
    fk_ctx *c = ctx;
    c->mark = c->dev_ns;
    return 0;
}

static int fk_timer_stop(void *ctx, double *ns)
{
    fk_ctx *c = ctx;
    *ns = c->dev_ns - c->mark;
    return 0;
}

static int fk_sample_prep(void *ctx)
{
    fk_ctx *c = ctx;
    if (!c->cold_axis)
        return 0;
    c->cold = 1;
    return 1;
}

static int fk_pci(void *ctx, char *buf, size_t len)
{
    (void)ctx;
    snprintf(buf, len, "00000000:01:00.0");
    return 0;
}

/* An H100-like device: figures the test recomputes the roofline from. */
static int fk_peak(void *ctx, int reps, double rep_s, tb_dev_peaks *out)
{
    (void)ctx, (void)rep_s;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "Fake GPU");
    out->cc_major = 9;
    out->sms = 132;
    out->l2_bytes = 50 << 20;
    out->mem_bytes = 80e9;
    out->mem_clock_khz = 2619000;
    out->sm_clock_khz = 1980000;
    out->bus_bits = 5120;
    out->vendor_bw = 3.352e12;
    out->vendor_flops[TB_F32] = 66.9e12;
    out->vendor_flops[TB_F64] = 33.5e12;
    out->array_bytes = 400 << 20;
    out->reps = reps;
    for (int k = 0; k < TB_DEV_NPEAK_BW; k++) {
        out->bw_best[k] = (3.0 - 0.1 * k) * 1e12;
        out->bw_median[k] = (2.9 - 0.1 * k) * 1e12;
    }
    out->flops_best[TB_F32] = 60e12;
    out->flops_median[TB_F32] = 59e12;
    out->flops_best[TB_F64] = 30e12;
    out->flops_median[TB_F64] = 29e12;
    return 0;
}

static const tb_backend fk_backend = {
    .name = "cuda",
    .doc = "fake CUDA module (tests/fake_cuda_module.c)",
    .probe = fk_probe,
    .axes = fk_axes,
    .create = fk_create,
    .destroy = fk_destroy,
    .alloc = fk_alloc,
    .free = fk_free,
    .upload = fk_copy,
    .download = fk_copy,
    .kernel = fk_kernel,
    .timer_start = fk_timer_start,
    .timer_stop = fk_timer_stop,
    .sample_prep = fk_sample_prep,
    .device_pci = fk_pci,
    .peak = fk_peak,
    .device_memory = true,
};

static const tb_backend *fk_self(void) { return &fk_backend; }

EXPORT const tb_backend *tb_module_backend_3(void);
const tb_backend *tb_module_backend_3(void) { return fk_self(); }
