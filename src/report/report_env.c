/* The report's sections on the run itself: how to reproduce it, the
 * build and the environment with the measured peaks (report_impl.h). */
#include "report_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- how to reproduce ------------------------------------------------------ */

/* The config files with their matrix names and seeds, when the run
 * started, and its cases by status. */
static void reproduce_facts(const tb_rpt *x)
{
    const tb_resfile *f = tb_rpt_main(x);
    for (int i = 0; i < f->n_config; i++) {
        const tb_res_config *cf = &f->config[i];
        /* cJSON reads numbers as doubles: above 2^53 the file's digits
         * (exact) are not what we would print */
        char sd[64] = "?";
        if (cf->seed >= 0 && cf->seed <= 9007199254740992.0)
            snprintf(sd, sizeof sd, "%.0f", cf->seed);
        else if (cf->seed > 0)
            snprintf(sd, sizeof sd, "above 2^53, exactly as in `config`");
        sb(x->b, "- config: `%s` (matrix `%s`, seed %s)\n",
           cf->path ? cf->path : "?", cf->name ? cf->name : "?", sd);
    }
    if (f->env.date)
        sb(x->b, "- run started: %s (UTC)\n", f->env.date);
    if (!f->has_summary)
        return;
#define N(s) tb_resfile_summary(f, tb_res_status_name(TB_RES_STATUS_##s))
    /* crashed and timeout only when the run had such cases */
    double cr = N(CRASHED), to = N(TIMEOUT);
    char more[96] = "";
    if (cr > 0 || to > 0)
        snprintf(more, sizeof more, ", crashed %.0f, timeout %.0f",
                 cr > 0 ? cr : 0, to > 0 ? to : 0);
    sb(x->b, "- cases: %.0f (ok %.0f, unsupported %.0f, unavailable %.0f, "
             "failed-check %.0f, error %.0f%s)%s\n",
       tb_resfile_summary(f, TB_RES_KEY(cases)), N(OK), N(UNSUPPORTED),
       N(UNAVAILABLE), N(FAILED_CHECK), N(ERROR), more,
       f->incomplete ? "; the run did not complete (interrupted): only "
                       "the finished cases are here"
                     : "");
#undef N
}

/* The folder the report reads its result file from ("" when the file
 * has another name than results.json). */
static void run_dir(const char *main_path, char *dir, size_t len)
{
    dir[0] = '\0';
    if (!main_path)
        return;
    snprintf(dir, len, "%s", main_path);
    size_t l = strlen(dir);
    if (l > 13 && !strcmp(dir + l - 13, "/results.json"))
        dir[l - 13] = '\0';
    else if (!strcmp(dir, "results.json"))
        snprintf(dir, len, ".");
    else
        dir[0] = '\0'; /* a file of another name: copied there below */
}

