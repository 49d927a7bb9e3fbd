/* Tests of the embedding family (issue 30 item 3): cross_entropy,
 * cross_entropy_backward, embedding and embedding_backward, their
 * references (src/ops/ref_backward.c) and cpu rows
 * (src/backends/cpu/xent*.c, embed_c.c).
 *
 *  1. ref_vectors: every case of tests/data/embed_vectors.h (NumPy
 *     float64, cross-checked with PyTorch 1.13's F.cross_entropy and
 *     autograd by scripts/gen_oracle_embed.py): the reference must match
 *     every output to |got - want| <= 1e-12 |want| + 1e-300 (the same
 *     double operations; x - lse at |x| ~ 1000 rounds to ~1e-13).
 *  2. cpu_vectors: the cpu rows at every ISA level this machine and build
 *     have, threads 1 and 2, against the same vectors with the harness's
 *     own check (tb_check_outputs, the op's tolerance and reduce length);
 *     impl names "<op>_<dtype>_<level>"; one kernel launch per call.
 *  3. cpu_random: shapes from one class to rows past the statistics'
 *     blocks and batches that split over two threads, logits in [-25, 25]
 *     or scaled by 100, random targets with repeats, operands 4/8 bytes
 *     off the 64-byte boundary in canary-guarded buffers, at every level
 *     x threads 1, 2, against the reference; the outputs at threads 2 are
 *     the bits of threads 1 (rows are independent and the losses are
 *     summed in row order).
 *  4. bad_operands: a target (an embedding index) out of [0, C) ([0, V)),
 *     negative, fractional or NaN
 *     is TB_EINVAL with no write at all (the targets are checked first);
 *     a target of another length is TB_ESHAPE, and the shape rule's
 *     message names the logits; the reference refuses bad targets too.
 *
 *  5. dropout_stream: over 1e6 elements, every level and thread count
 *     gives the bits of the scalar level at one thread, p = 0 is x
 *     itself, and the kept fraction is within 6 binomial standard
 *     deviations of 1 - p.  (Its vectors in 1 and 2 hold the stream to
 *     its definition, written again in Python: PyTorch's mask comes from
 *     another generator.)
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
#include "tests/data/embed_vectors.h"


#define REF_RTOL 1e-12
#define REF_ATOL 1e-300
#define SEED UINT64_C(0x0e3bedc0ffee5eed)

/* ---- helpers -------------------------------------------------------------- */

static uint64_t rng_state;

static double rng_uniform(double lo, double hi)
{
    return lo + (hi - lo) *
                    ((double)(splitmix64_next(&rng_state) >> 11) * 0x1.0p-53);
}


static tb_dtype dtype_of(const char *s)
{
    return strcmp(s, "f32") == 0 ? TB_F32 : TB_F64;
}



/* The inputs of a vector case (host tensors of dt). */
static void case_inputs(const embv_case *c, tb_dtype dt, tb_tensor *in)
{
    for (int i = 0; i < c->n_in; i++) {
        tb_shape s = shape_of(c->shape[i].ndim, c->shape[i].dim);
        assert_int_equal(tb_tensor_create(&in[i], dt, &s), 0);
        for (int64_t k = 0; k < tb_shape_numel(&s); k++)
            tb_tensor_set(&in[i], k, c->in[i][k]);
    }
}

/* The parameters of a vector case, with the defaults. */
static tb_params case_params(const tb_op *op, const embv_case *c)
{
    tb_params p = {0};
    for (int i = 0; i < c->n_params; i++) {
        char err[128];
        assert_int_equal(tb_params_set(op, &p, c->params[i].name,
                                       c->params[i].value, err, sizeof err),
                         0);
    }
    tb_params_defaults(op, &p);
    return p;
}

/* The output shape of op on the inputs' shapes. */
static tb_shape out_shape(const tb_op *op, const tb_tensor *in,
                          const tb_params *p)
{
    tb_shape is[TB_MAX_INPUTS], os[TB_MAX_OUTPUTS];
    for (int i = 0; i < op->n_in; i++)
        is[i] = tb_tensor_shape(&in[i]);
    assert_int_equal(tb_op_infer(op, is, op->n_in, p, os, NULL, 0), 0);
    return os[0];
}

