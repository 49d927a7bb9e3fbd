/* The fills of f64: ones and full (create.c's frame, tb_cpu_create_rand:
 * checks, parameters, thread split on 64-byte lines), sum_backward and
 * mean_backward (bwd_simd.c's tb_cpu_bw_bcast64: g's lane broadcast
 * along the reduced axis), at the avx2 and avx512 levels, for inclusion
 * by f64_avx2.c and f64_avx512.c only (over dvec_simd.h).
 *
 * The portable rows are built for baseline x86-64: their fill loops
 * store 16 bytes at a time, and a core retires one store a cycle, so a
 * fill of 8 MiB ran at 16 bytes a cycle (ones 1M f64: 144 us, 58 GB/s at
 * 3.66 GHz; PyTorch's, 32-byte stores: 89 us).  These store whole
 * vectors (RS_W doubles), the tail through one more vector of the
 * values written element by element.  The values are the portable
 * rows' bit for bit: the constant, or g times the scale (1, or mean's
 * 1 / len rounded once), one IEEE multiply each. */
#ifndef TB_BACKENDS_CPU_FILL_F64_SIMD_H
#define TB_BACKENDS_CPU_FILL_F64_SIMD_H

#include "bwd_simd.h"
#include "rand_simd.h"

/* o[0..n) = v */
static inline void dx_fill(double *o, int64_t n, rd v)
{
    int64_t i = 0;
    for (; i + 4 * RS_W <= n; i += 4 * RS_W) {
        rs_stored(o + i, v);
        rs_stored(o + i + RS_W, v);
        rs_stored(o + i + 2 * RS_W, v);
        rs_stored(o + i + 3 * RS_W, v);
    }
    for (; i + RS_W <= n; i += RS_W)
        rs_stored(o + i, v);
    if (i < n) {
        double t[RS_W];
        rs_stored(t, v);
        memcpy(o + i, t, (size_t)(n - i) * sizeof *o);
    }
}

/* ones, full: o[b..e) = a (tb_cpu_rand_fn; key and b2 unused) */
static void dx_fill_chunk(void *o, int64_t b, int64_t e, uint64_t key,
                          double a, double b2)
{
    (void)key;
    (void)b2;
    dx_fill((double *)o + b, e - b, rs_d1(a));
}

/* sum_backward, mean_backward: the outer lanes [o0, o1) */
static void dx_bcast(const double *g, double *dx, int64_t o0, int64_t o1,
                     int64_t len, int64_t inner, double scale)
{
    const rd sc = rs_d1(scale);
    for (int64_t o = o0; o < o1; o++) {
        double *d = dx + o * len * inner;
        const double *go = g + o * inner;
        if (inner == 1) {
            dx_fill(d, len, rs_mul(rs_d1(go[0]), sc));
            continue;
        }
        for (int64_t k = 0; k < len; k++, d += inner) {
            int64_t i = 0;
            for (; i + RS_W <= inner; i += RS_W)
                rs_stored(d + i, rs_mul(rs_loadd(go + i), sc));
            for (; i < inner; i++)
                d[i] = go[i] * scale;
        }
    }
}

#define DX_FILL_ENTRIES(SFX, LV)                                          \
    int TB_CPU_KFN(ones, f64, SFX)(void *ctx, const tb_tensor *in,        \
                                   tb_tensor *out, const tb_params *p)    \
    {                                                                     \
        return tb_cpu_create_rand(ctx, LV, TB_OP_ones, TB_F64, in, out,   \
                                  p, 1, dx_fill_chunk);                   \
    }                                                                     \
    int TB_CPU_KFN(full, f64, SFX)(void *ctx, const tb_tensor *in,        \
                                   tb_tensor *out, const tb_params *p)    \
    {                                                                     \
        return tb_cpu_create_rand(ctx, LV, TB_OP_full, TB_F64, in, out,   \
                                  p, 1, dx_fill_chunk);                   \
    }                                                                     \
    int TB_CPU_KFN(sum_backward, f64, SFX)(void *ctx, const tb_tensor *in, \
                                           tb_tensor *out,                \
                                           const tb_params *p)            \
    {                                                                     \
        return tb_cpu_bw_bcast64(ctx, LV, TB_OP_sum_backward, in, out, p, \
                                 dx_bcast);                               \
    }                                                                     \
    int TB_CPU_KFN(mean_backward, f64, SFX)(void *ctx,                    \
                                            const tb_tensor *in,          \
                                            tb_tensor *out,               \
                                            const tb_params *p)           \
    {                                                                     \
        return tb_cpu_bw_bcast64(ctx, LV, TB_OP_mean_backward, in, out,   \
                                 p, dx_bcast);                            \
    }

#endif