/* The commands that rebuild the binary and run the run again. */
static void reproduce_recipe(const tb_rpt *x)
{
    const tb_resfile *f = tb_rpt_main(x);
    const tb_resenv *e = &f->env;
    tb_strbuf *b = x->b;
    sb(b, "\n```sh\n");
    if (e->git_commit && strcmp(e->git_commit, "unknown") != 0) {
        char c[128];
        snprintf(c, sizeof c, "%s", e->git_commit);
        char *d = strstr(c, "-dirty");
        if (d)
            *d = '\0';
        sb(b, "git checkout %s\n", c);
    }
    sb(b, "meson setup build");
    if (e->build_type)
        sb(b, " -Dbuildtype=%s", e->build_type);
    if (e->sanitize && strcmp(e->sanitize, "none") != 0)
        sb(b, " -Db_sanitize=%s", e->sanitize);
    if (e->c_args && e->c_args[0])
        sb(b, " -Dc_args='%s'", e->c_args);
    sb(b, " && ninja -C build\n");
    if (f->peaks.present) /* the run copied cached peaks: measure them */
        sb(b, "build/tbench peak%s\n", f->peaks.quick ? " --quick" : "");
    sb(b, "build/tbench run");
    for (int i = 0; i < f->n_config; i++)
        sb(b, " %s", f->config[i].path ? f->config[i].path : "?");
    /* the plugins it loaded, each under the name its cases carry */
    for (int i = 0; i < e->n_plugins; i++)
        if (e->plugins[i].path && e->plugins[i].name)
            sb(b, " --plugin %s:%s", e->plugins[i].path, e->plugins[i].name);
    /* run into the folder the report reads its result file from, so the
     * recipe runs as written */
    char dir[1024];
    const char *main_path = x->s->n_docs ? f->path : NULL;
    run_dir(main_path, dir, sizeof dir);
    if (dir[0])
        sb(b, " -o %s\n", dir);
    else
        sb(b, " -o results/run && cp results/run/results.json %s\n",
           main_path ? main_path : "results.json");
    for (int d = 0; d < x->s->n_docs; d++) {
        const char *cmd = x->s->docs[d].file->env.command;
        if (x->s->docs[d].role == TB_ROLE_WITH && cmd)
            sb(b, "%s\n", cmd);
    }
    const char *rcmd = x->o->command ? x->o->command : "tbench report";
    /* the binary the recipe built */
    sb(b, "%s%s\n```\n\n", strncmp(rcmd, "tbench ", 7) ? "" : "build/",
       rcmd);
}

void tb_rpt_reproduce(const tb_rpt *x)
{
    const char *commit = tb_rpt_main(x)->env.git_commit;
    sb(x->b, "## How to reproduce\n\n");
    if (commit)
        sb(x->b, "- tbench commit: `%s` (`env.build.git_commit`)%s\n",
           commit,
           strstr(commit, "dirty")
               ? "; the working tree had uncommitted changes, so this "
                 "commit alone does not rebuild the exact binary"
               : "");
    reproduce_facts(x);
    reproduce_recipe(x);
    sb(x->b, "The result file does not record command-line options such as "
             "`--filter` or `--backend`; the case list below is what the "
             "run measured.\n\n");
}

/* ---- the build -------------------------------------------------------------- */

const char *tb_rpt_value_text(const cJSON *v, char *buf, size_t len)
{
    if (cJSON_IsString(v))
        return tb_md_cell(v->valuestring[0] ? v->valuestring : "(empty)",
                          buf, len);
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v) ? "yes" : "no";
    if (cJSON_IsNull(v))
        return "not recorded";
    if (cJSON_IsNumber(v)) {
        snprintf(buf, len, "%.10g", v->valuedouble);
        return buf;
    }
    if (cJSON_IsObject(v)) { /* "k: v, k: v", one level deep */
        size_t u = 0;
        const cJSON *m;
        buf[0] = '\0';
        cJSON_ArrayForEach(m, v)
        {
            char one[300];
            const char *t = cJSON_IsObject(m) || cJSON_IsArray(m)
                                ? "..."
                                : tb_rpt_value_text(m, one, sizeof one);
            if (u < len)
                u += (size_t)snprintf(buf + u, len - u, "%s%s: %s",
                                      u ? ", " : "", m->string, t);
        }
        return buf;
    }
    char *t = cJSON_PrintUnformatted(v);
    tb_md_cell(t ? t : "?", buf, len);
    free(t);
    return buf;
}

void tb_rpt_build(const tb_rpt *x)
{
    const cJSON *build = tb_rpt_main(x)->env.build;
    if (!build || !build->child)
        return;
    sb(x->b, "## Build configuration\n\n"
             "As recorded by the binary that ran (`env.build`).\n\n"
             "| Setting | Value |\n|---|---|\n");
    const cJSON *v;
    cJSON_ArrayForEach(v, build)
    {
        char buf[600];
        sb(x->b, "| %s | %s |\n", v->string,
           tb_rpt_value_text(v, buf, sizeof buf));
    }
    sb(x->b, "\n");
}

