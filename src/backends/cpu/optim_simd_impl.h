/* The SIMD levels' optimizer-step loops, written once for optim_avx2.c
 * and optim_avx512.c (each built with only its level's -m flags; see
 * meson.build): the template of optim_simd.h over 256-bit vectors (8 f32
 * / 4 f64 lanes) under AVX2's flags, 512-bit (16 / 8) under AVX-512's,
 * and the level's entry points tb_optim_f32_<level>,
 * tb_optim_f64_<level> and the mixed-precision form's
 * tb_optim_bf16_<level> and tb_optim_f16_<level> (16-bit p and g, f32
 * state, the f32 loop's arithmetic); under AVX512_BF16's flags too
 * (optim_avx512bf16.c) tb_optim_bf16_avx512bf16 only, its p narrowed by
 * vcvtneps2bf16 (optim_half_simd.h).  optim.c finishes the tail of each part with its
 * portable loop, so no masked accesses are needed here. */
#ifndef TB_BACKENDS_CPU_OPTIM_SIMD_IMPL_H
#define TB_BACKENDS_CPU_OPTIM_SIMD_IMPL_H

#include <immintrin.h>
#include <stdint.h>

#include "optim_half_simd.h"
#include "optim_simd.h"

#ifdef __AVX512F__
typedef __m512 opt_vs;
typedef __m512d opt_vd;
#define OPT_I(name) _mm512_##name
#ifdef __AVX512BF16__
#define OPT_ENTRY(dt) tb_optim_##dt##_avx512bf16
#else
#define OPT_ENTRY(dt) tb_optim_##dt##_avx512
#endif
/* |x|: clear the sign bit. */
static inline opt_vs abs_ps(opt_vs x) { return _mm512_abs_ps(x); }
static inline opt_vd abs_pd(opt_vd x) { return _mm512_abs_pd(x); }
#else
typedef __m256 opt_vs;
typedef __m256d opt_vd;
#define OPT_I(name) _mm256_##name
#define OPT_ENTRY(dt) tb_optim_##dt##_avx2
/* |x|: clear the sign bit. */
static inline opt_vs abs_ps(opt_vs x)
{
    return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
}
static inline opt_vd abs_pd(opt_vd x)
{
    return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
}
#endif

static inline opt_vs sqrt_ps(opt_vs x) { return OPT_I(sqrt_ps)(x); }
static inline opt_vd sqrt_pd(opt_vd x) { return OPT_I(sqrt_pd)(x); }
static inline opt_vs fma_ps(opt_vs a, opt_vs b, opt_vs c)
{
    return OPT_I(fmadd_ps)(a, b, c);
}
static inline opt_vd fma_pd(opt_vd a, opt_vd b, opt_vd c)
{
    return OPT_I(fmadd_pd)(a, b, c);
}
/* a > b ? a : b per lane (b where either is NaN). */
static inline opt_vs max_ps(opt_vs a, opt_vs b)
{
    return OPT_I(max_ps)(a, b);
}
static inline opt_vd max_pd(opt_vd a, opt_vd b)
{
    return OPT_I(max_pd)(a, b);
}
/* a < b ? a : b per lane (b where either is NaN). */
static inline opt_vs min_ps(opt_vs a, opt_vs b)
{
    return OPT_I(min_ps)(a, b);
}
static inline opt_vd min_pd(opt_vd a, opt_vd b)
{
    return OPT_I(min_pd)(a, b);
}

/* A scalar second operand of OPT_FMA is broadcast ((vt){0} + b). */
#define OPT_SQRT(x) sqrt_ps(x)
#define OPT_FMA(a, b, c) fma_ps((a), (opt_vs){0} + (b), (c))
#define OPT_MAX(a, b) max_ps((a), (b))
#define OPT_MIN(a, b) min_ps((a), (b))
#define OPT_ABS(x) abs_ps(x)
#ifndef __AVX512BF16__ /* that level has the bf16 loops only */
#define OPT_ET float
#define OPT_VT opt_vs
#define OPT_NAME loops_f32
#include "optim_simd.h"
#endif
#define OPT_ET float
#define OPT_VT opt_vs
#define OPT_HT uint16_t
#define OPT_LDH(x, ptr, i) ((x) = oh_ld_bf16((ptr) + (i)))
#define OPT_STH(ptr, i, x) oh_st_bf16((ptr) + (i), (x))
#define OPT_NAME loops_bf16
#include "optim_simd.h"
#ifndef __AVX512BF16__
#define OPT_ET float
#define OPT_VT opt_vs
#define OPT_HT uint16_t
#define OPT_LDH(x, ptr, i) ((x) = oh_ld_f16((ptr) + (i)))
#define OPT_STH(ptr, i, x) oh_st_f16((ptr) + (i), (x))
#define OPT_NAME loops_f16
#include "optim_simd.h"
#undef OPT_SQRT
#undef OPT_FMA
#undef OPT_MAX
#undef OPT_MIN
#undef OPT_ABS

