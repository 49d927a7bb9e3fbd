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

/* seconds for ITERS x 8 dependent adds.  The step is a register, as in
 * src/harness/peak.c: Intel's Golden Cove-class cores (this project's
 * Emerald Rapids VM) fold a chain of adds of an immediate at rename, so
 * "add $1" ran 4 a cycle there ("11.97 GHz" on a 2.94 GHz core). */
static double chain(void)
{
    uint64_t a = 1, step = 1;
    double t0 = now();
    for (long i = 0; i < ITERS; i++)
        __asm__ volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                         "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                         "add %1, %0\n\tadd %1, %0"
                         : "+r"(a)
                         : "r"(step));
    return now() - t0;
}

#endif /* TB_SCRIPTS_TP_CLOCK_H */
