/* Export formats: see export.h and docs/FORMAT.md ("export"). */
#include "export.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/stats.h"
#include "../base/strbuf.h"

int tb_export_parse_format(const char *s, tb_export_format *fmt)
{
    int i = tb_word_index(TB_EXPORT_FORMATS, s, strlen(s));
    if (i < 0)
        return TB_EINVAL;
    *fmt = (tb_export_format)i;
    return 0;
}

/* Number of CPUs in a Linux cpulist such as "0-3,8,10-11"; 0 if none. */
static int cpulist_count(const char *s)
{
    int n = 0;
    while (s && *s) {
        char *end;
        long a = strtol(s, &end, 10);
        if (end == s)
            return n;
        long b = a;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        if (b >= a)
            n += (int)(b - a + 1);
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            break;
    }
    return n;
}

/* ---- gbench ----------------------------------------------------------- */

/* Google Benchmark's "caches" from env.cpu.caches. */
static cJSON *gbench_caches(const tb_resenv *e)
{
    cJSON *out = cJSON_CreateArray();
    for (int i = 0; out && i < e->n_caches; i++) {
        const tb_res_cache *ca = &e->caches[i];
        cJSON *o = cJSON_CreateObject();
        if (ca->type)
            cJSON_AddStringToObject(o, "type", ca->type);
        if (!isnan(ca->level))
            cJSON_AddNumberToObject(o, "level", ca->level);
        if (!isnan(ca->size_bytes))
            cJSON_AddNumberToObject(o, "size", ca->size_bytes);
        if (ca->shared_cpus)
            cJSON_AddNumberToObject(o, "num_sharing",
                                    cpulist_count(ca->shared_cpus));
        cJSON_AddItemToArray(out, o);
    }
    return out;
}

/* Google Benchmark's "context" from the run's env: each field only when
 * the run recorded it. */
static cJSON *gbench_context(const tb_resfile *f)
{
    const tb_resenv *e = &f->env;
    cJSON *c = cJSON_CreateObject();
    if (e->date)
        cJSON_AddStringToObject(c, "date", e->date);
    if (e->hostname)
        cJSON_AddStringToObject(c, "host_name", e->hostname);
    cJSON_AddStringToObject(c, "executable", "tbench");
    if (!isnan(e->logical_cpus))
        cJSON_AddNumberToObject(c, "num_cpus", e->logical_cpus);
    if (!isnan(e->mhz))
        cJSON_AddNumberToObject(c, "mhz_per_cpu", floor(e->mhz));
    if (e->governor)
        cJSON_AddBoolToObject(c, "cpu_scaling_enabled",
                              strcmp(e->governor, "performance") != 0);
    if (e->has_caches)
        cJSON_AddItemToObject(c, "caches", gbench_caches(e));
    if (e->n_loadavg >= 0) {
        cJSON *la = cJSON_AddArrayToObject(c, "load_avg");
        for (int i = 0; la && i < e->n_loadavg && i < 3; i++)
            cJSON_AddItemToArray(la, cJSON_CreateNumber(e->loadavg[i]));
    }
    if (e->build_type)
        cJSON_AddStringToObject(c, "library_build_type", e->build_type);
    if (e->tbench_version)
        cJSON_AddStringToObject(c, "tbench_version", e->tbench_version);
    if (e->git_commit)
        cJSON_AddStringToObject(c, "tbench_git_commit", e->git_commit);
    return c;
}

/* Index of op among ops[0..*n), appended if new. */
static int family_of(const char **ops, int *n, const char *op)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp(ops[i], op))
            return i;
    ops[*n] = op;
    return (*n)++;
}

/* The fields every gbench entry has besides name and family: run_name
 * (the case id, also for an aggregate, whose name is ID_AGG), run_type,
 * repetitions, repetition_index (none for an aggregate, r < 0) and
 * threads. */
