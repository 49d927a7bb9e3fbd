/* divsqrt_tp: the reciprocal throughput of this machine's divide and
 * square-root unit, measured (issue 34: the f64 division and square-root
 * rows and rsqrt f32 are bound by it, and their compute bounds in
 * docs/perf-data/compute-bounds.json are stated from these figures).
 *
 *   cc -O2 -mavx512f -mavx512vl -o /tmp/divsqrt_tp scripts/divsqrt_tp.c
 *   /tmp/divsqrt_tp [rounds]
 *
 * Not a test (tests/meson.build only builds it; it needs AVX-512 to
 * run).  Each
 * instruction runs in a loop of 8 independent copies (the same two
 * source registers, 8 destinations: no dependency between them), so the
 * loop's time per instruction is its reciprocal throughput; the core
 * clock comes from a chain of dependent integer adds (1 cycle each) run
 * just before, so the figures are in core cycles.  Each figure is the
 * smallest of ROUNDS rounds (default 41: short rounds, so that the smallest is one no other process interrupted), the clock the largest; the
 * operands are ordinary normal numbers (1.2345 / 3.14159, sqrt 2.5). */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tp_clock.h" /* now, ITERS, chain */

/* 8 independent copies of INSN with operands %%REG1 (divisor) and
 * %%REG0 (dividend), destinations REG2..REG9 */
#define BODY(INSN, R)                                                     \
    INSN " %%" R "1, %%" R "0, %%" R "2\n\t"                              \
    INSN " %%" R "1, %%" R "0, %%" R "3\n\t"                              \
    INSN " %%" R "1, %%" R "0, %%" R "4\n\t"                              \
    INSN " %%" R "1, %%" R "0, %%" R "5\n\t"                              \
    INSN " %%" R "1, %%" R "0, %%" R "6\n\t"                              \
    INSN " %%" R "1, %%" R "0, %%" R "7\n\t"                              \
    INSN " %%" R "1, %%" R "0, %%" R "8\n\t"                              \
    INSN " %%" R "1, %%" R "0, %%" R "9\n\t"
#define SBODY(INSN, R)                                                    \
    INSN " %%" R "1, %%" R "2\n\t" INSN " %%" R "1, %%" R "3\n\t"         \
    INSN " %%" R "1, %%" R "4\n\t" INSN " %%" R "1, %%" R "5\n\t"         \
    INSN " %%" R "1, %%" R "6\n\t" INSN " %%" R "1, %%" R "7\n\t"         \
    INSN " %%" R "1, %%" R "8\n\t" INSN " %%" R "1, %%" R "9\n\t"
#define CLOB_Z "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9"

#define LOOP(NAME, SETUP, TEXT)                                           \
    static double NAME(void)                                              \
    {                                                                     \
        __asm__ volatile(SETUP ::: "xmm0", "xmm1");                       \
        double t0 = now();                                                \
        for (long i = 0; i < ITERS; i++)                                  \
            __asm__ volatile(TEXT ::: CLOB_Z);                            \
        return now() - t0;                                                \
    }

/* xmm0 = 1.2345 (dividend), xmm1 = 3.14159 (divisor) or 2.5 (sqrt) */
#define SET_PD(A, B)                                                      \
    "movabs $" A ", %%rax\n\tvmovq %%rax, %%xmm0\n\t"                     \
    "vpbroadcastq %%xmm0, %%zmm0\n\t"                                     \
    "movabs $" B ", %%rax\n\tvmovq %%rax, %%xmm1\n\t"                     \
    "vpbroadcastq %%xmm1, %%zmm1\n\t"
#define SET_PS(A, B)                                                      \
    "mov $" A ", %%eax\n\tvmovd %%eax, %%xmm0\n\t"                        \
    "vpbroadcastd %%xmm0, %%zmm0\n\t"                                     \
    "mov $" B ", %%eax\n\tvmovd %%eax, %%xmm1\n\t"                        \
    "vpbroadcastd %%xmm1, %%zmm1\n\t"
/* 1.2345, 3.14159, 2.5 */
#define DA "0x3ff3c083126e978d"
#define DB "0x400921f9f01b866e"
#define DS "0x4004000000000000"
#define FA "0x3f9e0419"
#define FB "0x40490fd0"
#define FS "0x40200000"

