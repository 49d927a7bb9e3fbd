/* tbench run: config -> plan -> runner -> results (see README, exit codes
 * in commands.h). */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../backends/backend.h"
#include "../report/compare.h"
#include "../base/fileio.h"
#include "../report/resultsio.h"
#include "../harness/results.h"
#include "../report/table.h"
#include "commands.h"
#include "../harness/config.h"
#include "../harness/env.h"
#include "../harness/instr.h"
#include "../harness/peak.h"
#include "../harness/plan.h"
#include "../harness/runner.h"
#include "../harness/timer.h"
#include "../harness/trace.h"
#include "../harness/worker.h"

/* The signal that stopped the run (SIGINT, SIGTERM, SIGHUP), or 0. */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    interrupted = sig;
}

/* ---- run ----------------------------------------------------------------- */

/* results/YYYYmmdd-HHMMSS-NAME, with -2, -3... if it exists. */
static void default_outdir(const tb_config *cfg, char *buf, size_t len)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    struct stat st;
    snprintf(buf, len, "results/%s-%s", stamp, cfg->name);
    for (int i = 2; stat(buf, &st) == 0 && i < 1000; i++)
        snprintf(buf, len, "results/%s-%s-%d", stamp, cfg->name, i);
}

static void progress(int round, int rounds, int i, int n, const char *id)
{
    if (rounds > 1)
        fprintf(stderr, "\r\033[Kround %d/%d [%d/%d] %s", round + 1, rounds,
                i + 1, n, id);
    else
        fprintf(stderr, "\r\033[K[%d/%d] %s", i + 1, n, id);
    fflush(stderr);
}

/* Bring doc's records of the first `started` cases up to date (only
 * those marked dirty are summarised and rebuilt, so a write costs the
 * same whatever the number of cases before it), then write
 * DIR/results.json and .csv atomically.  0, or an error in err.
 *
 * A case whose later rounds have not run yet is written with stop
 * reason "interrupted": if the run dies now (SIGKILL, a power cut), the
 * file it leaves never claims that such a case finished.  The record is
 * rebuilt, with its real reason, when its last round has run. */
static int write_results(cJSON *doc, const tb_plan *plan, tb_result *res,
                         bool *dirty, int started, bool complete,
                         const char *outdir, char *err, size_t errlen)
{
    for (int i = 0; i < started; i++) {
        if (!dirty[i])
            continue;
        tb_runner_summarize(&plan->cases[i], &res[i]);
        tb_result r = res[i]; /* shallow: the record is built from it */
        if (r.status == TB_STATUS_OK &&
            r.rounds < plan->cases[i].measure.rounds)
            r.stop_reason = "interrupted";
        if (tb_results_set_case(doc, i, &plan->cases[i], &r)) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        dirty[i] = false;
    }
    if (tb_results_finish(doc, complete)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return tb_results_write(doc, outdir, err, errlen);
}

/* ---- baselines: --save-baseline, --baseline, --force ------------------- */

#define BASELINE_DIR "results/baselines"
#define BASELINE_NAME_MAX 100
#define BASELINES_MAX 16
#define PATTERNS_MAX 64 /* --filter, and --exclude, options */

typedef struct baselines {
    const char *save; /* --save-baseline NAME, or NULL */
    bool force;
    int n; /* --baseline NAME, repeatable */
    const char *names[BASELINES_MAX];
    tb_resfile *files[BASELINES_MAX];
} baselines;

/* A baseline name is a file name, never a path: 1-100 characters from
 * A-Z a-z 0-9 . _ -, not starting with '.' (so no "..", no hidden
 * files).  Prints the error; 0 or EXIT_USAGE. */
static int baseline_name_ok(const char *opt, const char *name)
{
    size_t len = strlen(name);
    const char *why = NULL;
    if (len == 0 || len > BASELINE_NAME_MAX)
        why = "must be 1 to 100 characters";
    else if (name[0] == '.')
        why = "must not start with '.'";
    else if (strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuv"
                          "wxyz0123456789._-") != len)
        why = "may hold only A-Z a-z 0-9 . _ - (no '/')";
    if (!why)
        return 0;
    fprintf(stderr, "tbench: %s: invalid baseline name '%.120s': it %s\n",
            opt, name, why);
    return EXIT_USAGE;
}

static void baseline_path(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s.json", BASELINE_DIR, name);
}

/* Before anything runs: valid names, the --save-baseline file free (or
 * --force), every --baseline file loadable.  0 or EXIT_USAGE. */
