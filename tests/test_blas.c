/* Tests for the blas backend (src/backends/blas/blas.c); built only when
 * OpenBLAS is found.
 *
 *  1. matmul_<dtype>_t<threads>: cblas_?gemm against the reference kernel
 *     (op->ref, double accumulation) on odd shapes and tails (1x1, 7x13x5,
 *     1x513x1, 17x1x15, 65x33x17), shapes above OpenBLAS's threading
 *     threshold (129x257x65, 200x300x100), and batched shapes (3-D and
 *     4-D batch dims: one gemm per batch item), f32 and f64, at threads=1
 *     and threads=2 (or the largest available).  Check: |got - ref| <=
 *     atol * sqrt(K) + rtol * |ref| with matmul's own tolerance.  Each
 *     call must count one kernel launch per batch item and leave
 *     OpenBLAS's thread count at the instance's value.
 *  2. K = 0 (an empty sum writes zeros), the kernel table (matmul,
 *     linear, conv2d, conv2d_nobias and, with LAPACKE, svd/qr/eigh;
 *     every other op unsupported), axes, bad thread values, memory and
 *     counters, defensive errors.
 *
 * Inputs: seeded generator (seed printed at start), uniform in [-1, 1].
 * Every test's teardown checks that it freed all tensor memory.
 * Run one area with: test_blas --filter 'matmul_f32*'. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#include <cblas.h>

#include "backends/backend.h"
#include "ops/alloc.h"
#include "base/error.h"
#include "ops/op.h"
#include "ops/tensor.h"

extern const tb_backend tb_backend_blas;

#define SEED UINT64_C(0x5be1a5d00c0ffee1)

static const tb_backend *const B = &tb_backend_blas;

/* ---- fixtures ------------------------------------------------------------ */

/* Fixtures: leak_setup/leak_teardown (testutil.h). */

/* ---- helpers ------------------------------------------------------------- */

static uint64_t rng_state = SEED;

static uint64_t rng_next(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static double rng_uniform(double lo, double hi)
{
    double u = (double)(rng_next() >> 11) * 0x1.0p-53;
    return lo + (hi - lo) * u;
}

/* Online CPUs capped like the backend's axis (independent of it). */
static int expected_max_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    int procs = openblas_get_num_procs();
    if (n < 1)
        n = 1;
    if (procs >= 1 && n > procs)
        n = procs;
    return n > TB_MAX_AXIS_VALUES ? TB_MAX_AXIS_VALUES : (int)n;
}

static int threads_hi(void)
{
    int n = expected_max_threads();
    return n >= 2 ? 2 : 1;
}

static void *blas_new(int threads)
{
    char v[16], err[256];
    snprintf(v, sizeof v, "%d", threads);
    const char *vals[1] = {v};
    void *ctx = NULL;
    int rc = B->create(B, vals, &ctx, err, sizeof err);
    if (rc)
        print_error("create threads=%d: %s\n", threads, err);
    assert_int_equal(rc, 0);
    assert_non_null(ctx);
    return ctx;
}

static tb_backend_counters counters(void *ctx)
{
    tb_backend_counters c;
    B->counters(ctx, &c);
    return c;
}

static void dev_from_host(void *ctx, tb_tensor *d, const tb_tensor *h)
{
    tb_shape s = tb_tensor_shape(h);
    tb_tensor_init(d, h->dtype, &s);
    assert_int_equal(B->alloc(ctx, d), 0);
    assert_int_equal(B->upload(ctx, d, h), 0);
}

static tb_shape S(int nd, ...)
{
    tb_shape s = {.ndim = nd};
    va_list ap;
    va_start(ap, nd);
    for (int i = 0; i < nd; i++)
        s.dim[i] = va_arg(ap, int);
    va_end(ap);
    return s;
}

/* ---- matmul vs reference ------------------------------------------------- */

typedef struct mm_case {
    tb_shape a, b;
} mm_case;

