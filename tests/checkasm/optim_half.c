/* checkasm, part 7: the optimizers' bf16/f16 rows (the mixed-precision
 * form: 16-bit p and g, f32 state; every op but lbfgs) at every level, bit for bit against
 * what the generic 16-bit path gives: p and g widened (ops/half.h),
 * the op's f32 row of the same level on the same instance (so the same
 * thread split, vector tails and lamb's chunk sums) and p rounded once (tb_f32_to_bf16 /
 * tb_f32_to_f16); the f32 state bit for bit too.  (rows.c holds every
 * row to the C row within the op's tolerance; the SIMD levels fuse
 * multiply-adds the C row does not, so only the same level's f32 row
 * gives the bits.)  Inputs: every 16-bit pattern as p once (NaN,
 * infinities, zeros, subnormals: results below the dtype's smallest
 * normal), random g, random state; lengths with vector tails and a
 * three-thread split; the default hyperparameters and a set with weight
 * decay, Nesterov momentum and a rectified RAdam step. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backends/cpu/isa.h"
#include "backends/cpu/kreg.h"
#include "ops/half.h"
#include "ops/op.h"
#include "ops/tensor.h"

#include "checkasm.h"

static const tb_op_id oh_ops[] = {
    TB_OP_sgd,     TB_OP_sgd_momentum, TB_OP_adam,
    TB_OP_adamw,   TB_OP_adagrad,      TB_OP_adamax,
    TB_OP_nadam,   TB_OP_radam,        TB_OP_adabound,
    TB_OP_lamb};

static void *oh_instance(int lv, const char *threads)
{
    const char *vals[2] = {tb_cpu_isa_name(lv), threads};
    void *ctx = NULL;
    char err[256];
    if (B->create(B, vals, &ctx, err, sizeof err))
        fail_msg("cpu create isa=%s: %s", vals[0], err);
    return ctx;
}

static bool oh_nan16(tb_dtype dt, uint16_t h)
{
    return dt == TB_F16 ? (h & 0x7c00) == 0x7c00 && (h & 0x3ff)
                        : (h & 0x7f80) == 0x7f80 && (h & 0x7f);
}

static float oh_widen(tb_dtype dt, uint16_t h)
{
    return dt == TB_BF16 ? tb_bf16_to_f32(h) : tb_f16_to_f32(h);
}

static uint16_t oh_narrow(tb_dtype dt, float f)
{
    return dt == TB_BF16 ? tb_f32_to_bf16(f) : tb_f32_to_f16(f);
}

/* the second parameter set: every name the op has */
static void oh_rich(const tb_op *op, tb_params *p)
{
    static const struct {
        const char *name;
        double v;
    } set[] = {{"weight_decay", 0.05}, {"momentum", 0.8},
               {"dampening", 0.1},     {"nesterov", 1},
               {"lr_decay", 0.01},     {"step", 12}};
    char err[128];
    for (size_t i = 0; i < sizeof set / sizeof set[0]; i++)
        if (tb_op_param_index(op, set[i].name) >= 0 &&
            !(op->id == TB_OP_sgd_momentum &&
              !strcmp(set[i].name, "dampening")))
            assert_int_equal(
                tb_params_set(op, p, set[i].name, set[i].v, err, sizeof err),
                0);
}

/* One case: the 16-bit row r against widen + f32 row + narrow, both on
 * an instance of r's level with `threads` threads; 1 when it ran. */
