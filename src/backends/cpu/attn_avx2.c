/* sdpa f32 at the avx2 level: attn.h's schedule with both products of a
 * block on 6 x 16 FMA tiles (4 x 16 for a block's last rows past a
 * multiple of 12) (c[6][16] += a[6][K] b[K][16], b row-major):
 * the scores from the query block (scaled once when packed) times the
 * key block packed transposed [D, BK], the output accumulators from the
 * probabilities times v (packed only when Dv is not a multiple of 16).
 * The softmax rows run 8 lanes wide on vmath's exp.  Tiles wholly above
 * the diagonal are not computed.  checkasm holds the row to the C row and
 * the reference within the op's tolerance (other association, the scale
 * applied to q rather than to the scores).  sdpa_backward's f32 row on
 * the 4 x 16 tile at the end of the file. */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "../../base/error.h"
#include "../../ops/alloc.h"
#include "attn.h"
#include "cpu_internal.h"
#include "kreg.h"
#include "vmath_simd.h"

/* c[r * ldc + 0..16) (+)= sum_k a[r * ars + k * aks] * b[k * ldb +
 * 0..16), r < 4; acc 0: c is overwritten; sc (with acc): c's row r
 * scaled by sc[r] first.  Inlined with constant strides through the
 * forms below. */
static inline __attribute__((always_inline)) void
tile4x16_s(int64_t K, const float *a, int64_t ars, int64_t aks,
           const float *b, int64_t ldb, float *c, int64_t ldc, int acc,
           const float *sc)
{
    /* named registers: gcc -O2 keeps an array of them on the stack */
#define T_LD(r, h)                                                        \
    !acc  ? _mm256_setzero_ps()                                           \
    : sc  ? _mm256_mul_ps(_mm256_loadu_ps(c + (r) * ldc + 8 * (h)),       \
                          _mm256_broadcast_ss(sc + (r)))                  \
          : _mm256_loadu_ps(c + (r) * ldc + 8 * (h))
    __m256 c00 = T_LD(0, 0), c01 = T_LD(0, 1), c10 = T_LD(1, 0),
           c11 = T_LD(1, 1), c20 = T_LD(2, 0), c21 = T_LD(2, 1),
           c30 = T_LD(3, 0), c31 = T_LD(3, 1);
#undef T_LD
    for (int64_t k = 0; k < K; k++) {
        const float *ak = a + k * aks;
        const __m256 b0 = _mm256_loadu_ps(b + k * ldb);
        const __m256 b1 = _mm256_loadu_ps(b + k * ldb + 8);
        __m256 x = _mm256_broadcast_ss(ak);
        c00 = _mm256_fmadd_ps(x, b0, c00);
        c01 = _mm256_fmadd_ps(x, b1, c01);
        x = _mm256_broadcast_ss(ak + ars);
        c10 = _mm256_fmadd_ps(x, b0, c10);
        c11 = _mm256_fmadd_ps(x, b1, c11);
        x = _mm256_broadcast_ss(ak + 2 * ars);
        c20 = _mm256_fmadd_ps(x, b0, c20);
        c21 = _mm256_fmadd_ps(x, b1, c21);
        x = _mm256_broadcast_ss(ak + 3 * ars);
        c30 = _mm256_fmadd_ps(x, b0, c30);
        c31 = _mm256_fmadd_ps(x, b1, c31);
    }
    _mm256_storeu_ps(c, c00);
    _mm256_storeu_ps(c + 8, c01);
    _mm256_storeu_ps(c + ldc, c10);
    _mm256_storeu_ps(c + ldc + 8, c11);
    _mm256_storeu_ps(c + 2 * ldc, c20);
    _mm256_storeu_ps(c + 2 * ldc + 8, c21);
    _mm256_storeu_ps(c + 3 * ldc, c30);
    _mm256_storeu_ps(c + 3 * ldc + 8, c31);
}

/* c[r * ldc + 0..16) (+)= sum_k a[r * lda + k] * b[k * ldb + 0..16), r
 * < 4; acc 0: c is overwritten. */
static inline void tile4x16(int64_t K, const float *a, int64_t lda,
                            const float *b, int64_t ldb, float *c,
                            int64_t ldc, int acc)
{
    tile4x16_s(K, a, lda, 1, b, ldb, c, ldc, acc, NULL);
}

/* tile4x16 accumulating into c's rows scaled by sc[0..4) first */
static inline void tile4x16_sc(int64_t K, const float *a, int64_t lda,
                               const float *b, int64_t ldb, float *c,
                               int64_t ldc, const float *sc)
{
    tile4x16_s(K, a, lda, 1, b, ldb, c, ldc, 1, sc);
}

/* tile4x16 on 6 rows (c[r * ldc + 0..16), r < 6; a row-major): 12
 * accumulators, so the FMA chains' latency has slack (the 4-row tile's 8
 * are just what 2 FMAs a cycle at 4 cycles need) and a broadcast more a
 * pair of loads of b: 116 GFLOP/s at K = 64 in L1 against 110 (best of
 * 400 runs, 2026-11-30).  sc as tile4x16_s's. */