#define OPT_SQRT(x) sqrt_pd(x)
#define OPT_FMA(a, b, c) fma_pd((a), (opt_vd){0} + (b), (c))
#define OPT_MAX(a, b) max_pd((a), (b))
#define OPT_MIN(a, b) min_pd((a), (b))
#define OPT_ABS(x) abs_pd(x)
#define OPT_ET double
#define OPT_VT opt_vd
#define OPT_NAME loops_f64
#include "optim_simd.h"

#ifdef __AVX512F__
/* The same f64 template over 256-bit vectors at the AVX-512 level:
 * optim.c's 256-bit branch (sgd and adamax f64 over large arrays on AMD
 * CPUs), the operations of the zmm loop lane for lane (|x| by clearing
 * the sign bit either way). */
#undef OPT_SQRT
#undef OPT_FMA
#undef OPT_MAX
#undef OPT_MIN
#undef OPT_ABS
#define OPT_SQRT(x) _mm256_sqrt_pd(x)
#define OPT_FMA(a, b, c) _mm256_fmadd_pd((a), (__m256d){0} + (b), (c))
#define OPT_MAX(a, b) _mm256_max_pd((a), (b))
#define OPT_MIN(a, b) _mm256_min_pd((a), (b))
#define OPT_ABS(x) _mm256_andnot_pd(_mm256_set1_pd(-0.0), (x))
#define OPT_ET double
#define OPT_VT __m256d
#define OPT_NAME loops_f64_ymm
#include "optim_simd.h"
#endif
#endif

#ifdef __AVX512BF16__
/* sgd bf16 at the avx512bf16 level, 32 elements a step: p and g widened
 * in even/odd order, no shuffle (the even-numbered elements by a shift
 * left 16 bits a 32-bit lane, the odd ones by an and with 0xffff0000:
 * each bf16 is the upper half of its f32), the f32 template's
 * arithmetic lane for lane, both halves narrowed by one vcvtne2ps2bf16
 * (p0's words, then p1's) and interleaved back in order by one vpermw
 * (the vpunpck{l,h}wd widening and vpermq before it: 67.9 -> 63.4 us at
 * 1M, tbench ab, load 10; Zen 4's shuffle pipes were its limit).
 * vcvtne2ps2bf16 rounds as vcvtneps2bf16 does (nearest
 * even, a NaN kept quiet) and reads a subnormal f32 as a zero: a step
 * whose p has a subnormal lane stops this loop, and the template takes
 * the rest (oh_st_bf16's integer code on those vectors), so the bits
 * are the template's (checkasm's optim_half: every bf16 pattern as p).
 * Returns the element it stopped at. */
