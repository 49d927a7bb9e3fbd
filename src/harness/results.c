#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csv.h>

#include "instr.h"
#include "peak.h"
#include "gpu_peak.h"
#include "../base/error.h"
#include "../base/fileio.h"
#include "../base/result_schema.h"
#include "../base/strbuf.h"

_Static_assert((int)TB_DEV_NDIR == (int)TB_RES_NDIRS,
               "cupti.memcpy has one member per tb_dev_counts direction");

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
    cJSON *w = cJSON_AddObjectToObject(o, TB_RES_KEY(warmup));
    cJSON_AddNumberToObject(w, TB_RES_KEY(min_time_s), c->warmup.min_time_s);
    cJSON_AddNumberToObject(w, TB_RES_KEY(min_iters), c->warmup.min_iters);
    cJSON *m = cJSON_AddObjectToObject(o, TB_RES_KEY(measure));
    cJSON_AddNumberToObject(m, TB_RES_KEY(sample_time_s),
                            c->measure.sample_time_s);
    cJSON_AddNumberToObject(m, TB_RES_KEY(min_samples), c->measure.min_samples);
    cJSON_AddNumberToObject(m, TB_RES_KEY(max_samples), c->measure.max_samples);
    cJSON_AddNumberToObject(m, TB_RES_KEY(ci_target), c->measure.ci_target);
    cJSON_AddNumberToObject(m, TB_RES_KEY(max_time_s), c->measure.max_time_s);
    cJSON_AddNumberToObject(m, TB_RES_KEY(rounds), c->measure.rounds);
    cJSON_AddNumberToObject(m, TB_RES_KEY(timeout_s), c->measure.timeout_s);
    cJSON_AddBoolToObject(m, TB_RES_KEY(breakdown), c->measure.breakdown);
    cJSON_AddNumberToObject(m, TB_RES_KEY(breakdown_steps),
                            c->measure.breakdown_steps);
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
    cJSON_AddStringToObject(doc, TB_RES_KEY(schema), TB_RES_SCHEMA);
    cJSON_AddBoolToObject(doc, TB_RES_KEY(complete), false);
    cJSON_AddItemToObject(doc, TB_RES_KEY(env), env ? env : cJSON_CreateNull());
    cJSON_AddNullToObject(doc, TB_RES_KEY(peaks));
    cJSON *t = cJSON_AddObjectToObject(doc, TB_RES_KEY(timer));
    cJSON_AddStringToObject(t, TB_RES_KEY(source), "CLOCK_MONOTONIC");
    cJSON_AddNumberToObject(t, TB_RES_KEY(overhead_ns), timer_overhead_ns);
    cJSON *cf = cJSON_AddArrayToObject(doc, TB_RES_KEY(config));
    for (int i = 0; i < n_cfgs; i++) {
        cJSON *c = measure_json(&cfgs[i]);
        cJSON_AddStringToObject(c, TB_RES_KEY(path), cfgs[i].path);
        cJSON_AddStringToObject(c, TB_RES_KEY(name), cfgs[i].name);
        /* a JSON integer, digit for digit: a double would round seeds
         * above 2^53 */
        char sd[24];
        snprintf(sd, sizeof sd, "%llu", (unsigned long long)cfgs[i].seed);
        cJSON_AddRawToObject(c, TB_RES_KEY(seed), sd);
        cJSON_AddStringToObject(c, TB_RES_KEY(text),
                                cfgs[i].text ? cfgs[i].text : "");
        cJSON_AddItemToArray(cf, c);
    }
    cJSON_AddObjectToObject(doc, TB_RES_KEY(summary));
    cJSON_AddArrayToObject(doc, TB_RES_KEY(cases));
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
    if (cJSON_GetObjectItemCaseSensitive(doc, TB_RES_KEY(peaks))
            ? !cJSON_ReplaceItemInObjectCaseSensitive(doc, TB_RES_KEY(peaks), v)
            : !cJSON_AddItemToObject(doc, TB_RES_KEY(peaks), v)) {
        cJSON_Delete(v);
        return TB_ENOMEM;
    }
    return 0;
}

/* The bytes of a case's arrays -- its inputs and the outputs that are not
 * an input's buffer -- for the ops whose kernels store cached and so keep
 * that much in the caches from call to call: in-place forms and
 * optimizers (the cpu backend never streams an output that is an input,
 * drv_ew.c) and reductions (nothing large to store); 0 for the others,
 * whose kernels may stream their output (tb_roofline_in). */
static double case_footprint(const tb_case *c)
{
    const tb_op *op = c->op;
    if (op->category != TB_CAT_INPLACE && op->category != TB_CAT_OPTIMIZER &&
        op->category != TB_CAT_REDUCTION)
        return 0;
    double f = 0;
    for (int i = 0; i < op->n_in; i++)
        f += (double)tb_shape_numel(&c->in[i]) *
             (double)tb_dtype_size(tb_op_in_dtype(op, i, c->dtype));
    for (int o = 0; o < op->n_out; o++)
        if (!op->alias || op->alias[o] < 0)
            f += (double)tb_shape_numel(&c->out[o]) *
                 (double)tb_dtype_size(tb_op_out_dtype(op, o, c->dtype));
    return f;
}

/* The case's roofline against the document's peaks, or null: no peaks,
 * the case did not run, it ran on a backend without a "threads" axis
 * (not the host CPU the peaks describe), or the peaks have no figure
 * for its thread count / ISA. */