static const mm_case *mm_cases(int *n)
{
    static mm_case c[12];
    int k = 0;
    c[k++] = (mm_case){S(2, 1, 1), S(2, 1, 1)};
    c[k++] = (mm_case){S(2, 7, 13), S(2, 13, 5)};
    c[k++] = (mm_case){S(2, 1, 513), S(2, 513, 1)};
    c[k++] = (mm_case){S(2, 17, 1), S(2, 1, 15)};
    c[k++] = (mm_case){S(2, 65, 33), S(2, 33, 17)};
    c[k++] = (mm_case){S(2, 129, 257), S(2, 257, 65)};
    c[k++] = (mm_case){S(2, 200, 300), S(2, 300, 100)};
    c[k++] = (mm_case){S(3, 3, 20, 30), S(3, 3, 30, 7)};
    c[k++] = (mm_case){S(3, 1, 15, 17), S(3, 1, 17, 1)};
    c[k++] = (mm_case){S(4, 2, 3, 7, 5), S(4, 2, 3, 5, 9)};
    c[k++] = (mm_case){S(3, 4, 96, 80), S(3, 4, 80, 72)};
    *n = k;
    return c;
}

/* One case on instance ctx: upload, run, download, compare with op->ref. */
static void mm_run(void *ctx, int threads, tb_dtype dt, const mm_case *mc,
                   int ci)
{
    const tb_op *op = tb_op_get(TB_OP_matmul);
    char err[256] = "", sa[96], sb[96];
    tb_params p = {0};
    tb_shape in[2] = {mc->a, mc->b}, oshape;
    int rc = tb_op_infer(op, in, 2, &p, &oshape, err, sizeof err);
    if (rc)
        print_error("case %d: infer: %s\n", ci, err);
    assert_int_equal(rc, 0);

    tb_tensor h[2], d[2], dout, hout, ref;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(tb_tensor_create(&h[i], dt, &in[i]), 0);
        int64_t n = tb_tensor_numel(&h[i]);
        for (int64_t k = 0; k < n; k++)
            tb_tensor_set(&h[i], k, rng_uniform(-1, 1));
        dev_from_host(ctx, &d[i], &h[i]);
    }
    tb_tensor_init(&dout, dt, &oshape);
    assert_int_equal(B->alloc(ctx, &dout), 0);
    assert_int_equal(tb_tensor_create(&hout, dt, &oshape), 0);
    assert_int_equal(tb_tensor_create(&ref, TB_F64, &oshape), 0);

    const char *impl = NULL;
    tb_kernel_fn fn = B->kernel(ctx, op, dt, &p, &impl).fn;
    assert_non_null(fn);
    assert_string_equal(impl, dt == TB_F32 ? "cblas_sgemm" : "cblas_dgemm");
    int64_t batch = 1;
    for (int i = 0; i < mc->a.ndim - 2; i++)
        batch *= mc->a.dim[i];
    uint64_t l0 = counters(ctx).kernel_launches;
    openblas_set_num_threads(expected_max_threads()); /* the kernel resets */
    rc = fn(ctx, d, &dout, &p);
    assert_int_equal(rc, 0);
    assert_int_equal(counters(ctx).kernel_launches - l0, (uint64_t)batch);
    assert_int_equal(openblas_get_num_threads(), threads);
    assert_int_equal(B->download(ctx, &hout, &dout), 0);
    assert_int_equal(op->ref(h, &ref, &p), 0);

    const int64_t K = mc->a.dim[mc->a.ndim - 1];
    const tb_tol tol = op->tol[dt];
    const double bound_a = tol.atol * sqrt((double)K);
    int64_t n = tb_tensor_numel(&ref), bad = 0;
    for (int64_t k = 0; k < n; k++) {
        double got = tb_tensor_get(&hout, k), want = tb_tensor_get(&ref, k);
        if (!(fabs(got - want) <= bound_a + tol.rtol * fabs(want)) &&
            bad++ < 5)
            print_error("matmul %s threads=%d case %d %s @ %s: [%lld] got "
                        "%.17g want %.17g (diff %.3g)\n",
                        tb_dtype_name(dt), threads, ci,
                        tb_shape_format(&mc->a, sa, sizeof sa),
                        tb_shape_format(&mc->b, sb, sizeof sb), (long long)k,
                        got, want, got - want);
    }
    for (int i = 0; i < 2; i++) {
        B->free(ctx, &d[i]);
        tb_tensor_destroy(&h[i]);
    }
    B->free(ctx, &dout);
    tb_tensor_destroy(&hout);
    tb_tensor_destroy(&ref);
    if (bad) {
        print_error("%lld of %lld elements out of tolerance (seed "
                    "0x%016llx)\n",
                    (long long)bad, (long long)n, (unsigned long long)SEED);
        fail();
    }
}

