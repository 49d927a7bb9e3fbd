/* Checking one case record and filling its typed view (resultsio.h):
 * the members every command needs are checked and their messages name
 * the case; the rest are read by the schema's tables
 * (base/result_schema.h). */
#include "resultsio_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/strbuf.h"

#define BAD(...) tb_res_fail(err, errlen, f->path, TB_EINVAL, __VA_ARGS__)

/* Member k of o must be absent, null or a finite number: *out = value or
 * NAN.  Returns false when it is something else. */
static bool opt_num(const cJSON *o, const char *k, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    *out = NAN;
    if (!v || cJSON_IsNull(v))
        return true;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return false;
    *out = v->valuedouble;
    return true;
}

/* Member k of o is absent, null or of the type `is` accepts. */
static bool opt_is(const cJSON *o, const char *k,
                   cJSON_bool (*is)(const cJSON *const))
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return !v || cJSON_IsNull(v) || is(v);
}

/* Member k of o as a finite number >= 0 into *out; false otherwise. */
static bool nonneg(const cJSON *o, const char *k, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
        v->valuedouble < 0)
        return false;
    *out = v->valuedouble;
    return true;
}

/* ---- the timed part of an "ok" record --------------------------------------- */

/* stats' required numbers: finite, n a whole number >= 1, a positive
 * median inside its CI, iterations >= 1, non-negative times. */
static int check_stats(tb_resfile *f, tb_rescase *c, const cJSON *st,
                       int idx, double *n, char *err, size_t errlen)
{
    static const char *const need[] = {
        TB_RES_KEY(n),         TB_RES_KEY(iters_per_sample),
        TB_RES_KEY(median_ns), TB_RES_KEY(ci_low_ns),
        TB_RES_KEY(ci_high_ns), TB_RES_KEY(min_ns),
        TB_RES_KEY(mean_ns)};
    /* where each of need goes */
    double *const to[] = {n,          &c->iters_per_sample,
                          &c->median_ns, &c->ci_low_ns,
                          &c->ci_high_ns, &c->min_ns,
                          &c->mean_ns};
    _Static_assert(sizeof need / sizeof need[0] == sizeof to / sizeof to[0],
                   "one destination per required number");
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(st, need[i]);
        if (cJSON_IsNumber(v) && !isfinite(v->valuedouble))
            return BAD("cases[%d] (%s): stats.%s: expected a finite "
                       "number, got %g", idx, c->id, need[i],
                       v->valuedouble);
        if (!cJSON_IsNumber(v))
            return BAD("cases[%d] (%s): stats.%s: expected a number", idx,
                       c->id, need[i]);
        *to[i] = v->valuedouble;
    }
    if (*n < 1 || *n != floor(*n) || *n > 1e9)
        return BAD("cases[%d] (%s): stats.n: expected an integer >= 1, "
                   "got %g", idx, c->id, *n);
    if (c->iters_per_sample < 1)
        return BAD("cases[%d] (%s): stats.iters_per_sample: expected >= 1",
                   idx, c->id);
    if (!(c->median_ns > 0))
        return BAD("cases[%d] (%s): stats.median_ns: expected a positive "
                   "number, got %g", idx, c->id, c->median_ns);
    if (!(c->ci_low_ns <= c->median_ns && c->median_ns <= c->ci_high_ns))
        return BAD("cases[%d] (%s): stats: median_ns is outside "
                   "[ci_low_ns, ci_high_ns]", idx, c->id);
    const double nn[] = {c->ci_low_ns, c->min_ns, c->mean_ns};
    static const char *const nn_key[] = {
        TB_RES_KEY(ci_low_ns), TB_RES_KEY(min_ns), TB_RES_KEY(mean_ns)};
    for (size_t i = 0; i < sizeof nn / sizeof nn[0]; i++)
        if (nn[i] < 0)
            return BAD("cases[%d] (%s): stats.%s: expected a number >= 0, "
                       "got %g", idx, c->id, nn_key[i], nn[i]);
    c->ci_rel = (c->ci_high_ns - c->ci_low_ns) / c->median_ns;
    if (!isfinite(c->ci_rel))
        return BAD("cases[%d] (%s): stats: the CI [ci_low_ns, ci_high_ns] "
                   "is not finite relative to median_ns", idx, c->id);
    return 0;
}

/* stats' optional display members: numbers or null, a stop reason
 * string, an outliers object. */
static int check_stats_optional(tb_resfile *f, const tb_rescase *c,
                                const cJSON *st, int idx, char *err,
                                size_t errlen)
{
    static const char *const opt[] = {
        TB_RES_KEY(max_ns), TB_RES_KEY(stddev_ns), TB_RES_KEY(mad_ns),
        TB_RES_KEY(p5_ns),  TB_RES_KEY(p95_ns),    TB_RES_KEY(ci_rel)};
    for (size_t i = 0; i < sizeof opt / sizeof opt[0]; i++) {
        double d;
        if (!opt_num(st, opt[i], &d))
            return BAD("cases[%d] (%s): stats.%s: expected a number or "
                       "null", idx, c->id, opt[i]);
    }
    if (!opt_is(st, TB_RES_KEY(stop_reason), cJSON_IsString))
        return BAD("cases[%d] (%s): stats.stop_reason: expected a string "
                   "or null", idx, c->id);
    if (!opt_is(st, TB_RES_KEY(outliers), cJSON_IsObject))
        return BAD("cases[%d] (%s): stats.outliers: expected an object "
                   "or null", idx, c->id);
    return 0;
}

