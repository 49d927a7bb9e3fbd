/* Tests of the normalization gradients (layer_norm_backward,
 * rms_norm_backward) and of batch_norm and group_norm: the reference
 * kernels (src/ops/ref_norm.c) and the cpu rows (src/backends/cpu/
 * norm_c.c, bnorm_c.c).  layer_norm's and rms_norm's vectors are
 * test_oracle's.
 *
 *  1. ref_vectors: every case of tests/data/norm_vectors.h (PyTorch
 *     autograd gradients in float64, scripts/gen_oracle_norm.py) through
 *     the reference: |got - want| <= 1e-10 |want| + 1e-12.
 *  2. finite_differences: every gradient of the reference equals the
 *     central difference (h = 1e-6) of L = sum(g * forward(x, w[, b]))
 *     through tbench's forward reference kernels, in f64, within 2e-7 +
 *     1e-6 |want|, on the f64 vector cases.
 *  3. cpu_vectors: the cpu row at every ISA level this machine and build
 *     have, threads 1 and 2, f32 and f64, against the vectors with the
 *     harness's own check (tb_check_outputs, the op's tolerance and
 *     reduce_len); exactly one launch per call.
 *  4. cpu_random: random shapes (rows 1..300, widths 1..257, a 3-D x)
 *     against the reference within the op's tolerance; dw and db are the
 *     same bits at threads 1 and 2 (the chunks of rows are fixed by the
 *     shape, not the threads).
 *  4b. bw_paths: the gradients' SIMD paths (offset x, each row's first
 *     8 x apart: the shifted sums' second pass), every level, f32 and
 *     f64, within the op's tolerance (test_bw_paths' comment).
 *  5. forward_paths: layer_norm and rms_norm (f32, every level, threads
 *     1 and 2) against the reference on inputs that take every path of
 *     the avx2 rows (norm_avx2.c): a common offset of 1000 (the shifted
 *     one-pass sums; SIMD levels only: the C row's plain f32 sum of x
 *     is 1e-4 off there), first elements far from the rest (whose
 *     shifted sums lose up to log2(D / 8) bits: in rows of 32768 only
 *     the two-pass fallback meets the tolerance), and 2100 x 2052 (streaming stores, rows on
 *     and off 32 bytes); f64 (f64_avx2.c, f64_avx512.c: norm64_simd_impl.h)
 *     on 5 x 45 and 2100 x 2052 (its streaming stores, rows on and off 64
 *     bytes).
 *  6. bad_operands: w of the wrong length, g of the wrong shape, an
 *     output of the wrong dtype: an error code and no output written.
 *  7. coverage: the four ops have vectors in both dtypes and cpu rows
 *     in both.
 *  8. nc_ref_vectors: batch_norm (training and not; y and the running
 *     statistics), group_norm, batch_norm_backward and
 *     group_norm_backward (dx, dw, db) cases of norm_vectors.h (PyTorch's
 *     F.batch_norm / F.group_norm and their autograd in float64) through
 *     the reference, 1e-10 |want| + 1e-12.
 *  8b. nc_finite_differences: batch_norm_backward's and
 *     group_norm_backward's references against central differences (h =
 *     1e-6) of sum(g * batch_norm(x, w, b)) in training and of sum(g *
 *     group_norm(x, w, b)) through the forward references, f64 cases and
 *     a random [2, 6, 2, 3] case of 3 groups, as test 2.
 *  9. nc_cpu_vectors: their cpu rows at every level, threads 1 and 2,
 *     f32 and f64, against the vectors with tb_check_outputs; batch_norm
 *     writes its running statistics into its input's buffer (the
 *     runner's aliasing) and launches once.
 * 10. nc_random: random x (2-D to 4-D, up to 300 channels, an offset of
 *     3) against the reference within the op's tolerance, the same bits
 *     at threads 1 and 2.
 * 12. nc_paths: the SIMD rows' paths (bnorm_simd_impl.h): x [3, 6, 20,
 *     31], [2, 4, 1, 1000] and [2, 2, 1, 20000], f32 and f64, every
 *     level, plain, offset (f32 by 1000, f64 by 3), and each row's first
 *     16 values 1000 off (the statistics' second pass), against the reference within the op's tolerance,
 *     the same bits at threads 1 and 2.
 * 11. nc_bad_operands: num_groups not dividing C (group_norm and its
 *     gradient), w / running of the wrong length, a 1-D x, training on
 *     one value per channel, g not of x's shape (the shape rule's
 *     message names the op); an output of the wrong dtype: an error code
 *     and no output written.
 *
 * Every test's leak_teardown checks that it freed all tracked memory. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"
#include "cpu_family.h"

#include "backends/backend.h"
#include "backends/cpu/isa.h"
#include "backends/cpu/kernels.h"
#include "base/error.h"
#include "harness/check.h"
#include "ops/alloc.h"
#include "ops/op.h"
#include "ops/tensor.h"
#include "tests/data/norm_vectors.h"


#define REF_RTOL 1e-10
#define REF_ATOL 1e-12
#define FD_H 1e-6
#define FD_RTOL 1e-6
#define FD_ATOL 2e-7

/* ---- helpers -------------------------------------------------------------- */

static uint64_t rng_state = UINT64_C(0x6e6f726d5eed0001);

static double rng_uniform(double lo, double hi)
{
    return lo + (hi - lo) * ((double)(splitmix64_next(&rng_state) >> 11) *
                             0x1.0p-53);
}


static tb_dtype dtype_of(const char *s)
{
    return strcmp(s, "f32") == 0 ? TB_F32 : TB_F64;
}



static tb_params case_params(const tb_op *op, double eps)
{
    tb_params p;
    memset(&p, 0, sizeof p);
    if (eps >= 0)
        assert_int_equal(tb_params_set(op, &p, "eps", eps, NULL, 0), 0);
    return p;
}

/* A host tensor of shape s and dtype dt holding x (numel of s values). */
static void tensor_from(tb_tensor *t, tb_dtype dt, const tb_shape *s,
                        const double *x)
{
    assert_int_equal(tb_tensor_create(t, dt, s), 0);
    for (int64_t i = 0; i < tb_shape_numel(s); i++)
        tb_tensor_set(t, i, x[i]);
}

/* The shapes of a vector case: g and x, w. */
static void case_shapes(const normv_case *c, tb_shape *xs, tb_shape *ws)
{
    xs->ndim = c->ndim;
    for (int d = 0; d < c->ndim; d++)
        xs->dim[d] = c->shape[d];
    ws->ndim = 1;
    ws->dim[0] = c->shape[c->ndim - 1];
}

/* The case's inputs g, x, w in dt and its outputs' shapes. */
static void case_inputs(const normv_case *c, const tb_op *op, tb_dtype dt,
                        const tb_params *p, tb_tensor *in, tb_shape *osh)
{
    tb_shape xs, ws;
    case_shapes(c, &xs, &ws);
    tensor_from(&in[0], dt, &xs, c->g);
    tensor_from(&in[1], dt, &xs, c->x);
    tensor_from(&in[2], dt, &ws, c->w);
    tb_shape ish[3] = {xs, xs, ws};
    assert_int_equal(tb_op_infer(op, ish, 3, p, osh, NULL, 0), 0);
}

