/* The GPU state around a case, without a GPU: the optional sample_prep
 * slot (cold L2: the CUDA module's l2=cold) and the clock record
 * (device_pci slot + NVML, src/harness/gpu_clock.c), through the runner,
 * the isolated workers and results.json.
 *
 * A fake backend's "device" charges COLD_NS to the first call after a
 * sample_prep and WARM_NS to every other call, on a device clock that
 * the timer slots read exactly; so a cold case must show COLD_NS in
 * every sample (one call per sample, each after a prep) and a warm one
 * WARM_NS.  NVML is tests/nvml_fake.c (argv[1], via TBENCH_NVML_LIB),
 * which reports a throttled GPU with FAKE_NVML_MODE=throttle. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <math.h>

#include "base/error.h"
#include "harness/gpu_clock.h"
#include "harness/gpu_peak.h"
#include "harness/results.h"
#include "harness/runner.h"
#include "harness/worker.h"
#include "ops/alloc.h"
#include "fake_hostmem.h"

#define WARM_NS 100.0
#define COLD_NS 900.0
#define FAKE_PCI "00000000:01:00.0"

static const char *fake_nvml;

typedef struct {
    double dev_ns, mark; /* device clock */
    bool cold;           /* the next call finds a cold cache */
    int preps;
    int prep_fail_at; /* sample_prep call that fails (1-based), 0 never */
    const char *pci;  /* what device_pci answers; NULL: TB_EUNSUPPORTED */
} gs_ctx;

static gs_ctx gs;

static int gs_probe_none(const tb_backend *self, char *r, size_t n)
{
    (void)self;
    snprintf(r, n, "no CUDA device: cudaGetDeviceCount found 0 devices");
    return TB_EUNAVAILABLE;
}
static int gs_create(const tb_backend *self, const char *const *v,
                     void **ctx, char *e, size_t n)
{
    (void)self, (void)v, (void)e, (void)n;
    *ctx = &gs;
    return 0;
}
static int gs_add(void *ctx, const tb_tensor *in, tb_tensor *out,
                  const tb_params *p)
{
    (void)p;
    gs_ctx *f = ctx;
    const float *a = in[0].data, *b = in[1].data;
    float *o = out[0].data;
    for (int64_t i = 0; i < tb_tensor_numel(&out[0]); i++)
        o[i] = a[i] + b[i];
    f->dev_ns += f->cold ? COLD_NS : WARM_NS;
    f->cold = false;
    return 0;
}
static tb_kernel gs_kernel(void *ctx, const tb_op *op, tb_dtype dt,
                           const tb_params *p, const char **impl)
{
    (void)p;
    if (op->id != TB_OP_add || dt != TB_F32)
        return (tb_kernel){NULL, NULL};
    *impl = "gs_add";
    return (tb_kernel){gs_add, ctx};
}
static int gs_timer_start(void *ctx)
{
    gs_ctx *f = ctx;
    f->mark = f->dev_ns;
    return 0;
}
static int gs_timer_stop(void *ctx, double *ns)
{
    gs_ctx *f = ctx;
    *ns = f->dev_ns - f->mark;
    return 0;
}
static int gs_prep_cold(void *ctx)
{
    gs_ctx *f = ctx;
    if (++f->preps == f->prep_fail_at)
        return TB_EIO;
    f->cold = true;
    return 1;
}
static int gs_prep_none(void *ctx)
{
    ((gs_ctx *)ctx)->preps++;
    return 0;
}
static int gs_pci(void *ctx, char *buf, size_t len)
{
    gs_ctx *f = ctx;
    if (!f->pci)
        return TB_EUNSUPPORTED;
    snprintf(buf, len, "%s", f->pci);
    return 0;
}

/* The peak slot: fixed figures (an H100-like device), or a failure. */
static int gs_peak_fail; /* TB_E* code the slot returns; 1: abort(); 0 */

