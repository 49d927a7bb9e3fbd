/* The cpu backend's NCHW window drivers: conv2d and conv2d_nobias
 * (im2col, then the native GEMM at the SIMD levels or the portable row
 * loops; f32/f64 at the avx512 levels and bf16 at the avx512bf16 level
 * (two taps a vdpbf16ps) with stride 1 and few taps: conv_direct.h's
 * loops, no im2col; else bf16 at the avx512bf16 level: im2col of the
 * bf16 image and the bf16 GEMM with the bias fused, kreg.h's
 * TB_CPU_HALF_MM),
 * max_pool2d
 * and avg_pool2d (the instance's pooling loops, kernels.h); their rows
 * are kreg.h's conv family. */
#include <string.h>

#include "../../ops/alloc.h"
#include "../../ops/half.h"
#include "conv_direct.h"
#include "drv.h"

/* im2col of one image x [C, H, W] into col [R = C*KH*KW, P = OH*OW]:
 * col[(ci*KH + kh)*KW + kw][oh*OW + ow] = x[ci][ih][iw] with ih = oh*s -
 * pad + kh*dil, iw likewise, and 0 where that is outside the image (the
 * blas backend's layout).  The in-bounds ow range of a tap is computed
 * once per (kw, tap), so the inner loop has no branch; stride 1 rows are
 * contiguous runs. */
#define CPU_IM2COL(SFX, T)                                                \
    static void cpu_im2col_##SFX(const T *restrict x, T *restrict col,    \
                                 const cpu_conv_geom *g)                  \
    {                                                                     \
        for (int64_t ci = 0; ci < g->C; ci++)                             \
            for (int64_t kh = 0; kh < g->KH; kh++)                        \
                for (int64_t kw = 0; kw < g->KW; kw++) {                  \
                    T *dst = col + ((ci * g->KH + kh) * g->KW + kw) *     \
                                       g->OH * g->OW;                     \
                    int64_t w0, w1;                                       \
                    cpu_conv_range(g->W, g->OW, g->s, g->pad,             \
                                   kw * g->dil, &w0, &w1);                \
                    const int64_t dw = kw * g->dil - g->pad;              \
                    for (int64_t oh = 0; oh < g->OH; oh++) {              \
                        T *d = dst + oh * g->OW;                          \
                        const int64_t ih = oh * g->s - g->pad + kh * g->dil; \
                        if (ih < 0 || ih >= g->H || w0 >= w1) {           \
                            for (int64_t ow = 0; ow < g->OW; ow++)        \
                                d[ow] = 0;                                \
                            continue;                                     \
                        }                                                 \
                        const T *xr = x + (ci * g->H + ih) * g->W;        \
                        for (int64_t ow = 0; ow < w0; ow++)               \
                            d[ow] = 0;                                    \
                        if (g->s == 1)                                    \
                            memcpy(d + w0, xr + w0 + dw,                  \
                                   (size_t)(w1 - w0) * sizeof(T));        \
                        else                                              \
                            for (int64_t ow = w0; ow < w1; ow++)          \
                                d[ow] = xr[ow * g->s + dw];               \
                        for (int64_t ow = w1; ow < g->OW; ow++)           \
                            d[ow] = 0;                                    \
                    }                                                     \
                }                                                         \
    }

typedef struct cpu_conv_geom {
    int64_t C, H, W, KH, KW, OH, OW, s, pad, dil;
} cpu_conv_geom;

/* [*lo, *hi): the output indices o < n_out whose input index o*s - pad
 * + t lies in [0, n_in) (empty: lo == hi). */
static void cpu_conv_range(int64_t n_in, int64_t n_out, int64_t s,
                           int64_t pad, int64_t t, int64_t *lo, int64_t *hi)
{
    int64_t a = pad - t; /* o*s >= a */
    int64_t first = a <= 0 ? 0 : (a + s - 1) / s;
    int64_t b = n_in - 1 + pad - t; /* o*s <= b */
    int64_t last = b < 0 ? -1 : b / s;
    *lo = first < n_out ? first : n_out;
    *hi = last + 1 < n_out ? last + 1 : n_out;
    if (*hi < *lo)
        *hi = *lo;
}

