#include "results.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <csv.h>

#include "instr.h"
#include "peak.h"
#include "gpu_peak.h"
#include "../base/error.h"
#include "../base/fileio.h"

static cJSON *shape_json(const tb_shape *s)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < s->ndim; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)s->dim[i]));
    return a;
}

static cJSON *measure_json(const tb_config *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *w = cJSON_AddObjectToObject(o, "warmup");
    cJSON_AddNumberToObject(w, "min_time_s", c->warmup.min_time_s);
    cJSON_AddNumberToObject(w, "min_iters", c->warmup.min_iters);
    cJSON *m = cJSON_AddObjectToObject(o, "measure");
    cJSON_AddNumberToObject(m, "sample_time_s", c->measure.sample_time_s);
    cJSON_AddNumberToObject(m, "min_samples", c->measure.min_samples);
    cJSON_AddNumberToObject(m, "max_samples", c->measure.max_samples);
    cJSON_AddNumberToObject(m, "ci_target", c->measure.ci_target);
    cJSON_AddNumberToObject(m, "max_time_s", c->measure.max_time_s);
    cJSON_AddNumberToObject(m, "rounds", c->measure.rounds);
    cJSON_AddNumberToObject(m, "timeout_s", c->measure.timeout_s);
    return o;
}

cJSON *tb_results_new(cJSON *env, const tb_config *cfgs, int n_cfgs,
                      double timer_overhead_ns)
{
    cJSON *doc = cJSON_CreateObject();
    if (!doc) {
        cJSON_Delete(env);
        return NULL;
    }
    cJSON_AddStringToObject(doc, "schema", TB_RESULTS_SCHEMA);
    cJSON_AddBoolToObject(doc, "complete", false);
    cJSON_AddItemToObject(doc, "env", env ? env : cJSON_CreateNull());
    cJSON_AddNullToObject(doc, "peaks");
    cJSON *t = cJSON_AddObjectToObject(doc, "timer");
    cJSON_AddStringToObject(t, "source", "CLOCK_MONOTONIC");
    cJSON_AddNumberToObject(t, "overhead_ns", timer_overhead_ns);
    cJSON *cf = cJSON_AddArrayToObject(doc, "config");
    for (int i = 0; i < n_cfgs; i++) {
        cJSON *c = measure_json(&cfgs[i]);
        cJSON_AddStringToObject(c, "path", cfgs[i].path);
        cJSON_AddStringToObject(c, "name", cfgs[i].name);
        /* a JSON integer, digit for digit: a double would round seeds
         * above 2^53 */
        char sd[24];
        snprintf(sd, sizeof sd, "%llu", (unsigned long long)cfgs[i].seed);
        cJSON_AddRawToObject(c, "seed", sd);
        cJSON_AddStringToObject(c, "text", cfgs[i].text ? cfgs[i].text : "");
        cJSON_AddItemToArray(cf, c);
    }
    cJSON_AddObjectToObject(doc, "summary");
    cJSON_AddArrayToObject(doc, "cases");
    return doc;
}

