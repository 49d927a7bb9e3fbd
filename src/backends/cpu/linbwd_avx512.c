/* linear_backward's rows of the AVX-512 level, f32, f64, bf16 and f16
 * (kreg.h's backward family; built with only that level's flags), for
 * a narrow layer: N <= LB_NMAX outputs (a classifier's 10), where the
 * GEMM's micro-tiles would run mostly empty on the inner dimension N of
 * dx = gz w^T and on the N rows of dw^T = gz^T x.  Wider layers take
 * backward.c's path (tb_cpu_bw_linear_gemm: the level's GEMM).
 *
 * g [M, N], x [M, K], w [K, N], y [M, N] (the forward's relu output):
 *   gz = y > 0 ? g : 0, and db [N] = gz's columns summed in double in
 *        row order (backward.c's order, so db is the C row's bit for
 *        bit), in one pass over g and y;
 *   dx [M, K] = gz @ w^T: tiles of LB_RM rows x 4 vectors of K,
 *        LB_RM*4 accumulators, per n one load of w^T's row (w turned
 *        once, [N, K]) per vector and one broadcast of gz per row;
 *   dw [K, N] = (gz^T @ x)^T: tiles of LB_RN rows of n x 4 vectors of
 *        K, per m one load of x's row per vector and one broadcast of
 *        gz per n, stored transposed into dw.
 * Every sum runs over its index in order (n for dx, m for dw) with one
 * fused multiply-add a term.  dx's row tiles (by blocks of columns, so
 * w^T's block stays in L1) and dw's column tiles are split over the
 * threads (no sum depends on them).  bf16 and f16: lb_run16. */
#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../base/error.h"
#include "../../ops/alloc.h"
#include "../../ops/half.h"
#include "../../ops/op.h"
#include "../../ops/tensor.h"
#include "bwd_simd.h"
#include "cpu_internal.h"
#include "isa.h"
#include "kreg.h"

#define LB_NMAX 16 /* N up to which the narrow loops run */
#define LB_RM 6    /* dx's rows per tile (24 accumulators) */
#define LB_RN 5    /* dw's n per tile (20 accumulators) */
#define LB_NV 4    /* vectors of K per tile */

typedef struct lb_job {
    const void *gz, *wt, *x;
    void *dx, *dw;
    int64_t M, K, N;
} lb_job;

/* A tile: R rows of a (a[r*sar + q*saq]) x LB_NV vectors of b's rows
 * (b[q*ldb + ..], cols valid columns), summed over q < Q; stored as
 * rows of o (ldo apart), or transposed (tr: o[c*ldo + r]), in OT
 * (OSTOREU/OSTOREM, OCVT: f32 to a 16-bit type); full: all LB_NV
 * vectors within cols (plain loads and stores).  R is a
 * constant at every call (the callers' switches), so acc stays in
 * registers. */
