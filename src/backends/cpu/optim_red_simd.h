/* lamb's and lbfgs's loops at the SIMD levels (AVX2, AVX-512), f32 and
 * f64 from one template, for inclusion by optim_red_avx2.c and
 * optim_red_avx512.c only (built with their level's flags and
 * -ffp-contract=off): optim_red.h's phases, the same formulas operation
 * for operation in the element type, on blocks of 2 RS_W elements (two
 * dvec_simd.h vectors of doubles, or one vector of 2 RS_W floats), for
 * optim.c's driver, which splits the elements into TB_OPTIM_CHUNKS
 * chunks and adds their sums in order.
 *
 * The element-wise results (lamb's m, v and p at a given ratio, the
 * vector phases' q and out) are the C rows' bits: the same IEEE
 * operations, unfused.  The sums are in double at both dtypes, as the C
 * rows' are: an f32 block's lanes are widened to double (exactly; a
 * product of two floats is exact in double too), then fused-multiply-
 * added into two vector accumulators per sum (a block's low and high
 * half), added lane by lane at the chunk's end, then the tail by the C
 * loop (optim_red.h, in index order).  Not PyTorch's f32 accumulation:
 * a norm or dot product of n floats differs from the C row's by about
 * n 2^-53 relative (the order), not n 2^-24; well within TOL_OPT
 * (checkasm), and the same bits at any thread count.
 *
 * This header has two parts:
 *  1. (once) the block layers rb_d (f64) and rb_s (f32), optim_red.h's
 *     C loops red_c_f32 and red_c_f64, part 2 at both types, lamb's
 *     mixed-precision form (RV_TAG bf16 or f16: rb_s blocks whose p and
 *     g are read and p written as 16 bits by optim_half_simd.h, the
 *     tails by optim_red.h's loop of that form), and RV_ENTRIES(lv),
 *     which defines the level's entry points;
 *  2. (each time RV_SFX is defined, d or s, with RV_ET its element type
 *     and RV_C the name of optim_red.h's C loop of that type) static
 *     void rv_red_<sfx>(const tb_red_job *r, int64_t b, int64_t e,
 *     double part[3]) (optim.c's red_fn); the three macros are undefined
 *     at the end. */
#ifndef TB_BACKENDS_CPU_OPTIM_RED_SIMD_H
#define TB_BACKENDS_CPU_OPTIM_RED_SIMD_H

#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "dvec_simd.h"
#include "optim_half_simd.h"
#include "optim_red.h"

#include "../../ops/half.h"

/* elements per block */
#define RB_N (2 * RS_W)

/* *to += the lanes of a + b, added in order */
static inline void rv_add_lanes(double *to, rd a, rd b)
{
    double t[RS_W], s = 0;
    rs_stored(t, rs_add(a, b));
    for (int l = 0; l < RS_W; l++)
        s += t[l];
    *to += s;
}

/* ---- f64: a block is two vectors ---- */
typedef struct {
    rd lo, hi;
} rb_d;
static inline rb_d rb_load_d(const double *p)
{
    return (rb_d){rs_loadd(p), rs_loadd(p + RS_W)};
}
static inline void rb_store_d(double *p, rb_d a)
{
    rs_stored(p, a.lo);
    rs_stored(p + RS_W, a.hi);
}
static inline rb_d rb_set1_d(double v) { return (rb_d){rs_d1(v), rs_d1(v)}; }
static inline rb_d rb_add_d(rb_d a, rb_d b)
{
    return (rb_d){rs_add(a.lo, b.lo), rs_add(a.hi, b.hi)};
}
static inline rb_d rb_sub_d(rb_d a, rb_d b)
{
    return (rb_d){rs_sub(a.lo, b.lo), rs_sub(a.hi, b.hi)};
}
static inline rb_d rb_mul_d(rb_d a, rb_d b)
{
    return (rb_d){rs_mul(a.lo, b.lo), rs_mul(a.hi, b.hi)};
}
static inline rb_d rb_div_d(rb_d a, rb_d b)
{
    return (rb_d){rs_div(a.lo, b.lo), rs_div(a.hi, b.hi)};
}
static inline rb_d rb_sqrt_d(rb_d a)
{
    return (rb_d){rs_sqrt(a.lo), rs_sqrt(a.hi)};
}
/* *s0 += lo(a) lo(b), *s1 += hi(a) hi(b), fused, in double */
static inline void rb_acc_d(rd *s0, rd *s1, rb_d a, rb_d b)
{
    *s0 = rs_fma(a.lo, b.lo, *s0);
    *s1 = rs_fma(a.hi, b.hi, *s1);
}

