/* What the machine did besides the measurement while it ran: the load
 * average, the CPU time the hypervisor stole, and the CPU time that
 * neither this process nor its children used (other processes).  Read
 * from /proc/loadavg and /proc/stat, and getrusage for our own share;
 * `tbench ab` and `tbench selftest` cite these next to their figures so
 * that a reader can tell a noisy machine from a noisy build. */
#ifndef TB_HARNESS_NOISE_H
#define TB_HARNESS_NOISE_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

typedef struct tb_noise_snap {
    bool ok;             /* /proc/stat was read */
    double load1;        /* 1-minute load average, NAN when unreadable */
    double busy_s;       /* all CPUs: non-idle time (user ... softirq) */
    double steal_s;      /* all CPUs: stolen by the hypervisor */
    double total_s;      /* all CPUs: every column */
    double own_s;        /* this process and its waited-for children */
    double wall_s;       /* CLOCK_MONOTONIC */
} tb_noise_snap;

/* Between two snapshots. NAN where unknown. */
typedef struct tb_noise {
    double seconds;      /* wall time */
    int cpus;
    double load_start, load_end;
    double steal;        /* stolen share of all CPU time */
    double other_cpus;   /* CPUs' worth of time others used (0..cpus) */
} tb_noise;

void tb_noise_take(tb_noise_snap *s);
void tb_noise_diff(const tb_noise_snap *a, const tb_noise_snap *b,
                   tb_noise *out);

/* One line, e.g. "machine meanwhile (42 s): load average 0.31 -> 1.07 on
 * 2 CPUs, steal 0.0% of CPU time, other processes 0.12 CPUs"; nothing
 * when nothing was read. */
void tb_noise_print(FILE *f, const char *what, const tb_noise *n);

/* {"seconds", "cpus", "load_start", "load_end", "steal",
 * "other_cpus"}; NULL on allocation failure. */
cJSON *tb_noise_json(const tb_noise *n);

#endif
