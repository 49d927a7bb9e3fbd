/* bf16/f16 relu_backward, sum_backward and mean_backward on the 16-bit
 * patterns (half_bwd.h): one read of the inputs, one write of dx, no
 * f32 scratch.  (They widened g and x into f32 scratch, ran the f32 row
 * and narrowed: 3.5x PyTorch's bf16 relu_backward, 6x its sum_backward
 * at 1024x1024, the one-run table of docs/perf-data/op-limits-zen4.)
 *
 * relu_backward: dx = x > 0 ? g : 0, the f32 row's select on the
 *   widened values, as a select on the patterns (half_bwd_loops.h, the
 *   level's build of it).
 * sum_backward, mean_backward: dx[o, k, i] = g[o, i] * s over the
 *   reduced axis's len l (every element when no axis), s = 1 or
 *   (float)(1 / l) as the f32 row holds it: each g element widened,
 *   multiplied in f32 and rounded once, then copied l times.
 * The output's elements are split over the threads on 32-element
 * (64-byte) lines; the values do not depend on the split. */
#include <stdint.h>
#include <string.h>
#include <wchar.h>

#include "../../base/error.h"
#include "../../ops/alloc.h"
#include "../../ops/half.h"
#include "backends/cpu/cpu_config.h"
#include "cpu_internal.h"
#include "half_bwd.h"
#include "half_bwd_loops.h"
#include "isa.h"

/* n copies of v: by wmemset on the pair of them (backward.c's f32 fill:
 * libc stores as wide as the machine has; the element loop's 16-byte
 * stores, one an iteration, held sum_backward f16 at 1024x1024 to 47
 * us, 1 thread), after one element when o is not 4-byte aligned */
_Static_assert(sizeof(wchar_t) == 2 * sizeof(uint16_t), "wmemset fills pairs");
static void hb_fill(uint16_t *restrict o, uint16_t v, int64_t n)
{
    if (n > 0 && ((uintptr_t)o & 2)) {
        *o++ = v;
        n--;
    }
    if (n > 1) {
        const uint32_t pair = (uint32_t)v | (uint32_t)v << 16;
        wchar_t w;
        memcpy(&w, &pair, sizeof w);
        wmemset((wchar_t *)(void *)o, w, (size_t)(n / 2));
    }
    if (n & 1)
        o[n - 1] = v;
}

typedef struct {
    tb_op_id id;
    tb_dtype dt;
    tb_cpu_half_relu_bwd_fn relu;
    const uint16_t *g, *x;
    uint16_t *o;
    const uint16_t *vals; /* broadcast, inner > 1: g * s, rounded */
    float s;
    int64_t n, outer, len, inner;
} hb_job;

static uint16_t hb_scaled(const hb_job *j, uint16_t g)
{
    if (j->dt == TB_BF16)
        return tb_f32_to_bf16(tb_bf16_to_f32(g) * j->s);
    return tb_f32_to_f16(tb_f16_to_f32(g) * j->s);
}

static void hb_part(void *arg, int part, int nparts)
{
    const hb_job *j = arg;
    int64_t b, e;
    tb_cpu_span(j->n, 32, part, nparts, &b, &e);
    if (j->id == TB_OP_relu_backward) {
        j->relu(j->g + b, j->x + b, j->o + b, e - b);
        return;
    }
    if (j->inner == 1) { /* lanes of len copies of one value */
        while (b < e) {
            int64_t lane = b / j->len, end = (lane + 1) * j->len;
            if (end > e)
                end = e;
            hb_fill(j->o + b, hb_scaled(j, j->g[lane]), end - b);
            b = end;
        }
        return;
    }
    while (b < e) { /* rows of inner values: vals[lane's row] copied */
        int64_t r = b / j->inner, t = b - r * j->inner;
        int64_t lane = r / j->len, end = (r + 1) * j->inner;
        if (end > e)
            end = e;
        memcpy(j->o + b, j->vals + lane * j->inner + t,
               (size_t)(end - b) * sizeof *j->o);
        b = end;
    }
}