/* samples_ns (n finite numbers) and the optional round_medians_ns (a
 * non-empty array of positive numbers), into heap arrays of c. */
static int load_samples(tb_resfile *f, tb_rescase *c, const cJSON *st,
                        int idx, double n, char *err, size_t errlen)
{
    const cJSON *sa = cJSON_GetObjectItemCaseSensitive(
        st, TB_RES_KEY(samples_ns));
    if (!cJSON_IsArray(sa))
        return BAD("cases[%d] (%s): stats.samples_ns: expected an array",
                   idx, c->id);
    int ns = cJSON_GetArraySize(sa);
    if ((double)ns != n)
        return BAD("cases[%d] (%s): stats.n is %g but samples_ns has %d "
                   "values", idx, c->id, n, ns);
    c->n = (size_t)ns;
    c->samples_ns = malloc(c->n * sizeof *c->samples_ns);
    if (!c->samples_ns)
        return tb_res_fail(err, errlen, f->path, TB_ENOMEM, "out of memory");
    const cJSON *v;
    size_t i = 0;
    cJSON_ArrayForEach(v, sa)
    {
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
            v->valuedouble < 0)
            return BAD("cases[%d] (%s): stats.samples_ns[%zu]: expected a "
                       "number >= 0", idx, c->id, i);
        c->samples_ns[i++] = v->valuedouble;
    }
    /* The median of the samples lies between the smallest and the
     * largest (all samples 0 under a positive median_ns: made up). */
    double lo = INFINITY, hi = 0;
    for (size_t k = 0; k < c->n; k++) {
        lo = fmin(lo, c->samples_ns[k]);
        hi = fmax(hi, c->samples_ns[k]);
    }
    if (c->median_ns < lo * (1 - 1e-9) || c->median_ns > hi * (1 + 1e-9))
        return BAD("cases[%d] (%s): stats.median_ns %g is outside the "
                   "samples' range [%g, %g]", idx, c->id, c->median_ns, lo,
                   hi);
    const cJSON *rm = cJSON_GetObjectItemCaseSensitive(
        st, TB_RES_KEY(round_medians_ns));
    if (!rm || cJSON_IsNull(rm))
        return 0;
    int nr = cJSON_GetArraySize(rm);
    if (!cJSON_IsArray(rm) || nr < 1)
        return BAD("cases[%d] (%s): stats.round_medians_ns: expected a "
                   "non-empty array", idx, c->id);
    c->round_medians_ns = malloc((size_t)nr * sizeof(double));
    if (!c->round_medians_ns)
        return tb_res_fail(err, errlen, f->path, TB_ENOMEM, "out of memory");
    cJSON_ArrayForEach(v, rm)
    {
        if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) ||
            !isfinite(v->valuedouble))
            return BAD("cases[%d] (%s): stats.round_medians_ns[%d]: "
                       "expected a positive number", idx, c->id,
                       c->n_rounds);
        c->round_medians_ns[c->n_rounds++] = v->valuedouble;
    }
    return 0;
}

/* throughput and counters: numbers or nulls (the exact counters); the
 * other counters are read as they are. */
static int load_rates(tb_resfile *f, tb_rescase *c, const cJSON *cj,
                      int idx, char *err, size_t errlen)
{
    const cJSON *tp = cJSON_GetObjectItemCaseSensitive(
        cj, TB_RES_KEY(throughput));
    if (tp && !cJSON_IsNull(tp) &&
        (!cJSON_IsObject(tp) || !opt_num(tp, TB_RES_KEY(gb_s), &c->gb_s) ||
         !opt_num(tp, TB_RES_KEY(gflop_s), &c->gflop_s) ||
         !opt_num(tp, TB_RES_KEY(items_s), &c->items_s)))
        return BAD("cases[%d] (%s): throughput: expected an object of "
                   "numbers or nulls", idx, c->id);
    const cJSON *ct = cJSON_GetObjectItemCaseSensitive(
        cj, TB_RES_KEY(counters));
    if (!ct || cJSON_IsNull(ct))
        return 0;
    if (!cJSON_IsObject(ct))
        return BAD("cases[%d] (%s): counters: expected an object", idx,
                   c->id);
    c->has_counters = true;
    for (int k = 0; k < TB_RES_NCOUNTERS_ALL; k++) {
        if (k >= TB_RES_NCOUNTERS) {
            c->counters[k] = tb_res_num(ct, tb_res_counter_name(k));
        } else if (!opt_num(ct, tb_res_counter_name(k), &c->counters[k])) {
            return BAD("cases[%d] (%s): counters.%s: expected a number",
                       idx, c->id, tb_res_counter_name(k));
        }
    }
    return 0;
}

/* instructions: an object (or null) with per_iter a number >= 0 or null
 * and source and isa strings or null; a count needs its source. */