static cJSON *roofline_json(const cJSON *doc, const tb_case *c,
                            const tb_result *r)
{
    const cJSON *peaks = cJSON_GetObjectItemCaseSensitive(doc,
                                                          TB_RES_KEY(peaks));
    tb_roofline_in in = {
        .flops = c->flops,
        .bytes = c->bytes,
        .time_ns = r->stats.median,
        .dtype = c->dtype,
        .threads = 0,
        .isa = NULL,
        .bw_kernel = tb_roofline_bw_kernel(c->op),
        .flop_dtype = tb_roofline_flop_dtype(c->op),
        .footprint_bytes = case_footprint(c),
    };
    for (int i = 0; i < c->n_axes; i++) {
        if (!strcmp(c->axis_name[i], TB_RES_KEY(threads)))
            in.threads = atoi(c->axis_value[i]);
        else if (!strcmp(c->axis_name[i], TB_RES_KEY(isa)))
            in.isa = c->axis_value[i];
    }
    /* isa=auto ran at the run's level (env.cpu.isa_used): its roof is
     * that level's, not the best figure of any level (on a Zen 4 avx2's
     * and avx512's FMA rates are equal, and the noisier one won, naming
     * a level the case did not run at; audit_speed.py reads isa_used) */
    const bool auto_isa = in.isa && !strcmp(in.isa, "auto");
    if (auto_isa) {
        const cJSON *used = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(doc, TB_RES_KEY(env)),
                TB_RES_KEY(cpu)),
            TB_RES_KEY(isa_used));
        if (cJSON_IsString(used) && used->valuestring[0])
            in.isa = used->valuestring;
    }
    tb_roofline rl;
    cJSON *o = NULL;
    if (r->status == TB_STATUS_OK && cJSON_IsObject(peaks) &&
        c->backend->peak) { /* a GPU backend: the GPU's peaks */
        if (tb_gpu_roofline(peaks, &in, &rl) == 0)
            o = tb_roofline_json(&rl);
    } else if (r->status == TB_STATUS_OK && cJSON_IsObject(peaks) &&
               in.threads > 0) {
        /* A bf16/f16 case computes in 16-bit only where its op runs on
         * a GEMM (matmul, linear, conv2d, conv2d_nobias) and its kernel
         * is of the level its dtype's dot-product figure belongs to
         * (impl "matmul_bf16_avx512bf16" at isa avx512bf16: vdpbf16ps);
         * every other 16-bit row widens and computes in f32
         * (gelu_bf16_avx512 at that level too, and exp_bf16_avx512bf16,
         * whose level only narrows), so its compute roof is f32's. */
        const char *sfx = r->impl ? strrchr(r->impl, '_') : NULL;
        const tb_op_id oid = c->op->id;
        const bool gemm_op = c->op->category == TB_CAT_MATMUL ||
                             oid == TB_OP_linear || oid == TB_OP_conv2d ||
                             oid == TB_OP_conv2d_nobias;
        if (tb_dtype_is_half(in.dtype) &&
            (!gemm_op || !sfx || !in.isa || strcmp(sfx + 1, in.isa)))
            in.dtype = TB_F32;
        /* copy_h2d and copy_d2h count the bytes that cross the link, once
         * (a GPU's roof); on the host CPU both sides are host memory:
         * the copy reads them and writes them, what the copy roof's
         * bytes count (copy_d2d, copy: tb_bytes_io). */
        if (oid == TB_OP_copy_h2d || oid == TB_OP_copy_d2h)
            in.bytes *= 2;
        int rc = tb_roofline_compute(peaks, &in, &rl);
        /* an isa=auto case whose level the peaks lack (peaks of another
         * build): the best figure of any level, as before isa_used */
        if (rc == TB_ENOTFOUND && auto_isa) {
            in.isa = NULL;
            rc = tb_roofline_compute(peaks, &in, &rl);
        }
        /* A bf16/f16 case without a 16-bit FMA figure in the peaks
         * (`tbench peak` measures f32 and f64, and bf16's dot product
         * at avx512bf16): f32's, the arithmetic the cpu backend's 16-bit
         * rows do (widen, compute in f32, round once); peak_dtype says
         * so. */
        if (rc == TB_ENOTFOUND && tb_dtype_is_half(in.dtype)) {
            in.dtype = TB_F32;
            rc = tb_roofline_compute(peaks, &in, &rl);
        }
        if (rc == 0)
            o = tb_roofline_json(&rl);
    }
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
        cJSON_AddNullToObject(o, TB_RES_KEY(cupti));
        cJSON_AddStringToObject(o, TB_RES_KEY(cupti_reason), why);
        return;
    }
    cJSON *cu = cJSON_AddObjectToObject(o, TB_RES_KEY(cupti));
    cJSON_AddNumberToObject(cu, TB_RES_KEY(iterations), (double)d->iters);
    cJSON_AddNumberToObject(cu, TB_RES_KEY(kernel_launches),
                            d->kernel_launches);
    cJSON *mc = cJSON_AddObjectToObject(cu, TB_RES_KEY(memcpy));
    for (int i = 0; mc && i < TB_DEV_NDIR; i++) {
        cJSON *m = cJSON_AddObjectToObject(mc, tb_res_dir_name(i));
        cJSON_AddNumberToObject(m, TB_RES_KEY(count), d->memcpy_count[i]);
        cJSON_AddNumberToObject(m, TB_RES_KEY(bytes), d->memcpy_bytes[i]);
    }
    cJSON_AddNumberToObject(cu, TB_RES_KEY(memsets), d->memsets);
    cJSON_AddNumberToObject(cu, TB_RES_KEY(memset_bytes), d->memset_bytes);
    cJSON_AddNumberToObject(cu, TB_RES_KEY(device_allocs), d->device_allocs);
    cJSON_AddNumberToObject(cu, TB_RES_KEY(device_alloc_bytes),
                            d->device_alloc_bytes);
    cJSON_AddNumberToObject(cu, TB_RES_KEY(device_frees), d->device_frees);
    cJSON_AddNumberToObject(cu, TB_RES_KEY(device_free_bytes),
                            d->device_free_bytes);
    cJSON *ks = cJSON_AddArrayToObject(cu, TB_RES_KEY(kernels));
    for (int i = 0; ks && i < d->n_kernels; i++) {
        cJSON *k = cJSON_CreateObject();
        cJSON_AddItemToArray(ks, k);
        cJSON_AddStringToObject(k, TB_RES_KEY(name), d->kernel[i].name);
        cJSON_AddNumberToObject(k, TB_RES_KEY(count), d->kernel[i].count);
        cJSON_AddNumberToObject(k, TB_RES_KEY(device_ns), d->kernel[i].ns);
    }
    cJSON_AddNumberToObject(cu, TB_RES_KEY(kernels_unlisted),
                            d->kernels_unlisted);
    cJSON_AddNullToObject(o, TB_RES_KEY(cupti_reason));
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
    cJSON_AddStringToObject(o, TB_RES_KEY(requested),
                            tb_instr_source_name(c->measure.instructions));
    cJSON_AddItemToObject(o, TB_RES_KEY(per_iter),
                          num_or_null(r->instructions, r->instr_ok));
    cJSON_AddItemToObject(o, TB_RES_KEY(source),
                          r->instr_ok ? cJSON_CreateString(r->instr_source)
                                      : cJSON_CreateNull());
    cJSON_AddItemToObject(o, TB_RES_KEY(isa),
                          r->instr_ok && r->instr_isa[0]
                              ? cJSON_CreateString(r->instr_isa)
                              : cJSON_CreateNull());
    cJSON_AddItemToObject(o, TB_RES_KEY(iters),
                          num_or_null((double)r->instr_iters, r->instr_ok));
    cJSON_AddItemToObject(o, TB_RES_KEY(reason),
                          r->instr_reason[0]
                              ? cJSON_CreateString(r->instr_reason)
                              : cJSON_CreateNull());
    return o;
}