static void destroy_all(tb_tensor *t, int n)
{
    for (int i = 0; i < n; i++)
        tb_tensor_destroy(&t[i]);
}

/* ---- 1. reference vs PyTorch ------------------------------------------------ */

static void test_ref_vectors(void **state)
{
    (void)state;
    int checked = 0;
    for (size_t k = 0; k < NORMV_N_CASES; k++) {
        const normv_case *c = &normv_cases[k];
        const tb_op *op = tb_op_find(c->op);
        assert_non_null(op);
        assert_int_equal(op->n_out, c->n_out);
        tb_params p = case_params(op, c->eps);
        tb_tensor in[3], out[NORMV_MAX_OUT];
        tb_shape osh[TB_MAX_OUTPUTS];
        case_inputs(c, op, dtype_of(c->dtype), &p, in, osh);
        for (int o = 0; o < c->n_out; o++)
            assert_int_equal(tb_tensor_create(&out[o], TB_F64, &osh[o]), 0);
        assert_int_equal(op->ref(in, out, &p), 0);
        for (int o = 0; o < c->n_out; o++)
            for (int64_t i = 0; i < tb_tensor_numel(&out[o]); i++) {
                double got = tb_tensor_get(&out[o], i), want = c->out[o][i];
                if (!(fabs(got - want) <= REF_RTOL * fabs(want) + REF_ATOL))
                    fail_msg("%s: output %d [%lld] = %.17g, torch %.17g",
                             c->name, o, (long long)i, got, want);
                checked++;
            }
        destroy_all(in, 3);
        destroy_all(out, c->n_out);
    }
    print_message("# %zu cases, %d values\n", (size_t)NORMV_N_CASES,
                  checked);
}

/* ---- 2. reference vs finite differences ------------------------------------ */

/* L = sum(g * fwd(fin)) through the forward reference, in f64. */
static double loss_of(const tb_op *fwd, tb_tensor *fin, const tb_params *fp,
                      const double *g)
{
    tb_tensor y;
    tb_shape ys = tb_tensor_shape(&fin[0]);
    assert_int_equal(tb_tensor_create(&y, TB_F64, &ys), 0);
    assert_int_equal(fwd->ref(fin, &y, fp), 0);
    double L = 0;
    for (int64_t i = 0; i < tb_tensor_numel(&y); i++)
        L += g[i] * tb_tensor_get(&y, i);
    tb_tensor_destroy(&y);
    return L;
}

static void test_finite_differences(void **state)
{
    (void)state;
    int checked = 0;
    for (size_t k = 0; k < NORMV_N_CASES; k++) {
        const normv_case *c = &normv_cases[k];
        if (strcmp(c->dtype, "f64"))
            continue;
        const tb_op *op = tb_op_find(c->op);
        const bool ln = op->id == TB_OP_layer_norm_backward;
        const tb_op *fwd = tb_op_get(ln ? TB_OP_layer_norm : TB_OP_rms_norm);
        tb_params p = case_params(op, c->eps), fp = case_params(fwd, c->eps);
        tb_tensor in[3], out[NORMV_MAX_OUT], fin[3];
        tb_shape osh[TB_MAX_OUTPUTS], xs, ws;
        case_inputs(c, op, TB_F64, &p, in, osh);
        for (int o = 0; o < op->n_out; o++)
            assert_int_equal(tb_tensor_create(&out[o], TB_F64, &osh[o]), 0);
        assert_int_equal(op->ref(in, out, &p), 0);
        /* forward inputs x, w and (layer_norm) b = 0 */
        case_shapes(c, &xs, &ws);
        tensor_from(&fin[0], TB_F64, &xs, c->x);
        tensor_from(&fin[1], TB_F64, &ws, c->w);
        assert_int_equal(tb_tensor_create(&fin[2], TB_F64, &ws), 0);
        memset(fin[2].data, 0, tb_tensor_nbytes(&fin[2]));
        for (int o = 0; o < op->n_out; o++) {
            double *v = fin[o].data; /* dx: x, dw: w, db: b */
            for (int64_t j = 0; j < tb_tensor_numel(&fin[o]); j++) {
                double v0 = v[j];
                v[j] = v0 + FD_H;
                double lp = loss_of(fwd, fin, &fp, c->g);
                v[j] = v0 - FD_H;
                double lm = loss_of(fwd, fin, &fp, c->g);
                v[j] = v0;
                double fd = (lp - lm) / (2 * FD_H);
                double want = tb_tensor_get(&out[o], j);
                if (!(fabs(fd - want) <= FD_ATOL + FD_RTOL * fabs(want)))
                    fail_msg("%s output %d [%lld]: reference %.17g, finite "
                             "difference %.17g",
                             c->name, o, (long long)j, want, fd);
                checked++;
            }
        }
        destroy_all(in, 3);
        destroy_all(out, op->n_out);
        destroy_all(fin, 3);
    }
    print_message("# %d gradients against finite differences\n", checked);
}

/* ---- 3. cpu rows vs PyTorch ------------------------------------------------- */

static void cpu_vector_case(void *ctx, const normv_case *c)
{
    const tb_op *op = tb_op_find(c->op);
    tb_dtype dt = dtype_of(c->dtype);
    tb_params p = case_params(op, c->eps);
    const char *impl = NULL;
    tb_kernel_fn fn = B->kernel(ctx, op, dt, &p, &impl).fn;
    assert_non_null(fn);
    tb_tensor in[3], out[NORMV_MAX_OUT], want[NORMV_MAX_OUT];
    tb_shape osh[TB_MAX_OUTPUTS];
    case_inputs(c, op, dt, &p, in, osh);
    for (int o = 0; o < c->n_out; o++) {
        tensor_from(&want[o], TB_F64, &osh[o], c->out[o]);
        assert_int_equal(tb_tensor_create(&out[o], dt, &osh[o]), 0);
        memset(out[o].data, 0xff, tb_tensor_nbytes(&out[o])); /* NaN */
    }
    uint64_t l0 = launches(ctx);
    assert_int_equal(fn(ctx, in, out, &p), 0);
    assert_int_equal(launches(ctx) - l0, 1);
    tb_shape ish[3] = {tb_tensor_shape(&in[0]), tb_tensor_shape(&in[1]),
                       tb_tensor_shape(&in[2])};
    double rlen = op->reduce_len(op, ish, osh, &p, dt);
    tb_check chk;
    tb_check_outputs(out, want, c->n_out, op->tol[dt],
                     tb_check_terms(op, rlen), &chk);
    if (!chk.passed)
        fail_msg("%s %s: %lld bad, first output %d [%lld] = %.9g, torch "
                 "%.17g", c->name, impl, (long long)chk.n_bad,
                 chk.first_bad_output, (long long)chk.first_bad,
                 chk.first_bad_got, chk.first_bad_ref);
    destroy_all(in, 3);
    destroy_all(out, c->n_out);
    destroy_all(want, c->n_out);
}