static int load_instr(tb_resfile *f, tb_rescase *c, const cJSON *cj,
                      int idx, char *err, size_t errlen)
{
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(
        cj, TB_RES_KEY(instructions));
    if (!in || cJSON_IsNull(in))
        return 0;
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(in,
                                                        TB_RES_KEY(source));
    const cJSON *isa = cJSON_GetObjectItemCaseSensitive(in, TB_RES_KEY(isa));
    if (!cJSON_IsObject(in) ||
        !opt_num(in, TB_RES_KEY(per_iter), &c->instructions) ||
        c->instructions < 0 ||
        (src && !cJSON_IsNull(src) && !cJSON_IsString(src)) ||
        (isa && !cJSON_IsNull(isa) && !cJSON_IsString(isa)))
        return BAD("cases[%d] (%s): instructions: expected an object "
                   "with per_iter a number >= 0 or null, source and "
                   "isa strings or null", idx, c->id);
    c->instr_source = cJSON_IsString(src) ? src->valuestring : NULL;
    c->instr_isa = cJSON_IsString(isa) ? isa->valuestring : NULL;
    if (!isnan(c->instructions) && !c->instr_source)
        return BAD("cases[%d] (%s): instructions: a per_iter count needs "
                   "its source", idx, c->id);
    return 0;
}

/* cache: an object (or null) whose counts (cycles, instructions, ipc,
 * l1d_misses, llc_misses, dtlb_misses) are numbers >= 0 or null, and a
 * count needs its source (read into c->f). */
static int check_cache(tb_resfile *f, tb_rescase *c, const cJSON *cj,
                       int idx, char *err, size_t errlen)
{
    static const char *const counts[] = {
        TB_RES_KEY(cycles),     TB_RES_KEY(instructions),
        TB_RES_KEY(ipc),        TB_RES_KEY(l1d_misses),
        TB_RES_KEY(llc_misses), TB_RES_KEY(dtlb_misses)};
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(cj, TB_RES_KEY(cache));
    if (!in || cJSON_IsNull(in))
        return 0;
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(in,
                                                        TB_RES_KEY(source));
    bool any = false, ok = cJSON_IsObject(in) &&
                           (!src || cJSON_IsNull(src) || cJSON_IsString(src));
    for (size_t i = 0; ok && i < sizeof counts / sizeof counts[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(in, counts[i]);
        ok = !v || cJSON_IsNull(v) ||
             (cJSON_IsNumber(v) && v->valuedouble >= 0);
        any = any || cJSON_IsNumber(v);
    }
    if (!ok)
        return BAD("cases[%d] (%s): cache: expected an object with counts "
                   "numbers >= 0 or null and source a string or null", idx,
                   c->id);
    if (any && !cJSON_IsString(src))
        return BAD("cases[%d] (%s): cache: a count needs its source", idx,
                   c->id);
    return 0;
}

/* Check and extract the timing part of an "ok" record. */
static int load_timed(tb_resfile *f, tb_rescase *c, const cJSON *cj,
                      int idx, char *err, size_t errlen)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(cj, TB_RES_KEY(stats));
    if (!cJSON_IsObject(st))
        return BAD("cases[%d] (%s): status is ok but stats is missing", idx,
                   c->id);
    double n = 0;
    int rc;
    if ((rc = check_stats(f, c, st, idx, &n, err, errlen)) ||
        (rc = check_stats_optional(f, c, st, idx, err, errlen)) ||
        (rc = load_samples(f, c, st, idx, n, err, errlen)) ||
        (rc = load_rates(f, c, cj, idx, err, errlen)) ||
        (rc = load_instr(f, c, cj, idx, err, errlen)) ||
        (rc = check_cache(f, c, cj, idx, err, errlen)))
        return rc;
    c->timed = true;
    return 0;
}

/* ---- cupti ------------------------------------------------------------------- */

/* cupti.kernels: {name: non-empty string, count, device_ns: numbers
 * >= 0}, into f's arena. */
static int load_kernels(tb_resfile *f, tb_rescase *c, const cJSON *ks,
                        int idx, char *err, size_t errlen)
{
    if (!cJSON_IsArray(ks))
        return BAD("cases[%d] (%s): cupti.kernels: expected an array", idx,
                   c->id);
    int n = cJSON_GetArraySize(ks);
    tb_res_kernel *v = n ? tb_res_alloc(f, (size_t)n * sizeof *v) : NULL;
    if (n && !v)
        return tb_res_fail(err, errlen, f->path, TB_ENOMEM, "out of memory");
    const cJSON *k;
    int ki = 0;
    cJSON_ArrayForEach(k, ks)
    {
        tb_res_kernel *e = &v[ki];
        e->name = tb_res_str(k, TB_RES_KEY(name));
        if (!cJSON_IsObject(k) || !e->name || !e->name[0] ||
            !nonneg(k, TB_RES_KEY(count), &e->count) ||
            !nonneg(k, TB_RES_KEY(device_ns), &e->device_ns))
            return BAD("cases[%d] (%s): cupti.kernels[%d]: expected "
                       "{\"name\": non-empty string, \"count\", "
                       "\"device_ns\": numbers >= 0}", idx, c->id, ki);
        ki++;
    }
    c->cupti.n_kernels = n;
    c->cupti.kernels = v;
    return 0;
}

