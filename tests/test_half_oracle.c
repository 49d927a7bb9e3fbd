/* bf16 and f16 ops against PyTorch (tests/data/half_vectors.h, written by
 * scripts/gen_oracle_half.py from PyTorch's own 16-bit results).
 *
 * For every vector: the cpu backend at every ISA level this machine has
 * (scalar, avx2, ...: isa=<level>, threads=1, and threads=2 at the best
 * level, whose element-wise rows split their blocks) must run the case
 * with its <op>_<dtype>_<level> row (<op>_<dtype>_c at scalar), and
 * every output must be within the op
 * table's tolerance for the dtype (|got - want| <= atol sqrt(terms) +
 * rtol |want| + the dtype's subnormal spacing, rtol in units of the
 * dtype's epsilon: op.c), the harness's own check (tb_check_outputs).
 * The double-precision reference kernel, fed the same 16-bit inputs,
 * must meet the same tolerance: so the oracle, the reference and the
 * kernels agree.  Each call counts exactly one kernel launch. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "backends/cpu/isa.h"
#include "backends/cpu/kernels.h"
#include "harness/check.h"
#include "ops/op.h"
#include "ops/tensor.h"
#include "testutil.h"

#include "data/half_vectors.h"

static const tb_backend *B;

static void *cpu_new(const char *isa, const char *threads)
{
    return cpu_instance(B, isa, threads);
}

static uint64_t launches(void *ctx)
{
    tb_backend_counters c;
    tb_backend_counters_read(B, ctx, &c);
    return c.kernel_launches;
}

static void destroy_all(tb_tensor *t, int n)
{
    for (int i = 0; i < n; i++)
        tb_tensor_destroy(&t[i]);
}

/* One vector on one instance (level name lv). */
static void run_case(const hv_case *c, void *ctx, const char *lv)
{
    const tb_op *op = tb_op_find(c->op);
    tb_dtype dt;
    assert_non_null(op);
    assert_int_equal(tb_dtype_parse(c->dtype, &dt), 0);
    assert_int_equal(op->n_in, c->n_in);
    tb_params p = {0};
    char err[256];
    for (int k = 0; k < c->n_params; k++)
        if (tb_params_set(op, &p, c->params[k].name, c->params[k].value, err,
                          sizeof err))
            fail_msg("%s: %s", c->name, err);
    tb_tensor in[TB_MAX_INPUTS], got[TB_MAX_OUTPUTS], want, ref[TB_MAX_OUTPUTS];
    tb_shape ish[TB_MAX_INPUTS], osh[TB_MAX_OUTPUTS];
    for (int i = 0; i < c->n_in; i++) {
        ish[i].ndim = c->in_ndim[i];
        for (int d = 0; d < ish[i].ndim; d++)
            ish[i].dim[d] = c->in_shape[i][d];
        assert_int_equal(tb_tensor_create(&in[i], dt, &ish[i]), 0);
        for (int64_t k = 0; k < tb_shape_numel(&ish[i]); k++) {
            tb_tensor_set(&in[i], k, c->in_data[i][k]);
            /* the vectors hold values of the dtype: stored exactly */
            assert_true(tb_tensor_get(&in[i], k) == c->in_data[i][k]);
        }
    }
    if (tb_op_infer(op, ish, op->n_in, &p, osh, err, sizeof err))
        fail_msg("%s: %s", c->name, err);
    tb_shape ws = {c->out_ndim, {0}};
    for (int d = 0; d < c->out_ndim; d++)
        ws.dim[d] = c->out_shape[d];
    if (c->out_ndim == 0) /* a 0-dim result: one element */
        ws = osh[0];
    assert_int_equal(tb_shape_numel(&ws), tb_shape_numel(&osh[0]));
    assert_int_equal(tb_tensor_create(&want, TB_F64, &osh[0]), 0);
    for (int64_t k = 0; k < tb_shape_numel(&osh[0]); k++)
        ((double *)want.data)[k] = c->out_data[k];
    tb_params pd = p;
    tb_params_defaults(op, &pd);
    double rlen = op->reduce_len ? op->reduce_len(op, ish, osh, &pd, dt) : 1;
    double terms = tb_check_terms(op, rlen);

    /* the kernel */
    const char *impl = NULL;
    tb_kernel k = B->kernel(ctx, op, dt, &p, &impl);
    if (!k.fn)
        fail_msg("%s %s: no kernel at %s", c->name, c->dtype, lv);
    char stem[64];
    snprintf(stem, sizeof stem, "%s_%s_", op->name, c->dtype);
    if (strncmp(impl, stem, strlen(stem)))
        fail_msg("%s: impl %s, want %s<level>", c->name, impl, stem);
    /* each level has its own 16-bit rows (the portable one: _c); at
     * avx512bf16 the ops without a row of it run avx512's */
    const char *own = impl + strlen(stem);
    if (strcmp(lv, "auto, threads=2") &&
        strcmp(own, strcmp(lv, "scalar") ? lv : "c") &&
        !(strcmp(lv, "avx512bf16") == 0 && strcmp(own, "avx512") == 0))
        fail_msg("%s: impl %s at isa=%s", c->name, impl, lv);
    for (int o = 0; o < op->n_out; o++)
        assert_int_equal(tb_tensor_create(&got[o], dt, &osh[o]), 0);
    uint64_t l0 = launches(ctx);
    int rc = k.fn(k.ctx, in, got, &p);
    if (rc)
        fail_msg("%s %s at %s (%s): rc %d", c->name, c->dtype, lv, impl, rc);
    assert_int_equal(launches(ctx) - l0, 1);
    tb_check chk;
    tb_check_outputs(got, &want, 1, op->tol[dt], terms, &chk);
    if (!chk.passed)
        fail_msg("%s %s (%s, vs %s): %lld bad; first %lld: got %.9g, want "
                 "%.9g (rtol %g atol %g)", c->name, c->dtype, impl, c->how,
                 (long long)chk.n_bad, (long long)chk.first_bad,
                 chk.first_bad_got, chk.first_bad_ref, chk.rtol, chk.atol);

    /* the reference kernel, once (at the scalar level's pass) */
    if (!strcmp(lv, "scalar")) {
        for (int o = 0; o < op->n_out; o++)
            assert_int_equal(tb_tensor_create(&ref[o], TB_F64, &osh[o]), 0);
        assert_int_equal(op->ref(in, ref, &p), 0);
        /* ref is f64: compare it to want as the dtype would hold it */
        for (int64_t e = 0; e < tb_shape_numel(&osh[0]); e++)
            ((double *)ref[0].data)[e] =
                tb_dtype_round(dt, ((double *)ref[0].data)[e]);
        tb_check_outputs(ref, &want, 1, op->tol[dt], terms, &chk);
        if (!chk.passed)
            fail_msg("%s %s: reference off PyTorch (%s): first %lld: %.9g "
                     "vs %.9g", c->name, c->dtype, c->how,
                     (long long)chk.first_bad, chk.first_bad_got,
                     chk.first_bad_ref);
        destroy_all(ref, op->n_out);
    }
    destroy_all(got, op->n_out);
    destroy_all(in, op->n_in);
    tb_tensor_destroy(&want);
}

