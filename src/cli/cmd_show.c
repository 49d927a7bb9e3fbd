/* tbench show CASE [RESULTS]: everything one result file records about
 * the cases whose id matches CASE (as run --filter matches: a glob, or
 * an id as printed), read through the one loader (resultsio), so a file
 * show accepts is one compare accepts.  Without RESULTS: the newest run
 * folder under results/ (by its results.json's time).
 *
 * Text output walks the record in file order, one line per scalar
 * (nested objects as dotted names), so a field added to the format
 * shows up without a change here; the samples are summarized (--json
 * prints the records as stored), and the CUPTI counts get a table with
 * the kernel breakdown, a workload step's per-op breakdown another. */
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "../base/error.h"
#include "../base/idmatch.h"
#include "../report/resultsio.h"
#include "../report/table.h"
#include "commands.h"

/* Newest DIR/results.json under results/ (baselines/ is not a run). */
static int newest_run(char *out, size_t len)
{
    DIR *d = opendir("results");
    if (!d)
        return -1;
    struct dirent *e;
    double best = -1;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "baselines"))
            continue;
        char path[PATH_MAX];
        struct stat st;
        snprintf(path, sizeof path, "results/%.200s/results.json",
                 e->d_name);
        if (stat(path, &st) || !S_ISREG(st.st_mode))
            continue;
        double t = (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec * 1e-9;
        if (t > best) {
            best = t;
            snprintf(out, len, "%s", path);
        }
    }
    closedir(d);
    return best < 0 ? -1 : 0;
}

/* "KEY VALUE", indented by ind (0: a top-level member, 2: nested). */
static void print_scalar(int ind, const char *key, const cJSON *v)
{
    if (cJSON_IsString(v))
        printf("%*s%-*s %s\n", ind, "", 30 - ind, key, v->valuestring);
    else if (cJSON_IsNumber(v))
        printf("%*s%-*s %.10g\n", ind, "", 30 - ind, key, v->valuedouble);
    else if (cJSON_IsBool(v))
        printf("%*s%-*s %s\n", ind, "", 30 - ind, key,
               cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNull(v))
        printf("%*s%-*s null\n", ind, "", 30 - ind, key);
}

/* An array of numbers: inline when short, else count, min and max. */
static void print_array(int ind, const char *key, const cJSON *a)
{
    int n = cJSON_GetArraySize(a);
    const cJSON *v;
    bool numbers = true, strings = true;
    double lo = INFINITY, hi = -INFINITY;
    cJSON_ArrayForEach(v, a)
    {
        numbers = numbers && cJSON_IsNumber(v);
        strings = strings && cJSON_IsString(v);
        if (cJSON_IsNumber(v)) {
            lo = fmin(lo, v->valuedouble);
            hi = fmax(hi, v->valuedouble);
        }
    }
    if (n > 12 && numbers) {
        printf("%*s%-*s %d values, %.6g .. %.6g (--json lists them)\n",
               ind, "", 30 - ind, key, n, lo, hi);
        return;
    }
    printf("%*s%-*s [", ind, "", 30 - ind, key);
    int i = 0;
    cJSON_ArrayForEach(v, a)
    {
        char *s = cJSON_PrintUnformatted(v);
        printf("%s%s", i++ ? ", " : "", s ? s : "?");
        free(s);
    }
    printf("]\n");
}

/* Every member of o, objects flattened as PREFIX.KEY. */
static void print_members(const char *prefix, const cJSON *o)
{
    const cJSON *v;
    cJSON_ArrayForEach(v, o)
    {
        char key[256];
        snprintf(key, sizeof key, "%s%s%s", prefix, prefix[0] ? "." : "",
                 v->string ? v->string : "?");
        if (cJSON_IsObject(v)) {
            if (!v->child)
                printf("  %-28s {}\n", key);
            print_members(key, v);
        } else if (cJSON_IsArray(v)) {
            print_array(2, key, v);
        } else {
            print_scalar(2, key, v);
        }
    }
}