static int oh_case(const tb_op *op, tb_dtype dt, const tb_cpu_krow *r,
                   int64_t n, const tb_params *p, int rich,
                   const char *threads, uint64_t salt)
{
    size_t nrows;
    const tb_cpu_krow *rows = tb_cpu_krows(&nrows);
    const tb_cpu_krow *f = tb_cpu_krow_find(rows, nrows, op->id, TB_F32,
                                            r->min_isa);
    assert_non_null(f);
    tb_shape sh = S(1, (int)n);
    tb_tensor h[4], w[4], ho[3], wo[3];
    for (int i = 0; i < op->n_in; i++) {
        assert_int_equal(
            tb_tensor_create(&h[i], tb_op_in_dtype(op, i, dt), &sh), 0);
        assert_int_equal(tb_tensor_create(&w[i], TB_F32, &sh), 0);
    }
    rng_seed(salt);
    uint16_t *hp = h[0].data, *hg = h[1].data;
    for (int64_t i = 0; i < n; i++) {
        hp[i] = (uint16_t)(i < 65536 ? (uint64_t)i * 40503u : rng_next());
        hg[i] = oh_narrow(dt, (float)rng_uniform(-1, 1));
        if (i % 97 == 5) /* a gradient below the smallest normal */
            hg[i] = (uint16_t)(rng_next() & 0x803f);
        for (int k = 2; k < op->n_in; k++) /* state: m any sign, v >= 0 */
            ((float *)h[k].data)[i] =
                (float)(k == 2 && op->id != TB_OP_adagrad
                            ? rng_uniform(-0.5, 0.5)
                            : rng_uniform(1e-6, 0.5));
    }
    for (int i = 0; i < op->n_in; i++)
        for (int64_t e = 0; e < n; e++)
            ((float *)w[i].data)[e] =
                i < 2 ? oh_widen(dt, ((uint16_t *)h[i].data)[e])
                      : ((float *)h[i].data)[e];
    for (int o = 0; o < op->n_out; o++) {
        ho[o] = h[op->alias[o]];
        ho[o].owns = false;
        wo[o] = w[op->alias[o]];
        wo[o].owns = false;
    }
    void *ctx = oh_instance(r->min_isa, threads);
    assert_int_equal(r->fn(ctx, h, ho, p), 0);
    assert_int_equal(f->fn(ctx, w, wo, p), 0);
    B->destroy(ctx);
    const float *wp = w[0].data;
    for (int64_t i = 0; i < n; i++) {
        uint16_t want = oh_narrow(dt, wp[i]);
        if (hp[i] != want && !(oh_nan16(dt, hp[i]) && oh_nan16(dt, want)))
            fail_msg("%s (%s, n %lld, %s threads) p[%lld]: %04x, widen + "
                     "%s + narrow %04x",
                     r->name, rich ? "weight decay.." : "defaults",
                     (long long)n, threads, (long long)i, hp[i], f->name,
                     want);
    }
    for (int k = 2; k < op->n_in; k++)
        for (int64_t i = 0; i < n; i++) {
            const float a = ((float *)h[k].data)[i];
            const float b = ((float *)w[k].data)[i];
            if (memcmp(&a, &b, sizeof a) && !(isnan(a) && isnan(b)))
                fail_msg("%s (n %lld) state %d [%lld]: %a, the f32 row %a",
                         r->name, (long long)n, k, (long long)i, (double)a,
                         (double)b);
        }
    for (int i = 0; i < op->n_in; i++) {
        tb_tensor_destroy(&h[i]);
        tb_tensor_destroy(&w[i]);
    }
    return 1;
}

void test_optim_half_exact(void **state)
{
    (void)state;
    static const int64_t lens[] = {1, 7, 15, 16, 33, 4099, 65536 + 29};
    const tb_dtype dts[2] = {TB_BF16, TB_F16};
    size_t nrows;
    const tb_cpu_krow *rows = tb_cpu_krows(&nrows);
    int ran = 0, nr = 0;
    for (size_t k = 0; k < sizeof oh_ops / sizeof oh_ops[0]; k++)
        for (int di = 0; di < 2; di++)
            for (size_t r = 0; r < nrows; r++) {
                const tb_op *op = tb_op_get(oh_ops[k]);
                if (rows[r].op != op->id || rows[r].dtype != dts[di] ||
                    rows[r].min_isa >= n_levels())
                    continue;
                nr++;
                for (int ps = 0; ps < 2; ps++) {
                    tb_params p = {0};
                    if (ps)
                        oh_rich(op, &p);
                    tb_params_defaults(op, &p);
                    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
                        for (int t = 0; t < 2; t++)
                            ran += oh_case(op, dts[di], &rows[r], lens[l],
                                           &p, ps, t ? "2" : "1",
                                           0x0b16 + k * 64 + r + l);
                }
            }
    print_message("# %d optimizer rows bit for bit (%d cases)\n", nr, ran);
}

/* The element-wise optimizer rows in f32 and f64 (every op but lamb and
 * lbfgs) at the avx512 level, bit for bit (p and the state): on the
 * whole zmm vectors of each span (elements below n rounded down to 16
 * f32 / 8 f64) the avx2 row's values, on the rest the C row's, each row
 * on an instance of its level with the same thread count (so the same
 * spans).  The levels' loops are one template (optim_simd.h) over 512-
 * and 256-bit vectors, the same operations lane for lane, and the tails
 * are the portable loop's: so the avx512 level's zmm loop and its
 * 256-bit one (optim.c's optim_ymm: sgd and adamax f64 over large
 * arrays on AMD CPUs) give the same bits.  (Fails if the 256-bit loop
 * is handed a span's tail: it fuses multiply-adds there that the C loop
 * does not.)  Lengths
 * past optim.c's OPTIM_YMM_MIN_BYTES, so on an AMD CPU the avx512 rows
 * of sgd and adamax f64 run the 256-bit loop here; random p, g and
 * state (v >= 0), both parameter sets. */