static double terms_of(const tb_op *op, const tb_tensor *in,
                       const tb_shape *os, const tb_params *p, tb_dtype dt)
{
    tb_shape is[TB_MAX_INPUTS];
    for (int i = 0; i < op->n_in; i++)
        is[i] = tb_tensor_shape(&in[i]);
    return tb_check_terms(op, op->reduce_len
                                  ? op->reduce_len(op, is, os, p, dt)
                                  : 1);
}

/* ========================================================================= */
/* 1. reference vs NumPy / PyTorch                                           */
/* ========================================================================= */

static void test_ref_vectors(void **state)
{
    (void)state;
    int64_t checked = 0;
    for (size_t k = 0; k < EMBV_N_CASES; k++) {
        const embv_case *c = &embv_cases[k];
        const tb_op *op = tb_op_find(c->op);
        assert_non_null(op);
        assert_int_equal(c->n_in, op->n_in);
        tb_tensor in[EMBV_MAX_IN], out;
        case_inputs(c, dtype_of(c->dtype), in);
        tb_params p = case_params(op, c);
        tb_shape os = out_shape(op, in, &p);
        assert_int_equal(tb_shape_numel(&os), c->n_out);
        assert_int_equal(tb_tensor_create(&out, TB_F64, &os), 0);
        assert_int_equal(op->ref(in, &out, &p), 0);
        const double *got = out.data;
        for (int64_t i = 0; i < c->n_out; i++) {
            double want = c->out[i];
            if (!(fabs(got[i] - want) <= REF_RTOL * fabs(want) + REF_ATOL))
                fail_msg("%s: [%lld] = %.17g, NumPy %.17g", c->name,
                         (long long)i, got[i], want);
            checked++;
        }
        for (int i = 0; i < c->n_in; i++)
            tb_tensor_destroy(&in[i]);
        tb_tensor_destroy(&out);
    }
    print_message("# %zu cases, %lld values\n", (size_t)EMBV_N_CASES,
                  (long long)checked);
}

/* ========================================================================= */
/* 2. cpu rows vs NumPy / PyTorch                                            */
/* ========================================================================= */

static void cpu_vector_case(void *ctx, int isa, const embv_case *c)
{
    const tb_op *op = tb_op_find(c->op);
    tb_dtype dt = dtype_of(c->dtype);
    tb_params p = case_params(op, c);
    const char *impl = NULL;
    tb_kernel_fn fn = B->kernel(ctx, op, dt, &p, &impl).fn;
    assert_non_null(fn);
    assert_non_null(impl);
    /* a row at or below the level (which one is test_cpu's
     * test_registry_rows): a pair without a row at this level runs the
     * best below it (cross_entropy f32 runs its avx2 row at avx512),
     * and one without a SIMD row its C row */
    char row[64];
    bool named = false;
    snprintf(row, sizeof row, "%s_%s_c", c->op, c->dtype);
    named = strcmp(impl, row) == 0;
    for (int lv = TB_ISA_AVX2; lv <= isa && !named; lv++) {
        snprintf(row, sizeof row, "%s_%s_%s", c->op, c->dtype,
                 tb_cpu_isa_name(lv));
        named = strcmp(impl, row) == 0;
    }
    if (!named)
        fail_msg("%s: impl %s at %s", c->name, impl, tb_cpu_isa_name(isa));

    tb_tensor in[EMBV_MAX_IN], out, want;
    case_inputs(c, dt, in);
    tb_shape os = out_shape(op, in, &p);
    assert_int_equal(tb_tensor_create(&out, dt, &os), 0);
    memset(out.data, 0xff, tb_tensor_nbytes(&out)); /* NaN */
    assert_int_equal(tb_tensor_create(&want, TB_F64, &os), 0);
    memcpy(want.data, c->out, (size_t)c->n_out * sizeof(double));
    uint64_t l0 = launches(ctx);
    assert_int_equal(fn(ctx, in, &out, &p), 0);
    assert_int_equal(launches(ctx) - l0, 1);
    tb_check chk;
    tb_check_outputs(&out, &want, 1, op->tol[dt],
                     terms_of(op, in, &os, &p, dt), &chk);
    if (!chk.passed)
        fail_msg("%s %s: %lld bad, first [%lld] = %.9g, NumPy %.17g",
                 c->name, impl, (long long)chk.n_bad,
                 (long long)chk.first_bad, chk.first_bad_got,
                 chk.first_bad_ref);
    for (int i = 0; i < c->n_in; i++)
        tb_tensor_destroy(&in[i]);
    tb_tensor_destroy(&out);
    tb_tensor_destroy(&want);
}