static int gs_peak(void *ctx, int reps, double rep_s, tb_dev_peaks *out)
{
    (void)ctx;
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "Fake H100");
    out->cc_major = 9;
    out->sms = 132;
    out->l2_bytes = 50 << 20;
    out->mem_clock_khz = 2619000;
    out->sm_clock_khz = 1980000;
    out->bus_bits = 5120;
    out->vendor_bw = 3.352e12;
    out->vendor_flops[TB_F32] = 66.9e12;
    out->reps = reps;
    out->array_bytes = rep_s > 0 ? 400 << 20 : 0;
    if (gs_peak_fail == 1)
        abort(); /* a crash in the driver, say */
    if (gs_peak_fail) {
        snprintf(out->why, sizeof out->why, "FMA kernels: fake failure");
        out->bw_best[TB_DEV_PEAK_COPY] = 3.0e12;
        return gs_peak_fail;
    }
    out->bw_best[TB_DEV_PEAK_COPY] = 3.0e12;
    out->bw_median[TB_DEV_PEAK_COPY] = 2.9e12;
    out->bw_best[TB_DEV_PEAK_READ] = 3.2e12;
    out->bw_median[TB_DEV_PEAK_READ] = 3.1e12;
    out->bw_best[TB_DEV_PEAK_TRIAD] = 2.8e12;
    out->bw_median[TB_DEV_PEAK_TRIAD] = 2.7e12;
    out->flops_best[TB_F32] = 60e12;
    out->flops_median[TB_F32] = 59e12;
    out->flops_best[TB_F64] = 30e12;
    out->flops_median[TB_F64] = 29e12;
    return 0;
}

static const tb_backend cold_backend = {
    .name = "coldfake",
    .doc = "test double: a device whose cache sample_prep empties",
    .probe = hostmem_probe,
    .axes = hostmem_axes,
    .create = gs_create,
    .destroy = hostmem_destroy,
    .alloc = hostmem_alloc,
    .free = hostmem_free,
    .upload = hostmem_copy,
    .download = hostmem_copy,
    .kernel = gs_kernel,
    .timer_start = gs_timer_start,
    .timer_stop = gs_timer_stop,
    .sample_prep = gs_prep_cold,
    .device_pci = gs_pci,
    .peak = gs_peak,
};

static const tb_backend warm_backend = {
    .name = "warmfake",
    .doc = "test double: sample_prep that does nothing",
    .probe = hostmem_probe,
    .axes = hostmem_axes,
    .create = gs_create,
    .destroy = hostmem_destroy,
    .alloc = hostmem_alloc,
    .free = hostmem_free,
    .upload = hostmem_copy,
    .download = hostmem_copy,
    .kernel = gs_kernel,
    .timer_start = gs_timer_start,
    .timer_stop = gs_timer_stop,
    .sample_prep = gs_prep_none,
    .device_pci = gs_pci,
};

/* No sample_prep, no device_pci (a CPU backend). */
static const tb_backend plain_backend = {
    .name = "plainfake",
    .doc = "test double without the optional slots",
    .probe = hostmem_probe,
    .axes = hostmem_axes,
    .create = gs_create,
    .destroy = hostmem_destroy,
    .alloc = hostmem_alloc,
    .free = hostmem_free,
    .upload = hostmem_copy,
    .download = hostmem_copy,
    .kernel = gs_kernel,
};

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
    cfg.measure.max_samples = 60;
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
    c.seed = 11;
    c.items = (double)n;
    c.bytes = 12.0 * (double)n;
    c.flops = (double)n;
    c.reduce_len = 1;
    snprintf(case_ids[slot], sizeof case_ids[slot], "add/%lld/f32/%s",
             (long long)n, be->name);
    c.id = case_ids[slot];
    return c;
}

static void reset(const char *pci, const char *mode)
{
    memset(&gs, 0, sizeof gs);
    gs.pci = pci;
    if (mode)
        setenv("FAKE_NVML_MODE", mode, 1);
    else
        unsetenv("FAKE_NVML_MODE");
}

/* With GPU_STATE_DUMP=FILE, append doc to FILE as one line (to check
 * the records against docs/results.schema.json by hand). */
