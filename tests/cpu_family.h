/* What the op-family tests (test_attn.c, test_einsum.c, test_embed.c,
 * test_norm.c, test_optim.c) share to run the cpu backend's rows: the
 * backend, the number of ISA levels this build and machine run, an
 * instance at a level and thread count, and its kernel launches.
 * Include after cmocka.h. */
#ifndef TB_TESTS_CPU_FAMILY_H
#define TB_TESTS_CPU_FAMILY_H

#include <stdint.h>

#include "backends/backend.h"
#include "backends/cpu/isa.h"
#include "backends/cpu/kernels.h"

extern const tb_backend tb_backend_cpu;
static const tb_backend *const B = &tb_backend_cpu;

/* Levels 0 .. n_levels() - 1 run here (built and supported). */
static inline int n_levels(void)
{
    int max = tb_cpu_isa_max();
    while (max > 0 && !tb_cpu_isa_built(max))
        max--;
    return max + 1;
}

/* A cpu instance at level `isa` with `threads` (1 or 2) threads. */
static inline void *cpu_create(int isa, int threads)
{
    const char *vals[2] = {tb_cpu_isa_name(isa), threads == 1 ? "1" : "2"};
    void *ctx = NULL;
    char err[256];
    assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
    return ctx;
}

/* Kernel launches of instance ctx so far. */
static inline uint64_t launches(void *ctx)
{
    tb_backend_counters k;
    tb_backend_counters_read(B, ctx, &k);
    return k.kernel_launches;
}

#endif
