/*
 * Portable C inner loops of the cpu backend (the "scalar" ISA level) and
 * the table filler that climbs the ISA ladder (see kernels.h).
 *
 * Written for the auto-vectoriser of a baseline x86-64 build (SSE2):
 * restrict pointers, unit-stride inner loops, explicit independent
 * accumulator lanes where a reduction would otherwise need -ffast-math
 * to vectorise.  No intrinsics and no -m flags here.
 *
 * Typed loops take restrict-qualified typed parameters (GCC keeps that
 * through inlining; restrict locals converted from void * only get a
 * run-time alias check) and are wrapped in void * functions so the
 * dtype-generic drivers in cpu.c can call them through the table.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/cpu/cpu_config.h"
#include "isa.h"
#include "kernels.h"

/* Independent accumulator lanes for reductions: the compiler keeps them
 * in vector registers without needing to reassociate a scalar sum. */
#define C_LANES 16
/* Matmul cache blocking: a C_MM_KC x C_MM_NC block of B (128 KiB in
 * f32, 256 KiB in f64) stays in L2 while every row of the output part
 * streams over it; one C_MM_NC slice of a C row stays in L1. */
#define C_MM_KC 128
#define C_MM_NC 256
/* Transpose rows per call: with a power-of-two row pitch every row maps
 * to the same L1 set, and 16 or 32 of them thrash an 8/12-way L1
 * (measured 2-3x slower than 8 for these scalar loops). */
#define C_TR_TILE 8

/* Ends each macro below that defines functions at file scope, so that
 * a use of it takes a semicolon as a declaration does (and a tool that
 * reads C without expanding macros, ctags, sees a declaration and not
 * the header of one function spanning the file). */
#define C_END _Static_assert(1, "")

/* ---- element-wise binary ops ------------------------------------------ */

#define C_BINARY_LOOPS(NAME, OP, T)                                       \
    static inline void NAME##_vv_t(const T *restrict a,                   \
                                   const T *restrict b, T *restrict o,    \
                                   int64_t n)                             \
    {                                                                     \
        for (int64_t i = 0; i < n; i++)                                   \
            o[i] = a[i] OP b[i];                                          \
    }                                                                     \
    static inline void NAME##_sv_t(const T a, const T *restrict b,        \
                                   T *restrict o, int64_t n)              \
    {                                                                     \
        for (int64_t i = 0; i < n; i++)                                   \
            o[i] = a OP b[i];                                             \
    }                                                                     \
    static inline void NAME##_vs_t(const T *restrict a, const T b,        \
                                   T *restrict o, int64_t n)              \
    {                                                                     \
        for (int64_t i = 0; i < n; i++)                                   \
            o[i] = a[i] OP b;                                             \
    }                                                                     \
    static void NAME##_vv(const void *a, const void *b, void *o,          \
                          int64_t n)                                      \
    {                                                                     \
        NAME##_vv_t(a, b, o, n);                                          \
    }                                                                     \
    static void NAME##_sv(const void *a, const void *b, void *o,          \
                          int64_t n)                                      \
    {                                                                     \
        NAME##_sv_t(*(const T *)a, b, o, n);                              \
    }                                                                     \
    static void NAME##_vs(const void *a, const void *b, void *o,          \
                          int64_t n)                                      \
    {                                                                     \
        NAME##_vs_t(a, *(const T *)b, o, n);                              \
    }                                                                     \
    C_END

C_BINARY_LOOPS(add_f32, +, float);
C_BINARY_LOOPS(add_f64, +, double);
C_BINARY_LOOPS(sub_f32, -, float);
C_BINARY_LOOPS(sub_f64, -, double);
C_BINARY_LOOPS(mul_f32, *, float);
C_BINARY_LOOPS(mul_f64, *, double);
C_BINARY_LOOPS(div_f32, /, float);
C_BINARY_LOOPS(div_f64, /, double);

/* ---- add_relu ------------------------------------------------------------ */

/* relu(a + b) in one pass: the sum is rounded to T, then the same
 * compare-and-mask as relu below (NaN kept, -0 and negatives give +0),
 * so the result is bit for bit that of add then relu. */