static inline __attribute__((always_inline)) void
tile6x16(int64_t K, const float *a, int64_t lda, const float *b,
         int64_t ldb, float *c, int64_t ldc, int acc, const float *sc)
{
#define T_LD(r, h)                                                        \
    !acc  ? _mm256_setzero_ps()                                           \
    : sc  ? _mm256_mul_ps(_mm256_loadu_ps(c + (r) * ldc + 8 * (h)),       \
                          _mm256_broadcast_ss(sc + (r)))                  \
          : _mm256_loadu_ps(c + (r) * ldc + 8 * (h))
    __m256 c00 = T_LD(0, 0), c01 = T_LD(0, 1), c10 = T_LD(1, 0),
           c11 = T_LD(1, 1), c20 = T_LD(2, 0), c21 = T_LD(2, 1),
           c30 = T_LD(3, 0), c31 = T_LD(3, 1), c40 = T_LD(4, 0),
           c41 = T_LD(4, 1), c50 = T_LD(5, 0), c51 = T_LD(5, 1);
#undef T_LD
    for (int64_t k = 0; k < K; k++) {
        const float *ak = a + k;
        const __m256 b0 = _mm256_loadu_ps(b + k * ldb);
        const __m256 b1 = _mm256_loadu_ps(b + k * ldb + 8);
        __m256 x = _mm256_broadcast_ss(ak);
        c00 = _mm256_fmadd_ps(x, b0, c00);
        c01 = _mm256_fmadd_ps(x, b1, c01);
        x = _mm256_broadcast_ss(ak + lda);
        c10 = _mm256_fmadd_ps(x, b0, c10);
        c11 = _mm256_fmadd_ps(x, b1, c11);
        x = _mm256_broadcast_ss(ak + 2 * lda);
        c20 = _mm256_fmadd_ps(x, b0, c20);
        c21 = _mm256_fmadd_ps(x, b1, c21);
        x = _mm256_broadcast_ss(ak + 3 * lda);
        c30 = _mm256_fmadd_ps(x, b0, c30);
        c31 = _mm256_fmadd_ps(x, b1, c31);
        x = _mm256_broadcast_ss(ak + 4 * lda);
        c40 = _mm256_fmadd_ps(x, b0, c40);
        c41 = _mm256_fmadd_ps(x, b1, c41);
        x = _mm256_broadcast_ss(ak + 5 * lda);
        c50 = _mm256_fmadd_ps(x, b0, c50);
        c51 = _mm256_fmadd_ps(x, b1, c51);
    }
    _mm256_storeu_ps(c, c00);
    _mm256_storeu_ps(c + 8, c01);
    _mm256_storeu_ps(c + ldc, c10);
    _mm256_storeu_ps(c + ldc + 8, c11);
    _mm256_storeu_ps(c + 2 * ldc, c20);
    _mm256_storeu_ps(c + 2 * ldc + 8, c21);
    _mm256_storeu_ps(c + 3 * ldc, c30);
    _mm256_storeu_ps(c + 3 * ldc + 8, c31);
    _mm256_storeu_ps(c + 4 * ldc, c40);
    _mm256_storeu_ps(c + 4 * ldc + 8, c41);
    _mm256_storeu_ps(c + 5 * ldc, c50);
    _mm256_storeu_ps(c + 5 * ldc + 8, c51);
}

/* Scratch of one part, in floats: q [BQ, D], k^T [D, BK], s [BQ, BK], v
 * [BK, DvP], o [BQ, DvP], m, l and the block's rescale factors a [BQ]. */
typedef struct {
    float *q, *kt, *s, *v, *o, *m, *l, *a;
    int64_t dvp; /* Dv rounded up to 16 */
} scratch;

static float *scratch_get(const tb_cpu_attn_job *j, scratch *w)
{
    const int64_t BQ = TB_ATTN_BQ, BK = TB_ATTN_BK;
    w->dvp = (j->Dv + 15) / 16 * 16;
    const size_t n = (size_t)(BQ * j->D + j->D * BK + BQ * BK +
                              BK * w->dvp + BQ * w->dvp + 3 * BQ);
    float *p = tb_alloc(n * sizeof *p);
    if (!p)
        return NULL;
    w->q = p;
    w->kt = w->q + BQ * j->D;
    w->s = w->kt + j->D * BK;
    w->v = w->s + BQ * BK;
    w->o = w->v + BK * w->dvp;
    w->m = w->o + BQ * w->dvp;
    w->l = w->m + BQ;
    w->a = w->l + BQ;
    /* Only v's padding columns (Dv to dvp, read by the output tiles) are
     * read before a task writes them: q's rows past qn, o, m and l are
     * set per task, k^T's columns past kn and s's rows past qn per key
     * block, and v is used at all only when Dv % 16 (key_block; the
     * tiles read BK rows at most).  Zeroing the whole scratch (33 KiB at
     * D = 16) was a quarter of a small head's time (sdpa 1x2x16x16). */
    if (w->dvp != j->Dv) /* one memset: 64 short ones cost more */
        memset(w->v, 0, (size_t)(BK * w->dvp) * sizeof *p);
    return p;
}

/* Row r of the block's scores s[0..kn), the first `lim` allowed: the
 * online-softmax update of m and l; s becomes the probabilities (0 past
 * lim), *a the factor of the output row's rescale (applied as the P V
 * tiles load the row: a pass over the row of its own was a few percent
 * of sdpa 2x4x128x64). */