/* "breakdown" and "breakdown_reason" (docs/FORMAT.md, "Per-op
 * breakdown"): a workload step's parts from its breakdown pass, or null
 * with the reason (null without one for an op that is no workload). */
static void add_breakdown(cJSON *o, const tb_case *c, const tb_result *r)
{
    const tb_wl_breakdown *bd = &r->breakdown;
    bool wl = c->op->category == TB_CAT_WORKLOAD;
    if (r->status != TB_STATUS_OK || !bd->valid) {
        char why[200];
        if (!wl)
            why[0] = '\0';
        else if (r->status != TB_STATUS_OK)
            snprintf(why, sizeof why, "not measured: the case is %s",
                     tb_status_name(r->status));
        else
            snprintf(why, sizeof why, "%s",
                     bd->reason[0] ? bd->reason
                                   : "not measured: the run stopped "
                                     "before the case's last round");
        cJSON_AddNullToObject(o, TB_RES_KEY(breakdown));
        cJSON_AddItemToObject(o, TB_RES_KEY(breakdown_reason),
                              why[0] ? cJSON_CreateString(why)
                                     : cJSON_CreateNull());
        return;
    }
    cJSON *b = cJSON_AddObjectToObject(o, TB_RES_KEY(breakdown));
    double gap = bd->step_ns - bd->parts_ns;
    cJSON_AddNumberToObject(b, TB_RES_KEY(steps), bd->steps);
    cJSON_AddNumberToObject(b, TB_RES_KEY(kept_steps), bd->kept);
    cJSON_AddStringToObject(b, TB_RES_KEY(statistic),
                            "mean of the steps at or below the median");
    cJSON_AddNumberToObject(b, TB_RES_KEY(step_ns), bd->step_ns);
    cJSON_AddNumberToObject(b, TB_RES_KEY(parts_ns), bd->parts_ns);
    cJSON_AddNumberToObject(b, TB_RES_KEY(gap_ns), gap);
    cJSON_AddNumberToObject(b, TB_RES_KEY(gap_fraction),
                            bd->step_ns > 0 ? gap / bd->step_ns : 0);
    cJSON *ps = cJSON_AddArrayToObject(b, TB_RES_KEY(parts));
    for (int i = 0; ps && i < bd->n_parts; i++) {
        const tb_wl_part *q = &bd->part[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToArray(ps, e);
        cJSON_AddStringToObject(e, TB_RES_KEY(op),
                                tb_op_get((tb_op_id)q->op)->name);
        cJSON_AddStringToObject(e, TB_RES_KEY(kernel), q->kernel);
        cJSON_AddStringToObject(e, TB_RES_KEY(phase),
                                tb_wl_phase_name(q->phase));
        cJSON_AddNumberToObject(e, TB_RES_KEY(calls), q->calls);
        cJSON_AddNumberToObject(e, TB_RES_KEY(ns), q->ns);
        cJSON_AddNumberToObject(e, TB_RES_KEY(share),
                                bd->step_ns > 0 ? q->ns / bd->step_ns : 0);
    }
    cJSON_AddNullToObject(o, TB_RES_KEY(breakdown_reason));
}

/* measure.cache (instr.h): null when not asked for; else each event per
 * iteration (null when not counted), IPC where cycles and instructions
 * both are, the source, whether simulated and the simulated geometry,
 * the ISA that ran, the iterations and the reason for a null or the
 * note on a simulation. */
static cJSON *cache_json(const tb_case *c, const tb_result *r)
{
    const tb_cache_counts *cc = &r->cache;
    if (!cc->requested)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    static const char *const names[TB_CACHE_NEV] = {
        [TB_CACHE_CYCLES] = TB_RES_KEY(cycles),
        [TB_CACHE_INSTRUCTIONS] = TB_RES_KEY(instructions),
        [TB_CACHE_L1D_MISSES] = TB_RES_KEY(l1d_misses),
        [TB_CACHE_LLC_MISSES] = TB_RES_KEY(llc_misses),
        [TB_CACHE_DTLB_MISSES] = TB_RES_KEY(dtlb_misses),
    };
    cJSON_AddStringToObject(o, TB_RES_KEY(requested),
                            tb_instr_source_name(c->measure.cache));
    cJSON_AddItemToObject(o, TB_RES_KEY(source),
                          cc->ok ? cJSON_CreateString(cc->source)
                                 : cJSON_CreateNull());
    cJSON_AddBoolToObject(o, TB_RES_KEY(simulated), cc->ok && cc->simulated);
    cJSON_AddItemToObject(o, TB_RES_KEY(isa),
                          cc->ok && cc->isa[0] ? cJSON_CreateString(cc->isa)
                                               : cJSON_CreateNull());
    cJSON_AddItemToObject(o, TB_RES_KEY(iters),
                          num_or_null((double)cc->iters, cc->ok));
    for (int i = 0; i < TB_CACHE_NEV; i++) {
        cJSON_AddItemToObject(o, names[i],
                              num_or_null(cc->v[i], cc->ok && !isnan(cc->v[i])));
        if (i == TB_CACHE_INSTRUCTIONS) {
            double ipc = cc->v[TB_CACHE_INSTRUCTIONS] /
                         cc->v[TB_CACHE_CYCLES];
            cJSON_AddItemToObject(o, TB_RES_KEY(ipc),
                                  num_or_null(ipc, cc->ok && isfinite(ipc)));
        }
    }
    cJSON_AddItemToObject(o, TB_RES_KEY(d1),
                          cc->ok && cc->d1[0] ? cJSON_CreateString(cc->d1)
                                              : cJSON_CreateNull());
    cJSON_AddItemToObject(o, TB_RES_KEY(ll),
                          cc->ok && cc->ll[0] ? cJSON_CreateString(cc->ll)
                                              : cJSON_CreateNull());
    cJSON_AddItemToObject(o, TB_RES_KEY(reason),
                          cc->reason[0] ? cJSON_CreateString(cc->reason)
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
    cJSON_AddStringToObject(o, TB_RES_KEY(source), "backend device timer");
    cJSON_AddNumberToObject(o, TB_RES_KEY(median_ns), med);
    cJSON_AddNumberToObject(o, TB_RES_KEY(min_ns), d[0]);
    cJSON_AddNumberToObject(o, TB_RES_KEY(max_ns), d[n - 1]);
    cJSON_AddNumberToObject(o, TB_RES_KEY(overhead_ns), wmed - med);
    cJSON_AddItemToObject(o, TB_RES_KEY(samples_ns),
                          cJSON_CreateDoubleArray(r->device_ns, (int)n));
    free(d);
    free(w);
    return o;
}

/* model: the op table's cost model of the case. */
static void add_model(cJSON *o, const tb_case *c)
{
    cJSON *md = cJSON_AddObjectToObject(o, TB_RES_KEY(model));
    cJSON_AddNumberToObject(md, TB_RES_KEY(flops), c->flops);
    cJSON_AddNumberToObject(md, TB_RES_KEY(bytes), c->bytes);
    cJSON_AddNumberToObject(md, TB_RES_KEY(items), c->items);
    cJSON_AddNumberToObject(md, TB_RES_KEY(reduce_len), c->reduce_len);
}

/* check: the correctness check against the reference, or null. */
static void add_check(cJSON *o, const tb_result *r)
{
    if (!r->checked) {
        cJSON_AddNullToObject(o, TB_RES_KEY(check));
        return;
    }
    cJSON *ck = cJSON_AddObjectToObject(o, TB_RES_KEY(check));
    cJSON_AddBoolToObject(ck, TB_RES_KEY(passed), r->check.passed);
    cJSON_AddStringToObject(ck, TB_RES_KEY(method), r->check.method);
    cJSON_AddNumberToObject(ck, TB_RES_KEY(max_abs_err),
                            r->check.max_abs_err);
    cJSON_AddNumberToObject(ck, TB_RES_KEY(max_rel_err),
                            r->check.max_rel_err);
    cJSON_AddNumberToObject(ck, TB_RES_KEY(rtol), r->check.rtol);
    cJSON_AddNumberToObject(ck, TB_RES_KEY(atol), r->check.atol);
    cJSON_AddNumberToObject(ck, TB_RES_KEY(n_bad), (double)r->check.n_bad);
}

/* stats: the samples' statistics of a timed case. */
static void add_stats(cJSON *o, const tb_result *r)
{
    const tb_stats *s = &r->stats;
    cJSON *st = cJSON_AddObjectToObject(o, TB_RES_KEY(stats));
    cJSON_AddNumberToObject(st, TB_RES_KEY(n), (double)s->n);
    cJSON_AddNumberToObject(st, TB_RES_KEY(iters_per_sample),
                            (double)r->iters_per_sample);
    cJSON_AddNumberToObject(st, TB_RES_KEY(min_ns), s->min);
    cJSON_AddNumberToObject(st, TB_RES_KEY(max_ns), s->max);
    cJSON_AddNumberToObject(st, TB_RES_KEY(median_ns), s->median);
    cJSON_AddNumberToObject(st, TB_RES_KEY(mean_ns), s->mean);
    cJSON_AddNumberToObject(st, TB_RES_KEY(stddev_ns), s->stddev);
    cJSON_AddNumberToObject(st, TB_RES_KEY(mad_ns), s->mad);
    cJSON_AddNumberToObject(st, TB_RES_KEY(p5_ns), s->p5);
    cJSON_AddNumberToObject(st, TB_RES_KEY(p95_ns), s->p95);
    cJSON_AddNumberToObject(st, TB_RES_KEY(ci_low_ns), s->ci_low);
    cJSON_AddNumberToObject(st, TB_RES_KEY(ci_high_ns), s->ci_high);
    cJSON_AddNumberToObject(st, TB_RES_KEY(ci_rel),
                            s->median > 0
                                ? (s->ci_high - s->ci_low) / s->median
                                : 0);
    cJSON *ol = cJSON_AddObjectToObject(st, TB_RES_KEY(outliers));
    cJSON_AddNumberToObject(ol, TB_RES_KEY(low_mild), s->outliers.low_mild);
    cJSON_AddNumberToObject(ol, TB_RES_KEY(low_severe),
                            s->outliers.low_severe);
    cJSON_AddNumberToObject(ol, TB_RES_KEY(high_mild),
                            s->outliers.high_mild);
    cJSON_AddNumberToObject(ol, TB_RES_KEY(high_severe),
                            s->outliers.high_severe);
    cJSON_AddStringToObject(st, TB_RES_KEY(stop_reason), r->stop_reason);
    cJSON_AddNumberToObject(st, TB_RES_KEY(rounds), r->rounds);
    cJSON_AddItemToObject(st, TB_RES_KEY(round_medians_ns),
                          cJSON_CreateDoubleArray(r->round_medians_ns,
                                                  r->rounds));
    cJSON_AddItemToObject(st, TB_RES_KEY(samples_ns),
                          cJSON_CreateDoubleArray(r->samples_ns,
                                                  (int)r->n_samples));
}

/* throughput: the cost model over the median. */
static void add_throughput(cJSON *o, const tb_case *c, const tb_result *r)
{
    cJSON *tp = cJSON_AddObjectToObject(o, TB_RES_KEY(throughput));
    cJSON_AddItemToObject(tp, TB_RES_KEY(gb_s),
                          num_or_null(r->gb_s, c->bytes > 0));
    cJSON_AddItemToObject(tp, TB_RES_KEY(gflop_s),
                          num_or_null(r->gflop_s, c->flops > 0));
    cJSON_AddNumberToObject(tp, TB_RES_KEY(items_s), r->items_s);
    /* An optimizer call is one step of the whole parameter vector. */
    cJSON_AddItemToObject(
        tp, TB_RES_KEY(steps_s),
        num_or_null(r->stats.median > 0 ? 1e9 / r->stats.median : 0,
                    c->op->category == TB_CAT_OPTIMIZER &&
                        r->stats.median > 0));
}

/* counters: per iteration, in the schema's order (TB_RES_COUNTERS). */
static void add_counters(cJSON *o, const tb_result *r)
{
    cJSON *ct = cJSON_AddObjectToObject(o, TB_RES_KEY(counters));
    for (int i = 0; i < TB_RES_NCOUNTERS_ALL; i++)
        cJSON_AddNumberToObject(ct, tb_res_counter_name(i),
                                r->counters.v[i]);
}

/* timing: the phases' wall times and the device timer's figures. */
static void add_timing(cJSON *o, const tb_result *r)
{
    cJSON *tm = cJSON_AddObjectToObject(o, TB_RES_KEY(timing));
    cJSON_AddNumberToObject(tm, TB_RES_KEY(timer_overhead_ns),
                            r->timer_overhead_ns);
    cJSON_AddNumberToObject(tm, TB_RES_KEY(warmup_iters),
                            (double)r->warmup_iters);
    cJSON_AddNumberToObject(tm, TB_RES_KEY(warmup_ns), r->warmup_ns);
    cJSON_AddNumberToObject(tm, TB_RES_KEY(sampling_ns), r->sampling_ns);
    cJSON_AddItemToObject(tm, TB_RES_KEY(device), device_json(r));
    cJSON_AddBoolToObject(tm, TB_RES_KEY(prepared_samples), r->prepped);
    cJSON_AddNumberToObject(tm, TB_RES_KEY(state_restores),
                            (double)r->state_restores);
}

/* Where it ran: the machine, and the shard of a sharded run (the
 * document's "shard", tb_results_set_shard), so that the records of a
 * merged file still say it. */
static void add_where(cJSON *o, const cJSON *doc, const tb_case *c)
{
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(doc,
                                                        TB_RES_KEY(env));
    const cJSON *host = cJSON_GetObjectItemCaseSensitive(
        env, TB_RES_KEY(hostname));
    cJSON_AddItemToObject(o, TB_RES_KEY(host),
                          cJSON_IsString(host)
                              ? cJSON_CreateString(host->valuestring)
                              : cJSON_CreateNull());
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(doc,
                                                       TB_RES_KEY(shard));
    if (!cJSON_IsObject(sd)) {
        cJSON_AddNullToObject(o, TB_RES_KEY(shard));
        return;
    }
    cJSON *s = cJSON_AddObjectToObject(o, TB_RES_KEY(shard));
    cJSON_AddItemToObject(s, TB_RES_KEY(index), cJSON_Duplicate(
        cJSON_GetObjectItemCaseSensitive(sd, TB_RES_KEY(index)), 1));
    cJSON_AddItemToObject(s, TB_RES_KEY(count), cJSON_Duplicate(
        cJSON_GetObjectItemCaseSensitive(sd, TB_RES_KEY(count)), 1));
    cJSON_AddNumberToObject(s, TB_RES_KEY(plan_index), c->plan_index);
}

/* What the case is: id, op, dtype, forms, shapes, params, backend and
 * its axes. */
static void add_identity(cJSON *o, const tb_case *c)
{
    cJSON_AddStringToObject(o, TB_RES_KEY(id), c->id);
    cJSON_AddStringToObject(o, TB_RES_KEY(op), c->op->name);
    cJSON_AddStringToObject(o, TB_RES_KEY(category),
                            tb_op_category_name(c->op->category));
    cJSON_AddStringToObject(o, TB_RES_KEY(dtype), tb_dtype_name(c->dtype));
    cJSON_AddBoolToObject(o, TB_RES_KEY(alloc_outputs), c->alloc_outputs);
    cJSON_AddBoolToObject(o, TB_RES_KEY(transfers), c->transfers);
    if (c->layout != TB_LAYOUT_CONTIGUOUS) /* absent: contiguous */
        cJSON_AddStringToObject(o, TB_RES_KEY(layout),
                                tb_layout_name(c->layout));
    cJSON *sh = cJSON_AddArrayToObject(o, TB_RES_KEY(shapes));
    for (int i = 0; i < c->n_in; i++)
        cJSON_AddItemToArray(sh, shape_json(&c->in[i]));
    cJSON *osh = cJSON_AddArrayToObject(o, TB_RES_KEY(out_shapes));
    for (int i = 0; i < c->op->n_out; i++)
        cJSON_AddItemToArray(osh, shape_json(&c->out[i]));
    cJSON *pr = cJSON_AddObjectToObject(o, TB_RES_KEY(params));
    for (int i = 0; i < c->op->n_params; i++) {
        if (!tb_params_has(&c->params, i))
            continue;
        const tb_param_spec *s = &c->op->params[i];
        const char *t = s->kind == TB_PARAM_STRING
                            ? tb_params_str(&c->params, i)
                            : NULL;
        if (t)
            cJSON_AddStringToObject(pr, s->name, t);
        else if (s->kind == TB_PARAM_BOOL)
            cJSON_AddBoolToObject(pr, s->name, c->params.v[i] != 0);
        else
            cJSON_AddNumberToObject(pr, s->name, c->params.v[i]);
    }
    cJSON_AddStringToObject(o, TB_RES_KEY(backend), c->backend->name);
    cJSON *bp = cJSON_AddObjectToObject(o, TB_RES_KEY(backend_params));
    for (int i = 0; i < c->n_axes; i++)
        cJSON_AddStringToObject(bp, c->axis_name[i], c->axis_value[i]);
}

/* The case record of docs/FORMAT.md ("A case"), members in its order. */
static cJSON *case_record(const cJSON *doc, const tb_case *c,
                          const tb_result *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    add_identity(o, c);
    cJSON_AddItemToObject(o, TB_RES_KEY(impl),
                          r->impl ? cJSON_CreateString(r->impl)
                                  : cJSON_CreateNull());
    cJSON_AddStringToObject(o, TB_RES_KEY(status), tb_status_name(r->status));
    cJSON_AddItemToObject(o, TB_RES_KEY(message),
                          r->message[0] ? cJSON_CreateString(r->message)
                                        : cJSON_CreateNull());
    add_model(o, c);
    add_check(o, r);
    if (r->status == TB_STATUS_OK) {
        add_stats(o, r);
        add_throughput(o, c, r);
        add_counters(o, r);
        add_timing(o, r);
    } else {
        cJSON_AddNullToObject(o, TB_RES_KEY(stats));
        cJSON_AddNullToObject(o, TB_RES_KEY(throughput));
        cJSON_AddNullToObject(o, TB_RES_KEY(counters));
        cJSON_AddNullToObject(o, TB_RES_KEY(timing));
    }
    cJSON_AddItemToObject(o, TB_RES_KEY(roofline), roofline_json(doc, c, r));
    add_cupti(o, r);
    cJSON_AddItemToObject(o, TB_RES_KEY(instructions), instr_json(c, r));
    cJSON_AddItemToObject(o, TB_RES_KEY(cache), cache_json(c, r));
    add_breakdown(o, c, r);
    add_where(o, doc, c);
    cJSON_AddItemToObject(o, TB_RES_KEY(gpu_clock),
                          tb_gpu_clock_json(&r->clock));
    return o;
}

int tb_results_add_case(cJSON *doc, const tb_case *c, const tb_result *r)
{
    cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, TB_RES_KEY(cases));
    return tb_results_set_case(doc, cJSON_GetArraySize(cases), c, r);
}

int tb_results_set_case(cJSON *doc, int index, const tb_case *c,
                        const tb_result *r)
{
    cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, TB_RES_KEY(cases));
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
    return set_member(doc, TB_RES_KEY(isolation), cJSON_CreateString(mode));
}

