/* dropout, the frame of every row (dropout.h) and the portable C rows
 * (f32, f64): out[i] = x[i] * (keep(i) ? s : 0), keep(i) the stream's
 * integer comparison of ops/rand.h (a pure function of (seed, i)),
 * s = 1 / (1 - p) rounded in the dtype as PyTorch's noise.div_(1 - p);
 * elements split over the instance's threads by index, so the output is
 * the same at every thread count.  The SIMD rows (dropout_simd.h) run
 * the 64-bit mix per element in vector lanes, with the same bits. */
#include "../../base/error.h"
#include "../../ops/rand.h"
#include "cpu_internal.h"
#include "dropout.h"
#include "kreg.h"

typedef struct {
    const tb_tensor *in;
    tb_tensor *out;
    int64_t n;
    uint64_t key, thr;
    double s;
    tb_cpu_drop_fn fn;
} drop_job;

static void drop_part(void *arg, int part, int nparts)
{
    const drop_job *j = arg;
    int64_t i0, i1;
    tb_cpu_span(j->n, 64, part, nparts, &i0, &i1);
    j->fn(j->out[0].data, j->in[0].data, i0, i1, j->key, j->thr, j->s);
}

int tb_cpu_dropout_run(void *ctx, int lv, tb_dtype dt, const tb_tensor *in,
                       tb_tensor *out, const tb_params *p,
                       tb_cpu_drop_fn fn)
{
    if (ctx && tb_cpu_isa(ctx) < lv)
        return TB_EUNSUPPORTED;
    int rc = tb_cpu_begin_op(ctx, TB_OP_dropout, dt, in, out, p);
    if (rc)
        return rc;
    const double pr = tb_cpu_param(p, TB_OP_dropout, 0);
    drop_job j = {in, out, tb_tensor_numel(&in[0]),
                  tb_rand_key(tb_rand_seed(tb_cpu_param(p, TB_OP_dropout,
                                                        1))),
                  tb_rand_keep_threshold(pr),
                  dt == TB_F32 ? (double)(1.0f / (float)(1 - pr))
                               : 1.0 / (1 - pr),
                  fn};
    tb_cpu_parallel(ctx, j.n * 8, j.n, drop_part, &j);
    return 0;
}

#define DROP_LOOP(SFX, T)                                                 \
    static void drop_c_##SFX(void *op, const void *xp, int64_t b,         \
                             int64_t e, uint64_t key, uint64_t thr,       \
                             double sd)                                   \
    {                                                                     \
        const T *x = xp;                                                  \
        T *o = op;                                                        \
        const T s = (T)sd;                                                \
        for (int64_t i = b; i < e; i++)                                   \
            o[i] = x[i] * (tb_rand_keep(key, (uint64_t)i, thr) ? s        \
                                                               : (T)0);   \
    }
DROP_LOOP(f32, float)
DROP_LOOP(f64, double)

/* The C rows' entry points (the SIMD rows': dropout_simd.h). */
#define DROP_DEF(op, dt, sfx, c) DROP_DEF_##sfx(op, dt)
#define DROP_DEF_avx512(op, dt)
#define DROP_DEF_avx2(op, dt)
#define DROP_DEF_c(op, dt)                                                \
    int TB_CPU_KFN(op, dt, c)(void *ctx, const tb_tensor *in,             \
                              tb_tensor *out, const tb_params *p)         \
    {                                                                     \
        return tb_cpu_dropout_run(ctx, TB_ISA_SCALAR, TB_CPU_DT_##dt, in, \
                                  out, p, drop_c_##dt);                   \
    }
TB_CPU_ROWS_DROPOUT(DROP_DEF)