static void test_cpu_vectors(void **state)
{
    (void)state;
    int runs = 0;
    for (int l = 0; l < n_levels(); l++)
        for (int th = 1; th <= 2; th++) {
            void *ctx = cpu_create(l, th);
            for (size_t k = 0; k < NORMV_N_CASES; k++, runs++)
                cpu_vector_case(ctx, &normv_cases[k]);
            B->destroy(ctx);
        }
    print_message("# %d levels x 2 thread counts, %d kernel runs\n",
                  n_levels(), runs);
}

/* ---- 4. random shapes vs the reference; thread-count determinism ----------- */

/* op on x of shape xs (g, x, w random; x offset by off) at dtype dt:
 * the rows at threads 1 and 2 agree with the reference within the op's
 * tolerance, and their dw (db) are the same bits. */
/* x of values in [-1, 1) + off; apart: each row's first 8 x at 60 */
static void random_case_x(void *ctx1, void *ctx2, const tb_op *op,
                          tb_dtype dt, const tb_shape *xs, double off,
                          bool apart)
{
    tb_params p = case_params(op, -1);
    tb_shape ws = {1, {xs->dim[xs->ndim - 1]}};
    tb_shape ish[3] = {*xs, *xs, ws}, osh[TB_MAX_OUTPUTS];
    assert_int_equal(tb_op_infer(op, ish, 3, &p, osh, NULL, 0), 0);
    tb_tensor in[3], o1[3], o2[3], ref[3];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(tb_tensor_create(&in[i], dt, &ish[i]), 0);
        for (int64_t k = 0; k < tb_tensor_numel(&in[i]); k++)
            tb_tensor_set(&in[i], k,
                          i == 1 && apart && k % ws.dim[0] < 8
                              ? 60
                              : rng_uniform(-1, 1) + (i == 1 ? off : 0));
    }
    for (int o = 0; o < op->n_out; o++) {
        assert_int_equal(tb_tensor_create(&o1[o], dt, &osh[o]), 0);
        assert_int_equal(tb_tensor_create(&o2[o], dt, &osh[o]), 0);
        assert_int_equal(tb_tensor_create(&ref[o], TB_F64, &osh[o]), 0);
    }
    const char *impl = NULL;
    assert_int_equal(B->kernel(ctx1, op, dt, &p, &impl).fn(ctx1, in, o1, &p),
                     0);
    assert_int_equal(B->kernel(ctx2, op, dt, &p, &impl).fn(ctx2, in, o2, &p),
                     0);
    assert_int_equal(op->ref(in, ref, &p), 0);
    tb_check chk;
    tb_check_outputs(o1, ref, op->n_out, op->tol[dt],
                     tb_check_terms(op, op->reduce_len(op, ish, osh, &p, dt)),
                     &chk);
    if (!chk.passed)
        fail_msg("%s %s rows %lld width %lld: output %d [%lld] = %.17g, "
                 "reference %.17g", op->name, tb_dtype_name(dt),
                 (long long)(tb_shape_numel(xs) / ws.dim[0]),
                 (long long)ws.dim[0], chk.first_bad_output,
                 (long long)chk.first_bad, chk.first_bad_got,
                 chk.first_bad_ref);
    for (int o = 0; o < op->n_out; o++)
        if (memcmp(o1[o].data, o2[o].data, tb_tensor_nbytes(&o1[o])))
            fail_msg("%s %s: output %d differs between 1 and 2 threads",
                     op->name, tb_dtype_name(dt), o);
    destroy_all(in, 3);
    destroy_all(o1, op->n_out);
    destroy_all(o2, op->n_out);
    destroy_all(ref, op->n_out);
}

static void random_case(void *ctx1, void *ctx2, const tb_op *op, tb_dtype dt,
                        const tb_shape *xs, double off)
{
    random_case_x(ctx1, ctx2, op, dt, xs, off, false);
}

static void test_cpu_random(void **state)
{
    (void)state;
    static const int rd[][2] = {{1, 1},   {1, 7},   {2, 8},   {3, 9},
                                {64, 31}, {65, 33}, {300, 5}, {129, 257},
                                {1000, 64}};
    int runs = 0;
    for (int l = 0; l < n_levels(); l++) {
        void *c1 = cpu_create(l, 1), *c2 = cpu_create(l, 2);
        for (int id = TB_OP_layer_norm_backward; id <= TB_OP_rms_norm_backward;
             id++)
            for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
                const tb_op *op = tb_op_get((tb_op_id)id);
                for (size_t s = 0; s < sizeof rd / sizeof rd[0]; s++, runs++) {
                    tb_shape xs = {2, {rd[s][0], rd[s][1]}};
                    random_case(c1, c2, op, (tb_dtype)dt, &xs,
                                s % 3 == 2 ? 4.0 : 0.0);
                }
                tb_shape x3 = {3, {3, 5, 17}};
                random_case(c1, c2, op, (tb_dtype)dt, &x3, 0);
                runs++;
            }
        B->destroy(c1);
        B->destroy(c2);
    }
    print_message("# %d random cases at %d levels\n", runs, n_levels());
}

/* 4b. bw_paths: the gradients' SIMD paths (norm_avx512.c's and
 * norm64_simd_impl.h's one-pass sums shifted by the row's first 8
 * values): x offset by 1000 (f64 at every level, f32 at the SIMD
 * levels: the f32 C row forms x - mean in f32, with the mean rounded
 * to f32; the C rows' and the reference's statistics by the corrected
 * two-pass form, whose mean is as accurate as the shifted sums'; with
 * the plain mean of values
 * near 1000 the f64 C row's dw and the reference's differed from the
 * SIMD rows' by 2e-12 relative, past f64's tolerance, and the f64
 * forward row from the corrected reference by 4e-10), each row's first
 * 8 x far from the rest (the pass again with the shift c + m), rows of
 * 16 and 8 lanes with tails, at every level, threads 1 and 2, within
 * the op's tolerance. */
static void test_bw_paths(void **state)
{
    (void)state;
    static const int rd[][2] = {{40, 300}, {70, 37}, {9, 16}, {3, 5}};
    int runs = 0;
    for (int l = 0; l < n_levels(); l++) {
        void *c1 = cpu_create(l, 1), *c2 = cpu_create(l, 2);
        for (int id = TB_OP_layer_norm_backward; id <= TB_OP_rms_norm_backward;
             id++)
            for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
                const tb_op *op = tb_op_get((tb_op_id)id);
                for (size_t s = 0; s < sizeof rd / sizeof rd[0]; s++) {
                    tb_shape xs = {2, {rd[s][0], rd[s][1]}};
                    if ((l && dt == TB_F32) || dt == TB_F64) {
                        random_case_x(c1, c2, op, (tb_dtype)dt, &xs, 1000,
                                      false);
                        runs++;
                    }
                    random_case_x(c1, c2, op, (tb_dtype)dt, &xs, 0, true);
                    runs++;
                }
            }
        B->destroy(c1);
        B->destroy(c2);
    }
    print_message("# %d gradient path cases at %d levels\n", runs,
                  n_levels());
}

