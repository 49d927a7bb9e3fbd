/* mix_tp: the throughput of the random ops' 64-bit mix (rand_simd_mix.h's
 * rs_mix: splitmix64's finalizer, 3 shifts, 3 xors, 2 vpmullq per 8
 * lanes) and of dropout's AVX-512 steps (dropout_simd.h) in registers,
 * measured (issue 34: llvm-mca 19's znver4 model gives dropout's step 5
 * cycles for 16 f32 elements, where this Zen 4 runs the mix alone at
 * about 5 cycles for 8 lanes: vpsrlq zmm issues one a cycle here, so the
 * dropout rows' compute bounds in docs/perf-data/compute-bounds.json are
 * stated from these figures).
 *
 *   cc -O2 -mavx512f -mavx512dq -mavx512bw -mavx512vl \
 *      -o /tmp/mix_tp scripts/mix_tp.c
 *   /tmp/mix_tp [rounds]
 *
 * With -DMIX_TP_ROWS (scripts/mix_tp_rows.py builds it so, linking the
 * kb_ loops of scripts/kernel_bounds{,_rand,_half,_f64}.c and the
 * optimizers' avx512 files at their release flags) it also times those
 * rows' own loops on L1-resident buffers (below), and a few forms of
 * sgd's 16-bit step, the figures the hand-stated znver4 entries cite.
 *
 * Not a test (tests/meson.build only builds it; it needs AVX-512 to
 * run).  Each loop
 * runs CH independent chains of counters (no dependency between them but
 * each chain's counter add), nothing loaded or stored, so its time is
 * the ports' time for the operations; the core clock comes from a chain
 * of dependent integer adds (1 cycle each) run just before, so the
 * figures are in core cycles.  Each figure is the smallest of ROUNDS
 * rounds (default 41), the clock the largest. */
#define _POSIX_C_SOURCE 199309L
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tp_clock.h" /* now, ITERS, chain */

static inline __m512i mix(__m512i z)
{
    const __m512i c1 = _mm512_set1_epi64((long long)0xbf58476d1ce4e5b9ull);
    const __m512i c2 = _mm512_set1_epi64((long long)0x94d049bb133111ebull);
    z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 30));
    z = _mm512_mullo_epi64(z, c1);
    z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 27));
    z = _mm512_mullo_epi64(z, c2);
    return _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
}

/* keep an opaque value live (no code) */
#define LIVE(v) __asm__ volatile("" : "+v"(v))

/* 4 chains of 8 lanes: the mix and the counter's add, the result
 * xor-folded into the chain's own accumulator */
static double mix_only(void)
{
    const __m512i st = _mm512_set1_epi64(0x9e3779b97f4a7c15ll);
    __m512i z0 = _mm512_set1_epi64(1), z1 = _mm512_set1_epi64(2),
            z2 = _mm512_set1_epi64(3), z3 = _mm512_set1_epi64(4);
    double t0 = now();
    for (long i = 0; i < ITERS; i++) {
        __m512i a0 = mix(z0), a1 = mix(z1), a2 = mix(z2), a3 = mix(z3);
        LIVE(a0);
        LIVE(a1);
        LIVE(a2);
        LIVE(a3);
        z0 = _mm512_add_epi64(z0, st);
        z1 = _mm512_add_epi64(z1, st);
        z2 = _mm512_add_epi64(z2, st);
        z3 = _mm512_add_epi64(z3, st);
    }
    double t = now() - t0;
    LIVE(z0);
    LIVE(z1);
    LIVE(z2);
    LIVE(z3);
    return t;
}

/* dropout f32's step (dropout_simd.h, AVX-512) on a register x: two
 * 8-lane keep masks, kunpckbw, the masked scale, the product; two
 * steps (32 elements) a loop iteration */
static double drop_f32(void)
{
    const __m512i st = _mm512_set1_epi64(0x9e3779b97f4a7c15ll);
    const __m512i t = _mm512_set1_epi64(1ll << 60);
    const __m512 vs = _mm512_set1_ps(1.1f);
    __m512 x0 = _mm512_set1_ps(0.5f), x1 = _mm512_set1_ps(0.25f);
    __m512i z0 = _mm512_set1_epi64(1), z1 = _mm512_set1_epi64(2),
            z2 = _mm512_set1_epi64(3), z3 = _mm512_set1_epi64(4);
    double t0 = now();
    for (long i = 0; i < ITERS; i++) {
        __mmask8 k0 = _mm512_cmpge_epu64_mask(mix(z0), t);
        __mmask8 k1 = _mm512_cmpge_epu64_mask(mix(z1), t);
        __mmask8 k2 = _mm512_cmpge_epu64_mask(mix(z2), t);
        __mmask8 k3 = _mm512_cmpge_epu64_mask(mix(z3), t);
        __m512 o0 = _mm512_mul_ps(
            x0, _mm512_maskz_mov_ps(_mm512_kunpackb(k1, k0), vs));
        __m512 o1 = _mm512_mul_ps(
            x1, _mm512_maskz_mov_ps(_mm512_kunpackb(k3, k2), vs));
        LIVE(o0);
        LIVE(o1);
        z0 = _mm512_add_epi64(z0, st);
        z1 = _mm512_add_epi64(z1, st);
        z2 = _mm512_add_epi64(z2, st);
        z3 = _mm512_add_epi64(z3, st);
    }
    double t1 = now() - t0;
    LIVE(x0);
    LIVE(z0);
    return t1;
}