static void dump(const cJSON *doc)
{
    const char *path = getenv("GPU_STATE_DUMP");
    if (!path)
        return;
    FILE *f = fopen(path, "a");
    char *t = cJSON_PrintUnformatted(doc);
    if (f && t)
        fprintf(f, "%s\n", t);
    free(t);
    if (f)
        fclose(f);
}

/* The record of c/r as results.json writes it (caller deletes doc). */
static const cJSON *record_of(const tb_case *c, const tb_result *r,
                              cJSON **doc)
{
    *doc = tb_results_new(NULL, &cfg, 1, 0);
    assert_non_null(*doc);
    assert_int_equal(tb_results_add_case(*doc, c, r), 0);
    dump(*doc);
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(*doc, "cases");
    return cJSON_GetArrayItem(cs, 0);
}

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    assert_non_null(v);
    return v;
}

static void run_here(const tb_backend *be, tb_result *res, tb_case *c)
{
    tb_runner *r;
    assert_int_equal(tb_runner_create(&r, NULL), 0);
    *c = make_case(be, 1024);
    tb_runner_run(r, c, res);
    tb_runner_destroy(r);
}

/* ---- sample_prep ------------------------------------------------------ */

static void check_cold(const tb_case *c, const tb_result *res)
{
    assert_int_equal(res->status, TB_STATUS_OK);
    assert_true(res->prepped);
    assert_int_equal(res->iters_per_sample, 1);
    assert_true(res->n_samples >= 3);
    assert_true(res->device_timed);
    for (size_t i = 0; i < res->n_samples; i++)
        assert_true(res->device_ns[i] == COLD_NS);
    cJSON *doc;
    const cJSON *rec = record_of(c, res, &doc);
    const cJSON *tm = get(rec, "timing");
    assert_true(cJSON_IsTrue(get(tm, "prepared_samples")));
    assert_true(get(get(tm, "device"), "median_ns")->valuedouble ==
                COLD_NS);
    assert_int_equal(get(get(rec, "stats"), "iters_per_sample")->valueint,
                     1);
    cJSON_Delete(doc);
}

static void test_cold_samples(void **state)
{
    (void)state;
    reset(NULL, NULL);
    tb_result res;
    tb_case c;
    run_here(&cold_backend, &res, &c);
    check_cold(&c, &res);
    /* one prep before each sample, plus round 0's first asking */
    assert_int_equal(gs.preps, (int)res.n_samples + 1);
    tb_result_free(&res);
}

/* A prep that does nothing: batches as usual, every call warm. */
static void test_warm_samples(void **state)
{
    (void)state;
    reset(NULL, NULL);
    tb_result res;
    tb_case c;
    run_here(&warm_backend, &res, &c);
    assert_int_equal(res.status, TB_STATUS_OK);
    assert_false(res.prepped);
    assert_true(res.iters_per_sample > 1);
    for (size_t i = 0; i < res.n_samples; i++)
        assert_true(res.device_ns[i] == WARM_NS);
    assert_int_equal(gs.preps, 1); /* asked once, never again */
    cJSON *doc;
    const cJSON *rec = record_of(&c, &res, &doc);
    assert_true(cJSON_IsFalse(get(get(rec, "timing"), "prepared_samples")));
    cJSON_Delete(doc);
    tb_result_free(&res);
}

/* A prep that fails while sampling makes the case an error. */
static void test_prep_fails(void **state)
{
    (void)state;
    reset(NULL, NULL);
    gs.prep_fail_at = 4;
    tb_result res;
    tb_case c;
    run_here(&cold_backend, &res, &c);
    assert_int_equal(res.status, TB_STATUS_ERROR);
    assert_int_equal(gs.preps, 4);
    tb_result_free(&res);
}