static void test_cpu_vectors(void **state)
{
    (void)state;
    int runs = 0;
    for (int l = 0; l < n_levels(); l++)
        for (int th = 1; th <= 2; th++) {
            void *ctx = cpu_create(l, th);
            for (size_t k = 0; k < EMBV_N_CASES; k++, runs++)
                cpu_vector_case(ctx, l, &embv_cases[k]);
            B->destroy(ctx);
        }
    print_message("# %d levels x 2 thread counts, %d kernel runs\n",
                  n_levels(), runs);
}

/* ========================================================================= */
/* 3. random shapes, misalignment, canaries, against the reference          */
/* ========================================================================= */

#define GUARD 64
#define CANARY 0xa5

typedef struct gbuf {
    unsigned char *base;
    size_t total, nbytes;
    void *p;
} gbuf;

/* A tensor of dt and shape s, `off` bytes past a 64-byte boundary,
 * guarded by canaries. */
static tb_tensor gb_tensor(gbuf *g, tb_dtype dt, const tb_shape *s,
                           size_t off)
{
    tb_tensor t;
    tb_tensor_init(&t, dt, s);
    g->nbytes = tb_tensor_nbytes(&t);
    g->total = GUARD + off + g->nbytes + GUARD;
    g->base = tb_alloc(g->total);
    assert_non_null(g->base);
    memset(g->base, CANARY, g->total);
    g->p = g->base + GUARD + off;
    t.data = g->p;
    return t;
}

static bool gb_intact(const gbuf *g)
{
    const unsigned char *b = g->base, *p = g->p;
    for (const unsigned char *q = b; q < p; q++)
        if (*q != CANARY)
            return false;
    for (const unsigned char *q = p + g->nbytes; q < b + g->total; q++)
        if (*q != CANARY)
            return false;
    return true;
}

/* Inputs of op for logits [N, C] (scale: the logits' magnitude), random
 * targets, g in [-1, 1]. */
static void random_inputs(const tb_op *op, tb_dtype dt, int64_t N,
                          int64_t C, double scale, gbuf *gi, tb_tensor *in)
{
    const bool bw = op->id == TB_OP_cross_entropy_backward;
    tb_shape sg = SHAPE(1), sx = SHAPE(N, C), st = SHAPE(N);
    const size_t off = tb_dtype_size(dt);
    int k = 0;
    if (bw)
        in[k] = gb_tensor(&gi[k], dt, &sg, off), k++;
    in[k] = gb_tensor(&gi[k], dt, &sx, off), k++;
    in[k] = gb_tensor(&gi[k], dt, &st, off), k++;
    if (bw)
        tb_tensor_set(&in[0], 0, rng_uniform(-1, 1));
    for (int64_t e = 0; e < N * C; e++)
        tb_tensor_set(&in[k - 2], e, scale * rng_uniform(-1, 1));
    for (int64_t e = 0; e < N; e++)
        tb_tensor_set(&in[k - 1], e,
                      fmin(floor(rng_uniform(0, (double)C)), (double)C - 1));
}

/* Inputs of embedding (weight [V, D] in [-1, 1]) or its gradient (g
 * [n, D]; p's num_weights = V), n random indices below V (repeats when
 * n > V). */
static void random_emb_inputs(const tb_op *op, tb_dtype dt, int64_t V,
                              int64_t D, int64_t n, gbuf *gi, tb_tensor *in,
                              tb_params *p)
{
    const bool bw = op->id == TB_OP_embedding_backward;
    tb_shape s0 = bw ? SHAPE(n, D) : SHAPE(V, D), si = SHAPE(n);
    const size_t off = tb_dtype_size(dt);
    in[0] = gb_tensor(&gi[0], dt, &s0, off);
    in[1] = gb_tensor(&gi[1], dt, &si, off);
    for (int64_t e = 0; e < tb_shape_numel(&s0); e++)
        tb_tensor_set(&in[0], e, rng_uniform(-1, 1));
    for (int64_t e = 0; e < n; e++)
        tb_tensor_set(&in[1], e,
                      fmin(floor(rng_uniform(0, (double)V)), (double)V - 1));
    *p = (tb_params){0};
    if (bw) {
        char err[128];
        assert_int_equal(tb_params_set(op, p, "num_weights", (double)V, err,
                                       sizeof err),
                         0);
    }
    tb_params_defaults(op, p);
}

