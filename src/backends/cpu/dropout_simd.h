/* dropout's SIMD rows (f32, f64) at the avx2 and avx512 levels, for
 * inclusion by dropout_avx2.c and dropout_avx512.c only (built with their
 * level's flags and -ffp-contract=off, in the dvec libraries), in
 * dropout_c.c's frame (dropout.h).
 *
 * The keep bit of element i is rand.h's integer comparison
 * (bits(i) >> 11) >= thr, bits(i) = mix(key + (i + 1) G): the counters
 * key + (i + 1) G advance by a constant per vector, the mix runs in 64-bit
 * lanes (rand_simd_mix.h, the random ops' own), and the comparison is
 * exact integer arithmetic, so every lane decides as the C row.  The
 * value is then the C row's one IEEE product x * (keep ? s : 0) (a
 * masked or and'ed s, then vmulps/vmulpd), so the same bits, NaN, signed
 * zeros and infinities included (x * +0).  f32: two vectors of 64-bit
 * keep masks make one of 32-bit lanes (AVX-512: kunpckbw; AVX2: vshufps
 * and vpermq).
 *
 * AVX-512 compares bits >= thr 2^11 unsigned (vpcmpuq; thr <= 2^53 - 1
 * for p < 1, so thr 2^11 does not wrap, and bits >= thr 2^11 exactly when
 * bits >> 11 >= thr): no shift.  AVX2 has only a signed 64-bit compare:
 * bits >> 11 < 2^53 and thr are non-negative, so thr > bits >> 11
 * (vpcmpgtq) is the drop mask.
 *
 * Bound: the mix, not memory.  Per 8 elements (AVX-512, one zmm of
 * counters), in rand_simd.h's port model: 2 vpmullq (3 uops each), 3
 * shifts, 3 xors, the counter's add, vpcmpuq, the masked move and the
 * product: 16 uops on p0/p5 + the load and store, ~1 cycle an
 * element.  This Zen 4 runs the AVX-512 step in registers in 0.80
 * (f32) and 0.81 (f64) cycles an element (scripts/mix_tp.c; vpsrlq
 * zmm issues one a cycle), the compute bounds stated for these rows;
 * llvm-mca's znver4 model says 0.31.  AVX2 per 4: each 64-bit product 3
 * vpmuludq, 2 shifts, 2 adds (14 for both), 3 shifts, 3 xors, the add,
 * the shift by 11, vpcmpgtq, vandnpd, vmulpd: 25 uops on 3 vector ports,
 * ~8.3 cycles per 4.  The measured figures: ARCHITECTURE.md's dropout
 * line and the commit that made these rows. */
#ifndef TB_BACKENDS_CPU_DROPOUT_SIMD_H
#define TB_BACKENDS_CPU_DROPOUT_SIMD_H

#include <stdint.h>

#include "../../ops/rand.h"
#include "dropout.h"
#include "dvec_simd.h"
#include "kreg.h"
#include "rand_simd_mix.h"

/* The scalar tail: the C row's loop. */
#define DP_TAIL(T)                                                        \
    for (; i < e; i++)                                                    \
        o[i] = x[i] * (tb_rand_keep(key, (uint64_t)i, thr) ? (T)s : (T)0)

/* thr 2^11 (AVX-512's comparand) or thr (AVX2's) in every lane */
static inline ri dp_thr(uint64_t thr)
{
#if RS_W == 8
    return rs_i1(thr << 11);
#else
    return rs_i1(thr);
#endif
}

#if RS_W == 8
/* the keep lanes of the counters z */
static inline __mmask8 dp_keep(ri z, ri t)
{
    return _mm512_cmpge_epu64_mask(rs_mix(z), t);
}
#else
/* all ones in the lanes dropped */
static inline __m256i dp_drop(ri z, ri t)
{
    return _mm256_cmpgt_epi64(t, rs_isrl(rs_mix(z), 11));
}
#endif

/* One step: o[l] = x[l] * (keep ? s : 0) for the RS_W elements of the
 * counters z (f64); for the 2 RS_W of the counters z0 and z1 (f32). */