CPU_IM2COL(f32, float)
CPU_IM2COL(f64, double)
#if TB_CPU_HAVE_GEMM && TB_CPU_HAVE_AVX512BF16
CPU_IM2COL(bf16, uint16_t)
#endif

typedef struct cpu_conv_job {
    tb_cpu_ctx *c;
    tb_dtype dt;
    int lv; /* the level whose loops (or GEMM) run */
    size_t esz;
    const char *x, *w, *bias; /* bias: NULL for conv2d_nobias */
    char *o;
    char *col;    /* one buffer of colsz elements per part */
    size_t colsz;
    int64_t N, O, R, P;
    cpu_conv_geom g;
    /* f32/f64 at the AVX-512 levels, stride 1 and few taps
     * (conv_direct.h): the direct loops over wp (packed weights), the
     * part's buffer the padded image (pad > 0), no im2col nor GEMM */
    bool direct;
    const char *wp;
    tb_cpu_convd_geom dg;
    /* bf16 by its direct loop (wp: pairs of taps' weights in dwords):
     * biasf the bias in f32 */
    const float *biasf;
    /* f16 and bf16 at avx512 (tb_cpu_conv2d_h16): the f32 loops on the
     * image and weights widened (the parts' buffers and wp in f32: bsz
     * bytes an element, esz for x and out), 16-bit stores */
    bool h16;
    size_t bsz;
    int rc[TB_MAX_AXIS_VALUES]; /* per part */
} cpu_conv_job;

#if TB_CPU_HAVE_AVX512
/* Images [lo, hi) by the direct loops (j->direct); pad holds one padded
 * image (pad > 0: its border zeroed once, the interior copied per
 * image). */
static int cpu_conv_direct(const cpu_conv_job *j, char *pad, int64_t lo,
                           int64_t hi)
{
    const size_t es = j->esz;
    const cpu_conv_geom *g = &j->g;
    const int64_t chw = g->C * g->H * g->W;
    const int64_t Hp = j->dg.Hp, Wp = j->dg.Wp;
    if (g->pad > 0)
        memset(pad, 0, (size_t)(g->C * Hp * Wp) * j->bsz);
    for (int64_t n = lo; n < hi; n++) {
        const char *xn = j->x + (size_t)(n * chw) * es;
        char *on = j->o + (size_t)(n * j->O * j->P) * es;
        if (j->h16) {
            /* the image widened into the f32 buffer, 16-bit stores */
            float *xf = (float *)pad;
            for (int64_t ci = 0; ci < g->C; ci++)
                (j->dt == TB_BF16 ? tb_cpu_convd_widen_bf16
                                  : tb_cpu_convd_widen_f16)(
                    (const uint16_t *)xn + ci * g->H * g->W, g->W,
                    xf + (ci * Hp + g->pad) * Wp + g->pad, Wp, g->H, g->W);
            if (!tb_cpu_convd_fwd_f32h_avx512(xf, (const float *)j->wp,
                                              j->biasf, (uint16_t *)on,
                                              &j->dg, j->dt == TB_BF16))
                return TB_EINVAL; /* tb_cpu_conv2d_h16 checked it */
            continue;
        }
        if (g->pad > 0) {
            for (int64_t ci = 0; ci < g->C; ci++)
                tb_cpu_convd_copy_rows(
                    xn + (size_t)(ci * g->H * g->W) * es,
                    g->W * (int64_t)es,
                    pad + (size_t)((ci * Hp + g->pad) * Wp + g->pad) * es,
                    Wp * (int64_t)es, g->H, g->W * (int64_t)es);
            xn = pad;
        }
#if TB_CPU_HAVE_AVX512BF16
        if (j->dt == TB_BF16) {
            tb_cpu_convd_fwd_bf16_avx512bf16(
                (const uint16_t *)xn, (const uint32_t *)j->wp, j->biasf,
                (uint16_t *)on, &j->dg);
            continue;
        }
#endif
        if (j->dt == TB_F32)
            tb_cpu_convd_fwd_f32_avx512((const float *)xn,
                                        (const float *)j->wp,
                                        (const float *)j->bias, (float *)on,
                                        &j->dg);
        else
            tb_cpu_convd_fwd_f64_avx512((const double *)xn,
                                        (const double *)j->wp,
                                        (const double *)j->bias,
                                        (double *)on, &j->dg);
    }
    return 0;
}
#endif