/* ---- 5. the forward rows' paths --------------------------------------------- */

/* layer_norm / rms_norm at every level against the reference within the
 * op's tolerance, on inputs that take each path of the avx2 rows: rows
 * with a large common offset (the shifted one-pass sums), rows whose
 * first element is far from the rest (the two-pass fallback), and a
 * working set over NORM_NT_BYTES (streaming stores; rows of 2052 floats
 * put every other row off a 32-byte boundary). */
static void fwd_case(void *ctx, const tb_op *op, int64_t rows, int64_t D,
                     int kind, tb_dtype dt)
{
    tb_params p = case_params(op, -1);
    tb_shape xs = {2, {rows, D}}, ws = {1, {D}};
    tb_tensor in[3], out, ref;
    assert_int_equal(tb_tensor_create(&in[0], dt, &xs), 0);
    for (int64_t k = 0; k < rows * D; k++) {
        double v = rng_uniform(-1, 1);
        if (kind == 1)
            v += 1000;
        else if (kind == 2 && k % D < 8)
            v = 60; /* the shift far from the mean */
        tb_tensor_set(&in[0], k, v);
    }
    for (int i = 1; i < op->n_in; i++) {
        assert_int_equal(tb_tensor_create(&in[i], dt, &ws), 0);
        for (int64_t k = 0; k < D; k++)
            tb_tensor_set(&in[i], k, rng_uniform(-1, 1));
    }
    assert_int_equal(tb_tensor_create(&out, dt, &xs), 0);
    assert_int_equal(tb_tensor_create(&ref, TB_F64, &xs), 0);
    const char *impl = NULL;
    assert_int_equal(B->kernel(ctx, op, dt, &p, &impl).fn(ctx, in, &out, &p),
                     0);
    assert_int_equal(op->ref(in, &ref, &p), 0);
    tb_check chk;
    tb_check_outputs(&out, &ref, 1, op->tol[dt],
                     tb_check_terms(op, (double)D), &chk);
    if (!chk.passed)
        fail_msg("%s (%s) [%lld, %lld] kind %d: [%lld] = %.9g, reference "
                 "%.17g", op->name, impl, (long long)rows, (long long)D,
                 kind, (long long)chk.first_bad, chk.first_bad_got,
                 chk.first_bad_ref);
    destroy_all(in, op->n_in);
    tb_tensor_destroy(&out);
    tb_tensor_destroy(&ref);
}

static void test_forward_paths(void **state)
{
    (void)state;
    for (int l = 0; l < n_levels(); l++)
        for (int th = 1; th <= 2; th++) {
            void *ctx = cpu_create(l, th);
            for (int id = TB_OP_layer_norm; id <= TB_OP_rms_norm; id++) {
                const tb_op *op = tb_op_get((tb_op_id)id);
                /* offsets: the SIMD rows' paths, and the C row's
                 * sums in double */
                for (int kind = 0; kind < 3; kind++) {
                    fwd_case(ctx, op, 37, 1024, kind, TB_F32);
                    fwd_case(ctx, op, 5, 45, kind, TB_F32);
                    fwd_case(ctx, op, 5, 45, kind, TB_F64);
                }
                if (l) /* a long row: the shift's error x D / 8 */
                    fwd_case(ctx, op, 2, 1 << 15, 2, TB_F32);
                fwd_case(ctx, op, 2100, 2052, 0, TB_F32);
                /* f64's rows (norm64_simd_impl.h): streaming stores,
                 * rows of 2052 doubles on and off 64 bytes */
                fwd_case(ctx, op, 2100, 2052, 0, TB_F64);
            }
            B->destroy(ctx);
        }
}

/* ---- 6. bad operands -------------------------------------------------------- */

static void test_bad_operands(void **state)
{
    (void)state;
    void *ctx = cpu_create(n_levels() - 1, 2);
    const tb_op *op = tb_op_get(TB_OP_layer_norm_backward);
    tb_params p = case_params(op, -1);
    const tb_shape good[3] = {{2, {4, 8}}, {2, {4, 8}}, {1, {8}}};
    const struct {
        tb_shape g, w;
        tb_dtype odt;
        const char *what;
    } bad[] = {
        {{2, {4, 8}}, {1, {7}}, TB_F32, "w of 7 for a width of 8"},
        {{2, {4, 7}}, {1, {8}}, TB_F32, "g [4, 7] for x [4, 8]"},
        {{2, {4, 8}}, {2, {1, 8}}, TB_F32, "w [1, 8]"},
        {{2, {4, 8}}, {1, {8}}, TB_F64, "f64 outputs of an f32 call"},
    };
    char err[256];
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        tb_shape ish[3] = {bad[b].g, good[1], bad[b].w}, osh[3];
        if (b < 3)
            assert_int_equal(tb_op_infer(op, ish, 3, &p, osh, err, sizeof err),
                             TB_ESHAPE);
        if (b < 3)
            assert_non_null(strstr(err, "layer_norm_backward"));
        tb_tensor in[3], out[3];
        for (int i = 0; i < 3; i++) {
            assert_int_equal(tb_tensor_create(&in[i], TB_F32, &ish[i]), 0);
            memset(in[i].data, 0, tb_tensor_nbytes(&in[i]));
            assert_int_equal(
                tb_tensor_create(&out[i], bad[b].odt, &good[i ? 2 : 1]), 0);
            memset(out[i].data, 0xa5, tb_tensor_nbytes(&out[i]));
        }
        const char *impl = NULL;
        tb_kernel_fn fn = B->kernel(ctx, op, TB_F32, &p, &impl).fn;
        if (fn(ctx, in, out, &p) == 0)
            fail_msg("layer_norm_backward accepted %s", bad[b].what);
        for (int o = 0; o < 3; o++) {
            const unsigned char *q = out[o].data;
            for (size_t k = 0; k < tb_tensor_nbytes(&out[o]); k++)
                if (q[k] != 0xa5)
                    fail_msg("%s: output %d written", bad[b].what, o);
        }
        destroy_all(in, 3);
        destroy_all(out, 3);
    }
    B->destroy(ctx);
}

/* ---- 7. coverage ------------------------------------------------------------ */