static int64_t sgd_bf16_x32(const tb_optim_job *j, int64_t b, int64_t e)
{
    const int64_t end = b + (e - b) / 32 * 32;
    const uint16_t *pi = j->in[0], *gi = j->in[1];
    uint16_t *po = j->out[0];
    const float lr = (float)j->lr, wd = (float)j->wd;
    const bool has_wd = j->wd != 0;
    const __m512i hm = _mm512_set1_epi32(-65536); /* 0xffff0000 */
    /* word 2i: p0's value i (word i), 2i + 1: p1's (word 16 + i) */
    const __m512i eo = _mm512_set_epi16(
        31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8,
        23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    int64_t i = b;
    for (; i < end; i += 32) {
        const __m512i pw = _mm512_loadu_si512((const void *)(pi + i));
        const __m512i gw = _mm512_loadu_si512((const void *)(gi + i));
        opt_vs p0 = _mm512_castsi512_ps(_mm512_slli_epi32(pw, 16));
        opt_vs p1 = _mm512_castsi512_ps(_mm512_and_si512(pw, hm));
        opt_vs g0 = _mm512_castsi512_ps(_mm512_slli_epi32(gw, 16));
        opt_vs g1 = _mm512_castsi512_ps(_mm512_and_si512(gw, hm));
        if (has_wd) {
            g0 = OPT_FMA(p0, wd, g0);
            g1 = OPT_FMA(p1, wd, g1);
        }
        p0 = p0 - lr * g0;
        p1 = p1 - lr * g1;
        if (_mm512_fpclass_ps_mask(p0, 0x20) |
            _mm512_fpclass_ps_mask(p1, 0x20))
            break;
        const __m512i r = (__m512i)_mm512_cvtne2ps_pbh(p1, p0);
        _mm512_storeu_si512((void *)(po + i),
                            _mm512_permutexvar_epi16(eo, r));
    }
    return i;
}

/* sgd_momentum and adamax bf16 at the avx512bf16 level, 32 elements a
 * step in order, so the f32 state is read and written as it lies: p
 * and g's quadwords put in place by one vpermq each (0, 4, 1, 5, ...:
 * 128-bit lane L then holds elements 4L..4L+3 and 16+4L..16+4L+3), so
 * vpunpck{l,h}wd with zero give elements 0-15 and 16-31 as f32, and
 * vcvtne2ps2bf16 packs them back in order (no permute after it).  The
 * template's arithmetic lane for lane (the same expressions); a step
 * whose p has a subnormal lane stops before it stores anything, and the
 * template takes the rest, as sgd_bf16_x32.  (The template's
 * vpmovzxwd + vpslld a 16 and vcvtneps2bf16 + vfpclassps a 16: sgd
 * momentum bf16 at 1M 166 us, 1.66x its memory bound.) */
static inline void opt_bf16_ld32(const uint16_t *p, opt_vs *lo, opt_vs *hi)
{
    const __m512i z = _mm512_setzero_si512();
    const __m512i w = _mm512_permutexvar_epi64(
        _mm512_setr_epi64(0, 4, 1, 5, 2, 6, 3, 7),
        _mm512_loadu_si512((const void *)p));
    *lo = _mm512_castsi512_ps(_mm512_unpacklo_epi16(z, w));
    *hi = _mm512_castsi512_ps(_mm512_unpackhi_epi16(z, w));
}

static int64_t mom_bf16_x32(const tb_optim_job *j, int64_t b, int64_t e)
{
    const int64_t end = b + (e - b) / 32 * 32;
    const uint16_t *pi = j->in[0], *gi = j->in[1];
    const float *s1i = j->in[2], *s2i = j->in[3];
    uint16_t *po = j->out[0];
    float *s1o = j->out[1], *s2o = j->out[2];
    const float lr = (float)j->lr, wd = (float)j->wd, c2 = (float)j->c2;
    const float b1 = (float)j->b1, omb1 = (float)j->omb1;
    const float b2 = (float)j->b2, eps = (float)j->eps;
    const bool has_wd = j->wd != 0, mom = j->mom, nest = j->nesterov;
    const bool adamax = j->op == TB_OP_adamax;
    int64_t i = b;
    for (; i < end; i += 32) {
        opt_vs p0, p1, g0, g1, m0, m1, v0 = {0}, v1 = {0};
        opt_bf16_ld32(pi + i, &p0, &p1);
        opt_bf16_ld32(gi + i, &g0, &g1);
        m0 = _mm512_loadu_ps(s1i + i);
        m1 = _mm512_loadu_ps(s1i + i + 16);
        if (has_wd) {
            g0 = OPT_FMA(p0, wd, g0);
            g1 = OPT_FMA(p1, wd, g1);
        }
        if (adamax) {
            v0 = _mm512_loadu_ps(s2i + i);
            v1 = _mm512_loadu_ps(s2i + i + 16);
            m0 = OPT_FMA(m0, b1, omb1 * g0);
            m1 = OPT_FMA(m1, b1, omb1 * g1);
            v0 = OPT_MAX(v0 * b2, OPT_ABS(g0) + eps);
            v1 = OPT_MAX(v1 * b2, OPT_ABS(g1) + eps);
            p0 = p0 - lr * m0 / v0;
            p1 = p1 - lr * m1 / v1;
        } else {
            if (mom) {
                m0 = OPT_FMA(m0, b1, c2 * g0);
                m1 = OPT_FMA(m1, b1, c2 * g1);
                g0 = nest ? OPT_FMA(m0, b1, g0) : m0;
                g1 = nest ? OPT_FMA(m1, b1, g1) : m1;
            }
            p0 = p0 - lr * g0;
            p1 = p1 - lr * g1;
        }
        if (_mm512_fpclass_ps_mask(p0, 0x20) |
            _mm512_fpclass_ps_mask(p1, 0x20))
            break;
        _mm512_storeu_si512((void *)(po + i),
                            (__m512i)_mm512_cvtne2ps_pbh(p1, p0));
        _mm512_storeu_ps(s1o + i, m0);
        _mm512_storeu_ps(s1o + i + 16, m1);
        if (adamax) {
            _mm512_storeu_ps(s2o + i, v0);
            _mm512_storeu_ps(s2o + i + 16, v1);
        }
    }
    return i;
}
#endif

int64_t OPT_ENTRY(bf16)(const tb_optim_job *j, int64_t b, int64_t e)
{
#ifdef __AVX512BF16__
    if (j->op == TB_OP_sgd)
        b = sgd_bf16_x32(j, b, e);
    else if (j->op == TB_OP_sgd_momentum || j->op == TB_OP_adamax)
        b = mom_bf16_x32(j, b, e);
#endif
    return loops_bf16(j, b, e);
}

#ifndef __AVX512BF16__
int64_t OPT_ENTRY(f32)(const tb_optim_job *j, int64_t b, int64_t e)
{
    return loops_f32(j, b, e);
}

int64_t OPT_ENTRY(f64)(const tb_optim_job *j, int64_t b, int64_t e)
{
    return loops_f64(j, b, e);
}

int64_t OPT_ENTRY(f16)(const tb_optim_job *j, int64_t b, int64_t e)
{
    return loops_f16(j, b, e);
}

#ifdef __AVX512F__
/* whole zmm vectors only (a multiple of 8 from b): the rest is the
 * portable loop's, as after the zmm loop */
int64_t tb_optim_f64_avx512_ymm(const tb_optim_job *j, int64_t b, int64_t e)
{
    return loops_f64_ymm(j, b, b + (e - b) / 8 * 8);
}
#endif
#endif

#endif
