/* layer_norm and rms_norm f32 at the avx2 level, and their gradients
 * (below; norm.h's driver); rows split over the instance's threads.  Per
 * row of D:
 *  - the statistics in one pass over x: rms_norm's sum of squares;
 *    layer_norm's sums of d = x - c and of d^2, shifted by c, the mean
 *    of the row's first 8 elements (so a common offset does not cancel,
 *    and c is near the mean), var = E[d^2] - E[d]^2, and the two-pass
 *    sum of (x - mean)^2 instead when E[d]^2 is over 3/4 of E[d^2] (the
 *    subtraction would lose more than 2 bits);
 *  - the scale pass, ((x - c) - E[d]) * rstd * w (+ b) with FMA, reading
 *    x again from L1;
 *  - while the statistics pass reads row r, the row NORM_PF_ROWS ahead is
 *    prefetched: a row of 4 KiB is a page, and the hardware prefetchers
 *    stop at page boundaries, so without it each row starts with a
 *    DRAM miss and the scale pass leaves the memory idle;
 *  - when x and the output together are at least NORM_NT_BYTES, the
 *    output goes out by streaming stores (rows that start on 32 bytes),
 *    which skips the read-for-ownership of its lines: 2 DRAM streams
 *    instead of 3.
 * docs/perf-data/norm has the measurements behind each choice.
 * checkasm holds these rows to the C rows and the reference within the
 * op's tolerance (the sums associate differently). */
#include <immintrin.h>
#include <math.h>

#include "../../base/error.h"
#include "cpu_internal.h"
#include "kreg.h"
#include "norm.h"
#include "vmath.h"
#include "vmath_simd.h" /* v_hsum */

/* Rows ahead the statistics pass prefetches. */
#define NORM_PF_ROWS 2
/* x + output bytes from which the output is streamed: a 32 MiB L3 (this
 * machine's) cannot keep the output for its reader past the input's own
 * stream, so caching its lines only costs their read. */
#define NORM_NT_BYTES (32.0 * 1024 * 1024)

typedef struct {
    const tb_tensor *in;
    tb_tensor *out;
    int64_t rows, D;
    float eps;
    bool rms, nt;
} norm_job;

/* *s2 = sum of d^2 and (s1 not NULL) *s1 = sum of d, d = x[k] - c, in
 * one pass, with pf's lines (a row ahead, or NULL) prefetched along the
 * way.  Inlined, so the s1 == NULL calls drop the linear sums. */
static inline __attribute__((always_inline)) void
row_sums(const float *x, int64_t D, float c,
                            const char *pf, float *s1, float *s2)
{
    __m256 a[4], q[4];
    for (int u = 0; u < 4; u++)
        a[u] = q[u] = _mm256_setzero_ps();
    const __m256 vc = _mm256_set1_ps(c);
    int64_t k = 0;
    for (; k + 32 <= D; k += 32) {
        if (pf) {
            _mm_prefetch(pf + 4 * k, _MM_HINT_T0);
            _mm_prefetch(pf + 4 * k + 64, _MM_HINT_T0);
        }
        for (int u = 0; u < 4; u++) {
            __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + k + 8 * u), vc);
            a[u] = _mm256_add_ps(a[u], d);
            q[u] = _mm256_fmadd_ps(d, d, q[u]);
        }
    }
    for (; k + 8 <= D; k += 8) {
        __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + k), vc);
        a[0] = _mm256_add_ps(a[0], d);
        q[0] = _mm256_fmadd_ps(d, d, q[0]);
    }
    float t1 = v_hsum(_mm256_add_ps(_mm256_add_ps(a[0], a[1]),
                                  _mm256_add_ps(a[2], a[3])));
    float t2 = v_hsum(_mm256_add_ps(_mm256_add_ps(q[0], q[1]),
                                  _mm256_add_ps(q[2], q[3])));
    for (; k < D; k++) {
        t1 += x[k] - c;
        t2 += (x[k] - c) * (x[k] - c);
    }
    if (s1)
        *s1 = t1;
    *s2 = t2;
}

/* The row's mean as c + m (the shift and the mean of x - c, kept apart:
 * their sum rounded to f32 would be off by half an ulp of the offset,
 * far more than the deviations can bear; 0 and 0 for rms_norm) and its
 * sum of squared deviations. */
