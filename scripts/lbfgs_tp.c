/* lbfgs_tp: the memory pattern of the lbfgs row at m = 5 (issue 34: the
 * row 65536 stays above 1.3x its bound, the L3's `update` figure for the
 * bytes of its operands read once; the reason in
 * docs/perf-data/limit-reasons.json cites these figures).
 *
 *   cc -O2 -mavx512f -mavx512dq -o /tmp/lbfgs_tp scripts/lbfgs_tp.c
 *   /tmp/lbfgs_tp [rounds]
 *
 * Not a test (tests/meson.build only builds it; it needs AVX-512 to
 * run).  optim.c's lbfgs_run makes 2m + 1 passes over n elements, each
 * after the sums of the one before (every coefficient needs a whole dot
 * product): the first loop's passes read q, y_(k+1) (the pending
 * update), s_k and y_k (s.q, s.y, y.y) and write q (the first reads g
 * in place of q and y_(k+1)); the second loop's read q, s_(k-1) and y_k
 * (the first q and y_0) and write q; the step reads q, s_(m-1) and p
 * and writes q and out: 36 arrays read and 12 written, where the bound
 * counts p, g, S and Y read once and out and the direction written (14).
 * Here the same passes over the same arrays (an n-element row of the
 * element type as n esz / 8 doubles: the bytes, not the type, of the
 * row), each pass's update and sums in double with four accumulators
 * (0.3-0.5 cycles an element in L1, mix_tp_rows.py's lbfgs f64 passes),
 * for f64 and f32 rows of 65536 elements, against a read and an update
 * (a += 1) of the f64 row's 24 MiB as three passes over one 8 MiB array
 * (tbench peak's L3 working set): the smallest time of ROUNDS rounds
 * (default 40), the loops
 * alternated.  Arrays on 2 MiB boundaries plus a few lines, as tbench's
 * tensors. */
#define _POSIX_C_SOURCE 199309L
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define M 5
#define NEL 65536L

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static void *bases[16]; /* the allocations, freed at the end */
static int nbases;

static double *arr(size_t bytes, int k)
{
    /* (aligned_alloc's size a multiple of the alignment) */
    const size_t huge = (size_t)1 << 21;
    char *p = aligned_alloc(huge, (bytes + 2 * huge - 1) / huge * huge);
    bases[nbases++] = p;
    if (!p) {
        fprintf(stderr, "lbfgs_tp: out of memory\n");
        exit(1);
    }
    double *d = (double *)(void *)(p + 64 * (k % 8 + 1));
    for (size_t i = 0; i < bytes / 8; i++)
        d[i] = 1e-3 * (double)(i % 97) + k;
    return d;
}

/* q = (a ? q + c a : q) (q from src when given), then sums b.q, b.y,
 * y.y (y may be NULL), or o = p + c2 q (step) */
static double pass(double *q, const double *src, const double *a,
                   const double *b, const double *y, const double *p,
                   double *o, long n, double c)
{
    const __m512d cv = _mm512_set1_pd(c), h = _mm512_set1_pd(1e-3);
    __m512d s0 = _mm512_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
    for (long i = 0; i < n; i += 16) {
        __m512d q0 = _mm512_loadu_pd((src ? src : q) + i);
        __m512d q1 = _mm512_loadu_pd((src ? src : q) + i + 8);
        if (a) {
            q0 = _mm512_fmadd_pd(cv, _mm512_loadu_pd(a + i), q0);
            q1 = _mm512_fmadd_pd(cv, _mm512_loadu_pd(a + i + 8), q1);
        }
        _mm512_storeu_pd(q + i, q0);
        _mm512_storeu_pd(q + i + 8, q1);
        if (o) {
            _mm512_storeu_pd(o + i, _mm512_fmadd_pd(
                                        h, q0, _mm512_loadu_pd(p + i)));
            _mm512_storeu_pd(o + i + 8,
                             _mm512_fmadd_pd(h, q1,
                                             _mm512_loadu_pd(p + i + 8)));
            continue;
        }
        const __m512d b0 = _mm512_loadu_pd(b + i);
        const __m512d b1 = _mm512_loadu_pd(b + i + 8);
        s0 = _mm512_fmadd_pd(b0, q0, s0);
        s1 = _mm512_fmadd_pd(b1, q1, s1);
        if (y) {
            const __m512d y0 = _mm512_loadu_pd(y + i);
            const __m512d y1 = _mm512_loadu_pd(y + i + 8);
            s2 = _mm512_fmadd_pd(b0, y0, s2);
            s3 = _mm512_fmadd_pd(y1, y1, s3);
        }
    }
    return _mm512_reduce_add_pd(
        _mm512_add_pd(_mm512_add_pd(s0, s1), _mm512_add_pd(s2, s3)));
}