/* Images [lo, hi) with column buffer col: im2col, out[n] = W [O, R] x
 * col [R, P] (the native GEMM at the SIMD levels with `threads` threads
 * over par, the portable matmul rows at the scalar level), then the
 * bias of each output channel over its row. */
static int cpu_conv_images(const cpu_conv_job *j, char *col, int64_t lo,
                           int64_t hi, int threads,
                           const tb_gemm_parallel *par)
{
    const size_t es = j->esz;
    const int64_t chw = j->g.C * j->g.H * j->g.W;
    (void)threads;
    (void)par;
#if TB_CPU_HAVE_AVX512
    if (j->direct)
        return cpu_conv_direct(j, col, lo, hi);
#endif
    for (int64_t n = lo; n < hi; n++) {
        const char *xn = j->x + (size_t)(n * chw) * es;
        char *on = j->o + (size_t)(n * j->O * j->P) * es;
#if TB_CPU_HAVE_GEMM && TB_CPU_HAVE_AVX512BF16
        if (j->dt == TB_BF16) {
            /* W [O, R] x col [R, P] + bias, rounded once to bf16 */
            cpu_im2col_bf16((const uint16_t *)xn, (uint16_t *)col, &j->g);
            int rc = tb_gemm_bf16_ep(
                TB_ISA_AVX512BF16, j->O, j->P, j->R, (const uint16_t *)j->w,
                j->R, (const uint16_t *)col, j->P, (uint16_t *)on, j->P,
                threads, par, (const uint16_t *)j->bias, TB_GEMM_EP_ROW_BIAS);
            if (rc)
                return rc;
            continue;
        }
#endif
        if (j->dt == TB_F32)
            cpu_im2col_f32((const float *)xn, (float *)col, &j->g);
        else
            cpu_im2col_f64((const double *)xn, (double *)col, &j->g);
#if TB_CPU_HAVE_GEMM
        if (cpu_use_gemm(j->lv)) {
            int rc = j->dt == TB_F32
                         ? tb_gemm_f32_ex(j->lv, j->O, j->P, j->R,
                                          (const float *)j->w, j->R,
                                          (const float *)col, j->P,
                                          (float *)on, j->P, threads, par)
                         : tb_gemm_f64_ex(j->lv, j->O, j->P, j->R,
                                          (const double *)j->w, j->R,
                                          (const double *)col, j->P,
                                          (double *)on, j->P, threads, par);
            if (rc)
                return rc;
        } else
#endif
        {
            j->c->k[j->lv].mm[j->dt].rows(j->w, col, on, 0, j->O, j->R,
                                          j->P);
        }
        if (!j->bias)
            continue;
        for (int64_t oc = 0; oc < j->O; oc++) {
            if (j->dt == TB_F32) {
                float *restrict r = (float *)on + oc * j->P;
                const float b = ((const float *)j->bias)[oc];
                for (int64_t q = 0; q < j->P; q++)
                    r[q] += b;
            } else {
                double *restrict r = (double *)on + oc * j->P;
                const double b = ((const double *)j->bias)[oc];
                for (int64_t q = 0; q < j->P; q++)
                    r[q] += b;
            }
        }
    }
    return 0;
}

static void cpu_conv_task(void *argp, int part, int nparts)
{
    cpu_conv_job *j = argp;
    int64_t b, e;
    cpu_span(j->N, part, nparts, &b, &e);
    char *col = j->col + (size_t)part * j->colsz * j->bsz;
    j->rc[part] = cpu_conv_images(j, col, b, e, 1, NULL);
}

#if TB_CPU_HAVE_AVX512
/* The direct loop's packed weights at wp (wpsz elements, after the
 * parts' buffers): wp [ceil(O/8), R, 8], w's rows 8 at a time,
 * interleaved, zero past O (bf16: R rounded up to even, a dword a pair
 * of taps), then bf16's bias widened to f32; sets j->wp and j->biasf. */
