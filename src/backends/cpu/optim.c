/* cpu backend: the element-wise optimizer steps (sgd, sgd_momentum,
 * adam, adamw, adagrad, adamax, nadam, radam, adabound), f32 and f64
 * (lamb and lbfgs, which reduce over the tensor: optim_red.h's loops,
 * their SIMD levels optim_red_simd.h's).
 *
 * One fused pass per call over p, g and the state: every element is read
 * once and its new p and state written once, split over the instance's
 * threads in cache-line-aligned spans.  The loops are one template
 * (optim_simd.h) compiled as portable C here and with AVX2 / AVX-512 in
 * optim_avx2.c / optim_avx512.c; the level is the instance's (the `isa`
 * axis), and the portable loop finishes each span's tail.  Nothing is
 * allocated.
 *
 * Semantics: PyTorch's single-tensor steps, as in src/ops/ref_optim.c
 * (the double-precision reference these kernels are checked against;
 * see its header for the PyTorch versions followed).  The scalars (bias
 * corrections, step sizes, NAdam's mu product, RAdam's rectification) are
 * computed once per call in double, then rounded to the element type; the
 * per-element arithmetic is in the element type, with fused multiply-adds
 * at the SIMD levels, which stays well inside the op table's TOL_OPT.
 *
 * Outputs are written in place (out[i].data == in[alias[i]].data, the
 * harness's normal case) or into separate buffers; any other overlap of
 * an output with an operand is refused (TB_EINVAL), since a partial
 * overlap would read values this call already overwrote. */
#include <math.h>
#include <stdint.h>

#include "backends/cpu/cpu_config.h"
#include "cpu_internal.h"
#include "kreg.h"
#include "isa.h"
#include "optim.h"
#include "optim_red.h"
#include "optim_simd.h"

#include "../../base/error.h"
#include "../../ops/half.h"
#include "../../ops/op.h"
#include "../../ops/optim_math.h"
#include "../../ops/tensor.h"

/* ---- the portable loops (the template at one element per "vector") ---- */

#define OPT_FMA(a, b, c) ((a) * (b) + (c))
#define OPT_MAX(a, b) ((a) > (b) ? (a) : (b))
#define OPT_MIN(a, b) ((a) < (b) ? (a) : (b))

#define OPT_SQRT(x) sqrtf(x)
#define OPT_ABS(x) fabsf(x)
#define OPT_ET float
#define OPT_VT float
#define OPT_NAME loops_f32_c
#include "optim_simd.h"
/* the mixed-precision form (optim_simd.h): 16-bit p and g, f32 state */
#define OPT_ET float
#define OPT_VT float
#define OPT_HT uint16_t
#define OPT_LDH(x, ptr, i) ((x) = tb_bf16_to_f32((ptr)[i]))
#define OPT_STH(ptr, i, x) ((ptr)[i] = tb_f32_to_bf16(x))
#define OPT_NAME loops_bf16_c
#include "optim_simd.h"
#define OPT_ET float
#define OPT_VT float
#define OPT_HT uint16_t
#define OPT_LDH(x, ptr, i) ((x) = tb_f16_to_f32((ptr)[i]))
#define OPT_STH(ptr, i, x) ((ptr)[i] = tb_f32_to_f16(x))
#define OPT_NAME loops_f16_c
#include "optim_simd.h"
#undef OPT_SQRT
#undef OPT_ABS

#define OPT_SQRT(x) sqrt(x)
#define OPT_ABS(x) fabs(x)
#define OPT_ET double
#define OPT_VT double
#define OPT_NAME loops_f64_c
#include "optim_simd.h"

#undef OPT_SQRT
#undef OPT_ABS
#undef OPT_FMA
#undef OPT_MAX
#undef OPT_MIN

#define RED_ET float
#define RED_SQRT sqrtf
#define RED_NAME red_f32
#include "optim_red.h"
#define RED_ET double
#define RED_SQRT sqrt
#define RED_NAME red_f64
#include "optim_red.h"
/* lamb's mixed-precision form: 16-bit p and g, f32 state */
#define RED_ET float
#define RED_SQRT sqrtf
#define RED_NAME red_bf16
#define RED_HT uint16_t
#define RED_LDH(ptr, i) tb_bf16_to_f32((ptr)[i])
#define RED_STH(ptr, i, x) ((ptr)[i] = tb_f32_to_bf16(x))
#include "optim_red.h"
#define RED_ET float
#define RED_SQRT sqrtf
#define RED_NAME red_f16
#define RED_HT uint16_t
#define RED_LDH(ptr, i) tb_f16_to_f32((ptr)[i])
#define RED_STH(ptr, i, x) ((ptr)[i] = tb_f32_to_f16(x))
#include "optim_red.h"

