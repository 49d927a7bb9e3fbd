/* Tests for the cpu backend (src/backends/cpu/cpu.c).
 *
 *  1. ref_<op>_<dtype>: every kernel against the reference kernel (op->ref,
 *     f64 output) at every isa level this machine has (scalar, avx2,
 *     avx512) and at threads=1 and threads=N (N = online CPUs), on odd
 *     sizes and tails (1, 7, 15, 17, 513, 1000x3), broadcasts, shapes above
 *     the threading threshold and every transpose / reduction layout.
 *     Check: |got - ref| <= atol * sqrt(reduce_len) + rtol * |ref| with the
 *     op's own tolerance; relu and transpose must be exact.
 *  2. counters, memory, create/axes, kernel lookup, defensive errors.
 *  3. determinism of the threaded global sum, a pool stress test (many
 *     back-to-back threaded calls; run it under -fsanitize=thread) and a
 *     forked child using an instance whose workers it did not inherit.
 *
 * Inputs come from a seeded generator (seed printed at start), drawn from
 * the op's domain ([-1, 1]; the divisor of div in [0.5, 2]).  Every test's
 * teardown checks that it freed all tensor memory.
 * Run one area with: test_cpu --filter 'ref_matmul*'. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#include "backends/backend.h"
#include "backends/cpu/isa.h"
#include "backends/cpu/kreg.h"
#include "backends/cpu/vmath.h"
#if TB_CPU_HAVE_GEMM
#include "backends/cpu/gemm/gemm.h"
#endif
#include "ops/alloc.h"
#include "base/error.h"
#include "ops/op.h"
#include "ops/ref.h"
#include "ops/tensor.h"

extern const tb_backend tb_backend_cpu;

#define SEED UINT64_C(0x3c9e1f27a4b58d61)

static const tb_backend *const B = &tb_backend_cpu;

/* ---- fixtures ------------------------------------------------------------ */

static int setup(void **state)
{
    (void)state;
    leak_mark();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return leak_check();
}

/* ---- helpers ------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static double rng_uniform(double lo, double hi)
{
    double u = (double)(rng_next() >> 11) * 0x1.0p-53;
    return lo + (hi - lo) * u;
}

/* Axes: isa (ax[0]), threads (ax[1]). */
static int max_threads(void)
{
    tb_axis ax[TB_MAX_AXES];
    int n = B->axes(B, ax, TB_MAX_AXES);
    assert_int_equal(n, 2);
    return ax[1].n_values;
}

/* isa values other than "auto": scalar .. the best level here. */
static int isa_levels(void)
{
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    return ax[0].n_values - 1;
}

/* The isa value cpu_new() uses. */
static const char *cur_isa = "auto";

static void *cpu_new(int threads)
{
    char v[16], err[256];
    snprintf(v, sizeof v, "%d", threads);
    const char *vals[2] = {cur_isa, v};
    void *ctx = NULL;
    int rc = B->create(B, vals, &ctx, err, sizeof err);
    if (rc)
        print_error("create isa=%s threads=%d: %s\n", cur_isa, threads, err);
    assert_int_equal(rc, 0);
    assert_non_null(ctx);
    return ctx;
}

static uint64_t launches(void *ctx)
{
    tb_backend_counters c;
    B->counters(ctx, &c);
    return c.kernel_launches;
}

/* A backend tensor of shape s, allocated and uploaded from host h. */
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

/* ---- kernel vs reference ------------------------------------------------- */

typedef struct tcase {
    tb_shape in[2];
    const char *pn[2]; /* parameter names (NULL: unused) */
    double pv[2];
    bool no_defaults;  /* leave absent params absent (kernel defaults) */
} tcase;

#define MAX_CASES 40

/* Runs one case on instance ctx (threads `threads`); returns 0 or fails. */
static void run_case(void *ctx, int threads, const tb_op *op, tb_dtype dt,
                     const tcase *tc, int ci)
{
    char err[256] = "", sbuf[2][96], pbuf[128];
    tb_params p = {0};
    for (int i = 0; i < 2; i++)
        if (tc->pn[i])
            assert_int_equal(
                tb_params_set(op, &p, tc->pn[i], tc->pv[i], err, sizeof err),
                0);
    if (!tc->no_defaults)
        tb_params_defaults(op, &p);
    tb_shape oshape;
    int rc = tb_op_infer(op, tc->in, op->n_in, &p, &oshape, err, sizeof err);
    if (rc)
        print_error("case %d: infer: %s\n", ci, err);
    assert_int_equal(rc, 0);

    tb_tensor h[2], d[2], dout, hout, ref;
    for (int i = 0; i < op->n_in; i++) {
        assert_int_equal(tb_tensor_create(&h[i], dt, &tc->in[i]), 0);
        double lo = op->domain ? op->domain[i].lo : -1;
        double hi = op->domain ? op->domain[i].hi : 1;
        int64_t n = tb_tensor_numel(&h[i]);
        for (int64_t k = 0; k < n; k++)
            tb_tensor_set(&h[i], k, rng_uniform(lo, hi));
        dev_from_host(ctx, &d[i], &h[i]);
    }
    tb_tensor_init(&dout, dt, &oshape);
    assert_int_equal(B->alloc(ctx, &dout), 0);
    assert_int_equal(tb_tensor_create(&hout, dt, &oshape), 0);
    assert_int_equal(tb_tensor_create(&ref, TB_F64, &oshape), 0);

    const char *impl = NULL;
    tb_kernel_fn fn = B->kernel(ctx, op, dt, &p, &impl).fn;
    assert_non_null(fn);
    assert_non_null(impl);
    uint64_t l0 = launches(ctx);
    rc = fn(ctx, d, &dout, &p);
    assert_int_equal(rc, 0);
    assert_int_equal(launches(ctx) - l0, 1);
    assert_int_equal(B->download(ctx, &hout, &dout), 0);
    assert_int_equal(op->ref(h, &ref, &p), 0);

    tb_shape outs[1] = {oshape};
    double rlen = op->reduce_len
                      ? op->reduce_len(op, tc->in, outs, &p, dt)
                      : 1.0;
    tb_tol tol = op->tol[dt];
    bool exact = op->id == TB_OP_relu || op->id == TB_OP_transpose;
    double bound_a = tol.atol * sqrt(rlen);
    int64_t n = tb_tensor_numel(&ref), bad = 0;
    for (int64_t k = 0; k < n; k++) {
        double got = tb_tensor_get(&hout, k), want = tb_tensor_get(&ref, k);
        /* The reference rounded to dt: what an exact kernel writes. */
        double want_dt = dt == TB_F32 ? (double)(float)want : want;
        bool ok = exact ? got == want_dt
                        : fabs(got - want) <= bound_a + tol.rtol * fabs(want);
        if (isnan(want))
            ok = isnan(got);
        if (!ok && bad++ < 5)
            print_error("%s %s threads=%d case %d in %s%s%s params {%s} "
                        "impl %s: [%lld] got %.17g want %.17g (diff %.3g)\n",
                        op->name, tb_dtype_name(dt), threads, ci,
                        tb_shape_format(&tc->in[0], sbuf[0], sizeof sbuf[0]),
                        op->n_in > 1 ? " , " : "",
                        op->n_in > 1 ? tb_shape_format(&tc->in[1], sbuf[1],
                                                       sizeof sbuf[1])
                                     : "",
                        tb_params_format(op, &p, pbuf, sizeof pbuf), impl,
                        (long long)k, got, want, got - want);
    }

    for (int i = 0; i < op->n_in; i++) {
        B->free(ctx, &d[i]);
        tb_tensor_destroy(&h[i]);
    }
    B->free(ctx, &dout);
    tb_tensor_destroy(&hout);
    tb_tensor_destroy(&ref);
    if (bad) {
        print_error("%lld of %lld elements out of tolerance (isa %s, seed "
                    "0x%016llx)\n",
                    (long long)bad, (long long)n, cur_isa,
                    (unsigned long long)SEED);
        fail();
    }
}