/* ---- f32: a block is one vector of 2 RS_W floats ---- */
#if RS_W == 8
typedef __m512 rb_s;
#define RB_SI(name) _mm512_##name
#define RB_LO(a) _mm512_castps512_ps256(a)
#define RB_HI(a) _mm512_extractf32x8_ps(a, 1)
#else
typedef __m256 rb_s;
#define RB_SI(name) _mm256_##name
#define RB_LO(a) _mm256_castps256_ps128(a)
#define RB_HI(a) _mm256_extractf128_ps(a, 1)
#endif
static inline rb_s rb_load_s(const float *p) { return RB_SI(loadu_ps)(p); }
static inline void rb_store_s(float *p, rb_s a) { RB_SI(storeu_ps)(p, a); }
static inline rb_s rb_set1_s(float v) { return RB_SI(set1_ps)(v); }
static inline rb_s rb_add_s(rb_s a, rb_s b) { return RB_SI(add_ps)(a, b); }
static inline rb_s rb_sub_s(rb_s a, rb_s b) { return RB_SI(sub_ps)(a, b); }
static inline rb_s rb_mul_s(rb_s a, rb_s b) { return RB_SI(mul_ps)(a, b); }
static inline rb_s rb_div_s(rb_s a, rb_s b) { return RB_SI(div_ps)(a, b); }
static inline rb_s rb_sqrt_s(rb_s a) { return RB_SI(sqrt_ps)(a); }
/* the lanes widened to double (exact), then as rb_acc_d */
static inline void rb_acc_s(rd *s0, rd *s1, rb_s a, rb_s b)
{
    *s0 = rs_fma(RS_I(cvtps_pd)(RB_LO(a)), RS_I(cvtps_pd)(RB_LO(b)), *s0);
    *s1 = rs_fma(RS_I(cvtps_pd)(RB_HI(a)), RS_I(cvtps_pd)(RB_HI(b)), *s1);
}

#define RV_CAT2(a, b) a##_##b
#define RV_CAT(a, b) RV_CAT2(a, b)

/* optim_red.h's C loops, for the tails, then part 2 at both types */
#define RED_ET float
#define RED_SQRT sqrtf
#define RED_NAME red_c_f32
#include "optim_red.h"
#define RED_ET double
#define RED_SQRT sqrt
#define RED_NAME red_c_f64
#include "optim_red.h"

#define RV_SFX s
#define RV_ET float
#define RV_C red_c_f32
#include "optim_red_simd.h"
#define RV_SFX d
#define RV_ET double
#define RV_C red_c_f64
#include "optim_red_simd.h"

/* lamb's mixed-precision form: 16-bit p and g (optim_half_simd.h's
 * loads and rounding stores, a block being one oh_v), f32 state; the
 * tails by optim_red.h's loop of the same form */
#define RED_ET float
#define RED_SQRT sqrtf
#define RED_NAME red_c_bf16
#define RED_HT uint16_t
#define RED_LDH(ptr, i) tb_bf16_to_f32((ptr)[i])
#define RED_STH(ptr, i, x) ((ptr)[i] = tb_f32_to_bf16(x))
#include "optim_red.h"
#define RED_ET float
#define RED_SQRT sqrtf
#define RED_NAME red_c_f16
#define RED_HT uint16_t
#define RED_LDH(ptr, i) tb_f16_to_f32((ptr)[i])
#define RED_STH(ptr, i, x) ((ptr)[i] = tb_f32_to_f16(x))
#include "optim_red.h"
_Static_assert(sizeof(oh_v) == sizeof(rb_s), "a block is one oh_v");
#define RV_SFX s
#define RV_ET float
#define RV_C red_c_bf16
#define RV_TAG bf16
#define RV_PT uint16_t
#define RV_LDP(ptr) oh_ld_bf16(ptr)
#define RV_STP(ptr, x) oh_st_bf16(ptr, x)
#include "optim_red_simd.h"
#define RV_SFX s
#define RV_ET float
#define RV_C red_c_f16
#define RV_TAG f16
#define RV_PT uint16_t
#define RV_LDP(ptr) oh_ld_f16(ptr)
#define RV_STP(ptr, x) oh_st_f16(ptr, x)
#include "optim_red_simd.h"