/* dropout f64's step: one 8-lane keep mask, the masked scale, the
 * product; four steps a loop iteration */
static double drop_f64(void)
{
    const __m512i st = _mm512_set1_epi64(0x9e3779b97f4a7c15ll);
    const __m512i t = _mm512_set1_epi64(1ll << 60);
    const __m512d vs = _mm512_set1_pd(1.1);
    __m512d x = _mm512_set1_pd(0.5);
    __m512i z0 = _mm512_set1_epi64(1), z1 = _mm512_set1_epi64(2),
            z2 = _mm512_set1_epi64(3), z3 = _mm512_set1_epi64(4);
    double t0 = now();
    for (long i = 0; i < ITERS; i++) {
#define D1(z)                                                             \
    {                                                                     \
        __m512d o = _mm512_mul_pd(                                        \
            x, _mm512_maskz_mov_pd(_mm512_cmpge_epu64_mask(mix(z), t), vs)); \
        LIVE(o);                                                          \
        z = _mm512_add_epi64(z, st);                                      \
    }
        D1(z0) D1(z1) D1(z2) D1(z3)
#undef D1
    }
    double t1 = now() - t0;
    LIVE(x);
    LIVE(z0);
    return t1;
}

#ifdef MIX_TP_ROWS
/* The kernel rows' own loops on L1-resident buffers: the kb_ROW
 * functions of scripts/kernel_bounds.c, _rand.c, _half.c and _f64.c (the
 * loops llvm-mca prices, the shipped rows' steps with the rows' inline
 * functions), compiled with their level's release flags and linked in
 * by scripts/mix_tp_rows.py.  Each call runs the row's loop over RN
 * elements (at most 24 KiB of operands and results: L1-resident after
 * the first call), the inputs in the benchmark's domain (every lane on
 * the fast path: [-1, 1]; pow's bases [0.1, 2], exponents [-2, 2]), so
 * the time is the loop's own throughput, loop control, loads and stores
 * included. */
void kb_exp(const float *x, float *y, long n);
void kb_rand_uniform_f32(void *o, long n, uint64_t key, double hi);
void kb_rand_uniform_f16(void *o, long n, uint64_t key, double hi);
void kb_rand_uniform_bf16(void *o, long n, uint64_t key, double hi);
void kb_rand_uniform_f64(double *o, long n, uint64_t key, double d);
unsigned kb_rand_normal_f32(void *o, long n, uint64_t key, double mean,
                            double sd);
unsigned kb_rand_normal_bf16(void *o, long n, uint64_t key, double mean,
                             double sd);
unsigned kb_rand_normal_f16(void *o, long n, uint64_t key, double mean,
                            double sd);
void kb_rand_normal_f64(double *y, long n, uint64_t key);
void kb_pow_bf16(const uint16_t *a, const uint16_t *b, uint16_t *o, long n);
void kb_pow_f16(const uint16_t *a, const uint16_t *b, uint16_t *o, long n);
void kb_sigmoid_backward_bf16(const uint16_t *a, const uint16_t *b,
                              uint16_t *o, long n);
void kb_sigmoid_backward_f16(const uint16_t *a, const uint16_t *b,
                             uint16_t *o, long n);
void kb_tanh_backward_bf16(const uint16_t *a, const uint16_t *b,
                           uint16_t *o, long n);
void kb_tanh_backward_f16(const uint16_t *a, const uint16_t *b, uint16_t *o,
                          long n);
void kb_pow_f64(const double *a, const double *b, double *y, long n);
void kb_log_bf16(const uint16_t *pa, uint16_t *po, long n);
void kb_log_f16(const uint16_t *pa, uint16_t *po, long n);
void kb_tanh_f64(const double *x, double *y, long n);
void kb_exp_f64(const double *x, double *y, long n);
void kb_log_f64(const double *x, double *y, long n);
void kb_sigmoid_f64(const double *x, double *y, long n);
void kb_silu_f64(const double *x, double *y, long n);
void kb_gelu_tanh_f64(const double *x, double *y, long n);
void kb_softplus_f64(const double *x, double *y, long n);
void kb_sigmoid_backward_f64(const double *g, const double *x, double *y,
                             long n);
void kb_tanh_backward_f64(const double *g, const double *x, double *y,
                          long n);

/* the 16-bit pow's chunk fallback (hs_pow_ch_*: lanes off the short
 * log2's path) calls the f32 row; no input here takes it */
void tb_cpu_pow_f32_avx512(void);
void tb_cpu_pow_f32_avx512(void)
{
    abort();
}

#define RN 1024L /* elements a call */
#define RCALLS 16L /* calls a round: short rounds, the smallest kept */
static double da[RN], db[RN], dy[RN];
static uint16_t ba[RN], bb[RN], fa[RN], fb[RN], ho[RN];

