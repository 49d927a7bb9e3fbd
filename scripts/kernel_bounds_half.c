/*
 * The fast paths of the bf16 and f16 fused element-wise rows (half_simd.h:
 * load, widen, the f32 operation, narrow, in registers) whose compute
 * bound scripts/kernel_bounds.py states (docs/perf-data/compute-bounds.json),
 * as loops for llvm-mca: kernel_bounds.c's 16-bit counterpart.  Not part
 * of tbench: the script compiles this file with the release flags of
 * half_avx512bf16.c, half_avx512.c and half_avx2.c
 * (build/compile_commands.json) to assembly, and hands each marked region
 * to llvm-mca.
 *
 * Each loop is the row's own step, HS_STEP1 or HS_STEP2 of half_simd.h
 * (two vectors of VS_LANES f32 lanes: 32 elements at AVX-512, 16 at
 * AVX2) with the same element functions the shipped rows call (the
 * scalar ops' k an argument, as the rows', not a constant the compiler
 * could fold: x / 0.5 is x * 2).  The regions are those of the rows the
 * machines run: bf16 at avx512bf16 (AVX512_BF16's narrowing), avx512 (an
 * AVX-512 CPU without it) and avx2, f16 at avx512 and avx2
 * (kernel_bounds.py's HALF_LEVELS says the same).
 * The script follows, from each region's start, the shortest path to its
 * end: the step where no lane needs the slow forms (no NaN to quiet, no
 * subnormal f32 result for AVX512_BF16's narrowing), the path of the
 * benchmark's inputs in [-1, 1].
 *
 * Region names carry the dtype: exp_bf16 -> exp_bf16_avx512bf16.
 */
#include <immintrin.h>

#include "half_simd.h"

#define KB_STR(s) #s
#define KB_BEGIN(ROW) __asm volatile("# LLVM-MCA-BEGIN " KB_STR(ROW))
#define KB_END(ROW) __asm volatile("# LLVM-MCA-END " KB_STR(ROW))
/* norm16_simd.h's hook: a step of the normalization gradients' loops
 * (at n = NB_Q rows) is the path from one mark to the same mark an
 * iteration later (the end and the next start in one statement).  Not
 * volatile, with k its operand: a volatile statement in the loop keeps
 * gcc from holding the rows' accumulators in registers (they went to the
 * stack, a load and a store each a step); this one stays in the loop
 * (k changes), costs nothing, and leaves the loop as shipped but for
 * the index (one or two address computations more a step). */
#define KB_NBMARK(ROW)                                                    \
    "# LLVM-MCA-END " KB_STR(ROW) "\n\t# LLVM-MCA-BEGIN " KB_STR(ROW)