/* the row's 2m + 1 passes over rows of n doubles */
static double lbfgs_pattern(double **S, double **Y, double *g, double *p,
                            double *q, double *o, long n)
{
    double t = 0;
    t += pass(q, g, NULL, S[M - 1], Y[M - 1], NULL, NULL, n, -1);
    for (int k = M - 2; k >= 0; k--)
        t += pass(q, NULL, Y[k + 1], S[k], Y[k], NULL, NULL, n, -1e-6);
    t += pass(q, NULL, Y[0], Y[0], NULL, NULL, NULL, n, -1e-6);
    for (int k = 1; k < M; k++)
        t += pass(q, NULL, S[k - 1], Y[k], NULL, NULL, NULL, n, 1e-6);
    t += pass(q, NULL, S[M - 1], NULL, NULL, p, o, n, 1e-6);
    return t;
}

static double read_all(const double *x, long n)
{
    __m512d s0 = _mm512_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
    for (long i = 0; i < n; i += 32) {
        s0 = _mm512_add_pd(s0, _mm512_loadu_pd(x + i));
        s1 = _mm512_add_pd(s1, _mm512_loadu_pd(x + i + 8));
        s2 = _mm512_add_pd(s2, _mm512_loadu_pd(x + i + 16));
        s3 = _mm512_add_pd(s3, _mm512_loadu_pd(x + i + 24));
    }
    return _mm512_reduce_add_pd(
        _mm512_add_pd(_mm512_add_pd(s0, s1), _mm512_add_pd(s2, s3)));
}

static void update_all(double *x, long n)
{
    const __m512d one = _mm512_set1_pd(1.0);
    for (long i = 0; i < n; i += 8)
        _mm512_storeu_pd(x + i, _mm512_add_pd(_mm512_loadu_pd(x + i), one));
}

int main(int argc, char **argv)
{
    const int rounds = argc > 1 ? atoi(argv[1]) : 40;
    /* the f64 row's arrays (n doubles); the f32 row's are the first half
     * of each (n / 2 doubles: the same bytes as 65536 floats) */
    double *S[M], *Y[M];
    int k = 0;
    for (int i = 0; i < M; i++) {
        S[i] = arr(NEL * 8, k++);
        Y[i] = arr(NEL * 8, k++);
    }
    double *g = arr(NEL * 8, k++), *p = arr(NEL * 8, k++);
    double *q = arr(NEL * 8, k++), *o = arr(NEL * 8, k++);
    /* an 8 MiB array (tbench peak's L3 working set), read or updated 3
     * times: 24 MiB moved (read) or 48 (update) */
    const long big = 16 * NEL;
    double *x = arr((size_t)big * 8, k++);
    double best[4] = {1e30, 1e30, 1e30, 1e30};
    volatile double sink = 0;
    for (int r = 0; r < rounds; r++)
        for (int l = 0; l < 4; l++)
            for (int rep = 0; rep < 2; rep++) { /* timed: the second */
                const double t0 = now_ns();
                if (l == 0)
                    sink += lbfgs_pattern(S, Y, g, p, q, o, NEL);
                else if (l == 1)
                    sink += lbfgs_pattern(S, Y, g, p, q, o, NEL / 2);
                else
                    for (int i = 0; i < 3; i++) {
                        if (l == 2)
                            sink += read_all(x, big);
                        else
                            update_all(x, big);
                    }
                const double t = now_ns() - t0;
                if (rep == 1 && t < best[l])
                    best[l] = t;
            }
    const double mib = 48.0 * NEL * 8 / (1 << 20);
    printf("lbfgs m=%d n=%ld, min of %d rounds (us):\n", M, NEL, rounds);
    printf("  f64 row's passes (%.0f MiB moved)   %8.1f\n", mib,
           best[0] / 1e3);
    printf("  f32 row's passes (%.0f MiB moved)   %8.1f\n", mib / 2,
           best[1] / 1e3);
    printf("  8 MiB read 3 times                 %8.1f (%.1f GB/s)\n",
           best[2] / 1e3, 48.0 * NEL * 8 / best[2]);
    printf("  8 MiB updated 3 times              %8.1f (%.1f GB/s)\n",
           best[3] / 1e3, 2 * 48.0 * NEL * 8 / best[3]);
    for (int i = 0; i < nbases; i++)
        free(bases[i]);
    return sink == 0.5 ? 1 : 0;
}