#define C1(a) {.in = {a}}
#define C2(a, b) {.in = {a, b}}
#define CP(a, n0, v0) {.in = {a}, .pn = {n0}, .pv = {v0}}
#define CPP(a, n0, v0, n1, v1) {.in = {a}, .pn = {n0, n1}, .pv = {v0, v1}}

/* Per op: the cases.  Shapes are chosen for tails (1, 7, 15, 17, 513),
 * broadcasting forms (scalar-vector, vector-scalar, middle dims), the
 * threading threshold (32K elements / multiply-adds) and, for transpose
 * and the axis ops, every internal layout. */
static int cases_for(tb_op_id id, tcase *c)
{
#define TAKE(t)                                                           \
    do {                                                                  \
        assert_true(sizeof t / sizeof t[0] <= MAX_CASES);                 \
        memcpy(c, t, sizeof t);                                           \
        n = (int)(sizeof t / sizeof t[0]);                                \
    } while (0)
    int n = 0;
    switch (id) {
    case TB_OP_add:
    case TB_OP_sub:
    case TB_OP_mul:
    case TB_OP_div: {
        const tcase t[] = {
            C2(S(1, 1), S(1, 1)),
            C2(S(1, 7), S(1, 7)),
            C2(S(1, 15), S(1, 15)),
            C2(S(1, 17), S(1, 17)),
            C2(S(1, 513), S(1, 513)),
            C2(S(2, 1000, 3), S(2, 1000, 3)),
            C2(S(2, 300, 300), S(2, 300, 300)),
            C2(S(1, 70001), S(1, 70001)),
            /* 24 MiB in f32: drv_ew.c's streaming-store kernels */
            C2(S(1, 2097152), S(1, 2097152)),
            C2(S(3, 3, 1, 5), S(3, 1, 4, 5)),
            C2(S(2, 1000, 3), S(1, 3)),
            C2(S(1, 3), S(2, 1000, 3)),
            C2(S(2, 1, 1), S(1, 7)),
            C2(S(1, 5), S(3, 2, 3, 1)),
            C2(S(2, 300, 1), S(2, 1, 300)),
            C2(S(2, 257, 300), S(2, 257, 1)),
            C2(S(2, 1, 300), S(2, 257, 300)),
            C2(S(4, 2, 1, 3, 1), S(4, 1, 5, 1, 7)),
            C2(S(3, 40, 1, 900), S(3, 1, 3, 900)),
        };
        TAKE(t);
        break;
    }
    case TB_OP_relu: {
        const tcase t[] = {
            C1(S(1, 1)),         C1(S(1, 7)),   C1(S(1, 15)),
            C1(S(1, 17)),        C1(S(1, 513)), C1(S(2, 1000, 3)),
            C1(S(2, 300, 300)),  C1(S(1, 70001)),
            C1(S(3, 3, 4, 5)),
        };
        TAKE(t);
        break;
    }
    case TB_OP_sum:
    case TB_OP_mean: {
        const tcase t[] = {
            C1(S(1, 1)),
            C1(S(1, 7)),
            C1(S(1, 15)),
            C1(S(1, 17)),
            C1(S(1, 513)),
            C1(S(2, 1000, 3)),
            C1(S(2, 300, 300)),
            C1(S(1, 70001)),
            C1(S(3, 3, 4, 5)),
            CP(S(2, 1000, 3), "keepdim", 1),
            CP(S(1, 7), "axis", 0),
            CP(S(2, 1000, 3), "axis", 0),
            CP(S(2, 1000, 3), "axis", 1),
            CP(S(2, 1000, 3), "axis", -1),
            CPP(S(2, 1000, 3), "axis", 0, "keepdim", 1),
            CP(S(2, 300, 300), "axis", 0),
            CP(S(2, 300, 300), "axis", 1),
            CP(S(3, 3, 4, 5), "axis", 1),
            CP(S(3, 5, 7, 300), "axis", 1),
            CP(S(3, 50, 7, 300), "axis", -2),
            CP(S(2, 40000, 1), "axis", 1),
            CP(S(2, 3, 2500), "axis", 0),
            CP(S(3, 2, 70, 2100), "axis", 1),
            CP(S(2, 1, 513), "axis", 0),
            {.in = {S(2, 17, 513)}, .no_defaults = true},
            {.in = {S(2, 17, 513)},
             .pn = {"axis"},
             .pv = {-1},
             .no_defaults = true},
            /* column tiles wider than TB_CPU_COL_TILE (sums only): a
             * whole row per tile down the rows (R > 1024), and a row
             * wider than TB_CPU_SUM_COL_TILE in two tiles */
            CP(S(2, 1030, 2500), "axis", 0),
            CP(S(2, 3, 8200), "axis", 0),
        };
        TAKE(t);
        break;
    }
    case TB_OP_matmul: {
        const tcase t[] = {
            C2(S(2, 1, 1), S(2, 1, 1)),
            C2(S(2, 7, 13), S(2, 13, 5)),
            C2(S(2, 65, 33), S(2, 33, 17)),
            C2(S(3, 3, 7, 5), S(3, 3, 5, 4)),
            C2(S(2, 1, 513), S(2, 513, 1)),
            C2(S(2, 17, 1), S(2, 1, 15)),
            C2(S(2, 130, 300), S(2, 300, 70)),
            C2(S(2, 20, 300), S(2, 300, 600)),
            C2(S(3, 3, 71, 40), S(3, 3, 40, 90)),
            C2(S(4, 2, 2, 9, 6), S(4, 2, 2, 6, 11)),
        };
        TAKE(t);
        break;
    }
    case TB_OP_transpose: {
        const tcase t[] = {
            C1(S(2, 1, 1)),
            C1(S(2, 7, 13)),
            C1(S(2, 1000, 3)),
            C1(S(2, 300, 300)),
            C1(S(2, 17, 513)),
            C1(S(3, 3, 7, 5)),
            CPP(S(3, 3, 7, 5), "dim0", 0, "dim1", 2),
            CPP(S(3, 3, 7, 5), "dim0", 2, "dim1", 0),
            CPP(S(4, 4, 5, 6, 3), "dim0", 0, "dim1", 1),
            CPP(S(4, 4, 5, 6, 3), "dim0", 1, "dim1", -2),
            CPP(S(3, 40, 50, 60), "dim0", 0, "dim1", 1),
            CPP(S(3, 60, 40, 50), "dim0", 0, "dim1", 2),
            CPP(S(3, 3, 1, 5), "dim0", 0, "dim1", 1),
            CPP(S(4, 2, 3, 4, 5), "dim0", 1, "dim1", 3),
            CPP(S(5, 2, 3, 4, 5, 6), "dim0", 1, "dim1", 3),
            CPP(S(4, 3, 20, 30, 40), "dim0", -3, "dim1", -1),
            {.in = {S(2, 33, 65)}, .no_defaults = true},
        };
        TAKE(t);
        break;
    }
    case TB_OP_log_softmax: {
        const tcase t[] = {
            C1(S(1, 1)),
            C1(S(1, 7)),
            C1(S(1, 15)),
            C1(S(1, 17)),
            C1(S(1, 513)),
            C1(S(2, 1000, 3)),
            CP(S(2, 1000, 3), "axis", 0),
            C1(S(2, 300, 300)),
            CP(S(2, 300, 300), "axis", 0),
            CP(S(3, 3, 4, 5), "axis", 1),
            CP(S(3, 5, 7, 300), "axis", 1),
            CP(S(3, 50, 7, 300), "axis", -2),
            CP(S(2, 3, 2500), "axis", 0),
            {.in = {S(2, 17, 513)}, .no_defaults = true},
        };
        TAKE(t);
        break;
    }
    default: /* ops this file's kernels do not cover (math_c.c...) */
        break;
    }
    return n;
}