/* Isolated workers, two rounds: still one prepared call per sample. */
static void test_cold_through_workers(void **state)
{
    (void)state;
    reset(FAKE_PCI, "throttle");
    tb_case c = make_case(&cold_backend, 2048);
    c.measure.rounds = 2;
    tb_plan plan = {.n = 1, .cases = &c};
    tb_workers *w;
    assert_int_equal(tb_workers_create(&w, &plan, true, NULL), 0);
    tb_result res;
    memset(&res, 0, sizeof res);
    assert_int_equal(tb_workers_round(w, 0, 0, 2, &res), TB_WORK_DONE);
    size_t first = res.n_samples;
    assert_int_equal(tb_workers_round(w, 0, 1, 2, &res), TB_WORK_DONE);
    assert_true(res.n_samples > first);
    tb_runner_summarize(&c, &res);
    check_cold(&c, &res);
    /* the clock record crossed the socket: throttled in the worker */
    assert_true(res.clock.requested);
    assert_true(res.clock.valid);
    assert_true(res.clock.throttled);
    assert_true(res.clock.readings >= 4); /* 2 rounds x start and end */
    tb_result_free(&res);
    tb_workers_destroy(w);
}

/* ---- the clock record --------------------------------------------------- */

/* NVML absent (run in a worker, so this process never loads NVML before
 * the tests that use the fake one): the record says why. */