LOOP(divpd_z, SET_PD(DA, DB), BODY("vdivpd", "zmm"))
LOOP(divpd_y, SET_PD(DA, DB), BODY("vdivpd", "ymm"))
LOOP(sqrtpd_z, SET_PD(DA, DS), SBODY("vsqrtpd", "zmm"))
LOOP(sqrtpd_y, SET_PD(DA, DS), SBODY("vsqrtpd", "ymm"))
LOOP(divps_z, SET_PS(FA, FB), BODY("vdivps", "zmm"))
LOOP(divps_y, SET_PS(FA, FB), BODY("vdivps", "ymm"))
LOOP(sqrtps_z, SET_PS(FA, FS), SBODY("vsqrtps", "zmm"))
LOOP(sqrtps_y, SET_PS(FA, FS), SBODY("vsqrtps", "ymm"))
/* one vsqrtpd and one vdivpd a pair, independent (rsqrt f64's mix) */
LOOP(sqdiv_z, SET_PD(DA, DS),
     "vsqrtpd %%zmm1, %%zmm2\n\tvdivpd %%zmm1, %%zmm0, %%zmm3\n\t"
     "vsqrtpd %%zmm1, %%zmm4\n\tvdivpd %%zmm1, %%zmm0, %%zmm5\n\t"
     "vsqrtpd %%zmm1, %%zmm6\n\tvdivpd %%zmm1, %%zmm0, %%zmm7\n\t"
     "vsqrtpd %%zmm1, %%zmm8\n\tvdivpd %%zmm1, %%zmm0, %%zmm9\n\t")
/* one vsqrtpd and 16 vfmadd231pd zmm (7 other registers, chains of 2
 * or 3 FMAs): does the divider's work overlap the FMA units'?  (16
 * cycles: fully; 32: not at all) */
#define FMA8                                                              \
    "vfmadd231pd %%zmm0, %%zmm0, %%zmm3\n\tvfmadd231pd %%zmm0, %%zmm0, %%zmm4\n\t" \
    "vfmadd231pd %%zmm0, %%zmm0, %%zmm5\n\tvfmadd231pd %%zmm0, %%zmm0, %%zmm6\n\t" \
    "vfmadd231pd %%zmm0, %%zmm0, %%zmm7\n\tvfmadd231pd %%zmm0, %%zmm0, %%zmm8\n\t" \
    "vfmadd231pd %%zmm0, %%zmm0, %%zmm9\n\tvfmadd231pd %%zmm0, %%zmm0, %%zmm3\n\t"
LOOP(sqfma_z, SET_PD(DA, DS), "vsqrtpd %%zmm1, %%zmm2\n\t" FMA8 FMA8)
/* 16 FMAs alone: the FMA units' time for them */
LOOP(fma16_z, SET_PD(DA, DS), FMA8 FMA8)

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 41;
    static const struct {
        const char *name;
        double (*fn)(void);
        int per; /* instructions a loop step */
        int lanes;
    } t[] = {
        {"vdivpd zmm", divpd_z, 8, 8},   {"vdivpd ymm", divpd_y, 8, 4},
        {"vsqrtpd zmm", sqrtpd_z, 8, 8}, {"vsqrtpd ymm", sqrtpd_y, 8, 4},
        {"vdivps zmm", divps_z, 8, 16},  {"vdivps ymm", divps_y, 8, 8},
        {"vsqrtps zmm", sqrtps_z, 8, 16}, {"vsqrtps ymm", sqrtps_y, 8, 8},
        {"vsqrtpd+vdivpd zmm (pair)", sqdiv_z, 4, 8},
        {"vsqrtpd + 16 vfmadd231pd zmm", sqfma_z, 1, 8},
        {"16 vfmadd231pd zmm", fma16_z, 1, 8},
    };
    double clk = 0;
    for (int r = 0; r < rounds; r++) {
        double c = (double)ITERS * 8 / chain();
        clk = c > clk ? c : clk;
    }
    printf("core clock (dependent adds): %.3f GHz\n", clk * 1e-9);
    printf("%-30s %10s %12s\n", "instruction", "cycles", "cycles/elem");
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        double best = 1e30;
        for (int r = 0; r < rounds; r++) {
            double s = t[i].fn();
            best = s < best ? s : best;
        }
        double cyc = best * clk / ((double)ITERS * t[i].per);
        printf("%-30s %10.2f %12.3f\n", t[i].name, cyc, cyc / t[i].lanes);
    }
    return 0;
}