typedef struct op_dt {
    tb_op_id op;
    tb_dtype dt;
} op_dt;

static void test_ref(void **state)
{
    const op_dt *g = *state;
    const tb_op *op = tb_op_get(g->op);
    assert_non_null(op);
    tcase c[MAX_CASES];
    int nc = cases_for(g->op, c);
    assert_true(nc > 0);
    int tc[2] = {1, max_threads()};
    for (int isa = 0; isa < isa_levels(); isa++) {
        cur_isa = tb_cpu_isa_name(isa);
        for (int t = 0; t < (tc[1] > 1 ? 2 : 1); t++) {
            void *ctx = cpu_new(tc[t]);
            rng_state = SEED ^ ((uint64_t)g->op << 8) ^ (uint64_t)g->dt;
            for (int i = 0; i < nc; i++)
                run_case(ctx, tc[t], op, g->dt, &c[i], i);
            B->destroy(ctx);
        }
    }
    cur_isa = "auto";
}

/* ---- special values ------------------------------------------------------ */

/* Runs fn at every isa level (cur_isa). */
static void at_every_isa(void (*fn)(void))
{
    for (int isa = 0; isa < isa_levels(); isa++) {
        cur_isa = tb_cpu_isa_name(isa);
        fn();
    }
    cur_isa = "auto";
}

/* relu: NaN stays NaN, -0.0 becomes +0.0, infinities pass or clamp. */
static void relu_special(void)
{
    const tb_op *op = tb_op_get(TB_OP_relu);
    void *ctx = cpu_new(1);
    const double v[] = {NAN, -0.0, 0.0, -1.5, 2.5, INFINITY, -INFINITY,
                        1e-310, -1e-310};
    const int n = (int)(sizeof v / sizeof v[0]);
    for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
        tb_shape s = S(1, n);
        tb_tensor h, d, dout, hout;
        assert_int_equal(tb_tensor_create(&h, (tb_dtype)dt, &s), 0);
        for (int i = 0; i < n; i++)
            tb_tensor_set(&h, i, v[i]);
        dev_from_host(ctx, &d, &h);
        tb_tensor_init(&dout, (tb_dtype)dt, &s);
        assert_int_equal(B->alloc(ctx, &dout), 0);
        tb_kernel_fn fn = B->kernel(ctx, op, (tb_dtype)dt, NULL, NULL).fn;
        assert_non_null(fn);
        assert_int_equal(fn(ctx, &d, &dout, NULL), 0);
        assert_int_equal(tb_tensor_create(&hout, (tb_dtype)dt, &s), 0);
        assert_int_equal(B->download(ctx, &hout, &dout), 0);
        assert_true(isnan(tb_tensor_get(&hout, 0)));
        for (int i = 1; i < n; i++) {
            double got = tb_tensor_get(&hout, i);
            double in = tb_tensor_get(&h, i);
            double want = in > 0 ? in : 0.0;
            assert_true(got == want);
            assert_false(signbit(got));
        }
        B->free(ctx, &d);
        B->free(ctx, &dout);
        tb_tensor_destroy(&h);
        tb_tensor_destroy(&hout);
    }
    B->destroy(ctx);
}

static void test_relu_special(void **state)
{
    (void)state;
    at_every_isa(relu_special);
}

/* log_softmax: -inf entries give -inf, a row with +inf/NaN or all -inf
 * gives NaN everywhere, large inputs do not overflow. */
static void log_softmax_special(void)
{
    const tb_op *op = tb_op_get(TB_OP_log_softmax);
    void *ctx = cpu_new(1);
    enum { R = 5, ROWS = 4 };
    const double v[ROWS][R] = {
        {1000, 999, -INFINITY, 998, 1000},
        {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY},
        {1, NAN, 2, 3, 4},
        {1, 2, INFINITY, 3, 4},
    };
    tb_params p = {0};
    tb_params_defaults(op, &p);
    for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
        tb_shape s = S(2, ROWS, R);
        tb_tensor h, d, dout, hout, ref;
        assert_int_equal(tb_tensor_create(&h, (tb_dtype)dt, &s), 0);
        for (int i = 0; i < ROWS * R; i++)
            tb_tensor_set(&h, i, v[i / R][i % R]);
        dev_from_host(ctx, &d, &h);
        tb_tensor_init(&dout, (tb_dtype)dt, &s);
        assert_int_equal(B->alloc(ctx, &dout), 0);
        tb_kernel_fn fn = B->kernel(ctx, op, (tb_dtype)dt, &p, NULL).fn;
        assert_int_equal(fn(ctx, &d, &dout, &p), 0);
        assert_int_equal(tb_tensor_create(&hout, (tb_dtype)dt, &s), 0);
        assert_int_equal(tb_tensor_create(&ref, TB_F64, &s), 0);
        assert_int_equal(B->download(ctx, &hout, &dout), 0);
        assert_int_equal(op->ref(&h, &ref, &p), 0);
        for (int i = 0; i < ROWS * R; i++) {
            double got = tb_tensor_get(&hout, i);
            double want = tb_tensor_get(&ref, i);
            if (isnan(want) || isinf(want)) {
                assert_true(isnan(want) ? isnan(got) : got == want);
            } else {
                assert_true(fabs(got - want) <= 1e-5 * (1 + fabs(want)));
            }
        }
        assert_true(isinf(tb_tensor_get(&hout, 2)));
        assert_true(isnan(tb_tensor_get(&hout, R)));
        assert_true(isnan(tb_tensor_get(&hout, 2 * R)));
        assert_true(isnan(tb_tensor_get(&hout, 3 * R)));
        B->free(ctx, &d);
        B->free(ctx, &dout);
        tb_tensor_destroy(&h);
        tb_tensor_destroy(&hout);
        tb_tensor_destroy(&ref);
    }
    B->destroy(ctx);
}

static void test_log_softmax_special(void **state)
{
    (void)state;
    at_every_isa(log_softmax_special);
}