/* ---- the environment ---------------------------------------------------------- */

static void caches_text(const tb_resenv *e, tb_strbuf *b)
{
    for (int i = 0; i < e->n_caches; i++) {
        const tb_res_cache *c = &e->caches[i];
        char sz[32];
        sb(b, "%sL%.0f%s %s", i ? ", " : "", c->level,
           !c->type ? "" : !strcmp(c->type, "Data") ? "d"
                         : !strcmp(c->type, "Instruction") ? "i" : "",
           tb_md_bytes(c->size_bytes, sz, sizeof sz));
        if (c->shared_cpus && strchr(c->shared_cpus, '-'))
            sb(b, " (shared by CPUs %s)", c->shared_cpus);
    }
}

static void cpu_rows(const tb_resenv *e, tb_strbuf *b)
{
    char t[600];
    if (!e->has_cpu)
        return;
    if (e->cpu_model)
        sb(b, "| CPU | %s%s%s%s |\n", tb_md_cell(e->cpu_model, t, sizeof t),
           e->cpu_vendor ? " (" : "", e->cpu_vendor ? e->cpu_vendor : "",
           e->cpu_vendor ? ")" : "");
    if (!isnan(e->logical_cpus)) {
        sb(b, "| Cores | %.0f logical CPUs", e->logical_cpus);
        if (!isnan(e->physical_cores))
            sb(b, ", %.0f physical cores", e->physical_cores);
        sb(b, " |\n");
    }
    if (e->n_isa_items) {
        sb(b, "| ISA extensions |");
        for (int i = 0; i < e->n_isa; i++)
            sb(b, " %s", e->isa[i]);
        sb(b, " |\n");
    }
    if (!isnan(e->mhz))
        sb(b, "| Nominal clock | %.0f MHz (as /proc/cpuinfo reports it; not "
              "measured) |\n", e->mhz);
    if (e->n_caches) {
        sb(b, "| Caches | ");
        caches_text(e, b);
        sb(b, " |\n");
    }
    if (e->has_governor)
        sb(b, "| Frequency governor | %s |\n",
           e->governor ? e->governor : "not readable");
}

/* Members of env the table shows row by row above; the others are shown
 * as recorded. */
static bool env_shown(const char *name)
{
    static const char *const known[] = {
        TB_RES_KEY(cpu),     TB_RES_KEY(memory),    TB_RES_KEY(os),
        TB_RES_KEY(hostname), TB_RES_KEY(date),     TB_RES_KEY(loadavg),
        TB_RES_KEY(clock),   TB_RES_KEY(libraries), TB_RES_KEY(build),
        TB_RES_KEY(warnings), TB_RES_KEY(command)};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(name, known[i]))
            return true;
    return false;
}

static void env_rows(const tb_rpt *x, const tb_resenv *e)
{
    tb_strbuf *b = x->b;
    char t[600], u[64], w[64];
    cpu_rows(e, b);
    if (e->has_memory)
        sb(b, "| Memory | %s total, %s available at the start |\n",
           tb_md_bytes(e->memory_total, u, sizeof u),
           tb_md_bytes(e->memory_available, w, sizeof w));
    if (e->has_os)
        sb(b, "| OS | %s, kernel %s, %s |\n", e->os_name ? e->os_name : "?",
           e->os_kernel ? e->os_kernel : "?",
           e->os_machine ? e->os_machine : "?");
    if (e->hostname)
        sb(b, "| Host | %s |\n", tb_md_cell(e->hostname, t, sizeof t));
    if (e->date)
        sb(b, "| Started (UTC) | %s |\n", e->date);
    if (e->n_loadavg == 3)
        sb(b, "| Load average at the start | %.2f, %.2f, %.2f |\n",
           e->loadavg[0], e->loadavg[1], e->loadavg[2]);
    if (e->has_clock)
        sb(b, "| Clock | %s, resolution %.0f ns |\n",
           e->clock_source ? e->clock_source : "?", e->clock_resolution_ns);
    const cJSON *l;
    if (e->libraries && e->libraries->child) {
        sb(b, "| Libraries | ");
        cJSON_ArrayForEach(l, e->libraries)
            sb(b, "%s%s %s", l == e->libraries->child ? "" : ", ", l->string,
               tb_rpt_value_text(l, t, sizeof t));
        sb(b, " |\n");
    }
    /* Anything else the run recorded (GPU, driver, peaks...), verbatim. */
    const cJSON *v;
    cJSON_ArrayForEach(v, e->json)
        if (!env_shown(v->string))
            sb(b, "| %s | %s |\n", tb_md_cell(v->string, u, sizeof u),
               tb_rpt_value_text(v, t, sizeof t));
}