static void mm_all(tb_dtype dt, int threads)
{
    void *ctx = blas_new(threads);
    int n;
    const mm_case *c = mm_cases(&n);
    for (int i = 0; i < n; i++)
        mm_run(ctx, threads, dt, &c[i], i);
    B->destroy(ctx);
}

static void test_matmul_f32_t1(void **state)
{
    (void)state;
    mm_all(TB_F32, 1);
}

static void test_matmul_f64_t1(void **state)
{
    (void)state;
    mm_all(TB_F64, 1);
}

static void test_matmul_f32_t2(void **state)
{
    (void)state;
    mm_all(TB_F32, threads_hi());
}

static void test_matmul_f64_t2(void **state)
{
    (void)state;
    mm_all(TB_F64, threads_hi());
}

/* Two instances used alternately: each call runs with its own count. */
static void test_threads_alternate(void **state)
{
    (void)state;
    void *c1 = blas_new(1), *c2 = blas_new(threads_hi());
    int n;
    const mm_case *c = mm_cases(&n);
    for (int rep = 0; rep < 2; rep++) {
        mm_run(c1, 1, TB_F32, &c[5], 5);
        mm_run(c2, threads_hi(), TB_F32, &c[5], 5);
    }
    B->destroy(c1);
    B->destroy(c2);
}

/* K = 0: C = A @ B is an empty sum, all zeros (BLAS is not called). */
static void test_matmul_k0(void **state)
{
    (void)state;
    void *ctx = blas_new(1);
    for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
        tb_tensor a, b, o, h;
        tb_shape sa = S(3, 2, 3, 0), sb = S(3, 2, 0, 4), so = S(3, 2, 3, 4);
        tb_tensor_init(&a, (tb_dtype)dt, &sa);
        tb_tensor_init(&b, (tb_dtype)dt, &sb);
        tb_tensor_init(&o, (tb_dtype)dt, &so);
        assert_int_equal(B->alloc(ctx, &a), 0);
        assert_int_equal(B->alloc(ctx, &b), 0);
        assert_int_equal(B->alloc(ctx, &o), 0);
        assert_int_equal(tb_tensor_create(&h, (tb_dtype)dt, &so), 0);
        for (int64_t k = 0; k < 24; k++)
            tb_tensor_set(&h, k, NAN);
        assert_int_equal(B->upload(ctx, &o, &h), 0);
        tb_tensor in[2] = {a, b};
        tb_kernel_fn fn = B->kernel(ctx, tb_op_get(TB_OP_matmul),
                                    (tb_dtype)dt, NULL, NULL).fn;
        assert_non_null(fn);
        assert_int_equal(fn(ctx, in, &o, NULL), 0);
        assert_int_equal(B->download(ctx, &h, &o), 0);
        for (int64_t k = 0; k < 24; k++)
            assert_true(tb_tensor_get(&h, k) == 0.0);
        B->free(ctx, &a);
        B->free(ctx, &b);
        B->free(ctx, &o);
        tb_tensor_destroy(&h);
    }
    B->destroy(ctx);
}

/* ---- backend surface ----------------------------------------------------- */

static void test_probe_axes(void **state)
{
    (void)state;
    char reason[128] = "x";
    assert_int_equal(B->probe(B, reason, sizeof reason), 0);
    assert_string_equal(reason, "");
    assert_string_equal(B->name, "blas");
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 1);
    assert_string_equal(ax[0].name, "threads");
    assert_int_equal(ax[0].n_values, expected_max_threads());
    for (int i = 0; i < ax[0].n_values; i++) {
        char want[16];
        snprintf(want, sizeof want, "%d", i + 1);
        assert_string_equal(ax[0].values[i], want);
    }
    assert_string_equal(ax[0].values[ax[0].def], "1");
    assert_int_equal(B->axes(B, ax, 0), 0);
    assert_ptr_equal(tb_backend_find("blas"), B);
}