int tb_results_set_nvtx(cJSON *doc, bool on)
{
    return set_member(doc, TB_RES_KEY(nvtx), cJSON_CreateBool(on));
}

int tb_results_finish(cJSON *doc, bool complete)
{
    cJSON_ReplaceItemInObjectCaseSensitive(doc, TB_RES_KEY(complete),
                                           cJSON_CreateBool(complete));
    cJSON *sum = tb_res_summary_of(
        cJSON_GetObjectItemCaseSensitive(doc, TB_RES_KEY(cases)));
    if (!sum)
        return TB_ENOMEM;
    cJSON_ReplaceItemInObjectCaseSensitive(doc, TB_RES_KEY(summary), sum);
    return 0;
}

/* ---- CSV ---------------------------------------------------------------- */

/* One CSV field, quoted by libcsv, preceded by a comma unless first. */
static void field(tb_strbuf *b, bool first, const char *s)
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
        tb_strbuf_put(b, ",", 1);
    tb_strbuf_put(b, q, need);
    if (q != small)
        free(q);
}

/* The columns (docs/FORMAT.md, "results.csv"): each the member of its
 * name in the case's object `in` (NULL: of the case itself), or the
 * member `key` of `in` when the column is named after the object. */
static const struct {
    const char *col, *in, *key;
} csv_cols[] = {
    {TB_RES_KEY(id), NULL, NULL},
    {TB_RES_KEY(op), NULL, NULL},
    {TB_RES_KEY(dtype), NULL, NULL},
    {TB_RES_KEY(shapes), NULL, NULL},
    {TB_RES_KEY(params), NULL, NULL},
    {TB_RES_KEY(backend), NULL, NULL},
    {TB_RES_KEY(backend_params), NULL, NULL},
    {TB_RES_KEY(impl), NULL, NULL},
    {TB_RES_KEY(status), NULL, NULL},
    {TB_RES_KEY(n), TB_RES_KEY(stats), NULL},
    {TB_RES_KEY(iters_per_sample), TB_RES_KEY(stats), NULL},
    {TB_RES_KEY(min_ns), TB_RES_KEY(stats), NULL},
    {TB_RES_KEY(median_ns), TB_RES_KEY(stats), NULL},
    {TB_RES_KEY(mean_ns), TB_RES_KEY(stats), NULL},
    {TB_RES_KEY(stddev_ns), TB_RES_KEY(stats), NULL},
    {TB_RES_KEY(mad_ns), TB_RES_KEY(stats), NULL},
    {TB_RES_KEY(p5_ns), TB_RES_KEY(stats), NULL},
    {TB_RES_KEY(p95_ns), TB_RES_KEY(stats), NULL},
    {TB_RES_KEY(ci_low_ns), TB_RES_KEY(stats), NULL},
    {TB_RES_KEY(ci_high_ns), TB_RES_KEY(stats), NULL},
    {TB_RES_KEY(stop_reason), TB_RES_KEY(stats), NULL},
    {TB_RES_KEY(gb_s), TB_RES_KEY(throughput), NULL},
    {TB_RES_KEY(gflop_s), TB_RES_KEY(throughput), NULL},
    {TB_RES_KEY(items_s), TB_RES_KEY(throughput), NULL},
/* the counters the schema marks for CSV */
#define CSV_CTR_1(k) {TB_RES_KEY(k), TB_RES_KEY(counters), NULL},
#define CSV_CTR_0(k)
#define CSV_CTR(e, k, m, u, s, t, c) CSV_CTR_##c(k)
    TB_RES_COUNTERS(CSV_CTR)
#undef CSV_CTR
#undef CSV_CTR_0
#undef CSV_CTR_1
    {TB_RES_KEY(max_abs_err), TB_RES_KEY(check), NULL},
    {TB_RES_KEY(max_rel_err), TB_RES_KEY(check), NULL},
    {TB_RES_KEY(message), NULL, NULL},
    /* the count only */
    {TB_RES_KEY(instructions), TB_RES_KEY(instructions),
     TB_RES_KEY(per_iter)},
    {TB_RES_KEY(l1d_misses), TB_RES_KEY(cache), TB_RES_KEY(l1d_misses)},
    {TB_RES_KEY(llc_misses), TB_RES_KEY(cache), TB_RES_KEY(llc_misses)},
};

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