/* The machine peaks (schema tbench.peaks/1, docs/FORMAT.md) as a table:
 * best and median of the repetitions, per kernel/level or ISA/dtype and
 * thread count. */
static void peaks_table(tb_strbuf *b, const tb_respeaks *pk)
{
    if (pk->n_bandwidth + pk->n_flops == 0)
        return;
    sb(b, "### Measured machine peaks\n\n"
          "From the run's `peaks` (measured by `tbench peak`%s%s): the best "
          "and the median of the repetitions. The roofline fractions in the "
          "tables divide by these.\n\n"
          "| Peak | Threads | Best | Median |\n|---|---|---|---|\n",
       pk->date ? " on " : "", pk->date ? pk->date : "");
    char v1[32], v2[32], ws[32];
    for (int i = 0; i < pk->n_bandwidth; i++) {
        const tb_res_peak *e = &pk->bandwidth[i];
        sb(b, "| %s bandwidth, %s (working set %s) | %.0f | %s GB/s | %s "
              "GB/s |\n",
           e->kernel ? e->kernel : "?", e->level ? e->level : "?",
           tb_md_bytes(e->working_set_bytes, ws, sizeof ws), e->threads,
           tb_md_num(e->best, v1, sizeof v1),
           tb_md_num(e->median, v2, sizeof v2));
    }
    for (int i = 0; i < pk->n_flops; i++) {
        const tb_res_peak *e = &pk->flops[i];
        sb(b, "| FMA %s %s | %.0f | %s GFLOP/s | %s GFLOP/s |\n",
           e->isa ? e->isa : "?", e->dtype ? e->dtype : "?", e->threads,
           tb_md_num(e->best, v1, sizeof v1),
           tb_md_num(e->median, v2, sizeof v2));
    }
    sb(b, "\n");
}

/* The GPU's peaks beside its vendor figures (peaks.gpu), or why there
 * are none; nothing for peaks measured before they had a "gpu". */