static void test_create_bad_threads(void **state)
{
    (void)state;
    char over[16];
    snprintf(over, sizeof over, "%d", expected_max_threads() + 1);
    const char *bad[] = {"0", "-1", "x", "1x", "", " 1", over};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[256] = "";
        void *ctx = (void *)1;
        const char *vals[1] = {bad[i]};
        assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), TB_EPARAM);
        assert_null(ctx);
        assert_non_null(strstr(err, "blas: threads"));
    }
    char err[256] = "";
    void *ctx = NULL;
    assert_int_equal(B->create(B, NULL, &ctx, err, sizeof err), TB_EPARAM);
    const char *one[1] = {"1"};
    assert_int_equal(B->create(B, one, NULL, err, sizeof err), TB_EINVAL);
}

/* linear and conv2d (im2col + GEMM) against the reference kernel, within
 * the op's tolerance; launches: 1 per linear call, 1 per image. */
static void op_vs_ref(void *ctx, tb_op_id id, tb_dtype dt, const tb_shape *in,
                      const char *pname, double pval, int64_t launches)
{
    const tb_op *op = tb_op_get(id);
    char err[256] = "";
    tb_params p = {0};
    if (pname)
        assert_int_equal(tb_params_set(op, &p, pname, pval, err, sizeof err),
                         0);
    tb_params_defaults(op, &p);
    tb_shape oshape;
    assert_int_equal(tb_op_infer(op, in, op->n_in, &p, &oshape, err,
                                 sizeof err),
                     0);
    tb_tensor h[3], d[3], dout, hout, ref;
    for (int i = 0; i < op->n_in; i++) {
        assert_int_equal(tb_tensor_create(&h[i], dt, &in[i]), 0);
        int64_t n = tb_tensor_numel(&h[i]);
        for (int64_t k = 0; k < n; k++)
            tb_tensor_set(&h[i], k, rng_uniform(-1, 1));
        dev_from_host(ctx, &d[i], &h[i]);
    }
    tb_tensor_init(&dout, dt, &oshape);
    assert_int_equal(B->alloc(ctx, &dout), 0);
    assert_int_equal(tb_tensor_create(&hout, dt, &oshape), 0);
    assert_int_equal(tb_tensor_create(&ref, TB_F64, &oshape), 0);
    const char *impl = NULL;
    tb_kernel_fn fn = B->kernel(ctx, op, dt, &p, &impl).fn;
    assert_non_null(fn);
    uint64_t l0 = counters(ctx).kernel_launches;
    assert_int_equal(fn(ctx, d, &dout, &p), 0);
    assert_int_equal(counters(ctx).kernel_launches - l0, (uint64_t)launches);
    assert_int_equal(B->download(ctx, &hout, &dout), 0);
    assert_int_equal(op->ref(h, &ref, &p), 0);
    double rl = op->reduce_len(op, in, &oshape, &p, dt);
    tb_tol tol = op->tol[dt];
    int64_t n = tb_tensor_numel(&ref), bad = 0;
    for (int64_t k = 0; k < n; k++) {
        double got = tb_tensor_get(&hout, k), want = tb_tensor_get(&ref, k);
        if (!(fabs(got - want) <= tol.atol * sqrt(rl) + tol.rtol * fabs(want)))
            bad++;
    }
    for (int i = 0; i < op->n_in; i++) {
        B->free(ctx, &d[i]);
        tb_tensor_destroy(&h[i]);
    }
    B->free(ctx, &dout);
    tb_tensor_destroy(&hout);
    tb_tensor_destroy(&ref);
    if (bad) {
        print_error("%s %s (%s): %lld of %lld out of tolerance\n", op->name,
                    tb_dtype_name(dt), impl, (long long)bad, (long long)n);
        fail();
    }
}

