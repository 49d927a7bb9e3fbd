/* Transfers and memory as things to measure (issue 11 item 5), checked
 * without a GPU:
 *
 *  1. xfer.h, the CUDA module's host-side arithmetic of transfers and
 *     allocations (byte counts, staging-buffer reuse and size, the pool
 *     axis's values), against hand-worked values and brute force;
 *  2. the transfer ops' rows (copy_h2d, copy_d2h, copy_d2d): category,
 *     form of copy, parameter pinned, byte models, and their references
 *     against the input itself (odd sizes, both dtypes);
 *  3. the planner: "transfers": [false, true] gives an @transfers case
 *     on a device-memory backend (cuda, unavailable here) and none on
 *     cpu, whose ids stay as before;
 *  4. the runner's transfers path, on a stand-in device backend (the cpu
 *     backend with device_memory set and its copies counted): every call
 *     uploads each input and downloads each output (exactly n_in + n_out
 *     copies per call in the counters, none when resident), the out= and
 *     alloc forms and an in-place op, all passing the check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "backends/cuda/xfer.h"
#include "base/error.h"
#include "harness/config.h"
#include "harness/plan.h"
#include "harness/runner.h"
#include "ops/op.h"
#include "ops/ref.h"
#include "ops/tensor.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const int64_t odd_sizes[] = {0, 1, 7, 513, 4097};

/* ---- 1. xfer.h ------------------------------------------------------------ */

static void test_nbytes(void **state)
{
    (void)state;
    size_t nb = 12345;
    for (size_t k = 0; k < NELEM(odd_sizes); k++) {
        assert_true(tb_xfer_nbytes(odd_sizes[k], 4, &nb));
        assert_int_equal(nb, (size_t)odd_sizes[k] * 4);
        assert_true(tb_xfer_nbytes(odd_sizes[k], 8, &nb));
        assert_int_equal(nb, (size_t)odd_sizes[k] * 8);
    }
    /* 256 MiB of f32 */
    assert_true(tb_xfer_nbytes(INT64_C(67108864), 4, &nb));
    assert_int_equal(nb, (size_t)256 << 20);
    nb = 99;
    assert_false(tb_xfer_nbytes(-1, 4, &nb));
    assert_false(tb_xfer_nbytes(5, 0, &nb));
    assert_false(tb_xfer_nbytes(INT64_MAX, 8, &nb));
    assert_false(tb_xfer_nbytes((int64_t)(SIZE_MAX / 4 + 1), 4, &nb));
    assert_int_equal(nb, 99); /* untouched on failure */
    assert_true(tb_xfer_nbytes((int64_t)(SIZE_MAX / 8), 8, &nb));
}

static void test_stage(void **state)
{
    (void)state;
    /* size: one page at least, whole pages, overflow is 0 */
    assert_int_equal(tb_xfer_stage_size(0), 4096);
    assert_int_equal(tb_xfer_stage_size(1), 4096);
    assert_int_equal(tb_xfer_stage_size(4096), 4096);
    assert_int_equal(tb_xfer_stage_size(4097), 8192);
    assert_int_equal(tb_xfer_stage_size((size_t)256 << 20),
                     (size_t)256 << 20);
    assert_int_equal(tb_xfer_stage_size(SIZE_MAX), 0);
    assert_int_equal(tb_xfer_stage_size(SIZE_MAX - 4094), 0);
    for (size_t w = 1; w < 20000; w += 97) {
        size_t s = tb_xfer_stage_size(w);
        assert_true(s >= w && s % 4096 == 0 && s - w < 4096);
    }
    /* reuse: same kind, large enough, at most 4x too large */
    assert_true(tb_xfer_stage_reuse(4096, false, 4096, false));
    assert_true(tb_xfer_stage_reuse(8192, true, 4096, true));
    assert_false(tb_xfer_stage_reuse(4096, false, 4096, true));
    assert_false(tb_xfer_stage_reuse(4096, true, 4096, false));
    assert_false(tb_xfer_stage_reuse(4096, false, 4097, false));
    assert_true(tb_xfer_stage_reuse(16384, false, 4096, false));
    assert_false(tb_xfer_stage_reuse(16388, false, 4096, false));
    assert_false(tb_xfer_stage_reuse((size_t)256 << 20, true, 65536, true));
    /* a buffer sized for want is always reused for want */
    for (size_t w = 0; w < 70000; w += 1023)
        for (int pin = 0; pin < 2; pin++)
            assert_true(tb_xfer_stage_reuse(tb_xfer_stage_size(w), pin, w,
                                            pin));
}