static void test_clock_without_nvml(void **state)
{
    (void)state;
    reset(FAKE_PCI, NULL);
    setenv("TBENCH_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
    tb_case c = make_case(&warm_backend, 256);
    tb_plan plan = {.n = 1, .cases = &c};
    tb_workers *w;
    assert_int_equal(tb_workers_create(&w, &plan, true, NULL), 0);
    tb_result res;
    memset(&res, 0, sizeof res);
    assert_int_equal(tb_workers_round(w, 0, 0, 1, &res), TB_WORK_DONE);
    tb_workers_destroy(w);
    setenv("TBENCH_NVML_LIB", fake_nvml, 1);
    tb_runner_summarize(&c, &res);
    assert_int_equal(res.status, TB_STATUS_OK);
    assert_true(res.clock.requested);
    assert_false(res.clock.valid);
    char warn[256];
    assert_string_equal(tb_gpu_clock_warning(&res.clock, warn, sizeof warn),
                        "");
    cJSON *doc;
    const cJSON *k = get(record_of(&c, &res, &doc), "gpu_clock");
    assert_true(cJSON_IsFalse(get(k, "available")));
    assert_string_equal(get(k, "pci_bus_id")->valuestring, FAKE_PCI);
    const char *why = get(k, "reason")->valuestring;
    assert_non_null(why);
    assert_non_null(strstr(why, "NVML not loaded"));
    assert_non_null(strstr(why, "/nonexistent/libnvidia-ml.so.1"));
    assert_true(cJSON_IsNull(get(k, "throttled")));
    assert_true(cJSON_IsNull(get(k, "sm_mhz_min")));
    cJSON_Delete(doc);
    tb_result_free(&res);
}

static void test_clock_steady(void **state)
{
    (void)state;
    reset(FAKE_PCI, NULL);
    tb_result res;
    tb_case c;
    run_here(&warm_backend, &res, &c);
    assert_int_equal(res.status, TB_STATUS_OK);
    assert_true(res.clock.valid);
    assert_true(res.clock.readings >= 2);
    assert_false(res.clock.throttled);
    char warn[256];
    assert_string_equal(tb_gpu_clock_warning(&res.clock, warn, sizeof warn),
                        "");
    cJSON *doc;
    const cJSON *k = get(record_of(&c, &res, &doc), "gpu_clock");
    assert_true(cJSON_IsTrue(get(k, "available")));
    assert_true(cJSON_IsNull(get(k, "reason")));
    assert_int_equal(get(k, "sm_mhz_start")->valueint, 345);
    assert_int_equal(get(k, "sm_mhz_max")->valueint, 345);
    assert_true(cJSON_IsFalse(get(k, "throttled")));
    assert_int_equal(cJSON_GetArraySize(get(k, "reasons_seen")), 0);
    cJSON_Delete(doc);
    tb_result_free(&res);
}

static void test_clock_throttled(void **state)
{
    (void)state;
    reset(FAKE_PCI, "throttle");
    tb_result res;
    tb_case c;
    run_here(&cold_backend, &res, &c);
    assert_int_equal(res.status, TB_STATUS_OK);
    assert_true(res.clock.valid);
    assert_true(res.clock.throttled);
    char warn[512];
    tb_gpu_clock_warning(&res.clock, warn, sizeof warn);
    assert_string_equal(warn,
                        "the GPU (" FAKE_PCI ") throttled during the case: "
                        "SM clock 1755-1980 MHz; software power cap, "
                        "hardware thermal slowdown");
    cJSON *doc;
    const cJSON *k = get(record_of(&c, &res, &doc), "gpu_clock");
    assert_true(cJSON_IsTrue(get(k, "throttled")));
    assert_int_equal(get(k, "sm_mhz_start")->valueint, 1980);
    assert_int_equal(get(k, "sm_mhz_end")->valueint, 1755);
    assert_int_equal(get(k, "sm_mhz_min")->valueint, 1755);
    assert_int_equal(get(k, "sm_mhz_max")->valueint, 1980);
    assert_int_equal(cJSON_GetArraySize(get(k, "reasons_start")), 0);
    const cJSON *tr = get(k, "throttle_reasons");
    assert_int_equal(cJSON_GetArraySize(tr), 2);
    assert_string_equal(cJSON_GetArrayItem(tr, 0)->valuestring,
                        "software power cap");
    assert_string_equal(cJSON_GetArrayItem(tr, 1)->valuestring,
                        "hardware thermal slowdown");
    cJSON_Delete(doc);
    tb_result_free(&res);
}

/* A GPU NVML does not know: the record says which call failed. */
static void test_clock_unknown_device(void **state)
{
    (void)state;
    reset("00000000:99:00.0", NULL);
    tb_result res;
    tb_case c;
    run_here(&warm_backend, &res, &c);
    assert_int_equal(res.status, TB_STATUS_OK);
    assert_false(res.clock.valid);
    assert_non_null(strstr(res.clock.reason,
                           "nvmlDeviceGetHandleByPciBusId_v2"
                           "(00000000:99:00.0): Not Found (error 6)"));
    tb_result_free(&res);
}

/* No device_pci slot, or one that says no: gpu_clock is null. */
static void test_clock_not_a_gpu(void **state)
{
    (void)state;
    const tb_backend *bes[2] = {&plain_backend, &warm_backend};
    for (int i = 0; i < 2; i++) {
        reset(NULL, NULL);
        tb_result res;
        tb_case c;
        run_here(bes[i], &res, &c);
        assert_int_equal(res.status, TB_STATUS_OK);
        assert_false(res.clock.requested);
        assert_false(res.prepped);
        cJSON *doc;
        const cJSON *rec = record_of(&c, &res, &doc);
        assert_true(cJSON_IsNull(get(rec, "gpu_clock")));
        assert_true(cJSON_IsFalse(get(get(rec, "timing"),
                                      "prepared_samples")));
        cJSON_Delete(doc);
        tb_result_free(&res);
    }
}

static void test_reason_words(void **state)
{
    (void)state;
    char b[256];
    assert_string_equal(tb_gpu_clock_reason_words(0, b, sizeof b), "none");
    assert_string_equal(tb_gpu_clock_reason_words(0x44, b, sizeof b),
                        "software power cap, hardware thermal slowdown");
    assert_string_equal(tb_gpu_clock_reason_words(0x1b9, b, sizeof b),
                        "idle, hardware slowdown, sync boost, software "
                        "thermal slowdown, hardware power brake, display "
                        "clock setting");
    assert_string_equal(tb_gpu_clock_reason_words(0x100002, b, sizeof b),
                        "application clock setting, unknown reason bits "
                        "0x100000");
    /* truncation keeps the string terminated */
    char s[8];
    tb_gpu_clock_reason_words(0x44, s, sizeof s);
    assert_int_equal(strlen(s), 7);
    /* the throttle mask: power cap, hw slowdown, thermal x2, brake */
    assert_string_equal(
        tb_gpu_clock_reason_words(TB_GPU_THROTTLE_MASK, b, sizeof b),
        "software power cap, hardware slowdown, software thermal "
        "slowdown, hardware thermal slowdown, hardware power brake");
}

/* ---- GPU peaks and the GPU roofline --------------------------------- */

/* Equal within 1e-12 relative (rates are scaled by 1e-9). */
static bool near(double got, double want)
{
    return fabs(got - want) <= 1e-12 * fabs(want);
}

static const cJSON *entry(const cJSON *arr, const char *k, const char *v)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
        if (!strcmp(get(e, k)->valuestring, v))
            return e;
    fail_msg("no entry %s=%s", k, v);
    return NULL;
}