static void test_linear_conv2d(void **state)
{
    (void)state;
    for (int t = 1; t <= threads_hi(); t++) {
        void *ctx = blas_new(t);
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
            tb_shape lin[3] = {S(2, 7, 13), S(2, 13, 5), S(1, 5)};
            op_vs_ref(ctx, TB_OP_linear, (tb_dtype)dt, lin, NULL, 0, 1);
            tb_shape lin2[3] = {S(2, 65, 33), S(2, 33, 17), S(1, 17)};
            op_vs_ref(ctx, TB_OP_linear, (tb_dtype)dt, lin2, NULL, 0, 1);
            tb_shape cv[3] = {S(4, 2, 3, 9, 11), S(4, 4, 3, 3, 2), S(1, 4)};
            op_vs_ref(ctx, TB_OP_conv2d, (tb_dtype)dt, cv, NULL, 0, 2);
            op_vs_ref(ctx, TB_OP_conv2d, (tb_dtype)dt, cv, "padding", 2, 2);
            op_vs_ref(ctx, TB_OP_conv2d, (tb_dtype)dt, cv, "dilation", 2, 2);
            op_vs_ref(ctx, TB_OP_conv2d, (tb_dtype)dt, cv, "stride", 3, 2);
            tb_shape nb[2] = {S(4, 3, 5, 8, 8), S(4, 6, 5, 3, 3)};
            op_vs_ref(ctx, TB_OP_conv2d_nobias, (tb_dtype)dt, nb, "padding",
                      1, 3);
        }
        B->destroy(ctx);
    }
}

static void test_kernel_lookup(void **state)
{
    (void)state;
    void *ctx = blas_new(1);
    for (int id = 0; id < TB_OP_COUNT; id++) {
        const tb_op *op = tb_op_get((tb_op_id)id);
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
            const char *impl = "unset";
            tb_kernel_fn fn = B->kernel(ctx, op, (tb_dtype)dt, NULL, &impl).fn;
            if (id == TB_OP_matmul || id == TB_OP_linear ||
                id == TB_OP_conv2d || id == TB_OP_conv2d_nobias ||
                (TB_HAVE_LAPACKE && op->category == TB_CAT_LINALG)) {
                assert_non_null(fn);
                assert_non_null(impl);
            } else {
                /* unsupported: never a fallback */
                assert_null(fn);
                assert_null(impl);
            }
        }
    }
    assert_null(B->kernel(ctx, NULL, TB_F32, NULL, NULL).fn);
    assert_null(B->kernel(ctx, tb_op_get(TB_OP_matmul), TB_DTYPE_COUNT, NULL,
                          NULL).fn);
    B->destroy(ctx);
}

static void test_memory_counters(void **state)
{
    (void)state;
    void *ctx = blas_new(1);
    tb_backend_counters c0 = counters(ctx);
    assert_int_equal(c0.kernel_launches, 0);
    assert_int_equal(c0.device_allocs, 0);
    tb_shape s = S(2, 3, 5);
    tb_tensor h, d, back;
    assert_int_equal(tb_tensor_create(&h, TB_F64, &s), 0);
    assert_int_equal(tb_tensor_create(&back, TB_F64, &s), 0);
    for (int64_t k = 0; k < 15; k++)
        tb_tensor_set(&h, k, (double)k - 7.5);
    dev_from_host(ctx, &d, &h);
    assert_ptr_equal(d.backend, B);
    assert_true(d.owns);
    assert_int_equal((uintptr_t)d.data % TB_ALIGN, 0);
    assert_int_equal(B->download(ctx, &back, &d), 0);
    for (int64_t k = 0; k < 15; k++)
        assert_true(tb_tensor_get(&back, k) == (double)k - 7.5);
    tb_backend_counters c1 = counters(ctx);
    assert_int_equal(c1.device_allocs, 1);
    assert_int_equal(c1.device_alloc_bytes, 15 * sizeof(double));
    assert_int_equal(c1.memcpy_count, 2);
    assert_int_equal(c1.memcpy_bytes, 2 * 15 * sizeof(double));
    /* Wrong direction / foreign tensors are rejected, not copied. */
    assert_int_equal(B->upload(ctx, &h, &d), TB_EINVAL);
    assert_int_equal(B->download(ctx, &d, &h), TB_EINVAL);
    tb_tensor other;
    tb_shape s2 = S(2, 5, 3);
    tb_tensor_init(&other, TB_F64, &s2);
    assert_int_equal(B->alloc(ctx, &other), 0);
    assert_int_equal(B->download(ctx, &back, &other), TB_ESHAPE);
    B->free(ctx, &other);
    B->free(ctx, &h); /* host tensor: not ours, left alone */
    assert_non_null(h.data);
    B->free(ctx, &d);
    assert_null(d.data);
    B->free(ctx, NULL);
    tb_tensor_destroy(&h);
    tb_tensor_destroy(&back);
    B->counters(ctx, NULL);
    B->destroy(ctx);
    B->destroy(NULL);
}