static void test_coverage(void **state)
{
    (void)state;
    void *ctx = cpu_create(0, 1);
    for (int id = TB_OP_layer_norm_backward; id <= TB_OP_rms_norm_backward;
         id++) {
        const tb_op *op = tb_op_get((tb_op_id)id);
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
            int seen = 0;
            for (size_t k = 0; k < NORMV_N_CASES; k++)
                seen += !strcmp(normv_cases[k].op, op->name) &&
                        dtype_of(normv_cases[k].dtype) == (tb_dtype)dt;
            if (seen < 3)
                fail_msg("%s %s: %d vector cases", op->name,
                         tb_dtype_name((tb_dtype)dt), seen);
            const char *impl = NULL;
            assert_non_null(B->kernel(ctx, op, (tb_dtype)dt, NULL, &impl).fn);
        }
    }
    static const tb_op_id nc_ops[] = {TB_OP_batch_norm, TB_OP_group_norm,
                                      TB_OP_batch_norm_backward,
                                      TB_OP_group_norm_backward};
    for (size_t q = 0; q < sizeof nc_ops / sizeof nc_ops[0]; q++) {
        const tb_op *op = tb_op_get(nc_ops[q]);
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
            int seen = 0;
            for (size_t k = 0; k < BNV_N_CASES; k++)
                seen += !strcmp(bnv_cases[k].op, op->name) &&
                        dtype_of(bnv_cases[k].dtype) == (tb_dtype)dt;
            if (seen < 3)
                fail_msg("%s %s: %d vector cases", op->name,
                         tb_dtype_name((tb_dtype)dt), seen);
            const char *impl = NULL;
            assert_non_null(B->kernel(ctx, op, (tb_dtype)dt, NULL, &impl).fn);
        }
    }
    B->destroy(ctx);
}

/* ---- 8..11. batch_norm and group_norm ---------------------------------------- */

/* A bnv case's parameters. */
static tb_params nc_params(const bnv_case *c, const tb_op *op)
{
    tb_params p;
    memset(&p, 0, sizeof p);
    if (c->training >= 0)
        assert_int_equal(
            tb_params_set(op, &p, "training", c->training, NULL, 0), 0);
    if (c->momentum >= 0)
        assert_int_equal(
            tb_params_set(op, &p, "momentum", c->momentum, NULL, 0), 0);
    if (c->eps >= 0)
        assert_int_equal(tb_params_set(op, &p, "eps", c->eps, NULL, 0), 0);
    if (c->num_groups > 0)
        assert_int_equal(
            tb_params_set(op, &p, "num_groups", c->num_groups, NULL, 0), 0);
    return p;
}

/* Is op one of the gradients (inputs g, x, w)? */
static bool nc_is_bw(const tb_op *op)
{
    return op->id == TB_OP_batch_norm_backward ||
           op->id == TB_OP_group_norm_backward;
}

/* The shapes of op's inputs for x of shape xs: x, w, b[, running] or
 * (the gradients) g, x, w. */
static void nc_shapes(const tb_op *op, const tb_shape *xs, tb_shape *ish)
{
    const int64_t C = xs->dim[1];
    const bool bw = nc_is_bw(op);
    ish[0] = *xs;
    ish[1] = bw ? *xs : (tb_shape){1, {C}};
    ish[2] = (tb_shape){1, {C}};
    ish[3] = (tb_shape){2, {2, C}};
}

/* A bnv case's inputs in dt, their shapes in ish and the outputs' in
 * osh; returns the input count. */
static int nc_inputs(const bnv_case *c, const tb_op *op, tb_dtype dt,
                     const tb_params *p, tb_tensor *in, tb_shape *ish,
                     tb_shape *osh)
{
    tb_shape xs = {c->ndim, {0}};
    for (int d = 0; d < c->ndim; d++)
        xs.dim[d] = c->shape[d];
    nc_shapes(op, &xs, ish);
    assert_int_equal(c->n_in, op->n_in);
    assert_int_equal(c->n_out, op->n_out);
    for (int i = 0; i < op->n_in; i++)
        tensor_from(&in[i], dt, &ish[i], c->in[i]);
    assert_int_equal(tb_op_infer(op, ish, op->n_in, p, osh, NULL, 0), 0);
    return op->n_in;
}

static void test_nc_ref_vectors(void **state)
{
    (void)state;
    int checked = 0;
    for (size_t k = 0; k < BNV_N_CASES; k++) {
        const bnv_case *c = &bnv_cases[k];
        const tb_op *op = tb_op_find(c->op);
        assert_non_null(op);
        tb_params p = nc_params(c, op);
        tb_tensor in[4], out[3];
        tb_shape ish[4], osh[TB_MAX_OUTPUTS];
        int n = nc_inputs(c, op, dtype_of(c->dtype), &p, in, ish, osh);
        const double *const *want = c->out;
        for (int o = 0; o < op->n_out; o++)
            assert_int_equal(tb_tensor_create(&out[o], TB_F64, &osh[o]), 0);
        assert_int_equal(op->ref(in, out, &p), 0);
        for (int o = 0; o < op->n_out; o++)
            for (int64_t i = 0; i < tb_tensor_numel(&out[o]); i++) {
                double got = tb_tensor_get(&out[o], i), w = want[o][i];
                if (!(fabs(got - w) <= REF_RTOL * fabs(w) + REF_ATOL))
                    fail_msg("%s: output %d [%lld] = %.17g, torch %.17g",
                             c->name, o, (long long)i, got, w);
                checked++;
            }
        destroy_all(in, n);
        destroy_all(out, op->n_out);
    }
    print_message("# %zu cases, %d values\n", (size_t)BNV_N_CASES, checked);
}

/* L = sum(g * y) of fwd (batch_norm: training, running [0; 1];
 * group_norm) on fin. */
static double nc_loss(const tb_op *fwd, tb_tensor *fin, const tb_params *fp,
                      const double *g)
{
    tb_tensor y[2];
    tb_shape fs[4], ys[TB_MAX_OUTPUTS];
    for (int i = 0; i < fwd->n_in; i++)
        fs[i] = tb_tensor_shape(&fin[i]);
    assert_int_equal(tb_op_infer(fwd, fs, fwd->n_in, fp, ys, NULL, 0), 0);
    for (int o = 0; o < fwd->n_out; o++)
        assert_int_equal(tb_tensor_create(&y[o], TB_F64, &ys[o]), 0);
    assert_int_equal(fwd->ref(fin, y, fp), 0);
    double L = 0;
    for (int64_t i = 0; i < tb_tensor_numel(&y[0]); i++)
        L += g[i] * tb_tensor_get(&y[0], i);
    destroy_all(y, fwd->n_out);
    return L;
}

/* batch_norm_backward's and group_norm_backward's references (dx, dw, db
 * of the f64 vector cases, and of a random group_norm case of 3 groups
 * and trailing dims) against central differences of nc_loss through the
 * forward references, in x, w and b. */