static void gbench_common(cJSON *e, const char *id, const char *run_type,
                          int reps, int r, int threads)
{
    cJSON_AddStringToObject(e, "run_name", id);
    cJSON_AddStringToObject(e, "run_type", run_type);
    cJSON_AddNumberToObject(e, "repetitions", reps);
    if (r >= 0)
        cJSON_AddNumberToObject(e, "repetition_index", r);
    cJSON_AddNumberToObject(e, "threads", threads);
}

/* real_time/cpu_time (ns) and, for a case (c not NULL), its throughput,
 * counters and label. */
static void gbench_time(cJSON *e, double t, const tb_rescase *c)
{
    cJSON_AddNumberToObject(e, "real_time", t);
    cJSON_AddNumberToObject(e, "cpu_time", t);
    cJSON_AddStringToObject(e, "time_unit", "ns");
    if (!c)
        return;
    if (!isnan(c->gb_s))
        cJSON_AddNumberToObject(e, "bytes_per_second", c->gb_s * 1e9);
    if (!isnan(c->items_s))
        cJSON_AddNumberToObject(e, "items_per_second", c->items_s);
    if (!isnan(c->gflop_s))
        cJSON_AddNumberToObject(e, "flops_per_second", c->gflop_s * 1e9);
    for (int k = 0; k < TB_RES_NCOUNTERS; k++)
        if (!isnan(c->counters[k]))
            cJSON_AddNumberToObject(e, tb_res_counter_name(k),
                                    c->counters[k]);
    if (c->impl)
        cJSON_AddStringToObject(e, "label", c->impl);
}

/* Google Benchmark's aggregates over n repetitions: mean, median, sample
 * standard deviation and coefficient of variation (stddev / mean, as a
 * fraction). */
static void gbench_aggregates(const double *x, int n, double v[4])
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += x[i];
    double mean = sum / n, ss = 0;
    for (int i = 0; i < n; i++)
        ss += (x[i] - mean) * (x[i] - mean);
    double *s = malloc((size_t)n * sizeof *s);
    double med = NAN;
    if (s) {
        memcpy(s, x, (size_t)n * sizeof *s);
        med = tb_median_inplace(s, (size_t)n);
        free(s);
    }
    v[0] = mean;
    v[1] = med;
    v[2] = n > 1 ? sqrt(ss / (n - 1)) : 0;
    v[3] = mean > 0 ? v[2] / mean : 0;
}