#define C_ADD_RELU_LOOPS(SFX, T)                                          \
    static inline T add_relu_##SFX##_1(T a, T b)                          \
    {                                                                     \
        const T s = a + b;                                                \
        return s <= 0 ? (T)0 : s;                                         \
    }                                                                     \
    static inline void add_relu_##SFX##_vv_t(const T *restrict a,        \
                                             const T *restrict b,        \
                                             T *restrict o, int64_t n)   \
    {                                                                     \
        for (int64_t i = 0; i < n; i++)                                   \
            o[i] = add_relu_##SFX##_1(a[i], b[i]);                        \
    }                                                                     \
    static inline void add_relu_##SFX##_bc_t(const T *restrict v, T s,   \
                                             T *restrict o, int64_t n)   \
    {                                                                     \
        for (int64_t i = 0; i < n; i++)                                   \
            o[i] = add_relu_##SFX##_1(v[i], s);                           \
    }                                                                     \
    static void add_relu_##SFX##_vv(const void *a, const void *b,         \
                                    void *o, int64_t n)                   \
    {                                                                     \
        add_relu_##SFX##_vv_t(a, b, o, n);                                \
    }                                                                     \
    /* a + b == b + a exactly, so both broadcast forms share a loop. */   \
    static void add_relu_##SFX##_sv(const void *a, const void *b,         \
                                    void *o, int64_t n)                   \
    {                                                                     \
        add_relu_##SFX##_bc_t(b, *(const T *)a, o, n);                    \
    }                                                                     \
    static void add_relu_##SFX##_vs(const void *a, const void *b,         \
                                    void *o, int64_t n)                   \
    {                                                                     \
        add_relu_##SFX##_bc_t(a, *(const T *)b, o, n);                    \
    }                                                                     \
    C_END

C_ADD_RELU_LOOPS(f32, float);
C_ADD_RELU_LOOPS(f64, double);

/* ---- relu -------------------------------------------------------------- */

/* relu: x <= 0 ? +0 : x keeps NaN (the comparison is false) and maps
 * -0.0 to +0.0; it compiles to a compare and a mask, no branch. */
#define C_RELU_LOOP(NAME, T)                                              \
    static inline void NAME##_t(const T *restrict x, T *restrict o,       \
                                int64_t n)                                \
    {                                                                     \
        for (int64_t i = 0; i < n; i++)                                   \
            o[i] = x[i] <= 0 ? (T)0 : x[i];                               \
    }                                                                     \
    static void NAME(const void *x, void *o, int64_t n)                   \
    {                                                                     \
        NAME##_t(x, o, n);                                                \
    }                                                                     \
    C_END

C_RELU_LOOP(relu_f32, float);
C_RELU_LOOP(relu_f64, double);

/* ---- sums -------------------------------------------------------------- */

/* Sum of n contiguous values, returned in double.  Blocked: up to
 * TB_CPU_SUM_BLOCK values go through C_LANES lanes of type T (at most 64
 * terms per lane), each block is folded into a double. */