static void test_vectors(void **state)
{
    (void)state;
    B = tb_backend_find("cpu");
    assert_non_null(B);
    int ran[TB_ISA_COUNT] = {0};
    for (int lv = TB_ISA_SCALAR; lv <= tb_cpu_isa_max(); lv++) {
        if (!tb_cpu_isa_built(lv))
            continue;
        const char *name = tb_cpu_isa_name(lv);
        void *ctx = cpu_new(name, "1");
        for (size_t i = 0; i < HV_N_CASES; i++)
            run_case(&hv_cases[i], ctx, name);
        B->destroy(ctx);
        ran[lv] = 1;
        print_message("# %zu vectors at isa=%s\n", (size_t)HV_N_CASES, name);
    }
    assert_true(ran[TB_ISA_SCALAR]);
    void *ctx = cpu_new("auto", "2");
    for (size_t i = 0; i < HV_N_CASES; i++)
        run_case(&hv_cases[i], ctx, "auto, threads=2");
    B->destroy(ctx);
}

/* The same cases in both dtypes.  (Every op the table defines in
 * bf16/f16 also runs through the harness, checked against its reference:
 * tests/test_cli.py runs configs/half.json.) */
static void test_coverage(void **state)
{
    (void)state;
    int n[2] = {0, 0};
    for (size_t i = 0; i < HV_N_CASES; i++)
        n[!strcmp(hv_cases[i].dtype, "f16")]++;
    assert_int_equal(n[0], n[1]); /* the same cases in both dtypes */
    assert_true(n[0] >= 40);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_vectors, leak_setup,
                                        leak_teardown),
        cmocka_unit_test(test_coverage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