static cJSON *gbench(const tb_resfile *f)
{
    cJSON *doc = cJSON_CreateObject();
    const char **fams = calloc((size_t)(f->n ? f->n : 1), sizeof *fams);
    int *inst = calloc((size_t)(f->n ? f->n : 1), sizeof *inst);
    if (!doc || !fams || !inst) {
        cJSON_Delete(doc);
        free(fams);
        free(inst);
        return NULL;
    }
    cJSON_AddItemToObject(doc, "context", gbench_context(f));
    cJSON *bs = cJSON_AddArrayToObject(doc, "benchmarks");
    int nfam = 0;
    for (int i = 0; i < f->n; i++) {
        const tb_rescase *c = &f->cases[i];
        int fam = family_of(fams, &nfam, c->op);
        cJSON *b = cJSON_CreateObject();
        cJSON_AddStringToObject(b, "name", c->id);
        cJSON_AddNumberToObject(b, "family_index", fam);
        cJSON_AddNumberToObject(b, "per_family_instance_index", inst[fam]++);
        const char *th = tb_rescase_axis(c, "threads");
        int threads = th ? atoi(th) : 1;
        if (threads < 1)
            threads = 1;
        if (!c->timed) {
            /* Google Benchmark writes an errored run with its time fields
             * (zero) and error_occurred; its compare.py reads real_time
             * of every entry, so they must be there.  Zero here is that
             * convention, not a measurement: error_occurred says so. */
            char msg[1024];
            snprintf(msg, sizeof msg, "%s%s%s", c->status,
                     c->message ? ": " : "", c->message ? c->message : "");
            gbench_common(b, c->id, "iteration", 1, 0, threads);
            cJSON_AddBoolToObject(b, "error_occurred", true);
            cJSON_AddStringToObject(b, "error_message", msg);
            cJSON_AddNumberToObject(b, "iterations", 0);
            cJSON_AddNumberToObject(b, "real_time", 0);
            cJSON_AddNumberToObject(b, "cpu_time", 0);
            cJSON_AddStringToObject(b, "time_unit", "ns");
            cJSON_AddItemToArray(bs, b);
            continue;
        }
        /* A run measured in rounds is exported as one repetition per
         * round (its median), the way Google Benchmark writes
         * --benchmark_repetitions, followed by the aggregates over them;
         * so compare.py's U test has repetitions to work on. */
        int reps = c->n_rounds >= 2 ? c->n_rounds : 1;
        for (int r = 0; r < reps; r++) {
            cJSON *e = r ? cJSON_CreateObject() : b;
            if (!e)
                break;
            if (r) {
                cJSON_AddStringToObject(e, "name", c->id);
                cJSON_AddNumberToObject(e, "family_index", fam);
                cJSON_AddNumberToObject(e, "per_family_instance_index",
                                        inst[fam] - 1);
            }
            gbench_common(e, c->id, "iteration", reps, r, threads);
            double t = reps > 1 ? c->round_medians_ns[r] : c->median_ns;
            /* tbench keeps each round's median, not its sample count:
             * iterations (all timed calls) is given for a one-repetition
             * case only. */
            if (reps == 1)
                cJSON_AddNumberToObject(e, "iterations",
                                        (double)c->n * c->iters_per_sample);
            gbench_time(e, t, c);
            cJSON_AddItemToArray(bs, e);
        }
        if (reps > 1) {
            static const char *const agg[] = {"mean", "median", "stddev",
                                              "cv"};
            double v[4];
            gbench_aggregates(c->round_medians_ns, reps, v);
            for (int a = 0; a < 4; a++) {
                cJSON *e = cJSON_CreateObject();
                if (!e)
                    break;
                char name[1100];
                snprintf(name, sizeof name, "%s_%s", c->id, agg[a]);
                cJSON_AddStringToObject(e, "name", name);
                cJSON_AddNumberToObject(e, "family_index", fam);
                cJSON_AddNumberToObject(e, "per_family_instance_index",
                                        inst[fam] - 1);
                gbench_common(e, c->id, "aggregate", reps, -1, threads);
                cJSON_AddStringToObject(e, "aggregate_name", agg[a]);
                cJSON_AddStringToObject(e, "aggregate_unit",
                                        a == 3 ? "percentage" : "time");
                if (a == 3) {
                    cJSON_AddNumberToObject(e, "real_time", v[a]);
                    cJSON_AddNumberToObject(e, "cpu_time", v[a]);
                    cJSON_AddStringToObject(e, "time_unit", "ns");
                } else {
                    gbench_time(e, v[a], NULL);
                }
                cJSON_AddItemToArray(bs, e);
            }
        }
    }
    free(fams);
    free(inst);
    return doc;
}

/* ---- bmf -------------------------------------------------------------- */

static cJSON *metric(double v, double lo, double hi)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddNumberToObject(m, "value", v);
    if (isfinite(lo) && isfinite(hi)) {
        cJSON_AddNumberToObject(m, "lower_value", lo);
        cJSON_AddNumberToObject(m, "upper_value", hi);
    }
    return m;
}