#define C_SUM_LOOPS(SFX, T)                                               \
    static double sum_##SFX##_block(const T *restrict x, int64_t n)       \
    {                                                                     \
        T acc[C_LANES] = {0};                                             \
        int64_t i = 0;                                                    \
        for (; i + C_LANES <= n; i += C_LANES)                            \
            for (int l = 0; l < C_LANES; l++)                             \
                acc[l] += x[i + l];                                       \
        double s = 0;                                                     \
        for (int l = 0; l < C_LANES; l++)                                 \
            s += acc[l];                                                  \
        for (; i < n; i++)                                                \
            s += x[i];                                                    \
        return s;                                                         \
    }                                                                     \
    static double sum_##SFX##_row(const void *px, int64_t n)              \
    {                                                                     \
        const T *x = px;                                                  \
        double s = 0;                                                     \
        for (int64_t i = 0; i < n; i += TB_CPU_SUM_BLOCK)                 \
            s += sum_##SFX##_block(x + i, n - i < TB_CPU_SUM_BLOCK        \
                                              ? n - i                     \
                                              : TB_CPU_SUM_BLOCK);        \
        return s;                                                         \
    }                                                                     \
    /* Blocked like the row sums, TB_CPU_SUM_COL_ROWS rows at a time in T \
     * per column, then folded into the double acc. */                    \
    static inline void sum_##SFX##_cols_t(const T *restrict x, int64_t R, \
                                          int64_t ld, int64_t w,          \
                                          double *restrict acc)           \
    {                                                                     \
        enum { RB = TB_CPU_SUM_COL_ROWS };                                \
        T part[TB_CPU_SUM_COL_TILE];                                      \
        for (int64_t r0 = 0; r0 < R; r0 += RB) {                          \
            int64_t re = R - r0 < RB ? R : r0 + RB;                       \
            for (int64_t j = 0; j < w; j++)                               \
                part[j] = x[r0 * ld + j];                                 \
            for (int64_t r = r0 + 1; r < re; r++)                         \
                for (int64_t j = 0; j < w; j++)                           \
                    part[j] += x[r * ld + j];                             \
            for (int64_t j = 0; j < w; j++)                               \
                acc[j] += part[j];                                        \
        }                                                                 \
    }                                                                     \
    static void sum_##SFX##_cols(const void *x, int64_t R, int64_t ld,    \
                                 int64_t w, double *acc)                  \
    {                                                                     \
        sum_##SFX##_cols_t(x, R, ld, w, acc);                             \
    }                                                                     \
    C_END

C_SUM_LOOPS(f32, float);
C_SUM_LOOPS(f64, double);

/* The first pass of a softmax over a tile of w columns (stride ld
 * between rows): each column's max into m, its sum s zeroed. */
#define C_COLMAX(SFX, T)                                                  \
    static inline void colmax_##SFX(const T *restrict x, int64_t R,       \
                                    int64_t ld, int64_t w, T *m,          \
                                    double *s)                            \
    {                                                                     \
        for (int64_t j = 0; j < w; j++) {                                 \
            m[j] = x[j];                                                  \
            s[j] = 0;                                                     \
        }                                                                 \
        for (int64_t r = 1; r < R; r++)                                   \
            for (int64_t j = 0; j < w; j++)                               \
                m[j] = x[r * ld + j] > m[j] ? x[r * ld + j] : m[j];       \
    }                                                                     \
    C_END

C_COLMAX(f32, float);
C_COLMAX(f64, double);

/* ---- log_softmax ------------------------------------------------------- */

/* log_softmax of contiguous rows and of a tile of w columns (stride ld
 * between rows): (x - max) - log(sum exp(x - max)), the sum of
 * exponentials in double.  The row max runs in C_LANES independent
 * chains (instruction-level parallelism; GCC does not vectorise an IEEE
 * max reduction without -ffast-math).  exp() is a scalar libm call: it
 * dominates the cost.  This is the classic three-pass form (max, sum,
 * write); the SIMD versions use a one-pass online max/sum. */