static cJSON *num_or_null(double v, bool ok)
{
    return ok ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

int tb_results_set_peaks(cJSON *doc, cJSON *peaks)
{
    cJSON *v = peaks ? peaks : cJSON_CreateNull();
    if (!v)
        return TB_ENOMEM;
    if (cJSON_GetObjectItemCaseSensitive(doc, "peaks")
            ? !cJSON_ReplaceItemInObjectCaseSensitive(doc, "peaks", v)
            : !cJSON_AddItemToObject(doc, "peaks", v)) {
        cJSON_Delete(v);
        return TB_ENOMEM;
    }
    return 0;
}

/* The case's roofline against the document's peaks, or null: no peaks,
 * the case did not run, it ran on a backend without a "threads" axis
 * (not the host CPU the peaks describe), or the peaks have no figure
 * for its thread count / ISA. */
static cJSON *roofline_json(const cJSON *doc, const tb_case *c,
                            const tb_result *r)
{
    const cJSON *peaks = cJSON_GetObjectItemCaseSensitive(doc, "peaks");
    tb_roofline_in in = {
        .flops = c->flops,
        .bytes = c->bytes,
        .time_ns = r->stats.median,
        .dtype = c->dtype,
        .threads = 0,
        .isa = NULL,
        .bw_kernel = tb_roofline_bw_kernel(c->op),
    };
    for (int i = 0; i < c->n_axes; i++) {
        if (!strcmp(c->axis_name[i], "threads"))
            in.threads = atoi(c->axis_value[i]);
        else if (!strcmp(c->axis_name[i], "isa"))
            in.isa = c->axis_value[i];
    }
    tb_roofline rl;
    cJSON *o = NULL;
    if (r->status == TB_STATUS_OK && cJSON_IsObject(peaks) &&
        c->backend->peak) { /* a GPU backend: the GPU's peaks */
        if (tb_gpu_roofline(peaks, &in, &rl) == 0)
            o = tb_roofline_json(&rl);
    } else if (r->status == TB_STATUS_OK && cJSON_IsObject(peaks) &&
               in.threads > 0 && tb_roofline_compute(peaks, &in, &rl) == 0)
        o = tb_roofline_json(&rl);
    return o ? o : cJSON_CreateNull();
}

/* "cupti" and "cupti_reason" of a case record (docs/FORMAT.md): the
 * counting pass's per-iteration figures, or null with the reason. */
static void add_cupti(cJSON *o, const tb_result *r)
{
    const tb_dev_counts *d = &r->dev;
    if (r->status != TB_STATUS_OK || !d->valid) {
        char why[300];
        if (r->status != TB_STATUS_OK)
            snprintf(why, sizeof why, "not counted: the case is %s",
                     tb_status_name(r->status));
        else
            snprintf(why, sizeof why, "%s",
                     d->reason[0] ? d->reason : "not counted");
        cJSON_AddNullToObject(o, "cupti");
        cJSON_AddStringToObject(o, "cupti_reason", why);
        return;
    }
    static const char *const dirs[TB_DEV_NDIR] = {"h2d", "d2h", "d2d",
                                                  "other"};
    cJSON *cu = cJSON_AddObjectToObject(o, "cupti");
    cJSON_AddNumberToObject(cu, "iterations", (double)d->iters);
    cJSON_AddNumberToObject(cu, "kernel_launches", d->kernel_launches);
    cJSON *mc = cJSON_AddObjectToObject(cu, "memcpy");
    for (int i = 0; mc && i < TB_DEV_NDIR; i++) {
        cJSON *m = cJSON_AddObjectToObject(mc, dirs[i]);
        cJSON_AddNumberToObject(m, "count", d->memcpy_count[i]);
        cJSON_AddNumberToObject(m, "bytes", d->memcpy_bytes[i]);
    }
    cJSON_AddNumberToObject(cu, "memsets", d->memsets);
    cJSON_AddNumberToObject(cu, "memset_bytes", d->memset_bytes);
    cJSON_AddNumberToObject(cu, "device_allocs", d->device_allocs);
    cJSON_AddNumberToObject(cu, "device_alloc_bytes", d->device_alloc_bytes);
    cJSON_AddNumberToObject(cu, "device_frees", d->device_frees);
    cJSON_AddNumberToObject(cu, "device_free_bytes", d->device_free_bytes);
    cJSON *ks = cJSON_AddArrayToObject(cu, "kernels");
    for (int i = 0; ks && i < d->n_kernels; i++) {
        cJSON *k = cJSON_CreateObject();
        cJSON_AddItemToArray(ks, k);
        cJSON_AddStringToObject(k, "name", d->kernel[i].name);
        cJSON_AddNumberToObject(k, "count", d->kernel[i].count);
        cJSON_AddNumberToObject(k, "device_ns", d->kernel[i].ns);
    }
    cJSON_AddNumberToObject(cu, "kernels_unlisted", d->kernels_unlisted);
    cJSON_AddNullToObject(o, "cupti_reason");
}

/* measure.instructions (instr.h): null when not asked for; else the
 * count per iteration (null when unavailable) with its source, the ISA
 * that ran, the iterations counted and the reason for a null. */
static cJSON *instr_json(const tb_case *c, const tb_result *r)
{
    if (!r->instr_requested)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "requested",
                            tb_instr_source_name(c->measure.instructions));
    cJSON_AddItemToObject(o, "per_iter",
                          num_or_null(r->instructions, r->instr_ok));
    cJSON_AddItemToObject(o, "source",
                          r->instr_ok ? cJSON_CreateString(r->instr_source)
                                      : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "isa",
                          r->instr_ok && r->instr_isa[0]
                              ? cJSON_CreateString(r->instr_isa)
                              : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "iters",
                          num_or_null((double)r->instr_iters, r->instr_ok));
    cJSON_AddItemToObject(o, "reason",
                          r->instr_reason[0]
                              ? cJSON_CreateString(r->instr_reason)
                              : cJSON_CreateNull());
    return o;
}