/* The columns computed from a record, after csv_cols: the elements of
 * the first input, the backend's threads and isa axes (threads as a
 * number; both empty when the backend has no such axis) and the layout
 * ("contiguous" when the member is absent). */
static const char *const csv_more[] = {TB_RES_KEY(size), TB_RES_KEY(threads),
                                       TB_RES_KEY(isa), TB_RES_KEY(layout)};

static void csv_computed(const cJSON *c, size_t i, char *text, size_t len)
{
    text[0] = '\0';
    if (i == 0) {
        const cJSON *sh = cJSON_GetArrayItem(
            cJSON_GetObjectItemCaseSensitive(c, TB_RES_KEY(shapes)), 0);
        const cJSON *d;
        double n = 1;
        bool any = cJSON_IsArray(sh);
        cJSON_ArrayForEach(d, sh) n *= cJSON_IsNumber(d) ? d->valuedouble
                                                         : NAN;
        if (any && isfinite(n))
            snprintf(text, len, "%.17g", n);
        return;
    }
    if (i == 3) {
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(c, csv_more[i]);
        snprintf(text, len, "%s",
                 cJSON_IsString(l) ? l->valuestring : "contiguous");
        return;
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(c, TB_RES_KEY(backend_params)),
        csv_more[i]);
    if (!cJSON_IsString(v))
        return;
    if (i == 1) { /* a whole number, or empty ("auto" has no count) */
        char *end;
        long t = strtol(v->valuestring, &end, 10);
        if (end != v->valuestring && !*end && t > 0)
            snprintf(text, len, "%ld", t);
        return;
    }
    snprintf(text, len, "%s", v->valuestring);
}

