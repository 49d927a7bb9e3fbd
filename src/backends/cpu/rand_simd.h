/* SIMD rows (AVX2, AVX-512) of creation ops (issue 18): rand_uniform
 * f32 and f64, rand_normal f32, arange f32 and f64.  Every value is bit
 * for bit the portable kernel's (create.c) and the reference's
 * (ref_create.c; for the random ops the stream of src/ops/rand.h), at
 * every level and thread count.  arange: (T)(start + (double)i * step),
 * the product and the sum rounded separately, as the portable loop.
 *
 * Split like ops_simd.h: create.c keeps the operand checks, parameters
 * and the thread split (tb_cpu_create_rand below); the chunk loops live
 * in rand_simd_impl.h, compiled once per level by rand_avx2.c and
 * rand_avx512.c with that level's flags and -ffp-contract=off (no
 * multiply-add is ever fused: the stream's values are defined by
 * separately rounded operations).
 *
 * rand_uniform: SplitMix64 counters and both mixes in 64-bit vector lanes
 * (AVX2 has no 64-bit multiply: three 32x32->64 products), the uniform's
 * exact conversion to double, then the stream's own double operations:
 * the same IEEE operations as the scalar loop, so the same values.
 *
 * rand_normal f32: the stream's value is (float)(m + s z) with z from the
 * C library's log, cos and sin in double, which vector code cannot call.
 * Each lane computes V = m + (s r) c (and with the sine), fused, its own
 * double approximation, with a bound on |V - D|, D the double the scalar
 * kernel rounds to float: -2 log t by a 16-entry table and a series, r
 * by rsqrt14 and a correction polynomial (AVX2: vsqrtpd), cos and sin by
 * a 16-entry table of cos/sin(n pi/8) and short series, no division
 * (rand_simd_impl.h).  When both ends of the interval [V - E, V + E]
 * round to the same float f (equal as floats and bit for bit: not NaN,
 * not -0 against +0), D, which lies between them, rounds to f too
 * (rounding is monotonic) and f is stored; otherwise (about one pair in
 * 30000, and every non-finite value) that pair is recomputed by the
 * scalar code of rand.h.  So the output is the scalar kernel's, bit for
 * bit.
 *
 * The bound.  Over the whole domain the f32 stream uses (t = 1 - u1 and
 * u2 for all 2^24 uniforms u = k 2^-24), the vector r is within 2^-49 r
 * of libm's sqrt(-2 log t) and the vector cos/sin within 2^-49 of libm's
 * cos/sin of a = TB_RAND_2PI u2: checked exhaustively, every one of the
 * 2^24 inputs, by tests/test_checkasm.c (rand_vmath; measured 2^-51.0
 * and 2^-49.75).  The scalar D = m + s (r c) has three roundings (2^-53
 * |s| r twice and 2^-53 |D|), V two (s r: 2^-53 |s| r, the fused sum:
 * 2^-53 |V|), and |r c - r' c'| <= r (2^-49 + 2^-49 (1 + 2^-49)), so
 * |V - D| <= |s| r 2^-47.5 + (|V| + |D|) 2^-53 <= (|s| r + |V|) 2^-47.4
 * (|D| <= |V| + |V - D|).  The kernels use
 * E = 2^-43 |s r| + 2^-44 |m| >= 2^-44 (|s| r + |V|) (1 - 2^-50), since
 * |V| <= (|m| + |s r| (1 + 2^-49)) (1 + 2^-53): more than 10 times the
 * bound, so the check accepts only when D and V round alike.
 *
 * rand_normal f64 keeps the portable kernel: its values are libm's
 * double results themselves, which no vector approximation reproduces.
 *
 * Compute bounds (issue 18: these rows write 4 bytes per element but
 * are compute-bound: the in-cache time per element, 4096 elements, is
 * the 1M one).  Counted in the release build's inner loops (objdump);
 * the AVX-512 uops go to the two 512-bit ports p0 and p5 only, vpmullq
 * zmm is 3 uops, vcvtpd2ps zmm 2; clock of this VM about 3.2 GHz.
 *   rand_uniform f32, AVX-512: 14 vector instructions per 8 elements
 *   (3 shifts, 2 xors, 2 vpmullq, a vpternlogq, the counter's add, sub,
 *   mul, add, vcvtpd2ps, a store): 18 uops on p0/p5 = 9 cycles, so
 *   1.13 cycles = 0.35 ns per element.  AVX2: 27 per 4 (each 64-bit
 *   product is 3 vpmuludq, 2 shifts, 2 adds): about 28 uops on three
 *   ports, 2.3 cycles = 0.73 ns per element.  Both rows run at that
 *   bound (rand_uniform: ~0.33-0.40 ns in and out of cache).
 *   rand_normal f32, AVX-512: 127 vector instructions per 8 pairs
 *   (about 140 uops: two streams of uniforms, the log, its division,
 *   the square root, sin and cos, the two results, the decision), 70
 *   cycles = 4.4 cycles = 1.4 ns per element; the divider's 16 + ~24
 *   cycles per block overlap.  The row runs at about 1.4x that
 *   (~2.0 ns): the rest is the latency of the long chain per block
 *   (two 15-cycle products, division, square root, polynomials) that
 *   the out-of-order window only partly hides; unrolling two blocks
 *   side by side and a division-free quotient (rcp14 and Newton) were
 *   tried and measured no faster.  AVX2: 155 per 4 pairs, about 2x the
 *   AVX-512 row per element. */