/* ---- backend plumbing ---------------------------------------------------- */

static void test_probe_axes(void **state)
{
    (void)state;
    char reason[64] = "x";
    assert_int_equal(B->probe(B, reason, sizeof reason), 0);
    assert_string_equal(B->name, "cpu");
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, 0), 0);
    assert_int_equal(B->axes(B, ax, 1), 1); /* isa only */
    assert_string_equal(ax[0].name, "isa");
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    /* isa: scalar, then the levels this machine has, then auto (def). */
    assert_string_equal(ax[0].name, "isa");
    assert_non_null(ax[0].doc);
    const int nl = ax[0].n_values - 1;
    assert_true(nl >= 1 && nl <= TB_ISA_COUNT);
    assert_int_equal(ax[0].def, nl);
    assert_string_equal(ax[0].values[nl], "auto");
    for (int i = 0; i < nl; i++)
        assert_string_equal(ax[0].values[i], tb_cpu_isa_name(i));
    assert_true(nl - 1 <= tb_cpu_isa_max());
    assert_string_equal(ax[1].name, "threads");
    assert_non_null(ax[1].doc);
    assert_int_equal(ax[1].def, 0);
    assert_true(ax[1].n_values >= 1 &&
                ax[1].n_values <= TB_MAX_AXIS_VALUES);
    for (int i = 0; i < ax[1].n_values; i++) {
        char want[16];
        snprintf(want, sizeof want, "%d", i + 1);
        assert_string_equal(ax[1].values[i], want);
    }
    /* Every offered pair of values creates an instance. */
    for (int k = 0; k < ax[0].n_values; k++)
        for (int i = 0; i < ax[1].n_values; i++) {
            const char *vals[2] = {ax[0].values[k], ax[1].values[i]};
            void *ctx = NULL;
            char err[128];
            assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
            assert_int_equal(B->sync(ctx), 0);
            B->destroy(ctx);
        }
    B->destroy(NULL);
}

static void test_create_bad_threads(void **state)
{
    (void)state;
    char too_many[16];
    snprintf(too_many, sizeof too_many, "%d", max_threads() + 1);
    const char *bad[] = {"0", "abc", too_many, "", "-1", "1x",
                         " 1", "+1", "99999999999999999999", "1.5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *vals[2] = {"auto", bad[i]};
        void *ctx = (void *)&ctx;
        char err[256] = "";
        int rc = B->create(B, vals, &ctx, err, sizeof err);
        if (rc != TB_EPARAM)
            print_error("threads=\"%s\": rc %d\n", bad[i], rc);
        assert_int_equal(rc, TB_EPARAM);
        assert_null(ctx);
        assert_true(strlen(err) > 0);
        assert_non_null(strstr(err, "threads"));
    }
    void *ctx = NULL;
    char err[64];
    assert_int_equal(B->create(B, NULL, &ctx, err, sizeof err), TB_EPARAM);
    assert_null(ctx);
}

/* Bad isa values: unknown names, and levels this machine lacks. */
static void test_create_bad_isa(void **state)
{
    (void)state;
    const char *bad[] = {"", "sse", "AVX2", "avx512 ", "native", "2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0] + 1; i++) {
        /* the last: the level above the best one here, if any */
        const char *v = i < sizeof bad / sizeof bad[0]
                            ? bad[i]
                            : tb_cpu_isa_name(isa_levels());
        if (strcmp(v, "?") == 0)
            continue; /* this machine has every level */
        const char *vals[2] = {v, "1"};
        void *ctx = (void *)&ctx;
        char err[256] = "";
        int rc = B->create(B, vals, &ctx, err, sizeof err);
        if (rc != TB_EPARAM)
            print_error("isa=\"%s\": rc %d\n", v, rc);
        assert_int_equal(rc, TB_EPARAM);
        assert_null(ctx);
        assert_non_null(strstr(err, "isa"));
    }
}

static void test_counters(void **state)
{
    (void)state;
    void *ctx = cpu_new(max_threads());
    tb_backend_counters c;
    B->counters(ctx, &c);
    assert_int_equal(c.kernel_launches, 0);
    assert_int_equal(c.memcpy_count, 0);
    assert_int_equal(c.device_allocs, 0);

    tb_alloc_stats a0, a1;
    tb_shape s = S(2, 300, 300); /* threaded path when threads > 1 */
    tb_tensor h, d, dout;
    assert_int_equal(tb_tensor_create(&h, TB_F32, &s), 0);
    tb_alloc_stats_read(&a0);
    tb_tensor_init(&d, TB_F32, &s);
    assert_int_equal(B->alloc(ctx, &d), 0);
    assert_true(d.owns);
    assert_ptr_equal(d.backend, B);
    assert_ptr_equal(d.backend_ctx, ctx);
    assert_int_equal((uintptr_t)d.data % TB_ALIGN, 0);
    tb_tensor_init(&dout, TB_F32, &s);
    assert_int_equal(B->alloc(ctx, &dout), 0);
    tb_alloc_stats_read(&a1);
    assert_int_equal(a1.allocs - a0.allocs, 2);
    B->counters(ctx, &c);
    assert_int_equal(c.device_allocs, 2);
    assert_int_equal(c.device_alloc_bytes, 2 * 300 * 300 * 4);

    assert_int_equal(B->upload(ctx, &d, &h), 0);
    B->counters(ctx, &c);
    assert_int_equal(c.memcpy_count, 1);
    assert_int_equal(c.memcpy_bytes, 300 * 300 * 4);

    const tb_op *ops[] = {tb_op_get(TB_OP_relu), tb_op_get(TB_OP_add),
                          tb_op_get(TB_OP_transpose)};
    tb_tensor in2[2] = {d, d};
    for (int k = 0; k < 3; k++) {
        tb_params p = {0};
        tb_params_defaults(ops[k], &p);
        tb_kernel_fn fn = B->kernel(ctx, ops[k], TB_F32, &p, NULL).fn;
        uint64_t before = launches(ctx);
        for (int it = 0; it < 10; it++)
            assert_int_equal(fn(ctx, in2, &dout, &p), 0);
        assert_int_equal(launches(ctx) - before, 10);
    }
    /* A call that fails its checks still counts as one invocation. */
    tb_tensor wrong = dout;
    wrong.dtype = TB_F64;
    uint64_t before = launches(ctx);
    tb_kernel_fn fn = B->kernel(ctx, ops[0], TB_F32, NULL, NULL).fn;
    assert_int_equal(fn(ctx, &d, &wrong, NULL), TB_EINVAL);
    assert_int_equal(launches(ctx) - before, 1);

    assert_int_equal(B->download(ctx, &h, &dout), 0);
    B->counters(ctx, &c);
    assert_int_equal(c.memcpy_count, 2);
    assert_int_equal(c.memcpy_bytes, 2 * 300 * 300 * 4);
    assert_int_equal(c.device_allocs, 2); /* frees do not count */

    B->free(ctx, &d);
    assert_null(d.data);
    assert_false(d.owns);
    B->free(ctx, &d); /* twice: harmless */
    B->free(ctx, &dout);
    B->free(ctx, NULL);
    tb_tensor_destroy(&h);
    B->counters(ctx, &c);
    assert_int_equal(c.device_allocs, 2);
    B->destroy(ctx);
}

