/* The SIMD levels' loops of half_bwd.h: relu_backward's
 * (half_bwd_loops.h built with the level's flags) and the column sums
 * of 16-bit values for half_part.c's sum and mean over a non-last
 * axis, one body for the avx2 and avx512 levels
 * (half_part_avx2.c, half_part_avx512.c define HP_L, hp_v, HP_ZERO,
 * HP_ADD, HP_STORE, HP_LD_BF16, HP_LD_F16 and HP_SFX, then include this
 * file): acc[j] += the f32 sum of column j over each block of
 * TB_CPU_SUM_COL_ROWS rows, from +0 in row order, the block's sum added
 * to the double acc (kernels_simd.h's ks_sum_f32_cols, and the C row's
 * sum_f32_cols, on the widened values: the same additions in the same
 * order, so the same bits), each 16-bit value widened in registers.
 * Wide passes first, down a block's rows over a strip of columns as
 * wide as 8 vectors: bf16 8 integer vectors of 2 * HP_L values (512
 * bytes a row at avx512), each split by a shift and an and into its
 * even-numbered columns (e) and its odd ones (o), every column's sum in
 * the lane of e or o that holds it (no shuffle; e added by fma(x, 1,
 * acc), the bits of an add, on the FMA pipes); f16 8 vectors of HP_L
 * (vcvtph2ps).  Then four vectors of columns per pass, and the columns
 * past the last whole vector one by one, in C.  The wide passes add a
 * block's column sums into acc by vectors (hp_flush, hp_flush_eo: the
 * lanes in column order, widened to double; one scalar add a column
 * took a sixth of the time).  (1024x1024 over axis 0, 1 thread, load
 * 25: bf16 41 -> 29.6 us, f16 42.8 -> 41.2 us, at vcvtph2ps's 16 values
 * per 2 cycles on Zen 4.)  At avx512 f16's wide passes run on 8-lane
 * halves on AMD (HP_F16_HALF, tb_cpu_isa_amd: 256-bit vcvtph2ps, 0.5
 * cycles, and fma(x, 1, acc)), on 16-lane vectors elsewhere (below:
 * an Intel core widens 16 halves by one 512-bit vcvtph2ps at the rate
 * of two 256-bit ones), and both dtypes' prefetch the strip's lines 3 rows ahead: a
 * strip reads 256 (f16) or 512 bytes a row, rows 2 KiB apart at 1024
 * columns, too short a run for the hardware prefetchers (f16 41.2 ->
 * 34.5 us, bf16 29.6 -> 28.8, tbench ab, 8 blocks, load 5; 2 and 8
 * rows ahead, or the next strip's lines, did less). */
#include <immintrin.h>
#include <stdint.h>

#include "../../ops/half.h"
#include "half_bwd.h"
#include "half_bwd_loops.h"
#include "isa.h"
#include "kernels.h"

#define HP_CAT_(a, b) a##b
#define HP_CAT(a, b) HP_CAT_(a, b)

/* acc[0..HP_L) += s's lanes, in double */
static inline void hp_flush(hp_v s, double *a)
{
    HP_STD(a, HP_ADDD(HP_LDD(a), HP_LOPD(s)));
    HP_STD(a + HP_L / 2, HP_ADDD(HP_LDD(a + HP_L / 2), HP_HIPD(s)));
}
/* acc[0..2 * HP_L) += e's and o's lanes (e lane i: column 2i, o: 2i + 1) */
static inline void hp_flush_eo(hp_v e, hp_v o, double *a)
{
    hp_v c0, c1;
    hp_eo(e, o, &c0, &c1);
    hp_flush(c0, a);
    hp_flush(c1, a + HP_L);
}

#define HP_R8(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)

/* the wide passes over rows [r0, re) of columns [0, w): the first
 * column they leave */