static uint16_t to_bf16(double x)
{
    union { float f; uint32_t u; } v = {(float)x};
    return (uint16_t)((v.u + 0x7fff + ((v.u >> 16) & 1)) >> 16);
}

/* x normal in f16's range (|x| >= 2^-14 or 0), rounded to nearest */
static uint16_t to_f16(double x)
{
    uint16_t sg = x < 0 ? 0x8000 : 0;
    double a = x < 0 ? -x : x;
    if (a < 0x1p-14)
        return sg;
    int e = 0;
    while (a >= 2) {
        a /= 2;
        e++;
    }
    while (a < 1) {
        a *= 2;
        e--;
    }
    long m = (long)((a - 1) * 1024 + 0.5);
    if (m == 1024) {
        m = 0;
        e++;
    }
    return (uint16_t)(sg | (uint16_t)((e + 15) << 10) | (uint16_t)m);
}

static void row_inputs(void)
{
    uint64_t s = 12345;
    for (long i = 0; i < RN; i++) {
        double u[2];
        for (int k = 0; k < 2; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            u[k] = (double)(s >> 11) * 0x1p-53; /* [0, 1) */
        }
        da[i] = 2 * u[0] - 1;
        db[i] = 2 * u[1] - 1;
        ba[i] = to_bf16(0.1 + 1.9 * u[0]);
        bb[i] = to_bf16(4 * u[1] - 2);
        fa[i] = to_f16(0.1 + 1.9 * u[0]);
        fb[i] = to_f16(4 * u[1] - 2);
    }
}

/* bwd and pow inputs differ: the 16-bit bwd rows take g, x in [-1, 1] */
static uint16_t gb[RN], xb[RN], gf[RN], xf[RN];
static double pa[RN], pb[RN];
static float fx32[RN], fy32[RN]; /* the f32 rows' x in [-1, 1], y */

static void row_inputs2(void)
{
    for (long i = 0; i < RN; i++) {
        gb[i] = to_bf16(da[i]);
        xb[i] = to_bf16(db[i]);
        gf[i] = to_f16(da[i]);
        xf[i] = to_f16(db[i]);
        pa[i] = 0.1 + 1.9 * (da[i] + 1) / 2;
        pb[i] = 2 * db[i];
        fx32[i] = (float)da[i];
    }
}

#define ROW_T(NAME, CALL)                                                 \
    static double NAME(void)                                              \
    {                                                                     \
        double t0 = now();                                                \
        for (long r = 0; r < RCALLS; r++) {                               \
            CALL;                                                         \
            __asm__ volatile("" ::: "memory");                            \
        }                                                                 \
        return now() - t0;                                                \
    }
ROW_T(r_exp_f32, kb_exp(fx32, fy32, RN))
ROW_T(r_uni_f32, kb_rand_uniform_f32(dy, RN, 7, 1.0))
ROW_T(r_uni_f16, kb_rand_uniform_f16(ho, RN, 7, 1.0))
ROW_T(r_uni_bf16, kb_rand_uniform_bf16(ho, RN, 7, 1.0))
ROW_T(r_uni_f64, kb_rand_uniform_f64(dy, RN, 7, 1.0))
ROW_T(r_nor_f32, kb_rand_normal_f32(dy, RN, 7, 0.0, 1.0))
ROW_T(r_nor_f16, kb_rand_normal_f16(ho, RN, 7, 0.0, 1.0))
ROW_T(r_nor_bf16, kb_rand_normal_bf16(ho, RN, 7, 0.0, 1.0))
ROW_T(r_nor_f64, kb_rand_normal_f64(dy, RN, 7))
ROW_T(r_pow_bf16, kb_pow_bf16(ba, bb, ho, RN))
ROW_T(r_pow_f16, kb_pow_f16(fa, fb, ho, RN))
ROW_T(r_sigb_bf16, kb_sigmoid_backward_bf16(gb, xb, ho, RN))
ROW_T(r_sigb_f16, kb_sigmoid_backward_f16(gf, xf, ho, RN))
ROW_T(r_tanhb_bf16, kb_tanh_backward_bf16(gb, xb, ho, RN))
ROW_T(r_tanhb_f16, kb_tanh_backward_f16(gf, xf, ho, RN))
ROW_T(r_log_bf16, kb_log_bf16(ba, ho, RN))
ROW_T(r_log_f16, kb_log_f16(fa, ho, RN))
ROW_T(r_pow_f64, kb_pow_f64(pa, pb, dy, RN))
ROW_T(r_tanh_f64, kb_tanh_f64(da, dy, RN))
ROW_T(r_exp_f64, kb_exp_f64(da, dy, RN))
ROW_T(r_log_f64, kb_log_f64(pa, dy, RN))
ROW_T(r_sig_f64, kb_sigmoid_f64(da, dy, RN))
ROW_T(r_silu_f64, kb_silu_f64(da, dy, RN))
ROW_T(r_gelut_f64, kb_gelu_tanh_f64(da, dy, RN))
ROW_T(r_softp_f64, kb_softplus_f64(da, dy, RN))
ROW_T(r_sigb_f64, kb_sigmoid_backward_f64(da, db, dy, RN))
ROW_T(r_tanhb_f64, kb_tanh_backward_f64(da, db, dy, RN))