#define C_LSM_LOOPS(SFX, T, EXP)                                          \
    static inline void lsm_##SFX##_row_t(const T *restrict x,             \
                                         T *restrict o, int64_t n)        \
    {                                                                     \
        T lane[C_LANES];                                                  \
        for (int l = 0; l < C_LANES; l++)                                 \
            lane[l] = x[0];                                               \
        int64_t i = 0;                                                    \
        for (; i + C_LANES <= n; i += C_LANES)                            \
            for (int l = 0; l < C_LANES; l++)                             \
                lane[l] = x[i + l] > lane[l] ? x[i + l] : lane[l];        \
        T m = lane[0];                                                    \
        for (int l = 1; l < C_LANES; l++)                                 \
            m = lane[l] > m ? lane[l] : m;                                \
        for (; i < n; i++)                                                \
            m = x[i] > m ? x[i] : m;                                      \
        double s = 0;                                                     \
        for (i = 0; i < n; i++)                                           \
            s += EXP(x[i] - m);                                           \
        const T ls = (T)log(s);                                           \
        for (i = 0; i < n; i++)                                           \
            o[i] = (x[i] - m) - ls;                                       \
    }                                                                     \
    static void lsm_##SFX##_rows(const void *px, void *po, int64_t rows,  \
                                 int64_t n)                               \
    {                                                                     \
        const T *x = px;                                                  \
        T *o = po;                                                        \
        for (int64_t r = 0; r < rows; r++)                                \
            lsm_##SFX##_row_t(x + r * n, o + r * n, n);                   \
    }                                                                     \
    static inline void lsm_##SFX##_cols_t(const T *restrict x,            \
                                          T *restrict o, int64_t R,       \
                                          int64_t ld, int64_t w)          \
    {                                                                     \
        T m[TB_CPU_COL_TILE];                                             \
        double s[TB_CPU_COL_TILE];                                        \
        T ls[TB_CPU_COL_TILE];                                            \
        colmax_##SFX(x, R, ld, w, m, s);                                  \
        for (int64_t r = 0; r < R; r++)                                   \
            for (int64_t j = 0; j < w; j++)                               \
                s[j] += EXP(x[r * ld + j] - m[j]);                        \
        for (int64_t j = 0; j < w; j++)                                   \
            ls[j] = (T)log(s[j]);                                         \
        for (int64_t r = 0; r < R; r++)                                   \
            for (int64_t j = 0; j < w; j++)                               \
                o[r * ld + j] = (x[r * ld + j] - m[j]) - ls[j];           \
    }                                                                     \
    static void lsm_##SFX##_cols(const void *x, void *o, int64_t R,       \
                                 int64_t ld, int64_t w)                   \
    {                                                                     \
        lsm_##SFX##_cols_t(x, o, R, ld, w);                               \
    }                                                                     \
    C_END

C_LSM_LOOPS(f32, float, expf);
C_LSM_LOOPS(f64, double, exp);

/* ---- softmax ------------------------------------------------------------ */

/* softmax of contiguous rows and of a tile of w columns (max in T, e =
 * exp(x - max) in T written to the output, the sum in double, then one
 * multiply by the rounded inverse), three passes.  Reads element i before writing it (in
 * place is safe). */
#define C_SM_LOOPS(SFX, T, EXP)                                           \
    static void sm_##SFX##_rows(const void *px, void *po, int64_t rows,   \
                                int64_t n)                                \
    {                                                                     \
        const T *x = px;                                                  \
        T *o = po;                                                        \
        for (int64_t r = 0; r < rows; r++, x += n, o += n) {              \
            T m = x[0];                                                   \
            for (int64_t i = 1; i < n; i++)                               \
                m = x[i] > m ? x[i] : m;                                  \
            double s = 0;                                                 \
            for (int64_t i = 0; i < n; i++) {                             \
                T e = EXP(x[i] - m);                                      \
                o[i] = e;                                                 \
                s += (double)e;                                           \
            }                                                             \
            const T inv = (T)(1.0 / s);                                   \
            for (int64_t i = 0; i < n; i++)                               \
                o[i] *= inv;                                              \
        }                                                                 \
    }                                                                     \
    static void sm_##SFX##_cols(const void *px, void *po, int64_t R,      \
                                int64_t ld, int64_t w)                    \
    {                                                                     \
        const T *x = px;                                                  \
        T *o = po;                                                        \
        T m[TB_CPU_COL_TILE];                                             \
        double s[TB_CPU_COL_TILE];                                        \
        colmax_##SFX(x, R, ld, w, m, s);                                  \
        for (int64_t r = 0; r < R; r++)                                   \
            for (int64_t j = 0; j < w; j++) {                             \
                T e = EXP(x[r * ld + j] - m[j]);                          \
                o[r * ld + j] = e;                                        \
                s[j] += (double)e;                                        \
            }                                                             \
        for (int64_t j = 0; j < w; j++)                                   \
            m[j] = (T)(1.0 / s[j]); /* now the inverse sum */             \
        for (int64_t r = 0; r < R; r++)                                   \
            for (int64_t j = 0; j < w; j++)                               \
                o[r * ld + j] *= m[j];                                    \
    }                                                                     \
    C_END

