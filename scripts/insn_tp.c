/* insn_tp: the reciprocal throughput of the 512-bit instructions whose
 * cost llvm-mca 19's znver4 model states wrongly for this project's Zen 4
 * machines (issue 34: the compute bounds that scripts/kernel_bounds.py
 * derives from that model in docs/perf-data/compute-bounds.json are too
 * low where a loop is made of the too-cheap ones, and too high where of
 * the too-dear ones; hand-stated entries cite these figures).  Measured
 * on the EPYC Zen 4 VM, 2026-11-29: zmm shifts 1.0 cycles (the model:
 * 0.5), vcvtps2ph 1.33 (1.0), vcvtph2ps 1.33 (2.0), vcvtneps2bf16 1.33
 * (2.0), vpmovzxwd 1.0 (2.0); vpmullq, vpmuludq, vpmulld, vfmadd231ps,
 * vpxorq as the model (1.0, 1.0, 1.0, 1.0, 0.5); and the conversions
 * share their pipes (vcvtph2ps + vcvtps2ph: 2.7 cycles a pair).  Also
 * (the rows of mix_tp.c's -DMIX_TP_ROWS mode): vcvtpd2ps and vcvtps2pd
 * 1.33 (the model 2.0), vcvtqq2pd 1.0 (2.0), vrsqrt14pd, vpermt2pd,
 * vpermt2w, vfmadd231pd 1.0 (as the model); 2026-11-30: vgetmantps,
 * vgetexpps 1.0 (as the model); vsqrtpd zmm 16.0, and one vsqrtpd with
 * 16 independent FMAs 18 cycles (the divider takes about 2 cycles of
 * an FMA pipe; the model holds zn4fp1 for 18).
 *
 *   cc -O2 -o /tmp/insn_tp scripts/insn_tp.c
 *   /tmp/insn_tp [rounds]
 *
 * Not a test (tests/meson.build only builds it; it needs AVX-512 and
 * AVX512_BF16 to run).  Each loop step runs 8 copies of an instruction
 * (or of a pair) on the same sources into 8 destinations: no dependency
 * between them, so the step's time per copy is the reciprocal
 * throughput; the core clock comes from a chain of dependent integer
 * adds run just before (tp_clock.h), so the figures are in core cycles.
 * Each figure is the smallest of ROUNDS rounds (default 41), the clock
 * the largest.  The instructions are written in assembly, so the
 * compiler needs no -m flags; the assembler knows them all. */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tp_clock.h" /* now, ITERS, chain */

/* 8 copies of INSN with destinations zmm2..zmm9 (S: the text before the
 * destination register, E: after it, e.g. "%%ymm" for a narrowing) */
#define C8(S, D, E)                                                       \
    S D "2" E "\n\t" S D "3" E "\n\t" S D "4" E "\n\t" S D "5" E "\n\t"   \
    S D "6" E "\n\t" S D "7" E "\n\t" S D "8" E "\n\t" S D "9" E "\n\t"
#define CLOBBER "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9"
#define LOOP(NAME, BODY)                                                  \
    static double NAME(void)                                              \
    {                                                                     \
        double t0 = now();                                                \
        for (long i = 0; i < ITERS; i++)                                  \
            __asm__ volatile(BODY ::: CLOBBER);                           \
        return now() - t0;                                                \
    }

LOOP(sll_z, C8("vpslld $16, %%zmm1, ", "%%zmm", ""))
LOOP(srlq_z, C8("vpsrlq $11, %%zmm1, ", "%%zmm", ""))
LOOP(xorq_z, C8("vpxorq %%zmm1, %%zmm0, ", "%%zmm", ""))
LOOP(mullq_z, C8("vpmullq %%zmm1, %%zmm0, ", "%%zmm", ""))
LOOP(muludq_z, C8("vpmuludq %%zmm1, %%zmm0, ", "%%zmm", ""))
LOOP(mulld_z, C8("vpmulld %%zmm1, %%zmm0, ", "%%zmm", ""))
LOOP(fma_z, C8("vfmadd231ps %%zmm1, %%zmm0, ", "%%zmm", ""))
LOOP(ph2ps_z, C8("vcvtph2ps %%ymm1, ", "%%zmm", ""))
LOOP(ps2ph_z, C8("vcvtps2ph $8, %%zmm1, ", "%%ymm", ""))
LOOP(ne_z, C8("vcvtneps2bf16 %%zmm1, ", "%%ymm", ""))
LOOP(ne2_z, C8("vcvtne2ps2bf16 %%zmm1, %%zmm0, ", "%%zmm", ""))
LOOP(zxwd_z, C8("vpmovzxwd %%ymm1, ", "%%zmm", ""))
LOOP(movdw_z, C8("vpmovdw %%zmm1, ", "%%ymm", ""))
LOOP(permps_z, C8("vpermps %%zmm1, %%zmm0, ", "%%zmm", ""))
LOOP(perm2ps_z, C8("vpermt2ps %%zmm1, %%zmm0, ", "%%zmm", ""))
LOOP(getmant_z, C8("vgetmantps $1, %%zmm1, ", "%%zmm", ""))
LOOP(getexp_z, C8("vgetexpps %%zmm1, ", "%%zmm", ""))
/* rand_normal's and the f64 rows' (mix_tp.c's row loops) */
LOOP(pd2ps_z, C8("vcvtpd2ps %%zmm1, ", "%%ymm", ""))
LOOP(qq2pd_z, C8("vcvtqq2pd %%zmm1, ", "%%zmm", ""))
LOOP(rsqrt14pd_z, C8("vrsqrt14pd %%zmm1, ", "%%zmm", ""))
LOOP(perm2pd_z, C8("vpermt2pd %%zmm1, %%zmm0, ", "%%zmm", ""))
LOOP(perm2w_z, C8("vpermt2w %%zmm1, %%zmm0, ", "%%zmm", ""))
LOOP(fmapd_z, C8("vfmadd231pd %%zmm1, %%zmm0, ", "%%zmm", ""))
/* lbfgs's and lamb's f32 sums in double (optim_red_simd.h) */
LOOP(ps2pd_z, C8("vcvtps2pd %%ymm1, ", "%%zmm", ""))
/* pairs: 8 of each, interleaved */
LOOP(cvt_pair_z, C8("vcvtph2ps %%ymm1, %%zmm2\n\tvcvtps2ph $8, %%zmm0, ",
                    "%%ymm", ""))