static void cpu_convd_pack(cpu_conv_job *j, char *wp, size_t wpsz)
{
    if (j->h16) {
        /* f16 / bf16 widened exactly into the f32 layout, then the bias */
        const int64_t nb = (j->O + TB_CPU_CONVD_OB - 1) / TB_CPU_CONVD_OB;
        float (*const wd)(uint16_t) =
            j->dt == TB_BF16 ? tb_bf16_to_f32 : tb_f16_to_f32;
        float *d = (float *)wp;
        memset(d, 0, (size_t)(nb * TB_CPU_CONVD_OB * j->R) * sizeof *d);
        for (int64_t o = 0; o < j->O; o++)
            for (int64_t r = 0; r < j->R; r++)
                d[((o / TB_CPU_CONVD_OB) * j->R + r) * TB_CPU_CONVD_OB +
                  o % TB_CPU_CONVD_OB] =
                    wd(((const uint16_t *)j->w)[o * j->R + r]);
        j->wp = wp;
        if (j->bias) {
            float *bf = (float *)wp + (wpsz - (size_t)j->O);
            for (int64_t o = 0; o < j->O; o++)
                bf[o] = wd(((const uint16_t *)j->bias)[o]);
            j->biasf = bf;
        }
        return;
    }
    const size_t es = j->esz;
    const int64_t rw = j->dt == TB_BF16 ? 2 * ((j->R + 1) / 2) : j->R;
    const int64_t nb = (j->O + TB_CPU_CONVD_OB - 1) / TB_CPU_CONVD_OB;
    memset(wp, 0, (size_t)(nb * TB_CPU_CONVD_OB * rw) * es);
    /* typed: a memcpy an element cost 7% of a bf16 8x4x16x16 conv */
#define CPU_CONVD_PACK(T, RU)                                             \
    for (int64_t o = 0; o < j->O; o++) {                                  \
        T *d = (T *)wp + (o / TB_CPU_CONVD_OB) * rw * TB_CPU_CONVD_OB +   \
               (o % TB_CPU_CONVD_OB) * (RU);                              \
        const T *sw = (const T *)j->w + o * j->R;                         \
        for (int64_t r = 0; r < j->R; r++)                                \
            d[(r - r % (RU)) * TB_CPU_CONVD_OB + r % (RU)] = sw[r];       \
    }
    if (es == 2) {
        CPU_CONVD_PACK(uint16_t, 2)
    } else if (es == 4) {
        CPU_CONVD_PACK(float, 1)
    } else {
        CPU_CONVD_PACK(double, 1)
    }
#undef CPU_CONVD_PACK
    j->wp = wp;
    if (j->dt == TB_BF16 && j->bias) {
        /* bf16 to f32: the bits in the high half (exact) */
        float *bf = (float *)(wp + (size_t)(wpsz - 2 * (size_t)j->O) * es);
        for (int64_t o = 0; o < j->O; o++) {
            const uint32_t u = (uint32_t)((const uint16_t *)j->bias)[o]
                               << 16;
            memcpy(bf + o, &u, sizeof u);
        }
        j->biasf = bf;
    }
}
#endif

/* op's (conv2d or conv2d_nobias) parameters p (NULL: none given) with
 * their defaults into *q, and its stride, padding and dilation. */
static int conv_params(const tb_op *op, const tb_params *p, tb_params *q,
                       int64_t *st, int64_t *pad, int64_t *dil)
{
    if (p)
        *q = *p;
    else
        memset(q, 0, sizeof *q);
    tb_params_defaults(op, q);
    int rc;
    if ((rc = cpu_param_int(q, 0, 1, NULL, st)) ||
        (rc = cpu_param_int(q, 1, 0, NULL, pad)) ||
        (rc = cpu_param_int(q, 2, 1, NULL, dil)))
        return rc;
    return 0;
}

/* conv2d (with_bias) / conv2d_nobias of x [N, C, H, W] and w [O, C, KH,
 * KW] (+ b [O]), params 0 stride, 1 padding, 2 dilation; the output must
 * have the shape the op's rule gives.  Many images: the images are split
 * over the threads, each part with its own column buffer and a
 * one-thread GEMM per image; few: one image after another, each GEMM
 * split over the pool.  One tracked allocation per call (the column
 * buffers, parts x C*KH*KW x OH*OW elements; direct: a padded image per
 * part when padding > 0, and the packed weights). */
