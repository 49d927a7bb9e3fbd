/* What the cpu backend's drivers share (drv_ew.c, drv_reduce.c,
 * drv_layout.c, drv_matmul.c, drv_conv.c; private to them and cpu.c):
 * the instance, the work split, the operand prologue and the entry-point
 * macros.
 *
 * A driver owns shapes, broadcasting, tiling and threading of its ops;
 * the inner loops are the instance's tables (kernels.h, vmath.h), one
 * per ISA level, and an entry point of level lv calls only level lv's
 * (CPU_SLOT_AT), so a row's name cannot claim code that did not run.
 *
 * Concurrency contract: one instance is driven by one thread at a time
 * (the harness thread).  Kernels called concurrently on the same
 * instance would share its pool and are not supported.  Counters are
 * atomics, so they may be read from any thread. */
#ifndef TB_BACKENDS_CPU_DRV_H
#define TB_BACKENDS_CPU_DRV_H

#include <assert.h>
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../base/error.h"
#include "../../ops/op.h"
#include "../../ops/tensor.h"
#include "../backend.h"
#include "../hostmem.h"
#include "backends/cpu/cpu_config.h"
#include "cpu_internal.h"
#include "isa.h"
#include "kernels.h"
#include "kreg.h"
#include "pool.h"
#include "vmath.h"
#if TB_CPU_HAVE_GEMM
#include "gemm/gemm.h"
#endif

/* Below this much work a kernel runs on the calling thread only.  Work is
 * counted in elements touched (multiply-adds for matmul; log_softmax's
 * elements weigh CPU_EXP_WEIGHT, see below).  Handing out a job costs
 * about a microsecond with spinning workers and several with parked ones,
 * about what 32K simple f32 element operations take on one core, so
 * splitting smaller jobs would only add overhead. */
#define CPU_PAR_MIN_WORK 32768
/* A scalar libm exp() costs ~10-20 simple element operations. */
#define CPU_EXP_WEIGHT 16

/* An entry point of level lv (kreg.h) calls only inner loops that level
 * lv itself installed: a registry row claiming a level whose code it
 * lacks fails here (checkasm and test_cpu run every row). */
#define CPU_SLOT_AT(slot_isa, lv) assert((slot_isa) == (lv))

/* ---- the instance ------------------------------------------------ */

typedef struct tb_cpu_ctx {
    tb_hostmem mem; /* first: the tb_hostmem_slot_* slots (hostmem.h) */
    int threads;
    int isa; /* the highest level in k (auto resolved) */
    /* Inner loops of every level up to isa, each exactly that level's
     * (the ladder climbed to it): an entry point of level l uses k[l] and
     * vm[l] only (kreg.h). */
    tb_cpu_kernels k[TB_ISA_COUNT];
    tb_vmath vm[TB_ISA_COUNT]; /* f32 exp, log, tanh, sigmoid, gelu... */
    tb_cpu_pool *pool; /* NULL when threads == 1 */
    /* A single-threaded twin (same level and inner loops, no pool, its
     * own counters) for the f32 calls a bf16/f16 row makes from inside
     * its own parts (half.c): they neither split again nor count as
     * launches of this instance.  NULL in the twin itself. */
    struct tb_cpu_ctx *serial;
} tb_cpu_ctx;

/* How many parts to split `work` (in elements or multiply-adds) over,
 * given `items` independent pieces: 1 below the threshold. */
static inline int cpu_parts(const tb_cpu_ctx *c, int64_t work,
                            int64_t items)
{
    if (c->threads <= 1 || work < CPU_PAR_MIN_WORK || items < 2)
        return 1;
    return items < c->threads ? (int)items : c->threads;
}

static inline void cpu_count_launch(tb_cpu_ctx *c)
{
    tb_hostmem_launch(&c->mem);
}

static inline int cpu_pool_run(tb_cpu_pool *pool, int nparts,
                               tb_cpu_task_fn fn, void *arg)
{
    return tb_cpu_pool_run(pool, nparts, fn, arg);
}

/* The prologue of every driver (duplicates D1): the instance (NULL:
 * TB_EINVAL), its launch counted, then in[0..n_in) and out present,
 * contiguous (views: the inputs of any strides >= 0, for the view rows
 * of drv_view.c) and of dtype dt.  0 or a TB_E* code. */
static inline int cpu_begin_views(void *ctx, tb_dtype dt,
                                  const tb_tensor *in, int n_in,
                                  tb_tensor *out, bool views)
{
    if (!ctx)
        return TB_EINVAL;
    cpu_count_launch(ctx);
    if (!in || !out)
        return TB_EINVAL;
    int rc;
    for (int i = 0; i < n_in; i++)
        if ((rc = views ? tb_tensor_check_view(&in[i], dt, 0)
                        : tb_tensor_check_operand(&in[i], dt, 0)))
            return rc;
    return tb_tensor_check_operand(out, dt, 0);
}

static inline int cpu_begin(void *ctx, tb_dtype dt, const tb_tensor *in,
                            int n_in, tb_tensor *out)
{
    return cpu_begin_views(ctx, dt, in, n_in, out, false);
}

/* matmul's shapes: a [..., M, K], b [..., K, N], out [..., M, N] with
 * equal batch dims (their product in *batch).  0 or TB_ESHAPE. */