static int baselines_prepare(baselines *b)
{
    char path[512], err[1024];
    struct stat st;
    if (b->save) {
        if (baseline_name_ok("--save-baseline", b->save))
            return EXIT_USAGE;
        baseline_path(b->save, path, sizeof path);
        if (!b->force && stat(path, &st) == 0) {
            fprintf(stderr, "tbench: --save-baseline: %s exists; add --force "
                    "to replace it\n", path);
            return EXIT_USAGE;
        }
    } else if (b->force) {
        return tb_usage_error("run: --force is only for --save-baseline%s",
                              "");
    }
    for (int i = 0; i < b->n; i++) {
        if (baseline_name_ok("--baseline", b->names[i]))
            return EXIT_USAGE;
        baseline_path(b->names[i], path, sizeof path);
        if (tb_resfile_load(path, &b->files[i], err, sizeof err)) {
            fprintf(stderr, "tbench: --baseline: %s\n", err);
            return EXIT_USAGE;
        }
    }
    return 0;
}

/* Every baseline must share a case id with the plan.  0 or EXIT_USAGE. */
static int baselines_match_plan(const baselines *b, const tb_plan *plan)
{
    for (int i = 0; i < b->n; i++) {
        bool any = false;
        for (int k = 0; k < plan->n && !any; k++)
            any = tb_resfile_find(b->files[i], plan->cases[k].id) != NULL;
        if (!any) {
            fprintf(stderr, "tbench: --baseline: %s: no case id in common "
                    "with this run (a different matrix?)\n",
                    b->files[i]->path);
            return EXIT_USAGE;
        }
    }
    return 0;
}

/* After the run (results written to outdir): compare with the baselines
 * (printed, and written to outdir/compare.json), then save the run as a
 * baseline unless it was interrupted.  Returns the exit status given
 * the run's own `rc`. */
static int baselines_finish(baselines *b, const cJSON *doc,
                            const char *outdir, int rc)
{
    char path[4096 + 64], err[1024]; /* outdir is at most 4095 bytes */
    if (b->n) {
        tb_resfile *run = NULL;
        tb_cmp cmp;
        tb_cmp_opts o;
        tb_cmp_opts_default(&o);
        if (tb_resfile_load(outdir, &run, err, sizeof err) ||
            tb_compare(b->files, b->n, &run, 1, &o, &cmp, err, sizeof err)) {
            fprintf(stderr, "tbench: --baseline: %s\n", err);
            tb_resfile_free(run);
            return rc > 128 ? rc : EXIT_CASES;
        }
        printf("\ncomparison with baseline");
        for (int i = 0; i < b->n; i++)
            printf("%s %s", i ? "," : "", b->names[i]);
        printf(":\n");
        tb_cmp_print(stdout, &cmp, false);
        cJSON *j = tb_cmp_json(&cmp);
        char *text = j ? cJSON_Print(j) : NULL;
        bool fits = snprintf(path, sizeof path, "%s/compare.json",
                             outdir) < (int)sizeof path;
        if (!text || !fits ||
            tb_write_atomic(path, text, strlen(text), err, sizeof err)) {
            fprintf(stderr, "tbench: writing %s: %s\n", path,
                    !text ? "out of memory" : !fits ? "path too long" : err);
            if (rc <= 128)
                rc = EXIT_CASES;
        } else {
            printf("comparison: %s\n", path);
        }
        free(text);
        cJSON_Delete(j);
        if (cmp.failed && rc <= 128)
            rc = EXIT_CASES;
        tb_cmp_free(&cmp);
        tb_resfile_free(run);
    }
    if (b->save) {
        if (rc > 128) { /* stopped by a signal */
            fprintf(stderr, "tbench: --save-baseline: not saved, the run was "
                    "interrupted\n");
            return rc;
        }
        struct stat st;
        char *text = cJSON_Print(doc);
        baseline_path(b->save, path, sizeof path);
        if (!text) {
            fprintf(stderr, "tbench: --save-baseline: out of memory\n");
            rc = EXIT_CASES;
        } else if (!b->force && stat(path, &st) == 0) {
            fprintf(stderr, "tbench: --save-baseline: %s appeared during the "
                    "run; not replaced (add --force)\n", path);
            rc = EXIT_CASES;
        } else if (tb_mkdir_p(BASELINE_DIR, err, sizeof err) ||
                   tb_write_atomic(path, text, strlen(text), err,
                                   sizeof err)) {
            fprintf(stderr, "tbench: --save-baseline: %s\n", err);
            rc = EXIT_CASES;
        } else {
            printf("baseline: %s\n", path);
        }
        free(text);
    }
    return rc;
}

static void baselines_free(baselines *b)
{
    for (int i = 0; i < b->n; i++)
        tb_resfile_free(b->files[i]);
    b->n = 0;
}

