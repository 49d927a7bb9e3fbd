/* Export formats: see export.h and docs/FORMAT.md ("export"). */
#include "export.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"

int tb_export_parse_format(const char *s, tb_export_format *fmt)
{
    if (!strcmp(s, "gbench"))
        *fmt = TB_EXPORT_GBENCH;
    else if (!strcmp(s, "bmf"))
        *fmt = TB_EXPORT_BMF;
    else if (!strcmp(s, "gab"))
        *fmt = TB_EXPORT_GAB;
    else
        return TB_EINVAL;
    return 0;
}

static const cJSON *member(const cJSON *o, const char *path)
{
    /* "a.b.c" */
    char key[64];
    while (o && *path) {
        size_t l = strcspn(path, ".");
        if (l >= sizeof key)
            return NULL;
        memcpy(key, path, l);
        key[l] = '\0';
        o = cJSON_GetObjectItemCaseSensitive(o, key);
        path += l + (path[l] == '.');
    }
    return o;
}

/* Copy member `path` of src (if present and not null) as `name`. */
static void copy_member(cJSON *dst, const char *name, const cJSON *src,
                        const char *path)
{
    const cJSON *v = member(src, path);
    if (v && !cJSON_IsNull(v))
        cJSON_AddItemToObject(dst, name, cJSON_Duplicate(v, true));
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

static cJSON *gbench_context(const tb_resfile *f)
{
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(f->doc, "env");
    cJSON *c = cJSON_CreateObject();
    copy_member(c, "date", env, "date");
    copy_member(c, "host_name", env, "hostname");
    cJSON_AddStringToObject(c, "executable", "tbench");
    copy_member(c, "num_cpus", env, "cpu.logical_cpus");
    const cJSON *mhz = member(env, "cpu.mhz");
    if (cJSON_IsNumber(mhz))
        cJSON_AddNumberToObject(c, "mhz_per_cpu", floor(mhz->valuedouble));
    const cJSON *gov = member(env, "cpu.governor");
    if (cJSON_IsString(gov))
        cJSON_AddBoolToObject(c, "cpu_scaling_enabled",
                              strcmp(gov->valuestring, "performance") != 0);
    const cJSON *caches = member(env, "cpu.caches"), *ca;
    if (cJSON_IsArray(caches)) {
        cJSON *out = cJSON_AddArrayToObject(c, "caches");
        cJSON_ArrayForEach(ca, caches)
        {
            cJSON *e = cJSON_CreateObject();
            copy_member(e, "type", ca, "type");
            copy_member(e, "level", ca, "level");
            copy_member(e, "size", ca, "size_bytes");
            const cJSON *sh = member(ca, "shared_cpus");
            if (cJSON_IsString(sh))
                cJSON_AddNumberToObject(e, "num_sharing",
                                        cpulist_count(sh->valuestring));
            cJSON_AddItemToArray(out, e);
        }
    }
    copy_member(c, "load_avg", env, "loadavg");
    copy_member(c, "library_build_type", env, "build.build_type");
    copy_member(c, "tbench_version", env, "build.tbench_version");
    copy_member(c, "tbench_git_commit", env, "build.git_commit");
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
        const cJSON *op = cJSON_GetObjectItemCaseSensitive(c->json, "op");
        int fam = family_of(fams, &nfam,
                            cJSON_IsString(op) ? op->valuestring : c->id);
        cJSON *b = cJSON_CreateObject();
        cJSON_AddStringToObject(b, "name", c->id);
        cJSON_AddNumberToObject(b, "family_index", fam);
        cJSON_AddNumberToObject(b, "per_family_instance_index", inst[fam]++);
        cJSON_AddStringToObject(b, "run_name", c->id);
        cJSON_AddStringToObject(b, "run_type", "iteration");
        cJSON_AddNumberToObject(b, "repetitions", 1);
        cJSON_AddNumberToObject(b, "repetition_index", 0);
        const cJSON *th = member(c->json, "backend_params.threads");
        int threads = cJSON_IsString(th) ? atoi(th->valuestring) : 1;
        cJSON_AddNumberToObject(b, "threads", threads > 0 ? threads : 1);
        if (!c->timed) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s%s%s", c->status,
                     c->message ? ": " : "", c->message ? c->message : "");
            cJSON_AddBoolToObject(b, "error_occurred", true);
            cJSON_AddStringToObject(b, "error_message", msg);
            cJSON_AddItemToArray(bs, b);
            continue;
        }
        cJSON_AddNumberToObject(b, "iterations",
                                (double)c->n * c->iters_per_sample);
        cJSON_AddNumberToObject(b, "real_time", c->median_ns);
        cJSON_AddNumberToObject(b, "cpu_time", c->median_ns);
        cJSON_AddStringToObject(b, "time_unit", "ns");
        if (!isnan(c->gb_s))
            cJSON_AddNumberToObject(b, "bytes_per_second", c->gb_s * 1e9);
        if (!isnan(c->items_s))
            cJSON_AddNumberToObject(b, "items_per_second", c->items_s);
        if (!isnan(c->gflop_s))
            cJSON_AddNumberToObject(b, "flops_per_second", c->gflop_s * 1e9);
        for (int k = 0; k < TB_RES_NCOUNTERS; k++)
            if (!isnan(c->counters[k]))
                cJSON_AddNumberToObject(b, tb_res_counter_name(k),
                                        c->counters[k]);
        if (c->impl)
            cJSON_AddStringToObject(b, "label", c->impl);
        cJSON_AddItemToArray(bs, b);
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
        static const char *const names[] = {"gb_s", "gflop_s", "items_s"};
        for (int r = 0; r < 3; r++)
            if (!isnan(rate[r]) && isfinite(amount[r]) && lo > 0)
                cJSON_AddItemToObject(b, names[r],
                                      metric(rate[r], amount[r] / hi,
                                             amount[r] / lo));
        for (int k = 0; k < TB_RES_NCOUNTERS; k++)
            if (!isnan(c->counters[k]))
                cJSON_AddItemToObject(b, tb_res_counter_name(k),
                                      metric(c->counters[k], NAN, NAN));
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