static void test_gpu_peaks(void **state)
{
    (void)state;
    gs_peak_fail = 0;
    /* measured in a child process: the fake's figures cross the pipe */
    cJSON *g = tb_gpu_peaks_measure(&cold_backend, 3, 0.01);
    assert_non_null(g);
    assert_true(cJSON_IsTrue(get(g, "available")));
    assert_true(cJSON_IsNull(get(g, "reason")));
    assert_string_equal(get(g, "backend")->valuestring, "coldfake");
    const cJSON *d = get(g, "device");
    assert_string_equal(get(d, "name")->valuestring, "Fake H100");
    assert_string_equal(get(d, "compute_capability")->valuestring, "9.0");
    assert_int_equal(get(d, "sm_count")->valueint, 132);
    assert_true(near(get(d, "sm_clock_mhz")->valuedouble, 1980));
    assert_int_equal(get(g, "repetitions")->valueint, 3);
    const cJSON *bw = get(g, "bandwidth"), *fl = get(g, "flops");
    assert_int_equal(cJSON_GetArraySize(bw), 3);
    assert_true(near(get(entry(bw, "kernel", "copy"), "best_gb_s")->valuedouble, 3000));
    assert_true(near(get(entry(bw, "kernel", "read"), "median_gb_s")->valuedouble, 3100));
    assert_true(near(get(entry(bw, "kernel", "triad"), "vendor_gb_s")
                    ->valuedouble, 3352));
    assert_true(near(get(entry(fl, "dtype", "f32"), "best_gflop_s")->valuedouble, 60000));
    assert_true(near(get(entry(fl, "dtype", "f32"), "vendor_gflop_s")
                    ->valuedouble, 66900));
    /* an unknown vendor figure is null, never 0 */
    assert_true(cJSON_IsNull(get(entry(fl, "dtype", "f64"),
                                 "vendor_gflop_s")));

    /* the roofline of a case on that backend: add reads 2 and writes 1
     * array (triad's pattern), 1 FLOP per element */
    cJSON *peaks = cJSON_CreateObject();
    cJSON_AddItemToObject(peaks, "gpu", g);
    tb_roofline_in in = {.flops = 1e6, .bytes = 12e6, .time_ns = 10000,
                         .dtype = TB_F32, .bw_kernel = "add"};
    tb_roofline rl;
    assert_int_equal(tb_gpu_roofline(peaks, &in, &rl), 0);
    assert_string_equal(rl.level, "GPU");
    assert_string_equal(rl.bw_kernel, "triad");
    assert_true(rl.memory_bound);
    assert_true(near(rl.bandwidth_gb_s, 2800));
    /* 12e6 bytes at 2800 GB/s = 4285.7 ns of the measured 10000 */
    assert_true(near(rl.min_time_ns, 12e6 / 2800));
    assert_true(near(rl.fraction, 12e6 / 2800 / 10000));
    /* compute bound: 1e9 FLOPs f64 at 30000 GFLOP/s */
    tb_roofline_in in2 = {.flops = 1e9, .bytes = 8e3, .time_ns = 1e5,
                          .dtype = TB_F64, .bw_kernel = "read"};
    assert_int_equal(tb_gpu_roofline(peaks, &in2, &rl), 0);
    assert_false(rl.memory_bound);
    assert_true(near(rl.min_time_ns, 1e9 / 30000));
    assert_true(near(rl.fraction, 1e9 / 30000 / 1e5));

    /* through results.json: the record of a case on that backend */
    reset(NULL, NULL);
    tb_result res;
    tb_case c;
    run_here(&cold_backend, &res, &c);
    cJSON *doc = tb_results_new(NULL, &cfg, 1, 0);
    assert_int_equal(tb_results_set_peaks(doc, peaks), 0);
    assert_int_equal(tb_results_add_case(doc, &c, &res), 0);
    dump(doc);
    const cJSON *rec = cJSON_GetArrayItem(get(doc, "cases"), 0);
    const cJSON *r = get(rec, "roofline");
    assert_string_equal(get(r, "level")->valuestring, "GPU");
    double want = c.bytes / 2800;
    if (c.flops / 60000 > want)
        want = c.flops / 60000;
    assert_true(near(get(r, "fraction")->valuedouble,
                     want / res.stats.median));
    cJSON_Delete(doc);
    tb_result_free(&res);
}