static void test_memory_errors(void **state)
{
    (void)state;
    void *ctx = cpu_new(1);
    tb_shape s = S(2, 4, 5), s2 = S(2, 5, 4);
    tb_tensor h, h2, d, v;
    assert_int_equal(tb_tensor_create(&h, TB_F64, &s), 0);
    assert_int_equal(tb_tensor_create(&h2, TB_F64, &s2), 0);
    tb_tensor_init(&d, TB_F64, &s);
    assert_int_equal(B->alloc(NULL, &d), TB_EINVAL);
    assert_int_equal(B->alloc(ctx, NULL), TB_EINVAL);
    /* A strided header has no contiguous size. */
    assert_int_equal(tb_tensor_transpose_view(&h, 0, 1, &v), 0);
    v.data = NULL;
    assert_int_equal(B->alloc(ctx, &v), TB_EINVAL);
    assert_int_equal(B->alloc(ctx, &d), 0);
    /* Shape and dtype mismatches, wrong direction, strided host. */
    assert_int_equal(B->upload(ctx, &d, &h2), TB_ESHAPE);
    assert_int_equal(B->download(ctx, &h2, &d), TB_ESHAPE);
    assert_int_equal(B->upload(ctx, &h, &d), TB_EINVAL);
    assert_int_equal(tb_tensor_transpose_view(&h2, 0, 1, &v), 0);
    assert_int_equal(B->upload(ctx, &d, &v), TB_EINVAL);
    assert_int_equal(B->upload(ctx, &d, NULL), TB_EINVAL);
    tb_tensor hf;
    assert_int_equal(tb_tensor_create(&hf, TB_F32, &s), 0);
    assert_int_equal(B->upload(ctx, &d, &hf), TB_ESHAPE);
    tb_backend_counters c;
    B->counters(ctx, &c);
    assert_int_equal(c.memcpy_count, 0);
    /* A foreign (host) tensor is not freed by the backend. */
    B->free(ctx, &h);
    assert_non_null(h.data);
    /* Allocation failure is reported, not fatal. */
    tb_tensor d2;
    tb_tensor_init(&d2, TB_F64, &s);
    tb_alloc_fail_after(0);
    int rc = B->alloc(ctx, &d2);
    tb_alloc_fail_after(-1);
    assert_int_equal(rc, TB_ENOMEM);
    B->free(ctx, &d);
    tb_tensor_destroy(&h);
    tb_tensor_destroy(&h2);
    tb_tensor_destroy(&hf);
    B->destroy(ctx);
}

/* Implementation names: "<op>_<dtype>_<isa>" where isa is the instance's
 * level or a lower one (a level without its own version of an op runs
 * the next lower one); at isa=scalar always "_scalar".  Ops of math_c.c, reduce_c.c
 * name themselves. */
static const tb_op_id own_ops[] = {
    TB_OP_add,       TB_OP_sub,  TB_OP_mul,    TB_OP_div,
    TB_OP_relu,      TB_OP_sum,  TB_OP_mean,   TB_OP_matmul,
    TB_OP_transpose, TB_OP_log_softmax,
};

static void test_kernel_lookup(void **state)
{
    (void)state;
    for (int isa = 0; isa <= isa_levels(); isa++) {
        /* isa == isa_levels(): "auto", the best level */
        cur_isa = isa < isa_levels() ? tb_cpu_isa_name(isa) : "auto";
        const int lvl = isa < isa_levels() ? isa : isa_levels() - 1;
        void *ctx = cpu_new(1);
        int top = -1;
        for (size_t i = 0; i < sizeof own_ops / sizeof own_ops[0]; i++) {
            const tb_op *op = tb_op_get(own_ops[i]);
            for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
                const char *impl = NULL;
                tb_kernel_fn fn =
                    B->kernel(ctx, op, (tb_dtype)dt, NULL, &impl).fn;
                assert_non_null(fn);
                assert_non_null(impl);
                if (strncmp(impl, "gemm_", 5) == 0) {
                    /* native GEMM, avx2/avx512 levels only */
                    assert_true(own_ops[i] == TB_OP_matmul && lvl > 0);
                    continue;
                }
                int found = -1;
                for (int l = 0; l <= lvl; l++) {
                    char want[64];
                    snprintf(want, sizeof want, "%s_%s_%s", op->name,
                             tb_dtype_name((tb_dtype)dt),
                             tb_cpu_isa_name(l));
                    if (strcmp(impl, want) == 0)
                        found = l;
                }
                if (found < 0)
                    print_error("isa %s: %s\n", cur_isa, impl);
                assert_true(found >= 0);
                if (found > top)
                    top = found;
            }
        }
        /* The level asked for is really used (by add at least; at a
         * level that only some ops have rows of, avx512bf16, by one of
         * them), or no row of it is registered for these ops and dtypes
         * (avx512bf16's bf16 matmul and matmul_int8 are of neither). */
        size_t nrows;
        const tb_cpu_krow *rows = tb_cpu_krows(&nrows);
        bool has_lvl = false;
        for (size_t r = 0; r < nrows; r++)
            for (size_t i = 0; i < sizeof own_ops / sizeof own_ops[0]; i++)
                has_lvl = has_lvl ||
                          (rows[r].min_isa == lvl &&
                           rows[r].op == own_ops[i] &&
                           (int)rows[r].dtype < TB_DTYPE_FULL_COUNT);
        assert_int_equal(top, has_lvl ? lvl : lvl - 1);
        B->destroy(ctx);
    }
    cur_isa = "auto";
    void *ctx = cpu_new(1);
    for (int id = 0; id < TB_OP_COUNT; id++) {
        const tb_op *op = tb_op_get((tb_op_id)id);
        /* Unsupported dtype: NULL, and impl is cleared. */
        const char *impl = "stale";
        assert_null(B->kernel(ctx, op, TB_DTYPE_COUNT, NULL, &impl).fn);
        assert_null(impl);
        assert_null(B->kernel(ctx, op, (tb_dtype)-1, NULL, NULL).fn);
    }
    /* Unknown op (e.g. from a newer op table) and NULL op. */
    tb_op fake = *tb_op_get(TB_OP_add);
    fake.id = TB_OP_COUNT;
    assert_null(B->kernel(ctx, &fake, TB_F32, NULL, NULL).fn);
    assert_null(B->kernel(ctx, NULL, TB_F32, NULL, NULL).fn);
    B->destroy(ctx);
}

/* ---- the kernel registry (kreg.h) ---- */

/* Does impl name the level lv: "<...>_<level>" at the end, "_c" for the
 * portable files (scalar), or "_<level>_" inside a GEMM name? */
static bool name_has_level(const char *impl, int lv)
{
    const char *lvn = tb_cpu_isa_name(lv);
    char tail[32], mid[32];
    snprintf(tail, sizeof tail, "_%s", lvn);
    snprintf(mid, sizeof mid, "_%s_", lvn);
    size_t n = strlen(impl), t = strlen(tail);
    if (n > t && strcmp(impl + n - t, tail) == 0)
        return true;
    if (lv == TB_ISA_SCALAR && n > 2 && strcmp(impl + n - 2, "_c") == 0)
        return true;
    return strncmp(impl, "gemm_", 5) == 0 && strstr(impl, mid) != NULL;
}