#define LB_TILE(SFX, T, VT, MT, V, LOADZ, STOREM, SET1, FMA, ZERO, LOADU, \
                STOREU, OT, OSTOREU, OSTOREM, OCVT)                        \
    static inline __attribute__((always_inline)) void lb_tile_##SFX(       \
        int R, bool tr, bool full, const T *restrict a, int64_t sar,       \
        int64_t saq,                                                       \
        const T *restrict b, int64_t ldb, int64_t Q, int64_t cols,         \
        OT *restrict o, int64_t ldo)                                       \
    {                                                                      \
        MT m[LB_NV];                                                       \
        for (int v = 0; v < LB_NV; v++) {                                  \
            const int64_t n = full ? V : cols - v * V;                     \
            m[v] = n >= V ? (MT)~(MT)0                                     \
                          : n > 0 ? (MT)(((MT)1 << n) - 1) : (MT)0;        \
        }                                                                  \
        VT acc[LB_RM][LB_NV];                                              \
        _Pragma("GCC unroll 6") for (int r = 0; r < R; r++)                \
            _Pragma("GCC unroll 4") for (int v = 0; v < LB_NV; v++)        \
                acc[r][v] = ZERO();                                        \
        for (int64_t q = 0; q < Q; q++) {                                  \
            VT bv[LB_NV];                                                  \
            _Pragma("GCC unroll 4") for (int v = 0; v < LB_NV; v++)        \
                bv[v] = full ? LOADU(b + q * ldb + v * V)                  \
                             : LOADZ(m[v], b + q * ldb + v * V);           \
            _Pragma("GCC unroll 6") for (int r = 0; r < R; r++) {          \
                const VT s = SET1(a[r * sar + q * saq]);                   \
                _Pragma("GCC unroll 4") for (int v = 0; v < LB_NV; v++)    \
                    acc[r][v] = FMA(s, bv[v], acc[r][v]);                  \
            }                                                              \
        }                                                                  \
        if (!tr) {                                                         \
            _Pragma("GCC unroll 6") for (int r = 0; r < R; r++)            \
                _Pragma("GCC unroll 4") for (int v = 0; v < LB_NV; v++)    \
                    if (full)                                              \
                        OSTOREU(o + r * ldo + v * V, acc[r][v]);           \
                    else                                                   \
                        OSTOREM(o + r * ldo + v * V, m[v], acc[r][v]);     \
            return;                                                        \
        }                                                                  \
        T buf[LB_RM][LB_NV * V];                                           \
        _Pragma("GCC unroll 6") for (int r = 0; r < R; r++)                \
            _Pragma("GCC unroll 4") for (int v = 0; v < LB_NV; v++)        \
                STOREU(&buf[r][v * V], acc[r][v]);                         \
        for (int64_t c = 0; c < cols && c < LB_NV * V; c++)                \
            for (int r = 0; r < R; r++)                                    \
                o[c * ldo + r] = OCVT(buf[r][c]);                          \
    }

/* a tile with its full-width form when its LB_NV vectors are all in K */
#define LB_CALL(SFX, R, TR, a, sar, saq, b, ldb, Q, cols, o, ldo)          \
    ((cols) >= LB_NV * (int64_t)(sizeof(__m512) / sizeof(*(o)))            \
         ? lb_tile_##SFX(R, TR, true, a, sar, saq, b, ldb, Q, cols, o, ldo) \
         : lb_tile_##SFX(R, TR, false, a, sar, saq, b, ldb, Q, cols, o,    \
                         ldo))

/* the callers' cases: a tile of R rows of dx, or of R outputs of dw */
#define LB_DXC(SFX, R)                                                     \
    case R:                                                                \
        LB_CALL(SFX, R, false, a, N, 1, b, K, N, K - k, o, K);             \
        break;
#define LB_DWC(SFX, R)                                                     \
    case R:                                                                \
        LB_CALL(SFX, R, true, a, 1, N, b, K, M, K - k, o, N);              \
        break;