static void softmax_row(float *s, int64_t kn, int64_t lim, float *m,
                        float *l, float *a)
{
    __m256 vmx = _mm256_set1_ps(*m);
    int64_t c = 0;
    for (; c + 8 <= lim; c += 8)
        vmx = _mm256_max_ps(vmx, _mm256_loadu_ps(s + c));
    float mx = v_hmax(vmx);
    for (; c < lim; c++)
        mx = s[c] > mx ? s[c] : mx;
    /* exp's exact values without the libm call where they are known:
     * a task's first block (m -inf) and a max that did not grow */
    const float alpha = *m == -INFINITY ? 0.0f
                        : *m == mx      ? 1.0f
                                        : expf(*m - mx);
    const __m256 vmax = _mm256_set1_ps(mx);
    __m256 vs = _mm256_setzero_ps();
    for (c = 0; c + 8 <= lim; c += 8) {
        __m256 e = vs_exp(_mm256_sub_ps(_mm256_loadu_ps(s + c), vmax));
        _mm256_storeu_ps(s + c, e);
        vs = _mm256_add_ps(vs, e);
    }
    if (c < lim) {
        __m256 e = vs_exp(_mm256_sub_ps(v_load_n(s + c, lim - c), vmax));
        e = _mm256_blendv_ps(_mm256_setzero_ps(), e,
                             v_first(lim - c));
        _mm256_storeu_ps(s + c, e); /* zeros past lim: s has BK columns */
        vs = _mm256_add_ps(vs, e);
        c += 8;
    }
    for (; c < kn; c++)
        s[c] = 0;
    *l = *l * alpha + v_hsum(vs);
    *m = mx;
    *a = alpha;
}

/* kt[d * ldt + c] = k[c * D + d], c < kn, d < D: whole 8 x 8 squares
 * transposed in registers (unpack, shuffle, lane swap), the edges one by
 * one.  The scalar loop was a tenth of sdpa 2x4x128x64's time. */
static void pack_kt(const float *k, int64_t D, int64_t kn, float *kt,
                    int64_t ldt)
{
    const int64_t c8 = kn / 8 * 8, d8 = D / 8 * 8;
    for (int64_t c = 0; c < c8; c += 8)
        for (int64_t d = 0; d < d8; d += 8) {
            const float *s = k + c * D + d;
            const __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + D),
                         r2 = _mm256_loadu_ps(s + 2 * D),
                         r3 = _mm256_loadu_ps(s + 3 * D),
                         r4 = _mm256_loadu_ps(s + 4 * D),
                         r5 = _mm256_loadu_ps(s + 5 * D),
                         r6 = _mm256_loadu_ps(s + 6 * D),
                         r7 = _mm256_loadu_ps(s + 7 * D);
            const __m256 t0 = _mm256_unpacklo_ps(r0, r1),
                         t1 = _mm256_unpackhi_ps(r0, r1),
                         t2 = _mm256_unpacklo_ps(r2, r3),
                         t3 = _mm256_unpackhi_ps(r2, r3),
                         t4 = _mm256_unpacklo_ps(r4, r5),
                         t5 = _mm256_unpackhi_ps(r4, r5),
                         t6 = _mm256_unpacklo_ps(r6, r7),
                         t7 = _mm256_unpackhi_ps(r6, r7);
            const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44),
                         u1 = _mm256_shuffle_ps(t0, t2, 0xee),
                         u2 = _mm256_shuffle_ps(t1, t3, 0x44),
                         u3 = _mm256_shuffle_ps(t1, t3, 0xee),
                         u4 = _mm256_shuffle_ps(t4, t6, 0x44),
                         u5 = _mm256_shuffle_ps(t4, t6, 0xee),
                         u6 = _mm256_shuffle_ps(t5, t7, 0x44),
                         u7 = _mm256_shuffle_ps(t5, t7, 0xee);
            float *o = kt + d * ldt + c;
            _mm256_storeu_ps(o, _mm256_permute2f128_ps(u0, u4, 0x20));
            _mm256_storeu_ps(o + ldt, _mm256_permute2f128_ps(u1, u5, 0x20));
            _mm256_storeu_ps(o + 2 * ldt,
                             _mm256_permute2f128_ps(u2, u6, 0x20));
            _mm256_storeu_ps(o + 3 * ldt,
                             _mm256_permute2f128_ps(u3, u7, 0x20));
            _mm256_storeu_ps(o + 4 * ldt,
                             _mm256_permute2f128_ps(u0, u4, 0x31));
            _mm256_storeu_ps(o + 5 * ldt,
                             _mm256_permute2f128_ps(u1, u5, 0x31));
            _mm256_storeu_ps(o + 6 * ldt,
                             _mm256_permute2f128_ps(u2, u6, 0x31));
            _mm256_storeu_ps(o + 7 * ldt,
                             _mm256_permute2f128_ps(u3, u7, 0x31));
        }
    for (int64_t c = 0; c < kn; c++) /* the edges */
        for (int64_t d = c < c8 ? d8 : 0; d < D; d++)
            kt[d * ldt + c] = k[c * D + d];
}

