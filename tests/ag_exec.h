/* The tape's two execs the model tests share (test_autograd, test_tfm):
 * the reference kernels in f64 host memory, and the cpu backend's
 * kernels on an instance.  Memory is zeroed when it is made.  Include
 * after cmocka.h. */
#ifndef TB_TESTS_AG_EXEC_H
#define TB_TESTS_AG_EXEC_H

#include <math.h>
#include <string.h>

#include "backends/backend.h"
#include "base/error.h"
#include "ops/alloc.h"
#include "ops/autograd.h"
#include "ops/op.h"
#include "ops/tensor.h"

extern const tb_backend tb_backend_cpu;

static inline int ag_ref_alloc(void *user, tb_tensor *t)
{
    (void)user;
    size_t n = tb_tensor_nbytes(t);
    t->data = tb_alloc(n);
    if (!t->data)
        return TB_ENOMEM;
    memset(t->data, 0, n);
    return 0;
}

static inline void ag_ref_free(void *user, tb_tensor *t)
{
    (void)user;
    tb_free(t->data);
    t->data = NULL;
}

/* In-place ops (sgd_momentum, add_) write temporaries copied back. */
static inline int ag_ref_run(void *user, const tb_op *op,
                             const tb_tensor *in, tb_tensor *out,
                             const tb_params *p)
{
    (void)user;
    if (!op->alias)
        return op->ref(in, out, p);
    tb_tensor tmp[TB_MAX_OUTPUTS];
    for (int o = 0; o < op->n_out; o++) {
        tb_shape s = tb_tensor_shape(&out[o]);
        if (tb_tensor_create(&tmp[o], TB_F64, &s)) {
            while (o--)
                tb_tensor_destroy(&tmp[o]);
            return TB_ENOMEM;
        }
    }
    int rc = op->ref(in, tmp, p);
    for (int o = 0; o < op->n_out; o++) {
        for (int64_t i = 0; rc == 0 && i < tb_tensor_numel(&out[o]); i++)
            tb_tensor_set(&out[o], i, tb_tensor_get(&tmp[o], i));
        tb_tensor_destroy(&tmp[o]);
    }
    return rc;
}

/* Host memory on both execs: element by element, any dtype. */
static inline int ag_host_upload(void *user, tb_tensor *dst,
                                 const tb_tensor *src)
{
    (void)user;
    for (int64_t i = 0; i < tb_tensor_numel(src); i++)
        tb_tensor_set(dst, i, tb_tensor_get(src, i));
    return 0;
}

static inline int ag_cpu_run(void *ctx, const tb_op *op,
                             const tb_tensor *in, tb_tensor *out,
                             const tb_params *p)
{
    tb_kernel_fn fn =
        tb_backend_cpu.kernel(ctx, op, out[0].dtype, p, NULL).fn;
    if (!fn)
        return TB_EUNSUPPORTED;
    return fn(ctx, in, out, p);
}

static inline int ag_cpu_alloc(void *ctx, tb_tensor *t)
{
    int rc = tb_backend_cpu.alloc(ctx, t);
    if (rc == 0)
        memset(t->data, 0, tb_tensor_nbytes(t));
    return rc;
}

static inline void ag_cpu_free(void *ctx, tb_tensor *t)
{
    tb_backend_cpu.free(ctx, t);
}

/* Every element of t within atol + rtol |want| of want[i]; fails the
 * test naming what and the first element that is not. */
static inline void ag_near(const char *what, const tb_tensor *t,
                           const double *want, double atol, double rtol)
{
    for (int64_t i = 0; i < tb_tensor_numel(t); i++) {
        double g = tb_tensor_get(t, i);
        if (!(fabs(g - want[i]) <= atol + rtol * fabs(want[i])))
            fail_msg("%s [%lld]: got %.17g want %.17g", what, (long long)i,
                     g, want[i]);
    }
}

#endif