C_SM_LOOPS(f32, float, expf);
C_SM_LOOPS(f64, double, exp);

/* ---- matmul ------------------------------------------------------------ */

/* C[i0..i1) rows of one [M,K] x [K,N] product, cache-blocked over K and
 * N (see C_MM_KC/NC), i-k-j inside a block so the inner loop runs along
 * a row of B and of C with unit stride.  k is unrolled by 4 so each load
 * and store of C serves four multiply-adds. */
#define C_MM_LOOPS(SFX, T)                                                \
    static inline void mm_##SFX##_rows_t(                                 \
        const T *restrict a, const T *restrict b, T *restrict c,          \
        int64_t i0, int64_t i1, int64_t K, int64_t N)                     \
    {                                                                     \
        for (int64_t i = i0; i < i1; i++)                                 \
            for (int64_t j = 0; j < N; j++)                               \
                c[i * N + j] = 0;                                         \
        for (int64_t jb = 0; jb < N; jb += C_MM_NC) {                     \
            int64_t nb = N - jb < C_MM_NC ? N - jb : C_MM_NC;             \
            for (int64_t kb = 0; kb < K; kb += C_MM_KC) {                 \
                int64_t ke = K - kb < C_MM_KC ? K : kb + C_MM_KC;         \
                for (int64_t i = i0; i < i1; i++) {                       \
                    T *cr = c + i * N + jb;                               \
                    const T *ar = a + i * K;                              \
                    int64_t k = kb;                                       \
                    for (; k + 4 <= ke; k += 4) {                         \
                        const T a0 = ar[k], a1 = ar[k + 1];               \
                        const T a2 = ar[k + 2], a3 = ar[k + 3];           \
                        const T *b0 = b + k * N + jb;                     \
                        const T *b1 = b0 + N;                             \
                        const T *b2 = b1 + N;                             \
                        const T *b3 = b2 + N;                             \
                        for (int64_t j = 0; j < nb; j++)                  \
                            cr[j] += a0 * b0[j] + a1 * b1[j] +            \
                                     a2 * b2[j] + a3 * b3[j];             \
                    }                                                     \
                    for (; k < ke; k++) {                                 \
                        const T a0 = ar[k];                               \
                        const T *b0 = b + k * N + jb;                     \
                        for (int64_t j = 0; j < nb; j++)                  \
                            cr[j] += a0 * b0[j];                          \
                    }                                                     \
                }                                                         \
            }                                                             \
        }                                                                 \
    }                                                                     \
    static void mm_##SFX##_rows(const void *a, const void *b, void *c,    \
                                int64_t i0, int64_t i1, int64_t K,        \
                                int64_t N)                                \
    {                                                                     \
        mm_##SFX##_rows_t(a, b, c, i0, i1, K, N);                         \
    }                                                                     \
    C_END

C_MM_LOOPS(f32, float);
C_MM_LOOPS(f64, double);

/* ---- transpose --------------------------------------------------------- */

#define C_TR_LOOPS(SFX, U)                                                \
    static inline void tr_##SFX##_block_t(const U *restrict in,           \
                                          int64_t ild, U *restrict out,   \
                                          int64_t old, int64_t ni,        \
                                          int64_t nj)                     \
    {                                                                     \
        for (int64_t j = 0; j < nj; j++)                                  \
            for (int64_t i = 0; i < ni; i++)                              \
                out[j * old + i] = in[i * ild + j];                       \
    }                                                                     \
    static void tr_##SFX##_block(const void *in, int64_t ild, void *out,  \
                                 int64_t old, int64_t ni, int64_t nj)     \
    {                                                                     \
        tr_##SFX##_block_t(in, ild, out, old, ni, nj);                    \
    }                                                                     \
    C_END

C_TR_LOOPS(u32, uint32_t);
C_TR_LOOPS(u64, uint64_t);

