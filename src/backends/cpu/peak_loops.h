/* The loops `tbench peak` times on the host CPU, per SIMD level: four
 * memory bandwidth kernels, the FMA chains and, at avx512bf16, the int8
 * dot-product chains of vpdpbusd (harness/peak.c measures them;
 * docs/FORMAT.md "peaks").
 *
 * A public header of the cpu backend: the harness includes it, never
 * isa.h.  Like every kernel of the backend, each level's loops are built
 * in that level's library with its -m flags only (peak_c.c portable,
 * peak_avx2.c, peak_avx512.c, peak_avx512bf16.c) and handed out only
 * where isa.c's detector says that the CPU and the OS run them
 * (TBENCH_ISA does not cap them: the peaks describe the machine). */
#ifndef TB_BACKENDS_CPU_PEAK_LOOPS_H
#define TB_BACKENDS_CPU_PEAK_LOOPS_H

#include <stddef.h>

#include "../../ops/tensor.h"

/* Array lengths of the bandwidth kernels are multiples of this (their
 * widest unrolled step). */
#define TB_PEAK_ELEM_STEP 64
/* Independent accumulator chains of an FMA loop: 12 cover a 4-cycle FMA
 * latency on 2 FMA pipes with room to spare. */
#define TB_PEAK_NACC 12
/* Levels of the ladder (0: the portable build's baseline). */
#define TB_PEAK_LEVELS 4

/* a, b, c: arrays of n doubles (n a multiple of TB_PEAK_ELEM_STEP,
 * 64-byte aligned).  copy: a = b; add: a = b + c; triad: a = b + s * c;
 * read: returns the sum of a; update: a = s * b - a, in place, as the
 * in-place ops and optimizers write an input (no third array, so no
 * write-allocate of one; the values alternate, never grow).  The others
 * return a[0] so that no store is provably dead. */
typedef double (*tb_peak_bw_fn)(double *restrict a, const double *restrict b,
                                const double *restrict c, size_t n,
                                double s);
enum {
    TB_PEAK_COPY,
    TB_PEAK_ADD,
    TB_PEAK_TRIAD,
    TB_PEAK_READ,
    TB_PEAK_UPDATE,
    TB_PEAK_NBW
};

/* Runs `iters` iterations of TB_PEAK_NACC independent acc = acc * m + c
 * chains and returns the sum of the accumulators (so nothing is dead
 * code).  m and c must be run-time values: with compile-time constants
 * a compiler may prove the chain stationary and fold the loop away (GCC
 * 12 does, for f32).  m < 1 and c small keep every value near 1: no
 * overflow, no denormal. */
typedef double (*tb_peak_fma_fn)(long iters, double m, double c);

/* A dot-product roof of a level: fn(iters, m, c) runs iters iterations
 * of TB_PEAK_NACC independent chains of one dot-product instruction
 * (avx512bf16: vdpbf16ps, 16 f32 lanes each adding 2 bf16 products;
 * vpdpbusd, 16 int32 lanes each adding 4 u8 x s8 products, dtype
 * "int8", a type the tensors do not have: 2 ops per multiply-add),
 * flops_per_iter its FLOPs (2 per multiply-add); recorded as a flops
 * entry of the level with dtype `dtype`, the element type multiplied. */
typedef struct tb_peak_dot {
    const char *dtype; /* NULL: no loop */
    tb_peak_fma_fn fn;
    double flops_per_iter;
} tb_peak_dot;
/* Dot loops a level may have (avx512bf16: bf16 and int8). */
#define TB_PEAK_NDOT 2

typedef struct tb_peak_loops {
    const char *isa; /* the level's name: "scalar", "avx2", "avx512",
                      * "avx512bf16" */
    tb_peak_bw_fn bw[TB_PEAK_NBW]; /* NULL: the level has none of its own */
    tb_peak_fma_fn fma[TB_DTYPE_COUNT];
    double fma_flops_per_iter[TB_DTYPE_COUNT]; /* chains x lanes x 2 */
    tb_peak_dot dot[TB_PEAK_NDOT]; /* the level's dot-product loops */
} tb_peak_loops;

/* The loops of level i (0 <= i < TB_PEAK_LEVELS, lowest first), or NULL
 * when this CPU, its OS or this build lacks the level.  Static storage. */
const tb_peak_loops *tb_cpu_peak_loops(int i);

#endif
