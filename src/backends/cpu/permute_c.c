/* The portable C rows of permute in f32 and f64 (kreg.h's layout
 * family) and the loops its SIMD rows share (permute_c.h): the output in
 * row-major order, the input read through its strides, a permute that
 * moves the input's contiguous dim by planes of a level's transposer;
 * values are bit copies.  A NULL ctx is allowed.  Also the portable
 * plane transposers of every element size and their lookup by level
 * (transpose.h). */
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
/* The portable plane transposers (transpose.h)                         */
/* ------------------------------------------------------------------ */

/* out[j * old + i] = in[i * ild + j] (plane after plane: transpose.h)
 * in TP_C_TILE x TP_C_TILE tiles, so
 * that the lines a tile touches stay in L1 (the plain loop touches an
 * input line once per element; 16: 8 and 16 measured alike, 32 slower:
 * power-of-two strides put more of a tile's lines in one L1 set).  Bit
 * copies of unsigned integers. */
#define TP_C_TILE 16
#define TP_C_PLANE(T, SFX)                                                \
    static void tp_c_##SFX(const void *pin, int64_t ild, void *pout,      \
                           int64_t old, int64_t ni, int64_t nj,           \
                           int64_t nb, int64_t ibs, int64_t obs, int nt)  \
    {                                                                     \
        (void)nt;                                                         \
        for (int64_t k = 0; k < nb; k++) {                                \
            const T *restrict in = (const T *)pin + k * ibs;              \
            T *restrict out = (T *)pout + k * obs;                        \
            for (int64_t j0 = 0; j0 < nj; j0 += TP_C_TILE) {              \
                const int64_t j1 =                                        \
                    j0 + TP_C_TILE < nj ? j0 + TP_C_TILE : nj;            \
                for (int64_t i0 = 0; i0 < ni; i0 += TP_C_TILE) {          \
                    const int64_t i1 =                                    \
                        i0 + TP_C_TILE < ni ? i0 + TP_C_TILE : ni;        \
                    for (int64_t j = j0; j < j1; j++)                     \
                        for (int64_t i = i0; i < i1; i++)                 \
                            out[j * old + i] = in[i * ild + j];           \
                }                                                         \
            }                                                             \
        }                                                                 \
    }
TP_C_PLANE(uint16_t, u16)
TP_C_PLANE(uint32_t, u32)
TP_C_PLANE(uint64_t, u64)
#undef TP_C_PLANE

tb_cpu_tp_fn tb_cpu_tp_c(size_t esz)
{
    return esz == 2 ? tp_c_u16 : esz == 4 ? tp_c_u32
                             : esz == 8 ? tp_c_u64
                                        : NULL;
}

tb_cpu_tp_fn tb_cpu_tp_get(int lv, size_t esz)
{
    switch (lv) {
    case TB_ISA_SCALAR:
        return tb_cpu_tp_c(esz);
#if TB_CPU_HAVE_AVX2
    case TB_ISA_AVX2:
        return tb_cpu_tp_avx2(esz);
#endif
#if TB_CPU_HAVE_AVX512
    case TB_ISA_AVX512:
    case TB_ISA_AVX512BF16: /* the rest of that level is avx512's */
        return tb_cpu_tp_avx512(esz);
#endif
    default:
        return NULL;
    }
}

/* ------------------------------------------------------------------ */
/* permute                                                              */
/* ------------------------------------------------------------------ */

/* Blocked form of a permute that moves the input's contiguous dim:
 * q is the output dim the input's unit stride lands on (q < nd - 1), so
 * for each index of the other output dims the (q, last) plane is a 2-D
 * transpose (input: unit stride along q, stride st[nd - 1] along the
 * last; output: stride ostq along q, unit along the last): the level's
 * plane transposer tp, with the plane's rows the output's last dim, the
 * planes along the innermost other dim of more than one index (b) in one
 * call (its batch: the SIMD levels' direct tiles visit a tile position
 * in every plane of it in turn), an odometer over the rest.  Values are
 * copies either way. */
