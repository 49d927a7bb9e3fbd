/* tbench selftest: see selftest.h. */
#include "selftest.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../base/clock.h"
#include "../base/error.h"
#include "../base/stats.h"
#include "config.h"
#include "peak.h"
#include "plan.h"
#include "runner.h"
#include "timer.h"

static const double spin_ns[TB_SELFTEST_NSPIN] = {100, 1000, 10000,
                                                  1000000};
static const int mde_m[TB_SELFTEST_NMDE] = {1, 5};

void tb_selftest_opts_default(tb_selftest_opts *o)
{
    memset(o, 0, sizeof *o);
    o->runs = 10;
    o->work_n = 100000;
    o->alpha = 0.01;
    o->power = 0.8;
    o->max_time_s = 0.5;
}

double tb_normal_quantile(double p)
{
    if (!(p > 0 && p < 1))
        return NAN;
    /* Bisection on Phi(x) = erfc(-x / sqrt 2) / 2, which is monotone;
     * 200 halvings of [-40, 40] reach the spacing of doubles. */
    double lo = -40, hi = 40;
    for (int i = 0; i < 200 && hi - lo > 0; i++) {
        double mid = 0.5 * (lo + hi);
        if (mid == lo || mid == hi)
            break;
        if (0.5 * erfc(-mid / sqrt(2.0)) < p)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

double tb_selftest_mde(double cv, int m, double alpha, double power)
{
    if (!(cv >= 0) || m < 1 || !(alpha > 0 && alpha < 1) ||
        !(power > 0 && power < 1))
        return NAN;
    double z = tb_normal_quantile(1 - alpha / 2) + tb_normal_quantile(power);
    return z * cv * sqrt(2.0 / m);
}

/* The clock: its smallest nonzero step over successive readings. */
static double clock_step(void)
{
    uint64_t best = 0, prev = tb_now_ns();
    for (int i = 0; i < 100000; i++) {
        uint64_t t = tb_now_ns();
        if (t > prev && (best == 0 || t - prev < best))
            best = t - prev;
        prev = t;
    }
    return (double)best;
}

/* The settings of a calibration config that differ between the two. */
typedef struct calib_cfg {
    const char *name;
    int warmup_ms;
    int min_samples, max_samples, rounds;
    double max_time_s;
} calib_cfg;

/* The plan of one calibration config: f32 on cpu, seed 1, warm-up of
 * k->warmup_ms and 2 calls at least, samples of 1 ms to a CI of 1% within
 * k's limits, and one "ops" entry (JSON text). */
/* The plan of one calibration config k whose "ops" list is ops_fmt's
 * printf text. */
static int plan_of(const calib_cfg *k, tb_plan *plan, char *err, size_t len,
                   const char *ops_fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int plan_of(const calib_cfg *k, tb_plan *plan, char *err, size_t len,
                   const char *ops_fmt, ...)
{
    char ops[512], text[2048];
    va_list ap;
    va_start(ap, ops_fmt);
    vsnprintf(ops, sizeof ops, ops_fmt, ap);
    va_end(ap);
    snprintf(text, sizeof text,
             "{\"name\": \"%s\", \"seed\": 1,"
             " \"warmup\": {\"min_time_ms\": %d, \"min_iters\": 2},"
             " \"measure\": {\"sample_time_ms\": 1, \"min_samples\": %d,"
             " \"max_samples\": %d, \"ci_target\": 0.01,"
             " \"max_time_s\": %.6g, \"rounds\": %d},"
             " \"dtypes\": [\"f32\"], \"backends\": [\"cpu\"],"
             " \"ops\": [%s]}", k->name, k->warmup_ms, k->min_samples,
             k->max_samples, k->max_time_s, k->rounds, ops);
    tb_config cfg;
    int rc = tb_config_parse(text, strlen(text), "(selftest)", &cfg, err,
                             len);
    if (rc)
        return rc;
    rc = tb_plan_build(&cfg, 1, NULL, plan, err, len);
    tb_config_free(&cfg);
    return rc;
}

static int case_failed(const tb_case *c, const tb_result *res, char *err,
                       size_t len)
{
    snprintf(err, len, "selftest: %s: %s%s%s", c->id,
             tb_status_name(res->status), res->message[0] ? ": " : "",
             res->message);
    return TB_EINVAL;
}

/* Median per-iteration time of case c, or a message. */
static int median_of(tb_runner *r, const tb_case *c, double *med,
                     tb_result *keep, char *err, size_t len)
{
    tb_result res;
    tb_runner_run(r, c, &res);
    int rc = 0;
    if (res.status != TB_STATUS_OK)
        rc = case_failed(c, &res, err, len);
    else
        *med = res.stats.median;
    *keep = res;
    keep->samples_ns = NULL;
    tb_result_free(&res);
    return rc;
}

static int spin_points(tb_runner *r, const tb_selftest_opts *o,
                       tb_selftest *st, char *err, size_t len)
{
    calib_cfg cc = {.name = "selftest-spin", .warmup_ms = 10,
                    .min_samples = 10, .max_samples = 1000, .rounds = 1,
                    .max_time_s = o->max_time_s};
    tb_plan plan;
    int rc = plan_of(&cc, &plan, err, len,
                     "{\"op\": \"calib_spin\", \"shapes\": [[1]],"
                     " \"params\": [{\"ns\": 0}, {\"ns\": %.0f},"
                     " {\"ns\": %.0f}, {\"ns\": %.0f}, {\"ns\": %.0f}]}",
                     spin_ns[0], spin_ns[1], spin_ns[2], spin_ns[3]);
    if (rc)
        return rc;
    if (plan.n != TB_SELFTEST_NSPIN + 1) {
        tb_plan_free(&plan);
        snprintf(err, len, "selftest: %d spin cases planned, expected %d",
                 plan.n, TB_SELFTEST_NSPIN + 1);
        return TB_EINVAL;
    }
    tb_result res;
    rc = median_of(r, &plan.cases[0], &st->spin0_ns, &res, err, len);
    st->overhead_ns = res.timer_overhead_ns;
    for (int i = 0; i < TB_SELFTEST_NSPIN && !rc; i++) {
        tb_selftest_point *pt = &st->spin[i];
        const tb_case *c = &plan.cases[i + 1];
        pt->true_ns = c->params.v[0];
        rc = median_of(r, c, &pt->measured_ns, &res, err, len);
        if (rc)
            break;
        pt->net_ns = pt->measured_ns - st->spin0_ns;
        pt->err_ns = pt->net_ns - pt->true_ns;
        pt->rel_err = pt->err_ns / pt->true_ns;
        pt->iters_per_sample = res.iters_per_sample;
        pt->n_samples = res.n_samples;
        pt->bound_ns = st->clock_cost_ns + st->clock_step_ns +
                       st->clock_step_ns /
                           (double)(res.iters_per_sample
                                        ? res.iters_per_sample
                                        : 1);
        pt->within = fabs(pt->err_ns) <= pt->bound_ns;
    }
    tb_plan_free(&plan);
    return rc;
}

/* The median of x[0..n) (n <= TB_SELFTEST_MAX_RUNS), and in *cv their
 * CV (sample standard deviation / mean; NAN for n < 2 or mean <= 0). */
static double median_cv(const double *x, int n, double *cv)
{
    double sum = 0, ss = 0, sorted[TB_SELFTEST_MAX_RUNS];
    for (int k = 0; k < n; k++)
        sum += sorted[k] = x[k];
    double mean = sum / n;
    for (int k = 0; k < n; k++)
        ss += (x[k] - mean) * (x[k] - mean);
    *cv = n > 1 && mean > 0 ? sqrt(ss / (n - 1)) / mean : NAN;
    qsort(sorted, (size_t)n, sizeof sorted[0], tb_cmp_double);
    return tb_quantile_sorted(sorted, (size_t)n, 0.5);
}

/* Append ", " (after the first) and the formatted text to buf at *u. */
__attribute__((format(printf, 4, 5))) static void
name_add(char *buf, size_t len, size_t *u, const char *fmt, ...)
{
    if (*u + 2 >= len)
        return;
    if (*u)
        *u += (size_t)snprintf(buf + *u, len - *u, ", ");
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *u, len - *u, fmt, ap);
    va_end(ap);
    *u = k < 0 ? *u : *u + (size_t)k < len ? *u + (size_t)k : len - 1;
}

/* The clock's median and CV, and the sources that pass their rules
 * (docs/FORMAT.md, "selftest"): steal >= 1% of CPU time, other processes
 * >= 0.25 CPUs, the core clock's CV >= 1% over the rounds, a load
 * average above the CPUs (at the start or the end). */
static void noise_sources(tb_selftest *st)
{
    st->clock_ghz_median = median_cv(st->clock_ghz, st->runs, &st->clock_cv);
    const tb_noise *n = &st->noise;
    size_t u = 0;
    st->named[0] = '\0';
    if (n->steal >= 0.01)
        name_add(st->named, sizeof st->named, &u, "steal %.1f%%",
                 100 * n->steal);
    if (n->other_cpus >= 0.25)
        name_add(st->named, sizeof st->named, &u,
                 "other processes %.2f CPUs", n->other_cpus);
    if (st->clock_cv >= 0.01)
        name_add(st->named, sizeof st->named, &u, "core clock CV %.1f%%",
                 100 * st->clock_cv);
    if (fmax(n->load_start, n->load_end) > n->cpus)
        name_add(st->named, sizeof st->named, &u, "load average %.2f",
                 fmax(n->load_start, n->load_end));
}

static int mde_part(tb_runner *r, const tb_selftest_opts *o,
                    tb_selftest *st, char *err, size_t len)
{
    calib_cfg cc = {.name = "selftest-work", .warmup_ms = 20,
                    .min_samples = 10 * o->runs,
                    .max_samples = 100 * o->runs, .rounds = o->runs,
                    .max_time_s = 0.2 * o->runs};
    tb_plan plan;
    int rc = plan_of(&cc, &plan, err, len,
                     "{\"op\": \"calib_work\", \"shapes\": [[%lld]]}",
                     (long long)o->work_n);
    if (rc)
        return rc;
    tb_result res;
    memset(&res, 0, sizeof res);
    tb_noise_snap n0, n1;
    tb_noise_take(&n0);
    for (int k = 0; k < o->runs && res.status == TB_STATUS_OK; k++) {
        st->clock_ghz[k] = tb_peak_core_ghz(2e6);
        tb_runner_round(r, &plan.cases[0], k, o->runs, &res);
    }
    tb_noise_take(&n1);
    tb_noise_diff(&n0, &n1, &st->noise);
    if (res.status != TB_STATUS_OK || res.rounds != o->runs) {
        rc = case_failed(&plan.cases[0], &res, err, len);
        tb_result_free(&res);
        tb_plan_free(&plan);
        return rc;
    }
    st->runs = o->runs;
    st->work_n = o->work_n;
    for (int k = 0; k < o->runs; k++)
        st->work_round_medians_ns[k] = res.round_medians_ns[k];
    st->work_median_ns =
        median_cv(st->work_round_medians_ns, o->runs, &st->work_cv);
    st->alpha = o->alpha;
    st->power = o->power;
    st->z_alpha = tb_normal_quantile(1 - o->alpha / 2);
    st->z_power = tb_normal_quantile(o->power);
    for (int i = 0; i < TB_SELFTEST_NMDE; i++) {
        st->mde_runs[i] = mde_m[i];
        st->mde_rel[i] = tb_selftest_mde(st->work_cv, mde_m[i], o->alpha,
                                         o->power);
        st->mde_ns[i] = st->mde_rel[i] * st->work_median_ns;
    }
    noise_sources(st);
    tb_result_free(&res);
    tb_plan_free(&plan);
    return 0;
}

int tb_selftest_run(const tb_selftest_opts *o, tb_selftest *st, char *err,
                    size_t errlen)
{
    memset(st, 0, sizeof *st);
    if (o->runs != 0 && (o->runs < 3 || o->runs > TB_SELFTEST_MAX_RUNS)) {
        snprintf(err, errlen, "selftest: runs must be 0 or 3..%d, got %d",
                 TB_SELFTEST_MAX_RUNS, o->runs);
        return TB_EINVAL;
    }
    if (o->work_n < 1 || !(o->alpha > 0 && o->alpha < 1) ||
        !(o->power > 0 && o->power < 1) || !(o->max_time_s > 0)) {
        snprintf(err, errlen, "selftest: work_n >= 1, alpha and power in "
                              "(0, 1) and max_time_s > 0 are required");
        return TB_EINVAL;
    }
    st->clock_res_ns = tb_clock_res_ns();
    st->clock_step_ns = clock_step();
    st->clock_cost_ns = tb_timer_overhead_ns(20001);
    tb_runner *r;
    int rc = tb_runner_create(&r, NULL);
    if (rc) {
        snprintf(err, errlen, "selftest: runner: %s", tb_strerror(rc));
        return rc;
    }
    rc = spin_points(r, o, st, err, errlen);
    if (!rc && o->runs)
        rc = mde_part(r, o, st, err, errlen);
    tb_runner_destroy(r);
    return rc;
}

/* ---- the document --------------------------------------------------------- */

/* v, or null when it is not finite. */
static void add_num(cJSON *o, const char *k, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

cJSON *tb_selftest_json(const tb_selftest *st)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "tbench.selftest/1");
    cJSON *clk = cJSON_AddObjectToObject(doc, "clock");
    cJSON_AddStringToObject(clk, "source", "CLOCK_MONOTONIC");
    add_num(clk, "resolution_ns", st->clock_res_ns);
    add_num(clk, "step_ns", st->clock_step_ns);
    add_num(clk, "read_cost_ns", st->clock_cost_ns);
    add_num(clk, "overhead_subtracted_ns", st->overhead_ns);
    add_num(doc, "spin0_ns", st->spin0_ns);
    cJSON *sp = cJSON_AddArrayToObject(doc, "spin");
    for (int i = 0; i < TB_SELFTEST_NSPIN; i++) {
        const tb_selftest_point *p = &st->spin[i];
        cJSON *o = cJSON_CreateObject();
        add_num(o, "true_ns", p->true_ns);
        add_num(o, "measured_ns", p->measured_ns);
        add_num(o, "net_ns", p->net_ns);
        add_num(o, "error_ns", p->err_ns);
        add_num(o, "rel_error", p->rel_err);
        add_num(o, "bound_ns", p->bound_ns);
        cJSON_AddBoolToObject(o, "within_bound", p->within);
        cJSON_AddNumberToObject(o, "iters_per_sample",
                                (double)p->iters_per_sample);
        cJSON_AddNumberToObject(o, "samples", (double)p->n_samples);
        cJSON_AddItemToArray(sp, o);
    }
    if (!st->runs) {
        cJSON_AddNullToObject(doc, "mde");
        return doc;
    }
    cJSON *m = cJSON_AddObjectToObject(doc, "mde");
    cJSON_AddStringToObject(m, "op", "calib_work");
    cJSON_AddNumberToObject(m, "n", (double)st->work_n);
    cJSON_AddNumberToObject(m, "runs", st->runs);
    cJSON_AddItemToObject(m, "round_medians_ns",
                          cJSON_CreateDoubleArray(st->work_round_medians_ns,
                                                  st->runs));
    add_num(m, "median_ns", st->work_median_ns);
    add_num(m, "cv", st->work_cv);
    add_num(m, "alpha", st->alpha);
    add_num(m, "power", st->power);
    add_num(m, "z_alpha", st->z_alpha);
    add_num(m, "z_power", st->z_power);
    cJSON *ns = cJSON_AddObjectToObject(m, "noise");
    cJSON_AddItemToObject(ns, "clock_ghz",
                          cJSON_CreateDoubleArray(st->clock_ghz, st->runs));
    add_num(ns, "clock_ghz_median", st->clock_ghz_median);
    add_num(ns, "clock_cv", st->clock_cv);
    cJSON_AddItemToObject(ns, "machine", tb_noise_json(&st->noise));
    cJSON_AddStringToObject(ns, "named", st->named);
    cJSON *per = cJSON_AddArrayToObject(m, "per_side");
    for (int i = 0; i < TB_SELFTEST_NMDE; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "runs_per_side", st->mde_runs[i]);
        add_num(o, "mde_rel", st->mde_rel[i]);
        add_num(o, "mde_ns", st->mde_ns[i]);
        cJSON_AddItemToArray(per, o);
    }
    return doc;
}