static void test_nc_finite_differences(void **state)
{
    (void)state;
    /* [2, 6, 2, 3] in 3 groups, inputs drawn below */
    static double rx[72], rg[72], rw[6];
    static const double *rin[3] = {rg, rx, rw};
    for (int i = 0; i < 72; i++) {
        rx[i] = rng_uniform(-1, 1);
        rg[i] = rng_uniform(-1, 1);
    }
    for (int i = 0; i < 6; i++)
        rw[i] = rng_uniform(-1, 1);
    const bnv_case extra = {"group_norm_backward_random", "group_norm_backward",
                            "f64", 4, {2, 6, 2, 3}, -1, -1, -1, 3, 3, 3,
                            {rin[0], rin[1], rin[2], NULL}, {NULL}};
    int checked = 0;
    for (size_t k = 0; k <= BNV_N_CASES; k++) {
        const bnv_case *c = k < BNV_N_CASES ? &bnv_cases[k] : &extra;
        const tb_op *op = tb_op_find(c->op);
        if (!nc_is_bw(op) || strcmp(c->dtype, "f64"))
            continue;
        const tb_op *fwd = tb_op_get(op->id == TB_OP_batch_norm_backward
                                         ? TB_OP_batch_norm
                                         : TB_OP_group_norm);
        tb_params p = nc_params(c, op), fp = case_params(fwd, c->eps);
        if (c->num_groups > 0)
            assert_int_equal(tb_params_set(fwd, &fp, "num_groups",
                                           c->num_groups, NULL, 0), 0);
        tb_tensor in[3], out[3], fin[4];
        tb_shape ish[4], osh[TB_MAX_OUTPUTS], fsh[4];
        nc_inputs(c, op, TB_F64, &p, in, ish, osh);
        for (int o = 0; o < 3; o++)
            assert_int_equal(tb_tensor_create(&out[o], TB_F64, &osh[o]), 0);
        assert_int_equal(op->ref(in, out, &p), 0);
        nc_shapes(fwd, &ish[1], fsh);
        for (int i = 0; i < fwd->n_in; i++) {
            assert_int_equal(tb_tensor_create(&fin[i], TB_F64, &fsh[i]), 0);
            for (int64_t e = 0; e < tb_tensor_numel(&fin[i]); e++)
                tb_tensor_set(&fin[i], e,
                              i == 0   ? c->in[1][e]
                              : i == 1 ? c->in[2][e]
                              : i == 3 ? (double)(e >= fsh[3].dim[1])
                                       : 0);
        }
        for (int o = 0; o < 3; o++) { /* dx: x; dw: w; db: b */
            double *v = fin[o].data;
            for (int64_t j = 0; j < tb_tensor_numel(&fin[o]); j++) {
                const double v0 = v[j];
                v[j] = v0 + FD_H;
                const double lp = nc_loss(fwd, fin, &fp, c->in[0]);
                v[j] = v0 - FD_H;
                const double lm = nc_loss(fwd, fin, &fp, c->in[0]);
                v[j] = v0;
                const double fd = (lp - lm) / (2 * FD_H);
                const double want = tb_tensor_get(&out[o], j);
                if (!(fabs(fd - want) <= FD_ATOL + FD_RTOL * fabs(want)))
                    fail_msg("%s output %d [%lld]: reference %.17g, finite "
                             "difference %.17g", c->name, o, (long long)j,
                             want, fd);
                checked++;
            }
        }
        destroy_all(in, 3);
        destroy_all(out, 3);
        destroy_all(fin, fwd->n_in);
    }
    assert_true(checked > 0);
    print_message("# %d gradients against finite differences\n", checked);
}

static void nc_cpu_case(void *ctx, const bnv_case *c)
{
    const tb_op *op = tb_op_find(c->op);
    tb_dtype dt = dtype_of(c->dtype);
    tb_params p = nc_params(c, op);
    const char *impl = NULL;
    tb_kernel_fn fn = B->kernel(ctx, op, dt, &p, &impl).fn;
    assert_non_null(fn);
    tb_tensor in[4], out[3], want[3];
    tb_shape ish[4], osh[TB_MAX_OUTPUTS];
    int n = nc_inputs(c, op, dt, &p, in, ish, osh);
    int own = 0; /* outputs with their own buffer (the first ones) */
    for (int o = 0; o < op->n_out; o++) {
        tensor_from(&want[o], TB_F64, &osh[o], c->out[o]);
        if (op->alias && op->alias[o] >= 0) { /* as the runner does */
            out[o] = in[op->alias[o]];
            continue;
        }
        assert_int_equal(tb_tensor_create(&out[o], dt, &osh[o]), 0);
        memset(out[o].data, 0xff, tb_tensor_nbytes(&out[o])); /* NaN */
        own++;
    }
    uint64_t l0 = launches(ctx);
    assert_int_equal(fn(ctx, in, out, &p), 0);
    assert_int_equal(launches(ctx) - l0, 1);
    double rlen = op->reduce_len(op, ish, osh, &p, dt);
    tb_check chk;
    tb_check_outputs(out, want, op->n_out, op->tol[dt],
                     tb_check_terms(op, rlen), &chk);
    if (!chk.passed)
        fail_msg("%s %s: %lld bad, first output %d [%lld] = %.9g, torch "
                 "%.17g", c->name, impl, (long long)chk.n_bad,
                 chk.first_bad_output, (long long)chk.first_bad,
                 chk.first_bad_got, chk.first_bad_ref);
    destroy_all(in, n);
    destroy_all(out, own);
    destroy_all(want, op->n_out);
}

static void test_nc_cpu_vectors(void **state)
{
    (void)state;
    int runs = 0;
    for (int l = 0; l < n_levels(); l++)
        for (int th = 1; th <= 2; th++) {
            void *ctx = cpu_create(l, th);
            for (size_t k = 0; k < BNV_N_CASES; k++, runs++)
                nc_cpu_case(ctx, &bnv_cases[k]);
            B->destroy(ctx);
        }
    print_message("# %d levels x 2 thread counts, %d kernel runs\n",
                  n_levels(), runs);
}

/* op on x of shape xs (offset by off; far: the first 16 values of each
 * row of trailing dims 1000 more, so a run's first values are far from
 * its mean) with params p at dt: threads 1 and 2 against the reference,
 * and the same bits. */
