/* SIMD rows (AVX2, AVX-512) of creation ops (issue 18): rand_uniform
 * f32 and f64, rand_normal f32 and f64, arange f32 and f64; and the chunk
 * loops of the bf16 and f16 rows of rand_uniform and rand_normal (half.c
 * calls them through tb_cpu_rand_half: the f32 loops' floats narrowed in
 * registers, issue 34).  Every value is bit
 * for bit the portable kernel's (create.c) and the reference's
 * (ref_create.c; for the random ops the stream of src/ops/rand.h), at
 * every level and thread count.  arange: (T)(start + (double)i * step),
 * the product and the sum rounded separately, as the portable loop (f32
 * where every value is a float, arange.h: one exact float addition per
 * vector, the same bits).
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
 * the same IEEE operations as the scalar loop, so the same values.  With
 * low = 0 (and 2^-94 <= high <= FLT_MAX) the map is one float product
 * (16 lanes on AVX-512, 8 on AVX2), which gives the same single rounding
 * of the exact hi u (proof in rand_simd_impl.h).
 *
 * rand_normal f32: the stream's value is (float)(m + s z) with z from the
 * C library's log, cos and sin in double, which vector code cannot call.
 * Each lane computes V = m + (s r) c (and with the sine), fused, its own
 * double approximation, with a bound on |V - D|, D the double the scalar
 * kernel rounds to float: -2 log t by a 16-entry table and a series, r
 * by vsqrtpd (AVX-512 took rsqrt14 and a polynomial until 2026-11-30:
 * rand_simd_impl.h's rs_root), cos and sin by
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
 * rand_normal f64: its values are no longer libm's (which no vector
 * code reproduces bit for bit) but rand.h's own Box-Muller,
 * tb_rand_bm64: a fixed sequence of IEEE operations without fused
 * multiply-adds (log by atanh's series, cos and sin of 2 pi u2 reduced
 * exactly by quadrants of u2, Taylor's series; within 4 ulp), which the
 * rows repeat lane by lane (rs_bm64_n, four vectors side by side), so
 * the same bits (checkasm rand_ops; the definition's accuracy:
 * rand_bm64_ulp).  1M f64, 1 thread, min of 30 calls, load ~8 on 2
 * CPUs: C row 21.9 ms (tbench median; libm's before: 24.8 ms), AVX2
 * 3.0 ms, AVX-512 1.52 ms; the AVX-512 loop is 608 instructions per 32
 * pairs (172 vmulpd, 164 vaddpd/vsubpd, 4 vdivpd, 4 vsqrtpd, 16
 * vpmullq): compute-bound, its 8 MB of stores take ~0.1 ms.  Since
 * 2026-11-30 545 (152 vmulpd, 156 vaddpd/vsubpd: t, 4 u2, m/2 and e + 1
 * from the integers, sd 1 without its product; 1.60 ms), at about 1.15x
 * llvm-mca znver4's busiest pipe.
 *
 * Compute bounds: docs/perf-data/compute-bounds.json's entries are
 * llvm-mca's (scripts/kernel_bounds_rand.c, issue 34), for icelake-server
 * and znver4; the counts below are the hand counts on Ice Lake's ports
 * that came first.  On Zen 4 (measured on this project's VM, independent
 * chains): a zmm shift, vpmullq, vpmulld, vpmuludq or FMA issues once a
 * cycle, a zmm xor/add twice, each exactly half the ymm rate (a 512-bit
 * operation is two 256-bit halves on four 256-bit pipes, shifts on two of
 * them, products on two), so every vector operation of these loops costs
 * half a cycle at least and the integer mixes dominate.
 *
 * Compute bounds (issue 18: these rows write 4 bytes per element but
 * are compute-bound: the in-cache time per element, 4096 elements, is
 * the 1M one).  Counted in the release build's inner loops (objdump);
 * the AVX-512 uops go to the two 512-bit ports p0 and p5 only (shifts
 * and rsqrt14 to p0, permutes and compares into masks to p5), vpmullq
 * zmm is 3 uops, vcvtpd2ps zmm 2, rsqrt14 zmm 2 (measured throughputs on
 * this VM, an Emerald Rapids core: vpmullq 1.5 cycles, shifts 1, FMA
 * 0.5, rsqrt14 2, vpermt2pd 1); AVX2 uops on three ports p0, p1, p5.
 *   rand_uniform f32, AVX-512, low 0 (the float path, rand_simd_impl.h):
 *   per 16 elements two mixes without their last step (2 vpmullq, 2
 *   shifts, 2 xors each), 2 counter adds, vpermt2d, a dword shift, the
 *   conversion and one float product: 26 uops = 13 cycles, 0.81 cycles
 *   per element (p0 holds 5 shifts of them).  Other bounds: 18 uops per
 *   8 elements (3 shifts, 2 xors, 2 vpmullq, vpternlogq, the counter's
 *   add, the affine map's add, product and add, vcvtpd2ps) = 9 cycles,
 *   1.13 cycles per element.  AVX2, low 0: 43 uops per 8 elements (two
 *   mixes without their last step, each 64-bit product 3 vpmuludq, 2
 *   shifts, 2 adds; vshufps, vpermq, the dword shift, conversion and
 *   product), 27 of them on p0/p1 only: 14.3 cycles, 1.79 cycles per
 *   element; other bounds: 27 uops per 4, 17 on p0/p1: 9 cycles, 2.25
 *   cycles per element.
 *   rand_normal f32, AVX-512: 108 instructions per 8 pairs, 101 uops on
 *   p0/p5 (the two mixes 24, log 20, root 9, cos/sin 20, the values and
 *   the error 4, the decision and its interleaved store 18, the counters
 *   2, kmov 1) plus 7 register moves of the compiler's: 50.5 cycles per
 *   16 elements, 3.16 cycles per element (3.38 if the moves are not
 *   eliminated); no divider (since 2026-11-30 vsqrtpd: the root's 9
 *   uops become 3 and the divider's time).  The row was at 1.4x its bound before the
 *   loop was software-pipelined (each block's chain, ~140 cycles of
 *   latency, filled the scheduler); pipelined it runs at 1.10x the
 *   bound (1.03x counting the moves; docs/ARCHITECTURE.md, cycles
 *   calibrated by main's rand_uniform row in the same run).  AVX2: 140 instructions per 4 pairs
 *   (16 ymm registers: a few spills), about 140 uops on three ports (4
 *   gathers of ~5 uops, vsqrtpd kept, its divider time 9 cycles
 *   overlapped): about 47 cycles per 8 elements, 5.9 cycles per
 *   element. */
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

/* The chunk loop of the bf16 or f16 row of rand_uniform or rand_normal
 * at the level (NULL for another op or dtype): the f32 row's floats of
 * the same level (the parameters rounded to the dtype by half.c, then to
 * float as rand.h says), each rounded once to the dtype in registers
 * (bf16: round to nearest even, a NaN quieted; f16: vcvtps2ph), so the
 * values half.c's f32 row and narrowing gave, with no f32 scratch. */
tb_cpu_rand_fn tb_cpu_rand_half_fn_avx2(tb_op_id id, tb_dtype dt);
tb_cpu_rand_fn tb_cpu_rand_half_fn_avx512(tb_op_id id, tb_dtype dt);

/* half.c's rand path: the bf16/f16 row of rand_uniform or rand_normal
 * (id, dt) at level isa (TB_ISA_AVX2 or TB_ISA_AVX512) through
 * tb_cpu_create_rand's frame with the level's 16-bit chunk loop, p the
 * parameters already rounded to the dtype; 1 (nothing done) for another
 * op, dtype or level. */
int tb_cpu_rand_half(void *ctx, tb_op_id id, tb_dtype dt, int isa,
                     tb_tensor *out, const tb_params *p);

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