static void test_pool_value(void **state)
{
    (void)state;
    assert_int_equal(tb_xfer_pool_value(NULL), 0);
    assert_int_equal(tb_xfer_pool_value("false"), 0);
    assert_int_equal(tb_xfer_pool_value("true"), 1);
    assert_int_equal(tb_xfer_pool_value("1"), -1);
    assert_int_equal(tb_xfer_pool_value("0"), -1);
    assert_int_equal(tb_xfer_pool_value("True"), -1);
    assert_int_equal(tb_xfer_pool_value("truex"), -1);
    assert_int_equal(tb_xfer_pool_value(""), -1);
}

/* ---- 2. the ops ------------------------------------------------------------ */

static void test_op_rows(void **state)
{
    (void)state;
    const tb_op_id ids[] = {TB_OP_copy_h2d, TB_OP_copy_d2h, TB_OP_copy_d2d};
    for (size_t i = 0; i < NELEM(ids); i++) {
        const tb_op *op = tb_op_get(ids[i]);
        assert_non_null(op);
        assert_ptr_equal(tb_op_find(op->name), op);
        assert_string_equal(tb_op_category_name(op->category), "transfer");
        assert_int_equal(op->base, TB_OP_copy);
        assert_int_equal(op->n_in, 1);
        assert_int_equal(op->n_out, 1);
        assert_null(op->alias);
        for (int d = 0; d < TB_DTYPE_FULL_COUNT; d++) {
            assert_true(op->tol[d].rtol == 0 && op->tol[d].atol == 0);
            tb_shape in = {2, {3, 1000}}, out;
            char err[128];
            tb_params p = {0};
            tb_params_defaults(op, &p);
            assert_int_equal(tb_op_infer(op, &in, 1, &p, &out, err,
                                         sizeof err),
                             0);
            assert_true(tb_shape_equal(&in, &out));
            double nb = 3000.0 * (double)tb_dtype_size((tb_dtype)d);
            /* bytes over the bus once; on the device read + write */
            assert_true(op->bytes(op, &in, &out, &p, (tb_dtype)d) ==
                        (ids[i] == TB_OP_copy_d2d ? 2 * nb : nb));
            assert_true(op->flops(op, &in, &out, &p, (tb_dtype)d) == 0);
        }
        char err[128];
        tb_params p = {0};
        int ip = tb_op_param_index(op, "pinned");
        if (ids[i] == TB_OP_copy_d2d) {
            assert_int_equal(ip, -1);
            continue;
        }
        assert_int_equal(ip, 0);
        assert_int_equal(op->params[0].kind, TB_PARAM_BOOL);
        assert_int_equal(tb_params_set(op, &p, "pinned", 1, err, sizeof err),
                         0);
        assert_int_equal(tb_params_set(op, &p, "pinned", 2, err, sizeof err),
                         TB_EPARAM);
        assert_int_equal(tb_params_set(op, &p, "host", 1, err, sizeof err),
                         TB_ENOTFOUND);
    }
}