static void nc_case(void *ctx1, void *ctx2, const tb_op *op, tb_dtype dt,
                    const tb_shape *xs, const tb_params *p, double off,
                    bool far)
{
    int64_t S = 1;
    for (int d = 2; d < xs->ndim; d++)
        S *= xs->dim[d];
    tb_shape ish[4], osh[TB_MAX_OUTPUTS];
    nc_shapes(op, xs, ish);
    assert_int_equal(tb_op_infer(op, ish, op->n_in, p, osh, NULL, 0), 0);
    tb_tensor in[4], o1[3], o2[3], ref[3];
    const int xi = nc_is_bw(op);
    for (int i = 0; i < op->n_in; i++) {
        assert_int_equal(tb_tensor_create(&in[i], dt, &ish[i]), 0);
        for (int64_t k = 0; k < tb_tensor_numel(&in[i]); k++)
            tb_tensor_set(&in[i], k,
                          i == 3 && k >= xs->dim[1] ? rng_uniform(0.25, 1)
                          : rng_uniform(-1, 1) + (i == xi ? off : 0) +
                                (i == xi && far && k % S < 16 ? 1000 : 0));
    }
    for (int o = 0; o < op->n_out; o++) {
        assert_int_equal(tb_tensor_create(&o1[o], dt, &osh[o]), 0);
        assert_int_equal(tb_tensor_create(&o2[o], dt, &osh[o]), 0);
        assert_int_equal(tb_tensor_create(&ref[o], TB_F64, &osh[o]), 0);
    }
    const char *impl = NULL;
    assert_int_equal(B->kernel(ctx1, op, dt, p, &impl).fn(ctx1, in, o1, p),
                     0);
    assert_int_equal(B->kernel(ctx2, op, dt, p, &impl).fn(ctx2, in, o2, p),
                     0);
    assert_int_equal(op->ref(in, ref, p), 0);
    const double rlen = op->reduce_len(op, ish, osh, p, dt);
    tb_check chk;
    tb_check_outputs(o1, ref, op->n_out, op->tol[dt],
                     tb_check_terms(op, rlen), &chk);
    if (!chk.passed)
        fail_msg("%s %s %s: output %d [%lld] = %.17g, reference %.17g",
                 op->name, tb_dtype_name(dt), impl, chk.first_bad_output,
                 (long long)chk.first_bad, chk.first_bad_got,
                 chk.first_bad_ref);
    for (int o = 0; o < op->n_out; o++)
        if (memcmp(o1[o].data, o2[o].data, tb_tensor_nbytes(&o1[o])))
            fail_msg("%s %s: output %d differs between 1 and 2 threads",
                     op->name, tb_dtype_name(dt), o);
    destroy_all(in, op->n_in);
    destroy_all(o1, op->n_out);
    destroy_all(o2, op->n_out);
    destroy_all(ref, op->n_out);
}

static void test_nc_random(void **state)
{
    (void)state;
    int runs = 0;
    for (int l = 0; l < n_levels(); l++) {
        void *c1 = cpu_create(l, 1), *c2 = cpu_create(l, 2);
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++)
            for (int r = 0; r < 12; r++, runs++) {
                const int nd = 2 + r % 3;
                tb_shape xs = {nd, {1 + (int64_t)rng_uniform(0, 6),
                                    1 + (int64_t)rng_uniform(0, 300)}};
                for (int d = 2; d < nd; d++)
                    xs.dim[d] = 1 + (int64_t)rng_uniform(0, 9);
                const double off = r % 4 == 3 ? 3 : 0;
                const tb_op *bn = tb_op_get(TB_OP_batch_norm);
                tb_params p = case_params(bn, -1);
                assert_int_equal(tb_params_set(bn, &p, "training",
                                               xs.dim[0] > 1 && r % 2,
                                               NULL, 0), 0);
                nc_case(c1, c2, bn, (tb_dtype)dt, &xs, &p, off, false);
                const tb_op *gn = tb_op_get(TB_OP_group_norm);
                int64_t g = 1 + (int64_t)rng_uniform(0, 8);
                while (xs.dim[1] % g)
                    g--;
                p = case_params(gn, -1);
                assert_int_equal(
                    tb_params_set(gn, &p, "num_groups", (double)g, NULL, 0),
                    0);
                nc_case(c1, c2, gn, (tb_dtype)dt, &xs, &p, off, false);
                const tb_op *gb = tb_op_get(TB_OP_group_norm_backward);
                p = case_params(gb, r % 3 ? -1 : 0.5);
                assert_int_equal(
                    tb_params_set(gb, &p, "num_groups", (double)g, NULL, 0),
                    0);
                nc_case(c1, c2, gb, (tb_dtype)dt, &xs, &p, off, false);
                if (tb_shape_numel(&xs) / xs.dim[1] < 2)
                    continue; /* one value per channel: no training */
                const tb_op *bw = tb_op_get(TB_OP_batch_norm_backward);
                p = case_params(bw, r % 3 ? -1 : 0.5);
                nc_case(c1, c2, bw, (tb_dtype)dt, &xs, &p, off, false);
            }
        B->destroy(c1);
        B->destroy(c2);
    }
    print_message("# %d random shapes per op\n", runs);
}

/* ---- 12. the SIMD rows' paths (bnorm_simd_impl.h) ------------------------- */

/* The four ops at every level, threads 1 and 2, f32 and f64, on x [3, 6,
 * 20, 31] (rows of 620 values: the sums' blocks, flushes and tails at
 * every vector width), [2, 4, 1, 1000] and [2, 2, 1, 20000], group_norm
 * and its gradient with 1 and 2 groups: plain, with a common offset (the
 * sums' shift near the mean; f32 1000, f64 3) and with each row's first
 * 16 values 1000 off (the shift far from the mean: the one-pass sums
 * would cancel up to 11 bits on the long rows, past f32's tolerance;
 * the second pass around the mean). */
static void test_nc_paths(void **state)
{
    (void)state;
    static const tb_shape xs[] = {{4, {3, 6, 20, 31}}, {4, {2, 4, 1, 1000}},
                                  {4, {2, 2, 1, 20000}}};
    int runs = 0;
    for (int l = 0; l < n_levels(); l++) {
        void *c1 = cpu_create(l, 1), *c2 = cpu_create(l, 2);
        for (int dt = 0; dt < 2; dt++)
            for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++)
                for (int kind = 0; kind < 3; kind++, runs++) {
                    /* f64: the reference's mean (a plain sum in
                     * double) is 1e-12 off at an offset of 1000, which
                     * moves dw by 1e-11, past f64's tolerance */
                    const double off = kind == 1 ? dt ? 3 : 1000 : 0;
                    const bool far = kind == 2;
                    const tb_dtype d = dt ? TB_F64 : TB_F32;
                    for (int t = 0; t < 2; t++) {
                        const tb_op *bn = tb_op_get(TB_OP_batch_norm);
                        tb_params p = case_params(bn, -1);
                        assert_int_equal(tb_params_set(bn, &p, "training",
                                                       t, NULL, 0), 0);
                        nc_case(c1, c2, bn, d, &xs[i], &p, off, far);
                    }
                    const tb_op *bw = tb_op_get(TB_OP_batch_norm_backward);
                    tb_params p = case_params(bw, -1);
                    nc_case(c1, c2, bw, d, &xs[i], &p, off, far);
                    for (int g = 1; g <= 2; g++) {
                        const tb_op *gn = tb_op_get(TB_OP_group_norm);
                        const tb_op *gb =
                            tb_op_get(TB_OP_group_norm_backward);
                        p = case_params(gn, -1);
                        assert_int_equal(tb_params_set(gn, &p, "num_groups",
                                                       g, NULL, 0), 0);
                        nc_case(c1, c2, gn, d, &xs[i], &p, off, far);
                        p = case_params(gb, -1);
                        assert_int_equal(tb_params_set(gb, &p, "num_groups",
                                                       g, NULL, 0), 0);
                        nc_case(c1, c2, gb, d, &xs[i], &p, off, far);
                    }
                }
        B->destroy(c1);
        B->destroy(c2);
    }
    print_message("# %d path cases at %d levels\n", runs, n_levels());
}