/* Check "cupti" and "cupti_reason" of any record (see resultsio.h). */
static int load_cupti(tb_resfile *f, tb_rescase *c, const cJSON *cj,
                      int idx, char *err, size_t errlen)
{
    tb_res_cupti *u = &c->cupti;
    const cJSON *cu = cJSON_GetObjectItemCaseSensitive(cj, TB_RES_KEY(cupti));
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(
        cj, TB_RES_KEY(cupti_reason));
    if (why && !cJSON_IsNull(why) && !cJSON_IsString(why))
        return BAD("cases[%d] (%s): cupti_reason: expected a string or "
                   "null", idx, c->id);
    if (!cu)
        return 0;
    if (cJSON_IsNull(cu)) {
        if (!cJSON_IsString(why) || !why->valuestring[0])
            return BAD("cases[%d] (%s): cupti is null but cupti_reason is "
                       "not a non-empty string saying why", idx, c->id);
        c->cupti_state = TB_RES_CUPTI_NULL;
        c->cupti_reason = why->valuestring;
        return 0;
    }
    if (!cJSON_IsObject(cu))
        return BAD("cases[%d] (%s): cupti: expected an object or null", idx,
                   c->id);
    if (!nonneg(cu, TB_RES_KEY(iterations), &u->iterations) ||
        u->iterations < 1 || u->iterations != floor(u->iterations))
        return BAD("cases[%d] (%s): cupti.iterations: expected an integer "
                   ">= 1", idx, c->id);
#define TB_RES_CUPTI_CHECK(k)                                             \
    if (!nonneg(cu, TB_RES_KEY(k), &u->k))                                \
        return BAD("cases[%d] (%s): cupti.%s: expected a number >= 0",    \
                   idx, c->id, TB_RES_KEY(k));
    TB_RES_CUPTI_NUMS(TB_RES_CUPTI_CHECK)
#undef TB_RES_CUPTI_CHECK
    const cJSON *mc = tb_res_obj(cu, TB_RES_KEY(memcpy));
    if (!mc)
        return BAD("cases[%d] (%s): cupti.memcpy: expected an object", idx,
                   c->id);
    double copies = 0;
    for (int i = 0; i < TB_RES_NDIRS; i++) {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(
            mc, tb_res_dir_name(i));
        if (!cJSON_IsObject(d) ||
            !nonneg(d, TB_RES_KEY(bytes), &u->memcpy_bytes[i]) ||
            !nonneg(d, TB_RES_KEY(count), &u->memcpy_count[i]))
            return BAD("cases[%d] (%s): cupti.memcpy.%s: expected "
                       "{\"count\", \"bytes\"} numbers >= 0", idx, c->id,
                       tb_res_dir_name(i));
        copies += u->memcpy_count[i];
    }
    int rc = load_kernels(f, c, cJSON_GetObjectItemCaseSensitive(
                                    cu, TB_RES_KEY(kernels)),
                          idx, err, errlen);
    if (rc)
        return rc;
    c->cupti_state = TB_RES_CUPTI_VALID;
    c->cupti_ctr[TB_RES_CUPTI_LAUNCHES] = u->kernel_launches;
    c->cupti_ctr[TB_RES_CUPTI_MEMCPYS] = copies;
    c->cupti_ctr[TB_RES_CUPTI_MEMSETS] = u->memsets;
    c->cupti_ctr[TB_RES_CUPTI_DEVICE_ALLOCS] = u->device_allocs;
    return 0;
}

/* ---- the members' types ------------------------------------------------------- */

/* Every member of o is a string. */
static bool all_strings(const cJSON *o)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, o)
        if (!cJSON_IsString(v))
            return false;
    return true;
}

/* a is a list of lists of numbers (a list of shapes). */
static bool shape_list(const cJSON *a)
{
    const cJSON *s, *d;
    if (!cJSON_IsArray(a))
        return false;
    cJSON_ArrayForEach(s, a)
    {
        if (!cJSON_IsArray(s))
            return false;
        cJSON_ArrayForEach(d, s)
            if (!cJSON_IsNumber(d))
                return false;
    }
    return true;
}

/* Is v one of the strings of set (NULL-terminated)? */
static bool str_in(const cJSON *v, const char *const *set)
{
    if (!cJSON_IsString(v))
        return false;
    for (; *set; set++)
        if (!strcmp(v->valuestring, *set))
            return true;
    return false;
}

/* A roofline object as docs/results.schema.json's $defs/roofline gives
 * it: every required member there and of its type and range, the
 * optional ones absent, null or so, nothing else.  Returns the name of
 * the first bad member, or NULL. */