int tb_cmd_run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"filter", required_argument, NULL, 'f'},
        {"exclude", required_argument, NULL, 'x'},
        {"backend", required_argument, NULL, 'b'},
        {"quiet", no_argument, NULL, 'q'},
        {"save-baseline", required_argument, NULL, 'S'},
        {"baseline", required_argument, NULL, 'B'},
        {"force", no_argument, NULL, 'F'},
        {"peaks", no_argument, NULL, 'P'},
        {"no-isolate", no_argument, NULL, 'I'},
        {"no-nvtx", no_argument, NULL, 'N'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *outdir = NULL;
    bool quiet = false;
    baselines bl = {0};
    bool peaks = false; /* --peaks: measure them (else: the cache) */
    bool isolate = true; /* --no-isolate: run cases in this process */
    tb_plan_opts opts = {0};
    const char *filters[PATTERNS_MAX], *excludes[PATTERNS_MAX];
    opts.filters = filters;
    opts.excludes = excludes;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":o:f:x:b:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': outdir = optarg; break;
        case 'f':
        case 'x': {
            const char **v = c == 'f' ? filters : excludes;
            int *n = c == 'f' ? &opts.n_filters : &opts.n_excludes;
            if (*n == PATTERNS_MAX)
                return tb_usage_error("run: at most 64 --%s options",
                                      c == 'f' ? "filter" : "exclude");
            v[(*n)++] = optarg;
            break;
        }
        case 'b': opts.backend = optarg; break;
        case 'q': quiet = true; break;
        case 'S': bl.save = optarg; break;
        case 'F': bl.force = true; break;
        case 'B':
            if (bl.n == BASELINES_MAX)
                return tb_usage_error("run: at most 16 --baseline options%s",
                                      "");
            bl.names[bl.n++] = optarg;
            break;
        case 'P': peaks = true; break;
        case 'I': isolate = false; break;
        case 'N': tb_trace_enable(false); break;
        case 'h': tb_usage(stdout); return EXIT_OKAY;
        case ':':
            return tb_usage_error("run: option '%s' needs a value",
                               argv[optind - 1]);
        default:
            return tb_usage_error("run: unknown option '%s'", argv[optind - 1]);
        }
    }
    int ncfg = argc - optind;
    if (ncfg <= 0)
        return tb_usage_error("run: no config file given%s", "");
    if (opts.backend && !tb_backend_find(opts.backend))
        return tb_usage_error("--backend: unknown backend '%s' (see 'tbench "
                           "list')", opts.backend);

    if (tb_env_check())
        return EXIT_USAGE;

    int brc = baselines_prepare(&bl);
    if (brc) {
        baselines_free(&bl);
        return brc;
    }

    char err[1024];
    int rc = EXIT_OKAY;
    tb_config *cfgs = calloc((size_t)ncfg, sizeof *cfgs);
    tb_plan plan = {0};
    tb_workers *workers = NULL;
    tb_result *res = NULL;
    bool *dirty = NULL;
    cJSON *doc = NULL;
    if (!cfgs) {
        fprintf(stderr, "tbench: out of memory\n");
        baselines_free(&bl);
        return EXIT_USAGE;
    }
    for (int i = 0; i < ncfg; i++) {
        if (tb_config_load(argv[optind + i], &cfgs[i], err, sizeof err)) {
            fprintf(stderr, "tbench: %s\n", err);
            rc = EXIT_USAGE;
            goto out;
        }
    }
    if (tb_plan_build(cfgs, ncfg, &opts, &plan, err, sizeof err)) {
        fprintf(stderr, "tbench: %s\n", err);
        rc = EXIT_USAGE;
        goto out;
    }
    if (plan.n == 0) {
        fprintf(stderr, "tbench: no case to run%s\n",
                opts.n_filters || opts.n_excludes
                    ? " (no case id is selected by the --filter and "
                      "--exclude patterns)" : "");
        rc = EXIT_USAGE;
        goto out;
    }
    if (baselines_match_plan(&bl, &plan)) {
        rc = EXIT_USAGE;
        goto out;
    }

    char dirbuf[4096];
    if (!outdir) {
        default_outdir(&cfgs[0], dirbuf, sizeof dirbuf);
        outdir = dirbuf;
    }
    if (tb_mkdir_p(outdir, err, sizeof err)) {
        fprintf(stderr, "tbench: -o: %s\n", err);
        rc = EXIT_USAGE;
        goto out;
    }

    tb_workers_catch_stop(on_signal);

    /* No backend instance exists in this process before the workers are
     * forked (worker.h): they create their own. */
    if (tb_workers_create(&workers, &plan, isolate, &interrupted) ||
        !(doc = tb_results_new(tb_env_capture(), cfgs, ncfg,
                               tb_timer_overhead_ns(20001))) ||
        tb_results_set_isolation(doc, tb_workers_mode(workers)) ||
        tb_results_set_nvtx(doc, tb_trace_enabled())) {
        fprintf(stderr, "tbench: out of memory\n");
        rc = EXIT_CASES;
        goto out;
    }
    const cJSON *warn;
    cJSON_ArrayForEach(warn, cJSON_GetObjectItem(
                                 cJSON_GetObjectItem(doc, "env"), "warnings"))
        if (!quiet && cJSON_IsString(warn))
            fprintf(stderr, "tbench: warning: %s\n", warn->valuestring);
    tb_results_set_peaks(doc, tb_peaks_for_run(peaks, quiet));

    bool show = !quiet && isatty(STDERR_FILENO);
    res = calloc((size_t)plan.n, sizeof *res);
    dirty = calloc((size_t)plan.n, sizeof *dirty);
    if (!res || !dirty) {
        fprintf(stderr, "tbench: out of memory\n");
        rc = EXIT_CASES;
        goto out;
    }
    int rounds = 1, started = 0;
    for (int i = 0; i < plan.n; i++)
        if (plan.cases[i].measure.rounds > rounds)
            rounds = plan.cases[i].measure.rounds;
    tb_trace_push(TB_TRACE_RUN);
    /* Results are written after every case of the first and the last
     * round and after every round in between, so an interrupted run
     * keeps every case measured so far. */
    for (int round = 0; round < rounds && !interrupted; round++) {
        for (int i = 0; i < plan.n && !interrupted; i++) {
            const tb_case *cs = &plan.cases[i];
            if (round >= cs->measure.rounds)
                continue;
            if (show)
                progress(round, rounds, i, plan.n, cs->id);
            if (tb_workers_round(workers, i, round, cs->measure.rounds,
                                 &res[i]) == TB_WORK_INTERRUPTED)
                break; /* killed mid-case: res[i] as before the round */
            dirty[i] = true;
            if (round == 0)
                started = i + 1;
            if (res[i].status == TB_STATUS_FAILED_CHECK ||
                res[i].status == TB_STATUS_ERROR ||
                res[i].status == TB_STATUS_CRASHED ||
                res[i].status == TB_STATUS_TIMEOUT)
                rc = EXIT_CASES;
            if ((round == 0 || round == rounds - 1 ||
                 i == plan.n - 1) &&
                write_results(doc, &plan, res, dirty, started, false,
                              outdir, err, sizeof err)) {
                if (show)
                    fprintf(stderr, "\r\033[K");
                fprintf(stderr, "tbench: writing results: %s\n", err);
                rc = EXIT_CASES;
                goto out;
            }
        }
    }
    tb_trace_pop(); /* run */
    /* Instruction counts (measure.instructions, instr.h): a separate
     * pass over the cases that ran, each in a counting process of its
     * own, never inside the timed samples. */
    for (int i = 0; !interrupted && i < started; i++) {
        const tb_case *cs = &plan.cases[i];
        if (cs->measure.instructions == TB_INSTR_NONE ||
            res[i].status != TB_STATUS_OK)
            continue;
        if (show) {
            fprintf(stderr, "\r\033[K[%d/%d] %s: counting instructions",
                    i + 1, plan.n, cs->id);
            fflush(stderr);
        }
        tb_instr_count(cs, (const char *const *)argv + optind, ncfg,
                       opts.backend, &res[i]);
        dirty[i] = true;
    }
    if (show)
        fprintf(stderr, "\r\033[K");
    /* a case cut short before its last round says so */
    for (int i = 0; interrupted && i < started; i++)
        if (res[i].status == TB_STATUS_OK &&
            res[i].rounds < plan.cases[i].measure.rounds) {
            res[i].stop_reason = "interrupted";
            dirty[i] = true;
        }
    if (write_results(doc, &plan, res, dirty, started, !interrupted, outdir,
                      err, sizeof err)) {
        fprintf(stderr, "tbench: writing results: %s\n", err);
        rc = EXIT_CASES;
        goto out;
    }
    if (!quiet)
        tb_table_print(stdout, doc);
    printf("results: %s/results.json, %s/results.csv\n", outdir, outdir);
    if (interrupted) {
        const char *abbr = sigabbrev_np(interrupted);
        fprintf(stderr, "tbench: stopped by SIG%s; finished cases are "
                "saved\n", abbr ? abbr : "?");
        rc = 128 + interrupted; /* 130 SIGINT, 143 SIGTERM, 129 SIGHUP */
    }
    rc = baselines_finish(&bl, doc, outdir, rc);
out:
    baselines_free(&bl);
    cJSON_Delete(doc);
    tb_workers_destroy(workers);
    free(dirty);
    for (int i = 0; res && i < plan.n; i++)
        tb_result_free(&res[i]);
    free(res);
    tb_plan_free(&plan);
    for (int i = 0; i < ncfg; i++)
        tb_config_free(&cfgs[i]);
    free(cfgs);
    return rc;
}