/* One key block [j0, j0 + kn) of query block [i0, i0 + qn) of head h. */
static void key_block(const tb_cpu_attn_job *j, scratch *w, int64_t h,
                      int64_t i0, int64_t qn, int64_t j0, int64_t kn)
{
    const int64_t BK = TB_ATTN_BK, D = j->D, Dv = j->Dv, dvp = w->dvp;
    const int64_t q4 = (qn + 3) / 4 * 4, n16 = (kn + 15) / 16 * 16;
    const float *k = (const float *)j->in[1].data + (h * j->Sk + j0) * D;
    const float *v = (const float *)j->in[2].data + (h * j->Sk + j0) * Dv;
    pack_kt(k, D, kn, w->kt, BK);
    for (int64_t c = kn; c < n16; c++)
        for (int64_t d = 0; d < D; d++)
            w->kt[d * BK + c] = 0;
    const bool diag = j->causal && j0 + kn - 1 > i0;
    /* rows in 6-row tiles up to q6 (q4 rounded down to 12: the rest, 0
     * to 8 rows, in 4-row ones); rh a tile's rows */
    const int64_t q6 = q4 / 12 * 12;
    for (int64_t r = 0, rh; r < q4; r += rh) {
        rh = r < q6 ? 6 : 4;
        for (int64_t c = 0; c < n16; c += 16)
            if (!diag || j0 + c <= i0 + r + rh - 1) { /* else all masked */
                if (rh == 6)
                    tile6x16(D, w->q + r * D, D, w->kt + c, BK,
                             w->s + r * BK + c, BK, 0, NULL);
                else
                    tile4x16(D, w->q + r * D, D, w->kt + c, BK,
                             w->s + r * BK + c, BK, 0);
            }
    }
    for (int64_t r = 0; r < qn; r++) {
        const int64_t lim = diag && i0 + r - j0 + 1 < kn ? i0 + r - j0 + 1
                                                         : kn;
        softmax_row(w->s + r * BK, kn, lim, &w->m[r], &w->l[r], &w->a[r]);
    }
    for (int64_t r = qn; r < q4; r++) { /* padding rows: no weight */
        memset(w->s + r * BK, 0, (size_t)kn * sizeof(float));
        w->a[r] = 1;
    }
    const float *vb = v;
    int64_t ldv = Dv;
    if (Dv % 16) {
        for (int64_t c = 0; c < kn; c++)
            memcpy(w->v + c * dvp, v + c * Dv, (size_t)Dv * sizeof(float));
        vb = w->v;
        ldv = dvp;
    }
    /* a tile's rows r..r+rh-1 over the keys row r + rh - 1 may see: on a
     * diagonal block the probabilities past them are 0, and skipping
     * them saved the product a third of its work there (a 64 x 64 block
     * does 2080 of its 4096 pairs) */
    for (int64_t r = 0, rh; r < q4; r += rh) {
        rh = r < q6 ? 6 : 4;
        const int64_t kr = diag && i0 + r + rh - j0 < kn ? i0 + r + rh - j0
                                                         : kn;
        for (int64_t e = 0; e < dvp; e += 16) {
            if (rh == 6)
                tile6x16(kr, w->s + r * BK, BK, vb + e, ldv,
                         w->o + r * dvp + e, dvp, 1, w->a + r);
            else
                tile4x16_sc(kr, w->s + r * BK, BK, vb + e, ldv,
                            w->o + r * dvp + e, dvp, w->a + r);
        }
    }
}

static void sdpa_part(void *arg, int part, int nparts)
{
    tb_cpu_attn_job *j = arg;
    const int64_t BQ = TB_ATTN_BQ, BK = TB_ATTN_BK, D = j->D, Dv = j->Dv;
    int64_t t0, t1;
    tb_cpu_span(j->BH * j->nqb, 1, part, nparts, &t0, &t1);
    if (t0 >= t1)
        return;
    scratch w;
    float *buf = scratch_get(j, &w);
    if (!buf) {
        j->rc[part] = TB_ENOMEM;
        return;
    }
    const float scale = (float)j->scale;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t h = t / j->nqb, i0 = t % j->nqb * BQ;
        const int64_t qn = j->Sq - i0 < BQ ? j->Sq - i0 : BQ;
        const float *q = (const float *)j->in[0].data + (h * j->Sq + i0) * D;
        for (int64_t r = 0; r < qn; r++)
            for (int64_t d = 0; d < D; d++)
                w.q[r * D + d] = q[r * D + d] * scale;
        /* the rows the 4-row tiles read: q4, qn rounded up to 4 */
        const int64_t q4 = (qn + 3) / 4 * 4;
        memset(w.q + qn * D, 0, (size_t)((q4 - qn) * D) * sizeof(float));
        memset(w.o, 0, (size_t)(q4 * w.dvp) * sizeof(float));
        for (int64_t r = 0; r < BQ; r++) {
            w.m[r] = -INFINITY;
            w.l[r] = 0;
        }
        const int64_t nk = tb_cpu_attn_keys(j, i0, qn);
        for (int64_t j0 = 0; j0 < nk; j0 += BK)
            key_block(j, &w, h, i0, qn, j0, nk - j0 < BK ? nk - j0 : BK);
        float *out = (float *)j->out[0].data + (h * j->Sq + i0) * Dv;
        for (int64_t r = 0; r < qn; r++) {
            const float inv = 1.0f / w.l[r];
            for (int64_t e = 0; e < Dv; e++)
                out[r * Dv + e] = w.o[r * w.dvp + e] * inv;
        }
    }
    tb_free(buf);
}

