/* The clock of the throughput scripts (divsqrt_tp.c, mix_tp.c,
 * insn_tp.c): wall time, and the core clock from a chain of dependent
 * integer adds (1 cycle each), so that a loop's time turns into core
 * cycles on the machine it ran on.  Each script defines _POSIX_C_SOURCE
 * before its includes. */
#ifndef TB_SCRIPTS_TP_CLOCK_H
#define TB_SCRIPTS_TP_CLOCK_H

#include <stdint.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define ITERS 20000L

/* seconds for ITERS x 8 dependent adds of a register (as tbench peak's
 * clock, src/harness/peak.c): an immediate's chain ran 4x the clock on
 * the Xeon of family 6 model 207 (11.96 "GHz" against 2.98 with a
 * register, 2026-12-01): its renamer folds add-immediate chains */
static double chain(void)
{
    uint64_t a = 1, one = 1;
    double t0 = now();
    for (long i = 0; i < ITERS; i++)
        __asm__ volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                         "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                         "add %1, %0\n\tadd %1, %0"
                         : "+r"(a)
                         : "r"(one));
    return now() - t0;
}

#endif /* TB_SCRIPTS_TP_CLOCK_H */