static const char *roofline_error(const cJSON *r)
{
    enum { R_NUM_POS, R_NUM_NONNEG, R_INT_POS, R_STR, R_ENUM };
    static const char *const levels[] = {"L1", "L2", "L3", "DRAM", "GPU",
                                         NULL};
    static const char *const kernels[] = {"copy", "add", "triad", "read",
                                          "update", NULL};
    static const char *const bounds[] = {"memory", "compute", NULL};
    static const char *const dtypes[] = {"f32", "f64", "bf16", "f16",
                                         "int8", NULL};
    static const struct {
        const char *key;
        int kind;
        bool required, nullable;
        const char *const *set;
    } m[] = {
        {TB_RES_KEY(level), R_ENUM, true, false, levels},
        {TB_RES_KEY(threads), R_INT_POS, true, false, NULL},
        {TB_RES_KEY(bw_kernel), R_ENUM, true, false, kernels},
        {TB_RES_KEY(bandwidth_gb_s), R_NUM_NONNEG, true, false, NULL},
        {TB_RES_KEY(bandwidth_threads), R_INT_POS, false, true, NULL},
        {TB_RES_KEY(bandwidth_working_set_bytes), R_NUM_POS, false, true,
         NULL},
        {TB_RES_KEY(footprint_bytes), R_NUM_POS, false, true, NULL},
        {TB_RES_KEY(isa), R_STR, true, true, NULL},
        {TB_RES_KEY(peak_gflop_s), R_NUM_POS, true, true, NULL},
        {TB_RES_KEY(peak_threads), R_INT_POS, false, true, NULL},
        {TB_RES_KEY(peak_dtype), R_ENUM, false, true, dtypes},
        {TB_RES_KEY(attainable_gflop_s), R_NUM_NONNEG, true, true, NULL},
        {TB_RES_KEY(attainable_gb_s), R_NUM_NONNEG, true, false, NULL},
        {TB_RES_KEY(bound), R_ENUM, true, false, bounds},
        {TB_RES_KEY(min_time_ns), R_NUM_POS, true, false, NULL},
        {TB_RES_KEY(fraction), R_NUM_POS, true, false, NULL},
    };
    const size_t n = sizeof m / sizeof m[0];
    const cJSON *v;
    cJSON_ArrayForEach(v, r)
    {
        size_t i = 0;
        while (i < n && strcmp(v->string, m[i].key))
            i++;
        if (i == n)
            return v->string; /* not a member of the schema's object */
    }
    for (size_t i = 0; i < n; i++) {
        v = cJSON_GetObjectItemCaseSensitive(r, m[i].key);
        if (!v) {
            if (m[i].required)
                return m[i].key;
            continue;
        }
        if (cJSON_IsNull(v)) {
            if (!m[i].nullable)
                return m[i].key;
            continue;
        }
        double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
        bool ok;
        switch (m[i].kind) {
        case R_NUM_POS: ok = isfinite(d) && d > 0; break;
        case R_NUM_NONNEG: ok = isfinite(d) && d >= 0; break;
        case R_INT_POS: ok = isfinite(d) && d >= 1 && d == floor(d); break;
        case R_STR: ok = cJSON_IsString(v); break;
        default: ok = str_in(v, m[i].set); break;
        }
        if (!ok)
            return m[i].key;
    }
    return NULL;
}

/* The members of a case record that report, plot and export read,
 * beyond what every command needs: of the documented type when present
 * and not null.  Returns the name of the first bad one, or NULL. */
static const char *case_shape_error(const cJSON *cj)
{
    static const char *const objs[] = {
        TB_RES_KEY(params), TB_RES_KEY(model),    TB_RES_KEY(check),
        TB_RES_KEY(timing), TB_RES_KEY(roofline), TB_RES_KEY(backend_params)};
    for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++)
        if (!opt_is(cj, objs[i], cJSON_IsObject))
            return objs[i];
    const cJSON *bp = tb_res_obj(cj, TB_RES_KEY(backend_params));
    if (bp && !all_strings(bp))
        return TB_RES_KEY(backend_params);
    static const char *const lists[] = {TB_RES_KEY(shapes),
                                        TB_RES_KEY(out_shapes)};
    for (size_t i = 0; i < 2; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(cj, lists[i]);
        if (v && !cJSON_IsNull(v) && !shape_list(v))
            return lists[i];
    }
    if (!opt_is(cj, TB_RES_KEY(category), cJSON_IsString))
        return TB_RES_KEY(category);
    return NULL;
}

/* ---- the typed view ------------------------------------------------------------ */

/* A list of shapes (checked by case_shape_error) into f's arena. */
static bool load_shapes(tb_resfile *f, const cJSON *a, int *n,
                        const tb_res_shape **out)
{
    int k = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
    tb_res_shape *v = k ? tb_res_alloc(f, (size_t)k * sizeof *v) : NULL;
    *n = 0;
    *out = v;
    if (k && !v)
        return false;
    const cJSON *s, *d;
    cJSON_ArrayForEach(s, (k ? a : NULL))
    {
        int nd = cJSON_GetArraySize(s);
        double *dim = nd ? tb_res_alloc(f, (size_t)nd * sizeof *dim) : NULL;
        if (nd && !dim)
            return false;
        v[*n] = (tb_res_shape){0, dim};
        cJSON_ArrayForEach(d, s)
            dim[v[*n].ndim++] = d->valuedouble;
        (*n)++;
    }
    return true;
}

/* params (numbers and bools; strings as text; NAN for anything else)
 * and backend_params (strings), in file order. */
static bool load_params(tb_resfile *f, tb_rescase *c, const cJSON *cj)
{
    const cJSON *pr = tb_res_obj(cj, TB_RES_KEY(params));
    const cJSON *bp = tb_res_obj(cj, TB_RES_KEY(backend_params));
    int np = pr ? cJSON_GetArraySize(pr) : 0;
    int na = bp ? cJSON_GetArraySize(bp) : 0;
    tb_res_param *p = np ? tb_res_alloc(f, (size_t)np * sizeof *p) : NULL;
    tb_res_axis *a = na ? tb_res_alloc(f, (size_t)na * sizeof *a) : NULL;
    if ((np && !p) || (na && !a))
        return false;
    const cJSON *v;
    cJSON_ArrayForEach(v, pr)
        p[c->n_params++] = (tb_res_param){
            v->string,
            cJSON_IsNumber(v) ? v->valuedouble
            : cJSON_IsBool(v) ? (cJSON_IsTrue(v) ? 1 : 0)
                              : NAN,
            cJSON_IsString(v) ? v->valuestring : NULL};
    cJSON_ArrayForEach(v, bp)
        a[c->n_axes++] = (tb_res_axis){v->string, v->valuestring};
    c->params = p;
    c->axes = a;
    return true;
}

