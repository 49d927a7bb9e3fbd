/*
 * Run-time x86 ISA detection for the cpu backend.
 *
 * One process-wide ISA level, chosen once: the best level the CPU *and*
 * the OS support (cpuid feature bits plus xgetbv, so YMM/ZMM state is
 * really saved across context switches), lowered by the environment
 * variable TBENCH_ISA=scalar|avx2|avx512|avx512bf16 and by
 * tb_cpu_isa_set_mask().  Kernel tables (best-first, see kernels.h) are
 * filled by climbing this ladder: the portable C version first, then
 * AVX2, then AVX-512, then AVX-512 with BF16 and VNNI (a level of the
 * rows that need those instructions: the 16-bit dot products of
 * vdpbf16ps and the u8 x s8 ones of vpdpbusd; every other row and table
 * of that level is AVX-512's).
 *
 * The level values are shared with other cpu-backend components (the
 * GEMM micro-kernels in gemm/ take an `int isa` with these values), so
 * they are fixed and ordered: a higher value implies every lower one.
 */
#ifndef TB_BACKENDS_CPU_ISA_H
#define TB_BACKENDS_CPU_ISA_H

#include <stdint.h>

/* Ordered ISA levels. Each level implies all the lower ones. */
enum tb_cpu_isa {
    TB_ISA_SCALAR = 0, /* portable C (the compiler may still use SSE2) */
    TB_ISA_AVX2 = 1,   /* AVX2 + FMA (+ F16C), YMM state enabled by OS */
    TB_ISA_AVX512 = 2, /* AVX-512 F, BW, DQ, VL, ZMM/opmask state enabled */
    /* AVX-512 plus AVX512_BF16 and AVX512_VNNI (Cooper Lake, Sapphire
     * Rapids and later Xeons, AMD Zen 4 and later): every CPU with
     * AVX512_BF16 also has VNNI, so one level holds both */
    TB_ISA_AVX512BF16 = 3,
    TB_ISA_COUNT = 4
};

/* Whether the CPU is an AMD one (cpuid vendor "AuthenticAMD"): a loop
 * may pick its vector width by it where the two vendors' cores differ
 * (kernels_avx512.c's in-place binary loops, f64_simd_impl.h's simple
 * unary ones; f16's 256-bit halves in var_simd.h, half_red_simd.h and
 * half_part_simd.h, AMD only).  Asked once (cpuid leaves a VM: microseconds), then
 * cached, so a kernel may call it per call.  0 off x86. */
int tb_cpu_isa_amd(void);
/* For tests: answer v (0 or 1) from now on, so that a CPU of the other
 * vendor runs the AMD loops too; -1 asks the CPU again. */
void tb_cpu_isa_amd_set(int v);

/* From this many bytes an array, an AVX-512 streaming loop on AMD uses
 * 256-bit loads and stores (the arrays have left the L2: two of them
 * fill Zen 4's 1 MiB): Zen 4 splits a 512-bit operation into two
 * 256-bit halves, and its L3 streams ymm loads and stores faster (a +=
 * b over 8 MiB f64 arrays 182-189 us against 212-221 with zmm, o = -a
 * 241-265 against 259-289; /tmp microbenchmarks, best of 80 rounds,
 * alternated, 2026-11-30 and 12-01).  Below it the zmm loop's twice the
 * data per instruction wins (add_ 4096 f32 224 ns against 239). */
#define TB_CPU_AMD_YMM_MIN_BYTES (512.0 * 1024)
/* Whether a streaming loop over `bytes` an array takes its 256-bit form
 * (from TB_CPU_AMD_YMM_MIN_BYTES on an AMD CPU). */
static inline int tb_cpu_amd_ymm(double bytes)
{
    return bytes >= TB_CPU_AMD_YMM_MIN_BYTES && tb_cpu_isa_amd();
}

/* Raw feature bits, reported by tb_cpu_isa_flags(). */
enum tb_cpu_isa_flag {
    TB_CPU_FLAG_SSE41 = 1u << 0,
    TB_CPU_FLAG_AVX2 = 1u << 1,     /* AVX2, FMA, F16C and OS YMM support */
    TB_CPU_FLAG_AVX512 = 1u << 2,   /* F+BW+DQ+VL and OS ZMM support */
    TB_CPU_FLAG_AVX512BF16 = 1u << 3, /* AVX512 + AVX512_BF16 + AVX512_VNNI */
};

/*
 * Detect the CPU's best level, ignoring TBENCH_ISA and any mask.  Read
 * once (cpuid and xgetbv may trap to the hypervisor in a VM) and cached
 * for the process; on non-x86 TB_ISA_SCALAR.  The one detector of
 * tbench: the kernels, the native GEMM and the peak loops all ask it.
 */
int tb_cpu_isa_detect(void);

/*
 * Raw flag word (TB_CPU_FLAG_*) of what the machine supports, ignoring
 * TBENCH_ISA and masks. Used to report e.g. SSE4.1 in the environment.
 */
unsigned tb_cpu_isa_flags(void);

/*
 * The level kernels should use: min(detect, TBENCH_ISA, mask). Computed
 * on first call (thread-safe) and cached; tb_cpu_isa_set_mask() changes
 * it. Never higher than tb_cpu_isa_detect().
 */
int tb_cpu_isa_max(void);

/*
 * Cap the level at `max_isa` (a tb_cpu_isa value; out-of-range values
 * are clamped). Intended for tests (checkasm) and the cpu backend's
 * `isa` axis; the result is still limited by detection and TBENCH_ISA.
 * Returns the new effective level. Not thread-safe against concurrent
 * kernel-table initialisation: call it before running kernels.
 */
int tb_cpu_isa_set_mask(int max_isa);

/*
 * Parse "scalar" / "avx2" / "avx512" / "avx512bf16" into a level. Returns the level,
 * or -1 if `name` is not one of those (NULL included).
 */
int tb_cpu_isa_parse(const char *name);

/* Lower-case name of a level ("scalar", "avx2", "avx512", "avx512bf16";
 * "?" if bad). */
const char *tb_cpu_isa_name(int isa);

/*
 * TBENCH_ISA as the environment holds it (owned by the environment), or
 * NULL when unset or empty.  The one place tbench reads the variable;
 * the rest of the program learns it through the backend's `host` slot.
 */
const char *tb_cpu_isa_env(void);

/*
 * Did TBENCH_ISA hold a value we could not parse? Returns the bad string
 * (owned by the environment) or NULL. The backend reports it once as a
 * one-line error instead of silently ignoring it.
 */
const char *tb_cpu_isa_env_error(void);

/*
 * The best level at or below `isa` that has its own code in a table
 * built per level up to `top` (a table with no avx512bf16 entries passes
 * TB_ISA_AVX512: the avx512bf16 level then uses AVX-512's).
 */
static inline int tb_cpu_isa_clamp(int isa, int top)
{
    return isa > top ? top : isa;
}

#endif /* TB_BACKENDS_CPU_ISA_H */