static void test_gpu_peaks_unavailable(void **state)
{
    (void)state;
    /* a backend without a device: its probe's reason */
    tb_backend nodev = cold_backend;
    nodev.probe = gs_probe_none;
    cJSON *g = tb_gpu_peaks_measure(&nodev, 3, 0.01);
    assert_true(cJSON_IsFalse(get(g, "available")));
    assert_string_equal(get(g, "reason")->valuestring,
                        "no CUDA device: cudaGetDeviceCount found 0 "
                        "devices");
    assert_true(cJSON_IsNull(get(g, "device")));
    assert_int_equal(cJSON_GetArraySize(get(g, "bandwidth")), 0);
    cJSON *peaks = cJSON_CreateObject();
    cJSON_AddItemToObject(peaks, "gpu", g);
    tb_roofline_in in = {.flops = 1, .bytes = 12, .time_ns = 10,
                         .dtype = TB_F32, .bw_kernel = "add"};
    tb_roofline rl;
    assert_int_equal(tb_gpu_roofline(peaks, &in, &rl), TB_ENOTFOUND);
    cJSON_Delete(peaks);
    /* no backend at all */
    g = tb_gpu_peaks_measure(NULL, 3, 0.01);
    assert_true(cJSON_IsFalse(get(g, "available")));
    cJSON_Delete(g);
    /* a slot that fails part-way: what it measured, and why not more */
    gs_peak_fail = TB_EIO;
    g = tb_gpu_peaks_measure(&cold_backend, 3, 0.01);
    gs_peak_fail = 0;
    assert_true(cJSON_IsTrue(get(g, "available")));
    assert_string_equal(get(g, "reason")->valuestring,
                        "FMA kernels: fake failure");
    assert_int_equal(cJSON_GetArraySize(get(g, "bandwidth")), 1);
    assert_int_equal(cJSON_GetArraySize(get(g, "flops")), 0);
    cJSON_Delete(g);
    /* the measuring process dies: this one goes on and says so */
    gs_peak_fail = 1;
    g = tb_gpu_peaks_measure(&cold_backend, 3, 0.01);
    gs_peak_fail = 0;
    assert_true(cJSON_IsFalse(get(g, "available")));
    assert_string_equal(get(g, "reason")->valuestring,
                        "the measuring process died of signal 6");
    cJSON_Delete(g);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_gpu_state FAKE_NVML.so\n");
        return 2;
    }
    fake_nvml = argv[1];
    setenv("TBENCH_NVML_LIB", fake_nvml, 1);
    /* test_clock_without_nvml first: this process must not have
     * loaded NVML before its worker starts */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock_without_nvml),
        cmocka_unit_test(test_cold_samples),
        cmocka_unit_test(test_warm_samples),
        cmocka_unit_test(test_prep_fails),
        /* throttled before any other test reads the fake NVML in this
         * process: its first reading is the unthrottled one */
        cmocka_unit_test(test_clock_throttled),
        cmocka_unit_test(test_cold_through_workers),
        cmocka_unit_test(test_clock_steady),
        cmocka_unit_test(test_clock_unknown_device),
        cmocka_unit_test(test_clock_not_a_gpu),
        cmocka_unit_test(test_reason_words),
        cmocka_unit_test(test_gpu_peaks),
        cmocka_unit_test(test_gpu_peaks_unavailable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