int TB_CPU_KFN(sdpa, f32, avx2)(void *ctx, const tb_tensor *in,
                                tb_tensor *out, const tb_params *p)
{
    tb_cpu_attn_job j;
    int rc = tb_cpu_attn_begin(ctx, TB_F32, in, out, p, &j);
    return rc ? rc : tb_cpu_attn_run(ctx, &j, sdpa_part);
}

/* ---- sdpa_backward -------------------------------------------------- */

/* sdpa_backward f32 at the avx2 level: the (batch, head) pairs over the
 * threads, each owning its dk and dv.  A pair packs k^T, v^T and k once;
 * then each 64-query block makes one pass: S = q k^T and dP = g v^T over
 * every key the block visits (tiles wholly above the causal diagonal
 * skipped), kept in scratch; per row the max, e = exp(S scale - max) in
 * place of S, l = sum e and D = sum e dP (D over l is rowsum(P * dP),
 * sdpa's dO . O); then P = e / l and dS = P (dP - D) scale in place;
 * then dq = dS k, dv += P^T g and dk += dS^T q, each on the 4 x 16 tile
 * (P and dS read transposed in place) over the rows and keys the mask
 * leaves nonzero.  So five products per block rather than the seven of
 * two passes that recompute S and dP, and one exp per score.  l sums f32
 * lanes per 64 keys into a double, D is summed in double; dP - D in
 * double (D cancels most of dP where P is one-hot).  dk and dv
 * accumulate in scratch over the query blocks and are written once per
 * pair.  Scratch in floats, widths padded to 16 (Skp: Sk to 16, Sk4: to
 * 4): q [BQ, Dp], g [BQ, Dvp], k^T [D, Skp], v^T [Dv, Skp], k [Skp, Dp],
 * s and dp [BQ, Skp], m [BQ], dq [BQ, Dp], dk [Sk4, Dp], dv [Sk4, Dvp]:
 * O(BQ Sk) per thread, no score matrix of the whole head. */
typedef struct {
    float *q, *g, *kt, *vt, *k, *s, *dp, *m, *dq, *dk, *dv;
    double *l, *dd;
    int64_t dp16, dvp, skp, sk4; /* D, Dv, Sk to 16; Sk to 4 */
} bw_scratch;

static void *bw_scratch_get(const tb_cpu_attn_job *j, bw_scratch *w)
{
    const int64_t BQ = TB_ATTN_BQ, D = j->D, Dv = j->Dv;
    w->dp16 = (D + 15) / 16 * 16;
    w->dvp = (Dv + 15) / 16 * 16;
    w->skp = (j->Sk + 15) / 16 * 16;
    w->sk4 = (j->Sk + 3) / 4 * 4;
    const int64_t skp = w->skp;
    const size_t nf = (size_t)(BQ * w->dp16 + BQ * w->dvp + D * skp +
                               Dv * skp + skp * w->dp16 + 2 * BQ * skp +
                               BQ + BQ * w->dp16 +
                               w->sk4 * (w->dp16 + w->dvp));
    double *buf = tb_alloc(2 * BQ * sizeof(double) + nf * sizeof(float));
    if (!buf)
        return NULL;
    w->l = buf;
    w->dd = buf + BQ;
    w->q = (float *)(buf + 2 * BQ);
    w->g = w->q + BQ * w->dp16;
    w->kt = w->g + BQ * w->dvp;
    w->vt = w->kt + D * skp;
    w->k = w->vt + Dv * skp;
    w->s = w->k + skp * w->dp16;
    w->dp = w->s + BQ * skp;
    w->m = w->dp + BQ * skp;
    w->dq = w->m + BQ;
    w->dk = w->dq + BQ * w->dp16;
    w->dv = w->dk + w->sk4 * w->dp16;
    /* zeros where read unwritten: q's, g's and k's columns past D or Dv,
     * k^T's and v^T's past Sk (l up to k, in one memset).  s and dp are
     * written (rows to q4, columns to n16) before each query block reads
     * them, dq by its tiles, dk and dv zeroed per pair: zeroing those
     * too was 2.4% of sdpa_backward 1x2x128x32's time. */
    memset(buf, 0, (size_t)((char *)w->s - (char *)buf));
    return buf;
}

/* c[r * ldc + 0..16) += sum_k a[r + k * lda] * b[k * ldb + 0..16), r < 4:
 * tile4x16 with a read transposed (a column of P or dS per key). */
static inline void tile4x16_at(int64_t K, const float *a, int64_t lda,
                               const float *b, int64_t ldb, float *c,
                               int64_t ldc)
{
    tile4x16_s(K, a, 1, lda, b, ldb, c, ldc, 1, NULL);
}

/* Head h's k^T [D, Skp], v^T [Dv, Skp] (columns past Sk 0) and, when D
 * is not a multiple of 16, k [Sk, Dp] into the scratch; its dk, dv
 * accumulators zeroed. */
static void bw_pack_head(const tb_cpu_attn_job *j, bw_scratch *w,
                         int64_t h)
{
    const int64_t D = j->D, Dv = j->Dv, Sk = j->Sk, skp = w->skp;
    const float *k = (const float *)j->in[2].data + h * Sk * D;
    const float *v = (const float *)j->in[3].data + h * Sk * Dv;
    pack_kt(k, D, Sk, w->kt, skp);
    pack_kt(v, Dv, Sk, w->vt, skp);
    if (D != w->dp16) /* else dq's tiles read k itself */
        for (int64_t c = 0; c < Sk; c++)
            memcpy(w->k + c * w->dp16, k + c * D, (size_t)D * sizeof(float));
    memset(w->dk, 0, (size_t)(w->sk4 * (w->dp16 + w->dvp)) * sizeof(float));
}

