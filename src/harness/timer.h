/* Wall-clock timing for the runner. */
#ifndef TB_HARNESS_TIMER_H
#define TB_HARNESS_TIMER_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds (tb_clock_ns, src/base/clock.h: a test
 * may put a fake clock in its place). */
uint64_t tb_now_ns(void);

/* Measured cost of one tb_now_ns() pair, in ns: the median difference of
 * `pairs` back-to-back readings.  Subtracted from every sample. */
double tb_timer_overhead_ns(int pairs);

#endif