static int cpu_conv2d(void *ctx, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p, tb_dtype dt, bool with_bias,
                      int lv)
{
    const int n_in = with_bias ? 3 : 2;
    int rc = cpu_begin(ctx, dt, in, n_in, out);
    if (rc)
        return rc;
    tb_cpu_ctx *c = ctx;
    const tb_op *op =
        tb_op_get(with_bias ? TB_OP_conv2d : TB_OP_conv2d_nobias);
    tb_shape ish[3];
    for (int i = 0; i < n_in; i++)
        ish[i] = tb_tensor_shape(&in[i]);
    tb_params q;
    int64_t st, pad, dil;
    if ((rc = conv_params(op, p, &q, &st, &pad, &dil)))
        return rc;
    if (st < 1 || pad < 0 || dil < 1)
        return TB_EPARAM;
    tb_shape osh;
    if ((rc = tb_op_infer(op, ish, n_in, &q, &osh, NULL, 0)))
        return rc;
    tb_shape got = tb_tensor_shape(out);
    if (!tb_shape_equal(&got, &osh))
        return TB_ESHAPE;
    const tb_tensor *x = &in[0], *w = &in[1];
    CPU_SLOT_AT(cpu_mm_isa(c, dt, lv), lv);
    cpu_conv_job j = {
        .c = c,
        .dt = dt,
        .lv = lv,
        .esz = tb_dtype_size(dt),
        .h16 = dt == TB_F16 || (dt == TB_BF16 && lv == TB_ISA_AVX512),
        .bsz = dt == TB_F16 || (dt == TB_BF16 && lv == TB_ISA_AVX512)
                   ? sizeof(float)
                   : tb_dtype_size(dt),
        .x = x->data,
        .w = w->data,
        .bias = with_bias ? in[2].data : NULL,
        .o = out->data,
        .N = x->shape[0],
        .O = w->shape[0],
        .R = x->shape[1] * w->shape[2] * w->shape[3],
        .P = osh.dim[2] * osh.dim[3],
        .g = {x->shape[1], x->shape[2], x->shape[3], w->shape[2],
              w->shape[3], osh.dim[2], osh.dim[3], st, pad, dil},
    };
    if (j.N == 0 || j.O == 0 || j.P == 0)
        return 0;
    const int64_t macs = j.N * j.O * j.P * j.R;
    int parts = cpu_parts(c, macs + j.N * j.R * j.P, j.N);
    /* One big image per part would leave each GEMM unsplit: below the
     * GEMM's own threading threshold only the image split helps, above
     * it with fewer images than threads the GEMM splits better. */
#if TB_CPU_HAVE_GEMM
    if (j.N < c->threads && j.O * j.P * j.R >= TB_GEMM_PAR_MIN_MACS)
        parts = 1;
#endif
    j.colsz = (size_t)(j.R * j.P);
    size_t wpsz = 0;
#if TB_CPU_HAVE_AVX512
    const int vl = dt == TB_F64 ? 8 : 16; /* lanes of a vector */
    /* bf16 comes here at the avx512bf16 level (kreg.h's TB_CPU_HALF_MM
     * rows): its own direct loop, two taps a vdpbf16ps; at the avx512
     * level from tb_cpu_conv2d_h16 only (h16: the f16 path's f32 loops;
     * else half.c's conversions around f32) */
    j.direct = lv >= TB_ISA_AVX512 && st == 1 &&
               (((dt == TB_F32 || dt == TB_F64 || j.h16) &&
                 tb_cpu_convd_fwd_fits(j.R, j.O, j.g.OW, vl)) ||
                (dt == TB_BF16 && TB_CPU_HAVE_AVX512BF16 &&
                 tb_cpu_convd_fits(j.R, j.g.OW, vl)));
    if (j.direct) {
        j.dg = (tb_cpu_convd_geom){j.g.C,  j.g.OH + dil * (j.g.KH - 1),
                                   j.g.OW + dil * (j.g.KW - 1),
                                   j.O,    j.g.KH,
                                   j.g.KW, j.g.OH,
                                   j.g.OW, dil};
        j.colsz = pad > 0 || j.h16 ? (size_t)(j.g.C * j.dg.Hp * j.dg.Wp)
                                   : 0;
        /* bf16 (avx512bf16): two taps a dword, then biasf (f32) */
        const int64_t rw =
            dt == TB_BF16 && !j.h16 ? 2 * ((j.R + 1) / 2) : j.R;
        wpsz = (size_t)((j.O + TB_CPU_CONVD_OB - 1) / TB_CPU_CONVD_OB *
                        TB_CPU_CONVD_OB * rw);
        if (dt == TB_BF16 && !j.h16)
            wpsz += 2 * (size_t)j.O;
        if (j.h16)
            wpsz += (size_t)j.O; /* biasf */
        /* the packed weights after the parts' buffers, aligned to 8 */
        j.colsz = (j.colsz + 7) / 8 * 8;
        parts = cpu_parts(c, macs + j.N * j.R * j.P, j.N);
    }
#endif
    if (j.h16 && !j.direct)
        return TB_EINVAL; /* tb_cpu_conv2d_h16 checked it */
    j.col = tb_alloc(((size_t)parts * j.colsz + wpsz) * j.bsz);
    if (!j.col)
        return TB_ENOMEM;
#if TB_CPU_HAVE_AVX512
    if (j.direct)
        cpu_convd_pack(&j, j.col + (size_t)parts * j.colsz * j.bsz, wpsz);
#endif
    if (parts > 1) {
        parts = cpu_pool_run(c->pool, parts, cpu_conv_task, &j);
        rc = 0;
        for (int i = 0; i < parts && !rc; i++)
            rc = j.rc[i];
    } else {
#if TB_CPU_HAVE_GEMM
        const tb_gemm_parallel par = {cpu_gemm_par_run, c};
        rc = cpu_conv_images(&j, j.col, 0, j.N, c->threads,
                             c->threads > 1 ? &par : NULL);
#else
        rc = cpu_conv_images(&j, j.col, 0, j.N, 1, NULL);
#endif
    }
    tb_free(j.col);
    return rc;
}