/* Runs op at ctx on the inputs into a guarded output; checks it against
 * the reference and the canaries; keeps a copy of the output in *keep. */
static void random_run(void *ctx, const tb_op *op, tb_dtype dt,
                       tb_tensor *in, const tb_params *p, const char *what,
                       tb_tensor *keep)
{
    tb_shape os = out_shape(op, in, p);
    gbuf go;
    tb_tensor out = gb_tensor(&go, dt, &os, tb_dtype_size(dt));
    memset(out.data, 0xff, tb_tensor_nbytes(&out));
    tb_tensor ref;
    assert_int_equal(tb_tensor_create(&ref, TB_F64, &os), 0);
    assert_int_equal(op->ref(in, &ref, p), 0);
    tb_kernel_fn fn = B->kernel(ctx, op, dt, p, NULL).fn;
    assert_non_null(fn);
    assert_int_equal(fn(ctx, in, &out, p), 0);
    tb_check chk;
    tb_check_outputs(&out, &ref, 1, op->tol[dt],
                     terms_of(op, in, &os, p, dt), &chk);
    if (!chk.passed)
        fail_msg("%s %s %s: %lld bad, first [%lld] = %.9g, ref %.17g",
                 op->name, tb_dtype_name(dt), what, (long long)chk.n_bad,
                 (long long)chk.first_bad, chk.first_bad_got,
                 chk.first_bad_ref);
    if (!gb_intact(&go))
        fail_msg("%s %s: output canary", op->name, what);
    assert_int_equal(tb_tensor_create(keep, dt, &os), 0);
    memcpy(keep->data, out.data, tb_tensor_nbytes(&out));
    tb_tensor_destroy(&ref);
    tb_free(go.base);
}

/* Shapes of the random cases: cross_entropy's logits [N, C] (big: the
 * logits scaled by 100, not 25); an embedding's V, D and n indices
 * (big: n = 4 V, many repeats). */
static const int64_t rshape[][3] = {
    {1, 1, 3},    {1, 2, 1},     {2, 9, 7},    {3, 16, 40},
    {7, 17, 5},   {5, 255, 9},   {2, 1025, 3}, {3, 3000, 2},
    {4096, 10, 4096}, {64, 999, 300}, {3000, 40, 5000},
};

static void test_cpu_random(void **state)
{
    (void)state;
    static const tb_op_id ops[] = {TB_OP_cross_entropy,
                                   TB_OP_cross_entropy_backward,
                                   TB_OP_embedding,
                                   TB_OP_embedding_backward};
    int runs = 0;
    void *ctx[8][2];
    for (int l = 0; l < n_levels(); l++)
        for (int th = 1; th <= 2; th++)
            ctx[l][th - 1] = cpu_create(l, th);
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        const tb_op *op = tb_op_get(ops[o]);
        const bool emb = o >= 2;
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++)
            for (size_t q = 0; q < sizeof rshape / sizeof rshape[0]; q++)
                for (int big = 0; big < 2; big++) {
                    const int64_t *sh = rshape[q];
                    rng_state = SEED ^ (uint64_t)(o * 1000 + q * 2 + big);
                    gbuf gi[3];
                    tb_tensor in[3];
                    tb_params p = {0};
                    if (emb)
                        random_emb_inputs(op, (tb_dtype)dt, sh[0], sh[1],
                                          big ? 4 * sh[0] : sh[2], gi, in,
                                          &p);
                    else
                        random_inputs(op, (tb_dtype)dt, sh[0], sh[1],
                                      big ? 100 : 25, gi, in);
                    for (int l = 0; l < n_levels(); l++) {
                        tb_tensor one, two;
                        char what[64];
                        snprintf(what, sizeof what, "%lldx%lld %s big %d",
                                 (long long)sh[0], (long long)sh[1],
                                 tb_cpu_isa_name(l), big);
                        random_run(ctx[l][0], op, (tb_dtype)dt, in, &p, what,
                                   &one);
                        random_run(ctx[l][1], op, (tb_dtype)dt, in, &p, what,
                                   &two);
                        runs += 2;
                        if (memcmp(one.data, two.data,
                                   tb_tensor_nbytes(&one)) != 0)
                            fail_msg("%s %s: threads 2 differ from 1",
                                     op->name, what);
                        tb_tensor_destroy(&one);
                        tb_tensor_destroy(&two);
                    }
                    for (int i = 0; i < op->n_in; i++) {
                        if (!gb_intact(&gi[i]))
                            fail_msg("%s: input canary %d", op->name, i);
                        tb_free(gi[i].base);
                    }
                }
    }
    for (int l = 0; l < n_levels(); l++)
        for (int th = 0; th < 2; th++)
            B->destroy(ctx[l][th]);
    print_message("# %d kernel runs against the reference\n", runs);
}

