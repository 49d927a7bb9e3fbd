/* maximum and minimum f64 at the avx2 and avx512 levels, for inclusion
 * by f64_simd_impl.h only (after dvec_simd.h and ops_simd.h): their
 * values (math_c.c's rule), the loops of equal shapes (cached and
 * streaming stores) and the row-broadcast case's loop, and dx_mm_run,
 * the rows' entry. */
#ifndef TB_BACKENDS_CPU_F64_MM_SIMD_H
#define TB_BACKENDS_CPU_F64_MM_SIMD_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../base/error.h"
#include "cpu_internal.h"
#include "dvec_simd.h"
#include "isa.h"
#include "ops_simd.h"

/* maximum, minimum: a NaN in either operand gives a + b (a NaN), else
 * the larger (smaller), a on ties (a >= b, a <= b: +0 against -0
 * too), math_c.c's rule. */
static inline rd dx_maximum_ab(rd a, rd b)
{
    rd m = rs_sel(rs_le(b, a), a, b);
    return rs_sel(rs_unord(a, b), rs_add(a, b), m);
}
static inline rd dx_minimum_ab(rd a, rd b)
{
    rd m = rs_sel(rs_le(a, b), a, b);
    return rs_sel(rs_unord(a, b), rs_add(a, b), m);
}

#if RS_W == 8
/* The same values on 256-bit vectors (the compares' masks as lanes of
 * ones), four a step over contiguous a and b: AMD CPUs' loop from
 * TB_CPU_AMD_YMM_MIN_BYTES an array (isa.h: Zen 4's L3 streams ymm
 * loads and stores faster).  Returns the elements done, a multiple of
 * 16. */
static inline __m256d dy_maximum_ab(__m256d a, __m256d b)
{
    __m256d m = _mm256_blendv_pd(b, a, _mm256_cmp_pd(b, a, _CMP_LE_OQ));
    return _mm256_blendv_pd(m, _mm256_add_pd(a, b),
                            _mm256_cmp_pd(a, b, _CMP_UNORD_Q));
}
static inline __m256d dy_minimum_ab(__m256d a, __m256d b)
{
    __m256d m = _mm256_blendv_pd(b, a, _mm256_cmp_pd(a, b, _CMP_LE_OQ));
    return _mm256_blendv_pd(m, _mm256_add_pd(a, b),
                            _mm256_cmp_pd(a, b, _CMP_UNORD_Q));
}
#define DY_MLOOP(NAME)                                                    \
    static int64_t dy_##NAME##_run(const double *a, const double *b,      \
                                   double *o, int64_t n)                  \
    {                                                                     \
        int64_t i = 0;                                                    \
        for (; i + 16 <= n; i += 16)                                      \
            for (int u = 0; u < 16; u += 4)                               \
                _mm256_storeu_pd(o + i + u,                               \
                                 dy_##NAME##_ab(_mm256_loadu_pd(a + i + u), \
                                                _mm256_loadu_pd(b + i + u))); \
        return i;                                                         \
    }
DY_MLOOP(maximum)
DY_MLOOP(minimum)
#undef DY_MLOOP
#define DY_MM_TRY(NAME, a, b, o, n, i, COND)                              \
    if (COND)                                                             \
        i = dy_##NAME##_run(a, b, o, n);
#else
#define DY_MM_TRY(NAME, a, b, o, n, i, COND)
#endif

/* sa, sb: 1 (contiguous) or 0 (one value broadcast); both contiguous:
 * (on AMD, large arrays: DY_MM_TRY's 256-bit loop first) four vectors a
 * step first.  The tail through blocks on the stack. */
#define DX_MLOOP(NAME)                                                    \
    static void dx_##NAME##_bin(const void *ap, int64_t sa,               \
                                const void *bp, int64_t sb, void *op,     \
                                int64_t n)                                \
    {                                                                     \
        if (n <= 0) /* nothing, and a[0], b[0] may lie past the end */    \
            return;                                                       \
        const double *a = ap, *b = bp;                                    \
        double *o = op;                                                   \
        int64_t i = 0;                                                    \
        if (sa && sb) {                                                   \
            DY_MM_TRY(NAME, a, b, o, n, i,                                \
                      tb_cpu_amd_ymm((double)n * sizeof *o))              \
            for (; i + 4 * RS_W <= n; i += 4 * RS_W)                      \
                for (int u = 0; u < 4 * RS_W; u += RS_W)                  \
                    rs_stored(o + i + u,                                  \
                              dx_##NAME##_ab(rs_loadd(a + i + u),         \
                                             rs_loadd(b + i + u)));       \
        }                                                                 \
        const rd a0 = rs_d1(a[0]), b0 = rs_d1(b[0]);                      \
        for (; i + RS_W <= n; i += RS_W)                                  \
            rs_stored(o + i, dx_##NAME##_ab(sa ? rs_loadd(a + i) : a0,    \
                                            sb ? rs_loadd(b + i) : b0));  \
        if (i < n) {                                                      \
            double ta[RS_W] = {0}, tb[RS_W] = {0};                        \
            for (int64_t j = 0; j < n - i; j++) {                         \
                ta[j] = a[(i + j) * sa];                                  \
                tb[j] = b[(i + j) * sb];                                  \
            }                                                             \
            rs_stored(ta, dx_##NAME##_ab(rs_loadd(ta), rs_loadd(tb)));    \
            memcpy(o + i, ta, (size_t)(n - i) * sizeof *o);               \
        }                                                                 \
    }                                                                     \
    /* the same values, o's whole 64-byte lines by streaming stores */    \
    static void dx_##NAME##_nt(const void *ap, int64_t sa,                \
                               const void *bp, int64_t sb, void *op,      \
                               int64_t n)                                 \
    {                                                                     \
        (void)sa, (void)sb;                                               \
        const double *a = ap, *b = bp;                                    \
        double *o = op;                                                   \
        int64_t i = (int64_t)((64 - ((uintptr_t)o & 63)) & 63) /         \
                    (int64_t)sizeof *o;                                   \
        i = i < n ? i : n;                                                \
        dx_##NAME##_bin(a, 1, b, 1, o, i);                                \
        for (; i + 4 * RS_W <= n; i += 4 * RS_W)                          \
            for (int u = 0; u < 4 * RS_W; u += RS_W)                      \
                RS_I(stream_pd)(o + i + u,                                \
                                dx_##NAME##_ab(rs_loadd(a + i + u),       \
                                               rs_loadd(b + i + u)));     \
        dx_##NAME##_bin(a + i, 1, b + i, 1, o + i, n - i);                \
        _mm_sfence();                                                     \
    }
