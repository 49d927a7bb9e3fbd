/* See clock.h. */
#include "clock.h"

#include <stddef.h>
#include <time.h>

static tb_clock_fn clock_fn;
static void *clock_arg;
static double clock_res;

uint64_t tb_clock_ns(void)
{
    if (clock_fn)
        return clock_fn(clock_arg);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void tb_clock_set(tb_clock_fn fn, void *arg)
{
    clock_fn = fn;
    clock_arg = arg;
    clock_res = 0;
}

void tb_clock_set_res(double res_ns)
{
    clock_res = res_ns;
}

double tb_clock_res_ns(void)
{
    if (clock_fn)
        return clock_res;
    struct timespec r = {0, 0};
    if (clock_getres(CLOCK_MONOTONIC, &r))
        return 0;
    return (double)r.tv_sec * 1e9 + (double)r.tv_nsec;
}