/* The CUPTI counts of a checked record (resultsio), kernels as a table. */
static void print_cupti(const tb_rescase *c)
{
    if (c->cupti_state == TB_RES_CUPTI_ABSENT) {
        printf("cupti: not recorded (a file older than CUPTI counting)\n");
        return;
    }
    if (c->cupti_state == TB_RES_CUPTI_NULL) {
        printf("cupti: not measured: %s\n", c->cupti_reason);
        return;
    }
    const tb_res_cupti *cu = &c->cupti;
    printf("cupti (per iteration, counted over %.0f iterations):\n",
           cu->iterations);
    printf("  %-28s %g\n", "kernel launches", cu->kernel_launches);
    for (int i = 0; i < TB_RES_NDIRS; i++) {
        char key[40];
        snprintf(key, sizeof key, "memcpy %s", tb_res_dir_name(i));
        printf("  %-28s %g (%g bytes)\n", key, cu->memcpy_count[i],
               cu->memcpy_bytes[i]);
    }
    printf("  %-28s %g (%g bytes)\n", "memsets", cu->memsets,
           cu->memset_bytes);
    printf("  %-28s %g (%g bytes)\n", "device allocs", cu->device_allocs,
           cu->device_alloc_bytes);
    printf("  %-28s %g (%g bytes)\n", "device frees", cu->device_frees,
           cu->device_free_bytes);
    printf("  kernel breakdown:\n");
    if (!cu->n_kernels)
        printf("    (no kernel)\n");
    else
        printf("    %8s  %12s  %s\n", "launches", "device time", "kernel");
    for (int i = 0; i < cu->n_kernels; i++) {
        const tb_res_kernel *k = &cu->kernels[i];
        char t[32];
        printf("    %8g  %12s  %s\n", k->count,
               tb_fmt_ns(k->device_ns, t, sizeof t), k->name);
    }
    if (cu->kernels_unlisted > 0)
        printf("    %8g  %12s  (kernels beyond the 32 listed)\n",
               cu->kernels_unlisted, "");
}

/* A workload step's per-op breakdown (docs/FORMAT.md), parts in the
 * order of their first call, then the gap line; or why there is none. */
static void print_breakdown(const tb_rescase *c)
{
    if (!c->has_breakdown) {
        if (c->breakdown_reason)
            printf("breakdown: %s\n", c->breakdown_reason);
        return;
    }
    const tb_res_breakdown *b = &c->breakdown;
    printf("breakdown (per step: the mean over the %.0f of %.0f steps at "
           "or below the median step of a pass after sampling, each kernel "
           "call clocked):\n", b->kept_steps, b->steps);
    printf("  %-22s %-36s %-9s %10s %11s %7s\n", "op", "kernel", "phase",
           "calls/step", "ms/step", "share");
    for (int i = 0; i < b->n_parts; i++) {
        const tb_res_part *q = &b->parts[i];
        printf("  %-22s %-36s %-9s %10g %11.5f %6.1f%%\n", q->op, q->kernel,
               q->phase, q->calls, q->ns / 1e6, 100 * q->share);
    }
    printf("  parts %.4f ms + gap %.4f ms (%.1f%% of the step: the tape's "
           "own work) = step %.4f ms", b->parts_ns / 1e6, b->gap_ns / 1e6,
           100 * b->gap_fraction, b->step_ns / 1e6);
    if (c->timed)
        printf(" (sampled median %.4f ms)", c->median_ns / 1e6);
    printf("\n");
    /* the instrument's own cost: a pair of clock reads per call, split
     * between its part and the gap */
    double calls = 0, pair = c->f.timing_timer_overhead_ns;
    for (int i = 0; i < b->n_parts; i++)
        calls += b->parts[i].calls;
    if (pair > 0)
        printf("  clock reads: %g calls x %.0f ns = %.4f ms of parts + "
               "gap\n", calls, pair, calls * pair / 1e6);
}