/* relu_backward's loop of dt at level isa */
static tb_cpu_half_relu_bwd_fn hb_relu(tb_dtype dt, int isa)
{
#if TB_CPU_HAVE_AVX512
    if (isa == TB_ISA_AVX512 || isa == TB_ISA_AVX512BF16)
        return tb_cpu_half_relu_bwd_avx512(dt);
#endif
#if TB_CPU_HAVE_AVX2
    if (isa == TB_ISA_AVX2)
        return tb_cpu_half_relu_bwd_avx2(dt);
#endif
    (void)isa;
    return dt == TB_BF16 ? hb_relu_bf16 : hb_relu_f16;
}

/* ---- add_backward ------------------------------------------------------
 * da and db of g where each of a and b has g's shape (its gradient: g,
 * as the f32 row's copy, a NaN quieted as narrowing quiets it) or is one
 * row broadcast over g's leading axes (its shape, leading 1s dropped,
 * g's trailing axes, g's last axis at least 2 long: its gradient the
 * column sums of g seen as rows of that length, each summed in f32 from
 * +0 row after row, the f32 row's order (backward_impl.inc's brow:
 * zeroed, then += g's rows), narrowed once).  Columns are split over
 * the threads; each part sums its columns in blocks of 512 (at avx2 and
 * avx512 widened and added in registers, half_simd.h's hs_colsum; at
 * the scalar level a row's block widened onto the stack, then added).
 * (Widening g, a and b whole, the f32 row and narrowing took 13.2 us for
 * [128, 256] + [256] bf16, 7.4x the bytes' time and behind PyTorch.) */

/* the row length of t broadcast along g's leading axes, n if t has g's
 * shape, 0 if neither (or g's last axis shorter than 2) */
static int64_t hb_row(const tb_tensor *t, const tb_tensor *g)
{
    tb_shape ts = tb_tensor_shape(t), gs = tb_tensor_shape(g);
    if (tb_shape_equal(&ts, &gs))
        return tb_tensor_numel(g);
    if (g->ndim < 1 || g->shape[g->ndim - 1] < 2)
        return 0;
    int lead = 0;
    while (lead < t->ndim && t->shape[lead] == 1)
        lead++;
    const int nd = t->ndim - lead;
    if (nd < 1 || nd > g->ndim)
        return 0;
    int64_t len = 1;
    for (int i = 0; i < nd; i++) {
        if (t->shape[lead + i] != g->shape[g->ndim - nd + i])
            return 0;
        len *= t->shape[lead + i];
    }
    return len;
}

enum { HB_COLS = 512 };

typedef struct {
    tb_dtype dt;
    tb_cpu_half_cvt cv;
    tb_cpu_half_colsum_fn cs; /* the level's sums, or NULL: cv's widening */
    const uint16_t *g;
    uint16_t *o;
    int64_t n, len; /* len < n: column sums of rows of len */
} hb_add_job;

static void hb_add_part(void *arg, int part, int nparts)
{
    const hb_add_job *j = arg;
    int64_t b, e;
    if (j->len == j->n) { /* a copy, NaN quieted */
        const uint16_t inf = j->dt == TB_BF16 ? 0x7f80 : 0x7c00;
        const uint16_t q = j->dt == TB_BF16 ? 0x0040 : 0x0200;
        tb_cpu_span(j->n, 32, part, nparts, &b, &e);
        const uint16_t *restrict g = j->g;
        uint16_t *restrict o = j->o;
        for (int64_t i = b; i < e; i++)
            o[i] = (uint16_t)((g[i] & 0x7fff) > inf ? g[i] | q : g[i]);
        return;
    }
    tb_cpu_span(j->len, 32, part, nparts, &b, &e);
    const int64_t rows = j->n / j->len;
    float acc[HB_COLS], buf[HB_COLS];
    for (int64_t c0 = b; c0 < e; c0 += HB_COLS) {
        const int64_t w = e - c0 < HB_COLS ? e - c0 : HB_COLS;
        for (int64_t c = 0; c < w; c++)
            acc[c] = 0.0f;
        if (j->cs) /* in registers */
            j->cs(j->g + c0, rows, j->len, w, acc);
        for (int64_t r = 0; r < rows && !j->cs; r++) {
            j->cv.widen(j->g + r * j->len + c0, buf, w);
            for (int64_t c = 0; c < w; c++)
                acc[c] += buf[c];
        }
        j->cv.narrow(acc, j->o + c0, w);
    }
}