/* A row added with a lower ISA than the machine has: asked for at the
 * top level, the lookup returns that row (fn and name together), and the
 * fn runs that level's code.  exp at the scalar level is the portable
 * loop, bit for bit; the SIMD levels compute it differently. */
static void test_registry_lower_row(void **state)
{
    (void)state;
    const int top = isa_levels() - 1;
    size_t n;
    const tb_cpu_krow *real = tb_cpu_krows(&n);
    const tb_cpu_krow *scal =
        tb_cpu_krow_find(real, n, TB_OP_exp, TB_F32, TB_ISA_SCALAR);
    const tb_cpu_krow *best =
        tb_cpu_krow_find(real, n, TB_OP_mul, TB_F32, top);
    assert_non_null(scal);
    assert_non_null(best);
    assert_string_equal(scal->name, "exp_f32_scalar");
    /* A caller's table: mul at the top level, exp only at scalar. */
    const tb_cpu_krow rows[] = {*best, *scal};
    const tb_cpu_krow *r =
        tb_cpu_krow_find(rows, 2, TB_OP_exp, TB_F32, top);
    assert_ptr_equal(r, &rows[1]);
    assert_ptr_equal(r->fn, scal->fn);
    assert_string_equal(r->name, scal->name);
    /* Nothing for a dtype, an op or a level the table lacks. */
    assert_null(tb_cpu_krow_find(rows, 2, TB_OP_exp, TB_F64, top));
    assert_null(tb_cpu_krow_find(rows, 2, TB_OP_add, TB_F32, top));
    if (best->min_isa > TB_ISA_SCALAR)
        assert_null(tb_cpu_krow_find(rows, 2, TB_OP_mul, TB_F32,
                                     best->min_isa - 1));
    /* The C row of a pair: the one of level scalar. */
    assert_ptr_equal(tb_cpu_krow_c(TB_OP_exp, TB_F32), scal);
    /* Run the scalar row on an instance of the top level. */
    cur_isa = "auto";
    void *ctx = cpu_new(1);
    tb_shape s = S(1, 1000);
    tb_tensor x, y;
    assert_int_equal(tb_tensor_create(&x, TB_F32, &s), 0);
    assert_int_equal(tb_tensor_create(&y, TB_F32, &s), 0);
    float *xv = x.data, *yv = y.data, want[1000];
    for (int i = 0; i < 1000; i++)
        xv[i] = -80.0f + 0.1601f * (float)i + 1e-3f * (float)(i % 7);
    tb_vmath vm;
    tb_vmath_fill(&vm, TB_ISA_SCALAR);
    vm.fn[TB_VM_EXP](xv, want, 1000);
    uint64_t l0 = launches(ctx);
    assert_int_equal(r->fn(ctx, &x, &y, NULL), 0);
    assert_int_equal(launches(ctx), l0 + 1);
    assert_memory_equal(yv, want, sizeof want);
    /* The registry's own choice at the top level is the top row. */
    const char *impl = NULL;
    tb_kernel_fn fn =
        B->kernel(ctx, tb_op_get(TB_OP_exp), TB_F32, NULL, &impl).fn;
    const tb_cpu_krow *e =
        tb_cpu_krow_find(real, n, TB_OP_exp, TB_F32, top);
    assert_ptr_equal(fn, e->fn);
    assert_string_equal(impl, e->name);
    /* exp has a row at every level up to avx512; avx512bf16 runs that */
    assert_int_equal(e->min_isa, top < TB_ISA_AVX512 ? top : TB_ISA_AVX512);
    tb_tensor_destroy(&x);
    tb_tensor_destroy(&y);
    B->destroy(ctx);
}

/* Every row names its own level; the rows of one (op, dtype) stand
 * together, best first, and end with its one C row (the tier ladder:
 * one portable C row per op and dtype, tb_cpu_krow_c); for every op,
 * dtype and level the backend hands out the fn and name of one row, of
 * a level at or below the instance's, and no better row exists. */
static void test_registry_rows(void **state)
{
    (void)state;
    size_t n;
    const tb_cpu_krow *rows = tb_cpu_krows(&n);
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        if (!name_has_level(rows[i].name, rows[i].min_isa))
            print_error("row %zu: %s at level %s\n", i, rows[i].name,
                        tb_cpu_isa_name(rows[i].min_isa));
        assert_true(name_has_level(rows[i].name, rows[i].min_isa));
        assert_non_null(rows[i].fn);
        const bool same = i > 0 && rows[i].op == rows[i - 1].op &&
                          rows[i].dtype == rows[i - 1].dtype;
        if (same)
            assert_true(rows[i].min_isa < rows[i - 1].min_isa);
        else if (i > 0) /* the previous pair ended with its C row */
            assert_int_equal(rows[i - 1].min_isa, TB_ISA_SCALAR);
        for (size_t j = 0; j + 1 < i && !same; j++)
            if (rows[j].op == rows[i].op && rows[j].dtype == rows[i].dtype)
                fail_msg("%s: its pair's rows are not together",
                         rows[i].name);
        if (rows[i].min_isa == TB_ISA_SCALAR)
            assert_ptr_equal(tb_cpu_krow_c(rows[i].op, rows[i].dtype),
                             &rows[i]);
#if TB_CPU_HAVE_GEMM
        if (strncmp(rows[i].name, "gemm_", 5) == 0)
            assert_string_equal(rows[i].name,
                                tb_gemm_impl_name(rows[i].min_isa,
                                                  rows[i].dtype == TB_F64));
#endif
    }
    for (int lv = 0; lv < isa_levels(); lv++) {
        cur_isa = tb_cpu_isa_name(lv);
        void *ctx = cpu_new(1);
        for (int id = 0; id < TB_OP_COUNT; id++) {
            const tb_op *op = tb_op_get((tb_op_id)id);
            for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
                const char *impl = NULL;
                tb_kernel_fn fn =
                    B->kernel(ctx, op, (tb_dtype)dt, NULL, &impl).fn;
                if (!fn) {
                    assert_null(impl);
                    continue;
                }
                const tb_cpu_krow *r = NULL;
                for (size_t i = 0; i < n && !r; i++)
                    if (rows[i].fn == fn)
                        r = &rows[i];
                assert_non_null(r);
                assert_ptr_equal(impl, r->name);
                assert_int_equal(r->op, op->base);
                assert_int_equal(r->dtype, dt);
                assert_true(r->min_isa <= lv);
                assert_true(name_has_level(impl, r->min_isa));
                for (size_t i = 0; i < n; i++)
                    if (rows[i].op == r->op && rows[i].dtype == r->dtype &&
                        rows[i].min_isa > r->min_isa && rows[i].min_isa <= lv)
                        fail_msg("%s at %s: %s skipped", op->name,
                                 cur_isa, rows[i].name);
            }
        }
        /* An entry point above the instance's level refuses to run. */
        assert_int_equal(rows[n - 1].min_isa, TB_ISA_SCALAR);
        for (size_t i = 0; i < n; i++)
            if (rows[i].min_isa > lv) {
                assert_int_equal(rows[i].fn(ctx, NULL, NULL, NULL),
                                 TB_EUNSUPPORTED);
                break;
            }
        B->destroy(ctx);
    }
    cur_isa = "auto";
}