static int64_t HP_CAT(hp_wide_bf16_, HP_SFX)(const uint16_t *x, int64_t r0,
                                             int64_t re, int64_t ld,
                                             int64_t w, double *acc)
{
    enum { NV = 8, C = 2 * NV * HP_L };
    const hp_i hm = HP_SET1I(-65536); /* 0xffff0000 */
    const hp_v one = HP_SET1(1.0f);
    int64_t j = 0;
    for (; j + C <= w; j += C) {
#define HP_DECL(k) hp_v e##k = HP_ZERO, o##k = HP_ZERO;
        HP_R8(HP_DECL)
#undef HP_DECL
        for (int64_t r = r0; r < re; r++) {
            const uint16_t *p = x + r * ld + j;
            for (int q = 0; q < C; q += 32)
                _mm_prefetch((const char *)(p + 3 * ld + q), _MM_HINT_T0);
#define HP_STEP(k)                                                        \
    {                                                                     \
        const hp_i v = HP_LDI(p + 2 * HP_L * (k));                        \
        e##k = HP_FMA(HP_CASTF(HP_SLLI16(v)), one, e##k);                 \
        o##k = HP_ADD(o##k, HP_CASTF(HP_ANDI(v, hm)));                    \
    }
            HP_R8(HP_STEP)
#undef HP_STEP
        }
#define HP_ST(k) hp_flush_eo(e##k, o##k, acc + j + 2 * HP_L * (k));
        HP_R8(HP_ST)
#undef HP_ST
    }
    return j;
}

/* each vector's columns widened by the level's vcvtph2ps of HP_L
 * values and added; at avx512 (HP_F16_HALF: the Intel path) with the
 * halves' prefetch 3 rows ahead */
static int64_t HP_CAT(hp_wide_f16v_, HP_SFX)(const uint16_t *x, int64_t r0,
                                            int64_t re, int64_t ld,
                                            int64_t w, double *acc)
{
    enum { NV = 8, C = NV * HP_L };
    int64_t j = 0;
    for (; j + C <= w; j += C) {
#define HP_DECL(k) hp_v s##k = HP_ZERO;
        HP_R8(HP_DECL)
#undef HP_DECL
        for (int64_t r = r0; r < re; r++) {
            const uint16_t *p = x + r * ld + j;
#ifdef HP_F16_HALF
            for (int q = 0; q < C; q += 32)
                _mm_prefetch((const char *)(p + 3 * ld + q), _MM_HINT_T0);
#endif
#define HP_STEP(k) s##k = HP_ADD(s##k, HP_LD_F16(p + HP_L * (k)));
            HP_R8(HP_STEP)
#undef HP_STEP
        }
#define HP_ST(k) hp_flush(s##k, acc + j + HP_L * (k));
        HP_R8(HP_ST)
#undef HP_ST
    }
    return j;
}
#ifdef HP_F16_HALF
/* each vector's columns as two halves of HP_L / 2 lanes (hp_h), each
 * widened by its own vcvtph2ps and added as fma(x, 1, acc) (add's
 * bits): on Zen 4 the 256-bit vcvtph2ps takes 0.5 cycles, the 512-bit
 * one 1.33 alone and 2 beside the adds; a lane adds what it added
 * before, in the same order */
static int64_t HP_CAT(hp_wide_f16h_, HP_SFX)(const uint16_t *x, int64_t r0,
                                            int64_t re, int64_t ld,
                                            int64_t w, double *acc)
{
    enum { NV = 8, C = NV * HP_L, H = HP_L / 2 };
    const hp_h one = HP_H_SET1(1.0f);
    int64_t j = 0;
    for (; j + C <= w; j += C) {
#define HP_DECL(k) hp_h l##k = HP_H_ZERO, h##k = HP_H_ZERO;
        HP_R8(HP_DECL)
#undef HP_DECL
        for (int64_t r = r0; r < re; r++) {
            const uint16_t *p = x + r * ld + j;
            for (int q = 0; q < C; q += 32)
                _mm_prefetch((const char *)(p + 3 * ld + q), _MM_HINT_T0);
#define HP_STEP(k)                                                        \
    l##k = HP_H_FMA(HP_H_LD_F16(p + HP_L * (k)), one, l##k);              \
    h##k = HP_H_FMA(HP_H_LD_F16(p + HP_L * (k) + H), one, h##k);
            HP_R8(HP_STEP)
#undef HP_STEP
        }
#define HP_ST(k) hp_flush(HP_JOIN(l##k, h##k), acc + j + HP_L * (k));
        HP_R8(HP_ST)
#undef HP_ST
    }
    return j;
}
/* the halves on AMD only: an Intel core (the Emerald Rapids VM) widens
 * 16 halves by one 512-bit vcvtph2ps at the rate of two 256-bit ones
 * (half_red_simd.h, var_simd.h); the same additions in the same order,
 * so the same bits */
