/* layer_norm and rms_norm f32 at the avx2 level (norm_c.c's two passes
 * per row, 8 lanes wide with four accumulators, FMA in the scale); rows
 * split over the instance's threads.  checkasm holds them to the C rows
 * and the reference within the op's tolerance (the sums associate
 * differently). */
#include <immintrin.h>
#include <math.h>

#include "../../base/error.h"
#include "cpu_internal.h"
#include "kreg.h"
#include "vmath.h"
#include "vmath_simd.h" /* v_hsum */

typedef struct {
    const tb_tensor *in;
    tb_tensor *out;
    int64_t rows, D;
    float eps;
    bool rms;
} norm_job;

/* sum of x[k] - c (c = 0: of x), or of its squares */
static float row_sum(const float *x, int64_t D, float c, bool sq)
{
    __m256 a[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps(), _mm256_setzero_ps()};
    const __m256 vc = _mm256_set1_ps(c);
    int64_t k = 0;
    for (; k + 32 <= D; k += 32)
        for (int u = 0; u < 4; u++) {
            __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + k + 8 * u), vc);
            a[u] = sq ? _mm256_fmadd_ps(d, d, a[u]) : _mm256_add_ps(a[u], d);
        }
    for (; k + 8 <= D; k += 8) {
        __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + k), vc);
        a[0] = sq ? _mm256_fmadd_ps(d, d, a[0]) : _mm256_add_ps(a[0], d);
    }
    float s = v_hsum(_mm256_add_ps(_mm256_add_ps(a[0], a[1]),
                                 _mm256_add_ps(a[2], a[3])));
    for (; k < D; k++)
        s += sq ? (x[k] - c) * (x[k] - c) : x[k] - c;
    return s;
}

static void norm_part(void *arg, int part, int nparts)
{
    const norm_job *j = arg;
    const float *x = j->in[0].data, *w = j->in[1].data;
    const float *b = j->rms ? NULL : j->in[2].data;
    float *o = j->out[0].data;
    const int64_t D = j->D;
    int64_t r0, r1;
    tb_cpu_span(j->rows, 1, part, nparts, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const float *xr = x + r * D;
        float *orow = o + r * D;
        const float mean = j->rms ? 0.0f : row_sum(xr, D, 0, false) / (float)D;
        const float ss = row_sum(xr, D, mean, true);
        const float inv = 1.0f / (float)sqrt((double)(ss / (float)D + j->eps));
        const __m256 vmean = _mm256_set1_ps(mean), vinv = _mm256_set1_ps(inv);
        int64_t k = 0;
        for (; k + 8 <= D; k += 8) {
            __m256 c = _mm256_sub_ps(_mm256_loadu_ps(xr + k), vmean);
            __m256 y = _mm256_mul_ps(_mm256_mul_ps(c, vinv),
                                     _mm256_loadu_ps(w + k));
            if (b)
                y = _mm256_add_ps(y, _mm256_loadu_ps(b + k));
            _mm256_storeu_ps(orow + k, y);
        }
        for (; k < D; k++)
            orow[k] = (xr[k] - mean) * inv * w[k] + (b ? b[k] : 0.0f);
    }
}

static int norm_run(void *ctx, tb_op_id id, const tb_tensor *in,
                    tb_tensor *out, const tb_params *p)
{
    int rc = tb_cpu_begin_op(ctx, id, TB_F32, in, out, p);
    if (rc)
        return rc;
    norm_job j = {in, out, 0, in[0].shape[in[0].ndim - 1],
                  (float)tb_cpu_param(p, id, 0), id == TB_OP_rms_norm};
    j.rows = j.D ? tb_tensor_numel(&in[0]) / j.D : 0;
    tb_cpu_parallel(ctx, j.rows * j.D * 4, j.rows, norm_part, &j);
    return 0;
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