/* ========================================================================= */
/* 4. bad operands                                                           */
/* ========================================================================= */

/* An embedding index out of [0, V), negative, fractional or NaN: the
 * forward and the gradient return TB_EINVAL and write nothing. */
static void emb_bad_indices(void)
{
    enum { V = 4, D = 3, N = 5 };
    static const double bad[] = {V, -1, 0.5, NAN, INFINITY};
    void *ctx = cpu_create(n_levels() - 1, 2);
    for (int bw = 0; bw < 2; bw++) {
        const tb_op *op = tb_op_get(bw ? TB_OP_embedding_backward
                                       : TB_OP_embedding);
        tb_params p = {0};
        char err[128];
        if (bw)
            assert_int_equal(tb_params_set(op, &p, "num_weights", V, err,
                                           sizeof err),
                             0);
        tb_params_defaults(op, &p);
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
            tb_shape s0 = bw ? SHAPE(N, D) : SHAPE(V, D), si = SHAPE(N);
            tb_shape so = bw ? SHAPE(V, D) : SHAPE(N, D);
            tb_tensor in[2], out;
            assert_int_equal(tb_tensor_create(&in[0], (tb_dtype)dt, &s0), 0);
            assert_int_equal(tb_tensor_create(&in[1], (tb_dtype)dt, &si), 0);
            assert_int_equal(tb_tensor_create(&out, (tb_dtype)dt, &so), 0);
            tb_kernel_fn fn = B->kernel(ctx, op, (tb_dtype)dt, &p, NULL).fn;
            for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
                for (int64_t e = 0; e < N; e++)
                    tb_tensor_set(&in[1], e, (double)(e % V));
                tb_tensor_set(&in[1], N - 1, bad[b]);
                memset(out.data, 0x5a, tb_tensor_nbytes(&out));
                assert_int_equal(fn(ctx, in, &out, &p), TB_EINVAL);
                const unsigned char *o = out.data;
                for (size_t i = 0; i < tb_tensor_nbytes(&out); i++)
                    if (o[i] != 0x5a)
                        fail_msg("%s: index %g: output written", op->name,
                                 bad[b]);
                tb_tensor ref;
                assert_int_equal(tb_tensor_create(&ref, TB_F64, &so), 0);
                assert_int_equal(op->ref(in, &ref, &p), TB_EINVAL);
                tb_tensor_destroy(&ref);
            }
            tb_tensor_destroy(&in[0]);
            tb_tensor_destroy(&in[1]);
            tb_tensor_destroy(&out);
        }
    }
    B->destroy(ctx);
}