#if RS_W == 8
typedef __m512 dp_vf;
static inline dp_vf dp_vs32(double s) { return _mm512_set1_ps((float)s); }
static inline void dp_step_f64(double *o, const double *x, ri z, ri t, rd vs)
{
    const __m512d k = _mm512_maskz_mov_pd(dp_keep(z, t), vs);
    rs_stored(o, rs_mul(rs_loadd(x), k));
}
static inline void dp_step_f32(float *o, const float *x, ri z0, ri z1, ri t,
                               dp_vf vs)
{
    const __mmask8 k0 = dp_keep(z0, t), k1 = dp_keep(z1, t);
    const __m512 k = _mm512_maskz_mov_ps(_mm512_kunpackb(k1, k0), vs);
    _mm512_storeu_ps(o, _mm512_mul_ps(_mm512_loadu_ps(x), k));
}
#else
typedef __m256 dp_vf;
static inline dp_vf dp_vs32(double s) { return _mm256_set1_ps((float)s); }
static inline void dp_step_f64(double *o, const double *x, ri z, ri t, rd vs)
{
    const __m256d k = _mm256_andnot_pd(_mm256_castsi256_pd(dp_drop(z, t)), vs);
    rs_stored(o, rs_mul(rs_loadd(x), k));
}
static inline void dp_step_f32(float *o, const float *x, ri z0, ri z1, ri t,
                               dp_vf vs)
{
    const __m256i d0 = dp_drop(z0, t), d1 = dp_drop(z1, t);
    /* the low dwords: d0[0] d0[1] d1[0] d1[1] | d0[2] d0[3] d1[2] d1[3],
     * then the middle quadwords swapped */
    const __m256 q = _mm256_shuffle_ps(_mm256_castsi256_ps(d0),
                                       _mm256_castsi256_ps(d1), 0x88);
    const __m256 d = _mm256_castsi256_ps(
        _mm256_permute4x64_epi64(_mm256_castps_si256(q), 0xd8));
    _mm256_storeu_ps(o, _mm256_mul_ps(_mm256_loadu_ps(x),
                                      _mm256_andnot_ps(d, vs)));
}
#endif

static void dp_f64(void *op, const void *xp, int64_t b, int64_t e,
                   uint64_t key, uint64_t thr, double s)
{
    const double *x = xp;
    double *o = op;
    int64_t i = b;
    if (e - b >= RS_W && thr < (UINT64_C(1) << 53)) {
        const ri step = rs_i1((uint64_t)RS_W * TB_RAND_GAMMA), t = dp_thr(thr);
        const rd vs = rs_d1(s);
        ri z = rs_ctr(key, (uint64_t)b, 1);
        if (e - b >= 2 * RS_W) {
            /* two chains of counters, z0 and z1 = z0 + step, each
             * advanced by two steps (see dp_f32) */
            const ri step2 = rs_iadd(step, step);
            ri z1 = rs_iadd(z, step);
            for (; i + 2 * RS_W <= e; i += 2 * RS_W) {
                dp_step_f64(o + i, x + i, z, t, vs);
                dp_step_f64(o + i + RS_W, x + i + RS_W, z1, t, vs);
                z = rs_iadd(z, step2);
                z1 = rs_iadd(z1, step2);
            }
        }
        for (; i + RS_W <= e; i += RS_W) {
            dp_step_f64(o + i, x + i, z, t, vs);
            z = rs_iadd(z, step);
        }
    }
    DP_TAIL(double);
}

static void dp_f32(void *op, const void *xp, int64_t b, int64_t e,
                   uint64_t key, uint64_t thr, double s)
{
    const float *x = xp;
    float *o = op;
    int64_t i = b;
    if (e - b >= 2 * RS_W && thr < (UINT64_C(1) << 53)) {
        const ri step = rs_i1((uint64_t)RS_W * TB_RAND_GAMMA), t = dp_thr(thr);
        const dp_vf vs = dp_vs32(s);
        /* two chains of counters, z0 and z1 = z0 + step, each advanced
         * by two steps: the two mixes of a step do not wait on one
         * counter add after the other (AVX-512 at 1M, 1 thread, tbench
         * ab, load ~34: 242 -> 234 us, f64 273 -> 256 us; the step in
         * registers, scripts/mix_tp.c: 0.80 cycles an element) */
        const ri step2 = rs_iadd(step, step);
        ri z0 = rs_ctr(key, (uint64_t)b, 1), z1 = rs_iadd(z0, step);
        for (; i + 2 * RS_W <= e; i += 2 * RS_W) {
            dp_step_f32(o + i, x + i, z0, z1, t, vs);
            z0 = rs_iadd(z0, step2);
            z1 = rs_iadd(z1, step2);
        }
    }
    DP_TAIL(float);
}

#define DP_ENTRY_(dt, SFX, LV)                                            \
    int TB_CPU_KFN(dropout, dt, SFX)(void *ctx, const tb_tensor *in,      \
                                     tb_tensor *out, const tb_params *p)  \
    {                                                                     \
        return tb_cpu_dropout_run(ctx, LV, TB_CPU_DT_##dt, in, out, p,    \
                                  dp_##dt);                               \
    }
#define DP_ENTRIES(SFX, LV) DP_ENTRY_(f32, SFX, LV) DP_ENTRY_(f64, SFX, LV)

#endif