/* A shape as the id spells it: AxBxC, "scalar" for no dimension. */
static void put_shape(tb_strbuf *b, const tb_res_shape *s)
{
    if (s->ndim == 0)
        tb_strbuf_add(b, "scalar");
    for (int i = 0; i < s->ndim; i++) {
        double d = s->dim[i];
        if (d == floor(d) && fabs(d) < 9e15)
            tb_strbuf_add(b, "%s%lld", i ? "x" : "", (long long)d);
        else
            tb_strbuf_add(b, "%s%.10g", i ? "x" : "", d);
    }
}

/* key, opp, shapes_text and variant from the typed fields, spelled as
 * the id spells them (docs/FORMAT.md, "A case"). */
static bool compose_id_parts(tb_resfile *f, tb_rescase *c)
{
    tb_strbuf b = {0};
    tb_strbuf_add(&b, "%s%s%s%s", c->op, c->alloc_outputs ? "@alloc" : "",
                  c->layout ? "@layout=" : "", c->layout ? c->layout : "");
    int np = 0;
    for (int i = 0; i < c->n_params; i++) {
        if (c->params[i].text)
            tb_strbuf_add(&b, "%s%s=%s", np++ ? "," : "[",
                          c->params[i].name, c->params[i].text);
        else if (!isnan(c->params[i].value))
            tb_strbuf_add(&b, "%s%s=%.10g", np++ ? "," : "[",
                          c->params[i].name, c->params[i].value);
    }
    tb_strbuf_add(&b, "%s", np ? "]" : "");
    size_t opp = b.n;
    tb_strbuf_add(&b, "/");
    /* a creation op has no inputs: its output shape stands there */
    int ns = c->n_shapes ? c->n_shapes : c->n_out_shapes ? 1 : 0;
    const tb_res_shape *sh = c->n_shapes ? c->shapes : c->out_shapes;
    for (int i = 0; i < ns; i++) {
        if (i)
            tb_strbuf_add(&b, ",");
        put_shape(&b, &sh[i]);
    }
    size_t shapes_end = b.n;
    tb_strbuf_add(&b, "/%s", c->dtype);
    size_t key = b.n;
    tb_strbuf_add(&b, "%s", c->backend);
    for (int i = 0; i < c->n_axes; i++)
        tb_strbuf_add(&b, "%s%s=%s", i ? "," : "[", c->axes[i].name,
                      c->axes[i].value);
    tb_strbuf_add(&b, "%s%s", c->n_axes ? "]" : "",
                  c->transfers ? "@transfers" : "");
    if (b.oom) {
        tb_strbuf_free(&b);
        return false;
    }
    c->key = tb_res_strndup(f, b.p, key);
    c->opp = tb_res_strndup(f, b.p, opp);
    c->shapes_text = tb_res_strndup(f, b.p + opp + 1, shapes_end - opp - 1);
    c->variant = tb_res_strndup(f, b.p + key, b.n - key);
    tb_strbuf_free(&b);
    return c->key && c->opp && c->shapes_text && c->variant;
}

/* The objects of TB_RES_CASE_OBJS, and a row per TB_RES_CASE_FIELDS
 * member. */
enum {
    OBJ_case = -1,
#define OBJ_ENUM(o, parent) OBJ_##o,
    TB_RES_CASE_OBJS(OBJ_ENUM)
#undef OBJ_ENUM
        N_OBJS
};

static const struct {
    const char *key;
    int parent;
} objs[] = {
#define OBJ_ROW(o, parent) {TB_RES_KEY(o), OBJ_##parent},
    TB_RES_CASE_OBJS(OBJ_ROW)
#undef OBJ_ROW
};

enum { T_num, T_str, T_flag };

static const struct {
    int obj;
    const char *key;
    int type;
    size_t off;
} fields[] = {
#define FIELD_ROW(o, k, t)                                               \
    {OBJ_##o, TB_RES_KEY(k), T_##t, offsetof(tb_res_fields, o##_##k)},
    TB_RES_CASE_FIELDS(FIELD_ROW)
#undef FIELD_ROW
};

/* c->f from the record cj. */
static void load_fields(tb_rescase *c, const cJSON *cj)
{
    const cJSON *o[N_OBJS];
    for (int i = 0; i < N_OBJS; i++) /* a parent comes before its child */
        o[i] = tb_res_obj(objs[i].parent < 0 ? cj : o[objs[i].parent],
                          objs[i].key);
    unsigned char *base = (unsigned char *)&c->f;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const cJSON *from = o[fields[i].obj];
        void *to = base + fields[i].off;
        if (fields[i].type == T_num) {
            double v = tb_res_num(from, fields[i].key);
            memcpy(to, &v, sizeof v);
        } else if (fields[i].type == T_str) {
            const char *v = tb_res_str(from, fields[i].key);
            memcpy(to, &v, sizeof v);
        } else {
            bool v = cJSON_IsTrue(
                cJSON_GetObjectItemCaseSensitive(from, fields[i].key));
            memcpy(to, &v, sizeof v);
        }
    }
}