typedef int64_t (*loops_fn)(const tb_optim_job *j, int64_t b, int64_t e);

/* Loops per dtype and ISA level; NULL where the level is not built, and
 * at avx512bf16 for every dtype but bf16 (that level runs avx512's). */
static const loops_fn loops[TB_DTYPE_COUNT][TB_ISA_COUNT] = {
    [TB_F32] = {loops_f32_c,
#if TB_CPU_HAVE_AVX2
                tb_optim_f32_avx2,
#else
                NULL,
#endif
#if TB_CPU_HAVE_AVX512
                tb_optim_f32_avx512
#else
                NULL
#endif
    },
    [TB_F64] = {loops_f64_c,
#if TB_CPU_HAVE_AVX2
                tb_optim_f64_avx2,
#else
                NULL,
#endif
#if TB_CPU_HAVE_AVX512
                tb_optim_f64_avx512
#else
                NULL
#endif
    },
    /* the mixed-precision form: 16-bit p and g, f32 state */
    [TB_BF16] = {loops_bf16_c,
#if TB_CPU_HAVE_AVX2
                 tb_optim_bf16_avx2,
#else
                 NULL,
#endif
#if TB_CPU_HAVE_AVX512
                 tb_optim_bf16_avx512,
#else
                 NULL,
#endif
#if TB_CPU_HAVE_AVX512BF16
                 tb_optim_bf16_avx512bf16
#else
                 NULL
#endif
    },
    [TB_F16] = {loops_f16_c,
#if TB_CPU_HAVE_AVX2
                tb_optim_f16_avx2,
#else
                NULL,
#endif
#if TB_CPU_HAVE_AVX512
                tb_optim_f16_avx512
#else
                NULL
#endif
    },
};

/* ---- 256-bit loops at the AVX-512 level on AMD CPUs --------------------- */

/* sgd and adamax f64 over arrays of OPTIM_YMM_MIN_BYTES and more run a
 * 256-bit loop at the avx512 level on AMD CPUs: on Zen 4 (512-bit
 * operations split into two 256-bit halves) a load/store stream that
 * updates L3-resident arrays in place can run faster with ymm than with
 * zmm (kernels_avx512.c's vv_ip: add_ f64 1M 13-15% less time).  tbench
 * ab against the zmm loop (20-30 blocks, load 4.8-11): sgd f64 1M -5.1
 * to -9.2% (four runs), 131072 -1.6 to -2.7%, 2M -1.4%, 4M -4.2%; adamax
 * f64 131072 -9.0 to -9.4%, 262144 -8.2%, 524288 -8.6%, but 1M (its four
 * arrays 32 MiB, past the L3) -1.5 to +4.4% (median +2.9%): hence adamax
 * only up to OPTIM_YMM_MAX_ADAMAX elements; at 65536 (512 KiB an array,
 * two of them the L2) sgd +1.9%, adamax -2.6%: hence from 1 MiB an
 * array.  But sgd_momentum f64 131072 took +10.1%, sgd and sgd_momentum
 * f32 1M +5.5% and +11.2%, adamax f32 within noise: those stay zmm.  So
 * do the steps with a square root and a divide (adam, adamw, nadam,
 * radam, adabound, adagrad): the divide/sqrt unit bounds them, and it
 * runs a vsqrtpd+vdivpd zmm pair in 25 cycles for 8 lanes against 2 x
 * 13.4 for two ymm pairs (scripts/divsqrt_tp.c; their avx2 rows took
 * 10-13% longer at 1M f64).  The 256-bit loop is the f64 template
 * (optim_simd.h) over __m256d in optim_avx512.c, the same operations
 * lane for lane as the zmm loop; it takes each span's whole zmm vectors
 * only (a multiple of 8 elements) and the portable loop the rest as
 * before, so every element's bits are the zmm row's (checkasm's
 * optim_ymm_exact). */
#define OPTIM_YMM_MIN_BYTES (1024.0 * 1024)
#define OPTIM_YMM_MAX_ADAMAX (512 * 1024) /* elements: 16 MiB in all */

/* The loop to run at level lv for op id in dt over n elements: the
 * level's (simd), or the 256-bit one above. */
