/* pool16.h's fused 2x2 / stride 2 pooling rows in bf16 and f16 at the
 * avx512 level (built with its flags).
 *
 * A step takes 16 windows of one output row: one 64-byte (masked) load
 * of each input row, 32 values, whose 32-bit lanes hold the windows'
 * column pairs: lane i is (x[2i], x[2i + 1]), so the even column is the
 * lane shifted left by 16 and the odd one the lane's upper half (no
 * shuffle).  In bf16 those are the f32 values themselves.
 *
 * max_pool2d: the f32 row's max tree nmax(nmax(x00, x10), nmax(x01,
 * x11)) (nmax(a, b): a if a is NaN, else x86's max: b unless a > b), on
 * those lanes; f16 placed in the upper half of a lane is no f32 value,
 * but its order is f16's (sign and magnitude, the magnitude's bits
 * shifted) for every non-NaN pattern, zeros included (+-0 stay +-0,
 * small ones f32 subnormals: no DAZ assumed), so x86's max picks the
 * same element as on the widened values.  A step whose inputs hold a
 * NaN (a compare of the patterns) redoes the f32 row's operations on
 * widened values (f16 by vcvtph2ps) and narrows as the level does (the
 * loop of short rows tests its two steps' inputs at once and takes both
 * so: one test and branch a store; p16_special).  The
 * result, an input's pattern in the lane's upper half (or the narrowed
 * NaN), is packed with the next step's by one vpermt2w into a store of
 * both steps' windows (the output is contiguous across rows and planes:
 * short rows do not waste a store).
 * avg_pool2d: ((x00 + x10) + (x01 + x11)) * 0.25 in f32 (the f32 row's
 * order), bf16 on the lanes as above and narrowed by round to nearest
 * even (a NaN quiet: tb_f32_to_bf16's bits, without its NaN test: a NaN
 * of these sums is already quiet, p16_bf16_rne_ar); f16 without an infinity or NaN
 * in the step as its value times 2^-112 (the pattern's exponent and
 * fraction shifted into f32's by a vpmaddwd, the word times 2^13, and a
 * mask: no vcvtph2ps, which took 24 us of 32x16x24x24 where shifts took
 * 21 and vpmaddwd 18, load ~8: Zen 4 runs 512-bit shifts on the pipes
 * of the adds), summed in the same order and scaled by 2^110 (every step exact
 * or rounded as the unscaled sum), else widened by vcvtph2ps, the f32
 * row's vertical sums, then its even/odd split; narrowed by vcvtps2ph.
 * Where W is a multiple of 8, f16 avg runs p16_avg_f16_w8 instead:
 * chunks of 8 columns, each row's widened by a 256-bit vcvtph2ps (Zen 4:
 * 0.5 cycles, where the 512-bit form takes 1.33 to 2, which is what made
 * vcvtph2ps lose above), so no special case and no lane of a vector
 * unused at W = 24 (32x16x24x24: 18.2 -> 12.2 us in a loop of the old
 * and new functions, bit for bit on every non-NaN result; a NaN result
 * is a quiet NaN, its payload as the adds' operands fall).
 *
 * max_pool2d_backward: on 16-bit keys, k = +m or -m for the magnitude m
 * by the sign (+0 and -0 one key, so equal as floats are), every NaN
 * 0x7fff (above the infinities): the window's maximum key M by two
 * vpmaxsw (rows, then the lane's two words swapped by a rotate), the
 * words equal to M as two 32-bit masks: where no window has two words
 * in them (tested on the masks in general registers), g to the masks'
 * words by two masked moves, else the first of the window in the order
 * x00 x01 x10 x11 kept by a few vector operations on them (ties: equal
 * values, zeros of either sign, NaNs; 8 vector operations a step where
 * the masked moves take 2; 32x16x24x24 max_pool2d_backward bf16 27.1 to
 * 25.0 us, f16 27.3 to 25.8, tbench ab, 1 thread, load ~15; with half
 * the inputs +0, a tie in most steps, within 4% of before in a loop):
 * that is the f32 row's choice
 * (the first element equal to the maximum, or the first NaN).  It
 * takes g (a NaN made quiet, as narrowing does), the others +0.  One
 * test (the unsigned maximum of x's and g's
 * magnitudes) finds a NaN among both; only then are x's keys and g's
 * values fixed.  avg_pool2d_backward: g widened, times 0.25 in f32,
 * narrowed, each window's value to its four places. */
#include <immintrin.h>
#include <string.h>