void test_optim_ymm_exact(void **state)
{
    (void)state;
    if (n_levels() <= TB_ISA_AVX512)
        skip();
    static const tb_op_id ops[] = {
        TB_OP_sgd,   TB_OP_sgd_momentum, TB_OP_adam,  TB_OP_adamw,
        TB_OP_adagrad, TB_OP_adamax,     TB_OP_nadam, TB_OP_radam,
        TB_OP_adabound};
    static const int64_t lens[] = {7, 4099, 65536 + 29, 131072 + 13};
    static const int lv[3] = {TB_ISA_AVX2, TB_ISA_AVX512, TB_ISA_SCALAR};
    const tb_dtype dts[2] = {TB_F32, TB_F64};
    size_t nrows;
    const tb_cpu_krow *rows = tb_cpu_krows(&nrows);
    int ran = 0;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        for (int di = 0; di < 2; di++) {
            const tb_op *op = tb_op_get(ops[k]);
            const tb_cpu_krow *r[3] = {NULL, NULL, NULL};
            for (size_t i = 0; i < nrows; i++)
                for (int s = 0; s < 3; s++)
                    if (rows[i].op == op->id && rows[i].dtype == dts[di] &&
                        rows[i].min_isa == lv[s])
                        r[s] = &rows[i];
            for (int s = 0; s < 3; s++)
                assert_non_null(r[s]);
            const size_t es = tb_dtype_size(dts[di]);
            for (int ps = 0; ps < 2; ps++) {
                tb_params p = {0};
                if (ps)
                    oh_rich(op, &p);
                tb_params_defaults(op, &p);
                for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
                    const int64_t n = lens[l];
                    const int64_t cut = n / (int64_t)(64 / es) *
                                        (int64_t)(64 / es);
                    tb_shape sh = S(1, (int)n);
                    tb_tensor t[3][4], o[3][3];
                    rng_seed(0x7a56 + k * 16 + (uint64_t)di * 4 + l);
                    for (int i = 0; i < op->n_in; i++) {
                        for (int s = 0; s < 3; s++)
                            assert_int_equal(
                                tb_tensor_create(&t[s][i], dts[di], &sh), 0);
                        for (int64_t e = 0; e < n; e++) {
                            const double x =
                                i >= 2 && (i == 3 || op->id == TB_OP_adagrad)
                                    ? rng_uniform(1e-6, 0.5)
                                    : rng_uniform(-1, 1);
                            if (dts[di] == TB_F32)
                                ((float *)t[0][i].data)[e] = (float)x;
                            else
                                ((double *)t[0][i].data)[e] = x;
                        }
                        for (int s = 1; s < 3; s++)
                            memcpy(t[s][i].data, t[0][i].data,
                                   (size_t)n * es);
                    }
                    for (int s = 0; s < 3; s++) {
                        for (int q = 0; q < op->n_out; q++) {
                            o[s][q] = t[s][op->alias[q]];
                            o[s][q].owns = false;
                        }
                        void *ctx = oh_instance(lv[s] == TB_ISA_SCALAR
                                                    ? TB_ISA_AVX512
                                                    : lv[s],
                                                l & 1 ? "2" : "1");
                        assert_int_equal(r[s]->fn(ctx, t[s], o[s], &p), 0);
                        B->destroy(ctx);
                    }
                    for (int q = 0; q < op->n_out; q++) {
                        const int i = op->alias[q];
                        const unsigned char *a = t[1][i].data;
                        for (int64_t e = 0; e < n; e++) {
                            const int w = e < cut ? 0 : 2; /* avx2, C */
                            const unsigned char *b = t[w][i].data;
                            if (memcmp(a + e * es, b + e * es, es))
                                fail_msg("%s (%s, n %lld) output %d [%lld]:"
                                         " %a, %s %a",
                                         r[1]->name,
                                         ps ? "weight decay.." : "defaults",
                                         (long long)n, q, (long long)e,
                                         dts[di] == TB_F32
                                             ? (double)((float *)a)[e]
                                             : ((double *)a)[e],
                                         r[w]->name,
                                         dts[di] == TB_F32
                                             ? (double)((float *)b)[e]
                                             : ((double *)b)[e]);
                        }
                    }
                    for (int i = 0; i < op->n_in; i++)
                        for (int s = 0; s < 3; s++)
                            tb_tensor_destroy(&t[s][i]);
                    ran++;
                }
            }
        }
    print_message("# avx512 optimizer rows = avx2 rows' vectors + C tails,"
                  " bit for bit (%d cases)\n", ran);
}
