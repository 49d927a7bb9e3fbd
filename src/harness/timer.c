#include "timer.h"

#include <stdlib.h>

#include "../base/clock.h"

uint64_t tb_now_ns(void)
{
    return tb_clock_ns();
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

double tb_timer_overhead_ns(int pairs)
{
    if (pairs < 1)
        pairs = 1;
    uint64_t *d = malloc((size_t)pairs * sizeof *d);
    if (!d)
        return 0;
    for (int i = 0; i < pairs; i++) {
        uint64_t a = tb_now_ns();
        uint64_t b = tb_now_ns();
        d[i] = b - a;
    }
    qsort(d, (size_t)pairs, sizeof *d, cmp_u64);
    double med = pairs % 2 ? (double)d[pairs / 2]
                           : 0.5 * ((double)d[pairs / 2 - 1] +
                                    (double)d[pairs / 2]);
    free(d);
    return med;
}