LOOP(zx_ne_pair_z, C8("vpmovzxwd %%ymm1, %%zmm2\n\tvcvtneps2bf16 "
                      "%%zmm0, ", "%%ymm", ""))

/* rand_normal's root (rand_simd_impl.h's rs_root): does vsqrtpd zmm hold
 * an FMA pipe while the divider works?  A step of one vsqrtpd and 16
 * independent-chain FMAs: 16 cycles if the divider runs beside the two
 * FMA pipes, about 2x that if it holds one of them as llvm-mca's znver4
 * model says (zn4fp1 18 cycles a vsqrtpd) */
static double sqrt_fma(void)
{
    double t0 = now();
    for (long i = 0; i < ITERS; i++)
        __asm__ volatile("vsqrtpd %%zmm1, %%zmm10\n\t"
                         C8("vfmadd231pd %%zmm1, %%zmm0, ", "%%zmm", "")
                         C8("vfmadd231pd %%zmm1, %%zmm0, ", "%%zmm", "")
                         ::: CLOBBER, "xmm10");
    return now() - t0;
}
LOOP(sqrtpd_z, C8("vsqrtpd %%zmm1, ", "%%zmm", ""))

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 41;
    static const struct {
        const char *name;
        double (*fn)(void);
    } t[] = {
        {"vpslld zmm, imm", sll_z},
        {"vpsrlq zmm, imm", srlq_z},
        {"vpxorq zmm", xorq_z},
        {"vpmullq zmm", mullq_z},
        {"vpmuludq zmm", muludq_z},
        {"vpmulld zmm", mulld_z},
        {"vfmadd231ps zmm", fma_z},
        {"vcvtph2ps zmm <- ymm", ph2ps_z},
        {"vcvtps2ph ymm <- zmm", ps2ph_z},
        {"vcvtneps2bf16 ymm <- zmm", ne_z},
        {"vcvtne2ps2bf16 zmm", ne2_z},
        {"vpmovzxwd zmm <- ymm", zxwd_z},
        {"vpmovdw ymm <- zmm", movdw_z},
        {"vpermps zmm", permps_z},
        {"vpermt2ps zmm", perm2ps_z},
        {"vgetmantps zmm", getmant_z},
        {"vgetexpps zmm", getexp_z},
        {"vcvtpd2ps ymm <- zmm", pd2ps_z},
        {"vcvtqq2pd zmm", qq2pd_z},
        {"vrsqrt14pd zmm", rsqrt14pd_z},
        {"vpermt2pd zmm", perm2pd_z},
        {"vpermt2w zmm", perm2w_z},
        {"vfmadd231pd zmm", fmapd_z},
        {"vcvtps2pd zmm <- ymm", ps2pd_z},
        {"vsqrtpd zmm", sqrtpd_z},
        {"vsqrtpd + 16 vfmadd231pd zmm (/ 8)", sqrt_fma},
        {"vcvtph2ps + vcvtps2ph (pair)", cvt_pair_z},
        {"vpmovzxwd + vcvtneps2bf16 (pair)", zx_ne_pair_z},
    };
    double clk = 0;
    for (int r = 0; r < rounds; r++) {
        double c = (double)ITERS * 8 / chain();
        clk = c > clk ? c : clk;
    }
    printf("core clock (dependent adds): %.3f GHz\n", clk * 1e-9);
    printf("%-36s %10s\n", "instruction", "cycles");
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        double best = 1e30;
        for (int r = 0; r < rounds; r++) {
            double s = t[i].fn();
            best = s < best ? s : best;
        }
        printf("%-36s %10.2f\n", t[i].name,
               best * clk / ((double)ITERS * 8));
    }
    return 0;
}