/* The optimizers' 16-bit rows (mixed precision: bf16/f16 p and g, f32
 * state): the rows' own entry points tb_optim_<dt>_<level>
 * (optim_simd_impl.h, compiled from optim_avx512bf16.c and
 * optim_avx512.c with their flags) on RN elements, the table's cases'
 * parameters (sgd lr 0.01; sgd_momentum 0.01, momentum 0.9; adamax lr
 * 0.002, betas 0.9, 0.999, eps 1e-8, step 10), results written apart
 * from the inputs (every call the same work). */
#include "backends/cpu/optim_simd.h"
#include "ops/op.h"

static float st1[RN], st2[RN], so1[RN], so2[RN];
static float la32[RN], lb32[RN]; /* lbfgs's f32 operands (below) */
static uint16_t ho2[RN];

static tb_optim_job opt_job(int op, const uint16_t *p, const uint16_t *g)
{
    tb_optim_job j;
    memset(&j, 0, sizeof j);
    j.op = op;
    j.in[0] = p;
    j.in[1] = g;
    j.out[0] = ho2;
    switch (op) {
    case TB_OP_sgd:
        j.lr = 0.01;
        break;
    case TB_OP_sgd_momentum:
        j.lr = 0.01;
        j.b1 = 0.9;
        j.c2 = 1;
        j.mom = true;
        j.in[2] = st1;
        j.out[1] = so1;
        break;
    default: /* adamax */
        j.b1 = 0.9;
        j.omb1 = 0.1;
        j.b2 = 0.999;
        j.omb2 = 0.001;
        j.eps = 1e-8;
        j.lr = 0.002 / (1 - 0.3486784401); /* 1 - 0.9^10 */
        j.in[2] = st1;
        j.in[3] = st2;
        j.out[1] = so1;
        j.out[2] = so2;
        break;
    }
    return j;
}

static void opt_inputs(void)
{
    for (long i = 0; i < RN; i++) {
        st1[i] = (float)(0.1 * da[i]);
        st2[i] = (float)(0.1 + 0.45 * (db[i] + 1));
        la32[i] = (float)da[i];
        lb32[i] = (float)db[i];
    }
}

#define OPT_T(NAME, OP, FN, P, G)                                         \
    static double NAME(void)                                              \
    {                                                                     \
        const tb_optim_job j = opt_job(OP, P, G);                         \
        double t0 = now();                                                \
        for (long r = 0; r < RCALLS; r++) {                               \
            if (FN(&j, 0, RN) != RN)                                      \
                abort();                                                  \
            __asm__ volatile("" ::: "memory");                            \
        }                                                                 \
        return now() - t0;                                                \
    }
OPT_T(o_sgd_bf16, TB_OP_sgd, tb_optim_bf16_avx512bf16, gb, xb)
OPT_T(o_sgd_f16, TB_OP_sgd, tb_optim_f16_avx512, gf, xf)
OPT_T(o_mom_bf16, TB_OP_sgd_momentum, tb_optim_bf16_avx512bf16, gb, xb)
OPT_T(o_mom_f16, TB_OP_sgd_momentum, tb_optim_f16_avx512, gf, xf)
OPT_T(o_amax_bf16, TB_OP_adamax, tb_optim_bf16_avx512bf16, gb, xb)
OPT_T(o_amax_f16, TB_OP_adamax, tb_optim_f16_avx512, gf, xf)
#undef OPT_T

/* The optimizers' f64 rows with a square root and a divide an element
 * (adam, adamw, nadam, radam rectified, adabound, adagrad) and lamb's
 * two passes: the rows' own loops tb_optim_f64_avx512 (optim_avx512.c)
 * and tb_cpu_red_f64_avx512 (optim_red_avx512.c) at their release flags
 * on RN elements, the table's cases' parameters (lr 0.001, betas 0.9,
 * 0.999, eps 1e-8, step 10; adagrad lr 0.01, eps 1e-10; lamb eps 1e-6,
 * weight decay 0.01), p and g in [-1, 1], m any sign, v in [0.1, 1],
 * results written apart from the inputs. */
static double sd1[RN], sd2[RN], sdp[RN], sdo1[RN], sdo2[RN];

static tb_optim_job opt_job64(int op)
{
    const double bc1 = 1 - 0.3486784401, bc2 = 1 - 0.990044880209748;
    tb_optim_job j;
    memset(&j, 0, sizeof j);
    j.op = op;
    j.in[0] = da;
    j.in[1] = db;
    j.in[2] = op == TB_OP_adagrad ? (const double *)sd2 : sd1;
    j.in[3] = sd2;
    j.out[0] = sdp;
    j.out[1] = sdo1;
    j.out[2] = sdo2;
    j.b1 = 0.9;
    j.omb1 = 0.1;
    j.b2 = 0.999;
    j.omb2 = 0.001;
    j.eps = 1e-8;
    j.lr = 0.001 / bc1;
    j.scale = 1 / sqrt(bc2);
    j.decay = 1 - 0.001 * 0.01;
    j.c2 = 0.001 * 0.9 / bc1;
    j.lo = 0.09;
    j.hi = 0.11;
    j.rect = true;
    if (op == TB_OP_adagrad) {
        j.lr = 0.01;
        j.eps = 1e-10;
    }
    return j;
}