#define NB_KB(DT, P, rms, n, k)                                           \
    do {                                                                  \
        if ((n) == NB_Q && KB_NB_ON_##DT) {                               \
            if (rms)                                                      \
                __asm(KB_NBMARK(rms_norm_backward_##DT##__##P) : "+r"(k)); \
            else                                                          \
                __asm(KB_NBMARK(layer_norm_backward_##DT##__##P)          \
                      : "+r"(k));                                         \
        }                                                                 \
    } while (0)

/* HS_FUSED1's step: o = F(a, k) for two vectors */
#define KB_H1(OP, DT)                                                     \
    void kb_##OP##_##DT(const uint16_t *pa, uint16_t *po, long n,        \
                        float k);                                         \
    void kb_##OP##_##DT(const uint16_t *pa, uint16_t *po, long n,        \
                        float k)                                          \
    {                                                                     \
        const vf kv = v_set1(k); /* not a constant: x / 0.5 is x * 2 */   \
        for (long i = 0; i + 2 * VS_LANES <= n; i += 2 * VS_LANES) {      \
            KB_BEGIN(OP##_##DT);                                          \
            HS_STEP1(DT, hs_##OP, pa + i, po + i);                        \
            KB_END(OP##_##DT);                                            \
        }                                                                 \
    }
/* HS_FUSED2's step: o = F(a, b) for two vectors, with the op's pairs
 * (half_simd.h's HS_P_<op>: add_relu's even/odd bf16; none for the
 * backward ops, as HS_DEF_BWD) */
#define KB_P_add HS_P_add
#define KB_P_sub HS_P_sub
#define KB_P_mul HS_P_mul
#define KB_P_div HS_P_div
#define KB_P_add_relu HS_P_add_relu
#define KB_P_sigmoid_backward
#define KB_P_tanh_backward
/* (P expanded here, before HS_STEP2 pastes it) */
#define KB_STEP2(DT, P, F, pa, pb, po) HS_STEP2(DT, P, F, pa, pb, po)
#define KB_H2(OP, F, DT)                                                  \
    void kb_##OP##_##DT(const uint16_t *pa, const uint16_t *pb,          \
                        uint16_t *po, long n);                            \
    void kb_##OP##_##DT(const uint16_t *pa, const uint16_t *pb,          \
                        uint16_t *po, long n)                             \
    {                                                                     \
        for (long i = 0; i + 2 * VS_LANES <= n; i += 2 * VS_LANES) {      \
            KB_BEGIN(OP##_##DT);                                          \
            KB_STEP2(DT, KB_P_##OP, F, pa + i, pb + i, po + i);           \
            KB_END(OP##_##DT);                                            \
        }                                                                 \
    }

/* Not gelu, gelu_tanh and gelu_backward: the shortest path through
 * their 16-bit steps depends on the compiler's layout (at -O2 it is the
 * saturated lanes' branch: gelu bf16 avx2 0.24 cycles/element, 2.0 at
 * -O3), so it is not the benchmark's path; the f32 gelu rows'
 * (kernel_bounds.c) are stated.  softplus: hs_softplus, the beta-1
 * step (the default, the benchmark's).  pow: KB_POW below (avx2's
 * loop is the f32 row's on widened chunks: no entry). */
#define KB_UNARY_OPS(X, DT)                                               \
    X(exp, DT) X(tanh, DT) X(sigmoid, DT)                                 \
    X(silu, DT) X(add_scalar, DT) X(sub_scalar, DT)                       \
    X(mul_scalar, DT) X(div_scalar, DT) X(sqrt, DT) X(rsqrt, DT)          \
    X(hardswish, DT) X(softplus, DT) KB_LEAKY_##DT(X(leaky_relu, DT))
/* leaky_relu f16 at avx512 is hy_leaky_relu_f16's ymm step: left out
 * as the binary ops' (below; kernel_bounds.py's HALF_LEFT_OUT) */
#define KB_LEAKY_bf16(x) x
#ifdef HS_F16_YMM
#define KB_LEAKY_f16(x)
#else
#define KB_LEAKY_f16(x) x
#endif
#define KB_BINARY_OPS(X, DT)                                              \
    X(add, hs_add, DT) X(sub, hs_sub, DT) X(mul, v_mul, DT)               \
    X(div, v_div, DT) X(add_relu, hs_add_relu, DT)
/* maximum and minimum: hs_mm_<dt>'s step on the 16-bit patterns (no
 * conversion: both dtypes at every level), the path of a vector
 * without NaN */
#define KB_INF_bf16 0x7f80
#define KB_INF_f16 0x7c00
#define KB_MM(OP, MX, DT)                                                 \
    void kb_##OP##_##DT(const uint16_t *pa, const uint16_t *pb,          \
                        uint16_t *po, long n);                            \
    void kb_##OP##_##DT(const uint16_t *pa, const uint16_t *pb,          \
                        uint16_t *po, long n)                             \
    {                                                                     \
        for (long i = 0; i + 2 * VS_LANES <= n; i += 2 * VS_LANES) {      \
            KB_BEGIN(OP##_##DT);                                          \
            const hv2 a = h_load2(pa + i), b = h_load2(pb + i);           \
            if (hs_mm_nan(a, b, KB_INF_##DT))                             \
                po[i] = 0;                                                \
            else                                                          \
                h_store2(po + i, hs_mm_pick(a, b, MX));                   \
            KB_END(OP##_##DT);                                            \
        }                                                                 \
    }
#define KB_MM_OPS(X, DT) X(maximum, 1, DT) X(minimum, 0, DT)
/* the backward activations' step (HS_FUSED2 on g and x); not
 * gelu_backward (above; avx2 bf16: 1.125 cycles/element at -O3, 0.39
 * at -O2) */
#define KB_BWD_OPS(X, DT)                                                 \
    X(sigmoid_backward, bw_sigmoid_f, DT) X(tanh_backward, bw_tanh_f, DT)
/* log: at 16 lanes the short log's step (hs_lq_step: the patching of
 * proven exceptions is skipped where there are none, as on the Zen 4
 * the file was written on), else HS_FUSED1's on vs_log */
#define KB_LOG_OPS(X, DT) X(log, DT)

#if VS_LANES == 16
#define KB_LOG(OP, DT)                                                    \
    void kb_log_##DT(const uint16_t *pa, uint16_t *po, long n);          \
    void kb_log_##DT(const uint16_t *pa, uint16_t *po, long n)           \
    {                                                                     \
        for (long i = 0; i + 2 * VS_LANES <= n; i += 2 * VS_LANES) {      \
            KB_BEGIN(log_##DT);                                           \
            h_store2(po + i, hs_lq_step_##DT(pa + i));                    \
            KB_END(log_##DT);                                             \
        }                                                                 \
    }
#else
#define KB_LOG(OP, DT) KB_H1(OP, DT)
#endif

/* pow at 16 lanes: hs_pow_<dt>'s software-pipelined step (step k's
 * log2 with step k - 1's exp2, 2 x 16 elements, as kernel_bounds.c's
 * kb_pow), every lane on the short log2's fast path (the benchmark's
 * bases [0.1, 2] and exponents [-2, 2]: |b log2 a| <= 6.7) */
#if VS_LANES == 16
#define KB_POW(DT)                                                        \
    void kb_pow_##DT(const uint16_t *pa, const uint16_t *pb, uint16_t *po, \
                     long n);                                             \
    void kb_pow_##DT(const uint16_t *pa, const uint16_t *pb, uint16_t *po, \
                     long n)                                              \
    {                                                                     \
        pf_blk s, t;                                                      \
        hs_pow_log_##DT(pa, pb, &s);                                      \
        for (long i = 32; i + 32 <= n; i += 32) {                         \
            KB_BEGIN(pow_##DT);                                           \
            _mm_prefetch((const char *)(pa + i) + 2048, _MM_HINT_T0);     \
            _mm_prefetch((const char *)(pb + i) + 2048, _MM_HINT_T0);     \
            hs_pow_log_##DT(pa + i, pb + i, &t);                          \
            hs_pow_exp_##DT(pa + i - 32, pb + i - 32, po + i - 32, &s);   \
            s = t;                                                        \
            KB_END(pow_##DT);                                             \
        }                                                                 \
    }
#else
#define KB_POW(DT)
#endif

/* softmax and log_softmax rows in bf16/f16 (half_lsm_fused.h's rows,
 * the f32 rows' passes of kernel_bounds.c's KB_LSM on values widened as
 * loaded and narrowed as stored), per element: the max pass (bf16: a
 * 32-value load split by a shift and an and, hl_rowmax's; f16: two
 * widenings), exp(x - m) of the values loaded and widened again,
 * summed; softmax stores the exponentials (f32, L1) and scales them by
 * 1 / s, narrowed as stored, log_softmax writes (x - m) - log s
 * narrowed.  The short rows (n <= 32: widened into f32 blocks in L1,
 * kernels_simd.h's blocks) do the same work per element plus the
 * transposes. */
#define KB_LSM16(ROW, SOFT, DT, F16)                                      \
    void kb_##ROW##_##DT(const uint16_t *x, uint16_t *y, float *e,        \
                         long n, float m, float c);                       \
    void kb_##ROW##_##DT(const uint16_t *x, uint16_t *y, float *e,        \
                         long n, float m, float c)                        \
    {                                                                     \
        const vf vm_ = v_set1(m), vc = v_set1(c);                         \
        vf m0 = vm_, m1 = vm_, s0 = vc, s1 = vc;                          \
        for (long i = 0; i + 2 * VS_LANES <= n; i += 2 * VS_LANES) {      \
            KB_BEGIN(ROW##_##DT);                                         \
            if (F16) {                                                    \
                m0 = v_max(m0, h_f16_widen1(h_load1(x + i)));             \
                m1 = v_max(m1, h_f16_widen1(h_load1(x + i + VS_LANES)));  \
            } else {                                                      \
                const hvi v = h_load2(x + i);                             \
                m0 = v_max(m0, hi_f(HS_W(slli_epi32)(v, 16)));            \
                m1 = v_max(m1, hi_f(hi_and(v, hi_set1(-65536))));         \
            }                                                             \
            const vf x0 = v_sub(h_##DT##_widen1(h_load1(x + i)), vm_);    \
            const vf x1 =                                                 \
                v_sub(h_##DT##_widen1(h_load1(x + i + VS_LANES)), vm_);   \
            const vf e0 = vs_exp(x0), e1 = vs_exp(x1);                    \
            s0 = v_add(s0, e0);                                           \
            s1 = v_add(s1, e1);                                           \
            if (SOFT) {                                                   \
                v_store(e + i, e0);                                       \
                v_store(e + i + VS_LANES, e1);                            \
                h_store1(y + i, h_##DT##_narrow1(v_mul(v_load(e + i), vc))); \
                h_store1(y + i + VS_LANES,                                \
                         h_##DT##_narrow1(                                \
                             v_mul(v_load(e + i + VS_LANES), vc)));       \
            } else {                                                      \
                h_store1(y + i, h_##DT##_narrow1(v_sub(x0, vc)));         \
                h_store1(y + i + VS_LANES,                                \
                         h_##DT##_narrow1(v_sub(x1, vc)));                \
            }                                                             \
            KB_END(ROW##_##DT);                                           \
        }                                                                 \
        v_store(e, v_add(v_add(m0, m1), v_add(s0, s1)));                  \
    }

/* log_softmax_backward in bf16/f16, per element: the f32 row's work
 * (kernel_bounds.c's kb_log_softmax_backward: g widened to double and
 * summed in two pairs of accumulators, then g - exp(y) s in one fnma) on
 * g and y widened as loaded and dx narrowed as stored.  The row itself
 * (half_lsm.c) widens blocks into an f32 scratch in L1 and narrows the
 * f32 row's results: that work plus the scratch's stores and loads, so
 * this is a lower bound on it. */
#ifdef __AVX512F__
#define KB_DACC(v, lo, hi)                                                \
    (lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm512_castps512_ps256(v))), \
     hi = _mm512_add_pd(hi, _mm512_cvtps_pd(                              \
                                _mm512_extractf32x8_ps(v, 1))))
typedef __m512d kb_vd;
#define KB_DZERO _mm512_setzero_pd()
#define KB_DSUM(a, b) _mm512_reduce_add_pd(_mm512_add_pd(a, b))
#else
#define KB_DACC(v, lo, hi)                                                \
    (lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v))), \
     hi = _mm256_add_pd(hi, _mm256_cvtps_pd(                              \
                                _mm256_extractf128_ps(v, 1))))
typedef __m256d kb_vd;
#define KB_DZERO _mm256_setzero_pd()
#define KB_DSUM(a, b) _mm256_cvtsd_f64(_mm256_add_pd(a, b))
#endif
#define KB_LSMBW16(DT)                                                    \
    void kb_log_softmax_backward_##DT(const uint16_t *g,                  \
                                      const uint16_t *y, uint16_t *dx,    \
                                      long n, float s, double *out);      \
    void kb_log_softmax_backward_##DT(const uint16_t *g,                  \
                                      const uint16_t *y, uint16_t *dx,    \
                                      long n, float s, double *out)       \
    {                                                                     \
        kb_vd l0 = KB_DZERO, h0 = KB_DZERO, l1 = KB_DZERO, h1 = KB_DZERO;  \
        const vf st = v_set1(s);                                          \
        for (long i = 0; i + 2 * VS_LANES <= n; i += 2 * VS_LANES) {      \
            KB_BEGIN(log_softmax_backward_##DT);                          \
            const vf g0 = h_##DT##_widen1(h_load1(g + i));                \
            const vf g1 = h_##DT##_widen1(h_load1(g + i + VS_LANES));     \
            KB_DACC(g0, l0, h0);                                          \
            KB_DACC(g1, l1, h1);                                          \
            const vf y0 = h_##DT##_widen1(h_load1(y + i));                \
            const vf y1 = h_##DT##_widen1(h_load1(y + i + VS_LANES));     \
            h_store1(dx + i, h_##DT##_narrow1(v_fnma(vs_exp(y0), st, g0))); \
            h_store1(dx + i + VS_LANES,                                   \
                     h_##DT##_narrow1(v_fnma(vs_exp(y1), st, g1)));       \
            KB_END(log_softmax_backward_##DT);                            \
        }                                                                 \
        *out = KB_DSUM(l0, h0) + KB_DSUM(l1, h1);                         \
    }

/* mul_backward and div_backward with b a broadcast row (half_bwbin_simd.h,
 * hbb_<dt>_step2: one row's two vectors of columns, g and a widened,
 * da narrowed and stored, db's column sums updated in registers; div's
 * a full, b the row: g / b and (g a) (1 / (b b)), no NaN, no subnormal
 * result).  bf16 only: f16 runs the avx2 level's loop at the AVX-512
 * levels (half_bwd.c), which this file cannot build at avx512. */
#include "half_bwbin_simd.h"
#define KB_BWBIN(OP, K, DT)                                               \
    void kb_##OP##_##DT(const uint16_t *g, const uint16_t *f,            \
                        uint16_t *df, const float *v, float *dv, long R,  \
                        long C);                                          \
    void kb_##OP##_##DT(const uint16_t *g, const uint16_t *f,            \
                        uint16_t *df, const float *v, float *dv, long R,  \
                        long C)                                           \
    {                                                                     \
        vf rv[2] = {v_load(v), v_load(v + VS_LANES)};                     \
        vf rq[2] = {v_load(v + 2 * VS_LANES), v_load(v + 3 * VS_LANES)};  \
        vf s[2] = {rq[0], rq[1]};                                         \
        for (long r = 0; r < R; r++) {                                    \
            KB_BEGIN(OP##_##DT);                                          \
            hbb_##DT##_step2(K, g + r * C, f + r * C, df + r * C, rv, rq, \
                             s);                                          \
            KB_END(OP##_##DT);                                            \
        }                                                                 \
        v_store(dv, s[0]);                                                \
        v_store(dv + VS_LANES, s[1]);                                     \
    }

/* bf16: at every level (the avx512 level's integer narrowing is the row
 * an AVX-512 CPU without AVX512_BF16 runs: the Xeon of op-limits-xeon) */
KB_UNARY_OPS(KB_H1, bf16)
KB_BINARY_OPS(KB_H2, bf16)
KB_MM_OPS(KB_MM, bf16)
KB_BWD_OPS(KB_H2, bf16)
KB_LOG_OPS(KB_LOG, bf16)
KB_POW(bf16)
KB_LSM16(softmax, 1, bf16, 0)
KB_LSM16(log_softmax, 0, bf16, 0)
KB_LSMBW16(bf16)
KB_BWBIN(mul_backward, HB_MUL, bf16)
KB_BWBIN(div_backward, HB_DIV_AF, bf16)

/* f16: avx512 and avx2.  Not its IEEE binary ops at avx512 (hy_*_f16's
 * ymm step): llvm-mca 19's znver4 model gives that step 7 cycles for 16
 * elements (vcvtph2ps and vcvtps2ph on FP2/FP3), where this project's
 * Zen 4 VM runs add, sub, mul and add_relu f16 at 1M in 0.60-0.83x of
 * that (op_limits.py, one thread, 2026-11-29), so the model is wrong for
 * it and the rows are left out, as rsqrt f32 is; leaky_relu f16 too,
 * whose avx512 loop is hy_leaky_relu_f16's ymm step.  (maximum and minimum
 * work on the patterns, no conversion: stated.) */
#ifndef __AVX512BF16__
KB_UNARY_OPS(KB_H1, f16)
KB_MM_OPS(KB_MM, f16)
KB_BWD_OPS(KB_H2, f16)
KB_LOG_OPS(KB_LOG, f16)
KB_POW(f16)
KB_LSM16(softmax, 1, f16, 1)
KB_LSM16(log_softmax, 0, f16, 1)
KB_LSMBW16(f16)
#ifndef HS_F16_YMM
KB_BINARY_OPS(KB_H2, f16)
#endif
#endif

/* layer_norm and rms_norm bf16 forward (norm16_simd.h at avx512bf16):
 * the step of nz_rows's loop, row r's scale pass on 32 elements with
 * row r + 1's sums of the same 32 (no NaN, no subnormal result: the
 * benchmark's); layer_norm's row r read widened from its scratch sr,
 * row r + 1's widened values stored to sn (rows up to NZ_SCR_D), where
 * bf16 rms_norm widens again (NZ_SCR_bf16; its sums by unpacks,
 * NZ_UNPK_bf16, its zero results counted for the row, nb_st2z).  Not f16's (avx512): the model gives vcvtph2ps zmm 2
 * cycles, this Zen 4 1.33 (scripts/insn_tp.c), so its bound would be
 * 1.25-1.5x too high. */
#ifdef __AVX512BF16__
#include "norm16_simd.h"
#define KB_NORM(DT)                                                       \
    NZ_ROWS(DT)                                                           \
    void kb_nz_rows_##DT(const uint16_t *x, uint16_t *y, long rows,      \
                         long D, const float *w, const float *b);         \
    void kb_nz_rows_##DT(const uint16_t *x, uint16_t *y, long rows,      \
                         long D, const float *w, const float *b)          \
    {                                                                     \
        nz_rows_##DT(x, y, rows, D, w, b, 1e-5f); /* (used) */            \
    }                                                                     \
    void kb_rms_norm_##DT(const uint16_t *xr, uint16_t *yr,               \
                          const uint16_t *xn, const float *w, long D,     \
                          float inv, float *o);                           \
    void kb_rms_norm_##DT(const uint16_t *xr, uint16_t *yr,               \
                          const uint16_t *xn, const float *w, long D,     \
                          float inv, float *o)                            \
    {                                                                     \
        const __m512 z = _mm512_setzero_ps(), vr = _mm512_set1_ps(inv);   \
        __m512 a[2] = {z, z}, q[2] = {z, z};                              \
        __m512i zw = _mm512_set1_epi16(-1);                               \
        for (long k = 0; k + 32 <= D; k += 32) {                          \
            KB_BEGIN(rms_norm_##DT);                                      \
            nz_step_##DT(xn, k, z, true, false, a, q, NULL);              \
            nb_st2z_##DT(yr, k,                                           \
                         nz_yx_##DT(xr, NULL, w, NULL, k, 0xffff, z, z,   \
                                    vr),                                  \
                         nz_yx_##DT(xr, NULL, w, NULL, k + 16, 0xffff, z, \
                                    z, vr),                               \
                         &zw);                                            \
            KB_END(rms_norm_##DT);                                        \
        }                                                                 \
        _mm512_storeu_ps(o, _mm512_add_ps(q[0], q[1]));                   \
        _mm512_storeu_si512(o + 16, zw);                                  \
    }                                                                     \
    void kb_layer_norm_##DT(const uint16_t *xr, uint16_t *yr,             \
                            const uint16_t *xn, const float *w,           \
                            const float *b, long D, float sh, float m,    \
                            float inv, float cn, float *o,                \
                            const float *sr, float *sn);                  \
    void kb_layer_norm_##DT(const uint16_t *xr, uint16_t *yr,             \
                            const uint16_t *xn, const float *w,           \
                            const float *b, long D, float sh, float m,    \
                            float inv, float cn, float *o,                \
                            const float *sr, float *sn)                   \
    {                                                                     \
        const __m512 z = _mm512_setzero_ps(), vr = _mm512_set1_ps(inv);   \
        const __m512 vsh = _mm512_set1_ps(sh), vm = _mm512_set1_ps(m);    \
        const __m512 vc = _mm512_set1_ps(cn);                             \
        __m512 a[2] = {z, z}, q[2] = {z, z};                              \
        for (long k = 0; k + 32 <= D; k += 32) {                          \
            KB_BEGIN(layer_norm_##DT);                                    \
            nz_step_##DT(xn, k, vc, false, true, a, q, sn);               \
            nb_st2_##DT(yr, k,                                            \
                        nz_yx_##DT(xr, sr, w, b, k, 0xffff, vsh, vm, vr), \
                        nz_yx_##DT(xr, sr, w, b, k + 16, 0xffff, vsh, vm, \
                                   vr));                                  \
            KB_END(layer_norm_##DT);                                      \
        }                                                                 \
        _mm512_storeu_ps(o, _mm512_add_ps(_mm512_add_ps(a[0], a[1]),      \
                                          _mm512_add_ps(q[0], q[1])));    \
    }
KB_NORM(bf16)
#endif

/* layer_norm_backward and rms_norm_backward (norm16_simd.h's NB_ROWS at
 * avx512, the rows an AVX-512 CPU without AVX512_BF16 runs): the chunk
 * loop's two passes over a quad of 4 rows, the shipped loops themselves
 * (nb_qsumsn, nb_qdxn at n = 4, whole vectors) marked by NB_KB (above):
 * ROW__p1 one step of the sums' loop (the sums of d, d^2, gh, gh d about
 * each row's shift), ROW__p2 one of dx's (dx, and the chunk's dw and db
 * loaded, added to and stored), 16 columns of 4 rows, 64 elements a step
 * each (KB-VECTORS 4); kernel_bounds.py adds a row's passes.  bf16 keeps
 * a layer_norm quad widened (NB_WID_bf16, as at the table's 512x256):
 * x and g stored as f32 in the sums' pass and read back in dx's.  f32
 * and bf16 are priced (KB_NB_ON_<DT>); f16's loops are built for
 * scripts/mix_tp.c only: its conversions are what llvm-mca's models cost
 * wrongly (znver4: vcvtph2ps zmm 2 cycles, 1.33 on Zen 4, insn_tp.c;
 * icelake-server: the loops ran 1.54x (layer_norm) and 1.70x (rms_norm)
 * its step in L1 on the Xeon of 2026-12-01, mix_tp_rows.py), and bf16 at
 * avx512bf16 (Zen 4's row: vcvtneps2bf16 and vpmovzxwd, the same). */
#ifdef __AVX512F__
#ifndef TB_BACKENDS_CPU_NORM16_SIMD_H
#include "norm16_simd.h"
#endif
#define KB_VECTORS(ROW, N)                                                \
    __asm volatile("# KB-VECTORS " KB_STR(ROW) " %c0" : : "i"(N))
#define KB_NB_ON_f32 1
#define KB_NB_ON_bf16 1
#define KB_NB_ON_f16 0
#define KB_NBW(OP, RMS, DT)                                               \
    void kb_##OP##_backward_##DT##__p1(const char *x, const char *g,      \
                                       const float *w, long D,            \
                                       const float *c, float *sw,         \
                                       float (*t)[4]);                    \
    void kb_##OP##_backward_##DT##__p1(                      \
        const char *x, const char *g, const float *w, long D,             \
        const float *c, float *sw, float (*t)[4])                         \
    {                                                                     \
        const bool wid = NB_WID_##DT > ((RMS) ? 1 : 0);                   \
        KB_VECTORS(OP##_backward_##DT##__p1, 4);                          \
        nb_qsumsn_##DT(RMS, x, g, w, D, NB_Q, c, t, wid ? sw : NULL,      \
                       wid ? sw + NB_Q * D : NULL);                       \
    }                                                                     \
    void kb_##OP##_backward_##DT##__p2(                      \
        const char *x, const char *g, const float *w, char *dr, long D,   \
        const nb_grp *s, float *pw, float *pb, const float *sw);          \
    void kb_##OP##_backward_##DT##__p2(                      \
        const char *x, const char *g, const float *w, char *dr, long D,   \
        const nb_grp *s, float *pw, float *pb, const float *sw)           \
    {                                                                     \
        const bool wid = NB_WID_##DT > ((RMS) ? 1 : 0);                   \
        KB_VECTORS(OP##_backward_##DT##__p2, 4);                          \
        nb_qdxn_##DT(RMS, x, g, w, dr, D, NB_Q, s, false, pw, pb,         \
                     wid ? sw : NULL, wid ? sw + NB_Q * D : NULL);        \
    }
#define KB_NBW2(DT, ES)                                                   \
    NB_ROWS(DT, ES)                                                       \
    KB_NBW(layer_norm, false, DT)                                         \
    KB_NBW(rms_norm, true, DT)
#ifndef __AVX512BF16__
KB_NBW2(f32, 4)
KB_NBW2(f16, 2)
KB_NBW2(bf16, 2)
#endif
#endif
