/* The loader's run-level fields (env, peaks, config, summary, shard:
 * resultsio.h). */
#include "resultsio_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"

/* ---- env ------------------------------------------------------------------- */

static bool load_cpu(tb_resfile *f, const cJSON *cpu)
{
    tb_resenv *e = &f->env;
    e->logical_cpus = e->physical_cores = e->mhz = NAN;
    if (!cJSON_IsObject(cpu))
        return true;
    e->has_cpu = true;
    e->cpu_model = tb_res_str(cpu, TB_RES_KEY(model));
    e->cpu_vendor = tb_res_str(cpu, TB_RES_KEY(vendor));
    e->logical_cpus = tb_res_num(cpu, TB_RES_KEY(logical_cpus));
    e->physical_cores = tb_res_num(cpu, TB_RES_KEY(physical_cores));
    e->mhz = tb_res_num(cpu, TB_RES_KEY(mhz));
    const cJSON *gov = cJSON_GetObjectItemCaseSensitive(cpu,
                                                        TB_RES_KEY(governor));
    e->has_governor = gov != NULL;
    e->governor = cJSON_IsString(gov) ? gov->valuestring : NULL;
    if (!tb_res_strings(f,
                        cJSON_GetObjectItemCaseSensitive(cpu, TB_RES_KEY(isa)),
                        &e->isa, &e->n_isa, &e->n_isa_items))
        return false;
    const cJSON *ca = cJSON_GetObjectItemCaseSensitive(cpu,
                                                       TB_RES_KEY(caches));
    e->has_caches = cJSON_IsArray(ca);
    int n = e->has_caches ? cJSON_GetArraySize(ca) : 0;
    tb_res_cache *v = n ? tb_res_alloc(f, (size_t)n * sizeof *v) : NULL;
    if (n && !v)
        return false;
    const cJSON *c;
    cJSON_ArrayForEach(c, (n ? ca : NULL))
    {
        v[e->n_caches++] = (tb_res_cache){
            .level = tb_res_num(c, TB_RES_KEY(level)),
            .size_bytes = tb_res_num(c, TB_RES_KEY(size_bytes)),
            .type = tb_res_str(c, TB_RES_KEY(type)),
            .shared_cpus = tb_res_str(c, TB_RES_KEY(shared_cpus)),
        };
    }
    e->caches = v;
    return true;
}

/* The number members of env.python_overhead (scripts/compare_numpy.py),
 * in order, each with its CI from ci_ns when the file has one. */
static bool load_overhead(tb_resfile *f, const cJSON *ov)
{
    tb_resenv *e = &f->env;
    if (!cJSON_IsObject(ov))
        return true;
    e->has_python_overhead = true;
    e->python_overhead_method = tb_res_str(ov, TB_RES_KEY(method));
    const cJSON *ci = cJSON_GetObjectItemCaseSensitive(ov, TB_RES_KEY(ci_ns));
    int n = cJSON_GetArraySize(ov);
    tb_res_figure *v = n ? tb_res_alloc(f, (size_t)n * sizeof *v) : NULL;
    if (n && !v)
        return false;
    const cJSON *m;
    cJSON_ArrayForEach(m, ov)
    {
        if (!cJSON_IsNumber(m))
            continue;
        const cJSON *b = cJSON_IsObject(ci) ? cJSON_GetObjectItemCaseSensitive(
                                                  ci, m->string)
                                            : NULL;
        const cJSON *lo = cJSON_GetArrayItem(b, 0), *hi = cJSON_GetArrayItem(b, 1);
        bool has = cJSON_IsArray(b) && cJSON_GetArraySize(b) == 2 &&
                   cJSON_IsNumber(lo) && cJSON_IsNumber(hi);
        v[e->n_python_overhead++] = (tb_res_figure){
            m->string, m->valuedouble, has ? lo->valuedouble : NAN,
            has ? hi->valuedouble : NAN};
    }
    e->python_overhead = v;
    return true;
}