static int64_t HP_CAT(hp_wide_f16_, HP_SFX)(const uint16_t *x, int64_t r0,
                                            int64_t re, int64_t ld,
                                            int64_t w, double *acc)
{
    return tb_cpu_isa_amd()
               ? HP_CAT(hp_wide_f16h_, HP_SFX)(x, r0, re, ld, w, acc)
               : HP_CAT(hp_wide_f16v_, HP_SFX)(x, r0, re, ld, w, acc);
}
#else
#define hp_wide_f16_avx2 hp_wide_f16v_avx2
#endif

#define HP_COLS(DT, LD)                                                   \
    static void HP_CAT(hp_cols_##DT##_, HP_SFX)(                          \
        const uint16_t *x, int64_t R, int64_t ld, int64_t w, double *acc) \
    {                                                                     \
        for (int64_t r0 = 0; r0 < R; r0 += TB_CPU_SUM_COL_ROWS) {         \
            const int64_t re = R - r0 < TB_CPU_SUM_COL_ROWS               \
                                   ? R                                    \
                                   : r0 + TB_CPU_SUM_COL_ROWS;            \
            float t[4 * HP_L];                                            \
            int64_t j =                                                   \
                HP_CAT(hp_wide_##DT##_, HP_SFX)(x, r0, re, ld, w, acc);   \
            for (; j + 4 * HP_L <= w; j += 4 * HP_L) {                    \
                hp_v s0 = HP_ZERO, s1 = s0, s2 = s0, s3 = s0;             \
                for (int64_t r = r0; r < re; r++) {                       \
                    const uint16_t *p = x + r * ld + j;                   \
                    s0 = HP_ADD(s0, LD(p));                               \
                    s1 = HP_ADD(s1, LD(p + HP_L));                        \
                    s2 = HP_ADD(s2, LD(p + 2 * HP_L));                    \
                    s3 = HP_ADD(s3, LD(p + 3 * HP_L));                    \
                }                                                         \
                HP_STORE(t, s0);                                          \
                HP_STORE(t + HP_L, s1);                                   \
                HP_STORE(t + 2 * HP_L, s2);                               \
                HP_STORE(t + 3 * HP_L, s3);                               \
                for (int q = 0; q < 4 * HP_L; q++)                        \
                    acc[j + q] += t[q];                                   \
            }                                                             \
            for (; j + HP_L <= w; j += HP_L) {                            \
                hp_v s0 = HP_ZERO;                                        \
                for (int64_t r = r0; r < re; r++)                         \
                    s0 = HP_ADD(s0, LD(x + r * ld + j));                  \
                HP_STORE(t, s0);                                          \
                for (int q = 0; q < HP_L; q++)                            \
                    acc[j + q] += t[q];                                   \
            }                                                             \
            for (; j < w; j++) {                                          \
                float s = 0.0f;                                           \
                for (int64_t r = r0; r < re; r++)                         \
                    s += tb_##DT##_to_f32(x[r * ld + j]);                 \
                acc[j] += s;                                              \
            }                                                             \
        }                                                                 \
    }
HP_COLS(bf16, HP_LD_BF16)
HP_COLS(f16, HP_LD_F16)

tb_cpu_half_cols_fn HP_CAT(tb_cpu_half_cols_, HP_SFX)(tb_dtype dt)
{
    return dt == TB_BF16 ? HP_CAT(hp_cols_bf16_, HP_SFX)
                         : HP_CAT(hp_cols_f16_, HP_SFX);
}

tb_cpu_half_relu_bwd_fn HP_CAT(tb_cpu_half_relu_bwd_, HP_SFX)(tb_dtype dt)
{
    return dt == TB_BF16 ? hb_relu_bf16 : hb_relu_f16;
}
