/* stream_tp: where an out-of-place f64 add of two 8 MiB arrays (1024 x
 * 1024, 24 MiB moved) spends its time on this machine (issue 34: the
 * rows add, sub, mul, minimum, add_relu f64 at 1024x1024 stay above
 * 1.3x their bound, the L3's fastest `add` figure; the reason in
 * docs/perf-data/limit-reasons.json cites these figures).
 *
 *   cc -O2 -mavx512f -mavx512dq -o /tmp/stream_tp scripts/stream_tp.c
 *   /tmp/stream_tp [rounds]
 *
 * Not a test (tests/meson.build only builds it; it needs AVX-512 to
 * run).  Four loops over the same arrays, each the smallest time of
 * ROUNDS rounds (default 100), the loops alternated in each round and
 * each timed on its second call in a row: the output alone written by
 * streaming stores (as drv_ew.c's kernels write an output of a working
 * set from 20 MiB), the two inputs alone read, and the add both ways
 * (streaming and cached stores).  Arrays on 2 MiB boundaries plus a few
 * lines, as tbench's tensors. */
#define _POSIX_C_SOURCE 199309L
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N (1L << 20) /* doubles an array: 8 MiB */

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

typedef void (*loop_fn)(const double *a, const double *b, double *o);

static void fill_nt(const double *a, const double *b, double *o)
{
    (void)a, (void)b;
    const __m512d z = _mm512_set1_pd(1.0);
    for (long i = 0; i < N; i += 32)
        for (int u = 0; u < 32; u += 8)
            _mm512_stream_pd(o + i + u, z);
    _mm_sfence();
}

static void read_ab(const double *a, const double *b, double *o)
{
    __m512d s0 = _mm512_setzero_pd(), s1 = s0;
    for (long i = 0; i < N; i += 16) {
        s0 = _mm512_add_pd(s0, _mm512_add_pd(_mm512_loadu_pd(a + i),
                                             _mm512_loadu_pd(b + i)));
        s1 = _mm512_add_pd(s1, _mm512_add_pd(_mm512_loadu_pd(a + i + 8),
                                             _mm512_loadu_pd(b + i + 8)));
    }
    o[0] = _mm512_reduce_add_pd(_mm512_add_pd(s0, s1));
}

/* o = a + b, the stores by STORE (streaming, or cached) */
#define ADD_LOOP(NAME, STORE, FENCE)                                      \
    static void NAME(const double *a, const double *b, double *o)         \
    {                                                                     \
        for (long i = 0; i < N; i += 32)                                  \
            for (int u = 0; u < 32; u += 8)                               \
                STORE(o + i + u, _mm512_add_pd(_mm512_loadu_pd(a + i + u), \
                                               _mm512_loadu_pd(b + i + u))); \
        FENCE;                                                            \
    }
ADD_LOOP(add_nt, _mm512_stream_pd, _mm_sfence())
ADD_LOOP(add_cached, _mm512_storeu_pd, (void)0)

static double *array(int lines)
{
    double *p = aligned_alloc(2 << 20, N * sizeof(double) + (4 << 20));
    if (!p) {
        fprintf(stderr, "stream_tp: out of memory\n");
        exit(1);
    }
    return p + lines * 8;
}

int main(int argc, char **argv)
{
    const int rounds = argc > 1 ? atoi(argv[1]) : 100;
    if (rounds < 1) {
        fprintf(stderr, "stream_tp: rounds must be a positive integer\n");
        return 2;
    }
    double *a = array(0), *b = array(1), *o = array(2);
    for (long i = 0; i < N; i++)
        a[i] = (double)i, b[i] = 1.0, o[i] = 0.0;
    const loop_fn f[4] = {fill_nt, read_ab, add_nt, add_cached};
    const char *name[4] = {"write o (8 MiB), streaming stores",
                           "read a, b (16 MiB)",
                           "o = a + b, streaming stores",
                           "o = a + b, cached stores"};
    double best[4] = {1e300, 1e300, 1e300, 1e300};
    for (int r = 0; r < rounds; r++)
        for (int k0 = 0; k0 < 4; k0++) {
            const int k = r & 1 ? 3 - k0 : k0;
            f[k](a, b, o);
            const double t0 = now_ns();
            f[k](a, b, o);
            const double t = now_ns() - t0;
            best[k] = t < best[k] ? t : best[k];
        }
    for (int k = 0; k < 4; k++)
        printf("%-36s %8.1f us  %6.1f GB/s\n", name[k], best[k] / 1e3,
               (k == 0 ? 8.0 : k == 1 ? 16.0 : 24.0) * 1048576 / best[k]);
    return 0;
}