static int hb_bin(void *ctx, tb_op_id id, tb_dtype dt, int isa,
                  const tb_tensor *in, tb_tensor *out);

/* 0 done, 1 not served (another pattern, no conversions at isa) */
static int hb_add_bwd(void *ctx, tb_dtype dt, int isa, const tb_tensor *in,
                      tb_tensor *out)
{
    const int64_t n = tb_tensor_numel(&in[0]);
    const int64_t la = hb_row(&in[1], &in[0]), lb = hb_row(&in[2], &in[0]);
    hb_add_job j = {.dt = dt, .cv = tb_cpu_half_cvt_get(dt, isa),
                    .cs = tb_cpu_half_colsum_get(dt, isa),
                    .g = in[0].data, .n = n};
    if (n == 0 || la == 0 || lb == 0 || !j.cv.widen ||
        tb_tensor_numel(&out[0]) != la || tb_tensor_numel(&out[1]) != lb)
        return 1;
    if ((la == n) != (lb == n) &&
        hb_bin(ctx, TB_OP_add_backward, dt, isa, in, out) == 0)
        return 0; /* one full, one row: one pass (half_bwbin_simd.h) */
    tb_cpu_count_launch(ctx);
    for (int k = 0; k < 2; k++) {
        j.o = out[k].data;
        j.len = k ? lb : la;
        const int64_t lines = (j.len + 31) / 32;
        tb_cpu_parallel(ctx, n, lines, hb_add_part, &j);
    }
    return 0;
}

/* ---- sub, mul and div backward -----------------------------------------
 * One operand of g's shape, the other one row broadcast over g's rows
 * (hb_row: [128, 256] and [256], issue 34's case): the f32 row
 * (backward_impl.inc's brow, the only f32 row of these ops) writes the
 * full operand's gradient term by term and adds the row operand's terms
 * into its gradient from +0, row after row, in f32.  Each part takes a
 * span of the columns.  At the SIMD levels the level's loop
 * (half_bwbin_simd.h) holds a strip's sums in registers down the rows
 * and narrows in registers; at the scalar level, per tile of up to
 * HB_COLS columns, every row in order, hb_bin_c's f32 terms narrowed
 * by the conversion.  The same operations in the same order, so the f32
 * C row's bits at every thread count, but for div with b the row at the
 * SIMD levels (1 / (b b) once per column, half_bwbin_simd.h).  (The
 * whole-tensor path took 11-21 us for [128, 256] and [256], 6-12x the
 * bytes' time; the row-at-a-time loop through f32 buffers 4.5-8.7 us.) */

/* the scalar level's loop: backward_impl.inc's brow's statements */
static void hb_bin_c(tb_dtype dt, int kind, const uint16_t *g,
                     const uint16_t *f, const float *rv, float *df,
                     float *acc, int64_t w)
{
    for (int64_t k = 0; k < w; k++) {
        const float gv =
            dt == TB_BF16 ? tb_bf16_to_f32(g[k]) : tb_f16_to_f32(g[k]);
        const float fv = kind == HB_SUB_AF || kind == HB_SUB_BF ? 0.0f
                         : dt == TB_BF16 ? tb_bf16_to_f32(f[k])
                                         : tb_f16_to_f32(f[k]);
        df[k] = hb_term(kind, gv, fv, rv[k], &acc[k]);
    }
}

static void hb_bin_c_bf16(int kind, const uint16_t *g, const uint16_t *f,
                          const float *rv, float *df, float *acc, int64_t w)
{
    hb_bin_c(TB_BF16, kind, g, f, rv, df, acc, w);
}

static void hb_bin_c_f16(int kind, const uint16_t *g, const uint16_t *f,
                         const float *rv, float *df, float *acc, int64_t w)
{
    hb_bin_c(TB_F16, kind, g, f, rv, df, acc, w);
}