/* A bad batch_norm or group_norm case: the shape rule refuses it with a
 * message naming the op; or (odt != TB_F32) the kernel refuses an
 * output of the wrong dtype and writes nothing. */
static void nc_bad(void *ctx, tb_op_id id, const tb_shape *ish, int groups,
                   bool training, tb_dtype odt, int want_rc)
{
    const tb_op *op = tb_op_get(id);
    tb_params p;
    memset(&p, 0, sizeof p);
    if (groups)
        assert_int_equal(
            tb_params_set(op, &p, "num_groups", groups, NULL, 0), 0);
    if (id == TB_OP_batch_norm)
        assert_int_equal(
            tb_params_set(op, &p, "training", training, NULL, 0), 0);
    tb_shape osh[TB_MAX_OUTPUTS];
    char err[256] = "";
    int rc = tb_op_infer(op, ish, op->n_in, &p, osh, err, sizeof err);
    if (want_rc) {
        assert_int_equal(rc, want_rc);
        assert_non_null(strstr(err, op->name));
        print_message("# %s\n", err);
        return;
    }
    assert_int_equal(rc, 0);
    tb_tensor in[4], out[3];
    for (int i = 0; i < op->n_in; i++) {
        assert_int_equal(tb_tensor_create(&in[i], TB_F32, &ish[i]), 0);
        memset(in[i].data, 0, tb_tensor_nbytes(&in[i]));
    }
    for (int o = 0; o < op->n_out; o++) {
        assert_int_equal(tb_tensor_create(&out[o], odt, &osh[o]), 0);
        memset(out[o].data, 0xa5, tb_tensor_nbytes(&out[o]));
    }
    const char *impl = NULL;
    tb_kernel_fn fn = B->kernel(ctx, op, TB_F32, &p, &impl).fn;
    if (fn(ctx, in, out, &p) == 0)
        fail_msg("%s accepted outputs of %s", op->name, tb_dtype_name(odt));
    for (int o = 0; o < op->n_out; o++) {
        const unsigned char *q = out[o].data;
        for (size_t k = 0; k < tb_tensor_nbytes(&out[o]); k++)
            if (q[k] != 0xa5)
                fail_msg("%s: output %d written", op->name, o);
    }
    destroy_all(in, op->n_in);
    destroy_all(out, op->n_out);
}

static void test_nc_bad_operands(void **state)
{
    (void)state;
    void *ctx = cpu_create(n_levels() - 1, 2);
    const tb_shape x = {3, {4, 6, 5}}, v6 = {1, {6}}, v5 = {1, {5}};
    const tb_shape r6 = {2, {2, 6}}, r5 = {2, {2, 5}}, r16 = {2, {1, 6}};
    const tb_shape x1 = {1, {6}}, xone = {2, {1, 6}};
    const tb_shape s_ok[4] = {x, v6, v6, r6}, s_w[4] = {x, v5, v6, r6};
    const tb_shape s_b[4] = {x, v6, v5, r6}, s_r[4] = {x, v6, v6, r5};
    const tb_shape s_r1[4] = {x, v6, v6, r16}, s_1d[4] = {x1, v6, v6, r6};
    const tb_shape s_one[4] = {xone, v6, v6, r6};
    nc_bad(ctx, TB_OP_group_norm, s_ok, 4, false, TB_F32, TB_EPARAM);
    nc_bad(ctx, TB_OP_group_norm, s_w, 3, false, TB_F32, TB_ESHAPE);
    nc_bad(ctx, TB_OP_group_norm, s_b, 3, false, TB_F32, TB_ESHAPE);
    nc_bad(ctx, TB_OP_group_norm, s_1d, 1, false, TB_F32, TB_ESHAPE);
    nc_bad(ctx, TB_OP_batch_norm, s_w, 0, true, TB_F32, TB_ESHAPE);
    nc_bad(ctx, TB_OP_batch_norm, s_r, 0, true, TB_F32, TB_ESHAPE);
    nc_bad(ctx, TB_OP_batch_norm, s_r1, 0, true, TB_F32, TB_ESHAPE);
    nc_bad(ctx, TB_OP_batch_norm, s_1d, 0, true, TB_F32, TB_ESHAPE);
    nc_bad(ctx, TB_OP_batch_norm, s_one, 0, true, TB_F32, TB_ESHAPE);
    nc_bad(ctx, TB_OP_batch_norm, s_one, 0, false, TB_F64, 0);
    nc_bad(ctx, TB_OP_batch_norm, s_ok, 0, true, TB_F64, 0);
    nc_bad(ctx, TB_OP_group_norm, s_ok, 3, false, TB_F64, 0);
    const tb_shape g_ok[3] = {x, x, v6}, g_g[3] = {{3, {4, 6, 4}}, x, v6};
    const tb_shape g_w[3] = {x, x, v5}, g_one[3] = {xone, xone, v6};
    nc_bad(ctx, TB_OP_batch_norm_backward, g_g, 0, false, TB_F32, TB_ESHAPE);
    nc_bad(ctx, TB_OP_batch_norm_backward, g_w, 0, false, TB_F32, TB_ESHAPE);
    nc_bad(ctx, TB_OP_batch_norm_backward, g_one, 0, false, TB_F32,
           TB_ESHAPE);
    nc_bad(ctx, TB_OP_batch_norm_backward, g_ok, 0, false, TB_F64, 0);
    nc_bad(ctx, TB_OP_group_norm_backward, g_ok, 4, false, TB_F32,
           TB_EPARAM);
    nc_bad(ctx, TB_OP_group_norm_backward, g_g, 3, false, TB_F32, TB_ESHAPE);
    nc_bad(ctx, TB_OP_group_norm_backward, g_w, 2, false, TB_F32, TB_ESHAPE);
    nc_bad(ctx, TB_OP_group_norm_backward, g_ok, 3, false, TB_F64, 0);
    B->destroy(ctx);
}

#define T(f) {#f, test_##f, leak_setup, leak_teardown, NULL}

int main(void)
{
    static const struct CMUnitTest tests[] = {
        T(ref_vectors),   T(finite_differences), T(cpu_vectors),
        T(cpu_random),    T(bw_paths),   T(forward_paths),      T(bad_operands),
        T(coverage),      T(nc_ref_vectors),     T(nc_finite_differences),
        T(nc_cpu_vectors), T(nc_random),         T(nc_bad_operands),
        T(nc_paths),
    };
    printf("# test_norm: %zu gradient vectors, %zu batch/group_norm\n",
           (size_t)NORMV_N_CASES, (size_t)BNV_N_CASES);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
