/* The blas backend's environment (blas_env.h): what OpenBLAS reports
 * about itself, and whether the kernels it picked fit this CPU.  Debian's
 * OpenBLAS 0.3.21 falls back to e.g. Haswell or Prescott kernels on CPUs
 * it does not recognise, several times slower; the warning says which
 * OPENBLAS_CORETYPE selects the right ones. */
#include "blas_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tb_config.h"

#if HAVE_OPENBLAS
#include <cblas.h>

static bool has_flag(const char *const *flags, const char *flag)
{
    for (size_t i = 0; flags && flags[i]; i++)
        if (strcmp(flags[i], flag) == 0)
            return true;
    return false;
}

/* Vector ISA rank: 3 AVX-512 (F, BW, DQ, VL: what OpenBLAS's SkylakeX
 * kernels use), 2 AVX2 + FMA, 1 AVX, 0 older or unknown. */
static const char *const isa_rank_names[] = {"SSE", "AVX", "AVX2",
                                             "AVX-512"};

static int cpu_isa_rank(const char *const *f)
{
    if (has_flag(f, "avx512f") && has_flag(f, "avx512bw") &&
        has_flag(f, "avx512dq") && has_flag(f, "avx512vl"))
        return 3;
    if (has_flag(f, "avx2") && has_flag(f, "fma"))
        return 2;
    return has_flag(f, "avx") ? 1 : 0;
}

/* Rank of the kernels of an OpenBLAS (0.3.21, DYNAMIC_ARCH x86-64) core
 * name, as openblas_get_corename() spells it; 0 for the pre-AVX cores
 * (Prescott, Core2, Nehalem, Barcelona, ...) and unknown names. */
static int openblas_core_rank(const char *core)
{
    static const char *const r3[] = {"SkylakeX", "Cooperlake",
                                     "SapphireRapids"};
    static const char *const r2[] = {"Haswell", "Zen", "Excavator"};
    static const char *const r1[] = {"Sandybridge", "Bulldozer",
                                     "Piledriver", "Steamroller"};
    for (size_t i = 0; core && i < sizeof r3 / sizeof r3[0]; i++)
        if (strcasecmp(core, r3[i]) == 0)
            return 3;
    for (size_t i = 0; core && i < sizeof r2 / sizeof r2[0]; i++)
        if (strcasecmp(core, r2[i]) == 0)
            return 2;
    for (size_t i = 0; core && i < sizeof r1 / sizeof r1[0]; i++)
        if (strcasecmp(core, r1[i]) == 0)
            return 1;
    return 0;
}

static void add_str(tb_backend_env *out, const char *key, const char *s)
{
    tb_backend_env_field *f = &out->field[out->n_fields++];
    f->key = key;
    f->str = s;
}

int tb_blas_env(const tb_backend *self, const char *const *cpu_flags,
                tb_backend_env *out)
{
    (void)self;
    memset(out, 0, sizeof *out);
    const char *core = openblas_get_corename();
    int core_rank = openblas_core_rank(core);
    out->key = "openblas";
    add_str(out, "config", openblas_get_config());
    add_str(out, "corename", core);
    add_str(out, "core_isa", isa_rank_names[core_rank]);
    /* The default before any call; the threads axis sets it before
     * every call. */
    tb_backend_env_field *f = &out->field[out->n_fields++];
    f->key = "num_threads";
    f->is_num = true;
    f->num = openblas_get_num_threads();
    add_str(out, "coretype_env", getenv("OPENBLAS_CORETYPE"));

    int cpu_rank = cpu_flags ? cpu_isa_rank(cpu_flags) : 0;
    if (core_rank >= cpu_rank)
        return 0;
    static const char *const suggest[] = {NULL, "Sandybridge", "Haswell",
                                          "SkylakeX"};
    snprintf(out->warning, sizeof out->warning,
             "OpenBLAS uses its '%s' kernels (%s), older than this CPU's "
             "%s: BLAS calls run well below what the hardware can do. "
             "Set OPENBLAS_CORETYPE=%s in the environment to select the "
             "%s kernels.",
             core ? core : "unknown", isa_rank_names[core_rank],
             isa_rank_names[cpu_rank], suggest[cpu_rank],
             isa_rank_names[cpu_rank]);
    return 0;
}

#else /* !HAVE_OPENBLAS */

int tb_blas_env(const tb_backend *self, const char *const *cpu_flags,
                tb_backend_env *out)
{
    (void)self;
    (void)cpu_flags;
    memset(out, 0, sizeof *out);
    return 0;
}

#endif /* HAVE_OPENBLAS */