/* ---- pooling ----------------------------------------------------------- */

/* Windows clipped to the plane (clipping is the same as -inf padding for
 * max and zero padding for avg).  max starts from the first in-bounds
 * element; a NaN replaces acc (v != v) and then no v compares greater,
 * so it stays.  avg sums in T, row by row, then scales by 1/k^2. */
#define C_POOL_LOOPS(SFX, T)                                              \
    static inline void pool_##SFX##_t(const T *restrict x, T *restrict o, \
                                      int64_t planes,                     \
                                      const tb_cpu_pool_geom *g,          \
                                      int is_max)                         \
    {                                                                     \
        const int64_t H = g->H, W = g->W, OH = g->OH, OW = g->OW;         \
        const T inv = (T)1 / (T)(g->k * g->k);                            \
        for (int64_t pl = 0; pl < planes; pl++) {                         \
            const T *xp = x + pl * H * W;                                 \
            T *op = o + pl * OH * OW;                                     \
            for (int64_t oh = 0; oh < OH; oh++) {                         \
                int64_t h0 = oh * g->s - g->pad, h1 = h0 + g->k;          \
                h0 = h0 < 0 ? 0 : h0;                                     \
                h1 = h1 > H ? H : h1;                                     \
                for (int64_t ow = 0; ow < OW; ow++) {                     \
                    int64_t w0 = ow * g->s - g->pad, w1 = w0 + g->k;      \
                    w0 = w0 < 0 ? 0 : w0;                                 \
                    w1 = w1 > W ? W : w1;                                 \
                    T acc = is_max ? xp[h0 * W + w0] : (T)0;              \
                    for (int64_t h = h0; h < h1; h++)                     \
                        for (int64_t c = w0; c < w1; c++) {               \
                            const T v = xp[h * W + c];                    \
                            if (!is_max)                                  \
                                acc += v;                                 \
                            else if (v > acc || v != v)                   \
                                acc = v;                                  \
                        }                                                 \
                    op[oh * OW + ow] = is_max ? acc : acc * inv;          \
                }                                                         \
            }                                                             \
        }                                                                 \
    }                                                                     \
    static void max_pool_##SFX(const void *x, void *o, int64_t planes,    \
                               const tb_cpu_pool_geom *g)                 \
    {                                                                     \
        pool_##SFX##_t(x, o, planes, g, 1);                               \
    }                                                                     \
    static void avg_pool_##SFX(const void *x, void *o, int64_t planes,    \
                               const tb_cpu_pool_geom *g)                 \
    {                                                                     \
        pool_##SFX##_t(x, o, planes, g, 0);                               \
    }                                                                     \
    C_END

C_POOL_LOOPS(f32, float);
C_POOL_LOOPS(f64, double);

void tb_cpu_pool_f64_c(const void *x, void *o, int64_t planes,
                       const tb_cpu_pool_geom *g, int is_max)
{
    pool_f64_t(x, o, planes, g, is_max);
}

/* ---- table ------------------------------------------------------------- */

#define C_SET_BIN(IDX, NAME)                                              \
    do {                                                                  \
        k->bin[IDX][TB_F32].vv = NAME##_f32_vv;                           \
        k->bin[IDX][TB_F32].sv = NAME##_f32_sv;                           \
        k->bin[IDX][TB_F32].vs = NAME##_f32_vs;                           \
        k->bin[IDX][TB_F32].vv_nt = NAME##_f32_vv;                        \
        k->bin[IDX][TB_F32].rows = NULL; /* a vs / sv call per row */     \
        k->bin[IDX][TB_F32].isa = TB_ISA_SCALAR;                          \
        k->bin[IDX][TB_F64].vv = NAME##_f64_vv;                           \
        k->bin[IDX][TB_F64].sv = NAME##_f64_sv;                           \
        k->bin[IDX][TB_F64].vs = NAME##_f64_vs;                           \
        k->bin[IDX][TB_F64].vv_nt = NAME##_f64_vv;                        \
        k->bin[IDX][TB_F64].rows = NULL; /* a vs / sv call per row */     \
        k->bin[IDX][TB_F64].isa = TB_ISA_SCALAR;                          \
    } while (0)