static void print_case(const tb_rescase *c, const cJSON *rec)
{
    printf("%s\n", c->id);
    const cJSON *v;
    cJSON_ArrayForEach(v, rec)
    {
        if (!v->string || !strcmp(v->string, TB_RES_KEY(cupti)) ||
            !strcmp(v->string, TB_RES_KEY(cupti_reason)) ||
            !strcmp(v->string, TB_RES_KEY(breakdown)) ||
            !strcmp(v->string, TB_RES_KEY(breakdown_reason)) ||
            !strcmp(v->string, TB_RES_KEY(id)))
            continue;
        if (cJSON_IsObject(v)) {
            printf("%s:\n", v->string);
            print_members("", v);
        } else if (cJSON_IsArray(v)) {
            print_array(0, v->string, v);
        } else {
            print_scalar(0, v->string, v);
        }
    }
    print_cupti(c);
    print_breakdown(c);
}

/* tb_res_put_nested's output: stdout. */
static int put_stdout(void *ctx, const void *p, size_t n)
{
    (void)ctx;
    return fwrite(p, 1, n, stdout) == n ? 0 : TB_EIO;
}

/* The options `show` parses (and `tbench __options` lists). */
static const struct option longopts[] = {
    {"json", no_argument, NULL, 'j'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};
const tb_cmd_opts tb_opts_show = {longopts, ":h", NULL};

int tb_cmd_show(int argc, char **argv)
{
    const char *pattern = NULL, *file = NULL;
    bool json = false;
    int opt;
    bool first = true;
    while ((opt = tb_opt_next(argc, argv, &tb_opts_show, &first)) !=
           -1) {
        switch (opt) {
        case 'j': json = true; break;
        case 'h': tb_cmd_usage(stdout, "show"); return TB_EXIT_OKAY;
        default: return tb_opt_error("show", opt, argv, longopts);
        }
    }
    for (int i = optind; i < argc; i++) {
        if (!pattern)
            pattern = argv[i];
        else if (!file)
            file = argv[i];
        else
            return tb_usage_error("show: unexpected argument '%s' (expected "
                                  "CASE [RESULTS])", argv[i]);
    }
    if (!pattern)
        return tb_usage_error("show: expected a CASE id or glob%s", "");
    char newest[PATH_MAX];
    struct stat st;
    /* `tbench show results/run/results.json`: a file where the case goes */
    if (!file && stat(pattern, &st) == 0)
        return tb_usage_error("show: '%s' is a file or folder, not a CASE: "
                              "the case comes first (tbench show 'matmul*' "
                              "RESULTS; '*' shows every case)",
                              pattern);
    if (!file) {
        if (newest_run(newest, sizeof newest))
            return tb_usage_error("show: no RESULTS given and no run folder "
                                  "with a results.json under %s",
                                  "results/");
        file = newest;
    }
    tb_resfile *f;
    char err[1024];
    if (tb_resfile_load(file, &f, err, sizeof err)) {
        fprintf(stderr, "tbench: %s\n", err);
        return TB_EXIT_USAGE;
    }
    int shown = 0;
    for (int i = 0; i < f->n; i++) {
        const tb_rescase *c = &f->cases[i];
        if (!tb_case_id_match(pattern, c->id))
            continue;
        /* the record with its samples (the loader keeps them apart) */
        cJSON *rec = tb_rescase_record(f, c, err, sizeof err);
        if (!rec) {
            fprintf(stderr, "%stbench: show: %s\n", json && shown ? "\n" :
                    "", err);
            tb_resfile_free(f);
            return TB_EXIT_USAGE;
        }
        if (json) {
            /* cJSON_Print's array of the records, one at a time */
            fputs(shown ? ", " : "[", stdout);
            tb_res_put_nested(rec, 1, put_stdout, NULL);
        } else {
            printf("%s", shown ? "\n" : "");
            print_case(c, rec);
        }
        cJSON_Delete(rec);
        shown++;
    }
    if (json && shown)
        puts("]");
    int rc = TB_EXIT_OKAY;
    if (!shown) {
        fprintf(stderr, "tbench: %s: no case id matches '%s' (%d cases; "
                        "ids as `tbench run` prints them, or a glob)\n",
                f->path, pattern, f->n);
        rc = TB_EXIT_USAGE;
    }
    tb_resfile_free(f);
    return rc;
}