#include "pool16.h"

#define P16_INLINE static inline __attribute__((always_inline))

P16_INLINE __mmask32 p16_m32(int64_t n)
{
    return n >= 32 ? (__mmask32)0xffffffffu : (__mmask32)((1u << n) - 1);
}

P16_INLINE __mmask16 p16_m16(int64_t n)
{
    return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
}

/* the f32 row's nmax */
P16_INLINE __m512 p16_nmax(__m512 a, __m512 b)
{
    return _mm512_mask_mov_ps(_mm512_max_ps(a, b),
                              _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), a);
}

/* f32 -> bf16 in the upper half of each lane: round to nearest even, a
 * NaN keeps its upper half with the quiet bit (tb_f32_to_bf16) */
P16_INLINE __m512i p16_bf16_rne(__m512 v)
{
    const __m512i b = _mm512_castps_si512(v);
    const __m512i r = _mm512_add_epi32(
        b, _mm512_add_epi32(_mm512_set1_epi32(0x7fff),
                            _mm512_and_si512(_mm512_srli_epi32(b, 16),
                                             _mm512_set1_epi32(1))));
    return _mm512_mask_or_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q),
                                b, _mm512_set1_epi32(0x00400000));
}

/* p16_bf16_rne of a sum or product of bf16 values (widened: their lower
 * 16 bits zero): a NaN among them is an operand's NaN, made quiet, or
 * the default NaN, both with a zero lower half, to which the rounding
 * adds at most 0x8000 without a carry, so its upper half stays that
 * quiet NaN: no NaN test (two operations of the avg rows' ~16) */
P16_INLINE __m512i p16_bf16_rne_ar(__m512 v)
{
    /* bit 16 as 0 or 1 by an and and an unsigned min (no shift: Zen 4's
     * shifts share the adds' pipes) */
    const __m512i b = _mm512_castps_si512(v);
    return _mm512_add_epi32(
        b, _mm512_add_epi32(
               _mm512_set1_epi32(0x7fff),
               _mm512_min_epu32(
                   _mm512_and_si512(b, _mm512_set1_epi32(0x10000)),
                   _mm512_set1_epi32(1))));
}

/* p16_f16s: the f16 word of each lane of d chosen by hi (vpmaddwd's pair
 * (8192, 0) the lower, (0, 8192) the upper), sign-extended and shifted
 * left by 13: what srai(d << 16, 3) or srai(d, 3) leave in the bits
 * p16_fwd_rows's mask keeps, by a multiply (Zen 4 runs 512-bit shifts on
 * the pipes of the f32 adds and the f16 conversions, multiplies on the
 * other pair) */
P16_INLINE __m512i p16_f16s(__m512i d, int hi)
{
    return _mm512_madd_epi16(d, _mm512_set1_epi32(hi ? 0x20000000 : 0x2000));
}

/* f16 even (lane's lower word) and odd (upper word) values of d, widened */
P16_INLINE __m512 p16_f16_even(__m512i d)
{
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(d));
}
P16_INLINE __m512 p16_f16_odd(__m512i d)
{
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(d, 16)));
}

/* max of the step's windows with a NaN among the inputs: the f32 row's
 * operations on widened values, narrowed as the level narrows; format:
 * the 16-bit result in each lane's upper half */
static __m512i p16_max_nan(bool f16, __m512i d0, __m512i d1)
{
    const __m512i hm = _mm512_set1_epi32((int)0xffff0000u);
    if (!f16) {
        const __m512 r = p16_nmax(
            p16_nmax(_mm512_castsi512_ps(_mm512_slli_epi32(d0, 16)),
                     _mm512_castsi512_ps(_mm512_slli_epi32(d1, 16))),
            p16_nmax(_mm512_castsi512_ps(_mm512_and_si512(d0, hm)),
                     _mm512_castsi512_ps(_mm512_and_si512(d1, hm))));
        return p16_bf16_rne(r);
    }
    const __m512 r = p16_nmax(p16_nmax(p16_f16_even(d0), p16_f16_even(d1)),
                              p16_nmax(p16_f16_odd(d0), p16_f16_odd(d1)));
    const __m256i h = _mm512_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT |
                                             _MM_FROUND_NO_EXC);
    return _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16);
}

/* A step's inputs the fast forms below do not take: a NaN (max) or an
 * infinity or NaN (f16 avg) among the 16-bit values of rows d0 and d1
 * and, where d2 and d3 are given (the fused loop's second step), of
 * those too: max's bf16 by unordered compares of the split lanes (the
 * f32 values themselves), f16's by their magnitudes' unsigned maximum */
