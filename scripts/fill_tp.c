/* fill_tp: how fast this core rewrites a buffer of SIZE KiB with zeros,
 * by memset, wmemset, 64-byte vector stores, streaming stores and rep
 * stosb (issue 34: zeros bf16/f16 1024x1024, 2 MiB, above 1.3x their L2
 * bound; the reason in docs/perf-data/limit-reasons.json cites these
 * figures; half.c's half_fill picks memset for +0 from them).
 *
 *   cc -O2 -mavx512f -o /tmp/fill_tp scripts/fill_tp.c
 *   /tmp/fill_tp SIZE_KIB     (e.g. 512, 1024, 2048)
 *
 * Not a test; needs AVX-512.  Each method: 200 calls, then the smallest
 * and the median of 101 more, the buffer (4 KiB aligned) written again
 * and again, as tbench's repeated calls write one output; three passes
 * over the methods. */
#define _POSIX_C_SOURCE 199309L
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void f_memset(char *p, size_t n) { memset(p, 0, n); }
static void f_wmemset(char *p, size_t n)
{
    wmemset((wchar_t *)(void *)p, 0, n / sizeof(wchar_t));
}
static void f_zmm(char *p, size_t n)
{
    const __m512 z = _mm512_setzero_ps();
    for (size_t i = 0; i < n; i += 256) {
        _mm512_store_ps((float *)(void *)(p + i), z);
        _mm512_store_ps((float *)(void *)(p + i + 64), z);
        _mm512_store_ps((float *)(void *)(p + i + 128), z);
        _mm512_store_ps((float *)(void *)(p + i + 192), z);
    }
}
static void f_nt(char *p, size_t n)
{
    const __m512 z = _mm512_setzero_ps();
    for (size_t i = 0; i < n; i += 256) {
        _mm512_stream_ps((float *)(void *)(p + i), z);
        _mm512_stream_ps((float *)(void *)(p + i + 64), z);
        _mm512_stream_ps((float *)(void *)(p + i + 128), z);
        _mm512_stream_ps((float *)(void *)(p + i + 192), z);
    }
    _mm_sfence();
}
static void f_stosb(char *p, size_t n)
{
    __asm__ volatile("rep stosb" : "+D"(p), "+c"(n) : "a"(0) : "memory");
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const long kib = argc > 1 ? atol(argv[1]) : 0;
    if (kib <= 0 || kib % 4 != 0) {
        fprintf(stderr, "usage: %s SIZE_KIB (a multiple of 4)\n", argv[0]);
        return 2;
    }
    const size_t n = (size_t)kib << 10;
    char *p = aligned_alloc(4096, n);
    if (!p)
        return 1;
    memset(p, 1, n);
    const struct {
        const char *name;
        void (*fn)(char *, size_t);
    } m[] = {{"memset", f_memset}, {"wmemset", f_wmemset},
             {"zmm", f_zmm},       {"stream", f_nt},
             {"stosb", f_stosb}};
    for (int pass = 0; pass < 3; pass++)
        for (size_t k = 0; k < sizeof m / sizeof *m; k++) {
            double t[101];
            for (int i = 0; i < 200; i++)
                m[k].fn(p, n);
            for (int i = 0; i < 101; i++) {
                const double t0 = now_ns();
                m[k].fn(p, n);
                __asm__ volatile("" : : "r"(p) : "memory");
                t[i] = now_ns() - t0;
            }
            qsort(t, 101, sizeof *t, cmp);
            printf("%ld KiB %-8s min %7.1f us  median %7.1f us  (%.1f GB/s)\n",
                   kib, m[k].name, t[0] / 1e3, t[50] / 1e3,
                   (double)n / t[0]);
        }
    free(p);
    return 0;
}