static void ext_permute_tiled(const tb_tensor *x, tb_tensor *out,
                              const int64_t *st, int q, size_t esz,
                              tb_cpu_tp_fn tp)
{
    const int nd = out->ndim;
    int64_t ost[TB_MAX_DIMS];
    ost[nd - 1] = 1;
    for (int d = nd - 2; d >= 0; d--)
        ost[d] = ost[d + 1] * out->shape[d + 1];
    const int64_t ni = out->shape[q], nj = out->shape[nd - 1];
    int b = -1;
    for (int d = nd - 2; d >= 0 && b < 0; d--)
        if (d != q && out->shape[d] > 1)
            b = d;
    const int64_t nb = b < 0 ? 1 : out->shape[b];
    const int64_t ibs = b < 0 ? 0 : st[b], obs = b < 0 ? 0 : ost[b];
    const int64_t planes = tb_tensor_numel(out) / (ni * nj * nb);
    int64_t idx[TB_MAX_DIMS] = {0}, xo = 0, oo = 0;
    for (int64_t r = 0; r < planes; r++) {
        /* o[i * ost[q] + j] = x[i + j * st[nd - 1]]: input rows j */
        tp((const char *)x->data + (size_t)xo * esz, st[nd - 1],
           (char *)out->data + (size_t)oo * esz, ost[q], nj, ni, nb, ibs,
           obs, 0);
        for (int d = nd - 2; d >= 0; d--) { /* odometer, q and b left out */
            if (d == q || d == b)
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

/* o[j] = s[j * is] for j < n, of esz-byte values (bit copies) */
#define EXT_STRIDED(T)                                                    \
    do {                                                                  \
        const T *restrict s_ = s;                                         \
        T *restrict o_ = o;                                               \
        for (int64_t j = 0; j < n; j++)                                   \
            o_[j] = s_[j * is];                                           \
    } while (0)
static void ext_strided_row(const void *s, void *o, int64_t n, int64_t is,
                            size_t esz)
{
    if (esz == 2)
        EXT_STRIDED(uint16_t);
    else if (esz == 4)
        EXT_STRIDED(uint32_t);
    else
        EXT_STRIDED(uint64_t);
}
#undef EXT_STRIDED

/* Output in row-major order; the input is read through its strides
 * permuted.  The last output dim is one strided copy loop, unless the
 * input's contiguous dim moves elsewhere (then ext_permute_tiled, the
 * planes by level lv's transposer). */
int tb_cpu_permute_lv(void *ctx, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p, tb_dtype dt, int lv)
{
    if (ctx && tb_cpu_isa(ctx) < lv)
        return TB_EUNSUPPORTED;
    const size_t esz = tb_dtype_size(dt);
    const tb_cpu_tp_fn tp = tb_cpu_tp_get(lv, esz);
    if (!tp)
        return TB_EINVAL;
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
            ext_permute_tiled(x, out, st, q, esz, tp);
            return 0;
        }
    const int64_t inner = out->shape[nd - 1], is = st[nd - 1];
    const int64_t rows = inner ? tb_tensor_numel(out) / inner : 0;
    int64_t idx[TB_MAX_DIMS] = {0}, off = 0;
    for (int64_t r = 0; r < rows; r++) {
        /* a contiguous run (the last dim stays last: a head split's rows
         * of Dh) as one memcpy, not the strided loop's element copies */
        if (is == 1)
            memcpy((char *)out->data + (size_t)(r * inner) * esz,
                   (const char *)x->data + (size_t)off * esz,
                   (size_t)inner * esz);
        else
            ext_strided_row((const char *)x->data + (size_t)off * esz,
                            (char *)out->data + (size_t)(r * inner) * esz,
                            inner, is, esz);
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

/* ------------------------------------------------------------------ */
/* Entry points (rows of kreg.h)                                        */
/* ------------------------------------------------------------------ */

/* every row of permute (kreg.h: the C rows and the SIMD levels' rows,
 * each over its own level's transposer) */
#define PERM_DEF(op, dt, sfx, c)                                          \
    int TB_CPU_KFN(op, dt, sfx)(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return tb_cpu_permute_lv(ctx, in, out, p, TB_CPU_DT_##dt,         \
                                 TB_CPU_LV_##sfx);                        \
    }
TB_CPU_LADDER2(PERM_DEF, permute, c)
#undef PERM_DEF