DX_MLOOP(maximum)
DX_MLOOP(minimum)
#undef DX_MLOOP

/* maximum and minimum with one operand a row broadcast over the other's
 * rows (its last dim the output's, its other dims 1: [R, C] with [C],
 * either side): the rows split over the threads and run in one loop
 * (dx_NAME_bin on contiguous pairs), where tb_cpu_bcast_rows's walk made
 * one single-threaded call per row through its general index loop; the
 * values are the same operations on the same pairs.  The working set is
 * the two full operands (16 MiB at 1024 x 1024 f64: cached stores, as
 * the equal-shape rule of ops_simd.c keeps below 20 MiB). */
typedef struct dx_rows_job {
    const double *a, *b;
    double *o;
    int64_t rows, n;
    bool a_row; /* a is the row (else b) */
    bool ymm;   /* AMD's 256-bit loop (DY_MM_TRY) on every row */
} dx_rows_job;

/* The operand `row` of shape broadcast as one row of n against `full`,
 * the output's shape (rows > 1 of n). */
static inline bool dx_is_row(const tb_tensor *row, const tb_tensor *full,
                             const tb_tensor *out, int64_t n)
{
    return row->ndim >= 1 && row->shape[row->ndim - 1] == n &&
           tb_tensor_numel(row) == n &&
           tb_tensor_numel(full) == tb_tensor_numel(out);
}

#define DX_ROWS(NAME)                                                     \
    static void dx_##NAME##_rows(void *arg, int part, int nparts)         \
    {                                                                     \
        const dx_rows_job *j = arg;                                       \
        int64_t r0, r1;                                                   \
        tb_cpu_span(j->rows, 1, part, nparts, &r0, &r1);                  \
        for (int64_t r = r0; r < r1; r++) {                               \
            const double *ra = j->a_row ? j->a : j->a + r * j->n;         \
            const double *rb = j->a_row ? j->b + r * j->n : j->b;         \
            double *ro = j->o + r * j->n;                                 \
            int64_t i = 0;                                                \
            DY_MM_TRY(NAME, ra, rb, ro, j->n, i, j->ymm)                  \
            dx_##NAME##_bin(ra + i, 1, rb + i, 1, ro + i, j->n - i);      \
        }                                                                 \
    }
DX_ROWS(maximum)
DX_ROWS(minimum)
#undef DX_ROWS

/* The entry of maximum/minimum f64: the row-broadcast case above, every
 * other (equal shapes with their streaming stores, other broadcasts) by
 * tb_cpu_simd_binary_nt. */
static int dx_mm_run(void *ctx, int lv, tb_op_id id, const tb_tensor *in,
                     tb_tensor *out, const tb_params *p,
                     tb_cpu_simd_binary_fn bin, tb_cpu_simd_binary_fn nt,
                     tb_cpu_task_fn rows)
{
    if (!in || !out) /* the frame's checks say why */
        return tb_cpu_simd_binary_nt(ctx, lv, id, TB_F64, in, out, p, bin,
                                     nt);
    const int64_t numel = tb_tensor_numel(out);
    const int64_t n = out->ndim >= 1 ? out->shape[out->ndim - 1] : 1;
    const bool b_row = n > 0 && numel > n && dx_is_row(&in[1], &in[0], out, n);
    const bool a_row =
        !b_row && n > 0 && numel > n && dx_is_row(&in[0], &in[1], out, n);
    if (!a_row && !b_row)
        return tb_cpu_simd_binary_nt(ctx, lv, id, TB_F64, in, out, p, bin,
                                     nt);
    if (ctx && tb_cpu_isa(ctx) < lv)
        return TB_EUNSUPPORTED;
    int rc = tb_cpu_begin_op(ctx, id, TB_F64, in, out, p);
    if (rc)
        return rc;
    /* the 256-bit rows by the full operand's size (a row is 8 KiB) */
    dx_rows_job j = {in[0].data, in[1].data, out->data, numel / n, n, a_row,
                     RS_W == 8 &&
                         tb_cpu_amd_ymm((double)numel * sizeof(double))};
    tb_cpu_parallel(ctx, numel, j.rows, rows, &j);
    return 0;
}

#endif