/* optim.c's tb_cpu_red_<dt>_<lv> */
#define RV_ENTRIES(lv)                                                    \
    void tb_cpu_red_f32_##lv(const tb_red_job *r, int64_t b, int64_t e,   \
                             double part[3])                              \
    {                                                                     \
        rv_red_s(r, b, e, part);                                          \
    }                                                                     \
    void tb_cpu_red_f64_##lv(const tb_red_job *r, int64_t b, int64_t e,   \
                             double part[3])                              \
    {                                                                     \
        rv_red_d(r, b, e, part);                                          \
    }                                                                     \
    void tb_cpu_red_bf16_##lv(const tb_red_job *r, int64_t b, int64_t e,  \
                              double part[3])                             \
    {                                                                     \
        rv_red_bf16(r, b, e, part);                                       \
    }                                                                     \
    void tb_cpu_red_f16_##lv(const tb_red_job *r, int64_t b, int64_t e,   \
                             double part[3])                              \
    {                                                                     \
        rv_red_f16(r, b, e, part);                                        \
    }

#endif /* TB_BACKENDS_CPU_OPTIM_RED_SIMD_H */

/* ---- part 2: the loops ------------------------------------------------ */
#ifdef RV_SFX

#define RV_(name) RV_CAT(name, RV_SFX)
#ifndef RV_TAG /* the functions' suffix; p and g of the element type */
#define RV_TAG RV_SFX
#define RV_PT RV_ET
#define RV_LDP(ptr) RV_(rb_load)(ptr)
#define RV_STP(ptr, x) RV_(rb_store)(ptr, x)
#endif
#define RV_F(name) RV_CAT(name, RV_TAG)

/* lamb's phases on whole blocks of [b, e) (optim_red.h's
 * TB_RED_LAMB_*); returns where they end */
static int64_t RV_F(rv_lamb)(const tb_red_job *r, int64_t b, int64_t e,
                             double part[3])
{
    typedef RV_ET et;
    typedef RV_(rb) vb;
    const tb_optim_job *j = r->j;
    const RV_PT *pi = j->in[0], *gi = j->in[1];
    const et *mi = j->in[2], *vi = j->in[3];
    RV_PT *po = j->out[0];
    et *mo = j->out[1], *vo = j->out[2];
    const int mom = r->phase == TB_RED_LAMB_MOMENTS, has_wd = j->wd != 0;
    const vb b1 = RV_(rb_set1)((et)j->b1), omb1 = RV_(rb_set1)((et)j->omb1);
    const vb b2 = RV_(rb_set1)((et)j->b2), omb2 = RV_(rb_set1)((et)j->omb2);
    const vb rbc1 = RV_(rb_set1)((et)j->c2);
    const vb rbc2 = RV_(rb_set1)((et)j->scale);
    const vb eps = RV_(rb_set1)((et)j->eps), wd = RV_(rb_set1)((et)j->wd);
    const vb c = RV_(rb_set1)((et)r->c);
    rd s0 = rs_d1(0.0), s0h = s0, s1 = s0, s1h = s0;
    int64_t i = b;
    for (; i + RB_N <= e; i += RB_N) {
        const vb p = RV_LDP(pi + i);
        vb m, v;
        if (mom) {
            const vb g = RV_LDP(gi + i);
            m = RV_(rb_add)(RV_(rb_mul)(b1, RV_(rb_load)(mi + i)),
                            RV_(rb_mul)(omb1, g));
            v = RV_(rb_add)(RV_(rb_mul)(b2, RV_(rb_load)(vi + i)),
                            RV_(rb_mul)(omb2, RV_(rb_mul)(g, g)));
        } else {
            m = RV_(rb_load)(mo + i);
            v = RV_(rb_load)(vo + i);
        }
        vb u = RV_(rb_div)(
            RV_(rb_mul)(m, rbc1),
            RV_(rb_add)(RV_(rb_sqrt)(RV_(rb_mul)(v, rbc2)), eps));
        if (has_wd)
            u = RV_(rb_add)(u, RV_(rb_mul)(wd, p));
        if (mom) {
            RV_(rb_acc)(&s0, &s0h, p, p);
            RV_(rb_acc)(&s1, &s1h, u, u);
            RV_(rb_store)(mo + i, m);
            RV_(rb_store)(vo + i, v);
        } else {
            RV_STP(po + i, RV_(rb_sub)(p, RV_(rb_mul)(c, u)));
        }
    }
    if (mom) {
        rv_add_lanes(&part[0], s0, s0h);
        rv_add_lanes(&part[1], s1, s1h);
    }
    return i;
}