static loops_fn optim_ymm(tb_op_id id, tb_dtype dt, int lv, int64_t n,
                          loops_fn simd)
{
#if TB_CPU_HAVE_AVX512
    if (lv < TB_ISA_AVX512 || dt != TB_F64 ||
        (id != TB_OP_sgd && id != TB_OP_adamax) ||
        (double)n * 8 < OPTIM_YMM_MIN_BYTES ||
        (id == TB_OP_adamax && n > OPTIM_YMM_MAX_ADAMAX))
        return simd;
    return tb_cpu_isa_amd() ? tb_optim_f64_avx512_ymm : simd;
#else
    (void)id, (void)dt, (void)lv, (void)n;
    return simd;
#endif
}

/* ---- operands ------------------------------------------------------------ */

/* [a, a + na) and [b, b + nb) bytes overlap. */
static bool overlap(const void *a, size_t na, const void *b, size_t nb)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y + nb && y < x + na;
}

/* Every operand of dtype dt, contiguous, of the shapes the op's rule
 * gives (tb_cpu_check_op); every output either exactly an input's buffer
 * (one it may alias) or disjoint from every operand.  Returns the element count in *n. */
static int check(const tb_op *op, tb_dtype dt, const tb_tensor *in,
                 const tb_tensor *out, const tb_params *p, int64_t *n)
{
    int rc = tb_cpu_check_op(op->id, dt, in, out, p);
    if (rc)
        return rc;
    *n = tb_tensor_numel(&in[0]);
    for (int o = 0; o < op->n_out; o++) {
        size_t ob = tb_tensor_nbytes(&out[o]);
        for (int i = 0; i < op->n_in; i++)
            if (out[o].data == in[i].data
                    ? op->alias[o] < 0 /* lbfgs's direction: scratch */
                    : overlap(out[o].data, ob, in[i].data,
                              tb_tensor_nbytes(&in[i])))
                return TB_EINVAL;
        for (int k = 0; k < o; k++)
            if (overlap(out[o].data, ob, out[k].data,
                        tb_tensor_nbytes(&out[k])))
                return TB_EINVAL;
    }
    return 0;
}

/* ---- scalars, once per call ------------------------------------------------ */

static double param(const tb_op *op, const tb_params *p, int idx)
{
    return p && tb_params_has(p, idx) ? p->v[idx] : op->params[idx].def;
}

/* Fills j's scalars from the parameters (schema order of op.c's rows);
 * TB_EPARAM for a non-finite value or a step that is not an integer
 * >= 1. */