#define OPT64_T(NAME, OP)                                                 \
    static double NAME(void)                                              \
    {                                                                     \
        const tb_optim_job j = opt_job64(OP);                             \
        double t0 = now();                                                \
        for (long r = 0; r < RCALLS; r++) {                               \
            if (tb_optim_f64_avx512(&j, 0, RN) != RN)                     \
                abort();                                                  \
            __asm__ volatile("" ::: "memory");                            \
        }                                                                 \
        return now() - t0;                                                \
    }
OPT64_T(o_adam_f64, TB_OP_adam)
OPT64_T(o_adamw_f64, TB_OP_adamw)
OPT64_T(o_nadam_f64, TB_OP_nadam)
OPT64_T(o_radam_f64, TB_OP_radam)
OPT64_T(o_adabound_f64, TB_OP_adabound)
OPT64_T(o_adagrad_f64, TB_OP_adagrad)
#undef OPT64_T

/* lbfgs's passes (optim_red.h's phases): the row's own loops
 * tb_cpu_red_<dt>_avx512 (optim_red_avx512.c at its release flags) on
 * RN elements: the dot pair (s.y, y.y) and the fused update-and-dot
 * (q += c a, then b.q; with b.y and y.y: the first loop's), f32 and f64 */
#include "backends/cpu/optim_red.h"

static float lq32[RN];
static double lq64[RN];

static tb_red_job red_job(tb_red_phase ph, int f64)
{
    static tb_optim_job j; /* lr read by the update phases */
    tb_red_job r;
    memset(&r, 0, sizeof r);
    j.lr = 1;
    r.j = &j;
    r.n = RN;
    r.phase = ph;
    r.a = f64 ? (const void *)da : (const void *)la32;
    r.b = f64 ? (const void *)db : (const void *)lb32;
    r.q = f64 ? (void *)lq64 : (void *)lq32;
    r.y = r.a;
    r.c = 1e-3;
    r.axpy = 1;
    return r;
}
#define RED_T(NAME, PH, FN, F64)                                          \
    static double NAME(void)                                              \
    {                                                                     \
        static tb_red_job r;                                              \
        r = red_job(PH, F64);                                             \
        double part[3] = {0, 0, 0};                                       \
        double t0 = now();                                                \
        for (long k = 0; k < RCALLS; k++) {                               \
            FN(&r, 0, RN, part);                                          \
            __asm__ volatile("" ::: "memory");                            \
        }                                                                 \
        double t = now() - t0;                                            \
        LIVE(part[0]);                                                    \
        return t;                                                         \
    }
RED_T(l_dot2_f32, TB_RED_DOT2, tb_cpu_red_f32_avx512, 0)
RED_T(l_upd_f32, TB_RED_UPD_DOT, tb_cpu_red_f32_avx512, 0)
RED_T(l_dot2_f64, TB_RED_DOT2, tb_cpu_red_f64_avx512, 1)
RED_T(l_upd_f64, TB_RED_UPD_DOT, tb_cpu_red_f64_avx512, 1)
RED_T(l_upd3_f32, TB_RED_UPD_DOT3, tb_cpu_red_f32_avx512, 0)
RED_T(l_upd3_f64, TB_RED_UPD_DOT3, tb_cpu_red_f64_avx512, 1)
#undef RED_T

/* lamb f64's passes (moments and norms; the update), the row's loop */
#define LAMB_T(NAME, PH)                                                  \
    static double NAME(void)                                              \
    {                                                                     \
        static tb_optim_job j;                                            \
        static tb_red_job r;                                              \
        j = opt_job64(TB_OP_lamb);                                        \
        j.eps = 1e-6;                                                     \
        j.wd = 0.01;                                                      \
        j.c2 = 1 / (1 - 0.3486784401);                                    \
        j.scale = 1 / (1 - 0.990044880209748);                            \
        memset(&r, 0, sizeof r);                                          \
        r.j = &j;                                                         \
        r.n = RN;                                                         \
        r.phase = PH;                                                     \
        r.c = 1e-3;                                                       \
        if (PH == TB_RED_LAMB_UPDATE) { /* m, v read from the outputs */  \
            memcpy(sdo1, sd1, sizeof sd1);                                \
            memcpy(sdo2, sd2, sizeof sd2);                                \
        }                                                                 \
        double part[3] = {0, 0, 0};                                       \
        double t0 = now();                                                \
        for (long k = 0; k < RCALLS; k++) {                               \
            tb_cpu_red_f64_avx512(&r, 0, RN, part);                       \
            __asm__ volatile("" ::: "memory");                            \
        }                                                                 \
        double t = now() - t0;                                            \
        LIVE(part[0]);                                                    \
        return t;                                                         \
    }
