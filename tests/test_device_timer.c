/* The optional device timer of a backend (tb_backend.timer_start /
 * timer_stop) through the runner, the isolated workers and results.json,
 * driven by a fake backend whose device clock is known exactly: every
 * kernel call "takes" FAKE_DEV_NS on the device, so each sample's device
 * time per iteration must be exactly FAKE_DEV_NS whatever the batch
 * size, beside the host wall time of the same samples.  A backend
 * without the slots, and one whose timer fails during sampling, record
 * no device time (timing.device null) and still time on the host. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "harness/results.h"
#include "harness/runner.h"
#include "harness/worker.h"
#include "ops/alloc.h"
#include "fake_hostmem.h"

#define FAKE_DEV_NS 250.0

typedef struct {
    uint64_t launches, mark;
    int stops;
    int fail_at; /* timer_stop call that fails (1-based), 0: never */
} dev_ctx;

static dev_ctx dev_state;

static int dev_create(const tb_backend *self, const char *const *v,
                      void **ctx, char *e, size_t n)
{
    (void)self, (void)v, (void)e, (void)n;
    *ctx = &dev_state;
    return 0;
}
static int dev_add(void *ctx, const tb_tensor *in, tb_tensor *out,
                   const tb_params *p)
{
    (void)p;
    dev_ctx *f = ctx;
    const float *a = in[0].data, *b = in[1].data;
    float *o = out[0].data;
    for (int64_t i = 0; i < tb_tensor_numel(&out[0]); i++)
        o[i] = a[i] + b[i];
    f->launches++;
    return 0;
}
static tb_kernel dev_kernel(void *ctx, const tb_op *op, tb_dtype dt,
                            const tb_params *p, const char **impl)
{
    (void)p;
    if (op->id != TB_OP_add || dt != TB_F32)
        return (tb_kernel){NULL, NULL};
    *impl = "dev_add";
    return (tb_kernel){dev_add, ctx};
}
static int dev_timer_start(void *ctx)
{
    dev_ctx *f = ctx;
    f->mark = f->launches;
    return 0;
}
static int dev_timer_stop(void *ctx, double *ns)
{
    dev_ctx *f = ctx;
    if (++f->stops == f->fail_at)
        return TB_EIO;
    *ns = FAKE_DEV_NS * (double)(f->launches - f->mark);
    return 0;
}

static const tb_backend dev_backend = {
    .name = "devfake",
    .doc = "test double with a device clock",
    .probe = hostmem_probe,
    .axes = hostmem_axes,
    .create = dev_create,
    .destroy = hostmem_destroy,
    .alloc = hostmem_alloc,
    .free = hostmem_free,
    .upload = hostmem_copy,
    .download = hostmem_copy,
    .kernel = dev_kernel,
    .timer_start = dev_timer_start,
    .timer_stop = dev_timer_stop,
};

/* The same backend without a device clock. */
static tb_backend host_backend;

static tb_config cfg;

/* Storage for the shapes and ids of the cases make_case returns (the
 * last CASE_SLOTS of them stay valid). */
#define CASE_SLOTS 16
static tb_shape case_shapes[CASE_SLOTS][3];
static char case_ids[CASE_SLOTS][96];
static int case_next;

static tb_case make_case(const tb_backend *be, int64_t n)
{
    tb_case c;
    memset(&c, 0, sizeof c);
    int slot = case_next++ % CASE_SLOTS;
    tb_shape *in = case_shapes[slot], *out = in + 2;
    tb_config_defaults(&cfg);
    cfg.warmup.min_time_s = 0.001;
    cfg.measure.sample_time_s = 0.0002;
    cfg.measure.max_time_s = 0.1;
    cfg.measure.max_samples = 100;
    c.warmup = cfg.warmup;
    c.measure = cfg.measure;
    c.op = tb_op_get(TB_OP_add);
    c.dtype = TB_F32;
    c.n_in = 2;
    in[0] = in[1] = (tb_shape){1, {n}};
    char err[256];
    assert_int_equal(
        tb_op_infer(c.op, in, 2, &c.params, out, err, sizeof err), 0);
    c.in = in;
    c.out = out;
    c.unavailable_reason = "";
    c.backend = be;
    c.available = true;
    c.seed = 7;
    c.items = (double)n;
    c.bytes = 12.0 * (double)n;
    c.flops = (double)n;
    c.reduce_len = 1;
    snprintf(case_ids[slot], sizeof case_ids[slot], "add/%lld/f32/%s",
             (long long)n, be->name);
    c.id = case_ids[slot];
    return c;
}

/* The case record of c/r as results.json writes it (caller deletes). */
static cJSON *record_of(const tb_case *c, const tb_result *r)
{
    cJSON *doc = tb_results_new(NULL, &cfg, 1, 0);
    assert_non_null(doc);
    assert_int_equal(tb_results_add_case(doc, c, r), 0);
    return doc;
}