#ifndef TB_BACKENDS_CPU_RAND_SIMD_H
#define TB_BACKENDS_CPU_RAND_SIMD_H

#include <stdint.h>

#include "../backend.h"
#include "backends/cpu/cpu_config.h"

/* Elements [b, e) of the output o of a random op with stream key key
 * and parameters a, b2 (low, high or mean, std; for f32 the float values
 * of the case's parameters, as rand.h defines), or of arange (start,
 * step; key unused).  For rand_normal b is even. */
typedef void (*tb_cpu_rand_fn)(void *o, int64_t b, int64_t e, uint64_t key,
                               double a, double b2);

/* Entry-point body of a SIMD random row: TB_EUNSUPPORTED when the
 * instance is below level lv; else create.c's launch count, operand
 * check, parameters and thread split, with fn writing each chunk and
 * `weight` simple operations per element deciding the split. */
int tb_cpu_create_rand(void *ctx, int lv, tb_op_id id, tb_dtype dt,
                       const tb_tensor *in, tb_tensor *out,
                       const tb_params *p, int64_t weight,
                       tb_cpu_rand_fn fn);

/* For the exhaustive test only: lg[i] = -2 log t[i] (t in [2^-24, 1]),
 * r[i] = sqrt(lg[i]), and cos, sin of 2 pi u[i] (u = k 2^-24 in [0, 1)),
 * i < n, as the rand_normal kernels of each level compute them.  Call
 * only where the level runs. */
void tb_cpu_rand_vmath_avx2(const double *t, const double *u, double *lg,
                            double *r, double *c, double *s, int64_t n);
void tb_cpu_rand_vmath_avx512(const double *t, const double *u, double *lg,
                              double *r, double *c, double *s, int64_t n);

/* For the test only: the rand_normal f32 kernels' decision, as each
 * level makes it, for values v[i] with error bounds err[i], i < n:
 * ok[i] = 1 when every double within err[i] of v[i] rounds to the float
 * f[i] the kernel stores, else ok[i] = 0 (the pair goes to the scalar
 * code).  Call only where the level runs. */
void tb_cpu_rand_decide_avx2(const double *v, const double *err, float *f,
                             unsigned char *ok, int64_t n);
void tb_cpu_rand_decide_avx512(const double *v, const double *err, float *f,
                               unsigned char *ok, int64_t n);

#endif
