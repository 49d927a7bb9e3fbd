/* The one clock of tbench: CLOCK_MONOTONIC in nanoseconds, or a clock a
 * test puts in its place.
 *
 * The harness's timer (src/harness/timer.h) and the calib_spin kernel
 * (src/backends/cpu/calib.c) both read it, so a test that installs a
 * fake clock (a function of its own state) drives the timer, the
 * runner's time limits and the spin alike, and `tbench selftest`'s
 * error figures can be checked deterministically (tests/test_selftest.c).
 * Never install a clock while another thread reads it. */
#ifndef TB_BASE_CLOCK_H
#define TB_BASE_CLOCK_H

#include <stdint.h>

typedef uint64_t (*tb_clock_fn)(void *arg);

/* The installed clock's reading, else CLOCK_MONOTONIC in ns. */
uint64_t tb_clock_ns(void);
/* Install fn(arg) as the clock; NULL restores CLOCK_MONOTONIC. */
void tb_clock_set(tb_clock_fn fn, void *arg);
/* Resolution of the clock: the installed clock's `res_ns` as given to
 * tb_clock_set_res (0 unknown), else clock_getres(CLOCK_MONOTONIC). */
double tb_clock_res_ns(void);
void tb_clock_set_res(double res_ns);

#endif