int tb_cpu_conv2d_h16(void *ctx, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p, tb_dtype dt, bool with_bias)
{
#if TB_CPU_HAVE_AVX512
    if (!ctx || !in || !out || tb_cpu_isa(ctx) < TB_ISA_AVX512)
        return 1;
    const tb_tensor *x = &in[0], *w = &in[1];
    if (x->ndim != 4 || w->ndim != 4 || out->ndim != 4 ||
        (dt != TB_F16 && dt != TB_BF16) || x->dtype != dt ||
        w->dtype != dt || out->dtype != dt)
        return 1;
    const tb_op *op =
        tb_op_get(with_bias ? TB_OP_conv2d : TB_OP_conv2d_nobias);
    tb_params q;
    int64_t st, pad, dil;
    if (conv_params(op, p, &q, &st, &pad, &dil) || st != 1 || pad < 0 ||
        dil < 1)
        return 1;
    const int64_t O = w->shape[0], KH = w->shape[2], KW = w->shape[3];
    const int64_t OH = out->shape[2], OW = out->shape[3];
    const tb_cpu_convd_geom dg = {x->shape[1], OH + dil * (KH - 1),
                                  OW + dil * (KW - 1), O, KH, KW, OH, OW,
                                  dil};
    const int64_t R = x->shape[1] * KH * KW;
    if (O < 1 || OH < 1 || !tb_cpu_convd_fwd_fits(R, O, OW, 16) ||
        !tb_cpu_convd_fwd_h_fits(&dg))
        return 1;
    return cpu_conv2d(ctx, in, out, p, dt, with_bias, TB_ISA_AVX512);
#else
    (void)ctx, (void)in, (void)out, (void)p, (void)dt, (void)with_bias;
    return 1;
#endif
}

/* ---- max_pool2d / avg_pool2d ---- */

typedef struct cpu_pool2d_job {
    tb_cpu_pool_fn fn;
    size_t esz;
    const char *x;
    char *o;
    int64_t planes; /* N * C */
    tb_cpu_pool_geom g;
} cpu_pool2d_job;

static void cpu_pool2d_task(void *argp, int part, int nparts)
{
    const cpu_pool2d_job *j = argp;
    int64_t b, e;
    cpu_span(j->planes, part, nparts, &b, &e);
    if (e > b)
        j->fn(j->x + (size_t)(b * j->g.H * j->g.W) * j->esz,
              j->o + (size_t)(b * j->g.OH * j->g.OW) * j->esz, e - b, &j->g);
}