static void test_bad_operands(void **state)
{
    (void)state;
    enum { N = 6, C = 5 };
    static const double bad_t[] = {5, -1, 2.5, NAN, INFINITY, 1e300};
    for (int l = 0; l < n_levels(); l++) {
        void *ctx = cpu_create(l, 2);
        for (int bw = 0; bw < 2; bw++) {
            const tb_op *op = tb_op_get(bw ? TB_OP_cross_entropy_backward
                                           : TB_OP_cross_entropy);
            for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
                tb_tensor in[3], out;
                tb_shape sg = SHAPE(1), sx = SHAPE(N, C), st = SHAPE(N);
                tb_shape so = bw ? sx : (tb_shape){0, {0}};
                int k = 0;
                if (bw) {
                    assert_int_equal(
                        tb_tensor_create(&in[k++], (tb_dtype)dt, &sg), 0);
                    tb_tensor_set(&in[0], 0, 1);
                }
                assert_int_equal(tb_tensor_create(&in[k], (tb_dtype)dt, &sx),
                                 0);
                for (int64_t e = 0; e < N * C; e++)
                    tb_tensor_set(&in[k], e, 0.1 * (double)e);
                k++;
                assert_int_equal(tb_tensor_create(&in[k], (tb_dtype)dt, &st),
                                 0);
                assert_int_equal(tb_tensor_create(&out, (tb_dtype)dt, &so),
                                 0);
                tb_kernel_fn fn = B->kernel(ctx, op, (tb_dtype)dt, NULL,
                                            NULL).fn;
                assert_non_null(fn);
                for (size_t b = 0; b < sizeof bad_t / sizeof bad_t[0]; b++)
                    for (int64_t pos = 0; pos < N; pos += N - 1) {
                        for (int64_t e = 0; e < N; e++)
                            tb_tensor_set(&in[k], e, (double)(e % C));
                        tb_tensor_set(&in[k], pos, bad_t[b]);
                        if (dt == TB_F32 && bad_t[b] == 1e300)
                            continue; /* inf in f32: already covered */
                        memset(out.data, 0x5a, tb_tensor_nbytes(&out));
                        uint64_t l0 = launches(ctx);
                        assert_int_equal(fn(ctx, in, &out, NULL),
                                         TB_EINVAL);
                        assert_int_equal(launches(ctx) - l0, 1);
                        const unsigned char *o = out.data;
                        for (size_t i = 0; i < tb_tensor_nbytes(&out); i++)
                            if (o[i] != 0x5a)
                                fail_msg("%s: target %g at %lld: output "
                                         "written", op->name, bad_t[b],
                                         (long long)pos);
                        tb_tensor ref;
                        assert_int_equal(tb_tensor_create(&ref, TB_F64, &so),
                                         0);
                        assert_int_equal(op->ref(in, &ref, NULL), TB_EINVAL);
                        tb_tensor_destroy(&ref);
                    }
                /* a target of another length */
                tb_tensor t2 = in[k];
                t2.shape[0] = N - 1;
                tb_tensor save = in[k];
                in[k] = t2;
                assert_int_equal(fn(ctx, in, &out, NULL), TB_ESHAPE);
                in[k] = save;
                for (int i = 0; i <= k; i++)
                    tb_tensor_destroy(&in[i]);
                tb_tensor_destroy(&out);
            }
        }
        B->destroy(ctx);
    }
    emb_bad_indices();
    /* the shape rules' messages name what is wrong */
    const tb_op *op = tb_op_get(TB_OP_cross_entropy);
    tb_shape is[2] = {SHAPE(4, 3), SHAPE(5)}, os[1];
    char err[256] = "";
    assert_int_equal(tb_op_infer(op, is, 2, NULL, os, err, sizeof err),
                     TB_ESHAPE);
    print_message("# %s\n", err);
    assert_non_null(strstr(err, "cross_entropy: expects logits [N, C]"));
    assert_non_null(strstr(err, "got 4x3 and 5"));
    tb_shape ew[2] = {SHAPE(4, 3, 2), SHAPE(5)};
    op = tb_op_get(TB_OP_embedding);
    assert_int_equal(tb_op_infer(op, ew, 2, NULL, os, err, sizeof err),
                     TB_ESHAPE);
    print_message("# %s\n", err);
    assert_non_null(strstr(err, "embedding: expects weight [V, D]"));
    tb_shape eg[2] = {SHAPE(5, 3), SHAPE(4)};
    op = tb_op_get(TB_OP_embedding_backward);
    assert_int_equal(tb_op_infer(op, eg, 2, NULL, os, err, sizeof err),
                     TB_ESHAPE);
    print_message("# %s\n", err);
    assert_non_null(strstr(err, "gradient 5x3 does not match"));
}

/* ========================================================================= */
/* 5. dropout's stream: levels, threads, p = 0, the kept fraction            */
/* ========================================================================= */