/* The references give the input's values (any dtype in, f64 out). */
static void test_refs(void **state)
{
    (void)state;
    const tb_op_id ids[] = {TB_OP_copy_h2d, TB_OP_copy_d2h, TB_OP_copy_d2d};
    for (size_t i = 0; i < NELEM(ids); i++)
        for (size_t k = 1; k < NELEM(odd_sizes); k++)
            for (int d = 0; d < TB_DTYPE_FULL_COUNT; d++) {
                const tb_op *op = tb_op_get(ids[i]);
                tb_shape s = {1, {odd_sizes[k]}};
                tb_tensor in, out;
                assert_int_equal(tb_tensor_create(&in, (tb_dtype)d, &s), 0);
                assert_int_equal(tb_tensor_create(&out, TB_F64, &s), 0);
                for (int64_t j = 0; j < s.dim[0]; j++) {
                    double v = (double)(j * 7919 % 1000) / 999.0 - 0.5;
                    if (d == TB_F32)
                        ((float *)in.data)[j] = (float)v;
                    else
                        ((double *)in.data)[j] = v;
                }
                tb_params p = {0};
                tb_params_defaults(op, &p);
                assert_int_equal(op->ref(&in, &out, &p), 0);
                for (int64_t j = 0; j < s.dim[0]; j++) {
                    double want = d == TB_F32
                                      ? (double)((float *)in.data)[j]
                                      : ((double *)in.data)[j];
                    assert_true(((double *)out.data)[j] == want);
                }
                tb_tensor_destroy(&in);
                tb_tensor_destroy(&out);
            }
}

/* ---- 3. the planner ----------------------------------------------------------- */

static void test_plan(void **state)
{
    (void)state;
    const char *text =
        "{\"name\": \"t\", \"backends\": [\"cpu\", \"cuda\"],\n"
        " \"ops\": [{\"op\": \"add\", \"shapes\": [[8]],\n"
        "            \"transfers\": [false, true], \"alloc\": [false, true]},\n"
        "          {\"op\": \"relu\", \"shapes\": [[8]], \"transfers\": true},\n"
        "          {\"op\": \"copy_h2d\", \"shapes\": [[8]],\n"
        "           \"params\": [{}, {\"pinned\": true}]}]}";
    tb_config cfg;
    tb_plan plan;
    char err[512];
    assert_int_equal(tb_config_parse(text, strlen(text), "t.json", &cfg, err,
                                     sizeof err),
                     0);
    assert_int_equal(tb_plan_build(&cfg, 1, NULL, &plan, err, sizeof err),
                     0);
    int n_cpu = 0, n_cuda = 0, n_tr = 0;
    for (int i = 0; i < plan.n; i++) {
        const tb_case *c = &plan.cases[i];
        const char *at = strstr(c->id, "@transfers");
        size_t len = strlen(c->id);
        if (!strcmp(c->backend->name, "cpu")) {
            n_cpu++;
            assert_false(c->transfers); /* host memory: never planned */
            assert_null(at);
        } else {
            n_cuda++;
            assert_true(c->backend->device_memory);
            /* the marker ends the id, after the backend's axes */
            assert_true(c->transfers == (at != NULL));
            if (at)
                assert_true(at == c->id + len - strlen("@transfers"));
        }
        n_tr += c->transfers;
        if (c->op->id == TB_OP_relu) /* "transfers": true only */
            assert_true(c->backend->device_memory ? c->transfers
                                                  : false);
    }
    /* cpu: add x 2 alloc forms + copy_h2d x 2 (relu: transfers only);
     * cuda: add x 2 x 2, relu x 1, copy_h2d x 2 */
    assert_int_equal(n_cpu, 4);
    assert_int_equal(n_cuda, 7);
    assert_int_equal(n_tr, 3);
    bool seen = false;
    for (int i = 0; i < plan.n; i++)
        seen = seen || !strcmp(plan.cases[i].id,
                               "add@alloc/8,8/f32/cuda@transfers");
    assert_true(seen);
    tb_plan_free(&plan);
    tb_config_free(&cfg);
}

/* ---- 4. the runner ------------------------------------------------------------- */

extern const tb_backend tb_backend_cpu;
static tb_backend dev_backend;
static int n_up, n_down;

static int dev_upload(void *ctx, tb_tensor *d, const tb_tensor *s)
{
    n_up++;
    return tb_backend_cpu.upload(ctx, d, s);
}

static int dev_download(void *ctx, tb_tensor *d, const tb_tensor *s)
{
    n_down++;
    return tb_backend_cpu.download(ctx, d, s);
}