/* What every command needs: non-empty id, op, dtype, backend and a
 * known status. */
static int check_identity(tb_resfile *f, tb_rescase *c, const cJSON *cj,
                          int idx, char *err, size_t errlen)
{
    c->id = tb_res_str(cj, TB_RES_KEY(id));
    if (!c->id || !c->id[0])
        return BAD("cases[%d]: no \"id\" string", idx);
    static const char *const need[] = {TB_RES_KEY(op), TB_RES_KEY(dtype),
                                       TB_RES_KEY(backend),
                                       TB_RES_KEY(status)};
    const char **dst[] = {&c->op, &c->dtype, &c->backend, &c->status};
    for (size_t k = 0; k < sizeof need / sizeof need[0]; k++) {
        *dst[k] = tb_res_str(cj, need[k]);
        if (!*dst[k] || !*dst[k][0])
            return BAD("cases[%d] (%s): no \"%s\" string", idx, c->id,
                       need[k]);
    }
    int st = tb_res_status_parse(c->status);
    if (st < 0) {
#define TB_RES_STATUS_WORD(e, n, k) " " n
        return BAD("cases[%d] (%s): unknown status \"%.40s\" (expected one "
                   "of:" TB_RES_STATUSES(TB_RES_STATUS_WORD) ")", idx,
                   c->id, c->status);
#undef TB_RES_STATUS_WORD
    }
    c->st = (tb_res_status)st;
    return 0;
}

/* The typed fields every record has: forms, strings, shapes, params,
 * axes, the cost model, the id's parts and the schema's scalars. */
static bool load_typed(tb_resfile *f, tb_rescase *c, const cJSON *cj)
{
    c->message = tb_res_str(cj, TB_RES_KEY(message));
    c->impl = tb_res_str(cj, TB_RES_KEY(impl));
    c->category = tb_res_str(cj, TB_RES_KEY(category));
    c->host = tb_res_str(cj, TB_RES_KEY(host));
    c->alloc_outputs = cJSON_IsTrue(
        cJSON_GetObjectItemCaseSensitive(cj, TB_RES_KEY(alloc_outputs)));
    c->transfers = cJSON_IsTrue(
        cJSON_GetObjectItemCaseSensitive(cj, TB_RES_KEY(transfers)));
    c->layout = tb_res_str(cj, TB_RES_KEY(layout));
    const cJSON *md = tb_res_obj(cj, TB_RES_KEY(model));
    c->bytes = tb_res_num(md, TB_RES_KEY(bytes));
    c->flops = tb_res_num(md, TB_RES_KEY(flops));
    c->items = tb_res_num(md, TB_RES_KEY(items));
    load_fields(c, cj);
    const cJSON *gc = tb_res_obj(cj, TB_RES_KEY(gpu_clock));
    if (!tb_res_strings(f, cJSON_GetObjectItemCaseSensitive(
                               gc, TB_RES_KEY(throttle_reasons)),
                        &c->throttle_reasons, &c->n_throttle_reasons, NULL))
        return false;
    return load_shapes(f, cJSON_GetObjectItemCaseSensitive(
                              cj, TB_RES_KEY(shapes)),
                       &c->n_shapes, &c->shapes) &&
           load_shapes(f, cJSON_GetObjectItemCaseSensitive(
                              cj, TB_RES_KEY(out_shapes)),
                       &c->n_out_shapes, &c->out_shapes) &&
           load_params(f, c, cj) && compose_id_parts(f, c);
}

/* What the schema says of any record beyond types: a case that did not
 * run to the end (any status but ok) has no stats, and the cost model's
 * counts are >= 0. */
static int check_untimed(tb_resfile *f, const tb_rescase *c,
                         const cJSON *cj, int idx, char *err, size_t errlen)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(cj, TB_RES_KEY(stats));
    if (c->st != TB_RES_STATUS_OK && st && !cJSON_IsNull(st))
        return BAD("cases[%d] (%s): status is %s but stats is not null",
                   idx, c->id, c->status);
    if (c->layout && strcmp(c->layout, "transposed") &&
        strcmp(c->layout, "strided") && strcmp(c->layout, "sliced"))
        return BAD("cases[%d] (%s): layout: expected \"transposed\", "
                   "\"strided\" or \"sliced\" (absent: contiguous), got "
                   "\"%s\"", idx, c->id, c->layout);
    const double m[] = {c->flops, c->bytes, c->items};
    static const char *const m_key[] = {TB_RES_KEY(flops), TB_RES_KEY(bytes),
                                        TB_RES_KEY(items)};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (m[i] < 0)
            return BAD("cases[%d] (%s): model.%s: expected a number >= 0, "
                       "got %g", idx, c->id, m_key[i], m[i]);
    return 0;
}