/* timing.device: the backend's device time per iteration beside the
 * host wall time of the same samples (stats), or null when the backend
 * has no device timer or a sample lacked it. */
static cJSON *device_json(const tb_result *r)
{
    size_t n = r->n_samples;
    if (!r->device_ns || !r->device_timed || n == 0 || !r->samples_ns)
        return cJSON_CreateNull();
    double *d = malloc(n * sizeof *d), *w = malloc(n * sizeof *w);
    if (!d || !w) {
        free(d);
        free(w);
        return cJSON_CreateNull();
    }
    memcpy(d, r->device_ns, n * sizeof *d);
    memcpy(w, r->samples_ns, n * sizeof *w);
    qsort(d, n, sizeof *d, tb_cmp_double);
    qsort(w, n, sizeof *w, tb_cmp_double);
    double med = tb_quantile_sorted(d, n, 0.5);
    double wmed = tb_quantile_sorted(w, n, 0.5);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "source", "backend device timer");
    cJSON_AddNumberToObject(o, "median_ns", med);
    cJSON_AddNumberToObject(o, "min_ns", d[0]);
    cJSON_AddNumberToObject(o, "max_ns", d[n - 1]);
    cJSON_AddNumberToObject(o, "overhead_ns", wmed - med);
    cJSON_AddItemToObject(o, "samples_ns",
                          cJSON_CreateDoubleArray(r->device_ns, (int)n));
    free(d);
    free(w);
    return o;
}