static int prepare(const tb_op *op, const tb_params *p, tb_optim_job *j)
{
    double v[TB_MAX_PARAMS] = {0};
    for (int i = 0; i < op->n_params; i++) {
        v[i] = param(op, p, i);
        if (!isfinite(v[i]))
            return TB_EPARAM;
    }
    double t = 1;
    if (op->id != TB_OP_sgd && op->id != TB_OP_sgd_momentum &&
        op->id != TB_OP_lbfgs) {
        t = v[op->n_params - 1];
        if (!(t >= 1) || t != floor(t))
            return TB_EPARAM;
    }
    j->op = op->id;
    switch (op->id) {
    case TB_OP_sgd: /* lr, weight_decay */
        j->lr = v[0];
        j->wd = v[1];
        return 0;
    case TB_OP_sgd_momentum: /* lr, momentum, dampening, wd, nesterov */
        j->lr = v[0];
        j->b1 = v[1];
        j->c2 = 1 - v[2];
        j->wd = v[3];
        j->mom = v[1] != 0; /* momentum 0: no buffer, step by g */
        j->nesterov = v[4] != 0;
        return 0;
    case TB_OP_adagrad: /* lr, lr_decay, weight_decay, eps, step */
        j->lr = v[0] / (1 + (t - 1) * v[1]);
        j->wd = v[2];
        j->eps = v[3];
        return 0;
    case TB_OP_lbfgs: /* lr */
        j->lr = v[0];
        return 0;
    case TB_OP_adabound: /* lr, b1, b2, final_lr, gamma, eps, wd, step */
        j->b1 = v[1];
        j->omb1 = 1 - v[1];
        j->b2 = v[2];
        j->omb2 = 1 - v[2];
        j->lr = v[0] * sqrt(1 - pow(v[2], t)) / (1 - pow(v[1], t));
        j->lo = v[3] * (1 - 1 / (v[4] * t + 1));
        j->hi = v[3] * (1 + 1 / (v[4] * t));
        j->eps = v[5];
        j->wd = v[6];
        return 0;
    default:
        break;
    }
    /* lr, beta1, beta2, eps, weight_decay[, momentum_decay], step */
    double lr = v[0], b1 = v[1], b2 = v[2];
    double bc1 = 1 - pow(b1, t), bc2 = 1 - pow(b2, t);
    j->b1 = b1;
    j->omb1 = 1 - b1;
    j->b2 = b2;
    j->omb2 = 1 - b2;
    j->eps = v[3];
    j->wd = v[4];
    switch (op->id) {
    case TB_OP_adam:
        j->lr = lr / bc1;
        j->scale = 1 / sqrt(bc2);
        break;
    case TB_OP_adamw:
        j->lr = lr / bc1;
        j->scale = 1 / sqrt(bc2);
        j->decay = 1 - lr * v[4];
        j->wd = 0; /* decoupled: not added to g */
        break;
    case TB_OP_adamax:
        j->lr = lr / bc1;
        break;
    case TB_OP_lamb: /* r = m (1/bc1) / (sqrt(v (1/bc2)) + eps) + wd p */
        j->lr = lr;
        j->c2 = 1 / bc1;
        j->scale = 1 / bc2;
        break;
    case TB_OP_nadam: {
        double md = v[5];
        double mu = tb_nadam_mu(b1, md, t);
        double mu_next = tb_nadam_mu(b1, md, t + 1);
        double prod = tb_nadam_mu_product(b1, md, t);
        j->lr = lr * (1 - mu) / (1 - prod);          /* of g */
        j->c2 = lr * mu_next / (1 - prod * mu_next); /* of m */
        j->scale = 1 / bc2;
        break;
    }
    case TB_OP_radam: {
        double rho_inf = 2 / (1 - b2) - 1;
        double rho_t = rho_inf - 2 * t * pow(b2, t) / bc2;
        j->rect = rho_t > 5;
        if (j->rect)
            j->lr = lr / bc1 * sqrt(bc2) *
                    sqrt((rho_t - 4) * (rho_t - 2) * rho_inf /
                         ((rho_inf - 4) * (rho_inf - 2) * rho_t));
        else
            j->lr = lr / bc1;
        break;
    }
    default:
        return TB_EUNSUPPORTED;
    }
    return 0;
}

/* Checks the operands (check) and fills j (prepare, then the operands'
 * pointers); the element count in *n. */
static int setup(tb_op_id id, tb_dtype dt, const tb_tensor *in,
                 const tb_tensor *out, const tb_params *p, tb_optim_job *j,
                 int64_t *n)
{
    const tb_op *op = tb_op_get(id);
    if (!op || !in || !out)
        return TB_EINVAL;
    int rc = check(op, dt, in, out, p, n);
    if (rc || (rc = prepare(op, p, j)))
        return rc;
    for (int i = 0; i < op->n_in; i++)
        j->in[i] = in[i].data;
    for (int o = 0; o < op->n_out; o++)
        j->out[o] = out[o].data;
    return 0;
}

/* ---- the kernel ------------------------------------------------------------ */

typedef struct task {
    const tb_optim_job *j;
    int64_t n;
    loops_fn simd, tail;
} task;

/* Spans start on multiples of 16 elements (a 64-byte line of f32) so
 * the threads do not share a cache line they write. */
static void run_part(void *arg, int part, int nparts)
{
    const task *t = arg;
    int64_t b, e;
    tb_cpu_span(t->n, 16, part, nparts, &b, &e);
    if (b < e)
        t->tail(t->j, t->simd(t->j, b, e), e);
}

/* ---- lamb and lbfgs: passes with deterministic sums ---------------------- */

typedef void (*red_fn)(const tb_red_job *r, int64_t b, int64_t e,
                       double part[3]);

typedef struct red_task {
    tb_red_job *r;
    red_fn fn;
} red_task;

/* A part takes whole chunks; chunk c is tb_cpu_span's share c of
 * TB_OPTIM_CHUNKS, whatever the thread count. */
static void red_part(void *arg, int part, int nparts)
{
    const red_task *t = arg;
    int c0 = (int)((int64_t)part * TB_OPTIM_CHUNKS / nparts);
    int c1 = (int)((int64_t)(part + 1) * TB_OPTIM_CHUNKS / nparts);
    for (int c = c0; c < c1; c++) {
        int64_t b, e;
        tb_cpu_span(t->r->n, 16, c, TB_OPTIM_CHUNKS, &b, &e);
        t->r->part[c][0] = t->r->part[c][1] = t->r->part[c][2] = 0;
        if (b < e)
            t->fn(t->r, b, e, t->r->part[c]);
    }
}

