/* cpu backend: the calibration ops (src/ops/calib.h), f32 and f64,
 * portable C, always on the calling thread.
 *
 * calib_spin reads tb_clock_ns (src/base/clock.h), the clock the harness
 * times with.  calib_work's loop body is the chain step of calib.h plus a store of
 * the value and the advance of a wrapping index: every step runs the
 * same instructions, so the instructions retired grow exactly with the
 * step count, and the time is the chain's latency (the store and the
 * index run beside it). */
#include <stdint.h>
#include <string.h>

#include "../../base/clock.h"
#include "../../base/error.h"
#include "../../ops/calib.h"
#include "../../ops/op.h"
#include "../../ops/tensor.h"
#include "cpu_internal.h"
#include "kreg.h"

static int cb_check(tb_dtype dt, const tb_tensor *out)
{
    if (!out || out->ndim != 1)
        return TB_EINVAL;
    return tb_tensor_check_operand(out, dt, 1);
}

#define CB_WORK(T)                                                        \
    static void cb_work_##T(T *o, int64_t n, uint64_t steps)              \
    {                                                                     \
        uint64_t x = TB_CALIB_SEED;                                       \
        int64_t j = 0;                                                    \
        if (steps < (uint64_t)n)                                          \
            memset(o + steps, 0, (size_t)(n - (int64_t)steps) * sizeof *o); \
        for (uint64_t s = 0; s < steps; s++) {                            \
            x = (x ^ (x >> 29)) * TB_CALIB_MUL + TB_CALIB_ADD;            \
            o[j] = (T)(x >> 40);                                          \
            j = j + 1 == n ? 0 : j + 1;                                   \
        }                                                                 \
    }
CB_WORK(float)
CB_WORK(double)

static int cb_run(void *ctx, tb_op_id id, tb_dtype dt, tb_tensor *out,
                  const tb_params *p)
{
    tb_cpu_count_launch(ctx);
    int rc = cb_check(dt, out);
    if (rc)
        return rc;
    int64_t n = out->shape[0];
    if (id == TB_OP_calib_work) {
        uint64_t steps = tb_calib_steps(n, tb_calib_scale());
        if (dt == TB_F32)
            cb_work_float(out->data, n, steps);
        else
            cb_work_double(out->data, n, steps);
        return 0;
    }
    double ns = p && tb_params_has(p, 0) ? p->v[0]
                                         : tb_op_get(id)->params[0].def;
    uint64_t t0 = tb_clock_ns(), want = (uint64_t)ns;
    while (tb_clock_ns() - t0 < want)
        ;
    memset(out->data, 0, (size_t)n * tb_dtype_size(dt));
    return 0;
}

#define CB_ENTRY(op, dt, sfx, c)                                          \
    int TB_CPU_KFN(op, dt, sfx)(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p)       \
    {                                                                     \
        (void)in;                                                         \
        return cb_run(ctx, TB_OP_##op, TB_CPU_DT_##dt, out, p);           \
    }
TB_CPU_ROWS_CALIB(CB_ENTRY)