#define LB_DEFS(SFX, T, VT, MT, V, LOADZ, STOREM, SET1, FMA, ZERO, LOADU, \
                STOREU, OT, OSTOREU, OSTOREM, OCVT)                        \
    LB_TILE(SFX, T, VT, MT, V, LOADZ, STOREM, SET1, FMA, ZERO, LOADU,      \
            STOREU, OT, OSTOREU, OSTOREM, OCVT)                            \
    /* dx's row tiles [t0, t1) (LB_RM rows each) */                        \
    static void lb_dx_##SFX(const lb_job *j, int64_t t0, int64_t t1)       \
    {                                                                      \
        const T *gz = j->gz, *wt = j->wt;                                  \
        OT *dx = j->dx;                                                    \
        const int64_t K = j->K, N = j->N, W = LB_NV * V;                   \
        /* column blocks outer: w^T's block (N x W) stays in L1 over   \
         * the row tiles (rows outer read all of w^T, past L1 from      \
         * N*K = 8K elements on: 4096x1024 -> 10 f32 12.4 ms against    \
         * the GEMM's 8.5) */                                           \
        for (int64_t k = 0; k < K; k += W)                                 \
            for (int64_t t = t0; t < t1; t++) {                            \
                const int64_t i = t * LB_RM;                               \
                const int R = j->M - i < LB_RM ? (int)(j->M - i) : LB_RM;  \
                const T *a = gz + i * N, *b = wt + k;                      \
                OT *o = dx + i * K + k;                                    \
                switch (R) {                                               \
                    LB_DXC(SFX, 6) LB_DXC(SFX, 5) LB_DXC(SFX, 4)           \
                    LB_DXC(SFX, 3) LB_DXC(SFX, 2)                          \
                default:                                                   \
                    LB_CALL(SFX, 1, false, a, N, 1, b, K, N, K - k, o, K); \
                }                                                          \
            }                                                              \
    }                                                                      \
    /* dw's column tiles [t0, t1) (LB_NV vectors of K each), every n */    \
    static void lb_dw_##SFX(const lb_job *j, int64_t t0, int64_t t1)       \
    {                                                                      \
        const T *gz = j->gz, *x = j->x;                                    \
        OT *dw = j->dw;                                                    \
        const int64_t K = j->K, N = j->N, M = j->M, W = LB_NV * V;         \
        for (int64_t t = t0; t < t1; t++) {                                \
            const int64_t k = t * W;                                       \
            for (int64_t n = 0; n < N; n += LB_RN) {                       \
                const int R = N - n < LB_RN ? (int)(N - n) : LB_RN;        \
                const T *a = gz + n, *b = x + k;                           \
                OT *o = dw + k * N + n;                                     \
                switch (R) {                                               \
                    LB_DWC(SFX, 5) LB_DWC(SFX, 4) LB_DWC(SFX, 3)           \
                    LB_DWC(SFX, 2)                                         \
                default:                                                   \
                    LB_CALL(SFX, 1, true, a, 1, N, b, K, M, K - k, o, N);  \
                }                                                          \
            }                                                              \
        }                                                                  \
    }                                                                      \
    static void lb_task_##SFX(void *arg, int part, int nparts)             \
    {                                                                      \
        const lb_job *j = arg;                                             \
        const int64_t W = LB_NV * V;                                       \
        const int64_t tm = (j->M + LB_RM - 1) / LB_RM;                     \
        const int64_t tk = (j->K + W - 1) / W;                             \
        int64_t b, e;                                                      \
        tb_cpu_span(tm, 1, part, nparts, &b, &e);                          \
        lb_dx_##SFX(j, b, e);                                              \
        tb_cpu_span(tk, 1, part, nparts, &b, &e);                          \
        lb_dw_##SFX(j, b, e);                                              \
    }

#define LB_SAME(v) (v)
LB_DEFS(f32, float, __m512, __mmask16, 16, _mm512_maskz_loadu_ps,
        _mm512_mask_storeu_ps, _mm512_set1_ps, _mm512_fmadd_ps,
        _mm512_setzero_ps, _mm512_loadu_ps, _mm512_storeu_ps, float,
        _mm512_storeu_ps, _mm512_mask_storeu_ps, LB_SAME)
LB_DEFS(f64, double, __m512d, __mmask8, 8, _mm512_maskz_loadu_pd,
        _mm512_mask_storeu_pd, _mm512_set1_pd, _mm512_fmadd_pd,
        _mm512_setzero_pd, _mm512_loadu_pd, _mm512_storeu_pd, double,
        _mm512_storeu_pd, _mm512_mask_storeu_pd, LB_SAME)

/* bf16 and f16: the f32 loops on widened operands, dx narrowed in the
 * tiles' stores and dw in their transposed ones, each value rounded
 * once to nearest even (ops/half.h's tb_f32_to_bf16 / tb_f32_to_f16; a
 * NaN stays a NaN), as half.c's rows round the f32 row's results. */
static inline __m256i lb_bf16_round(__m512 v)
{
    const __m512i x = _mm512_castps_si512(v);
    const __m512i hi = _mm512_srli_epi32(x, 16);
    __m512i r = _mm512_srli_epi32(
        _mm512_add_epi32(x, _mm512_add_epi32(
                                _mm512_set1_epi32(0x7fff),
                                _mm512_and_si512(hi, _mm512_set1_epi32(1)))),
        16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(
        _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff)),
        _mm512_set1_epi32(0x7f800000));
    r = _mm512_mask_mov_epi32(r, nan,
                              _mm512_or_si512(hi, _mm512_set1_epi32(0x40)));
    return _mm512_cvtepi32_epi16(r);
}
#define LB_RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define LB_BF16_ST(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), \
                                             lb_bf16_round(v))