static bool load_plugins(tb_resfile *f, const cJSON *a)
{
    tb_resenv *e = &f->env;
    int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
    tb_res_plugin *v = n ? tb_res_alloc(f, (size_t)n * sizeof *v) : NULL;
    if (n && !v)
        return false;
    const cJSON *p;
    cJSON_ArrayForEach(p, (n ? a : NULL))
        v[e->n_plugins++] = (tb_res_plugin){
            tb_res_str(p, TB_RES_KEY(name)), tb_res_str(p, TB_RES_KEY(path))};
    e->plugins = v;
    return true;
}

static bool load_env(tb_resfile *f)
{
    tb_resenv *e = &f->env;
    const cJSON *env = tb_res_obj(f->doc, TB_RES_KEY(env));
    e->json = env;
    e->date = tb_res_str(env, TB_RES_KEY(date));
    e->hostname = tb_res_str(env, TB_RES_KEY(hostname));
    e->command = tb_res_str(env, TB_RES_KEY(command));
    e->build = tb_res_obj(env, TB_RES_KEY(build));
    e->git_commit = tb_res_str(e->build, TB_RES_KEY(git_commit));
    e->build_type = tb_res_str(e->build, TB_RES_KEY(build_type));
    e->c_args = tb_res_str(e->build, TB_RES_KEY(c_args));
    e->sanitize = tb_res_str(e->build, TB_RES_KEY(sanitize));
    e->tbench_version = tb_res_str(e->build, TB_RES_KEY(tbench_version));
    const cJSON *mem = tb_res_obj(env, TB_RES_KEY(memory));
    e->has_memory = mem != NULL;
    e->memory_total = tb_res_num(mem, TB_RES_KEY(total_bytes));
    e->memory_available = tb_res_num(mem, TB_RES_KEY(available_bytes));
    const cJSON *os = tb_res_obj(env, TB_RES_KEY(os));
    e->has_os = os != NULL;
    e->os_name = tb_res_str(os, TB_RES_KEY(name));
    e->os_kernel = tb_res_str(os, TB_RES_KEY(kernel));
    e->os_machine = tb_res_str(os, TB_RES_KEY(machine));
    const cJSON *la = cJSON_GetObjectItemCaseSensitive(env,
                                                       TB_RES_KEY(loadavg));
    e->n_loadavg = cJSON_IsArray(la) ? cJSON_GetArraySize(la) : -1;
    for (int i = 0; i < 3 && i < e->n_loadavg; i++) {
        const cJSON *v = cJSON_GetArrayItem(la, i);
        e->loadavg[i] = cJSON_IsNumber(v) ? v->valuedouble : 0;
    }
    const cJSON *clk = tb_res_obj(env, TB_RES_KEY(clock));
    e->has_clock = clk != NULL;
    e->clock_source = tb_res_str(clk, TB_RES_KEY(source));
    e->clock_resolution_ns = tb_res_num(clk, TB_RES_KEY(resolution_ns));
    e->libraries = tb_res_obj(env, TB_RES_KEY(libraries));
    return load_cpu(f, tb_res_obj(env, TB_RES_KEY(cpu))) &&
           tb_res_strings(f,
                   cJSON_GetObjectItemCaseSensitive(env,
                                                    TB_RES_KEY(warnings)),
                   &e->warnings, &e->n_warnings, &e->n_warning_items) &&
           load_plugins(f, cJSON_GetObjectItemCaseSensitive(
                               env, TB_RES_KEY(plugins))) &&
           load_overhead(f, tb_res_obj(env, TB_RES_KEY(python_overhead)));
}

/* ---- peaks ----------------------------------------------------------------- */