/* Runs phase ph over r's n elements; its sums in s[0], s[1], s[2]. */
static void red_pass(void *ctx, const red_task *t, tb_red_phase ph,
                     double s[3])
{
    t->r->phase = ph;
    tb_cpu_parallel(ctx, t->r->n, TB_OPTIM_CHUNKS, red_part, (void *)t);
    s[0] = s[1] = s[2] = 0;
    for (int c = 0; c < TB_OPTIM_CHUNKS; c++) {
        s[0] += t->r->part[c][0];
        s[1] += t->r->part[c][1];
        s[2] += t->r->part[c][2];
    }
}

/* lamb: moments and the two norms, then p -= lr |p| / |r| r. */
static void lamb_run(void *ctx, const red_task *t)
{
    double s[3];
    red_pass(ctx, t, TB_RED_LAMB_MOMENTS, s);
    double ratio = s[0] > 0 && s[1] > 0 ? sqrt(s[0]) / sqrt(s[1]) : 1;
    t->r->c = t->r->j->lr * ratio;
    red_pass(ctx, t, TB_RED_LAMB_UPDATE, s);
}

/* lbfgs: the two-loop recursion of ref_optim.c's tb_ref_lbfgs, with the
 * direction built in out[1]; m pairs of n elements, rows of S and Y.
 * Each update of q is fused with the pass after it (the next dot
 * product, or the step), and the first loop's pass over s_k also sums
 * s_k . y_k and y_k . y_k (rho_k, gamma): q = -g with the first s.q,
 * q += c y with the next s.q, the last with gamma's scaling and the
 * first y.q, and so on, the last q += c s with p + lr q: 2m + 1 passes
 * (a pair whose rho is 0 still takes its first-loop pass, its s.q
 * unused, no update left pending), each element's operations and every
 * sum as unfused passes would give them. */
static void lbfgs_run(void *ctx, const red_task *t, const tb_tensor *in,
                      tb_tensor *out, int64_t m)
{
    tb_red_job *r = t->r;
    const size_t row = (size_t)r->n * tb_dtype_size(in[2].dtype);
    const char *S = in[2].data, *Y = in[3].data;
    double rho[TB_LBFGS_MAX_HIST], al[TB_LBFGS_MAX_HIST], gamma = 1, s[3];
    int newest = 1; /* gamma: the newest pair whose rho is not 0 */
    /* the pending update of q: q = -g */
    r->q = out[1].data;
    r->a = in[1].data;
    r->c = -1;
    r->axpy = r->scale2 = 0;
    for (int64_t k = m - 1; k >= 0; k--) {
        r->b = S + k * row;
        r->y = Y + k * row;
        red_pass(ctx, t, TB_RED_UPD_DOT3, s); /* s_k . q, s.y, y.y */
        rho[k] = s[1] > TB_LBFGS_MIN_YS ? 1 / s[1] : 0;
        r->axpy = 2; /* the update is done; none pending */
        if (rho[k] == 0)
            continue;
        if (newest)
            gamma = s[1] / s[2];
        newest = 0;
        al[k] = s[0] * rho[k];
        r->a = Y + k * row; /* then q -= al y_k */
        r->c = -al[k];
        r->axpy = 1;
    }
    r->c2 = gamma; /* then q *= gamma */
    r->scale2 = 1;
    for (int64_t k = 0; k < m; k++) {
        if (rho[k] == 0)
            continue;
        r->b = Y + k * row;
        red_pass(ctx, t, TB_RED_UPD_DOT, s); /* y_k . q */
        r->a = S + k * row; /* then q += (al - be) s_k */
        r->c = al[k] - s[0] * rho[k];
        r->axpy = 1;
        r->scale2 = 0;
    }
    r->p = in[0].data;
    r->out = out[0].data;
    red_pass(ctx, t, TB_RED_UPD_STEP, s);
}

/* The step of op id at level lv (a level this build has: its rows exist
 * only then, kreg.h). */