static inline int cpu_matmul_dims(const tb_tensor *a, const tb_tensor *b,
                                  const tb_tensor *out, int64_t *batch,
                                  int64_t *M, int64_t *K, int64_t *N)
{
    const int nd = a->ndim;
    if (nd < 2 || b->ndim != nd || out->ndim != nd)
        return TB_ESHAPE;
    *batch = 1;
    for (int d = 0; d < nd - 2; d++) {
        if (b->shape[d] != a->shape[d] || out->shape[d] != a->shape[d])
            return TB_ESHAPE;
        *batch *= a->shape[d];
    }
    *M = a->shape[nd - 2], *K = a->shape[nd - 1], *N = b->shape[nd - 1];
    if (b->shape[nd - 2] != *K || out->shape[nd - 2] != *M ||
        out->shape[nd - 1] != *N)
        return TB_ESHAPE;
    return 0;
}

/* ---- helpers ------------------------------------------------------ */

static inline int64_t cpu_numel(const tb_tensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++)
        n *= t->shape[d];
    return n;
}

static inline int64_t cpu_prod(const int64_t *dim, int from, int to)
{
    int64_t n = 1;
    for (int d = from; d < to; d++)
        n *= dim[d];
    return n;
}

/* Integer parameter idx: def when absent; TB_EPARAM if not integral. */
static inline int cpu_param_int(const tb_params *p, int idx, int64_t def,
                                bool *has, int64_t *v)
{
    bool h = p && tb_params_has(p, idx);
    if (has)
        *has = h;
    if (!h) {
        *v = def;
        return 0;
    }
    double x = p->v[idx];
    if (!(x >= -1e15 && x <= 1e15) || x != floor(x))
        return TB_EPARAM;
    *v = (int64_t)x;
    return 0;
}

static inline void cpu_store(void *o, tb_dtype dt, int64_t i, double v)
{
    if (dt == TB_F32)
        ((float *)o)[i] = (float)v;
    else
        ((double *)o)[i] = v;
}

/* ---- the native GEMM (matmul, linear, conv2d) ---------------------- */

#if TB_CPU_HAVE_GEMM
/* Matmul through the native GEMM (gemm/gemm.h) at the avx2 and avx512
 * levels; the scalar level keeps the portable loops of kernels_c.c. */
static inline bool cpu_use_gemm(int lv)
{
    return lv >= TB_ISA_AVX2;
}

/* tb_gemm_parallel over the instance's pool: the GEMM's parts run on
 * the same persistent workers as every other kernel. */
static inline void cpu_gemm_par_run(void *ctx, int n, tb_gemm_task_fn fn,
                                    void *arg)
{
    tb_cpu_ctx *c = ctx;
    cpu_pool_run(c->pool, n, fn, arg);
}

#endif

/* The level of the matrix product code level lv runs for dt: the native
 * GEMM's (lv itself) or the row loops'.  Read only by CPU_SLOT_AT's
 * assertion. */
static inline int cpu_mm_isa(const tb_cpu_ctx *c, tb_dtype dt, int lv)
{
#if TB_CPU_HAVE_GEMM
    if (cpu_use_gemm(lv))
        return lv;
#endif
    return c->k[lv].mm[dt].isa;
}

/* batch products C[b] = A[b] B[b] of contiguous row-major A [batch, M,
 * K], B [batch, K, N] into C [batch, M, N], run by level lv's code (the
 * native GEMM at avx2/avx512, the row loops at scalar) over the pool:
 * matmul's driver (drv_matmul.c), shared with einsum's (einsum_c.c).
 * 0 or the GEMM's error. */
int tb_cpu_matmul_batched(tb_cpu_ctx *c, tb_dtype dt, int lv, const void *a,
                          const void *b, void *out, int64_t batch,
                          int64_t M, int64_t K, int64_t N);

/* f16 and bf16 (dt) conv2d (with_bias) / conv2d_nobias at the avx512
 * level (drv_conv.c; half_part.c's): the f32 direct loops on the image
 * and weights widened, 16-bit stores (the f32 row's sums narrowed once,
 * as half.c's path); 1 (nothing done) where those loops do not take
 * it. */
int tb_cpu_conv2d_h16(void *ctx, const tb_tensor *in, tb_tensor *out,
                      const tb_params *p, tb_dtype dt, bool with_bias);

/* ---- entry points ------------------------------------------------- */

/* A driver's adapter of op NAME: (ctx, in, out, p, dtype, level) -> its
 * code, which runs level lv's inner loops only. */
#define CPU_RUN(NAME, CALL)                                               \
    static int cpu_run_##NAME(void *ctx, const tb_tensor *in,             \
                              tb_tensor *out, const tb_params *p,         \
                              tb_dtype dt, int lv)                        \
    {                                                                     \
        (void)p, (void)dt;                                                \
        return CALL;                                                      \
    }

/* The entry point of a driver's registry row (kreg.h): the row's op at
 * the row's dtype and level.  An instance below the level has no tables
 * for it (the lookup never hands such a row out). */
#define CPU_ENTRY(op, dt, sfx)                                            \
    int TB_CPU_KFN(op, dt, sfx)(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        if (ctx && tb_cpu_isa(ctx) < TB_CPU_LV_##sfx)                     \
            return TB_EUNSUPPORTED;                                       \
        return cpu_run_##op(ctx, in, out, p, TB_CPU_DT_##dt,              \
                            TB_CPU_LV_##sfx);                             \
    }
/* The drivers' rows of a family: its pairs whose C row is a driver's
 * (suffix scalar); every op of them needs a cpu_run_<op> in the file
 * that expands the family with CPU_DEF (and CPU_DEF_N). */
#define CPU_DEF(op, dt, sfx, c) CPU_DEF_##c(op, dt, sfx)
#define CPU_DEF_scalar(op, dt, sfx) CPU_ENTRY(op, dt, sfx)
#define CPU_DEF_c(op, dt, sfx)
#define CPU_DEF_N(op, dt, sfx, c, name) CPU_DEF(op, dt, sfx, c)

#endif