/* Row r's scores sr[0..n16) (unscaled), the first lim > 0 allowed, and
 * dpr: sr becomes P, dpr dS * scale (both 0 past lim). */
static void bw_row(float *sr, float *dpr, int64_t n16, int64_t lim,
                   float scale)
{
    const __m256 vsc = _mm256_set1_ps(scale);
    __m256 vmx = _mm256_set1_ps(-INFINITY);
    int64_t c = 0;
    for (; c + 8 <= lim; c += 8)
        vmx = _mm256_max_ps(vmx, _mm256_mul_ps(_mm256_loadu_ps(sr + c), vsc));
    float mx = v_hmax(vmx);
    for (; c < lim; c++)
        mx = sr[c] * scale > mx ? sr[c] * scale : mx;
    const __m256 vm8 = _mm256_set1_ps(mx);
    double l = 0;
    for (int64_t c0 = 0; c0 < lim; c0 += 64) {
        __m256 vs = _mm256_setzero_ps();
        for (c = c0; c < c0 + 64 && c < lim; c += 8) {
            const __m256 x = _mm256_mul_ps(_mm256_loadu_ps(sr + c), vsc);
            __m256 e = vs_exp(_mm256_sub_ps(x, vm8));
            e = _mm256_blendv_ps(_mm256_setzero_ps(), e, v_first(lim - c));
            _mm256_storeu_ps(sr + c, e);
            vs = _mm256_add_ps(vs, e);
        }
        l += v_hsum(vs);
    }
    /* D's double lanes in a loop of their own, on four chains (low and
     * high halves of even and odd vectors): summed beside the exp they
     * were spilled to the stack and the two chains ran at their
     * latency.  e is 0 past lim, as it was there. */
    __m256d va = _mm256_setzero_pd(), vb = _mm256_setzero_pd(),
            va1 = _mm256_setzero_pd(), vb1 = _mm256_setzero_pd();
    for (c = 0; c + 16 <= lim + 7; c += 16) {
        const __m256 ed = _mm256_mul_ps(_mm256_loadu_ps(sr + c),
                                        _mm256_loadu_ps(dpr + c));
        va = _mm256_add_pd(va, _mm256_cvtps_pd(_mm256_castps256_ps128(ed)));
        vb = _mm256_add_pd(vb, _mm256_cvtps_pd(_mm256_extractf128_ps(ed, 1)));
        const __m256 ed1 = _mm256_mul_ps(_mm256_loadu_ps(sr + c + 8),
                                         _mm256_loadu_ps(dpr + c + 8));
        va1 = _mm256_add_pd(va1,
                            _mm256_cvtps_pd(_mm256_castps256_ps128(ed1)));
        vb1 = _mm256_add_pd(vb1,
                            _mm256_cvtps_pd(_mm256_extractf128_ps(ed1, 1)));
    }
    if (c < lim) {
        const __m256 ed = _mm256_mul_ps(_mm256_loadu_ps(sr + c),
                                        _mm256_loadu_ps(dpr + c));
        va = _mm256_add_pd(va, _mm256_cvtps_pd(_mm256_castps256_ps128(ed)));
        vb = _mm256_add_pd(vb, _mm256_cvtps_pd(_mm256_extractf128_ps(ed, 1)));
    }
    va = _mm256_add_pd(va, va1);
    vb = _mm256_add_pd(vb, vb1);
    double a4[4];
    _mm256_storeu_pd(a4, _mm256_add_pd(va, vb));
    const __m256 vil = _mm256_set1_ps((float)(1 / l));
    const __m256d vd =
        _mm256_set1_pd(((a4[0] + a4[1]) + (a4[2] + a4[3])) / l);
    /* P and dS up to lim's vector; past it 0 (on the causal diagonal
     * up to half the row) */
    for (c = 0; c < lim; c += 8) {
        const __m256 keep = v_first(lim - c);
        __m256 p = _mm256_mul_ps(_mm256_loadu_ps(sr + c), vil);
        p = _mm256_blendv_ps(_mm256_setzero_ps(), p, keep);
        const __m256 dpv = _mm256_loadu_ps(dpr + c);
        const __m128 lo = _mm256_cvtpd_ps(_mm256_sub_pd(
            _mm256_cvtps_pd(_mm256_castps256_ps128(dpv)), vd));
        const __m128 hi = _mm256_cvtpd_ps(_mm256_sub_pd(
            _mm256_cvtps_pd(_mm256_extractf128_ps(dpv, 1)), vd));
        __m256 ds = _mm256_mul_ps(
            _mm256_mul_ps(p, _mm256_set_m128(hi, lo)), vsc);
        ds = _mm256_blendv_ps(_mm256_setzero_ps(), ds, keep);
        _mm256_storeu_ps(sr + c, p);
        _mm256_storeu_ps(dpr + c, ds);
    }
    for (; c < n16; c += 8) {
        _mm256_storeu_ps(sr + c, _mm256_setzero_ps());
        _mm256_storeu_ps(dpr + c, _mm256_setzero_ps());
    }
}

/* Query block [i0, i0 + qn) of head h (its k, v packed): the scores,
 * the rows, the three products, its dq written. */