LAMB_T(l_lamb1_f64, TB_RED_LAMB_MOMENTS)
LAMB_T(l_lamb2_f64, TB_RED_LAMB_UPDATE)
#undef LAMB_T

/* sgd bf16's step two ways, on RN elements (no subnormal check; the
 * same arithmetic: p - lr g, rounded by vcvtne*): "zx", the row's
 * widening (vpmovzxwd + vpslld a vector of 16) and narrowing
 * (vcvtneps2bf16 a vector); "unpack", 32 elements a step widened by
 * vpunpcklwd/vpunpckhwd with zero (one operation a vector of 16, the
 * lanes in the 128-bit lanes' order) and narrowed by one vcvtne2ps2bf16
 * and a vpermq back to memory order.  How much a cheaper widening would
 * buy the bf16 optimizer rows. */
__attribute__((target("avx512bf16"))) static void
sgd_zx(const uint16_t *p, const uint16_t *g, uint16_t *o, long n)
{
    const __m512 lr = _mm512_set1_ps(0.01f);
    for (long i = 0; i < n; i += 16) {
        __m512 vp = _mm512_castsi512_ps(_mm512_slli_epi32(
            _mm512_cvtepu16_epi32(_mm256_loadu_si256((const void *)(p + i))),
            16));
        __m512 vg = _mm512_castsi512_ps(_mm512_slli_epi32(
            _mm512_cvtepu16_epi32(_mm256_loadu_si256((const void *)(g + i))),
            16));
        vp = _mm512_sub_ps(vp, _mm512_mul_ps(lr, vg));
        _mm256_storeu_si256((void *)(o + i), (__m256i)_mm512_cvtneps_pbh(vp));
    }
}
__attribute__((target("avx512bf16"))) static void
sgd_unpack(const uint16_t *p, const uint16_t *g, uint16_t *o, long n)
{
    const __m512 lr = _mm512_set1_ps(0.01f);
    const __m512i z = _mm512_setzero_si512();
    const __m512i ix = _mm512_set_epi64(7, 3, 6, 2, 5, 1, 4, 0);
    for (long i = 0; i < n; i += 32) {
        __m512i hp = _mm512_loadu_si512((const void *)(p + i));
        __m512i hg = _mm512_loadu_si512((const void *)(g + i));
        __m512 p0 = _mm512_castsi512_ps(_mm512_unpacklo_epi16(z, hp));
        __m512 p1 = _mm512_castsi512_ps(_mm512_unpackhi_epi16(z, hp));
        __m512 g0 = _mm512_castsi512_ps(_mm512_unpacklo_epi16(z, hg));
        __m512 g1 = _mm512_castsi512_ps(_mm512_unpackhi_epi16(z, hg));
        p0 = _mm512_sub_ps(p0, _mm512_mul_ps(lr, g0));
        p1 = _mm512_sub_ps(p1, _mm512_mul_ps(lr, g1));
        __m512i r = (__m512i)_mm512_cvtne2ps_pbh(p1, p0);
        _mm512_storeu_si512((void *)(o + i),
                            _mm512_permutexvar_epi64(ix, r));
    }
}
/* sgd f16's step as plain as it goes (the row's arithmetic): two
 * vcvtph2ps, the product, the difference, one vcvtps2ph a vector */
static void sgd_f16_plain(const uint16_t *p, const uint16_t *g, uint16_t *o,
                          long n)
{
    const __m512 lr = _mm512_set1_ps(0.01f);
    for (long i = 0; i < n; i += 16) {
        __m512 vp = _mm512_cvtph_ps(_mm256_loadu_si256((const void *)(p + i)));
        __m512 vg = _mm512_cvtph_ps(_mm256_loadu_si256((const void *)(g + i)));
        vp = _mm512_sub_ps(vp, _mm512_mul_ps(lr, vg));
        _mm256_storeu_si256((void *)(o + i),
                            _mm512_cvtps_ph(vp, _MM_FROUND_TO_NEAREST_INT |
                                                    _MM_FROUND_NO_EXC));
    }
}
ROW_T(x_sgd_f16, sgd_f16_plain(gf, xf, ho, RN))
ROW_T(x_sgd_zx, sgd_zx(gb, xb, ho, RN))
ROW_T(x_sgd_unpack, sgd_unpack(gb, xb, ho, RN))

/* layer_norm_backward's and rms_norm_backward's two passes at avx512
 * (kernel_bounds_half.c's kb_ROW__p1 and __p2: the shipped loops of
 * norm16_simd.h over a quad of 4 rows of NBD, sums then dx with the
 * chunk's dw and db): a call is both passes over the quad, NQE elements
 * (x, g, dx, w, dw, db and the widened quad: 18 KiB at f32) */
#define NBD 256L
#define NQE (4 * NBD)
#define KB_NBW_DECL(ROW)                                                  \
    void kb_##ROW##__p1(const char *x, const char *g, const float *w,     \
                        long D, const float *c, float *sw, float (*t)[4]); \
    void kb_##ROW##__p2(const char *x, const char *g, const float *w,     \
                        char *dr, long D, const void *s, float *pw,       \
                        float *pb, const float *sw);
