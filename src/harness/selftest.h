/* `tbench selftest`: how accurately the harness measures on this machine,
 * and the smallest change it can detect here.
 *
 * 1. The clock (tb_now_ns): its resolution (clock_getres), the smallest
 *    step seen between successive readings, and the cost of a reading
 *    (the median of back-to-back pairs, which the runner subtracts from
 *    every sample).
 * 2. Known times: calib_spin (src/ops/calib.h) at 0 ns, 100 ns, 1 us,
 *    10 us and 1 ms through the real runner (batching, overhead
 *    subtraction, stopping rule).  A call also costs its own entry,
 *    checks and clock readings, which calib_spin at 0 ns measures; per
 *    point the measured median, the net time (measured minus the 0 ns
 *    call), its error against the time spun, and the bound the clock
 *    allows on that error (below).
 * 4. Noise sources (with 3.): the core clock before every round, and the
 *    load average, steal and other processes' CPU time over the rounds;
 *    each that passes its rule is named beside the CV.
 * 3. Minimum detectable effect: calib_work measured in `runs` rounds; the
 *    coefficient of variation (CV) of the round medians is the
 *    run-to-run noise, and the smallest relative change that a two-sided
 *    test at level alpha detects with probability `power` when m runs
 *    per side are compared is
 *        MDE(m) = (z(1 - alpha/2) + z(power)) * CV * sqrt(2 / m)
 *    (z = the standard normal quantile).  Reported for m = 1 and 5, as a
 *    fraction and in ns of calib_work's median.
 *
 * The error bound of a spin point: the spin's last reading is the first
 * at or past the target, so the spin lasts the target plus less than one
 * reading (cost) and one clock step; the 0 ns call makes one reading in
 * its loop, which the net time takes away again; the overhead subtracted
 * per sample is exact up to one step, i.e. step / iters_per_sample per
 * iteration.  So |error| <= cost + step + step / iters_per_sample.  Everything reads tb_clock_ns
 * (src/base/clock.h), so a test with a fake clock checks this exactly. */
#ifndef TB_HARNESS_SELFTEST_H
#define TB_HARNESS_SELFTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "noise.h"

#define TB_SELFTEST_NSPIN 4
#define TB_SELFTEST_MAX_RUNS 64
#define TB_SELFTEST_NMDE 2

typedef struct tb_selftest_opts {
    int runs;        /* rounds of calib_work, 3..64; 0: no MDE part */
    int64_t work_n;  /* calib_work's shape [n] */
    double alpha;    /* two-sided level (compare's default 0.01) */
    double power;    /* probability of detecting the MDE (0.8) */
    double max_time_s; /* sampling time per spin case */
} tb_selftest_opts;

/* Defaults: runs 10, work_n 100000, alpha 0.01, power 0.8, 0.5 s. */
void tb_selftest_opts_default(tb_selftest_opts *o);

typedef struct tb_selftest_point {
    double true_ns;       /* the spin asked for */
    double measured_ns;   /* median per-iteration time */
    double net_ns;        /* measured - the 0 ns call's median */
    double err_ns;        /* net - true */
    double rel_err;       /* err / true */
    double bound_ns;      /* the clock's bound on err (above) */
    bool within;          /* |err| <= bound */
    uint64_t iters_per_sample;
    size_t n_samples;
} tb_selftest_point;

typedef struct tb_selftest {
    double clock_res_ns;  /* clock_getres, or the fake clock's */
    double clock_step_ns; /* smallest nonzero step between readings */
    double clock_cost_ns; /* median cost of one reading */
    double overhead_ns;   /* what the runner subtracts per sample */
    double spin0_ns;      /* median of calib_spin at 0 ns: a call's cost */
    tb_selftest_point spin[TB_SELFTEST_NSPIN];
    /* MDE (runs > 0) */
    int runs;
    int64_t work_n;
    double work_round_medians_ns[TB_SELFTEST_MAX_RUNS];
    double work_median_ns; /* median of the round medians */
    double work_cv;        /* stddev / mean of the round medians */
    double alpha, power, z_alpha, z_power;
    int mde_runs[TB_SELFTEST_NMDE]; /* m: 1 and 5 runs per side */
    double mde_rel[TB_SELFTEST_NMDE];
    double mde_ns[TB_SELFTEST_NMDE];
    /* Noise sources it can see (runs > 0): the core clock before each
     * round (tb_peak_core_ghz, 2 ms), its median and CV; the machine
     * during the rounds (harness/noise.h); and the sources named, by
     * the rules of docs/FORMAT.md ("selftest"), "" when none is. */
    double clock_ghz[TB_SELFTEST_MAX_RUNS];
    double clock_ghz_median, clock_cv;
    tb_noise noise;
    char named[256];
} tb_selftest;

/* Run the selftest with the clock installed now (tb_clock_ns).  Returns
 * 0, or a TB_E* code with a one-line message in err (bad options, no
 * cpu backend, a calibration case that did not run). */
int tb_selftest_run(const tb_selftest_opts *o, tb_selftest *st, char *err,
                    size_t errlen);

/* The "tbench.selftest/1" document of st (docs/FORMAT.md); figures that
 * are not finite are null.  NULL on allocation failure. */
cJSON *tb_selftest_json(const tb_selftest *st);

/* The standard normal quantile z(p) for 0 < p < 1 (NaN outside). */
double tb_normal_quantile(double p);
/* MDE(m) of the formula above; NaN when cv < 0, m < 1 or the levels are
 * outside (0, 1). */
double tb_selftest_mde(double cv, int m, double alpha, double power);

#endif