static cJSON *case_record(const cJSON *doc, const tb_case *c,
                          const tb_result *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "id", c->id);
    cJSON_AddStringToObject(o, "op", c->op->name);
    cJSON_AddStringToObject(o, "category",
                            tb_op_category_name(c->op->category));
    cJSON_AddStringToObject(o, "dtype", tb_dtype_name(c->dtype));
    cJSON_AddBoolToObject(o, "alloc_outputs", c->alloc_outputs);
    cJSON_AddBoolToObject(o, "transfers", c->transfers);
    cJSON *sh = cJSON_AddArrayToObject(o, "shapes");
    for (int i = 0; i < c->n_in; i++)
        cJSON_AddItemToArray(sh, shape_json(&c->in[i]));
    cJSON *osh = cJSON_AddArrayToObject(o, "out_shapes");
    for (int i = 0; i < c->op->n_out; i++)
        cJSON_AddItemToArray(osh, shape_json(&c->out[i]));
    cJSON *pr = cJSON_AddObjectToObject(o, "params");
    for (int i = 0; i < c->op->n_params; i++) {
        if (!tb_params_has(&c->params, i))
            continue;
        const tb_param_spec *s = &c->op->params[i];
        if (s->kind == TB_PARAM_BOOL)
            cJSON_AddBoolToObject(pr, s->name, c->params.v[i] != 0);
        else
            cJSON_AddNumberToObject(pr, s->name, c->params.v[i]);
    }
    cJSON_AddStringToObject(o, "backend", c->backend->name);
    cJSON *bp = cJSON_AddObjectToObject(o, "backend_params");
    for (int i = 0; i < c->n_axes; i++)
        cJSON_AddStringToObject(bp, c->axis_name[i], c->axis_value[i]);
    cJSON_AddItemToObject(o, "impl", r->impl ? cJSON_CreateString(r->impl)
                                             : cJSON_CreateNull());
    cJSON_AddStringToObject(o, "status", tb_status_name(r->status));
    cJSON_AddItemToObject(o, "message", r->message[0]
                                            ? cJSON_CreateString(r->message)
                                            : cJSON_CreateNull());
    cJSON *md = cJSON_AddObjectToObject(o, "model");
    cJSON_AddNumberToObject(md, "flops", c->flops);
    cJSON_AddNumberToObject(md, "bytes", c->bytes);
    cJSON_AddNumberToObject(md, "items", c->items);
    cJSON_AddNumberToObject(md, "reduce_len", c->reduce_len);

    if (r->checked) {
        cJSON *ck = cJSON_AddObjectToObject(o, "check");
        cJSON_AddBoolToObject(ck, "passed", r->check.passed);
        cJSON_AddStringToObject(ck, "method", r->check.method);
        cJSON_AddNumberToObject(ck, "max_abs_err", r->check.max_abs_err);
        cJSON_AddNumberToObject(ck, "max_rel_err", r->check.max_rel_err);
        cJSON_AddNumberToObject(ck, "rtol", r->check.rtol);
        cJSON_AddNumberToObject(ck, "atol", r->check.atol);
        cJSON_AddNumberToObject(ck, "n_bad", (double)r->check.n_bad);
    } else {
        cJSON_AddNullToObject(o, "check");
    }

    bool timed = r->status == TB_STATUS_OK;
    if (timed) {
        const tb_stats *s = &r->stats;
        cJSON *st = cJSON_AddObjectToObject(o, "stats");
        cJSON_AddNumberToObject(st, "n", (double)s->n);
        cJSON_AddNumberToObject(st, "iters_per_sample",
                                (double)r->iters_per_sample);
        cJSON_AddNumberToObject(st, "min_ns", s->min);
        cJSON_AddNumberToObject(st, "max_ns", s->max);
        cJSON_AddNumberToObject(st, "median_ns", s->median);
        cJSON_AddNumberToObject(st, "mean_ns", s->mean);
        cJSON_AddNumberToObject(st, "stddev_ns", s->stddev);
        cJSON_AddNumberToObject(st, "mad_ns", s->mad);
        cJSON_AddNumberToObject(st, "p5_ns", s->p5);
        cJSON_AddNumberToObject(st, "p95_ns", s->p95);
        cJSON_AddNumberToObject(st, "ci_low_ns", s->ci_low);
        cJSON_AddNumberToObject(st, "ci_high_ns", s->ci_high);
        cJSON_AddNumberToObject(st, "ci_rel",
                                s->median > 0
                                    ? (s->ci_high - s->ci_low) / s->median
                                    : 0);
        cJSON *ol = cJSON_AddObjectToObject(st, "outliers");
        cJSON_AddNumberToObject(ol, "low_mild", s->outliers.low_mild);
        cJSON_AddNumberToObject(ol, "low_severe", s->outliers.low_severe);
        cJSON_AddNumberToObject(ol, "high_mild", s->outliers.high_mild);
        cJSON_AddNumberToObject(ol, "high_severe", s->outliers.high_severe);
        cJSON_AddStringToObject(st, "stop_reason", r->stop_reason);
        cJSON_AddNumberToObject(st, "rounds", r->rounds);
        cJSON_AddItemToObject(st, "round_medians_ns",
                              cJSON_CreateDoubleArray(r->round_medians_ns,
                                                      r->rounds));
        cJSON_AddItemToObject(st, "samples_ns",
                              cJSON_CreateDoubleArray(r->samples_ns,
                                                      (int)r->n_samples));

        cJSON *tp = cJSON_AddObjectToObject(o, "throughput");
        cJSON_AddItemToObject(tp, "gb_s", num_or_null(r->gb_s, c->bytes > 0));
        cJSON_AddItemToObject(tp, "gflop_s",
                              num_or_null(r->gflop_s, c->flops > 0));
        cJSON_AddNumberToObject(tp, "items_s", r->items_s);
        /* An optimizer call is one step of the whole parameter vector. */
        cJSON_AddItemToObject(
            tp, "steps_s",
            num_or_null(r->stats.median > 0 ? 1e9 / r->stats.median : 0,
                        c->op->category == TB_CAT_OPTIMIZER &&
                            r->stats.median > 0));

        const tb_counters *k = &r->counters;
        cJSON *ct = cJSON_AddObjectToObject(o, "counters");
        cJSON_AddNumberToObject(ct, "kernel_launches", k->kernel_launches);
        cJSON_AddNumberToObject(ct, "memcpy_count", k->memcpy_count);
        cJSON_AddNumberToObject(ct, "memcpy_bytes", k->memcpy_bytes);
        cJSON_AddNumberToObject(ct, "allocs", k->allocs);
        cJSON_AddNumberToObject(ct, "alloc_bytes", k->alloc_bytes);
        cJSON_AddNumberToObject(ct, "device_allocs", k->device_allocs);
        cJSON_AddNumberToObject(ct, "device_alloc_bytes",
                                k->device_alloc_bytes);
        cJSON_AddNumberToObject(ct, "peak_bytes", (double)k->peak_bytes);
        cJSON_AddNumberToObject(ct, "peak_extra_bytes",
                                (double)k->peak_extra_bytes);
        cJSON_AddNumberToObject(ct, "minor_faults", k->minor_faults);
        cJSON_AddNumberToObject(ct, "major_faults", k->major_faults);
        cJSON_AddNumberToObject(ct, "vol_ctx_switches", k->vol_ctx_switches);
        cJSON_AddNumberToObject(ct, "invol_ctx_switches",
                                k->invol_ctx_switches);

        cJSON *tm = cJSON_AddObjectToObject(o, "timing");
        cJSON_AddNumberToObject(tm, "timer_overhead_ns", r->timer_overhead_ns);
        cJSON_AddNumberToObject(tm, "warmup_iters", (double)r->warmup_iters);
        cJSON_AddNumberToObject(tm, "warmup_ns", r->warmup_ns);
        cJSON_AddNumberToObject(tm, "sampling_ns", r->sampling_ns);
        cJSON_AddItemToObject(tm, "device", device_json(r));
        cJSON_AddBoolToObject(tm, "prepared_samples", r->prepped);
    } else {
        cJSON_AddNullToObject(o, "stats");
        cJSON_AddNullToObject(o, "throughput");
        cJSON_AddNullToObject(o, "counters");
        cJSON_AddNullToObject(o, "timing");
    }
    cJSON_AddItemToObject(o, "roofline", roofline_json(doc, c, r));
    add_cupti(o, r);
    cJSON_AddItemToObject(o, "instructions", instr_json(c, r));
    /* Where it ran: the machine, and the shard of a sharded run (the
     * document's "shard", tb_results_set_shard), so that the records of
     * a merged file still say it. */
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(doc, "env");
    const cJSON *host = cJSON_GetObjectItemCaseSensitive(env, "hostname");
    cJSON_AddItemToObject(o, "host", cJSON_IsString(host)
                                         ? cJSON_CreateString(host->valuestring)
                                         : cJSON_CreateNull());
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(doc, "shard");
    if (cJSON_IsObject(sd)) {
        cJSON *s = cJSON_AddObjectToObject(o, "shard");
        cJSON_AddItemToObject(s, "index", cJSON_Duplicate(
            cJSON_GetObjectItemCaseSensitive(sd, "index"), 1));
        cJSON_AddItemToObject(s, "count", cJSON_Duplicate(
            cJSON_GetObjectItemCaseSensitive(sd, "count"), 1));
        cJSON_AddNumberToObject(s, "plan_index", c->plan_index);
    } else {
        cJSON_AddNullToObject(o, "shard");
    }
    cJSON_AddItemToObject(o, "gpu_clock", tb_gpu_clock_json(&r->clock));
    return o;
}

