/* checkasm, part 3: see test_checkasm.c. */
#include <errno.h>
#include <float.h>
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
#include <unistd.h>

#include <cmocka.h>

#include "../testutil.h"

#include "backends/backend.h"
#include "backends/cpu/isa.h"
#include "backends/cpu/kernels.h"
#include "backends/cpu/kreg.h"
#include "backends/cpu/ops_simd.h"
#include "backends/cpu/rand_simd.h"
#include "backends/cpu/vmath.h"
#include "ops/alloc.h"
#include "base/error.h"
#include "ops/op.h"
#include "ops/rand.h"
#include "ops/tensor.h"

#include "checkasm.h"

/* ========================================================================= */
/* 3. Ops through the backend: every isa value, every thread count           */
/* ========================================================================= */

typedef struct ocase {
    int n_in;
    tb_shape in[3];
    const char *pn[3];
    double pv[3];
} ocase;


#define MAXC 32

static int op_cases(tb_op_id id, ocase *c)
{
    int n = 0;
#define ADD1(a) c[n++] = (ocase){1, {a}, {NULL}, {0}}
#define ADD2(a, b) c[n++] = (ocase){2, {a, b}, {NULL}, {0}}
#define ADD3(a, b, d) c[n++] = (ocase){3, {a, b, d}, {NULL}, {0}}
    /* conv2d(_nobias): x, w (+ b [O]) with stride, padding, dilation */
#define CONV(x, w, o, s, p, d)                                            \
    c[n++] = (ocase){id == TB_OP_conv2d ? 3 : 2,                          \
                     {x, w, S(1, o)},                                     \
                     {"stride", "padding", "dilation"},                   \
                     {s, p, d}}
#define ADDP(a, n0, v0) c[n++] = (ocase){1, {a}, {n0}, {v0}}
#define ADDPP(a, n0, v0, n1, v1) c[n++] = (ocase){1, {a}, {n0, n1}, {v0, v1}}
#define POOL(a, k, s, p)                                                  \
    c[n++] = (ocase){1, {a}, {"kernel", s ? "stride" : "padding",         \
                              s ? "padding" : NULL},                      \
                     {k, s ? s : p, p}}
    static const int lens[] = {1, 7, 15, 17, 513, 70001};
    switch (id) {
    case TB_OP_add:
    case TB_OP_sub:
    case TB_OP_mul:
    case TB_OP_div:
    case TB_OP_add_relu:
        for (int i = 0; i < 6; i++)
            ADD2(S(1, lens[i]), S(1, lens[i]));
        ADD2(S(3, 3, 5, 7), S(3, 3, 5, 7));
        ADD2(S(2, 17, 513), S(1, 513));
        ADD2(S(2, 17, 513), S(2, 17, 1));
        ADD2(S(1, 1), S(1, 513));
        ADD2(S(1, 513), S(1, 1));
        ADD2(S(3, 5, 1, 7), S(3, 1, 3, 7));
        ADD2(S(2, 300, 301), S(1, 301));
        /* Working set (3 x 4 x 5.6M bytes, 64.1 MiB at f32) above the
         * cpu backend's streaming-store threshold (CPU_EW_NT_BYTES),
         * misaligned like every case here: the _nt kernels end to
         * end. */
        if (id == TB_OP_add || id == TB_OP_add_relu)
            ADD2(S(1, 5600000), S(1, 5600000));
        break;
    case TB_OP_relu:
    case TB_OP_exp:
    case TB_OP_log:
    case TB_OP_tanh:
    case TB_OP_sigmoid:
    case TB_OP_gelu:
    case TB_OP_gelu_tanh:
    case TB_OP_silu:
        for (int i = 0; i < 6; i++)
            ADD1(S(1, lens[i]));
        ADD1(S(3, 3, 5, 7));
        /* 2 x 4 x 8.4M bytes, above the streaming-store threshold */
        if (id == TB_OP_relu || id == TB_OP_exp)
            ADD1(S(1, 8400000));
        break;
    case TB_OP_sum:
    case TB_OP_mean:
        for (int i = 0; i < 6; i++)
            ADD1(S(1, lens[i]));
        ADD1(S(1, 200003));
        ADDP(S(2, 17, 513), "axis", 0);
        ADDP(S(2, 17, 513), "axis", 1);
        ADDP(S(2, 513, 17), "axis", 0);
        ADDP(S(2, 513, 17), "axis", -1);
        ADDPP(S(3, 3, 5, 7), "axis", 1, "keepdim", 1);
        ADDP(S(3, 2, 1030, 3), "axis", 1);
        ADDP(S(2, 4, 2100), "axis", 1);
        ADDP(S(2, 300, 301), "axis", 0);
        break;
    case TB_OP_log_softmax:
    case TB_OP_softmax:
        for (int i = 0; i < 5; i++)
            ADD1(S(1, lens[i]));
        ADD1(S(1, 2500));
        ADD1(S(2, 4096, 10));
        ADD1(S(2, 33, 17));
        ADDP(S(2, 17, 513), "axis", 0);
        ADDP(S(3, 3, 70, 5), "axis", 1);
        ADDP(S(2, 200, 300), "axis", 0);
        break;
    case TB_OP_transpose:
        ADD1(S(2, 7, 13));
        ADD1(S(2, 17, 513));
        ADD1(S(2, 513, 17));
        ADD1(S(2, 64, 64));
        ADD1(S(2, 301, 300));
        ADDPP(S(3, 3, 5, 7), "dim0", 0, "dim1", 2);
        ADDPP(S(4, 4, 5, 6, 3), "dim0", 1, "dim1", 2);
        ADDPP(S(3, 3, 1, 7), "dim0", 0, "dim1", 1);
        break;
    case TB_OP_max_pool2d:
    case TB_OP_avg_pool2d:
        /* 2x2/2 (the fast path) on even, odd and lane-tail widths, then
         * windows that take the gather path: stride 1, 3 > kernel,
         * padding, 1x1 */
        POOL(S(4, 2, 3, 24, 24), 2, 0, 0);
        POOL(S(4, 1, 2, 7, 9), 2, 0, 0);
        POOL(S(4, 2, 1, 5, 66), 2, 0, 0);
        POOL(S(4, 1, 3, 70, 35), 2, 0, 0);
        POOL(S(4, 3, 2, 3, 2), 2, 0, 0);
        POOL(S(4, 1, 1, 1, 1), 1, 0, 0);
        POOL(S(4, 2, 3, 9, 37), 3, 1, 1);
        POOL(S(4, 1, 2, 17, 19), 3, 2, 1);
        POOL(S(4, 1, 2, 16, 40), 2, 0, 1);
        POOL(S(4, 2, 2, 13, 11), 5, 3, 2);
        POOL(S(4, 1, 1, 8, 45), 4, 1, 2);
        POOL(S(4, 1, 1, 2, 3), 4, 1, 2);
        POOL(S(4, 2, 2, 33, 33), 3, 0, 0);
        POOL(S(4, 4, 5, 12, 12), 2, 1, 0);
        break;
    case TB_OP_matmul:
        ADD2(S(2, 1, 1), S(2, 1, 1));
        ADD2(S(2, 7, 13), S(2, 13, 5));
        ADD2(S(2, 17, 15), S(2, 15, 33));
        ADD2(S(2, 1, 513), S(2, 513, 1));
        ADD2(S(2, 65, 33), S(2, 33, 17));
        ADD2(S(3, 3, 7, 5), S(3, 3, 5, 4));
        ADD2(S(2, 130, 300), S(2, 300, 70));
        ADD2(S(3, 4, 40, 50), S(3, 4, 50, 30));
        break;
    case TB_OP_linear:
        /* x [M, K] @ W [K, N] + b [N]: tails of every micro-tile; K
         * beyond one and two depth blocks (the GEMM's epilogue must
         * follow the last); 130x300x70 and 50x900x47 are above the
         * GEMM's threading threshold (2^21 multiply-adds), so threads=2
         * splits them. */
        ADD3(S(2, 1, 1), S(2, 1, 1), S(1, 1));
        ADD3(S(2, 7, 13), S(2, 13, 5), S(1, 5));
        ADD3(S(2, 17, 15), S(2, 15, 33), S(1, 33));
        ADD3(S(2, 1, 513), S(2, 513, 1), S(1, 1));
        ADD3(S(2, 65, 33), S(2, 33, 17), S(1, 17));
        ADD3(S(2, 13, 1000), S(2, 1000, 50), S(1, 50));
        ADD3(S(2, 130, 300), S(2, 300, 70), S(1, 70));
        ADD3(S(2, 50, 900), S(2, 900, 47), S(1, 47));
        break;
    case TB_OP_conv2d:
    case TB_OP_conv2d_nobias:
        /* im2col + GEMM: 1x1 and 1x1 images, stride beyond the kernel,
         * padding wider than half the kernel (rows and columns wholly
         * in the padding), dilation, non-square kernels; 32 images
         * (split over the threads), one big image (GEMM split over the
         * threads: 32 x 1600 x 144 multiply-adds) */
        CONV(S(4, 2, 1, 7, 9), S(4, 3, 1, 3, 3), 3, 1, 0, 1);
        CONV(S(4, 1, 1, 1, 1), S(4, 2, 1, 1, 1), 2, 1, 0, 1);
        CONV(S(4, 3, 4, 9, 10), S(4, 6, 4, 1, 1), 6, 1, 0, 1);
        CONV(S(4, 1, 3, 17, 19), S(4, 4, 3, 3, 3), 4, 2, 1, 1);
        CONV(S(4, 2, 2, 13, 11), S(4, 5, 2, 3, 2), 5, 3, 2, 2);
        CONV(S(4, 1, 2, 8, 8), S(4, 3, 2, 5, 5), 3, 1, 2, 1);
        CONV(S(4, 2, 1, 5, 5), S(4, 1, 1, 3, 3), 1, 1, 3, 2);
        CONV(S(4, 1, 2, 11, 11), S(4, 2, 2, 2, 2), 2, 3, 0, 1);
        CONV(S(4, 32, 1, 28, 28), S(4, 16, 1, 3, 3), 16, 1, 0, 1);
        CONV(S(4, 1, 16, 40, 40), S(4, 32, 16, 3, 3), 32, 1, 1, 1);
        break;
    case TB_OP_softplus:
    case TB_OP_sqrt:
    case TB_OP_rsqrt:
    case TB_OP_leaky_relu:
        /* the SIMD rows of ops_simd.h (f32) and the portable f64 */
        for (int i = 0; i < 6; i++)
            ADD1(S(1, lens[i]));
        ADD1(S(3, 3, 5, 7));
        if (id == TB_OP_softplus) {
            ADDPP(S(1, 513), "beta", 2, "threshold", 3);
            ADDPP(S(1, 1025), "beta", 0.5, "threshold", -0.25);
        }
        if (id == TB_OP_leaky_relu)
            ADDP(S(1, 513), "alpha", -2);
        break;
    case TB_OP_maximum:
    case TB_OP_minimum:
    case TB_OP_pow:
        for (int i = 0; i < 6; i++)
            ADD2(S(1, lens[i]), S(1, lens[i]));
        ADD2(S(3, 3, 5, 7), S(3, 3, 5, 7));
        ADD2(S(2, 17, 513), S(1, 513));
        ADD2(S(2, 17, 513), S(2, 17, 1));
        ADD2(S(1, 1), S(1, 513));
        ADD2(S(1, 513), S(1, 1));
        ADD2(S(3, 5, 1, 7), S(3, 1, 3, 7));
        /* maximum, minimum: their streaming-store loops (the same
         * threshold, ops_simd.c): 3 x 4 x 5.6M bytes,
         * misaligned */
        if (id == TB_OP_maximum || id == TB_OP_minimum)
            ADD2(S(1, 5600000), S(1, 5600000));
        break;
    case TB_OP_max:
    case TB_OP_min:
    case TB_OP_argmax:
    case TB_OP_var:
        /* var's default correction 1 needs 2 elements */
        for (int i = id == TB_OP_var; i < 6; i++)
            ADD1(S(1, lens[i]));
        ADD1(S(1, 200003));
        ADDP(S(2, 17, 513), "axis", 0);
        ADDP(S(2, 17, 513), "axis", 1);
        ADDP(S(2, 513, 17), "axis", 0);
        ADDPP(S(3, 3, 5, 7), "axis", 1, "keepdim", 1);
        ADDP(S(3, 2, 1030, 3), "axis", 1);
        ADDP(S(2, 4, 2100), "axis", 1);
        ADDP(S(2, 300, 301), "axis", 0);
        ADDP(S(2, 3, 70), "axis", -1);
        /* more lanes than one cols call takes (TB_CPU_SIMD_COLS32),
         * an odd row count; argmax's lane blocks (XS_ARG_BLOCK) */
        ADDP(S(2, 5, 4100), "axis", 0);
        ADDP(S(2, 2, 140000), "axis", 1);
        if (id == TB_OP_var) {
            ADDPP(S(2, 17, 513), "axis", 0, "correction", 0);
            ADDPP(S(1, 1031), "axis", 0, "correction", 0);
        }
        break;
    case TB_OP_relu_backward:
    case TB_OP_sigmoid_backward:
    case TB_OP_tanh_backward:
    case TB_OP_gelu_backward:
        /* g, x: bwd_simd_impl.h's rows (f32) and backward.c's portable
         * ones; sizes around both vector widths and the 2-vector step */
        for (int i = 0; i < 6; i++)
            ADD2(S(1, lens[i]), S(1, lens[i]));
        ADD2(S(1, 31), S(1, 31));
        ADD2(S(1, 33), S(1, 33));
        ADD2(S(3, 3, 5, 7), S(3, 3, 5, 7));
        break;
    case TB_OP_log_softmax_backward:
        /* g, y: contiguous lanes (tails of both vector widths and of the
         * 2-vector sum step) and lanes of non-last axes (inner 1 to 33:
         * the masked last group) */
#define ADD2P(a, v0) c[n++] = (ocase){2, {a, a}, {"axis"}, {v0}}
        for (int i = 0; i < 6; i++)
            ADD2(S(1, lens[i]), S(1, lens[i]));
        ADD2(S(2, 33, 31), S(2, 33, 31));
        ADD2(S(2, 4096, 10), S(2, 4096, 10));
        ADD2P(S(2, 17, 513), 0);
        ADD2P(S(3, 3, 70, 5), 1);
        ADD2P(S(3, 2, 9, 33), 1);
        ADD2P(S(2, 200, 300), 0);
        ADD2P(S(3, 3, 5, 7), 0);
#undef ADD2P
        break;
    case TB_OP_max_pool2d_backward:
    case TB_OP_avg_pool2d_backward: {
        /* g, x [N, C, H, W] with kernel, stride, padding: 2x2 windows
         * (max: bwd_simd_impl.h's rows) with odd H and W and window rows
         * of 1 to 33 windows (both vector widths' tails, one window past
         * and short of a whole vector), and the other geometries */
        static const int pc[][7] = {
            {1, 2, 4, 4, 2, 2, 0},   {2, 3, 24, 24, 2, 2, 0},
            {1, 2, 7, 9, 2, 2, 0},   {2, 1, 5, 66, 2, 2, 0},
            {1, 3, 6, 35, 2, 2, 0},  {1, 1, 3, 62, 2, 2, 0},
            {1, 1, 2, 18, 2, 2, 0},  {1, 2, 3, 2, 2, 2, 0},
            {1, 1, 2, 34, 2, 2, 0},  {2, 2, 10, 11, 3, 3, 0},
            {1, 2, 9, 37, 3, 2, 1},  {1, 2, 8, 8, 2, 1, 0},
            {1, 2, 7, 6, 2, 2, 1},   {1, 1, 1, 1, 1, 1, 0},
        };
        for (size_t q = 0; q < sizeof pc / sizeof pc[0]; q++) {
            const int *v = pc[q];
            const int oh = (v[2] + 2 * v[6] - v[4]) / v[5] + 1;
            const int ow = (v[3] + 2 * v[6] - v[4]) / v[5] + 1;
            c[n++] = (ocase){2,
                             {S(4, v[0], v[1], oh, ow),
                              S(4, v[0], v[1], v[2], v[3])},
                             {"kernel", "stride", "padding"},
                             {v[4], v[5], v[6]}};
        }
        break;
    }
    default:
        break;
    }
    assert_true(n <= MAXC);
    return n;
#undef ADD1
#undef ADD2
#undef ADD3
#undef CONV
#undef ADDP
#undef ADDPP
#undef POOL
}