/* the phase r->phase on [b, e), its sums added to part: whole blocks
 * here, the tail by the C loop */
static void RV_F(rv_red)(const tb_red_job *r, int64_t b, int64_t e,
                         double part[3])
{
    typedef RV_ET et;
    typedef RV_(rb) vb;
    const et *a = r->a, *bb = r->b, *yy = r->y;
    et *q = r->q, *o = r->out;
    const vb vc = RV_(rb_set1)((et)r->c);
    rd s0 = rs_d1(0.0), s1 = s0, t0 = s0, t1 = s0;
    int64_t i = b;
    switch (r->phase) {
    case TB_RED_LAMB_MOMENTS:
    case TB_RED_LAMB_UPDATE:
        i = RV_F(rv_lamb)(r, b, e, part);
        break;
    case TB_RED_DOT2:
        for (; i + RB_N <= e; i += RB_N) {
            const vb u = RV_(rb_load)(bb + i);
            RV_(rb_acc)(&s0, &s1, RV_(rb_load)(a + i), u);
            RV_(rb_acc)(&t0, &t1, u, u);
        }
        rv_add_lanes(&part[0], s0, s1);
        rv_add_lanes(&part[1], t0, t1);
        break;
    case TB_RED_UPD_DOT:
    case TB_RED_UPD_DOT3:
    case TB_RED_UPD_STEP: {
        const vb c2 = RV_(rb_set1)((et)r->c2);
        const vb lr = RV_(rb_set1)((et)r->j->lr);
        const et *pp = r->p;
        const int ax = r->axpy, sc2 = r->scale2;
        const int dot = r->phase != TB_RED_UPD_STEP;
        const int dot3 = r->phase == TB_RED_UPD_DOT3;
        rd u0 = s0, u1 = s0; /* UPD_DOT3's b.y (t0, t1: y.y) */
        for (; i + RB_N <= e; i += RB_N) {
            vb t = ax == 2 ? RV_(rb_load)(q + i)
                           : RV_(rb_mul)(vc, RV_(rb_load)(a + i));
            if (ax == 1)
                t = RV_(rb_add)(RV_(rb_load)(q + i), t);
            if (sc2)
                t = RV_(rb_mul)(c2, t);
            RV_(rb_store)(q + i, t);
            if (dot3) {
                const vb bv = RV_(rb_load)(bb + i);
                const vb yv = RV_(rb_load)(yy + i);
                RV_(rb_acc)(&s0, &s1, bv, t);
                RV_(rb_acc)(&u0, &u1, bv, yv);
                RV_(rb_acc)(&t0, &t1, yv, yv);
            } else if (dot) {
                RV_(rb_acc)(&s0, &s1, RV_(rb_load)(bb + i), t);
            } else {
                RV_(rb_store)(o + i, RV_(rb_add)(RV_(rb_load)(pp + i),
                                                 RV_(rb_mul)(lr, t)));
            }
        }
        if (dot)
            rv_add_lanes(&part[0], s0, s1);
        if (dot3) {
            rv_add_lanes(&part[1], u0, u1);
            rv_add_lanes(&part[2], t0, t1);
        }
        break;
    }
    }
    if (i < e)
        RV_C(r, i, e, part);
}

#undef RV_
#undef RV_F
#undef RV_TAG
#undef RV_PT
#undef RV_LDP
#undef RV_STP
#undef RV_SFX
#undef RV_ET
#undef RV_C
#endif /* RV_SFX */