static void gpu_peaks_table(tb_strbuf *b, const tb_respeaks *pk)
{
    if (!pk->has_gpu)
        return;
    const char *be = pk->gpu_backend;
    if (!pk->gpu_available) {
        sb(b, "No GPU peaks: %s was unavailable when they were measured "
              "(%s).\n\n", be ? be : "?",
           pk->gpu_reason ? pk->gpu_reason : "no reason given");
        return;
    }
    sb(b, "### Measured GPU peaks\n\n"
          "%s device 0: %s (compute capability %s, %.0f SMs), by the "
          "module's own kernels (`peaks.gpu`), beside the vendor figures "
          "(memory clock x bus width x 2; SMs x FMA lanes x clock x 2). "
          "The GPU cases' roofline fractions divide by the best.\n\n"
          "| Peak | Best | Median | Vendor | Best / vendor |\n"
          "|---|---|---|---|---|\n",
       be ? be : "?", pk->gpu_name ? pk->gpu_name : "?",
       pk->gpu_cc ? pk->gpu_cc : "?", pk->gpu_sm_count);
    for (int k = 0; k < 2; k++) {
        int n = k ? pk->n_gpu_flops : pk->n_gpu_bandwidth;
        for (int i = 0; i < n; i++) {
            const tb_res_peak *e = k ? &pk->gpu_flops[i]
                                     : &pk->gpu_bandwidth[i];
            char v1[32], v2[32], v3[32];
            const char *what = k ? e->dtype : e->kernel;
            sb(b, "| GPU %s %s | %s %s | %s | %s | ", what ? what : "?",
               k ? "FMA" : "bandwidth", tb_md_num(e->best, v1, sizeof v1),
               k ? "GFLOP/s" : "GB/s",
               isnan(e->median) ? "" : tb_md_num(e->median, v2, sizeof v2),
               isnan(e->vendor) ? "unknown"
                                : tb_md_num(e->vendor, v3, sizeof v3));
            if (isnan(e->vendor) || !(e->vendor > 0))
                sb(b, " |\n");
            else
                sb(b, "%.0f%% |\n", 100 * e->best / e->vendor);
        }
    }
    const char *why = pk->gpu_reason;
    sb(b, "\n%s%s%s", why ? "Note: " : "", why ? why : "", why ? "\n\n" : "");
}

void tb_rpt_environment(const tb_rpt *x)
{
    const tb_resfile *f = tb_rpt_main(x);
    const tb_resenv *e = &f->env;
    if (!e->json)
        return;
    sb(x->b, "## Environment\n\nCaptured automatically at the start of the "
             "run (`env`).\n\n| | |\n|---|---|\n");
    env_rows(x, e);
    sb(x->b, "\n");
    if (f->peaks.present) {
        peaks_table(x->b, &f->peaks);
        gpu_peaks_table(x->b, &f->peaks);
    }
    if (e->n_warning_items) {
        sb(x->b, "### Noise warnings\n\ntbench found these at the start of "
                 "the run; read the numbers with them in mind:\n\n");
        for (int i = 0; i < e->n_warnings; i++)
            sb(x->b, "- %s\n", e->warnings[i]);
        sb(x->b, "\n");
    }
}

/* The L1 data cache of the run's CPU (env.cpu.caches), or NAN. */
static double cache_bytes(const tb_resfile *f, int level)
{
    double best = NAN;
    for (int i = 0; i < f->env.n_caches; i++) {
        const tb_res_cache *k = &f->env.caches[i];
        if (k->level != level || isnan(k->size_bytes) ||
            (k->type && !strcmp(k->type, "Instruction")))
            continue;
        if (isnan(best) || k->size_bytes > best)
            best = k->size_bytes;
    }
    return best;
}

static double l1d_bytes(const tb_resfile *f)
{
    return cache_bytes(f, 1);
}

/* Do the run's peaks hold a bandwidth figure for level? */
static bool peaks_have_level(const tb_resfile *f, const char *level)
{
    for (int i = 0; i < f->peaks.n_bandwidth; i++)
        if (f->peaks.bandwidth[i].level &&
            !strcmp(f->peaks.bandwidth[i].level, level))
            return true;
    return false;
}

/* A memory-bound case held to its thread count's figure where fewer
 * threads measured more (a roof from before roofs were monotone in
 * threads): says so in buf. */
static bool fewer_threads_faster(const tb_resfile *f, const tb_rescase *r,
                                 char *buf, size_t len)
{
    const char *k = r->f.roofline_bw_kernel, *l = r->f.roofline_level;
    double used = r->f.roofline_bandwidth_gb_s, t = r->f.roofline_threads;
    /* a roof that names its working set is monotone in threads */
    if (!k || !l || isnan(used) || isnan(t) ||
        !isnan(r->f.roofline_bandwidth_working_set_bytes) ||
        (r->f.roofline_bound && strcmp(r->f.roofline_bound, "memory")))
        return false;
    const tb_res_peak *best = NULL;
    for (int i = 0; i < f->peaks.n_bandwidth; i++) {
        const tb_res_peak *e = &f->peaks.bandwidth[i];
        if (e->kernel && e->level && !strcmp(e->kernel, k) &&
            !strcmp(e->level, l) && e->threads < t && e->best > used &&
            (!best || e->best > best->best))
            best = e;
    }
    if (!best)
        return false;
    snprintf(buf, len,
             "held to the %.0f-thread %s figure (%.1f GB/s), below the "
             "%.0f-thread one (%.1f GB/s): a roof from before roofs were "
             "monotone in threads",
             t, l, used, best->threads, best->best);
    return true;
}