static cJSON *bmf(const tb_resfile *f)
{
    cJSON *doc = cJSON_CreateObject();
    if (!doc)
        return NULL;
    for (int i = 0; i < f->n; i++) {
        const tb_rescase *c = &f->cases[i];
        if (!c->timed)
            continue;
        cJSON *b = cJSON_CreateObject();
        double lo = c->ci_low_ns, hi = c->ci_high_ns, m = c->median_ns;
        cJSON_AddItemToObject(b, "latency", metric(m, lo, hi));
        /* calls per second, the bounds from the same CI */
        cJSON_AddItemToObject(b, "throughput",
                              metric(1e9 / m, lo > 0 ? 1e9 / hi : NAN,
                                     lo > 0 ? 1e9 / lo : NAN));
        double amount[] = {c->bytes, c->flops, c->items * 1e9};
        double rate[] = {c->gb_s, c->gflop_s, c->items_s};
        /* Measures other than Bencher's two built-in ones are created by
         * name on first use, without a unit: the unit is in the name. */
        static const char *const names[] = {"gigabytes-per-second",
                                            "gigaflops-per-second",
                                            "items-per-second"};
        for (int r = 0; r < 3; r++)
            if (!isnan(rate[r]) && isfinite(amount[r]) && lo > 0)
                cJSON_AddItemToObject(b, names[r],
                                      metric(rate[r], amount[r] / hi,
                                             amount[r] / lo));
        for (int k = 0; k < TB_RES_NCOUNTERS; k++) {
            if (isnan(c->counters[k]))
                continue;
            /* "kernel_launches" -> "kernel-launches-per-call" (a Bencher
             * slug: lower case and '-', at most 64 characters) */
            char slug[64];
            snprintf(slug, sizeof slug, "%s-per-call",
                     tb_res_counter_name(k));
            for (char *q = slug; *q; q++)
                if (*q == '_')
                    *q = '-';
            cJSON_AddItemToObject(b, slug, metric(c->counters[k], NAN, NAN));
        }
        cJSON_AddItemToObject(doc, c->id, b);
    }
    return doc;
}

/* ---- github-action-benchmark ------------------------------------------ */

static cJSON *gab(const tb_resfile *f)
{
    cJSON *doc = cJSON_CreateArray();
    if (!doc)
        return NULL;
    for (int i = 0; i < f->n; i++) {
        const tb_rescase *c = &f->cases[i];
        if (!c->timed)
            continue;
        cJSON *b = cJSON_CreateObject();
        char buf[1024];
        cJSON_AddStringToObject(b, "name", c->id);
        cJSON_AddStringToObject(b, "unit", "ns");
        cJSON_AddNumberToObject(b, "value", c->median_ns);
        snprintf(buf, sizeof buf, "± %.4g",
                 (c->ci_high_ns - c->ci_low_ns) / 2);
        cJSON_AddStringToObject(b, "range", buf);
        int w = snprintf(buf, sizeof buf,
                         "median of %zu samples x %.0f iterations; 95%% CI "
                         "[%.6g, %.6g] ns; impl %s",
                         c->n, c->iters_per_sample, c->ci_low_ns,
                         c->ci_high_ns, c->impl ? c->impl : "?");
        if (w > 0 && (size_t)w < sizeof buf && !isnan(c->gb_s))
            w += snprintf(buf + w, sizeof buf - (size_t)w, "; %.4g GB/s",
                          c->gb_s);
        if (w > 0 && (size_t)w < sizeof buf && !isnan(c->gflop_s))
            w += snprintf(buf + w, sizeof buf - (size_t)w, "; %.4g GFLOP/s",
                          c->gflop_s);
        for (int k = 0; k < TB_RES_NCOUNTERS; k++)
            if (w > 0 && (size_t)w < sizeof buf && !isnan(c->counters[k]) &&
                (k == TB_RES_CTR_KERNEL_LAUNCHES || k == TB_RES_CTR_ALLOCS ||
                 c->counters[k] != 0))
                w += snprintf(buf + w, sizeof buf - (size_t)w, "; %s %.6g",
                              tb_res_counter_name(k), c->counters[k]);
        cJSON_AddStringToObject(b, "extra", buf);
        cJSON_AddItemToArray(doc, b);
    }
    return doc;
}

cJSON *tb_export(const tb_resfile *f, tb_export_format fmt)
{
    switch (fmt) {
    case TB_EXPORT_GBENCH: return gbench(f);
    case TB_EXPORT_BMF: return bmf(f);
    case TB_EXPORT_GAB: return gab(f);
    }
    return NULL;
}