KB_NBW_DECL(layer_norm_backward_f32)
KB_NBW_DECL(rms_norm_backward_f32)
KB_NBW_DECL(layer_norm_backward_f16)
KB_NBW_DECL(rms_norm_backward_f16)
KB_NBW_DECL(layer_norm_backward_bf16)
KB_NBW_DECL(rms_norm_backward_bf16)
static _Alignas(64) float nb_x[NQE], nb_g[NQE], nb_dx[NQE], nb_w[NBD];
static _Alignas(64) float nb_pw[NBD], nb_pb[NBD], nb_sw[2 * NQE];
static _Alignas(64) uint16_t nb_xf[NQE], nb_gf[NQE], nb_xb[NQE], nb_gb[NQE];
static float nb_t[4][4];
static struct {
    float c[4], m[4], rstd[4], q[4], na[4];
} nb_s; /* norm16_simd.h's nb_grp */
/* x, g in [-1, 1] (the 16-bit rows' rounded from the same), w near 1,
 * the rows' scalars of a row with mean 0.1 and unit variance */
static void nb_inputs(void)
{
    for (long i = 0; i < NQE; i++) {
        nb_x[i] = (float)da[i % RN];
        nb_g[i] = (float)db[(i + 7) % RN];
        nb_xf[i] = to_f16(nb_x[i]);
        nb_gf[i] = to_f16(nb_g[i]);
        nb_xb[i] = to_bf16(nb_x[i]);
        nb_gb[i] = to_bf16(nb_g[i]);
    }
    for (long i = 0; i < NBD; i++)
        nb_w[i] = 1.0f + (float)da[i] / 64;
    for (int i = 0; i < 4; i++) {
        nb_s.c[i] = 0.1f, nb_s.m[i] = 0.01f, nb_s.rstd[i] = 1.0f;
        nb_s.q[i] = 0.01f, nb_s.na[i] = -0.001f;
    }
}
#define NB_ROW_T(NAME, ROW, X, G)                                         \
    ROW_T(NAME, (kb_##ROW##__p1((const char *)X, (const char *)G, nb_w,  \
                                NBD, nb_s.c, nb_sw, nb_t),                \
                 kb_##ROW##__p2((const char *)X, (const char *)G, nb_w,  \
                                (char *)nb_dx, NBD, &nb_s, nb_pw, nb_pb,  \
                                nb_sw)))