/* The figures of array a: bandwidth (GB/s) or flops (GFLOP/s). */
static bool load_figures(tb_resfile *f, const cJSON *a, bool flops,
                         const tb_res_peak **out, int *n)
{
    int k = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
    tb_res_peak *v = k ? tb_res_alloc(f, (size_t)k * sizeof *v) : NULL;
    *out = v;
    *n = 0;
    if (k && !v)
        return false;
    const cJSON *e;
    cJSON_ArrayForEach(e, (k ? a : NULL))
    {
        tb_res_peak *p = &v[(*n)++];
        p->kernel = tb_res_str(e, TB_RES_KEY(kernel));
        p->level = tb_res_str(e, TB_RES_KEY(level));
        p->isa = tb_res_str(e, TB_RES_KEY(isa));
        p->dtype = tb_res_str(e, TB_RES_KEY(dtype));
        p->threads = tb_res_num(e, TB_RES_KEY(threads));
        p->working_set_bytes = tb_res_num(e, TB_RES_KEY(working_set_bytes));
        p->best = tb_res_num(e, flops ? TB_RES_KEY(best_gflop_s)
                                      : TB_RES_KEY(best_gb_s));
        p->median = tb_res_num(e, flops ? TB_RES_KEY(median_gflop_s)
                                        : TB_RES_KEY(median_gb_s));
        p->vendor = tb_res_num(e, flops ? TB_RES_KEY(vendor_gflop_s)
                                        : TB_RES_KEY(vendor_gb_s));
        p->worst = flops ? NAN : tb_res_num(e, TB_RES_KEY(worst_gb_s));
    }
    return true;
}

static bool load_peaks(tb_resfile *f)
{
    tb_respeaks *p = &f->peaks;
    const cJSON *pk = tb_res_obj(f->doc, TB_RES_KEY(peaks));
    p->present = pk != NULL;
    p->quick = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
        pk, TB_RES_KEY(quick)));
    p->date = tb_res_str(pk, TB_RES_KEY(date));
    p->load_avg_1m = tb_res_num(pk, TB_RES_KEY(load_avg_1m));
    const cJSON *g = tb_res_obj(pk, TB_RES_KEY(gpu));
    const cJSON *d = tb_res_obj(g, TB_RES_KEY(device));
    p->has_gpu = g != NULL;
    p->gpu_available = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
        g, TB_RES_KEY(available)));
    p->gpu_backend = tb_res_str(g, TB_RES_KEY(backend));
    p->gpu_reason = tb_res_str(g, TB_RES_KEY(reason));
    p->gpu_name = tb_res_str(d, TB_RES_KEY(name));
    p->gpu_cc = tb_res_str(d, TB_RES_KEY(compute_capability));
    p->gpu_sm_count = tb_res_num(d, TB_RES_KEY(sm_count));
#define ARR(o, k) cJSON_GetObjectItemCaseSensitive(o, TB_RES_KEY(k))
    return load_figures(f, ARR(pk, bandwidth), false, &p->bandwidth,
                        &p->n_bandwidth) &&
           load_figures(f, ARR(pk, flops), true, &p->flops, &p->n_flops) &&
           load_figures(f, ARR(g, bandwidth), false, &p->gpu_bandwidth,
                        &p->n_gpu_bandwidth) &&
           load_figures(f, ARR(g, flops), true, &p->gpu_flops,
                        &p->n_gpu_flops);
#undef ARR
}

/* ---- config, summary, shard ------------------------------------------------- */

static bool load_config(tb_resfile *f)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(f->doc,
                                                      TB_RES_KEY(config));
    f->has_config = cJSON_IsArray(a);
    int n = f->has_config ? cJSON_GetArraySize(a) : 0;
    tb_res_config *v = n ? tb_res_alloc(f, (size_t)n * sizeof *v) : NULL;
    if (n && !v)
        return false;
    const cJSON *c;
    cJSON_ArrayForEach(c, (n ? a : NULL))
        v[f->n_config++] = (tb_res_config){
            .path = tb_res_str(c, TB_RES_KEY(path)),
            .name = tb_res_str(c, TB_RES_KEY(name)),
            .text = tb_res_str(c, TB_RES_KEY(text)),
            .seed = tb_res_num(c, TB_RES_KEY(seed)),
            .warmup = tb_res_obj(c, TB_RES_KEY(warmup)),
            .measure = tb_res_obj(c, TB_RES_KEY(measure)),
        };
    f->config = v;
    return true;
}

