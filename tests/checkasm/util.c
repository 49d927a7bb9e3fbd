/* What the parts of test_checkasm share: checkasm.h. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../testutil.h"

#include "backends/backend.h"
#include "backends/cpu/isa.h"
#include "backends/cpu/kernels.h"
#include "backends/cpu/kreg.h"
#include "backends/cpu/ops_simd.h"
#include "backends/cpu/rand_simd.h"
#include "backends/cpu/vmath.h"
#include "ops/alloc.h"
#include "base/error.h"
#include "ops/op.h"
#include "ops/rand.h"
#include "ops/tensor.h"

#include "checkasm.h"


uint64_t seed = UINT64_C(0x5eed0c4ec4a5a001);
uint64_t vm_stride = 1031;

/* ---- random numbers ------------------------------------------------------ */

static uint64_t rng_state;

uint64_t rng_next(void)
{
    uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

double rng_uniform(double lo, double hi)
{
    return lo + (hi - lo) * ((double)(rng_next() >> 11) * 0x1.0p-53);
}

void rng_seed(uint64_t salt)
{
    rng_state = seed ^ (salt * UINT64_C(0x2545f4914f6cdd1d));
}

/* ---- levels -------------------------------------------------------------- */

/* Levels usable here: scalar .. best (CPU, OS, TBENCH_ISA, build). */
int n_levels(void)
{
    int max = tb_cpu_isa_max();
    while (max > 0 && !tb_cpu_isa_built(max))
        max--;
    return max + 1;
}

/* Levels with functions of their own in the double-lane libraries
 * (rand, pow, f64: scalar .. avx512; avx512bf16 runs avx512's). */
int n_dvec_levels(void)
{
    int n = n_levels();
    return n > TB_ISA_AVX512 + 1 ? TB_ISA_AVX512 + 1 : n;
}

/* ---- canary-guarded buffers ---------------------------------------------- */

/* nbytes at GUARD + off bytes into a fresh tracked (64-byte aligned)
 * buffer whose every byte starts as CANARY. */
void *gb_new(gbuf *g, size_t nbytes, size_t off)
{
    g->total = GUARD + off + nbytes + GUARD;
    g->base = tb_alloc(g->total);
    assert_non_null(g->base);
    memset(g->base, CANARY, g->total);
    g->off = off;
    g->nbytes = nbytes;
    g->p = g->base + GUARD + off;
    return g->p;
}

/* Every byte outside [p, p + nbytes) still CANARY. */
bool gb_intact(const gbuf *g)
{
    const unsigned char *end = (const unsigned char *)g->p + g->nbytes;
    for (const unsigned char *q = g->base; q < (const unsigned char *)g->p;
         q++)
        if (*q != CANARY)
            return false;
    for (const unsigned char *q = end; q < g->base + g->total; q++)
        if (*q != CANARY)
            return false;
    return true;
}

void gb_free(gbuf *g)
{
    tb_free(g->base);
    g->base = NULL;
}

/* Misalignment of operands of type dt: off the 64-byte boundary, but
 * still element-aligned. */
size_t misalign(tb_dtype dt)
{
    return dt == TB_F32 ? 4 : 8;
}

/* Offsets for the streaming-store kernels, whose head runs up to the
 * output's first 64-byte boundary: every element offset in a line over
 * the size index i, 0 (aligned) included. */
size_t nt_off(tb_dtype dt, int i)
{
    const size_t es = tb_dtype_size(dt);
    return ((size_t)i * 5 * es) % 64;
}

/* Values for element-wise tests: mostly uniform in [-2, 2], with a few
 * special values sprinkled in (-0, +-inf, NaN, subnormals, huge). */
double test_value(bool specials)
{
    static const double sp[] = {-0.0, 0.0, INFINITY, -INFINITY, NAN,
                                1e-40, -1e-40, 3e38, -3e38, 1.0};
    if (specials && (rng_next() & 15) == 0)
        return sp[rng_next() % (sizeof sp / sizeof sp[0])];
    return rng_uniform(-2, 2);
}

void fill(void *p, tb_dtype dt, int64_t n, bool specials)
{
    for (int64_t i = 0; i < n; i++) {
        double v = test_value(specials);
        if (dt == TB_F32)
            ((float *)p)[i] = (float)v;
        else
            ((double *)p)[i] = v;
    }
}

double get(const void *p, tb_dtype dt, int64_t i)
{
    return dt == TB_F32 ? (double)((const float *)p)[i]
                        : ((const double *)p)[i];
}

/* Bitwise equal, or both NaN. */
bool same(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return a == b && signbit(a) == signbit(b);
}

/* ---- fixtures ------------------------------------------------------------ */

int setup(void **state)
{
    (void)state;
    leak_mark();
    return 0;
}

int teardown(void **state)
{
    (void)state;
    tb_cpu_isa_set_mask(TB_ISA_COUNT - 1);
    return leak_check();
}

tb_shape S(int nd, ...)
{
    tb_shape s = {.ndim = nd};
    va_list ap;
    va_start(ap, nd);
    for (int i = 0; i < nd; i++)
        s.dim[i] = va_arg(ap, int);
    va_end(ap);
    return s;
}