static tb_case dev_case(tb_op_id id, bool transfers, bool alloc)
{
    dev_backend = tb_backend_cpu;
    dev_backend.name = "dev";
    dev_backend.device_memory = true;
    dev_backend.upload = dev_upload;
    dev_backend.download = dev_download;
    tb_cfg_warmup w = {.min_time_s = 0.001, .min_iters = 3};
    tb_cfg_measure m;
    tb_config cfg;
    tb_config_defaults(&cfg);
    m = cfg.measure;
    m.sample_time_s = 0.0002;
    m.max_time_s = 0.05;
    m.max_samples = 50;
    static tb_shape sh[TB_MAX_INPUTS + TB_MAX_OUTPUTS];
    static char idbuf[96];
    memset(sh, 0, sizeof sh);
    tb_case c;
    memset(&c, 0, sizeof c);
    c.warmup = w;
    c.measure = m;
    c.op = tb_op_get(id);
    c.dtype = TB_F32;
    c.n_in = c.op->n_in;
    for (int i = 0; i < c.n_in; i++)
        sh[i] = (tb_shape){2, {7, 513}};
    char err[256];
    tb_params_defaults(c.op, &c.params);
    assert_int_equal(tb_op_infer(c.op, sh, c.n_in, &c.params,
                                 sh + TB_MAX_INPUTS, err, sizeof err),
                     0);
    c.in = sh;
    c.out = sh + TB_MAX_INPUTS;
    c.unavailable_reason = "";
    c.backend = &dev_backend;
    c.n_axes = 2;
    c.axis_name[0] = "isa";
    c.axis_value[0] = "scalar";
    c.axis_name[1] = "threads";
    c.axis_value[1] = "1";
    c.available = true;
    c.seed = 11;
    c.items = 7 * 513;
    c.bytes = 1;
    c.flops = 1;
    c.reduce_len = 1;
    c.transfers = transfers;
    c.alloc_outputs = alloc;
    snprintf(idbuf, sizeof idbuf, "%s/7x513/f32/dev%s", c.op->name,
             transfers ? "@transfers" : "");
    c.id = idbuf;
    return c;
}

static void run_one(tb_op_id id, bool transfers, bool alloc)
{
    tb_runner *r;
    tb_result res;
    assert_int_equal(tb_runner_create(&r, NULL), 0);
    tb_case c = dev_case(id, transfers, alloc);
    n_up = n_down = 0;
    tb_runner_run(r, &c, &res);
    if (res.status != TB_STATUS_OK)
        print_error("%s: %s\n", c.id, res.message);
    assert_int_equal(res.status, TB_STATUS_OK);
    assert_true(res.checked && res.check.passed);
    /* per call: n_in uploads and n_out downloads, or none */
    double want = transfers ? c.op->n_in + c.op->n_out : 0;
    assert_true(res.counters.v[TB_RES_CTR_MEMCPY_COUNT] == want);
    double nb = 0;
    for (int i = 0; transfers && i < c.op->n_in; i++)
        nb += 7 * 513 * 4;
    for (int i = 0; transfers && i < c.op->n_out; i++)
        nb += 7 * 513 * 4;
    assert_true(res.counters.v[TB_RES_CTR_MEMCPY_BYTES] == nb);
    /* at least the checked call and the samples went through them */
    if (transfers) {
        assert_true(n_up >= c.op->n_in * (1 + (int)res.n_samples));
        assert_true(n_down >= c.op->n_out * (2 + (int)res.n_samples));
    } else {
        assert_int_equal(n_up, c.op->n_in);   /* buffers_make only */
        assert_int_equal(n_down, c.op->n_out); /* the check only */
    }
    tb_result_free(&res);
    tb_runner_destroy(r);
}

static void test_runner_transfers(void **state)
{
    (void)state;
    for (int t = 0; t < 2; t++) {
        run_one(TB_OP_add, t, false);
        run_one(TB_OP_add, t, true);
        run_one(TB_OP_relu, t, false);
        /* the data starts on the host every call: a += b is checked */
        run_one(TB_OP_add_, t, false);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nbytes),
        cmocka_unit_test(test_stage),
        cmocka_unit_test(test_pool_value),
        cmocka_unit_test(test_op_rows),
        cmocka_unit_test(test_refs),
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_runner_transfers),
    };
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--filter") == 0)
            cmocka_set_test_filter(argv[i + 1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
