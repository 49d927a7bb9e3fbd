/*
 * Run-time x86 ISA detection (see isa.h).
 *
 * Model: dav1d src/x86/cpu.c.  A feature counts only when the CPU
 * reports it *and* the OS saves the register state it needs (XCR0 read
 * with xgetbv): a hypervisor or kernel may hide AVX-512 state even on a
 * CPU that has the instructions, and using them then faults.
 */
#include "isa.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define TB_ISA_X86 1
#else
#define TB_ISA_X86 0
#endif

static const char *const isa_names[TB_ISA_COUNT] = {"scalar", "avx2",
                                                    "avx512", "avx512bf16"};

#if TB_ISA_X86
/* XCR0 (the OS-enabled state components); 0 without OSXSAVE. */
static uint64_t isa_xcr0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}
#endif

/* -1: not asked yet (threads that race both ask and store the same) */
static atomic_int isa_amd_cached = -1;

void tb_cpu_isa_amd_set(int v)
{
    atomic_store_explicit(&isa_amd_cached, v < 0 ? -1 : v != 0,
                          memory_order_relaxed);
}

int tb_cpu_isa_amd(void)
{
#if TB_ISA_X86
    int v = atomic_load_explicit(&isa_amd_cached, memory_order_relaxed);
    if (v >= 0)
        return v;
    unsigned a = 0, b = 0, c = 0, d = 0;
    /* "AuthenticAMD" in ebx, edx, ecx */
    v = __get_cpuid(0, &a, &b, &c, &d) && b == 0x68747541u &&
        d == 0x69746e65u && c == 0x444d4163u;
    atomic_store_explicit(&isa_amd_cached, v, memory_order_relaxed);
    return v;
#else
    return 0;
#endif
}

unsigned tb_cpu_isa_flags(void)
{
    unsigned flags = 0;
#if TB_ISA_X86
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return 0;
    const unsigned max_leaf = a;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    const unsigned ecx1 = c;
    if (ecx1 & (1u << 19))
        flags |= TB_CPU_FLAG_SSE41;
    /* AVX needs OSXSAVE (bit 27) before xgetbv may even be executed. */
    const int osxsave = (ecx1 >> 27) & 1;
    const int avx = (ecx1 >> 28) & 1, fma = (ecx1 >> 12) & 1;
    const int f16c = (ecx1 >> 29) & 1; /* the bf16/f16 rows' conversions */
    if (!osxsave || !avx || max_leaf < 7)
        return flags;
    const uint64_t xcr0 = isa_xcr0();
    /* XMM (bit 1) and YMM (bit 2) state. */
    if ((xcr0 & 0x6) != 0x6)
        return flags;
    __cpuid_count(7, 0, a, b, c, d);
    const unsigned ebx7 = b;
    if (fma && f16c && (ebx7 & (1u << 5)))
        flags |= TB_CPU_FLAG_AVX2;
    /* Opmask (5), ZMM_Hi256 (6) and Hi16_ZMM (7) state as well. */
    const unsigned need512 = (1u << 16) | (1u << 17) | (1u << 30) |
                             (1u << 31); /* F, DQ, BW, VL */
    if ((flags & TB_CPU_FLAG_AVX2) && (xcr0 & 0xe6) == 0xe6 &&
        (ebx7 & need512) == need512)
        flags |= TB_CPU_FLAG_AVX512;
    /* AVX512_VNNI: leaf 7 ECX bit 11; AVX512_BF16: leaf 7 sub-leaf 1 EAX
     * bit 5 (sub-leaf 1 exists when sub-leaf 0's EAX is at least 1).
     * No further state: they use the ZMM and opmask registers. */
    const unsigned max_sub7 = a, ecx7 = c;
    if ((flags & TB_CPU_FLAG_AVX512) && (ecx7 & (1u << 11)) &&
        max_sub7 >= 1) {
        __cpuid_count(7, 1, a, b, c, d);
        if (a & (1u << 5))
            flags |= TB_CPU_FLAG_AVX512BF16;
    }
#endif
    return flags;
}

/* -1: not computed yet.  Racing first calls compute the same values, so
 * relaxed atomics suffice (no lock, no pthread_once in a hot lookup). */
static _Atomic int isa_detected = -1;
static _Atomic int isa_env_cap = -1;
static _Atomic int isa_mask = TB_ISA_COUNT - 1;

int tb_cpu_isa_detect(void)
{
    int v = atomic_load_explicit(&isa_detected, memory_order_relaxed);
    if (v >= 0)
        return v;
    unsigned f = tb_cpu_isa_flags();
    v = f & TB_CPU_FLAG_AVX512BF16 ? TB_ISA_AVX512BF16
        : f & TB_CPU_FLAG_AVX512 ? TB_ISA_AVX512
        : f & TB_CPU_FLAG_AVX2 ? TB_ISA_AVX2
                               : TB_ISA_SCALAR;
    atomic_store_explicit(&isa_detected, v, memory_order_relaxed);
    return v;
}

int tb_cpu_isa_parse(const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < TB_ISA_COUNT; i++)
        if (strcmp(name, isa_names[i]) == 0)
            return i;
    return -1;
}

const char *tb_cpu_isa_name(int isa)
{
    return isa >= 0 && isa < TB_ISA_COUNT ? isa_names[isa] : "?";
}

const char *tb_cpu_isa_env(void)
{
    const char *s = getenv("TBENCH_ISA");
    return s && *s ? s : NULL;
}

/* TBENCH_ISA as a cap: unset, empty or "auto" -> no cap; a bad value is
 * reported by tb_cpu_isa_env_error() and also caps nothing. */
static int isa_env_level(void)
{
    int v = atomic_load_explicit(&isa_env_cap, memory_order_relaxed);
    if (v >= 0)
        return v;
    const char *s = tb_cpu_isa_env();
    v = TB_ISA_COUNT - 1;
    if (s && strcmp(s, "auto") != 0) {
        int p = tb_cpu_isa_parse(s);
        if (p >= 0)
            v = p;
    }
    atomic_store_explicit(&isa_env_cap, v, memory_order_relaxed);
    return v;
}

const char *tb_cpu_isa_env_error(void)
{
    const char *s = tb_cpu_isa_env();
    if (!s || strcmp(s, "auto") == 0 || tb_cpu_isa_parse(s) >= 0)
        return NULL;
    return s;
}

int tb_cpu_isa_max(void)
{
    int v = tb_cpu_isa_detect();
    int e = isa_env_level();
    int m = atomic_load_explicit(&isa_mask, memory_order_relaxed);
    if (e < v)
        v = e;
    if (m < v)
        v = m;
    return v;
}

int tb_cpu_isa_set_mask(int max_isa)
{
    if (max_isa < 0)
        max_isa = 0;
    if (max_isa > TB_ISA_COUNT - 1)
        max_isa = TB_ISA_COUNT - 1;
    atomic_store_explicit(&isa_mask, max_isa, memory_order_relaxed);
    return tb_cpu_isa_max();
}