#define LB_BF16_STM(p, m, v) _mm256_mask_storeu_epi16(p, m, lb_bf16_round(v))
#define LB_F16_ST(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), \
                                            _mm512_cvtps_ph(v, LB_RNE))
#define LB_F16_STM(p, m, v) \
    _mm256_mask_storeu_epi16(p, m, _mm512_cvtps_ph(v, LB_RNE))
LB_DEFS(bf16, float, __m512, __mmask16, 16, _mm512_maskz_loadu_ps,
        _mm512_mask_storeu_ps, _mm512_set1_ps, _mm512_fmadd_ps,
        _mm512_setzero_ps, _mm512_loadu_ps, _mm512_storeu_ps, uint16_t,
        LB_BF16_ST, LB_BF16_STM, tb_f32_to_bf16)
LB_DEFS(f16, float, __m512, __mmask16, 16, _mm512_maskz_loadu_ps,
        _mm512_mask_storeu_ps, _mm512_set1_ps, _mm512_fmadd_ps,
        _mm512_setzero_ps, _mm512_loadu_ps, _mm512_storeu_ps, uint16_t,
        LB_F16_ST, LB_F16_STM, tb_f32_to_f16)

/* gz [M, N] and db in one pass (N <= LB_NMAX): per row one masked load
 * of g and y a vector, the select by y > 0 (NaN y: 0, as the C row),
 * gz's lanes added to double lanes in row order. */
static void lb_mask_f32(const float *g, const float *y, float *gz,
                        float *db, int64_t M, int64_t N)
{
    const __mmask16 nm = (__mmask16)((1u << N) - 1);
    __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
    for (int64_t i = 0; i < M; i++) {
        const __m512 gv = _mm512_maskz_loadu_ps(nm, g + i * N);
        const __m512 yv = _mm512_maskz_loadu_ps(nm, y + i * N);
        const __mmask16 pos =
            _mm512_mask_cmp_ps_mask(nm, yv, _mm512_setzero_ps(), _CMP_GT_OQ);
        const __m512 z = _mm512_maskz_mov_ps(pos, gv);
        _mm512_mask_storeu_ps(gz + i * N, nm, z);
        s0 = _mm512_add_pd(s0, _mm512_cvtps_pd(_mm512_castps512_ps256(z)));
        s1 = _mm512_add_pd(
            s1, _mm512_cvtps_pd(_mm256_castpd_ps(
                    _mm512_extractf64x4_pd(_mm512_castps_pd(z), 1))));
    }
    _mm256_mask_storeu_ps(db, (__mmask8)nm, _mm512_cvtpd_ps(s0));
    _mm256_mask_storeu_ps(db + 8, (__mmask8)(nm >> 8), _mm512_cvtpd_ps(s1));
}

static void lb_mask_f64(const double *g, const double *y, double *gz,
                        double *db, int64_t M, int64_t N)
{
    const __mmask8 m0 = (__mmask8)(N >= 8 ? 0xff : (1u << N) - 1);
    const __mmask8 m1 = (__mmask8)(N > 8 ? (1u << (N - 8)) - 1 : 0);
    __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
    const __m512d zero = _mm512_setzero_pd();
    for (int64_t i = 0; i < M; i++) {
        const double *gi = g + i * N, *yi = y + i * N;
        const __m512d g0 = _mm512_maskz_loadu_pd(m0, gi);
        const __m512d g1 = _mm512_maskz_loadu_pd(m1, gi + 8);
        const __mmask8 p0 = _mm512_mask_cmp_pd_mask(
            m0, _mm512_maskz_loadu_pd(m0, yi), zero, _CMP_GT_OQ);
        const __mmask8 p1 = _mm512_mask_cmp_pd_mask(
            m1, _mm512_maskz_loadu_pd(m1, yi + 8), zero, _CMP_GT_OQ);
        const __m512d z0 = _mm512_maskz_mov_pd(p0, g0);
        const __m512d z1 = _mm512_maskz_mov_pd(p1, g1);
        _mm512_mask_storeu_pd(gz + i * N, m0, z0);
        _mm512_mask_storeu_pd(gz + i * N + 8, m1, z1);
        s0 = _mm512_add_pd(s0, z0);
        s1 = _mm512_add_pd(s1, z1);
    }
    _mm512_mask_storeu_pd(db, m0, s0);
    _mm512_mask_storeu_pd(db + 8, m1, s1);
}