typedef struct {
    tb_cpu_half_cvt cv;
    tb_cpu_half_bin_fn fn;          /* the scalar level's */
    tb_cpu_half_bincols_fn cols;    /* a SIMD level's, or NULL */
    int kind;
    const uint16_t *g, *f, *row; /* g, the full operand, the row one */
    uint16_t *df, *drow;         /* their gradients */
    int64_t rows, len;
} hb_bin_job;

static void hb_bin_part(void *arg, int part, int nparts)
{
    const hb_bin_job *j = arg;
    int64_t b, e;
    tb_cpu_span(j->len, 32, part, nparts, &b, &e);
    if (j->cols) {
        j->cols(j->kind, j->g, j->f, j->row, j->df, j->drow, j->rows,
                j->len, b, e);
        return;
    }
    float acc[HB_COLS], rv[HB_COLS], df[HB_COLS];
    for (int64_t c0 = b; c0 < e; c0 += HB_COLS) {
        const int64_t w = e - c0 < HB_COLS ? e - c0 : HB_COLS;
        for (int64_t c = 0; c < w; c++)
            acc[c] = 0.0f;
        j->cv.widen(j->row + c0, rv, w);
        for (int64_t r = 0; r < j->rows; r++) {
            const int64_t off = r * j->len + c0;
            j->fn(j->kind, j->g + off, j->f + off, rv, df, acc, w);
            j->cv.narrow(df, j->df + off, w);
        }
        j->cv.narrow(acc, j->drow + c0, w);
    }
}

/* 0 done, 1 not served (another pattern) */
static int hb_bin(void *ctx, tb_op_id id, tb_dtype dt, int isa,
                  const tb_tensor *in, tb_tensor *out)
{
    const int64_t n = tb_tensor_numel(&in[0]);
    const int64_t la = hb_row(&in[1], &in[0]), lb = hb_row(&in[2], &in[0]);
    if (n == 0 || la == 0 || lb == 0 || (la == n) == (lb == n))
        return 1; /* one full, one row: else the whole path */
    const bool af = la == n; /* a full, b the row */
    hb_bin_job j = {.cv = tb_cpu_half_cvt_get(dt, isa),
                    .fn = dt == TB_BF16 ? hb_bin_c_bf16 : hb_bin_c_f16,
                    .kind = id == TB_OP_add_backward   ? HB_ADD
                            : id == TB_OP_mul_backward ? HB_MUL
                            : id == TB_OP_sub_backward
                                ? (af ? HB_SUB_AF : HB_SUB_BF)
                                : (af ? HB_DIV_AF : HB_DIV_BF),
                    .g = in[0].data, .f = in[af ? 1 : 2].data,
                    .row = in[af ? 2 : 1].data, .df = out[af ? 0 : 1].data,
                    .drow = out[af ? 1 : 0].data, .len = af ? lb : la};
    if (!j.cv.widen)
        return 1;
    j.rows = n / j.len;
    if (id == TB_OP_add_backward)
        j.f = j.g; /* (not read) */
#if TB_CPU_HAVE_AVX512BF16
    if (isa == TB_ISA_AVX512BF16)
        j.cols = tb_cpu_half_bincols_avx512bf16(dt);
#endif
#if TB_CPU_HAVE_AVX512
    if (isa == TB_ISA_AVX512)
        j.cols = tb_cpu_half_bincols_avx512(dt);
#endif
#if TB_CPU_HAVE_AVX2
    /* f16 mul and div at the AVX-512 levels too: the avx2 loop's
     * 256-bit vcvtph2ps and vcvtps2ph (0.5 and 0.67 cycles on Zen 4
     * against 1.33-2 and 1.4 for the 512-bit forms; the same operations
     * a lane, so the same bits): mul_backward [128, 256], [256] 3.29 ->
     * 2.54 us in L1, div 3.79 -> 3.46.  Not add and sub, whose steps
     * (no product to widen for) ran 1.65x slower that way (1.87 -> 3.09
     * us, tbench ab).  AMD only: an Intel core (Emerald Rapids)
     * widens 16 values with one 512-bit vcvtph2ps at the rate of two
     * 256-bit ones (and divides at 0.62 cycle an f32 lane either way,
     * vdivps zmm 9.9 cycles, ymm 4.95, scripts/divsqrt_tp.c), so the
     * avx512 loop serves f16 there: mul_backward f16 [128, 256], [256]
     * 5.12 -> 4.24 us (-16.8%, CI [-21.1, -10.5]), div 7.42 -> 7.35
     * (inconclusive, CI [-3.3, +3.4]); tbench ab, 12 blocks, load ~10,
     * 2026-12-01 */
    const bool f16_ymm = dt == TB_F16 && isa >= TB_ISA_AVX512 &&
                         j.kind != HB_ADD && j.kind != HB_SUB_AF &&
                         j.kind != HB_SUB_BF && tb_cpu_isa_amd();
    if (isa == TB_ISA_AVX2 || f16_ymm)
        j.cols = tb_cpu_half_bincols_avx2(dt);
#endif
    if (!j.cols && j.kind == HB_ADD)
        return 1; /* (the scalar level: hb_add_bwd's passes) */
    tb_cpu_count_launch(ctx);
    tb_cpu_parallel(ctx, 3 * n, (j.len + 31) / 32, hb_bin_part, &j);
    return 0;
}