static int optim_run(void *ctx, tb_op_id id, tb_dtype dt,
                     const tb_tensor *in, tb_tensor *out, const tb_params *p,
                     int lv)
{
    tb_cpu_count_launch(ctx);
    tb_optim_job j = {0};
    int64_t n;
    int rc = setup(id, dt, in, out, p, &j, &n);
    if (rc)
        return rc;
    loops_fn simd = loops[dt][lv];
    if (!simd) /* avx512bf16 but for bf16: avx512's */
        simd = loops[dt][tb_cpu_isa_clamp(lv, TB_ISA_AVX512)];
    simd = optim_ymm(id, dt, lv, n, simd);
    task t = {&j, n, simd, loops[dt][TB_ISA_SCALAR]};
    tb_cpu_parallel(ctx, n, (n + 15) / 16, run_part, &t);
    return 0;
}

/* lamb or lbfgs with the loops fn (a row's level's). */
static int red_run(void *ctx, tb_op_id id, tb_dtype dt, const tb_tensor *in,
                   tb_tensor *out, const tb_params *p, red_fn fn)
{
    tb_cpu_count_launch(ctx);
    tb_optim_job j = {0};
    int64_t n;
    int rc = setup(id, dt, in, out, p, &j, &n);
    if (rc)
        return rc;
    tb_red_job r = {.j = &j, .n = n};
    red_task t = {&r, fn};
    if (id == TB_OP_lamb)
        lamb_run(ctx, &t);
    else
        lbfgs_run(ctx, &t, in, out, in[2].shape[0]);
    return 0;
}

/* lamb's loops of the mixed-precision form per dtype (bf16, f16) and
 * level; NULL where the level is not built. */
#if TB_CPU_HAVE_AVX2
#define RED_AVX2(dt) tb_cpu_red_##dt##_avx2
#else
#define RED_AVX2(dt) NULL
#endif
#if TB_CPU_HAVE_AVX512
#define RED_AVX512(dt) tb_cpu_red_##dt##_avx512
#else
#define RED_AVX512(dt) NULL
#endif
static const red_fn red_half[2][TB_ISA_AVX512 + 1] = {
    {red_bf16, RED_AVX2(bf16), RED_AVX512(bf16)},
    {red_f16, RED_AVX2(f16), RED_AVX512(f16)},
};

int tb_cpu_optim_half(void *ctx, tb_op_id id, tb_dtype dt, int isa,
                      const tb_tensor *in, tb_tensor *out,
                      const tb_params *p)
{
    if (id == TB_OP_lbfgs || (dt != TB_BF16 && dt != TB_F16))
        return 1;
    if (id == TB_OP_lamb) {
        red_fn fn = red_half[dt == TB_F16]
                            [tb_cpu_isa_clamp(isa, TB_ISA_AVX512)];
        return fn ? red_run(ctx, id, dt, in, out, p, fn) : 1;
    }
    return optim_run(ctx, id, dt, in, out, p, isa);
}

/* The loops of a row (kreg.h's TB_CPU_ROWS_OPTIM_RED). */
#define RED_FN_f32_c red_f32
#define RED_FN_f64_c red_f64
#define RED_FN_f32_avx2 tb_cpu_red_f32_avx2
#define RED_FN_f32_avx512 tb_cpu_red_f32_avx512
#define RED_FN_f64_avx2 tb_cpu_red_f64_avx2
#define RED_FN_f64_avx512 tb_cpu_red_f64_avx512
#define RED_ENTRY(op, dt, sfx, c)                                         \
    int TB_CPU_KFN(op, dt, sfx)(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        if (ctx && tb_cpu_isa(ctx) < TB_CPU_LV_##sfx)                     \
            return TB_EUNSUPPORTED;                                       \
        return red_run(ctx, TB_OP_##op, TB_CPU_DT_##dt, in, out, p,       \
                       RED_FN_##dt##_##sfx);                              \
    }
TB_CPU_ROWS_OPTIM_RED(RED_ENTRY)

/* The entry points of the optimizer family's rows (kreg.h), one per op,
 * dtype and level: every row of the family is this file's. */
#define OPTIM_ENTRY(op, dt, sfx, c)                                       \
    int TB_CPU_KFN(op, dt, sfx)(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        if (ctx && tb_cpu_isa(ctx) < TB_CPU_LV_##sfx)                     \
            return TB_EUNSUPPORTED;                                       \
        return optim_run(ctx, TB_OP_##op, TB_CPU_DT_##dt, in, out, p,     \
                         TB_CPU_LV_##sfx);                                \
    }
TB_CPU_ROWS_OPTIM(OPTIM_ENTRY)