/* A case held to the DRAM roof with a working set well below the set
 * that roof was measured on (and above the L3 the CPU reports): part of
 * it stays in a cache larger than the reported one (a virtual machine's
 * sysfs, or caches of other cores).  Says so in buf. */
static bool below_dram_set(const tb_resfile *f, const tb_rescase *r,
                           double bytes, char *buf, size_t len)
{
    const char *k = r->f.roofline_bw_kernel, *l = r->f.roofline_level;
    double t = r->f.roofline_bandwidth_threads;
    if (!k || !l || strcmp(l, "DRAM") || !(bytes > 0) || isnan(t))
        return false;
    for (int i = 0; i < f->peaks.n_bandwidth; i++) {
        const tb_res_peak *e = &f->peaks.bandwidth[i];
        if (!e->kernel || !e->level || strcmp(e->kernel, k) ||
            strcmp(e->level, "DRAM") || e->threads != t ||
            !(bytes < e->working_set_bytes / 2))
            continue;
        snprintf(buf, len,
                 "its %.0f MiB are held to the DRAM roof, measured on "
                 "%.0f MiB: above the L3 the CPU reports, but part of "
                 "them stays in a larger cache",
                 bytes / 1048576, e->working_set_bytes / 1048576);
        return true;
    }
    return false;
}

/* A working set held to the L2 or L3 roof of which the level below (L1
 * or L2, a thread's own, times the threads) holds at least a quarter:
 * that part runs at the faster level's bandwidth.  Says so in buf. */
static bool lower_level_share(const tb_resfile *f, const char *level,
                              double bytes, double threads, char *buf,
                              size_t len)
{
    int lv = !strcmp(level, "L2") ? 2 : !strcmp(level, "L3") ? 3 : 0;
    double lower = lv ? cache_bytes(f, lv - 1) * threads : NAN;
    if (!(bytes > 0) || !(lower >= bytes / 4))
        return false;
    snprintf(buf, len,
             "its %.0f KiB are held to the %s roof, but the L%d (%.0f KiB "
             "a thread) holds %.0f%% of them",
             bytes / 1024, level, lv - 1, lower / threads / 1024,
             fmin(100, 100 * lower / bytes));
    return true;
}

/* A fraction above 1 by no more than the spread of the roof's own
 * repetitions (best over worst - 1, the bandwidth entry the case is held
 * to): within the noise of the roof's measurement.  Says so in buf. */
static bool within_roof_spread(const tb_resfile *f, const tb_rescase *r,
                               char *buf, size_t len)
{
    const char *k = r->f.roofline_bw_kernel, *l = r->f.roofline_level;
    double t = r->f.roofline_bandwidth_threads, fr = r->f.roofline_fraction;
    double ws = r->f.roofline_bandwidth_working_set_bytes; /* NaN: any */
    if (!k || !l || isnan(t) || !(fr > 1))
        return false;
    for (int i = 0; i < f->peaks.n_bandwidth; i++) {
        const tb_res_peak *e = &f->peaks.bandwidth[i];
        if (!e->kernel || !e->level || strcmp(e->kernel, k) ||
            strcmp(e->level, l) || e->threads != t || !(e->worst > 0) ||
            (!isnan(ws) && e->working_set_bytes != ws) ||
            !(fr - 1 <= e->best / e->worst - 1))
            continue;
        snprintf(buf, len,
                 "%.1f%% above the roof, within the spread of the roof's "
                 "own repetitions (%.1f to %.1f GB/s: %.1f%%)",
                 100 * (fr - 1), e->worst, e->best,
                 100 * (e->best / e->worst - 1));
        return true;
    }
    return false;
}