/* Ops whose f32 results are one correctly rounded operation of the
 * inputs: they must equal the reference rounded to the dtype. */
static bool op_rounded(tb_op_id id)
{
    return id == TB_OP_add || id == TB_OP_sub || id == TB_OP_mul ||
           id == TB_OP_div || id == TB_OP_relu || id == TB_OP_transpose ||
           id == TB_OP_add_relu;
}

static bool op_is_vmath(tb_op_id id)
{
    return id == TB_OP_exp || id == TB_OP_log || id == TB_OP_tanh ||
           id == TB_OP_sigmoid || id == TB_OP_gelu ||
           id == TB_OP_gelu_tanh || id == TB_OP_silu;
}

/* The element-wise backward ops (g, x -> dx) with SIMD rows
 * (bwd_simd_impl.h). */
static bool op_is_act_backward(tb_op_id id)
{
    return id == TB_OP_relu_backward || id == TB_OP_sigmoid_backward ||
           id == TB_OP_tanh_backward || id == TB_OP_gelu_backward;
}

/* One case on instance ctx: misaligned, canary-guarded tensors; the
 * result against op->ref. */
static void run_op_case(void *ctx, const char *isa, int threads,
                        const tb_op *op, tb_dtype dt, const ocase *oc,
                        int ci)
{
    char err[256] = "";
    tb_params p = {0};
    for (int i = 0; i < 3; i++)
        if (oc->pn[i])
            assert_int_equal(
                tb_params_set(op, &p, oc->pn[i], oc->pv[i], err, sizeof err),
                0);
    tb_params_defaults(op, &p);
    tb_shape os;
    int rc = tb_op_infer(op, oc->in, op->n_in, &p, &os, err, sizeof err);
    if (rc)
        print_error("%s case %d: %s\n", op->name, ci, err);
    assert_int_equal(rc, 0);
    const size_t off = misalign(dt);
    gbuf gi[3], go;
    tb_tensor in[3], out, ref;
    for (int i = 0; i < op->n_in; i++) {
        tb_tensor_init(&in[i], dt, &oc->in[i]);
        in[i].data = gb_new(&gi[i], tb_tensor_nbytes(&in[i]), off);
        double lo = op->domain ? op->domain[i].lo : -1;
        double hi = op->domain ? op->domain[i].hi : 1;
        if (op->id == TB_OP_softplus) {
            lo = -60; /* both branches, and exp's tails */
            hi = 30;
        }
        if (op_is_vmath(op->id) && op->id != TB_OP_log) {
            lo = -12; /* beyond the domain: tails of exp, sigmoid, gelu */
            hi = 12;
        }
        if (op_is_act_backward(op->id) && i == 1) {
            lo = -25; /* x: the exp tails, gelu's clamp at 15, its */
            hi = 25;  /* G's pieces at |x| = 3 and 7 */
        }
        for (int64_t k = 0; k < tb_tensor_numel(&in[i]); k++)
            tb_tensor_set(&in[i], k, rng_uniform(lo, hi));
    }
    tb_tensor_init(&out, dt, &os);
    out.data = gb_new(&go, tb_tensor_nbytes(&out), off);
    assert_int_equal(tb_tensor_create(&ref, TB_F64, &os), 0);

    const char *impl = NULL;
    tb_kernel_fn fn = B->kernel(ctx, op, dt, &p, &impl);
    assert_non_null(fn);
    assert_non_null(impl);
    assert_int_equal(fn(ctx, in, &out, &p), 0);
    assert_int_equal(op->ref(in, &ref, &p), 0);

    tb_shape outs[1] = {os};
    const double rlen =
        op->reduce_len ? op->reduce_len(op, oc->in, outs, &p, dt) : 1.0;
    const tb_tol tol = op->tol[dt];
    const bool rounded = op_rounded(op->id);
    int64_t bad = 0;
    for (int64_t k = 0; k < tb_tensor_numel(&ref); k++) {
        double got = tb_tensor_get(&out, k), want = tb_tensor_get(&ref, k);
        double want_dt = dt == TB_F32 ? (double)(float)want : want;
        bool ok = rounded ? got == want_dt
                          : fabs(got - want) <= tol.atol * sqrt(rlen) +
                                                    tol.rtol * fabs(want);
        if (isnan(want))
            ok = isnan(got);
        if (!ok && bad++ < 3)
            print_error("%s_%s isa=%s threads=%d case %d impl %s: [%lld] "
                        "got %.9g want %.9g\n",
                        op->name, tb_dtype_name(dt), isa, threads, ci, impl,
                        (long long)k, got, want);
    }
    bool intact = gb_intact(&go);
    for (int i = 0; i < op->n_in; i++)
        intact = intact && gb_intact(&gi[i]);
    if (!intact)
        print_error("%s_%s isa=%s threads=%d case %d impl %s: canary "
                    "overwritten\n",
                    op->name, tb_dtype_name(dt), isa, threads, ci, impl);
    for (int i = 0; i < op->n_in; i++)
        gb_free(&gi[i]);
    gb_free(&go);
    tb_tensor_destroy(&ref);
    assert_true(intact);
    assert_int_equal(bad, 0);
}