/* w^T [N, K] of w [K, N], w's columns read a k at a time and w^T's rows
 * written in order (k outer with stores a row of K apart took 6% of the
 * 128x10 case; a vector gather of 16 k, 4%). */
#define LB_TURN(SFX, T)                                                    \
    static void lb_turn_##SFX(const T *w, T *wt, int64_t K, int64_t N)     \
    {                                                                      \
        for (int64_t n = 0; n < N; n++) {                                  \
            const T *c = w + n;                                            \
            T *r = wt + n * K;                                             \
            _Pragma("GCC unroll 4") for (int64_t k = 0; k < K; k++)        \
                r[k] = c[k * N];                                           \
        }                                                                  \
    }
LB_TURN(f32, float)
LB_TURN(f64, double)

static int lb_run(void *ctx, tb_dtype dt, const tb_tensor *in,
                  tb_tensor *out, const tb_params *p)
{
    if (ctx && tb_cpu_isa(ctx) < TB_ISA_AVX512)
        return TB_EUNSUPPORTED;
    int rc = tb_cpu_begin_op(ctx, TB_OP_linear_backward, dt, in, out, p);
    if (rc)
        return rc;
    lb_job j = {.x = in[1].data, .dx = out[0].data, .dw = out[1].data,
                .M = in[1].shape[0], .K = in[1].shape[1],
                .N = in[2].shape[1]};
    if (j.N > LB_NMAX || j.M == 0 || j.K == 0 || j.N == 0)
        return tb_cpu_bw_linear_gemm(ctx, dt, in, out);
    const size_t es = tb_dtype_size(dt);
    char *buf = tb_alloc((size_t)((j.M + j.K) * j.N) * es);
    if (!buf)
        return TB_ENOMEM;
    void *gz = buf, *wt = buf + (size_t)(j.M * j.N) * es;
    j.gz = gz, j.wt = wt;
    if (dt == TB_F32) {
        lb_mask_f32(in[0].data, in[3].data, gz, out[2].data, j.M, j.N);
        lb_turn_f32(in[2].data, wt, j.K, j.N);
    } else {
        lb_mask_f64(in[0].data, in[3].data, gz, out[2].data, j.M, j.N);
        lb_turn_f64(in[2].data, wt, j.K, j.N);
    }
    const int64_t W = LB_NV * (dt == TB_F32 ? 16 : 8);
    /* the larger count: a part past the other's tiles gets none of them */
    const int64_t items = (j.M + LB_RM - 1) / LB_RM > (j.K + W - 1) / W
                              ? (j.M + LB_RM - 1) / LB_RM
                              : (j.K + W - 1) / W;
    tb_cpu_parallel(ctx, 2 * j.M * j.K * j.N, items,
                    dt == TB_F32 ? lb_task_f32 : lb_task_f64, &j);
    tb_free(buf);
    return 0;
}

/* 16-bit [n] <-> f32 [n] */
static void lb_widen(tb_dtype dt, const uint16_t *s, float *d, int64_t n)
{
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m =
            (__mmask16)(n - i >= 16 ? 0xffff : (1u << (n - i)) - 1);
        const __m256i h = _mm256_maskz_loadu_epi16(m, s + i);
        const __m512 v =
            dt == TB_BF16
                ? _mm512_castsi512_ps(
                      _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16))
                : _mm512_cvtph_ps(h);
        _mm512_mask_storeu_ps(d + i, m, v);
    }
}

static void lb_narrow(tb_dtype dt, const float *s, uint16_t *d, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        d[i] = dt == TB_BF16 ? tb_f32_to_bf16(s[i]) : tb_f32_to_f16(s[i]);
}