static bool load_summary(tb_resfile *f)
{
    const cJSON *s = tb_res_obj(f->doc, TB_RES_KEY(summary));
    int n = s ? cJSON_GetArraySize(s) : 0;
    tb_res_count *v = n ? tb_res_alloc(f, (size_t)n * sizeof *v) : NULL;
    if (n && !v)
        return false;
    f->has_summary = s != NULL;
    const cJSON *m;
    cJSON_ArrayForEach(m, s)
        v[f->n_summary++] = (tb_res_count){
            m->string, cJSON_IsNumber(m) ? m->valuedouble : NAN};
    f->summary = v;
    return true;
}

static bool load_shard(tb_resfile *f)
{
    const cJSON *s = tb_res_obj(f->doc, TB_RES_KEY(shard));
    f->has_shard = s != NULL;
    f->shard_index = tb_res_num(s, TB_RES_KEY(index));
    f->shard_count = tb_res_num(s, TB_RES_KEY(count));
    f->shard_cases = tb_res_num(s, TB_RES_KEY(cases));
    f->shard_plan_cases = tb_res_num(s, TB_RES_KEY(plan_cases));
    f->shard_plan_digest = tb_res_str(s, TB_RES_KEY(plan_digest));
    const cJSON *sel = tb_res_obj(s, TB_RES_KEY(selection));
    f->has_selection = sel != NULL;
    static const char *const none[1] = {NULL};
    f->sel_filters = f->sel_excludes = f->sel_backends = (const char **)none;
    if (!sel)
        return true;
    const char *const keys[3] = {TB_RES_KEY(filters), TB_RES_KEY(excludes),
                                 TB_RES_KEY(backends)};
    const char ***to[3] = {&f->sel_filters, &f->sel_excludes,
                           &f->sel_backends};
    for (int k = 0; k < 3; k++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(sel, keys[k]);
        int n = cJSON_GetArraySize(a);
        const char **v = tb_res_alloc(f, (size_t)(n + 1) * sizeof *v);
        if (!v)
            return false;
        int m = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, a)
        {
            if (!cJSON_IsString(e))
                return false;
            v[m++] = e->valuestring;
        }
        v[m] = NULL;
        *to[k] = v;
    }
    return true;
}

int tb_res_load_run(tb_resfile *f)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(f->doc,
                                                      TB_RES_KEY(complete));
    f->complete = cJSON_IsTrue(c);
    f->incomplete = cJSON_IsFalse(c);
    if (!load_shard(f))
        return TB_EINVAL;
    if (!load_env(f) || !load_peaks(f) || !load_config(f) ||
        !load_summary(f))
        return TB_ENOMEM;
    f->date = f->env.date;
    f->hostname = f->env.hostname;
    f->git_commit = f->env.git_commit;
    f->cpu_model = f->env.cpu_model;
    return 0;
}

/* ---- questions about two files --------------------------------------------- */

double tb_resfile_summary(const tb_resfile *f, const char *name)
{
    for (int i = 0; i < f->n_summary; i++)
        if (!strcmp(f->summary[i].name, name))
            return f->summary[i].value;
    return NAN;
}

const char *tb_resfile_build_diff(const tb_resfile *a, const tb_resfile *b)
{
    const cJSON *ba = a->env.build, *bb = b->env.build;
    if (!ba || !bb)
        return ba || bb ? "env.build" : NULL;
    const cJSON *m;
    cJSON_ArrayForEach(m, ba)
    {
        if (!cJSON_Compare(m, cJSON_GetObjectItemCaseSensitive(bb, m->string),
                           1))
            return m->string;
    }
    return cJSON_GetArraySize(ba) == cJSON_GetArraySize(bb) ? NULL
                                                             : "env.build";
}

bool tb_resfile_same_peaks(const tb_resfile *a, const tb_resfile *b)
{
    return cJSON_Compare(
        cJSON_GetObjectItemCaseSensitive(a->doc, TB_RES_KEY(peaks)),
        cJSON_GetObjectItemCaseSensitive(b->doc, TB_RES_KEY(peaks)), 1);
}
