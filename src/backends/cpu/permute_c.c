/* The portable C rows of permute in f32 and f64 (kreg.h's layout
 * family) and the loops its SIMD rows share (permute_c.h): the output in
 * row-major order, the input read through its strides, a permute that
 * moves the input's contiguous dim by tiles of planes; values are bit
 * copies.  A NULL ctx is allowed. */
#include "permute_c.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../base/error.h"
#include "../../ops/op.h"
#include "../../ops/tensor.h"
#include "cpu_internal.h"
#include "kreg.h"

/* ------------------------------------------------------------------ */
/* permute                                                              */
/* ------------------------------------------------------------------ */

/* Blocked form of a permute that moves the input's contiguous dim:
 * q is the output dim the input's unit stride lands on (q < nd - 1), so
 * for each index of the other output dims the (q, last) plane is a 2-D
 * transpose (input: unit stride along q, stride st[nd - 1] along the
 * last; output: stride ostq along q, unit along the last), done in
 * PERM_TILE x PERM_TILE tiles that stay in L1 (as transpose does): each
 * tile reads PERM_TILE input lines and writes PERM_TILE output rows
 * (the inner loop along the output's unit stride) instead of touching
 * one input line per element.  16: 8 and 16 measured alike, 32 slower
 * (power-of-two strides put more of a tile's lines in one L1 set).
 * Values are copies either way. */
#define PERM_TILE 16
#define EXT_PERM_TILED(T, SFX)                                            \
    static void perm_tiled_##SFX(const T *restrict x, T *restrict o,      \
                                 int64_t ni, int64_t nj, int64_t is,      \
                                 int64_t ostq)                            \
    {                                                                     \
        for (int64_t i0 = 0; i0 < ni; i0 += PERM_TILE) {                  \
            const int64_t i1 = i0 + PERM_TILE < ni ? i0 + PERM_TILE : ni; \
            for (int64_t j0 = 0; j0 < nj; j0 += PERM_TILE) {              \
                const int64_t j1 =                                        \
                    j0 + PERM_TILE < nj ? j0 + PERM_TILE : nj;            \
                for (int64_t i = i0; i < i1; i++)                         \
                    for (int64_t j = j0; j < j1; j++)                     \
                        o[i * ostq + j] = x[i + j * is];                  \
            }                                                             \
        }                                                                 \
    }
EXT_PERM_TILED(float, f32)
EXT_PERM_TILED(double, f64)
#undef EXT_PERM_TILED

static void ext_permute_tiled(const tb_tensor *x, tb_tensor *out,
                              const int64_t *st, int q, tb_dtype dt,
                              tb_cpu_perm_tile_fn tile,
                              tb_cpu_perm_tile64_fn tile64)
{
    const int nd = out->ndim;
    int64_t ost[TB_MAX_DIMS];
    ost[nd - 1] = 1;
    for (int d = nd - 2; d >= 0; d--)
        ost[d] = ost[d + 1] * out->shape[d + 1];
    const int64_t ni = out->shape[q], nj = out->shape[nd - 1];
    const int64_t planes = tb_tensor_numel(out) / (ni * nj);
    int64_t idx[TB_MAX_DIMS] = {0}, xo = 0, oo = 0;
    for (int64_t r = 0; r < planes; r++) {
        if (dt == TB_F32)
            tile((const float *)x->data + xo, (float *)out->data + oo, ni,
                 nj, st[nd - 1], ost[q]);
        else
            tile64((const double *)x->data + xo, (double *)out->data + oo,
                   ni, nj, st[nd - 1], ost[q]);
        for (int d = nd - 2; d >= 0; d--) { /* odometer, q left out */
            if (d == q)
                continue;
            xo += st[d];
            oo += ost[d];
            if (++idx[d] < out->shape[d])
                break;
            xo -= st[d] * out->shape[d];
            oo -= ost[d] * out->shape[d];
            idx[d] = 0;
        }
    }
}

/* Output in row-major order; the input is read through its strides
 * permuted.  The last output dim is one strided copy loop, unless the
 * input's contiguous dim moves elsewhere (then ext_permute_tiled, the
 * planes by tile or tile64: perm_tiled_f32/f64 or a SIMD row's). */
static int ext_permute_with(void *ctx, const tb_tensor *in, tb_tensor *out,
                            const tb_params *p, tb_dtype dt,
                            tb_cpu_perm_tile_fn tile,
                            tb_cpu_perm_tile64_fn tile64)
{
    int rc = tb_cpu_begin_op(ctx, TB_OP_permute, dt, in, out, p);
    if (rc)
        return rc;
    const tb_tensor *x = &in[0];
    const int nd = x->ndim;
    int perm[TB_MAX_DIMS];
    if (tb_permute_dims(p, nd, perm, NULL, 0))
        return TB_EPARAM;
    int64_t st[TB_MAX_DIMS] = {0};
    for (int d = 0; d < nd; d++)
        st[d] = x->strides[perm[d]];
    for (int q = 0; q < nd - 1; q++)
        if (st[q] == 1 && out->shape[q] > 1 && out->shape[nd - 1] > 1 &&
            st[nd - 1] != 1) {
            ext_permute_tiled(x, out, st, q, dt, tile, tile64);
            return 0;
        }
    const int64_t inner = out->shape[nd - 1], is = st[nd - 1];
    const int64_t rows = tb_tensor_numel(out) / inner;
    int64_t idx[TB_MAX_DIMS] = {0}, off = 0;
    for (int64_t r = 0; r < rows; r++) {
        if (dt == TB_F32) {
            const float *restrict s = (const float *)x->data + off;
            float *restrict o = (float *)out->data + r * inner;
            for (int64_t j = 0; j < inner; j++)
                o[j] = s[j * is];
        } else {
            const double *restrict s = (const double *)x->data + off;
            double *restrict o = (double *)out->data + r * inner;
            for (int64_t j = 0; j < inner; j++)
                o[j] = s[j * is];
        }
        for (int d = nd - 2; d >= 0; d--) {
            off += st[d];
            if (++idx[d] < out->shape[d])
                break;
            off -= st[d] * out->shape[d];
            idx[d] = 0;
        }
    }
    return 0;
}

static int ext_permute(void *ctx, const tb_tensor *in, tb_tensor *out,
                       const tb_params *p, tb_dtype dt)
{
    return ext_permute_with(ctx, in, out, p, dt, perm_tiled_f32,
                            perm_tiled_f64);
}

int tb_cpu_permute_f32(void *ctx, const tb_tensor *in, tb_tensor *out,
                       const tb_params *p, tb_cpu_perm_tile_fn tile)
{
    return ext_permute_with(ctx, in, out, p, TB_F32, tile, perm_tiled_f64);
}

int tb_cpu_permute_f64(void *ctx, const tb_tensor *in, tb_tensor *out,
                       const tb_params *p, tb_cpu_perm_tile64_fn tile)
{
    return ext_permute_with(ctx, in, out, p, TB_F64, perm_tiled_f32, tile);
}


/* ------------------------------------------------------------------ */
/* Entry points (rows of kreg.h)                                        */
/* ------------------------------------------------------------------ */

/* Kernels whose driver takes (ctx, in, out, p, [id,] dt). */
#define EXT_K_CALL(NAME, CALL_F32, CALL_F64)                              \
    int tb_cpu_k_##NAME##_f32_c(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return CALL_F32;                                                  \
    }                                                                     \
    int tb_cpu_k_##NAME##_f64_c(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return CALL_F64;                                                  \
    }


EXT_K_CALL(permute, ext_permute(ctx, in, out, p, TB_F32),
           ext_permute(ctx, in, out, p, TB_F64))