/* The first line: "# tbench VERSION, commit C, host H, DATE", from the
 * document's env (any control character as '?'). */
static void csv_provenance(tb_strbuf *b, const cJSON *doc)
{
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(doc, TB_RES_KEY(env));
    const cJSON *bd = cJSON_GetObjectItemCaseSensitive(env, TB_RES_KEY(build));
    const char *ver = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(bd, TB_RES_KEY(tbench_version)));
    const char *git = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(bd, TB_RES_KEY(git_commit)));
    const char *host = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(env, TB_RES_KEY(hostname)));
    const char *date = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(env, TB_RES_KEY(date)));
    char line[512];
    snprintf(line, sizeof line, "# tbench %.40s, commit %.64s, host %.128s, "
             "%.40s; every other figure: results.json\n",
             ver ? ver : "?", git ? git : "?", host ? host : "?",
             date ? date : "?");
    for (char *p = line; p[1]; p++) /* the final newline stays */
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    tb_strbuf_put(b, line, strlen(line));
}

/* The CSV's first two lines: provenance and the column names. */
static void csv_head(tb_strbuf *b, const cJSON *doc)
{
    size_t ncol = sizeof csv_cols / sizeof csv_cols[0];
    size_t nmore = sizeof csv_more / sizeof csv_more[0];
    csv_provenance(b, doc);
    for (size_t i = 0; i < ncol; i++)
        field(b, i == 0, csv_cols[i].col);
    for (size_t i = 0; i < nmore; i++)
        field(b, false, csv_more[i]);
    tb_strbuf_put(b, "\n", 1);
}