NB_ROW_T(n_lnb_f32, layer_norm_backward_f32, nb_x, nb_g)
NB_ROW_T(n_rnb_f32, rms_norm_backward_f32, nb_x, nb_g)
NB_ROW_T(n_lnb_f16, layer_norm_backward_f16, nb_xf, nb_gf)
NB_ROW_T(n_rnb_f16, rms_norm_backward_f16, nb_xf, nb_gf)
NB_ROW_T(n_lnb_bf16, layer_norm_backward_bf16, nb_xb, nb_gb)
NB_ROW_T(n_rnb_bf16, rms_norm_backward_bf16, nb_xb, nb_gb)
#undef NB_ROW_T
#undef ROW_T
#endif

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 41;
    static const struct {
        const char *name;
        double (*fn)(void);
        int elems; /* elements a loop iteration */
        long iters; /* loop iterations a round */
    } t[] = {
        {"mix (rs_mix, 8 lanes)", mix_only, 32, ITERS},
        {"dropout f32 step", drop_f32, 32, ITERS},
        {"dropout f64 step", drop_f64, 32, ITERS},
#ifdef MIX_TP_ROWS
        /* the rows' loops: elements a call (pow 16-bit: the pipelined
         * loop's n / 32 - 1 steps of 32) */
        {"exp_f32_avx512", r_exp_f32, RN, RCALLS},
        {"rand_uniform_f32_avx512", r_uni_f32, RN, RCALLS},
        {"rand_uniform_f16_avx512", r_uni_f16, RN, RCALLS},
        {"rand_uniform_bf16_avx512", r_uni_bf16, RN, RCALLS},
        {"rand_uniform_f64_avx512", r_uni_f64, RN, RCALLS},
        {"rand_normal_f32_avx512", r_nor_f32, RN, RCALLS},
        {"rand_normal_f16_avx512", r_nor_f16, RN, RCALLS},
        {"rand_normal_bf16_avx512", r_nor_bf16, RN, RCALLS},
        {"rand_normal_f64_avx512", r_nor_f64, RN, RCALLS},
        {"pow_bf16_avx512bf16", r_pow_bf16, RN - 32, RCALLS},
        {"pow_f16_avx512", r_pow_f16, RN - 32, RCALLS},
        {"sigmoid_backward_bf16_avx512bf16", r_sigb_bf16, RN, RCALLS},
        {"sigmoid_backward_f16_avx512", r_sigb_f16, RN, RCALLS},
        {"tanh_backward_bf16_avx512bf16", r_tanhb_bf16, RN, RCALLS},
        {"tanh_backward_f16_avx512", r_tanhb_f16, RN, RCALLS},
        {"log_bf16_avx512bf16", r_log_bf16, RN, RCALLS},
        {"log_f16_avx512", r_log_f16, RN, RCALLS},
        {"pow_f64_avx512", r_pow_f64, RN, RCALLS},
        {"tanh_f64_avx512", r_tanh_f64, RN, RCALLS},
        {"exp_f64_avx512", r_exp_f64, RN, RCALLS},
        {"log_f64_avx512", r_log_f64, RN, RCALLS},
        {"sigmoid_f64_avx512", r_sig_f64, RN, RCALLS},
        {"silu_f64_avx512", r_silu_f64, RN, RCALLS},
        {"gelu_tanh_f64_avx512", r_gelut_f64, RN, RCALLS},
        {"softplus_f64_avx512", r_softp_f64, RN, RCALLS},
        {"sigmoid_backward_f64_avx512", r_sigb_f64, RN, RCALLS},
        {"tanh_backward_f64_avx512", r_tanhb_f64, RN, RCALLS},
        {"sgd_bf16_avx512bf16", o_sgd_bf16, RN, RCALLS},
        {"sgd_f16_avx512", o_sgd_f16, RN, RCALLS},
        {"sgd_momentum_bf16_avx512bf16", o_mom_bf16, RN, RCALLS},
        {"sgd_momentum_f16_avx512", o_mom_f16, RN, RCALLS},
        {"adamax_bf16_avx512bf16", o_amax_bf16, RN, RCALLS},
        {"adamax_f16_avx512", o_amax_f16, RN, RCALLS},
        {"sgd bf16 step: zx (the row's)", x_sgd_zx, RN, RCALLS},
        {"sgd bf16 step: unpack", x_sgd_unpack, RN, RCALLS},
        {"sgd f16 step: plain", x_sgd_f16, RN, RCALLS},
        {"lbfgs f32 pass: s.y, y.y", l_dot2_f32, RN, RCALLS},
        {"lbfgs f32 pass: q += c a, b.q", l_upd_f32, RN, RCALLS},
        {"lbfgs f64 pass: s.y, y.y", l_dot2_f64, RN, RCALLS},
        {"lbfgs f64 pass: q += c a, b.q", l_upd_f64, RN, RCALLS},
        {"lbfgs f32 pass: q += c a, b.q, b.y, y.y", l_upd3_f32, RN, RCALLS},
        {"lbfgs f64 pass: q += c a, b.q, b.y, y.y", l_upd3_f64, RN, RCALLS},
        {"adam_f64_avx512", o_adam_f64, RN, RCALLS},
        {"adamw_f64_avx512", o_adamw_f64, RN, RCALLS},
        {"nadam_f64_avx512", o_nadam_f64, RN, RCALLS},
        {"radam_f64_avx512", o_radam_f64, RN, RCALLS},
        {"adabound_f64_avx512", o_adabound_f64, RN, RCALLS},
        {"adagrad_f64_avx512", o_adagrad_f64, RN, RCALLS},
        {"lamb f64 pass 1: moments, norms", l_lamb1_f64, RN, RCALLS},
        {"lamb f64 pass 2: update", l_lamb2_f64, RN, RCALLS},
        {"layer_norm_backward_f32_avx512", n_lnb_f32, NQE, RCALLS},
        {"rms_norm_backward_f32_avx512", n_rnb_f32, NQE, RCALLS},
        {"layer_norm_backward_f16_avx512", n_lnb_f16, NQE, RCALLS},
        {"rms_norm_backward_f16_avx512", n_rnb_f16, NQE, RCALLS},
        {"layer_norm_backward_bf16_avx512", n_lnb_bf16, NQE, RCALLS},
        {"rms_norm_backward_bf16_avx512", n_rnb_bf16, NQE, RCALLS},
#endif
    };
#ifdef MIX_TP_ROWS
    row_inputs();
    row_inputs2();
    opt_inputs();
    nb_inputs();
    for (long i = 0; i < RN; i++) {
        sd1[i] = 0.1 * da[i];
        sd2[i] = 0.1 + 0.45 * (db[i] + 1);
    }
#endif
    double clk = 0;
    for (int r = 0; r < rounds; r++) {
        double c = (double)ITERS * 8 / chain();
        clk = c > clk ? c : clk;
    }
    printf("core clock (dependent adds): %.3f GHz\n", clk * 1e-9);
    printf("%-40s %12s %14s\n", "loop", "cycles/8", "cycles/elem");
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        if (argc > 2 && !strstr(t[i].name, argv[2]))
            continue; /* [filter]: the loops whose name has it */
        double best = 1e30;
        int nr = t[i].iters == ITERS ? rounds : 20 * rounds;
        for (int r = 0; r < nr; r++) {
            double s = t[i].fn();
            best = s < best ? s : best;
        }
        double cyc = best * clk / ((double)t[i].iters * t[i].elems);
        printf("%-40s %12.2f %14.3f\n", t[i].name, 8 * cyc, cyc);
    }
    return 0;
}