/* dropout of n elements (x in [0.5, 1.5], never 0) at p, seed on ctx. */
static void drop_run(void *ctx, tb_dtype dt, const tb_tensor *x, double p,
                     double seed, tb_tensor *out)
{
    const tb_op *op = tb_op_get(TB_OP_dropout);
    tb_params prm = {0};
    char err[128];
    assert_int_equal(tb_params_set(op, &prm, "p", p, err, sizeof err), 0);
    assert_int_equal(tb_params_set(op, &prm, "seed", seed, err, sizeof err),
                     0);
    tb_shape s = tb_tensor_shape(x);
    assert_int_equal(tb_tensor_create(out, dt, &s), 0);
    tb_kernel_fn fn = B->kernel(ctx, op, dt, &prm, NULL).fn;
    assert_non_null(fn);
    assert_int_equal(fn(ctx, x, out, &prm), 0);
}

/* Kept fraction of 1e6 elements at p: the count k of kept elements is
 * binomial(n, 1 - p) if the stream's bits are uniform; |k - n (1 - p)|
 * <= 6 sqrt(n p (1 - p)) fails a uniform stream with probability 2e-9.
 * Every output (both dtypes, every level, threads 1 and 2) is the bits
 * of the scalar level at one thread; p = 0 gives x itself, bit for bit. */
static void test_dropout_stream(void **state)
{
    (void)state;
    enum { N = 1000000 };
    static const double ps[] = {0, 0.1, 0.5, 0.9};
    for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
        tb_shape s = SHAPE(N);
        tb_tensor x;
        assert_int_equal(tb_tensor_create(&x, (tb_dtype)dt, &s), 0);
        rng_state = SEED;
        for (int64_t i = 0; i < N; i++)
            tb_tensor_set(&x, i, rng_uniform(0.5, 1.5));
        for (size_t q = 0; q < sizeof ps / sizeof ps[0]; q++) {
            tb_tensor first = {0};
            for (int l = 0; l < n_levels(); l++)
                for (int th = 1; th <= 2; th++) {
                    void *ctx = cpu_create(l, th);
                    tb_tensor o;
                    drop_run(ctx, (tb_dtype)dt, &x, ps[q], 42, &o);
                    B->destroy(ctx);
                    if (!first.data) {
                        first = o;
                        continue;
                    }
                    if (memcmp(o.data, first.data, tb_tensor_nbytes(&o)))
                        fail_msg("dropout p=%g %s threads=%d: not the bits "
                                 "of scalar threads=1", ps[q],
                                 tb_cpu_isa_name(l), th);
                    tb_tensor_destroy(&o);
                }
            int64_t kept = 0;
            for (int64_t i = 0; i < N; i++)
                kept += tb_tensor_get(&first, i) != 0;
            const double mean = N * (1 - ps[q]);
            const double bound = 6 * sqrt(N * ps[q] * (1 - ps[q]));
            print_message("# %s p=%g: %lld kept, expected %.0f +- %.0f\n",
                          tb_dtype_name((tb_dtype)dt), ps[q],
                          (long long)kept, mean, bound);
            assert_true(fabs((double)kept - mean) <= bound);
            if (ps[q] == 0)
                assert_memory_equal(first.data, x.data,
                                    tb_tensor_nbytes(&x));
            tb_tensor_destroy(&first);
        }
        tb_tensor_destroy(&x);
    }
}

/* Every op of the family has vectors in both dtypes (2 or more each). */
static void test_coverage(void **state)
{
    (void)state;
    static const tb_op_id ops[] = {TB_OP_cross_entropy,
                                   TB_OP_cross_entropy_backward,
                                   TB_OP_embedding, TB_OP_embedding_backward,
                                   TB_OP_dropout};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
            int seen = 0;
            for (size_t k = 0; k < EMBV_N_CASES; k++)
                seen += strcmp(embv_cases[k].op, tb_op_get(ops[o])->name) ==
                            0 &&
                        dtype_of(embv_cases[k].dtype) == (tb_dtype)dt;
            if (seen < 2)
                fail_msg("%s %s: %d vector cases", tb_op_get(ops[o])->name,
                         tb_dtype_name((tb_dtype)dt), seen);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ref_vectors, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_cpu_vectors, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_cpu_random, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_bad_operands, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_dropout_stream, leak_setup,
                                        leak_teardown),
        cmocka_unit_test_setup_teardown(test_coverage, leak_setup,
                                        leak_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