/* The CSV row of case record c. */
static void csv_row(tb_strbuf *b, const cJSON *c)
{
    size_t ncol = sizeof csv_cols / sizeof csv_cols[0];
    size_t nmore = sizeof csv_more / sizeof csv_more[0];
    char text[2048];
    for (size_t i = 0; i < ncol; i++) {
        const cJSON *from =
            csv_cols[i].in
                ? cJSON_GetObjectItemCaseSensitive(c, csv_cols[i].in)
                : c;
        const char *key = csv_cols[i].key ? csv_cols[i].key
                                          : csv_cols[i].col;
        cell(cJSON_GetObjectItemCaseSensitive(from, key), text,
             sizeof text);
        field(b, i == 0, text);
    }
    for (size_t i = 0; i < nmore; i++) {
        csv_computed(c, i, text, sizeof text);
        field(b, false, text);
    }
    tb_strbuf_put(b, "\n", 1);
}

int tb_results_csv(const cJSON *doc, char **out)
{
    tb_strbuf b = {0};
    csv_head(&b, doc);
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(
                              doc, TB_RES_KEY(cases))) csv_row(&b, c);
    *out = tb_strbuf_take(&b);
    return *out ? 0 : TB_ENOMEM;
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

const cJSON *tb_results_warnings(const cJSON *doc)
{
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(doc,
                                                        TB_RES_KEY(env));
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(env,
                                                      TB_RES_KEY(warnings));
    return cJSON_IsArray(w) ? w : NULL;
}

int tb_results_set_shard(cJSON *doc, cJSON *shard)
{
    return set_member(doc, TB_RES_KEY(shard), shard);
}