void tb_cpu_kernels_init_c(tb_cpu_kernels *k)
{
    C_SET_BIN(TB_CPU_ADD, add);
    C_SET_BIN(TB_CPU_SUB, sub);
    C_SET_BIN(TB_CPU_MUL, mul);
    C_SET_BIN(TB_CPU_DIV, div);
    C_SET_BIN(TB_CPU_ADD_RELU, add_relu);
    k->relu[TB_F32].fn = relu_f32;
    k->relu[TB_F64].fn = relu_f64;
    k->relu[TB_F32].fn_nt = relu_f32;
    k->relu[TB_F64].fn_nt = relu_f64;
    k->sum[TB_F32].row = sum_f32_row;
    k->sum[TB_F32].cols = sum_f32_cols;
    k->sum[TB_F32].rows = NULL; /* a row call per row */
    k->sum[TB_F64].row = sum_f64_row;
    k->sum[TB_F64].cols = sum_f64_cols;
    k->lsm[TB_F32].rows = lsm_f32_rows;
    k->lsm[TB_F32].cols = lsm_f32_cols;
    k->lsm[TB_F64].rows = lsm_f64_rows;
    k->lsm[TB_F64].cols = lsm_f64_cols;
    k->sm[TB_F32].rows = sm_f32_rows;
    k->sm[TB_F32].cols = sm_f32_cols;
    k->sm[TB_F64].rows = sm_f64_rows;
    k->sm[TB_F64].cols = sm_f64_cols;
    k->tr[TB_F32].block = tr_u32_block;
    k->tr[TB_F64].block = tr_u64_block;
    k->tr[TB_F32].block_nt = tr_u32_block;
    k->tr[TB_F64].block_nt = tr_u64_block;
    k->mm[TB_F32].rows = mm_f32_rows;
    k->mm[TB_F64].rows = mm_f64_rows;
    k->pool[TB_F32].max = max_pool_f32;
    k->pool[TB_F32].avg = avg_pool_f32;
    k->pool[TB_F64].max = max_pool_f64;
    k->pool[TB_F64].avg = avg_pool_f64;
    for (int d = 0; d < TB_DTYPE_COUNT; d++) {
        k->relu[d].isa = k->sum[d].isa = k->lsm[d].isa = TB_ISA_SCALAR;
        k->sm[d].isa = TB_ISA_SCALAR;
        k->tr[d].isa = k->mm[d].isa = k->pool[d].isa = TB_ISA_SCALAR;
        k->tr[d].tile = C_TR_TILE;
    }
}

int tb_cpu_isa_built(int isa)
{
    switch (isa) {
    case TB_ISA_SCALAR:
        return 1;
    case TB_ISA_AVX2:
        return TB_CPU_HAVE_AVX2;
    case TB_ISA_AVX512:
        return TB_CPU_HAVE_AVX512;
    case TB_ISA_AVX512BF16:
        return TB_CPU_HAVE_AVX512BF16;
    default:
        return 0;
    }
}

int tb_cpu_kernels_fill(tb_cpu_kernels *k, int isa)
{
    const int max = tb_cpu_isa_max();
    int got = TB_ISA_SCALAR;
    tb_cpu_kernels_init_c(k);
    if (isa > max)
        isa = max;
#if TB_CPU_HAVE_AVX2
    if (isa >= TB_ISA_AVX2) {
        tb_cpu_kernels_init_avx2(k);
        got = TB_ISA_AVX2;
    }
#endif
#if TB_CPU_HAVE_AVX512
    if (isa >= TB_ISA_AVX512) {
        tb_cpu_kernels_init_avx512(k);
        got = TB_ISA_AVX512;
    }
#endif
#if TB_CPU_HAVE_AVX512BF16
    /* no kernel of this table needs BF16 or VNNI: avx512's */
    if (isa >= TB_ISA_AVX512BF16)
        got = TB_ISA_AVX512BF16;
#endif
    return got;
}