int tb_res_load_case(tb_resfile *f, tb_rescase *c, const cJSON *cj, int idx,
                     char *err, size_t errlen)
{
    c->json = cj;
    for (int k = 0; k < TB_RES_NCOUNTERS_ALL; k++)
        c->counters[k] = NAN;
    for (int k = 0; k < TB_RES_NCUPTI; k++)
        c->cupti_ctr[k] = NAN;
    c->bytes = c->flops = c->items = NAN;
    c->gb_s = c->gflop_s = c->items_s = NAN;
    c->instructions = NAN;
    if (!cJSON_IsObject(cj))
        return BAD("cases[%d]: expected an object", idx);
    int rc = check_identity(f, c, cj, idx, err, errlen);
    if (rc)
        return rc;
    char where[256] = "";
    const cJSON *inf = tb_res_nonfinite(cj, where, sizeof where, 0);
    if (inf)
        return BAD("cases[%d] (%s): %s: expected a finite number, got %g "
                   "(too large for a double)", idx, c->id, where,
                   inf->valuedouble);
    const char *bad_member = case_shape_error(cj);
    if (bad_member)
        return BAD("cases[%d] (%s): %s: not of the type docs/FORMAT.md "
                   "gives", idx, c->id, bad_member);
    const cJSON *rf = tb_res_obj(cj, TB_RES_KEY(roofline));
    if (rf && (bad_member = roofline_error(rf)))
        return BAD("cases[%d] (%s): roofline.%s: missing, unknown, or not "
                   "of the type or range docs/results.schema.json gives",
                   idx, c->id, bad_member);
    if (!load_typed(f, c, cj))
        return tb_res_fail(err, errlen, f->path, TB_ENOMEM, "out of memory");
    if ((rc = check_untimed(f, c, cj, idx, err, errlen)))
        return rc;
    if (c->st == TB_RES_STATUS_OK &&
        (rc = load_timed(f, c, cj, idx, err, errlen)))
        return rc;
    if ((rc = tb_res_load_breakdown(f, c, cj, idx, err, errlen)))
        return rc;
    return load_cupti(f, c, cj, idx, err, errlen);
}

double tb_rescase_param(const tb_rescase *c, const char *name, double def)
{
    for (int i = 0; i < c->n_params; i++)
        if (!strcmp(c->params[i].name, name))
            return isnan(c->params[i].value) ? def : c->params[i].value;
    return def;
}

const char *tb_rescase_axis(const tb_rescase *c, const char *name)
{
    for (int i = 0; i < c->n_axes; i++)
        if (!strcmp(c->axes[i].name, name))
            return c->axes[i].value;
    return NULL;
}

/* Does b run a's case with one thread: the same key, backend and forms,
 * the same axes but threads = 1? */
static bool one_thread_of(const tb_rescase *a, const tb_rescase *b)
{
    if (strcmp(a->key, b->key) || strcmp(a->backend, b->backend) ||
        a->transfers != b->transfers || a->n_axes != b->n_axes)
        return false;
    for (int i = 0; i < a->n_axes; i++) {
        bool thr = !strcmp(a->axes[i].name, "threads");
        if (strcmp(a->axes[i].name, b->axes[i].name) ||
            strcmp(b->axes[i].value, thr ? "1" : a->axes[i].value))
            return false;
    }
    return true;
}

const tb_rescase *tb_resfile_one_thread(const tb_resfile *f,
                                        const tb_rescase *c)
{
    const char *t = tb_rescase_axis(c, "threads");
    if (!t || !t[0] || t[strspn(t, "0123456789")] || !strcmp(t, "1"))
        return NULL;
    for (int i = 0; i < f->n; i++)
        if (one_thread_of(c, &f->cases[i]))
            return &f->cases[i];
    return NULL;
}

bool tb_res_detach_case(tb_resfile *f, tb_rescase *c)
{
    /* the id is the one string no other record has */
    char *id = tb_res_strndup(f, c->id, strlen(c->id));
    if (!id)
        return false;
    c->id = id;
    const char **one[] = {&c->op,           &c->dtype,
                          &c->backend,      &c->category,
                          &c->status,       &c->message,
                          &c->impl,         &c->host,
                          &c->layout,       &c->cupti_reason,
                          &c->instr_source, &c->instr_isa,
                          &c->breakdown_reason};
    bool ok = true;
    for (size_t i = 0; i < sizeof one / sizeof one[0]; i++)
        ok = ok && tb_res_share(f, one[i]);
    /* the arrays below are the file's own (tb_res_alloc) */
    tb_res_param *p = (tb_res_param *)c->params;
    for (int i = 0; ok && i < c->n_params; i++)
        ok = tb_res_share(f, &p[i].name) && tb_res_share(f, &p[i].text);
    tb_res_axis *a = (tb_res_axis *)c->axes;
    for (int i = 0; ok && i < c->n_axes; i++)
        ok = tb_res_share(f, &a[i].name) && tb_res_share(f, &a[i].value);
    tb_res_kernel *k = (tb_res_kernel *)c->cupti.kernels;
    for (int i = 0; ok && i < c->cupti.n_kernels; i++)
        ok = tb_res_share(f, &k[i].name);
    tb_res_part *q = (tb_res_part *)c->breakdown.parts;
    for (int i = 0; ok && i < c->breakdown.n_parts; i++)
        ok = tb_res_share(f, &q[i].op) && tb_res_share(f, &q[i].kernel) &&
             tb_res_share(f, &q[i].phase);
    const char **t = (const char **)c->throttle_reasons;
    for (int i = 0; ok && i < c->n_throttle_reasons; i++)
        ok = tb_res_share(f, &t[i]);
    unsigned char *base = (unsigned char *)&c->f;
    for (size_t i = 0; ok && i < sizeof fields / sizeof fields[0]; i++)
        if (fields[i].type == T_str)
            ok = tb_res_share(f, (const char **)(void *)(base +
                                                        fields[i].off));
    c->json = NULL;
    return ok;
}