static void row_stats(const norm_job *j, const float *xr, const char *pf,
                      float *c, float *m, float *ss)
{
    const int64_t D = j->D;
    *c = 0, *m = 0;
    if (j->rms) {
        row_sums(xr, D, 0, pf, NULL, ss);
        return;
    }
    float s1, s2, c0 = 0;
    const int64_t n0 = D < 8 ? D : 8;
    for (int64_t k = 0; k < n0; k++)
        c0 += xr[k];
    *c = c0 / (float)n0;
    row_sums(xr, D, *c, pf, &s1, &s2);
    *m = s1 / (float)D;
    *ss = s2 - *m * s1;
    /* the subtraction loses log2(s2 / ss) bits: over 2, the two-pass sum */
    if (*m * s1 > 0.75f * s2)
        row_sums(xr, D, *c + *m, NULL, NULL, ss);
}

/* ((x[0..8) - c) - m) * r: the normalized x of 8 lanes. */
static inline __m256 v_xhat(const float *x, __m256 c, __m256 m, __m256 r)
{
    return _mm256_mul_ps(
        _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x), c), m), r);
}

static void norm_part(void *arg, int part, int nparts)
{
    const norm_job *j = arg;
    const float *x = j->in[0].data, *w = j->in[1].data;
    const float *b = j->rms ? NULL : j->in[2].data;
    float *o = j->out[0].data;
    const int64_t D = j->D;
    const __m256 zero = _mm256_setzero_ps();
    int64_t r0, r1;
    tb_cpu_span(j->rows, 1, part, nparts, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const float *xr = x + r * D;
        float *orow = o + r * D;
        const char *pf = r + NORM_PF_ROWS < r1
                             ? (const char *)(xr + NORM_PF_ROWS * D)
                             : NULL;
        float sh, m, ss;
        row_stats(j, xr, pf, &sh, &m, &ss);
        const float inv = 1.0f / (float)sqrt((double)(ss / (float)D + j->eps));
        const __m256 vsh = _mm256_set1_ps(sh), vmu = _mm256_set1_ps(m);
        const __m256 vinv = _mm256_set1_ps(inv);
        const bool nt = j->nt && ((uintptr_t)orow & 31) == 0;
        int64_t k = 0;
        for (; k + 8 <= D; k += 8) {
            __m256 c = v_xhat(xr + k, vsh, vmu, vinv);
            __m256 y = _mm256_fmadd_ps(c, _mm256_loadu_ps(w + k),
                                       b ? _mm256_loadu_ps(b + k) : zero);
            if (nt)
                _mm256_stream_ps(orow + k, y);
            else
                _mm256_storeu_ps(orow + k, y);
        }
        for (; k < D; k++)
            orow[k] = (xr[k] - sh - m) * inv * w[k] + (b ? b[k] : 0.0f);
    }
    if (j->nt)
        _mm_sfence(); /* the streamed lines out before the join */
}

static int norm_run(void *ctx, tb_op_id id, const tb_tensor *in,
                    tb_tensor *out, const tb_params *p)
{
    int rc = tb_cpu_begin_op(ctx, id, TB_F32, in, out, p);
    if (rc)
        return rc;
    norm_job j = {in, out, 0, in[0].shape[in[0].ndim - 1],
                  (float)tb_cpu_param(p, id, 0), id == TB_OP_rms_norm,
                  false};
    j.rows = j.D ? tb_tensor_numel(&in[0]) / j.D : 0;
    j.nt = 2.0 * (double)(j.rows * j.D) * sizeof(float) >= NORM_NT_BYTES;
    tb_cpu_parallel(ctx, j.rows * j.D * 4, j.rows, norm_part, &j);
    return 0;
}

/* The gradients over a chunk of rows (norm.h): per row the statistics
 * as the forward row takes them (row_stats, no prefetch: two inputs
 * stream here), then xh = ((x - c) - m) * rstd and gh = g * w with the
 * row sums of gh and gh * xh and the chunk's dw += g * xh, db += g, then
 * dx = rstd * (gh - mean(gh) - xh * mean(gh * xh)) (rms_norm: no
 * mean(gh)). */