static const cJSON *device_of(const cJSON *doc)
{
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    const cJSON *tm = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cases, 0), "timing");
    assert_true(cJSON_IsObject(tm));
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(tm, "device");
    assert_non_null(d);
    return d;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

/* Every sample's device time per iteration is exactly FAKE_DEV_NS, for
 * whatever batch size the runner chose; the record carries them. */
static void check_device_result(const tb_case *c, const tb_result *res)
{
    assert_int_equal(res->status, TB_STATUS_OK);
    assert_true(res->n_samples >= 3);
    assert_true(res->iters_per_sample >= 1);
    assert_non_null(res->device_ns);
    assert_true(res->device_timed);
    for (size_t i = 0; i < res->n_samples; i++)
        assert_true(res->device_ns[i] == FAKE_DEV_NS);
    cJSON *doc = record_of(c, res);
    const cJSON *d = device_of(doc);
    assert_true(cJSON_IsObject(d));
    assert_true(num(d, "median_ns") == FAKE_DEV_NS);
    assert_true(num(d, "min_ns") == FAKE_DEV_NS);
    assert_true(num(d, "max_ns") == FAKE_DEV_NS);
    /* host wall median minus device median */
    assert_true(num(d, "overhead_ns") == res->stats.median - FAKE_DEV_NS);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(d, "samples_ns");
    assert_int_equal(cJSON_GetArraySize(s), (int)res->n_samples);
    cJSON_Delete(doc);
}

static void test_device_time_in_process(void **state)
{
    (void)state;
    tb_runner *r;
    tb_result res;
    memset(&dev_state, 0, sizeof dev_state);
    assert_int_equal(tb_runner_create(&r, NULL), 0);
    tb_case c = make_case(&dev_backend, 1024);
    tb_runner_run(r, &c, &res);
    check_device_result(&c, &res);
    /* timer marks only around timed samples, one stop per sample */
    assert_int_equal(dev_state.stops, (int)res.n_samples);
    tb_result_free(&res);
    tb_runner_destroy(r);
}

/* A timer that fails once: host timing goes on, no device figures. */
static void test_device_timer_fails(void **state)
{
    (void)state;
    tb_runner *r;
    tb_result res;
    memset(&dev_state, 0, sizeof dev_state);
    dev_state.fail_at = 2;
    assert_int_equal(tb_runner_create(&r, NULL), 0);
    tb_case c = make_case(&dev_backend, 512);
    tb_runner_run(r, &c, &res);
    assert_int_equal(res.status, TB_STATUS_OK);
    assert_true(res.n_samples >= 3);
    assert_false(res.device_timed);
    cJSON *doc = record_of(&c, &res);
    assert_true(cJSON_IsNull(device_of(doc)));
    cJSON_Delete(doc);
    tb_result_free(&res);
    tb_runner_destroy(r);
}

/* No timer slots: no device array, timing.device null. */
static void test_no_device_timer(void **state)
{
    (void)state;
    tb_runner *r;
    tb_result res;
    host_backend = dev_backend;
    host_backend.name = "hostfake";
    host_backend.timer_start = NULL;
    host_backend.timer_stop = NULL;
    memset(&dev_state, 0, sizeof dev_state);
    assert_int_equal(tb_runner_create(&r, NULL), 0);
    tb_case c = make_case(&host_backend, 512);
    tb_runner_run(r, &c, &res);
    assert_int_equal(res.status, TB_STATUS_OK);
    assert_null(res.device_ns);
    assert_int_equal(dev_state.stops, 0);
    assert_int_equal(tb_backend_timer_start(&host_backend, &dev_state),
                     TB_EUNSUPPORTED);
    cJSON *doc = record_of(&c, &res);
    assert_true(cJSON_IsNull(device_of(doc)));
    cJSON_Delete(doc);
    tb_result_free(&res);
    tb_runner_destroy(r);
}

/* Isolated workers, two rounds: the device samples cross the socket
 * both ways with the host samples. */
static void test_device_time_through_workers(void **state)
{
    (void)state;
    memset(&dev_state, 0, sizeof dev_state);
    tb_case c = make_case(&dev_backend, 2048);
    c.measure.rounds = 2;
    tb_plan plan = {.n = 1, .cases = &c};
    tb_workers *w;
    assert_int_equal(tb_workers_create(&w, &plan, true, NULL), 0);
    assert_string_equal(tb_workers_mode(w), "process");
    tb_result res;
    memset(&res, 0, sizeof res);
    assert_int_equal(tb_workers_round(w, 0, 0, 2, &res), TB_WORK_DONE);
    size_t first = res.n_samples;
    assert_int_equal(tb_workers_round(w, 0, 1, 2, &res), TB_WORK_DONE);
    assert_true(res.n_samples > first);
    tb_runner_summarize(&c, &res);
    check_device_result(&c, &res);
    tb_result_free(&res);
    tb_workers_destroy(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_time_in_process),
        cmocka_unit_test(test_device_timer_fails),
        cmocka_unit_test(test_no_device_timer),
        cmocka_unit_test(test_device_time_through_workers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