int tb_results_put_case(cJSON *doc, cJSON *cases, cJSON **slot,
                        const tb_case *c, const tb_result *r)
{
    if (!cases)
        cases = cJSON_GetObjectItemCaseSensitive(doc, TB_RES_KEY(cases));
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

/* ---- a run's document in constant memory --------------------------------- */

struct tb_results_spool {
    int json_fd, csv_fd;     /* the two files (already unlinked) */
    off_t json_len, csv_len; /* what they hold */
    int n;                   /* records */
    int count[TB_RES_NSTATUSES]; /* of each status */
    char dir[PATH_MAX];      /* the folder they were made in, for messages */
};

/* A new file in the private folder dir, opened for reading and writing
 * and unlinked at once.  -1 with errno set on failure. */
static int spool_file(const char *dir, const char *name)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  0600);
    if (fd >= 0 && unlink(path) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int tb_results_spool_open(tb_results_spool **out, const char *dir,
                          char *err, size_t errlen)
{
    *out = NULL;
    tb_results_spool *sp = calloc(1, sizeof *sp);
    if (!sp) {
        snprintf(err, errlen, "out of memory");
        return TB_ENOMEM;
    }
    sp->json_fd = sp->csv_fd = -1;
    if (!dir) {
        const char *t = getenv("TMPDIR");
        dir = t && t[0] == '/' && strlen(t) < 4000 ? t : "/tmp";
    }
    char tmp[PATH_MAX];
    int made = snprintf(tmp, sizeof tmp, "%s/.tbench-spool-XXXXXX", dir);
    snprintf(sp->dir, sizeof sp->dir, "%s", dir);
    if (made >= (int)sizeof tmp) {
        snprintf(err, errlen, "%s: path too long", dir);
        free(sp);
        return TB_EIO;
    }
    /* mkdtemp: a new folder of mode 0700 that nobody else can write to,
     * so no link can be planted at the files' names */
    int e = 0;
    if (!mkdtemp(tmp)) {
        e = errno;
    } else {
        if ((sp->json_fd = spool_file(tmp, "cases.json")) < 0 ||
            (sp->csv_fd = spool_file(tmp, "cases.csv")) < 0)
            e = errno;
        if (rmdir(tmp) != 0 && !e)
            e = errno;
    }
    if (e) {
        snprintf(err, errlen, "%s: a spool folder: %s", dir, strerror(e));
        tb_results_spool_close(sp);
        return TB_EIO;
    }
    *out = sp;
    return 0;
}

void tb_results_spool_close(tb_results_spool *sp)
{
    if (!sp)
        return;
    if (sp->json_fd >= 0)
        close(sp->json_fd);
    if (sp->csv_fd >= 0)
        close(sp->csv_fd);
    free(sp);
}

int tb_results_spool_count(const tb_results_spool *sp)
{
    return sp ? sp->n : 0;
}

/* Append text[0..n) to fd at *len (pwrite: a failed append leaves the
 * file's first *len bytes as they were, and the next one overwrites its
 * remains).  0 or -1 with errno. */
static int spool_put(int fd, off_t *len, const char *text, size_t n)
{
    off_t at = *len;
    while (n) {
        ssize_t w = pwrite(fd, text, n, at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        text += w;
        n -= (size_t)w;
        at += w;
    }
    *len = at;
    return 0;
}

/* A record as it stands in the whole document's cJSON_Print: printed
 * alone, with two more tabs after each newline (it sits at depth 2, in
 * "cases" of the top object; cJSON escapes every newline inside a
 * string, so each newline here is one of the layout's), preceded by
 * ", " unless it is the first record. */
static void record_text(tb_strbuf *b, const cJSON *rec, bool first)
{
    char *t = cJSON_Print(rec);
    if (!t) {
        b->oom = true;
        return;
    }
    if (!first)
        tb_strbuf_put(b, ", ", 2);
    const char *p = t;
    for (const char *nl; (nl = strchr(p, '\n')); p = nl + 1) {
        tb_strbuf_put(b, p, (size_t)(nl - p));
        tb_strbuf_put(b, "\n\t\t", 3);
    }
    tb_strbuf_put(b, p, strlen(p));
    free(t);
}

int tb_results_spool_add(tb_results_spool *sp, const cJSON *rec,
                         char *err, size_t errlen)
{
    tb_strbuf j = {0}, c = {0};
    record_text(&j, rec, sp->n == 0);
    csv_row(&c, rec);
    int rc = 0;
    if (j.oom || c.oom) {
        snprintf(err, errlen, "out of memory");
        rc = TB_ENOMEM;
    } else if (spool_put(sp->json_fd, &sp->json_len, j.p, j.n) ||
               spool_put(sp->csv_fd, &sp->csv_len, c.p, c.n)) {
        snprintf(err, errlen, "%s: the spool of finished cases: %s",
                 sp->dir, strerror(errno));
        rc = TB_EIO;
    } else {
        int k = tb_res_status_parse(cJSON_GetStringValue(
            cJSON_GetObjectItemCaseSensitive(rec, TB_RES_KEY(status))));
        if (k >= 0)
            sp->count[k]++;
        sp->n++;
    }
    tb_strbuf_free(&j);
    tb_strbuf_free(&c);
    return rc;
}

int tb_results_finish_doc(cJSON *head, const tb_results_spool *sp,
                          const cJSON *flight, bool complete)
{
    cJSON_ReplaceItemInObjectCaseSensitive(head, TB_RES_KEY(complete),
                                           cJSON_CreateBool(complete));
    cJSON *sum = tb_res_summary_of(flight);
    if (!sum)
        return TB_ENOMEM;
    /* the spooled records' counts on top of those in flight: the
     * members as tb_res_summary_of orders them */
    cJSON *m = cJSON_GetObjectItemCaseSensitive(sum, TB_RES_KEY(cases));
    cJSON_SetNumberValue(m, m->valuedouble + tb_results_spool_count(sp));
    for (int k = 0; sp && k < TB_RES_NSTATUSES; k++) {
        m = cJSON_GetObjectItemCaseSensitive(sum, tb_res_status_name(k));
        cJSON_SetNumberValue(m, m->valuedouble + sp->count[k]);
    }
    cJSON_ReplaceItemInObjectCaseSensitive(head, TB_RES_KEY(summary), sum);
    return 0;
}

/* Where a streamed document goes: a file being written (tb_atomic) or
 * a text in memory. */
typedef struct sink {
    tb_atomic *file; /* or NULL: */
    tb_strbuf *text;
    char *err;
    size_t errlen;
} sink;

static int put(sink *o, const char *p, size_t n)
{
    if (o->file)
        return tb_atomic_put(o->file, p, n, o->err, o->errlen);
    tb_strbuf_put(o->text, p, n);
    return 0;
}

static int put_text(void *ctx, const void *p, size_t n)
{
    tb_strbuf_put(ctx, p, n);
    return 0;
}

/* The first len bytes of spool file fd. */
static int put_spooled(sink *o, int fd, off_t len)
{
    if (o->file)
        return tb_atomic_put_fd(o->file, fd, len, o->err, o->errlen);
    if (tb_fd_each(fd, len, put_text, o->text)) {
        snprintf(o->err, o->errlen, "reading the spool back: %s",
                 strerror(errno));
        return TB_EIO;
    }
    return 0;
}

static int emit_json(sink *o, const tb_results_doc *d)
{
    /* Where the head's print leaves room for the records: its "cases",
     * an empty array at depth 1 (a newline and one tab: only the
     * layout's own whitespace is such, strings escape theirs). */
    char mark[32];
    size_t ml = (size_t)snprintf(mark, sizeof mark, "\n\t\"%s\":\t[",
                                 TB_RES_KEY(cases));
    char *head = cJSON_Print(d->head);
    char *at = head ? strstr(head, mark) : NULL;
    if (!at || at[ml] != ']') {
        snprintf(o->err, o->errlen, head ? "the document has no empty "
                 "\"cases\" (a bug)" : "out of memory");
        free(head);
        return head ? TB_EINVAL : TB_ENOMEM;
    }
    size_t open = (size_t)(at - head) + ml;
    int n = tb_results_spool_count(d->spool);
    int rc = put(o, head, open);
    if (!rc && n)
        rc = put_spooled(o, d->spool->json_fd, d->spool->json_len);
    const cJSON *rec;
    cJSON_ArrayForEach(rec, d->flight)
    {
        if (rc)
            break;
        tb_strbuf b = {0};
        record_text(&b, rec, n++ == 0);
        if (b.oom) {
            snprintf(o->err, o->errlen, "out of memory");
            rc = TB_ENOMEM;
        } else {
            rc = put(o, b.p, b.n);
        }
        tb_strbuf_free(&b);
    }
    if (!rc)
        rc = put(o, head + open, strlen(head + open));
    free(head);
    return rc;
}

static int emit_csv(sink *o, const tb_results_doc *d)
{
    tb_strbuf b = {0};
    csv_head(&b, d->head);
    int rc = b.oom ? TB_ENOMEM : put(o, b.p, b.n);
    tb_strbuf_free(&b);
    if (!rc && tb_results_spool_count(d->spool))
        rc = put_spooled(o, d->spool->csv_fd, d->spool->csv_len);
    const cJSON *rec;
    cJSON_ArrayForEach(rec, d->flight)
    {
        if (rc)
            break;
        csv_row(&b, rec);
        rc = b.oom ? TB_ENOMEM : put(o, b.p, b.n);
        tb_strbuf_free(&b);
    }
    if (rc == TB_ENOMEM)
        snprintf(o->err, o->errlen, "out of memory");
    return rc;
}

int tb_results_doc_text(const tb_results_doc *d, char **json, char **csv)
{
    char err[256];
    tb_strbuf j = {0}, c = {0};
    sink oj = {.text = &j, .err = err, .errlen = sizeof err};
    sink oc = {.text = &c, .err = err, .errlen = sizeof err};
    *json = *csv = NULL;
    int rc = emit_json(&oj, d);
    if (!rc)
        rc = emit_csv(&oc, d);
    if (!rc && (j.oom || c.oom))
        rc = TB_ENOMEM;
    if (rc) {
        tb_strbuf_free(&j);
        tb_strbuf_free(&c);
        return rc;
    }
    *json = tb_strbuf_take(&j);
    *csv = tb_strbuf_take(&c);
    return 0;
}

int tb_results_doc_write(const tb_results_doc *d, const char *dir,
                         char *err, size_t errlen)
{
    char path[PATH_MAX];
    static const char *const names[] = {"results.json", "results.csv"};
    for (int i = 0; i < 2; i++) {
        if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >=
            (int)sizeof path) {
            snprintf(err, errlen, "%s: path too long", dir);
            return TB_EIO;
        }
        tb_atomic a;
        sink o = {.file = &a, .err = err, .errlen = errlen};
        int rc = tb_atomic_begin(&a, path, err, errlen);
        if (!rc)
            rc = i ? emit_csv(&o, d) : emit_json(&o, d);
        if (rc) {
            tb_atomic_discard(&a);
            return rc;
        }
        if ((rc = tb_atomic_commit(&a, err, errlen)))
            return rc;
    }
    return 0;
}