void test_op(void **state)
{
    const tb_op_id id = (tb_op_id)(intptr_t)*state;
    const tb_op *op = tb_op_get(id);
    assert_non_null(op);
    ocase c[MAXC];
    const int nc = op_cases(id, c);
    assert_true(nc > 0);
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(ax, TB_MAX_AXES), 2);
    for (int dt = 0; dt < TB_DTYPE_COUNT; dt++) {
        if (op_is_vmath(id) && dt != TB_F32 && id != TB_OP_exp &&
            id != TB_OP_log)
            continue; /* f64 runs the portable math_c.c rows (exp
                         and log: f64_simd_impl.h's rows) */
        for (int iv = 0; iv < ax[0].n_values; iv++)
            for (int tv = 0; tv < ax[1].n_values; tv++) {
                const char *vals[2] = {ax[0].values[iv], ax[1].values[tv]};
                void *ctx = NULL;
                char err[256];
                assert_int_equal(B->create(vals, &ctx, err, sizeof err), 0);
                rng_seed((uint64_t)id * 31 + (uint64_t)dt);
                for (int i = 0; i < nc; i++)
                    run_op_case(ctx, vals[0], tv + 1, op, (tb_dtype)dt, &c[i],
                                i);
                B->destroy(ctx);
            }
    }
}