static void bw_query_block(const tb_cpu_attn_job *j, bw_scratch *w,
                           int64_t h, int64_t i0, int64_t qn)
{
    const int64_t BQ = TB_ATTN_BQ, D = j->D, Dv = j->Dv, skp = w->skp;
    const int64_t dp16 = w->dp16, dvp = w->dvp;
    const int64_t q4 = (qn + 3) / 4 * 4, nk = tb_cpu_attn_keys(j, i0, qn);
    const int64_t n16 = (nk + 15) / 16 * 16, k4 = (nk + 3) / 4 * 4;
    const bool causal = j->causal;
    const float *q = (const float *)j->in[1].data + (h * j->Sq + i0) * D;
    const float *g = (const float *)j->in[0].data + (h * j->Sq + i0) * Dv;
    for (int64_t r = 0; r < BQ; r++) {
        for (int64_t d = 0; d < D; d++)
            w->q[r * dp16 + d] = r < qn ? q[r * D + d] : 0;
        for (int64_t e = 0; e < Dv; e++)
            w->g[r * dvp + e] = r < qn ? g[r * Dv + e] : 0;
    }
    for (int64_t r = 0; r < q4; r += 4)
        for (int64_t c = 0; c < n16; c += 16) {
            if (causal && c > i0 + r + 3) /* wholly masked */
                break;
            tile4x16(D, w->q + r * dp16, dp16, w->kt + c, skp,
                     w->s + r * skp + c, skp, 0);
            tile4x16(Dv, w->g + r * dvp, dvp, w->vt + c, skp,
                     w->dp + r * skp + c, skp, 0);
        }
    for (int64_t r = 0; r < q4; r++) {
        const int64_t lim = r >= qn         ? 0
                            : causal && i0 + r + 1 < nk ? i0 + r + 1
                                                        : nk;
        if (lim == 0) /* a padding row: no weight */
            for (int64_t c = 0; c < n16; c++)
                w->s[r * skp + c] = w->dp[r * skp + c] = 0;
        else
            bw_row(w->s + r * skp, w->dp + r * skp, n16, lim,
                   (float)j->scale);
    }
    /* dq [r..r+4) = dS k over the keys row r + 3 may see (k packed
     * only when D is not a multiple of 16) */
    const float *kb = D == dp16 ? (const float *)j->in[2].data + h * j->Sk * D
                                : w->k;
    for (int64_t r = 0; r < q4; r += 4) {
        const int64_t kr = causal && i0 + r + 4 < nk ? i0 + r + 4 : nk;
        for (int64_t e = 0; e < dp16; e += 16)
            tile4x16(kr, w->dp + r * skp, skp, kb + e, dp16,
                     w->dq + r * dp16 + e, dp16, 0);
    }
    /* dv, dk [c..c+4) over the rows that see key c: from c - i0 */
    for (int64_t c = 0; c < k4; c += 4) {
        const int64_t r0 = causal && c > i0 ? c - i0 : 0;
        if (r0 >= q4)
            continue;
        for (int64_t e = 0; e < dvp; e += 16)
            tile4x16_at(q4 - r0, w->s + r0 * skp + c, skp,
                        w->g + r0 * dvp + e, dvp, w->dv + c * dvp + e, dvp);
        for (int64_t e = 0; e < dp16; e += 16)
            tile4x16_at(q4 - r0, w->dp + r0 * skp + c, skp,
                        w->q + r0 * dp16 + e, dp16, w->dk + c * dp16 + e,
                        dp16);
    }
    float *dq = (float *)j->out[0].data + (h * j->Sq + i0) * D;
    for (int64_t r = 0; r < qn; r++)
        memcpy(dq + r * D, w->dq + r * dp16, (size_t)D * sizeof(float));
}

static void sdpa_bw_part(void *arg, int part, int nparts)
{
    tb_cpu_attn_job *j = arg;
    int64_t h0, h1;
    tb_cpu_span(j->BH, 1, part, nparts, &h0, &h1);
    if (h0 >= h1)
        return;
    bw_scratch w;
    void *buf = bw_scratch_get(j, &w);
    if (!buf) {
        j->rc[part] = TB_ENOMEM;
        return;
    }
    const int64_t D = j->D, Dv = j->Dv, Sk = j->Sk;
    for (int64_t h = h0; h < h1; h++) {
        bw_pack_head(j, &w, h);
        for (int64_t i0 = 0; i0 < j->Sq; i0 += TB_ATTN_BQ)
            bw_query_block(j, &w, h, i0,
                           j->Sq - i0 < TB_ATTN_BQ ? j->Sq - i0
                                                   : TB_ATTN_BQ);
        float *dk = (float *)j->out[1].data + h * Sk * D;
        float *dv = (float *)j->out[2].data + h * Sk * Dv;
        for (int64_t c = 0; c < Sk; c++) {
            memcpy(dk + c * D, w.dk + c * w.dp16, (size_t)D * sizeof(float));
            memcpy(dv + c * Dv, w.dv + c * w.dvp, (size_t)Dv * sizeof(float));
        }
    }
    tb_free(buf);
}