/* Bad operands return an error code; nothing crashes or is written. */
static void test_kernel_errors(void **state)
{
    (void)state;
    void *ctx = cpu_new(max_threads());
    tb_shape s34 = S(2, 3, 4), s43 = S(2, 4, 3), s35 = S(2, 3, 5);
    tb_shape s3 = S(1, 3);
    tb_tensor a, b, o;
    tb_tensor_init(&a, TB_F32, &s34);
    tb_tensor_init(&b, TB_F32, &s35);
    tb_tensor_init(&o, TB_F32, &s34);
    assert_int_equal(B->alloc(ctx, &a), 0);
    assert_int_equal(B->alloc(ctx, &b), 0);
    assert_int_equal(B->alloc(ctx, &o), 0);
    memset(o.data, 0x5a, tb_tensor_nbytes(&o));
    tb_tensor in[2] = {a, b};
    tb_params p = {0};

    const tb_op *add = tb_op_get(TB_OP_add);
    tb_kernel_fn f = B->kernel(ctx, add, TB_F32, NULL, NULL).fn;
    assert_int_equal(f(ctx, in, &o, NULL), TB_ESHAPE);   /* 3x4 + 3x5 */
    assert_int_equal(f(NULL, in, &o, NULL), TB_EINVAL);
    assert_int_equal(f(ctx, NULL, &o, NULL), TB_EINVAL);
    assert_int_equal(f(ctx, in, NULL, NULL), TB_EINVAL);
    in[1] = a;
    in[1].dtype = TB_F64;
    assert_int_equal(f(ctx, in, &o, NULL), TB_EINVAL);   /* mixed dtypes */
    in[1] = a;
    in[1].data = NULL;
    assert_int_equal(f(ctx, in, &o, NULL), TB_EINVAL);
    in[1] = a;
    tb_tensor o3 = o;
    o3.ndim = 1;
    o3.shape[0] = 3;
    o3.strides[0] = 1;
    assert_int_equal(f(ctx, in, &o3, NULL), TB_ESHAPE);  /* out too small */
    tb_tensor ob = o;
    tb_tensor_init(&ob, TB_F32, &s43);
    ob.data = o.data;
    assert_int_equal(f(ctx, in, &ob, NULL), TB_ESHAPE);
    tb_tensor ov;
    assert_int_equal(tb_tensor_transpose_view(&o, 0, 1, &ov), 0);
    assert_int_equal(f(ctx, in, &ov, NULL), TB_EINVAL);  /* strided out */
    tb_tensor bad = a;
    bad.ndim = TB_MAX_DIMS + 1;
    in[0] = bad;
    assert_int_equal(f(ctx, in, &o, NULL), TB_EINVAL);
    in[0] = a;

    const tb_op *mm = tb_op_get(TB_OP_matmul);
    f = B->kernel(ctx, mm, TB_F32, NULL, NULL).fn;
    in[1] = b;
    assert_int_equal(f(ctx, in, &o, NULL), TB_ESHAPE);   /* 3x4 @ 3x5 */
    tb_tensor v3 = a;
    tb_tensor_init(&v3, TB_F32, &s3);
    v3.data = a.data;
    in[0] = v3;
    in[1] = v3;
    assert_int_equal(f(ctx, in, &o, NULL), TB_ESHAPE);   /* 1-D */

    const tb_op *sum = tb_op_get(TB_OP_sum);
    f = B->kernel(ctx, sum, TB_F32, NULL, NULL).fn;
    assert_int_equal(tb_params_set(sum, &p, "axis", 1, NULL, 0), 0);
    assert_int_equal(f(ctx, &a, &o, &p), TB_ESHAPE);     /* out 12 != 3 */
    p.v[0] = 5; /* bypass tb_params_set's bounds */
    assert_int_equal(f(ctx, &a, &v3, &p), TB_EPARAM);
    p.v[0] = 0.5;
    assert_int_equal(f(ctx, &a, &v3, &p), TB_EPARAM);
    p.v[0] = NAN;
    assert_int_equal(f(ctx, &a, &v3, &p), TB_EPARAM);
    p = (tb_params){0};
    assert_int_equal(f(ctx, &a, &o, &p), TB_ESHAPE);     /* global: 1 out */

    const tb_op *tr = tb_op_get(TB_OP_transpose);
    f = B->kernel(ctx, tr, TB_F32, NULL, NULL).fn;
    assert_int_equal(f(ctx, &a, &o, NULL), TB_ESHAPE);   /* 3x4 -> 3x4 */
    assert_int_equal(f(ctx, &v3, &v3, NULL), TB_EPARAM); /* dim -2 of 1-D */

    const tb_op *ls = tb_op_get(TB_OP_log_softmax);
    f = B->kernel(ctx, ls, TB_F32, NULL, NULL).fn;
    assert_int_equal(f(ctx, &a, &b, NULL), TB_ESHAPE);
    p = (tb_params){0};
    assert_int_equal(tb_params_set(ls, &p, "axis", 1, NULL, 0), 0);
    p.v[0] = 2;
    assert_int_equal(f(ctx, &a, &o, &p), TB_EPARAM);

    const tb_op *relu = tb_op_get(TB_OP_relu);
    f = B->kernel(ctx, relu, TB_F32, NULL, NULL).fn;
    assert_int_equal(f(ctx, &a, &b, NULL), TB_ESHAPE);

    /* Nothing was written to o by the failed calls. */
    const unsigned char *ob_ = o.data;
    for (size_t i = 0; i < tb_tensor_nbytes(&o); i++)
        assert_int_equal(ob_[i], 0x5a);
    B->free(ctx, &a);
    B->free(ctx, &b);
    B->free(ctx, &o);
    B->destroy(ctx);
}

/* ---- threading ----------------------------------------------------------- */

/* The threaded global sum combines per-thread partials in a fixed order:
 * repeated runs are bit-identical. */
static void test_sum_deterministic(void **state)
{
    (void)state;
    const tb_op *op = tb_op_get(TB_OP_sum);
    void *ctx = cpu_new(max_threads());
    for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
        tb_shape s = S(1, 1000003), so = S(0);
        tb_tensor h, d, o, ho;
        assert_int_equal(tb_tensor_create(&h, (tb_dtype)dt, &s), 0);
        rng_state = SEED;
        for (int64_t i = 0; i < 1000003; i++)
            tb_tensor_set(&h, i, rng_uniform(-1, 1) * 1e3);
        dev_from_host(ctx, &d, &h);
        tb_tensor_init(&o, (tb_dtype)dt, &so);
        assert_int_equal(B->alloc(ctx, &o), 0);
        assert_int_equal(tb_tensor_create(&ho, (tb_dtype)dt, &so), 0);
        tb_params p = {0};
        tb_params_defaults(op, &p);
        tb_kernel_fn fn = B->kernel(ctx, op, (tb_dtype)dt, &p, NULL).fn;
        unsigned char first[8], again[8];
        size_t es = tb_dtype_size((tb_dtype)dt);
        for (int run = 0; run < 20; run++) {
            assert_int_equal(fn(ctx, &d, &o, &p), 0);
            assert_int_equal(B->download(ctx, &ho, &o), 0);
            memcpy(run ? again : first, ho.data, es);
            if (run)
                assert_memory_equal(first, again, es);
        }
        B->free(ctx, &d);
        B->free(ctx, &o);
        tb_tensor_destroy(&h);
        tb_tensor_destroy(&ho);
    }
    B->destroy(ctx);
}

