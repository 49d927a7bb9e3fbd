/* plugin.c's adapter in process (docs/ARCHITECTURE.md, "Backends as
 * objects"): every plugin is a tb_backend with the same slot functions
 * and its record as `data`, registered after the built-in backends; a
 * kernel comes with a record of its own that lives until the instance is
 * destroyed, however many the instance hands out.
 *
 * Usage: test_plugin FIXTURE_MANY.so FIXTURE_GOOD.so
 * (tests/plugins/fixture.c built with -DFIX_MANY and -DFIX_GOOD). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "backends/backend.h"
#include "backends/plugin.h"
#include "base/error.h"
#include "ops/op.h"
#include "ops/tensor.h"
#include "testutil.h"

#define N_MARKS 40 /* the fixture's mark kernels; the old ring held 32 */

static const char *many_so, *good_so;

/* Both fixtures load as two backends of one set of slot functions. */
static void test_one_set_of_slots(void **state)
{
    (void)state;
    char err[256] = "";
    char spec[1200];
    snprintf(spec, sizeof spec, "%s:many", many_so);
    assert_int_equal(tb_plugin_add(spec, err, sizeof err), 0);
    snprintf(spec, sizeof spec, "%s:good", good_so);
    assert_int_equal(tb_plugin_add(spec, err, sizeof err), 0);
    const tb_backend *m = tb_backend_find("many");
    const tb_backend *g = tb_backend_find("good");
    assert_non_null(m);
    assert_non_null(g);
    assert_ptr_equal(tb_plugin_backend(0), m);
    assert_ptr_equal(tb_plugin_backend(1), g);
    assert_true(m->probe == g->probe && m->create == g->create &&
                m->axes == g->axes && m->kernel == g->kernel);
    assert_true(m->data && g->data && m->data != g->data);
    assert_string_equal(tb_plugin_path(m), many_so);
    /* a name taken: refused, nothing registered */
    int n0, n1;
    tb_backend_list(&n0);
    assert_int_equal(tb_plugin_add(spec, err, sizeof err), TB_EINVAL);
    tb_backend_list(&n1);
    assert_int_equal(n0, n1);
    char reason[256];
    const tb_backend *b = m;
    assert_int_equal(tb_backend_probe(&b, reason, sizeof reason), 0);
    assert_ptr_equal(b, m);
}

/* 40 distinct plugin kernels held at once, then each called: every one
 * still runs its own function. */
static void test_kernels_held_at_once(void **state)
{
    (void)state;
    const tb_backend *be = tb_backend_find("many");
    assert_non_null(be);
    void *ctx = NULL;
    char err[256] = "";
    assert_int_equal(be->create(be, NULL, &ctx, err, sizeof err), 0);
    tb_shape s = SHAPE(1);
    tb_tensor in[2], out, host;
    for (int i = 0; i < 2; i++) {
        tb_tensor_init(&in[i], TB_F32, &s);
        assert_int_equal(be->alloc(ctx, &in[i]), 0);
    }
    tb_tensor_init(&out, TB_F32, &s);
    assert_int_equal(be->alloc(ctx, &out), 0);
    assert_int_equal(tb_tensor_create(&host, TB_F32, &s), 0);

    const tb_op *add = tb_op_get(TB_OP_add);
    tb_kernel k[N_MARKS];
    for (int i = 0; i < N_MARKS; i++) {
        tb_params p = {.set = 1, .v = {(double)i}};
        const char *impl = NULL;
        k[i] = be->kernel(ctx, add, TB_F32, &p, &impl);
        assert_non_null(k[i].fn);
        assert_string_equal(impl, "fixture_mark");
        for (int j = 0; j < i; j++)
            assert_ptr_not_equal(k[i].ctx, k[j].ctx);
    }
    /* the same function again: the same record */
    tb_params p3 = {.set = 1, .v = {3}};
    tb_kernel again = be->kernel(ctx, add, TB_F32, &p3, NULL);
    assert_ptr_equal(again.ctx, k[3].ctx);
    for (int i = N_MARKS - 1; i >= 0; i--) {
        assert_int_equal(tb_kernel_call(&k[i], in, &out, NULL), 0);
        assert_int_equal(be->download(ctx, &host, &out), 0);
        assert_true(tb_tensor_get(&host, 0) == (double)i);
    }
    tb_backend_counters c;
    tb_backend_counters_read(be, ctx, &c);
    tb_tensor_destroy(&host);
    for (int i = 0; i < 2; i++)
        be->free(ctx, &in[i]);
    be->free(ctx, &out);
    be->destroy(ctx); /* frees the records (ASan) */
}

/* The built-in backends hand their kernels out with the instance. */
static void test_builtin_kernel_ctx(void **state)
{
    (void)state;
    const char *names[] = {"cpu", "blas"};
    for (size_t b = 0; b < 2; b++) {
        const tb_backend *be = tb_backend_find(names[b]);
        char reason[256];
        if (tb_backend_probe(&be, reason, sizeof reason))
            continue; /* blas without OpenBLAS */
        tb_axis ax[TB_MAX_AXES];
        int n = be->axes(be, ax, TB_MAX_AXES);
        const char *vals[TB_MAX_AXES];
        for (int i = 0; i < n; i++)
            vals[i] = ax[i].values[ax[i].def];
        void *ctx = NULL;
        char err[256];
        assert_int_equal(be->create(be, vals, &ctx, err, sizeof err), 0);
        tb_kernel k = be->kernel(ctx, tb_op_get(TB_OP_matmul), TB_F32, NULL,
                                 NULL);
        assert_non_null(k.fn);
        assert_ptr_equal(k.ctx, ctx);
        be->destroy(ctx);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_plugin FIXTURE_MANY.so "
                        "FIXTURE_GOOD.so\n");
        return 2;
    }
    many_so = argv[1];
    good_so = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_set_of_slots),
        cmocka_unit_test(test_kernels_held_at_once),
        cmocka_unit_test(test_builtin_kernel_ctx),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