P16_INLINE bool p16_special(bool f16, bool is_max, __m512i d0, __m512i d1,
                            const __m512i *d2, const __m512i *d3)
{
    if (!f16 && !is_max)
        return false;
    if (f16) {
        const __m512i m = _mm512_set1_epi16(0x7fff);
        __m512i a = _mm512_max_epu16(_mm512_and_si512(d0, m),
                                     _mm512_and_si512(d1, m));
        if (d2)
            a = _mm512_max_epu16(
                a, _mm512_max_epu16(_mm512_and_si512(*d2, m),
                                    _mm512_and_si512(*d3, m)));
        return _mm512_cmpgt_epu16_mask(
                   a, _mm512_set1_epi16(is_max ? 0x7c00 : 0x7bff)) != 0;
    }
    const __m512i hm = _mm512_set1_epi32((int)0xffff0000u);
    __mmask16 k = _mm512_cmp_ps_mask(_mm512_castsi512_ps(_mm512_slli_epi32(d0, 16)),
                                     _mm512_castsi512_ps(_mm512_slli_epi32(d1, 16)),
                                     _CMP_UNORD_Q) |
                  _mm512_cmp_ps_mask(
                      _mm512_castsi512_ps(_mm512_and_si512(d0, hm)),
                      _mm512_castsi512_ps(_mm512_and_si512(d1, hm)),
                      _CMP_UNORD_Q);
    if (d2)
        k |= _mm512_cmp_ps_mask(_mm512_castsi512_ps(_mm512_slli_epi32(*d2, 16)),
                                _mm512_castsi512_ps(_mm512_slli_epi32(*d3, 16)),
                                _CMP_UNORD_Q) |
             _mm512_cmp_ps_mask(
                 _mm512_castsi512_ps(_mm512_and_si512(*d2, hm)),
                 _mm512_castsi512_ps(_mm512_and_si512(*d3, hm)),
                 _CMP_UNORD_Q);
    return k != 0;
}

/* One forward step of 16 windows on rows d0, d1 (lane i: the columns 2i,
 * 2i + 1).  Result format: max and bf16 avg the 16-bit values in the
 * lanes' upper halves (A); f16 avg 16 words in the lower 256 bits (B).
 * special: p16_special holds for these rows (or for the pair of steps
 * they are in): the forms that take every input. */