/* Threads of this process, or -1 without /proc. */
static int task_count(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    fclose(f);
    return n;
}

/* Whether the thread count reaches `want` within a second: a joined
 * thread can still be counted for a moment while the kernel reaps it. */
static bool task_count_becomes(int want)
{
    for (int i = 0; i < 1000; i++) {
        if (task_count() == want)
            return true;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return false;
}

/* Many back-to-back threaded calls of different kernels on one instance,
 * each checked against the first result: catches lost wake-ups, stale
 * jobs and races in the pool (build with -fsanitize=thread too). */
static void test_pool_stress(void **state)
{
    (void)state;
    int nt = max_threads();
    void *ctx = cpu_new(nt);
    tb_shape s = S(2, 256, 257);
    tb_tensor h, d, o1, o2, ho, hfirst;
    assert_int_equal(tb_tensor_create(&h, TB_F64, &s), 0);
    rng_state = SEED;
    for (int64_t i = 0; i < tb_tensor_numel(&h); i++)
        tb_tensor_set(&h, i, rng_uniform(-1, 1));
    dev_from_host(ctx, &d, &h);
    tb_tensor_init(&o1, TB_F64, &s);
    assert_int_equal(B->alloc(ctx, &o1), 0);
    tb_tensor_init(&o2, TB_F64, &s);
    assert_int_equal(B->alloc(ctx, &o2), 0);
    assert_int_equal(tb_tensor_create(&ho, TB_F64, &s), 0);
    assert_int_equal(tb_tensor_create(&hfirst, TB_F64, &s), 0);
    tb_tensor in[2] = {d, d};
    tb_kernel_fn add = B->kernel(ctx, tb_op_get(TB_OP_add), TB_F64, NULL,
                                 NULL).fn;
    tb_kernel_fn lsm = B->kernel(ctx, tb_op_get(TB_OP_log_softmax), TB_F64,
                                 NULL, NULL).fn;
    uint64_t l0 = launches(ctx);
    for (int it = 0; it < 300; it++) {
        assert_int_equal(add(ctx, in, &o1, NULL), 0);
        tb_tensor in2[2] = {o1, d};
        assert_int_equal(add(ctx, in2, &o2, NULL), 0);
        assert_int_equal(lsm(ctx, &o2, &o1, NULL), 0);
        assert_int_equal(B->download(ctx, it ? &ho : &hfirst, &o1), 0);
        if (it)
            assert_memory_equal(ho.data, hfirst.data, tb_tensor_nbytes(&ho));
    }
    assert_int_equal(launches(ctx) - l0, 900);
    B->free(ctx, &d);
    B->free(ctx, &o1);
    B->free(ctx, &o2);
    tb_tensor_destroy(&h);
    tb_tensor_destroy(&ho);
    tb_tensor_destroy(&hfirst);
    B->destroy(ctx);
    /* Instances come and go: threads-1 workers are started by create
     * and joined by destroy (checked through /proc where it exists). */
    int t0 = task_count();
    for (int k = 0; k < 20; k++) {
        void *c2 = cpu_new(nt);
        if (t0 > 0)
            assert_true(task_count_becomes(t0 + nt - 1));
        B->destroy(c2);
        if (t0 > 0)
            assert_true(task_count_becomes(t0));
    }
}

/* A forked child inherits the instance but not its workers: threaded
 * kernels must still complete there (on one thread) and destroy must not
 * hang; the parent's instance keeps working. */
static void test_fork_child(void **state)
{
    (void)state;
    void *ctx = cpu_new(max_threads());
    tb_shape s = S(2, 300, 300), so = S(0);
    tb_tensor h, d, o, os;
    assert_int_equal(tb_tensor_create(&h, TB_F64, &s), 0);
    for (int64_t i = 0; i < tb_tensor_numel(&h); i++)
        tb_tensor_set(&h, i, (double)(i % 7) - 3);
    dev_from_host(ctx, &d, &h);
    tb_tensor_init(&o, TB_F64, &s);
    assert_int_equal(B->alloc(ctx, &o), 0);
    tb_tensor_init(&os, TB_F64, &so);
    assert_int_equal(B->alloc(ctx, &os), 0);
    tb_tensor in[2] = {d, d};
    tb_kernel_fn add = B->kernel(ctx, tb_op_get(TB_OP_add), TB_F64, NULL,
                                 NULL).fn;
    tb_kernel_fn sum = B->kernel(ctx, tb_op_get(TB_OP_sum), TB_F64, NULL,
                                 NULL).fn;
    assert_int_equal(add(ctx, in, &o, NULL), 0); /* workers are running */
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(30); /* a hang becomes SIGALRM, not a stuck test */
        int bad = 0;
        for (int it = 0; it < 3; it++) {
            bad |= add(ctx, in, &o, NULL) != 0;
            bad |= sum(ctx, &o, &os, NULL) != 0;
        }
        /* sum(2x) over i % 7 - 3: 90000 = 7 * 12857 + 1, so one extra -3
         * per full cycles of zero sum: 2 * -3 = -6. */
        bad |= ((double *)os.data)[0] != -6.0;
        B->destroy(ctx);
        _exit(bad ? 1 : 0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* The parent's pool is unaffected. */
    assert_int_equal(sum(ctx, &o, &os, NULL), 0);
    assert_true(((double *)os.data)[0] == -6.0);
    B->free(ctx, &d);
    B->free(ctx, &o);
    B->free(ctx, &os);
    tb_tensor_destroy(&h);
    B->destroy(ctx);
}

/* ---- main ---------------------------------------------------------------- */

#define T(name) cmocka_unit_test_setup_teardown(test_##name, setup, teardown)
#define R(op, DT, dt)                                                     \
    {"ref_" #op "_" #dt, test_ref, setup, teardown,                       \
     &(op_dt){TB_OP_##op, TB_##DT}}
#define RR(op) R(op, F32, f32), R(op, F64, f64),

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        RR(add) RR(sub) RR(mul) RR(div) RR(relu) RR(sum) RR(mean)
        RR(matmul) RR(transpose) RR(log_softmax)
        T(relu_special),
        T(log_softmax_special),
        T(probe_axes),
        T(create_bad_threads),
        T(create_bad_isa),
        T(counters),
        T(memory_errors),
        T(kernel_lookup),
        T(registry_lower_row),
        T(registry_rows),
        T(kernel_errors),
        T(sum_deterministic),
        T(pool_stress),
        T(fork_child),
    };
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
            cmocka_set_test_filter(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--filter PATTERN]\n", argv[0]);
            return 2;
        }
    }
    tb_axis ax[TB_MAX_AXES];
    int nax = B->axes(B, ax, TB_MAX_AXES);
    printf("# test_cpu: isa levels %d (best %s), threads 1 and %d, input "
           "seed 0x%016llx\n",
           nax > 0 ? ax[0].n_values - 1 : 0,
           tb_cpu_isa_name(tb_cpu_isa_max()),
           nax > 1 ? ax[1].n_values : 0, (unsigned long long)SEED);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