int tb_cpu_half_bwd(void *ctx, tb_op_id id, tb_dtype dt, int isa,
                    const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    if (id == TB_OP_add_backward)
        return hb_add_bwd(ctx, dt, isa, in, out);
    if (id == TB_OP_sub_backward || id == TB_OP_mul_backward ||
        id == TB_OP_div_backward)
        return hb_bin(ctx, id, dt, isa, in, out);
    if (id != TB_OP_relu_backward && id != TB_OP_sum_backward &&
        id != TB_OP_mean_backward)
        return 1;
    hb_job j = {.id = id, .dt = dt, .relu = hb_relu(dt, isa), .g = in[0].data, .x = in[1].data,
                .o = out[0].data, .s = 1.0f, .n = tb_tensor_numel(&out[0]),
                .outer = 1, .len = tb_tensor_numel(&in[1]), .inner = 1};
    uint16_t *vals = NULL;
    if (id != TB_OP_relu_backward) {
        int ax;
        if (p && tb_params_has(p, 0) &&
            tb_axis_norm((int64_t)p->v[0], in[1].ndim, &ax) == 0) {
            j.outer = j.inner = 1;
            for (int d = 0; d < ax; d++)
                j.outer *= in[1].shape[d];
            j.len = in[1].shape[ax];
            for (int d = ax + 1; d < in[1].ndim; d++)
                j.inner *= in[1].shape[d];
        }
        if (id == TB_OP_mean_backward)
            j.s = (float)(1.0 / (double)j.len);
        if (j.n == 0)
            return tb_cpu_count_launch(ctx), 0;
        if (j.inner > 1) {
            int64_t ng = j.outer * j.inner;
            vals = tb_alloc((size_t)ng * sizeof *vals);
            if (!vals)
                return TB_ENOMEM;
            for (int64_t k = 0; k < ng; k++)
                vals[k] = hb_scaled(&j, j.g[k]);
            j.vals = vals;
        }
    }
    tb_cpu_count_launch(ctx);
    tb_cpu_parallel(ctx, j.n, (j.n + 31) / 32, hb_part, &j);
    tb_free(vals);
    return 0;
}

bool tb_cpu_half_bwd_blockwise(const tb_op *op, const tb_tensor *in,
                               const tb_tensor *out)
{
    if (op->id != TB_OP_sigmoid_backward && op->id != TB_OP_tanh_backward &&
        op->id != TB_OP_gelu_backward)
        return false;
    tb_shape os = tb_tensor_shape(&out[0]);
    for (int i = 0; i < 2; i++) {
        tb_shape s = tb_tensor_shape(&in[i]);
        if (!tb_shape_equal(&s, &os))
            return false;
    }
    return true;
}
