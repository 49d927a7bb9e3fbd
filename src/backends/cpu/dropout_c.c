/* dropout, the portable C rows (f32, f64): out[i] = x[i] * (keep(i) ? s
 * : 0), keep(i) the stream's integer comparison of ops/rand.h (a pure
 * function of (seed, i)), s = 1 / (1 - p) rounded in the dtype as
 * PyTorch's noise.div_(1 - p); elements split over the instance's
 * threads by index, so the output is the same at every thread count.
 * No SIMD row yet: the 64-bit mix per element (three 32x32 products a
 * lane on AVX2) is what a vector row would speed up. */
#include "../../ops/rand.h"
#include "cpu_internal.h"
#include "kreg.h"

typedef struct {
    const tb_tensor *in;
    tb_tensor *out;
    int64_t n;
    uint64_t key, thr;
    double p;
} drop_job;

#define DROP_PART(SFX, T)                                                 \
    static void drop_part_##SFX(void *arg, int part, int nparts)          \
    {                                                                     \
        const drop_job *j = arg;                                          \
        const T *x = j->in[0].data;                                       \
        T *o = j->out[0].data;                                            \
        const T s = (T)1 / (T)(1 - j->p);                                 \
        int64_t i0, i1;                                                   \
        tb_cpu_span(j->n, 64, part, nparts, &i0, &i1);                    \
        for (int64_t i = i0; i < i1; i++)                                 \
            o[i] = x[i] * (tb_rand_keep(j->key, (uint64_t)i, j->thr)      \
                               ? s                                        \
                               : (T)0);                                   \
    }
DROP_PART(f32, float)
DROP_PART(f64, double)

static int drop_run(void *ctx, tb_dtype dt, const tb_tensor *in,
                    tb_tensor *out, const tb_params *p)
{
    int rc = tb_cpu_begin_op(ctx, TB_OP_dropout, dt, in, out, p);
    if (rc)
        return rc;
    const double pr = tb_cpu_param(p, TB_OP_dropout, 0);
    drop_job j = {in, out, tb_tensor_numel(&in[0]),
                  tb_rand_key(tb_rand_seed(tb_cpu_param(p, TB_OP_dropout,
                                                        1))),
                  tb_rand_keep_threshold(pr), pr};
    tb_cpu_parallel(ctx, j.n * 8, j.n,
                    dt == TB_F32 ? drop_part_f32 : drop_part_f64, &j);
    return 0;
}

#define DROP_DEF(op, dt, sfx, c)                                          \
    int TB_CPU_KFN(op, dt, sfx)(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        return drop_run(ctx, TB_CPU_DT_##dt, in, out, p);                 \
    }
TB_CPU_ROWS_DROPOUT(DROP_DEF)