int tb_results_add_case(cJSON *doc, const tb_case *c, const tb_result *r)
{
    cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    return tb_results_set_case(doc, cJSON_GetArraySize(cases), c, r);
}

int tb_results_set_case(cJSON *doc, int index, const tb_case *c,
                        const tb_result *r)
{
    cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    int n = cJSON_GetArraySize(cases);
    if (index < 0 || index > n)
        return TB_EINVAL;
    cJSON *o = case_record(doc, c, r);
    if (!o)
        return TB_ENOMEM;
    if (index == n)
        return cJSON_AddItemToArray(cases, o) ? 0 : TB_ENOMEM;
    return cJSON_ReplaceItemInArray(cases, index, o) ? 0 : TB_ENOMEM;
}

/* Set doc[key] = v (taken over), replacing a previous value. */
static int set_member(cJSON *doc, const char *key, cJSON *v)
{
    if (!v)
        return TB_ENOMEM;
    if (cJSON_GetObjectItemCaseSensitive(doc, key))
        return cJSON_ReplaceItemInObjectCaseSensitive(doc, key, v)
                   ? 0
                   : TB_ENOMEM;
    return cJSON_AddItemToObject(doc, key, v) ? 0 : TB_ENOMEM;
}

int tb_results_set_isolation(cJSON *doc, const char *mode)
{
    return set_member(doc, "isolation", cJSON_CreateString(mode));
}