const char *tb_rpt_over_roof_cause(const tb_rpt *x, const tb_rcase *c,
                                   char *buf, size_t len)
{
    const tb_resfile *f = tb_rpt_main(x);
    const tb_rescase *r = c->rc;
    double bytes = r->f.roofline_attainable_gb_s * r->f.roofline_min_time_ns;
    double threads = isnan(r->f.roofline_threads) ? 1 : r->f.roofline_threads;
    double l1 = l1d_bytes(f);
    const char *level = r->f.roofline_level ? r->f.roofline_level : "";
    double load = f->peaks.load_avg_1m, cpus = f->env.logical_cpus;
    if (strcmp(level, "L1") && strcmp(level, "GPU") &&
        !peaks_have_level(f, "L1") && bytes > 0 && !isnan(l1) &&
        bytes <= l1 * threads)
        snprintf(buf, len,
                 "no L1 roof in these peaks (measured before tbench "
                 "measured one); its %.0f KiB fit the L1 (%.0f KiB a "
                 "thread) but are held to the %s's bandwidth",
                 bytes / 1024, l1 / 1024, level);
    else if (fewer_threads_faster(f, r, buf, len))
        ;
    else if (r->category &&
             (!strcmp(r->category, "inplace") ||
              !strcmp(r->category, "optimizer")) &&
             r->f.roofline_bw_kernel &&
             !strcmp(r->f.roofline_bw_kernel, "add"))
        snprintf(buf, len,
                 "held to the add kernel, which writes a third array "
                 "(write-allocate traffic), while this op writes an input "
                 "in place (peaks from before the update kernel)");
    else if (below_dram_set(f, r, bytes, buf, len))
        ;
    else if (lower_level_share(f, level, bytes, threads, buf, len))
        ;
    else if (within_roof_spread(f, r, buf, len))
        ;
    else if (!isnan(load) && !isnan(cpus) && load > cpus / 2)
        snprintf(buf, len,
                 "peaks measured under load (1-minute load average %.2f "
                 "on %.0f CPUs), so the roof is low",
                 load, cpus);
    else
        snprintf(buf, len, "no measured cause: the roof or the op's cost "
                           "model is wrong here");
    return buf;
}

/* Why a case can run faster than its roofline allows, from what the
 * run recorded: peaks measured under load, or a working set that fits a
 * faster level than the one the fraction assumed (virtual machines
 * often report cache sizes that are not the hardware's). */
void tb_rpt_over_peak_note(const tb_rpt *x, int over)
{
    const tb_resfile *f = tb_rpt_main(x);
    double load = f->peaks.load_avg_1m, cpus = f->env.logical_cpus;
    sb(x->b, "%d case%s above 100%% of %s roofline: a measurement cannot "
             "beat what the hardware allows, so the roof was too low; each "
             "such row says the cause the run's records show.",
       over, over == 1 ? " runs" : "s run", over == 1 ? "its" : "their");
    if (!isnan(load) && !isnan(cpus) && load > cpus / 2)
        sb(x->b, " The peaks were measured while the 1-minute load average "
                 "was %.2f on %.0f logical CPUs (`peaks.load_avg_1m`), so "
                 "they are low; run `tbench peak` again on a quiet machine.",
           load, cpus);
    sb(x->b, " The fraction holds the case to the bandwidth of the cache "
             "level its working set fits (`roofline.level`, from the cache "
             "sizes the CPU reports), at the best figure measured at its "
             "thread count or fewer (`roofline.bandwidth_threads`).\n\n");
}