P16_INLINE __m512i p16_fwd_rows(bool f16, bool is_max, __m512i d0,
                                __m512i d1, bool special)
{
    const __m512i hm = _mm512_set1_epi32((int)0xffff0000u);
    if (is_max) {
        if (__builtin_expect(special, 0))
            return p16_max_nan(f16, d0, d1);
        const __m512 e0 = _mm512_castsi512_ps(_mm512_slli_epi32(d0, 16));
        const __m512 e1 = _mm512_castsi512_ps(_mm512_slli_epi32(d1, 16));
        const __m512 o0 = _mm512_castsi512_ps(_mm512_and_si512(d0, hm));
        const __m512 o1 = _mm512_castsi512_ps(_mm512_and_si512(d1, hm));
        return _mm512_castps_si512(
            _mm512_max_ps(_mm512_max_ps(e0, e1), _mm512_max_ps(o0, o1)));
    }
    const __m512 q = _mm512_set1_ps(0.25f);
    if (!f16) {
        const __m512 e0 = _mm512_castsi512_ps(_mm512_slli_epi32(d0, 16));
        const __m512 e1 = _mm512_castsi512_ps(_mm512_slli_epi32(d1, 16));
        const __m512 o0 = _mm512_castsi512_ps(_mm512_and_si512(d0, hm));
        const __m512 o1 = _mm512_castsi512_ps(_mm512_and_si512(d1, hm));
        return p16_bf16_rne_ar(_mm512_mul_ps(
            _mm512_add_ps(_mm512_add_ps(e0, e1), _mm512_add_ps(o0, o1)), q));
    }
    if (__builtin_expect(!special, 1)) {
        /* no infinity or NaN: the values times 2^-112, exactly (f16's
         * exponent and fraction shifted into f32's, subnormal f32 for
         * f16's subnormals), summed in the f32 row's order: every sum is
         * its sum times 2^-112 (a multiple of 2^-136 below 2^-126 is
         * exact, above it the same rounding), then times 2^110 */
        const __m512i mk = _mm512_set1_epi32((int)0x8fffe000u);
        const __m512 e0 = _mm512_castsi512_ps(
            _mm512_and_si512(p16_f16s(d0, 0), mk));
        const __m512 e1 = _mm512_castsi512_ps(
            _mm512_and_si512(p16_f16s(d1, 0), mk));
        const __m512 o0 = _mm512_castsi512_ps(
            _mm512_and_si512(p16_f16s(d0, 1), mk));
        const __m512 o1 = _mm512_castsi512_ps(
            _mm512_and_si512(p16_f16s(d1, 1), mk));
        const __m512 r = _mm512_mul_ps(
            _mm512_add_ps(_mm512_add_ps(e0, e1), _mm512_add_ps(o0, o1)),
            _mm512_set1_ps(0x1p110f));
        return _mm512_castsi256_si512(_mm512_cvtps_ph(
            r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    /* the f32 row: v = a + b by elements, then even(v) + odd(v) */
    const __m512 v0 = _mm512_add_ps(
        _mm512_cvtph_ps(_mm512_castsi512_si256(d0)),
        _mm512_cvtph_ps(_mm512_castsi512_si256(d1)));
    const __m512 v1 = _mm512_add_ps(
        _mm512_cvtph_ps(_mm512_extracti64x4_epi64(d0, 1)),
        _mm512_cvtph_ps(_mm512_extracti64x4_epi64(d1, 1)));
    const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18,
                                         20, 22, 24, 26, 28, 30);
    const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
    const __m512 r = _mm512_mul_ps(
        _mm512_add_ps(_mm512_permutex2var_ps(v0, ev, v1),
                      _mm512_permutex2var_ps(v0, od, v1)),
        q);
    return _mm512_castsi256_si512(
        _mm512_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

/* p16_fwd_rows of n <= 16 windows from input rows r0, r1, loaded; whole:
 * 32 values readable at r0 and r1 (the lanes past n windows hold values
 * of no window: their results are not stored) */
P16_INLINE __m512i p16_fwd_step(bool f16, bool is_max, const uint16_t *r0,
                                const uint16_t *r1, int64_t n, bool whole)
{
    const __mmask32 m = p16_m32(whole ? 32 : 2 * n);
    const __m512i d0 = whole ? _mm512_loadu_si512(r0)
                             : _mm512_maskz_loadu_epi16(m, r0);
    const __m512i d1 = whole ? _mm512_loadu_si512(r1)
                             : _mm512_maskz_loadu_epi16(m, r1);
    return p16_fwd_rows(f16, is_max, d0, d1,
                        p16_special(f16, is_max, d0, d1, NULL, NULL));
}

/* vpermt2w's index that puts na windows of a step (format A: word 2j +
 * 1 of it, B: word j), then those of the next, in consecutive words */
P16_INLINE __m512i p16_pair_idx(bool fmt_a, int64_t na)
{
    const __m512i j = _mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24, 23,
                                       22, 21, 20, 19, 18, 17, 16, 15, 14,
                                       13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3,
                                       2, 1, 0);
    const int s = fmt_a ? 2 : 1;
    const __m512i idx = fmt_a ? _mm512_add_epi16(_mm512_add_epi16(j, j),
                                                 _mm512_set1_epi16(1))
                              : j;
    /* words j >= na: the next step's word j - na */
    return _mm512_mask_add_epi16(
        idx, _mm512_cmpge_epi16_mask(j, _mm512_set1_epi16((short)na)), idx,
        _mm512_set1_epi16((short)(32 - s * na)));
}

/* Store na windows of a, then nb of b (na, nb <= 16) as na + nb values
 * at o (idx: p16_pair_idx of na); whole: 32 values writable at o, the
 * words past na + nb rewritten by a later store. */
P16_INLINE void p16_store2(__m512i idx, __m512i a, int64_t na, __m512i b,
                           int64_t nb, uint16_t *o, bool whole)
{
    const __m512i v = _mm512_permutex2var_epi16(a, idx, b);
    if (whole)
        _mm512_storeu_si512(o, v);
    else
        _mm512_mask_storeu_epi16(o, p16_m32(na + nb), v);
}

P16_INLINE void p16_fwd(bool f16, bool is_max, const uint16_t *x,
                        uint16_t *o, int64_t planes, int64_t H, int64_t W,
                        int64_t OH, int64_t OW)
{
    const bool fmt_a = is_max || !f16;
    /* a step holds 16 windows or the row's last OW % 16: the index of
     * each (a pair starts with either) */
    const __m512i idx16 = p16_pair_idx(fmt_a, 16);
    const __m512i idxt = p16_pair_idx(fmt_a, OW % 16 ? OW % 16 : 16);
    const uint16_t *xe = x + planes * H * W;
    uint16_t *oe = o + planes * OH * OW;
    __m512i pend = _mm512_setzero_si512();
    int64_t np = 0; /* windows of pend not stored yet (0: none) */
    if (H == 2 * OH && OW <= 16) {
        /* the rows in one sequence (input row pair t at 2 t W): two a
         * step while whole vectors stay inside, then the general loop */
        const int64_t rows = planes * OH;
        int64_t t = 0;
        for (; t + 2 <= rows && (xe - (x + (2 * t + 3) * W)) >= 32 &&
               oe - (o + t * OW) >= 32;
             t += 2) {
            /* one test of both steps' inputs */
            const uint16_t *r0 = x + 2 * t * W;
            const __m512i d0 = _mm512_loadu_si512(r0);
            const __m512i d1 = _mm512_loadu_si512(r0 + W);
            const __m512i d2 = _mm512_loadu_si512(r0 + 2 * W);
            const __m512i d3 = _mm512_loadu_si512(r0 + 3 * W);
            const bool sp = p16_special(f16, is_max, d0, d1, &d2, &d3);
            const __m512i va = p16_fwd_rows(f16, is_max, d0, d1, sp);
            const __m512i vb = p16_fwd_rows(f16, is_max, d2, d3, sp);
            p16_store2(idxt, va, OW, vb, OW, o + t * OW, true);
        }
        x += 2 * t * W;
        o += t * OW;
        if (t == rows)
            return;
        /* the rest as planes of rows from row t % OH */
        const int64_t oh0 = t % OH;
        for (int64_t oh = oh0; oh < OH; oh++) {
            const uint16_t *r0 = x + 2 * (oh - oh0) * W;
            const __m512i v =
                p16_fwd_step(f16, is_max, r0, r0 + W, OW,
                             xe - (r0 + W) >= 32);
            if (np) {
                p16_store2(idxt, pend, np, v, OW, o, oe - o >= 32);
                o += np + OW;
                np = 0;
            } else {
                pend = v;
                np = OW;
            }
        }
        x += 2 * (OH - oh0) * W;
        planes = (xe - x) / (H * W);
    }
    for (int64_t pl = 0; pl < planes; pl++) {
        const uint16_t *xp = x + pl * H * W;
        for (int64_t oh = 0; oh < OH; oh++) {
            const uint16_t *r0 = xp + 2 * oh * W, *r1 = r0 + W;
            for (int64_t ow = 0; ow < OW; ow += 16) {
                const int64_t n = OW - ow < 16 ? OW - ow : 16;
                const __m512i v =
                    p16_fwd_step(f16, is_max, r0 + 2 * ow, r1 + 2 * ow, n,
                                 xe - (r1 + 2 * ow) >= 32);
                if (np) {
                    p16_store2(np == 16 ? idx16 : idxt, pend, np, v, n, o,
                               oe - o >= 32);
                    o += np + n;
                    np = 0;
                } else {
                    pend = v;
                    np = n;
                }
            }
        }
    }
    if (np)
        p16_store2(np == 16 ? idx16 : idxt, pend, np, pend, 0, o, false);
}

/* f16 avg_pool2d where W is a multiple of 8: each row pair's columns in
 * chunks of 8 (4 windows), two chunks a step, in the order of the
 * outputs (row pairs and planes in sequence: a step's two chunks may be
 * from two row pairs).  Each chunk's 8 values of either row widened by
 * a 256-bit vcvtph2ps (exact for every pattern, infinities and NaNs
 * included: no special case), then the f32 row's operations in its
 * order: v = top + bottom by columns, even(v) + odd(v) (two vpermt2ps
 * of the two chunks' v, the windows in order: 13.2 -> 12.2 us in the
 * loop against vshufps and a pshufd of the narrowed words), * 0.25,
 * narrowed by vcvtps2ph. */
P16_INLINE __m256 p16_h8(const uint16_t *p)
{
    return _mm256_maskz_cvtph_ps(
        0xff, _mm_loadu_si128((const __m128i *)(const void *)p));
}

/* the 8 windows of the chunks whose top rows are at a and b (bottom rows
 * W further), in order, as f16 words */
P16_INLINE __m128i p16_avg8(const uint16_t *a, const uint16_t *b, int64_t W)
{
    const __m256 va = _mm256_add_ps(p16_h8(a), p16_h8(a + W));
    const __m256 vb = _mm256_add_ps(p16_h8(b), p16_h8(b + W));
    /* the even and odd columns of va then vb: windows a0-a3, b0-b3 */
    const __m256i ie = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
    const __m256i io = _mm256_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15);
    const __m256 s = _mm256_mul_ps(
        _mm256_add_ps(_mm256_permutex2var_ps(va, ie, vb),
                      _mm256_permutex2var_ps(va, io, vb)),
        _mm256_set1_ps(0.25f));
    return _mm256_maskz_cvtps_ph(
        0xff, s, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

static void p16_avg_f16_w8(const uint16_t *x, uint16_t *o, int64_t planes,
                           int64_t H, int64_t W, int64_t OH)
{
    const int64_t cpr = W / 8, M = planes * OH * cpr;
    const uint16_t *p = x; /* the next chunk's top row */
    int64_t c = 0, t = 0;  /* its chunk in the row, its row pair */
#define P16_ADV                                                           \
    do {                                                                  \
        p += 8;                                                           \
        if (++c == cpr) {                                                 \
            c = 0;                                                        \
            p += W;                                                       \
            if (++t == OH) {                                              \
                t = 0;                                                    \
                p += (H - 2 * OH) * W;                                    \
            }                                                             \
        }                                                                 \
    } while (0)
    int64_t m = 0;
    for (; m + 2 <= M; m += 2) {
        const uint16_t *a = p;
        P16_ADV;
        const uint16_t *b = p;
        P16_ADV;
        _mm_storeu_si128((__m128i *)(void *)(o + 4 * m), p16_avg8(a, b, W));
    }
#undef P16_ADV
    if (m < M)
        _mm_storel_epi64((__m128i *)(void *)(o + 4 * m), p16_avg8(p, p, W));
}

void tb_cpu_pool16_fwd_avx512(bool f16, bool is_max, const uint16_t *x,
                              uint16_t *o, int64_t planes, int64_t H,
                              int64_t W, int64_t OH, int64_t OW)
{
    if (f16 && !is_max && W % 8 == 0 && OH > 0) {
        p16_avg_f16_w8(x, o, planes, H, W, OH);
        return;
    }
    if (f16 && is_max)
        p16_fwd(true, true, x, o, planes, H, W, OH, OW);
    else if (f16)
        p16_fwd(true, false, x, o, planes, H, W, OH, OW);
    else if (is_max)
        p16_fwd(false, true, x, o, planes, H, W, OH, OW);
    else
        p16_fwd(false, false, x, o, planes, H, W, OH, OW);
}

/* ---- backward ---- */

/* 16-bit keys of the patterns in d: +-magnitude by the sign, a NaN
 * 0x7fff where nan holds it */
P16_INLINE __m512i p16_key(__m512i d, __m512i *mag)
{
    *mag = _mm512_and_si512(d, _mm512_set1_epi16(0x7fff));
    return _mm512_mask_sub_epi16(*mag, _mm512_movepi16_mask(d),
                                 _mm512_setzero_si512(), *mag);
}

/* g's 16 values (a NaN made quiet as narrowing makes it, where nan),
 * each twice (word 2i and 2i + 1: window i's pair) */
P16_INLINE __m512i p16_g2(bool f16, __m256i gv, bool nan)
{
    if (__builtin_expect(nan, 0))
        gv = _mm256_mask_mov_epi16(
            gv,
            _mm256_cmpgt_epi16_mask(
                _mm256_and_si256(gv, _mm256_set1_epi16(0x7fff)),
                _mm256_set1_epi16((short)(f16 ? 0x7c00 : 0x7f80))),
            _mm256_or_si256(gv, _mm256_set1_epi16(f16 ? 0x200 : 0x40)));
    const __m512i dup = _mm512_set_epi16(
        15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10, 10, 9, 9, 8, 8, 7, 7, 6,
        6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
    return _mm512_permutexvar_epi16(dup, _mm512_castsi256_si512(gv));
}

/* dx of n <= 16 windows; whole: 32 values readable at x0, x1 and 16
 * at g, and 32 writable at d0 and d1, those past 2 n rewritten later
 * (d0's by the store to d1, d1's by the next row's) */
P16_INLINE void p16_mp_step(bool f16, const uint16_t *g, const uint16_t *x0,
                            const uint16_t *x1, uint16_t *d0, uint16_t *d1,
                            int64_t n, bool whole)
{
    const __mmask32 m = p16_m32(2 * n);
    __m512i a0, a1;
    __m512i k0 = p16_key(whole ? _mm512_loadu_si512(x0)
                               : _mm512_maskz_loadu_epi16(m, x0),
                         &a0);
    __m512i k1 = p16_key(whole ? _mm512_loadu_si512(x1)
                               : _mm512_maskz_loadu_epi16(m, x1),
                         &a1);
    const __m256i gv = whole ? _mm256_loadu_si256((const __m256i *)g)
                             : _mm256_maskz_loadu_epi16(p16_m16(n), g);
    /* one test for a NaN among x's and g's values (the magnitudes'
     * unsigned maximum above the infinity's), each fixed only then: x's
     * keys to 0x7fff, g's quiet */
    const __m512i lim = _mm512_set1_epi16((short)(f16 ? 0x7c00 : 0x7f80));
    const bool nan =
        _mm512_cmpgt_epu16_mask(
            _mm512_max_epu16(
                _mm512_max_epu16(a0, a1),
                _mm512_zextsi256_si512(_mm256_and_si256(
                    gv, _mm256_set1_epi16(0x7fff)))),
            lim) != 0;
    if (__builtin_expect(nan, 0)) {
        const __m512i top = _mm512_set1_epi16(0x7fff);
        k0 = _mm512_mask_mov_epi16(k0, _mm512_cmpgt_epi16_mask(a0, lim),
                                   top);
        k1 = _mm512_mask_mov_epi16(k1, _mm512_cmpgt_epi16_mask(a1, lim),
                                   top);
    }
    const __m512i v = _mm512_max_epi16(k0, k1);
    const __m512i mx = _mm512_max_epi16(v, _mm512_rol_epi32(v, 16));
    /* the words whose key is the window's maximum, as bit masks (bit
     * 2i: window i's even element, 2i + 1 its odd one; the lanes past
     * n windows cleared) */
    const __mmask32 ma = _mm512_cmpeq_epi16_mask(k0, mx) & m;
    const __mmask32 mb = _mm512_cmpeq_epi16_mask(k1, mx) & m;
    const __m512i g2 = p16_g2(f16, gv, nan);
    const uint32_t ua = _cvtmask32_u32(ma), ub = _cvtmask32_u32(mb);
    const uint32_t any = ua | ub;
    __m512i r0, r1;
    if (__builtin_expect(
            ((ua & ub) | (any & any >> 1 & 0x55555555u)) == 0, 1)) {
        /* one maximum in every window (no two words of a window in
         * the masks): g goes there, a masked move a row */
        r0 = _mm512_maskz_mov_epi16(ma, g2);
        r1 = _mm512_maskz_mov_epi16(mb, g2);
    } else {
        /* ties: all-ones words where the key is the maximum; a row's
         * lane: its even element if it matches, its odd one if it
         * matches and the even one does not (A & ~B & C: 0x20); row 1
         * only where row 0 has no match (~A & ~B & C: 0x02) */
        const __m512i e0 = _mm512_movm_epi16(ma);
        const __m512i e1 = _mm512_movm_epi16(mb);
        r0 = _mm512_ternarylogic_epi32(e0, _mm512_slli_epi32(e0, 16), g2,
                                       0x20);
        const __m512i g1 = _mm512_ternarylogic_epi32(
            e0, _mm512_rol_epi32(e0, 16), g2, 0x02);
        r1 = _mm512_ternarylogic_epi32(e1, _mm512_slli_epi32(e1, 16), g1,
                                       0x20);
    }
    if (whole) {
        _mm512_storeu_si512(d0, r0);
        _mm512_storeu_si512(d1, r1);
    } else {
        _mm512_mask_storeu_epi16(d0, m, r0);
        _mm512_mask_storeu_epi16(d1, m, r1);
    }
}

P16_INLINE void p16_ap_step(bool f16, const uint16_t *g, uint16_t *d0,
                            uint16_t *d1, int64_t n, bool whole)
{
    const __m256i gv = whole ? _mm256_loadu_si256((const __m256i *)g)
                             : _mm256_maskz_loadu_epi16(p16_m16(n), g);
    const __m512 q = _mm512_set1_ps(0.25f);
    __m512i r;
    if (f16) {
        const __m256i h = _mm512_cvtps_ph(
            _mm512_mul_ps(_mm512_cvtph_ps(gv), q),
            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m512i dup = _mm512_set_epi16(
            15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10, 10, 9, 9, 8, 8, 7,
            7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
        r = _mm512_permutexvar_epi16(dup, _mm512_castsi256_si512(h));
    } else {
        const __m512 f = _mm512_castsi512_ps(
            _mm512_slli_epi32(_mm512_cvtepu16_epi32(gv), 16));
        /* the upper word into both halves of each lane */
        const __m512i up = _mm512_set4_epi32(0x0f0e0f0e, 0x0b0a0b0a,
                                             0x07060706, 0x03020302);
        r = _mm512_shuffle_epi8(p16_bf16_rne_ar(_mm512_mul_ps(f, q)), up);
    }
    if (whole) {
        _mm512_storeu_si512(d0, r);
        _mm512_storeu_si512(d1, r);
    } else {
        const __mmask32 m = p16_m32(2 * n);
        _mm512_mask_storeu_epi16(d0, m, r);
        _mm512_mask_storeu_epi16(d1, m, r);
    }
}

P16_INLINE void p16_bwd(bool f16, bool is_max, const uint16_t *g,
                        const uint16_t *x, uint16_t *dx, int64_t planes,
                        int64_t H, int64_t W, int64_t OH, int64_t OW)
{
    /* whole vectors (and stores past a row's windows) where they stay
     * inside these planes: full steps of 16 windows, and a row's one
     * step when OW <= 16 (what its stores write past the windows, the
     * store to d1 and the next row's rewrite; the row and column of no
     * window are zeroed after) */
    const int64_t end = planes * H * W;
    if (H == 2 * OH && W == 2 * OW && OW <= 16) {
        /* the rows in one sequence (row pair t at 2 t W, g's row at t
         * OW): whole steps while they stay inside, the last ones masked */
        const int64_t rows = planes * OH;
        for (int64_t t = 0; t < rows; t++) {
            const uint16_t *x0 = x + 2 * t * W, *gr = g + t * OW;
            uint16_t *d0 = dx + 2 * t * W;
            const bool whole =
                end - (2 * t + 1) * W >= 32 && rows * OW - t * OW >= 16;
            if (is_max)
                p16_mp_step(f16, gr, x0, x0 + W, d0, d0 + W, OW, whole);
            else
                p16_ap_step(f16, gr, d0, d0 + W, OW, whole);
        }
        return;
    }
    for (int64_t pl = 0; pl < planes; pl++) {
        const uint16_t *xp = x + pl * H * W, *gp = g + pl * OH * OW;
        uint16_t *dp = dx + pl * H * W;
        for (int64_t oh = 0; oh < OH; oh++) {
            const uint16_t *x0 = xp + 2 * oh * W, *gr = gp + oh * OW;
            uint16_t *d0 = dp + 2 * oh * W;
            for (int64_t ow = 0; ow < OW; ow += 16) {
                const int64_t n = OW - ow < 16 ? OW - ow : 16;
                const int64_t at = pl * H * W + (2 * oh + 1) * W + 2 * ow;
                const bool whole = (n == 16 || OW <= 16) && end - at >= 32 &&
                                   (g + planes * OH * OW) - (gr + ow) >= 16;
                if (is_max)
                    p16_mp_step(f16, gr + ow, x0 + 2 * ow, x0 + W + 2 * ow,
                                d0 + 2 * ow, d0 + W + 2 * ow, n, whole);
                else
                    p16_ap_step(f16, gr + ow, d0 + 2 * ow, d0 + W + 2 * ow,
                                n, whole);
            }
            if (W > 2 * OW)
                d0[W - 1] = d0[2 * W - 1] = 0;
        }
        if (H > 2 * OH)
            memset(dp + 2 * OH * W, 0, (size_t)W * sizeof *dp);
    }
}

void tb_cpu_pool16_bwd_avx512(bool f16, bool is_max, const uint16_t *g,
                              const uint16_t *x, uint16_t *dx,
                              int64_t planes, int64_t H, int64_t W,
                              int64_t OH, int64_t OW)
{
    if (f16 && is_max)
        p16_bwd(true, true, g, x, dx, planes, H, W, OH, OW);
    else if (f16)
        p16_bwd(true, false, g, x, dx, planes, H, W, OH, OW);
    else if (is_max)
        p16_bwd(false, true, g, x, dx, planes, H, W, OH, OW);
    else
        p16_bwd(false, false, g, x, dx, planes, H, W, OH, OW);
}