static void test_kernel_errors(void **state)
{
    (void)state;
    void *ctx = blas_new(1);
    const tb_op *op = tb_op_get(TB_OP_matmul);
    tb_kernel_fn fn = B->kernel(ctx, op, TB_F32, NULL, NULL).fn;
    tb_shape sa = S(2, 4, 3), sb = S(2, 3, 2), so = S(2, 4, 2),
             bad = S(2, 4, 3);
    tb_tensor t[2], o, ob, o64;
    tb_tensor_init(&t[0], TB_F32, &sa);
    tb_tensor_init(&t[1], TB_F32, &sb);
    tb_tensor_init(&o, TB_F32, &so);
    tb_tensor_init(&ob, TB_F32, &bad);
    tb_tensor_init(&o64, TB_F64, &so);
    assert_int_equal(B->alloc(ctx, &t[0]), 0);
    assert_int_equal(B->alloc(ctx, &t[1]), 0);
    assert_int_equal(B->alloc(ctx, &o), 0);
    assert_int_equal(B->alloc(ctx, &ob), 0);
    assert_int_equal(B->alloc(ctx, &o64), 0);
    uint64_t l0 = counters(ctx).kernel_launches;
    assert_int_equal(fn(ctx, t, &ob, NULL), TB_ESHAPE);   /* wrong out */
    assert_int_equal(fn(ctx, t, &o64, NULL), TB_EINVAL);  /* wrong dtype */
    tb_tensor swapped[2] = {t[1], t[0]};
    assert_int_equal(fn(ctx, swapped, &o, NULL), TB_ESHAPE); /* inner dims */
    tb_tensor view;
    assert_int_equal(tb_tensor_transpose_view(&t[0], 0, 1, &view), 0);
    tb_tensor tv[2] = {view, t[1]};
    assert_int_equal(fn(ctx, tv, &o, NULL), TB_EINVAL); /* not contiguous */
    assert_int_equal(fn(NULL, t, &o, NULL), TB_EINVAL);
    assert_int_equal(fn(ctx, NULL, &o, NULL), TB_EINVAL);
    assert_int_equal(counters(ctx).kernel_launches, l0); /* nothing ran */
    assert_int_equal(fn(ctx, t, &o, NULL), 0);
    assert_int_equal(counters(ctx).kernel_launches, l0 + 1);
    tb_tensor_init(&view, TB_F32, &sa);
    assert_int_equal(B->alloc(NULL, &view), TB_EINVAL);
    B->free(ctx, &t[0]);
    B->free(ctx, &t[1]);
    B->free(ctx, &o);
    B->free(ctx, &ob);
    B->free(ctx, &o64);
    B->destroy(ctx);
}

#define T(name) cmocka_unit_test_setup_teardown(test_##name, leak_setup, leak_teardown)

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        T(matmul_f32_t1),
        T(matmul_f64_t1),
        T(matmul_f32_t2),
        T(matmul_f64_t2),
        T(threads_alternate),
        T(matmul_k0),
        T(probe_axes),
        T(create_bad_threads),
        T(linear_conv2d),
        T(kernel_lookup),
        T(memory_counters),
        T(kernel_errors),
    };
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
            cmocka_set_test_filter(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--filter PATTERN]\n", argv[0]);
            return 2;
        }
    }
    printf("# test_blas: %s, core %s; threads 1 and %d; input seed "
           "0x%016llx\n",
           openblas_get_config(), openblas_get_corename(), threads_hi(),
           (unsigned long long)SEED);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