static void norm_bw_part(void *arg, int part, int nparts)
{
    const tb_cpu_norm_bw_job *j = arg;
    const float *g = j->in[0].data, *x = j->in[1].data, *w = j->in[2].data;
    float *dx = j->out[0].data;
    const int64_t D = j->D;
    const bool rms = j->np == 1;
    const norm_job fj = {NULL, NULL, 0, D, (float)j->eps, rms, false};
    int64_t c0, c1;
    tb_cpu_span(j->nch, 1, part, nparts, &c0, &c1);
    for (int64_t ch = c0; ch < c1; ch++) {
        float *pw = (float *)j->part + ch * j->np * D;
        float *pb = rms ? NULL : pw + D;
        for (int64_t k = 0; k < j->np * D; k++)
            pw[k] = 0;
        for (int64_t r = ch * j->rows / j->nch;
             r < (ch + 1) * j->rows / j->nch; r++) {
            const float *xr = x + r * D, *gr = g + r * D;
            float sh, m, ss;
            row_stats(&fj, xr, NULL, &sh, &m, &ss);
            const float rstd =
                1.0f / (float)sqrt((double)(ss / (float)D + fj.eps));
            const __m256 vsh = _mm256_set1_ps(sh), vmu = _mm256_set1_ps(m);
            const __m256 vr = _mm256_set1_ps(rstd);
            __m256 sg = _mm256_setzero_ps(), sgx = _mm256_setzero_ps();
            int64_t k = 0;
            for (; k + 8 <= D; k += 8) {
                __m256 xh = v_xhat(xr + k, vsh, vmu, vr);
                __m256 gv = _mm256_loadu_ps(gr + k);
                __m256 gh = _mm256_mul_ps(gv, _mm256_loadu_ps(w + k));
                sg = _mm256_add_ps(sg, gh);
                sgx = _mm256_fmadd_ps(gh, xh, sgx);
                _mm256_storeu_ps(pw + k, _mm256_fmadd_ps(
                                             gv, xh, _mm256_loadu_ps(pw + k)));
                if (pb)
                    _mm256_storeu_ps(pb + k,
                                     _mm256_add_ps(_mm256_loadu_ps(pb + k), gv));
            }
            float tg = v_hsum(sg), tgx = v_hsum(sgx);
            for (int64_t t = k; t < D; t++) {
                const float xh = (xr[t] - sh - m) * rstd, gh = gr[t] * w[t];
                tg += gh;
                tgx += gh * xh;
                pw[t] += gr[t] * xh;
                if (pb)
                    pb[t] += gr[t];
            }
            const float a = rms ? 0.0f : tg / (float)D, b = tgx / (float)D;
            const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b);
            float *dr = dx + r * D;
            for (k = 0; k + 8 <= D; k += 8) {
                __m256 xh = v_xhat(xr + k, vsh, vmu, vr);
                __m256 gh = _mm256_mul_ps(_mm256_loadu_ps(gr + k),
                                          _mm256_loadu_ps(w + k));
                __m256 t = _mm256_fnmadd_ps(xh, vb, _mm256_sub_ps(gh, va));
                _mm256_storeu_ps(dr + k, _mm256_mul_ps(vr, t));
            }
            for (; k < D; k++) {
                const float xh = (xr[k] - sh - m) * rstd;
                dr[k] = rstd * (gr[k] * w[k] - a - xh * b);
            }
        }
    }
}

int TB_CPU_KFN(layer_norm_backward, f32, avx2)(void *ctx,
                                               const tb_tensor *in,
                                               tb_tensor *out,
                                               const tb_params *p)
{
    return tb_cpu_norm_bw_run(ctx, TB_OP_layer_norm_backward, TB_F32, in,
                              out, p, norm_bw_part, NULL);
}

int TB_CPU_KFN(rms_norm_backward, f32, avx2)(void *ctx, const tb_tensor *in,
                                             tb_tensor *out,
                                             const tb_params *p)
{
    return tb_cpu_norm_bw_run(ctx, TB_OP_rms_norm_backward, TB_F32, in, out,
                              p, norm_bw_part, NULL);
}

int TB_CPU_KFN(layer_norm, f32, avx2)(void *ctx, const tb_tensor *in,
                                      tb_tensor *out, const tb_params *p)
{
    return norm_run(ctx, TB_OP_layer_norm, in, out, p);
}

int TB_CPU_KFN(rms_norm, f32, avx2)(void *ctx, const tb_tensor *in,
                                    tb_tensor *out, const tb_params *p)
{
    return norm_run(ctx, TB_OP_rms_norm, in, out, p);
}