int TB_CPU_KFN(sdpa_backward, f32, avx2)(void *ctx, const tb_tensor *in,
                                         tb_tensor *out, const tb_params *p)
{
    tb_cpu_attn_job j;
    int rc = tb_cpu_attn_bw_begin(ctx, TB_F32, in, out, p, &j);
    return rc ? rc : tb_cpu_attn_bw_run(ctx, &j, sdpa_bw_part);
}

/* ---- causal_mask ---------------------------------------------------- */

/* causal_mask f32 at the avx2 level (the row the avx512 level takes as
 * well: a copy at L2 speed, which 8 lanes reach): row r of a plane (i
 * its index there) keeps its first min(i + 1, N) values and sets the
 * rest to -inf, in 8-lane vectors: whole vectors copied up to the
 * diagonal, the vector across it blended (lanes below keep from x), the
 * rest -inf; a row's last N % 8 values one by one.  The values move as
 * bits, as in the C row (attn_c.c), which did a memcpy call and a fill
 * loop per row. */
typedef struct {
    const float *x;
    float *o;
    int64_t rows, M, N; /* rows: of N values, over all planes */
    bool causal;
} mask_job_avx2;

static void mask_part_avx2(void *arg, int part, int nparts)
{
    const mask_job_avx2 *j = arg;
    const int64_t N = j->N;
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    int64_t r0, r1;
    tb_cpu_span(j->rows, 1, part, nparts, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const float *x = j->x + r * N;
        float *o = j->o + r * N;
        const int64_t i = r % j->M;
        const int64_t keep = j->causal && i + 1 < N ? i + 1 : N;
        int64_t c = 0;
        for (; c + 8 <= keep; c += 8)
            _mm256_storeu_ps(o + c, _mm256_loadu_ps(x + c));
        if (c < keep && c + 8 <= N) {
            const __m256i m = _mm256_cmpgt_epi32(
                _mm256_set1_epi32((int)(keep - c)), iota);
            _mm256_storeu_ps(o + c, _mm256_blendv_ps(ninf, _mm256_loadu_ps(x + c),
                                                     _mm256_castsi256_ps(m)));
            c += 8;
        }
        for (; c < keep; c++)
            o[c] = x[c];
        for (; c + 8 <= N; c += 8)
            _mm256_storeu_ps(o + c, ninf);
        for (; c < N; c++)
            o[c] = -INFINITY;
    }
}

/* o[0..16) = x's lanes below k (any k: <= 0 none, >= 16 all), the fill
 * in the others */
static inline void mask16_store(uint16_t *o, const uint16_t *x, int64_t k,
                                __m256i fill, __m256i iota)
{
    k = k < 0 ? 0 : k > 16 ? 16 : k;
    const __m256i m = _mm256_cmpgt_epi16(_mm256_set1_epi16((short)k), iota);
    _mm256_storeu_si256(
        (__m256i *)o,
        _mm256_blendv_epi8(fill, _mm256_loadu_si256((const __m256i *)x), m));
}

void tb_cpu_mask16_rows_avx2(const uint16_t *x, uint16_t *o, int64_t b,
                             int64_t e, int64_t M, int64_t N, bool causal,
                             uint16_t v)
{
    const __m256i fill = _mm256_set1_epi16((short)v);
    const __m256i iota = _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
                                           10, 11, 12, 13, 14, 15);
    int64_t i = M ? b % M : 0; /* row r's index in its plane */
    for (int64_t r = b; r < e; r++, i = i + 1 == M ? 0 : i + 1) {
        const uint16_t *xr = x + r * N;
        uint16_t *or = o + r * N;
        const int64_t keep = causal && i + 1 < N ? i + 1 : N;
        if (N < 16) {
            for (int64_t c = 0; c < N; c++)
                or[c] = c < keep ? xr[c] : v;
            continue;
        }
        /* whole vectors copied up to the diagonal, the one across it
         * blended, the rest filled; a last N % 16 as one vector ending
         * at N (overlapping its neighbour: the same values again, so x
         * == o is fine), blended.  No scalar tails: they cost a row of
         * 37 values 14 cycles more than libc's memcpy + wmemset. */
        int64_t c = 0;
        for (; c + 16 <= keep; c += 16)
            _mm256_storeu_si256((__m256i *)(or + c),
                                _mm256_loadu_si256((const __m256i *)(xr + c)));
        if (c < keep && c + 16 <= N) {
            mask16_store(or + c, xr + c, keep - c, fill, iota);
            c += 16;
        }
        for (; c + 16 <= N; c += 16)
            _mm256_storeu_si256((__m256i *)(or + c), fill);
        if (c < N)
            mask16_store(or + N - 16, xr + N - 16, keep - (N - 16), fill,
                         iota);
    }
}

int TB_CPU_KFN(causal_mask, f32, avx2)(void *ctx, const tb_tensor *in,
                                       tb_tensor *out, const tb_params *p)
{
    int rc = tb_cpu_begin_op(ctx, TB_OP_causal_mask, TB_F32, in, out, p);
    if (rc)
        return rc;
    const int nd = in[0].ndim;
    mask_job_avx2 j = {in[0].data, out[0].data, 0, in[0].shape[nd - 2],
                       in[0].shape[nd - 1],
                       tb_cpu_param(p, TB_OP_causal_mask, 0) != 0};
    j.rows = j.N ? tb_tensor_numel(&in[0]) / j.N : 0;
    tb_cpu_parallel(ctx, j.rows * j.N, j.rows, mask_part_avx2, &j);
    return 0;
}