/* Pooling of x [N, C, H, W] over params 0 kernel, 1 stride (absent: =
 * kernel), 2 padding; the output must have the shape the op's rule
 * gives.  The N * C planes are split over the threads. */
static int cpu_pool2d(void *ctx, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p, tb_dtype dt, bool is_max,
                      int lv)
{
    int rc = cpu_begin(ctx, dt, in, 1, out);
    if (rc)
        return rc;
    tb_cpu_ctx *c = ctx;
    const tb_op *op = tb_op_get(is_max ? TB_OP_max_pool2d : TB_OP_avg_pool2d);
    int64_t k, s, pad;
    if ((rc = cpu_param_int(p, 0, (int64_t)op->params[0].def, NULL, &k)) ||
        (rc = cpu_param_int(p, 1, k, NULL, &s)) ||
        (rc = cpu_param_int(p, 2, (int64_t)op->params[2].def, NULL, &pad)))
        return rc;
    if (k < 1 || s < 1 || pad < 0 || k > (INT64_C(1) << 20) ||
        s > (INT64_C(1) << 20) || 2 * pad > k)
        return TB_EPARAM;
    const tb_tensor *x = &in[0];
    if (x->ndim != 4 || out->ndim != 4)
        return TB_ESHAPE;
    tb_shape ish = tb_tensor_shape(x), osh;
    if ((rc = tb_op_infer(op, &ish, 1, p, &osh, NULL, 0)))
        return rc;
    tb_shape got = tb_tensor_shape(out);
    if (!tb_shape_equal(&got, &osh))
        return TB_ESHAPE;
    const tb_cpu_pool_geom g = {x->shape[2], x->shape[3], osh.dim[2],
                                osh.dim[3], k, s, pad};
    CPU_SLOT_AT(c->k[lv].pool[dt].isa, lv);
    cpu_pool2d_job j = {
        .fn = is_max ? c->k[lv].pool[dt].max : c->k[lv].pool[dt].avg,
        .esz = tb_dtype_size(dt),
        .x = x->data,
        .o = out->data,
        .planes = x->shape[0] * x->shape[1],
        .g = g,
    };
    if (g.W >= TB_CPU_POOL_SIMD_MAX_W) {
        /* beyond the SIMD versions' int32 lane offsets */
        tb_cpu_kernels kc;
        tb_cpu_kernels_init_c(&kc);
        j.fn = is_max ? kc.pool[dt].max : kc.pool[dt].avg;
    }
    const int64_t work = cpu_numel(x) + j.planes * g.OH * g.OW * k * k / 4;
    cpu_pool_run(c->pool, cpu_parts(c, work, j.planes), cpu_pool2d_task, &j);
    return 0;
}

/* ---- entry points ---- */

CPU_RUN(conv2d, cpu_conv2d(ctx, in, out, p, dt, true, lv))
CPU_RUN(conv2d_nobias, cpu_conv2d(ctx, in, out, p, dt, false, lv))
CPU_RUN(max_pool2d, cpu_pool2d(ctx, in, out, p, dt, true, lv))
CPU_RUN(avg_pool2d, cpu_pool2d(ctx, in, out, p, dt, false, lv))

TB_CPU_ROWS_CONV(CPU_DEF)

/* bf16 at the avx512bf16 level (kreg.h's TB_CPU_HALF_MM rows; below it
 * the bf16 rows are half.c's: the f32 conv between conversions) */
#if TB_CPU_HAVE_GEMM && TB_CPU_HAVE_AVX512BF16
#define CPU_CONV_BF16_ENTRY(op, bias)                                     \
    int TB_CPU_KFN(op, bf16, avx512bf16)(void *ctx, const tb_tensor *in,  \
                                         tb_tensor *out,                  \
                                         const tb_params *p)              \
    {                                                                     \
        if (!ctx)                                                         \
            return TB_EINVAL;                                             \
        if (tb_cpu_isa(ctx) < TB_ISA_AVX512BF16)                          \
            return TB_EUNSUPPORTED;                                       \
        return cpu_conv2d(ctx, in, out, p, TB_BF16, bias,                 \
                          TB_ISA_AVX512BF16);                             \
    }
CPU_CONV_BF16_ENTRY(conv2d, true)
CPU_CONV_BF16_ENTRY(conv2d_nobias, false)
#endif