int tb_results_set_nvtx(cJSON *doc, bool on)
{
    return set_member(doc, "nvtx", cJSON_CreateBool(on));
}

int tb_results_finish(cJSON *doc, bool complete)
{
    cJSON_ReplaceItemInObjectCaseSensitive(doc, "complete",
                                           cJSON_CreateBool(complete));
    cJSON *sum = cJSON_CreateObject();
    if (!sum)
        return TB_ENOMEM;
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    cJSON_AddNumberToObject(sum, "cases", cJSON_GetArraySize(cases));
    for (int s = TB_STATUS_OK; s <= TB_STATUS_TIMEOUT; s++) {
        int n = 0;
        const cJSON *c;
        cJSON_ArrayForEach(c, cases)
        {
            const cJSON *st = cJSON_GetObjectItemCaseSensitive(c, "status");
            if (cJSON_IsString(st) &&
                !strcmp(st->valuestring, tb_status_name((tb_status)s)))
                n++;
        }
        cJSON_AddNumberToObject(sum, tb_status_name((tb_status)s), n);
    }
    cJSON_ReplaceItemInObjectCaseSensitive(doc, "summary", sum);
    return 0;
}

/* ---- CSV ---------------------------------------------------------------- */

typedef struct {
    char *buf;
    size_t len, cap;
    bool oom;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *nb = realloc(b->buf, cap);
        if (!nb) {
            b->oom = true;
            return;
        }
        b->buf = nb;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, s, n);
    b->len += n;
    b->buf[b->len] = '\0';
}

/* One CSV field, quoted by libcsv, preceded by a comma unless first. */
static void field(sbuf *b, bool first, const char *s)
{
    size_t n = strlen(s);
    char small[512];
    char *q = small;
    size_t need = csv_write(NULL, 0, s, n);
    if (need > sizeof small && !(q = malloc(need))) {
        b->oom = true;
        return;
    }
    csv_write(q, need, s, n);
    if (!first)
        sb_put(b, ",", 1);
    sb_put(b, q, need);
    if (q != small)
        free(q);
}

static const char *const csv_cols[] = {
    "id", "op", "dtype", "shapes", "params", "backend", "backend_params",
    "impl", "status", "n", "iters_per_sample", "min_ns", "median_ns",
    "mean_ns", "stddev_ns", "mad_ns", "p5_ns", "p95_ns", "ci_low_ns",
    "ci_high_ns", "stop_reason", "gb_s", "gflop_s", "items_s",
    "kernel_launches", "allocs", "alloc_bytes", "peak_bytes",
    "minor_faults", "major_faults", "vol_ctx_switches",
    "invol_ctx_switches", "max_abs_err", "max_rel_err", "message",
    "instructions",
};