/* bf16 / f16: g, y and w widened (small), x widened once (the dw
 * tiles' rows), then the f32 loops with the 16-bit stores; wider layers
 * on f32 copies by backward.c's GEMM path, narrowed after. */
static int lb_run16(void *ctx, tb_dtype dt, const tb_tensor *in,
                    tb_tensor *out, const tb_params *p)
{
    if (ctx && tb_cpu_isa(ctx) < TB_ISA_AVX512)
        return TB_EUNSUPPORTED;
    int rc = tb_cpu_begin_op(ctx, TB_OP_linear_backward, dt, in, out, p);
    if (rc)
        return rc;
    const int64_t M = in[1].shape[0], K = in[1].shape[1];
    const int64_t N = in[2].shape[1];
    const int64_t MN = M * N, MK = M * K, KN = K * N;
    const bool narrow = N <= LB_NMAX && MN > 0 && K > 0;
    /* g, y, w, x; then narrow: gz, wt; else dx, dw, db */
    const int64_t nf = 2 * MN + KN + MK + (narrow ? MN + KN : MK + KN + N);
    float *f = tb_alloc((size_t)(nf > 0 ? nf : 1) * sizeof(float));
    if (!f)
        return TB_ENOMEM;
    float *g = f, *y = g + MN, *w = y + MN, *x = w + KN, *e = x + MK;
    lb_widen(dt, in[0].data, g, MN);
    lb_widen(dt, in[3].data, y, MN);
    lb_widen(dt, in[2].data, w, KN);
    lb_widen(dt, in[1].data, x, MK);
    if (narrow) {
        float db[LB_NMAX];
        lb_job j = {.gz = e, .wt = e + MN, .x = x, .dx = out[0].data,
                    .dw = out[1].data, .M = M, .K = K, .N = N};
        lb_mask_f32(g, y, e, db, M, N);
        lb_turn_f32(w, e + MN, K, N);
        lb_narrow(dt, db, out[2].data, N);
        const int64_t tm = (M + LB_RM - 1) / LB_RM;
        const int64_t tk = (K + LB_NV * 16 - 1) / (LB_NV * 16);
        tb_cpu_parallel(ctx, 2 * MK * N, tm > tk ? tm : tk,
                        dt == TB_BF16 ? lb_task_bf16 : lb_task_f16, &j);
    } else {
        tb_tensor fi[4], fo[3];
        const float *src[4] = {g, x, w, y};
        float *dst[3] = {e, e + MK, e + MK + KN};
        for (int i = 0; i < 4; i++) {
            fi[i] = in[i];
            fi[i].dtype = TB_F32;
            fi[i].data = (void *)(uintptr_t)src[i];
        }
        for (int i = 0; i < 3; i++) {
            fo[i] = out[i];
            fo[i].dtype = TB_F32;
            fo[i].data = dst[i];
        }
        rc = tb_cpu_bw_linear_gemm(ctx, TB_F32, fi, fo);
        for (int i = 0; rc == 0 && i < 3; i++)
            lb_narrow(dt, dst[i], out[i].data, tb_tensor_numel(&out[i]));
    }
    tb_free(f);
    return rc;
}

int TB_CPU_KFN(linear_backward, bf16, avx512)(void *ctx, const tb_tensor *in,
                                              tb_tensor *out,
                                              const tb_params *p)
{
    return lb_run16(ctx, TB_BF16, in, out, p);
}

int TB_CPU_KFN(linear_backward, f16, avx512)(void *ctx, const tb_tensor *in,
                                             tb_tensor *out,
                                             const tb_params *p)
{
    return lb_run16(ctx, TB_F16, in, out, p);
}

int TB_CPU_KFN(linear_backward, f32, avx512)(void *ctx, const tb_tensor *in,
                                             tb_tensor *out,
                                             const tb_params *p)
{
    return lb_run(ctx, TB_F32, in, out, p);
}

int TB_CPU_KFN(linear_backward, f64, avx512)(void *ctx, const tb_tensor *in,
                                             tb_tensor *out,
                                             const tb_params *p)
{
    return lb_run(ctx, TB_F64, in, out, p);
}