/* Where each column lives in a case record: "" = the case itself. */
static const char *col_parent(const char *col)
{
    static const char *const stats[] = {
        "n", "iters_per_sample", "min_ns", "median_ns", "mean_ns",
        "stddev_ns", "mad_ns", "p5_ns", "p95_ns", "ci_low_ns", "ci_high_ns",
        "stop_reason"};
    for (size_t i = 0; i < sizeof stats / sizeof stats[0]; i++)
        if (!strcmp(col, stats[i]))
            return "stats";
    if (!strcmp(col, "gb_s") || !strcmp(col, "gflop_s") ||
        !strcmp(col, "items_s"))
        return "throughput";
    if (!strcmp(col, "max_abs_err") || !strcmp(col, "max_rel_err"))
        return "check";
    if (!strcmp(col, "kernel_launches") || !strcmp(col, "allocs") ||
        !strcmp(col, "alloc_bytes") || !strcmp(col, "peak_bytes") ||
        strstr(col, "faults") || strstr(col, "ctx_switches"))
        return "counters";
    return "";
}

/* Compact text of a JSON value for a CSV cell ("" for null/absent). */
static void cell(const cJSON *v, char *out, size_t len)
{
    out[0] = '\0';
    if (!v || cJSON_IsNull(v))
        return;
    if (cJSON_IsString(v)) {
        snprintf(out, len, "%s", v->valuestring);
    } else if (cJSON_IsNumber(v)) {
        snprintf(out, len, "%.10g", v->valuedouble);
    } else if (cJSON_IsBool(v)) {
        snprintf(out, len, "%s", cJSON_IsTrue(v) ? "true" : "false");
    } else {
        char *s = cJSON_PrintUnformatted(v);
        if (s) {
            snprintf(out, len, "%s", s);
            free(s);
        }
    }
}

int tb_results_csv(const cJSON *doc, char **out)
{
    sbuf b = {0};
    size_t ncol = sizeof csv_cols / sizeof csv_cols[0];
    for (size_t i = 0; i < ncol; i++)
        field(&b, i == 0, csv_cols[i]);
    sb_put(&b, "\n", 1);
    const cJSON *c;
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    char text[2048];
    cJSON_ArrayForEach(c, cases)
    {
        for (size_t i = 0; i < ncol; i++) {
            const char *par = col_parent(csv_cols[i]);
            const cJSON *from =
                par[0] ? cJSON_GetObjectItemCaseSensitive(c, par) : c;
            const cJSON *v =
                cJSON_GetObjectItemCaseSensitive(from, csv_cols[i]);
            if (!strcmp(csv_cols[i], "instructions")) /* the count only */
                v = cJSON_GetObjectItemCaseSensitive(v, "per_iter");
            cell(v, text, sizeof text);
            field(&b, i == 0, text);
        }
        sb_put(&b, "\n", 1);
    }
    if (b.oom) {
        free(b.buf);
        return TB_ENOMEM;
    }
    *out = b.buf;
    return 0;
}

int tb_results_write(const cJSON *doc, const char *dir, char *err,
                     size_t errlen)
{
    char path[PATH_MAX];
    char *json = cJSON_Print(doc);
    char *csv = NULL;
    int rc = TB_ENOMEM;
    if (!json || tb_results_csv(doc, &csv)) {
        snprintf(err, errlen, "%s: out of memory formatting results", dir);
        goto out;
    }
    snprintf(path, sizeof path, "%s/results.json", dir);
    rc = tb_write_atomic(path, json, strlen(json), err, errlen);
    if (rc)
        goto out;
    snprintf(path, sizeof path, "%s/results.csv", dir);
    rc = tb_write_atomic(path, csv, strlen(csv), err, errlen);
out:
    free(json);
    free(csv);
    return rc;
}

int tb_results_set_shard(cJSON *doc, cJSON *shard)
{
    return set_member(doc, "shard", shard);
}

int tb_results_put_case(cJSON *doc, cJSON **slot, const tb_case *c,
                        const tb_result *r)
{
    cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    cJSON *o = case_record(doc, c, r);
    if (!o)
        return TB_ENOMEM;
    /* cJSON 1.7.13+ appends in O(1) (the first child keeps the last in
     * its prev); replacing via the pointer is O(1) too. */
    if (*slot ? !cJSON_ReplaceItemViaPointer(cases, *slot, o)
              : !cJSON_AddItemToArray(cases, o)) {
        cJSON_Delete(o);
        return TB_ENOMEM;
    }
    *slot = o;
    return 0;
}
