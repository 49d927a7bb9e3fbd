/* tbench run: options -> configs -> plan -> a session (the engine,
 * src/harness/session.h) -> the table, the baselines and the exit status
 * (commands.h).  What the user sees of a run comes through the session's
 * sink below: the progress line, warnings, the result files. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../backends/backend.h"
#include "../base/error.h"
#include "../base/fileio.h"
#include "../base/result_schema.h"
#include "../harness/config.h"
#include "../harness/plan.h"
#include "../harness/results.h"
#include "../harness/session.h"
#include "../harness/shard.h"
#include "../harness/trace.h"
#include "../harness/worker.h"
#include "../report/compare.h"
#include "../report/resultsio.h"
#include "../report/slowthreads.h"
#include "../report/table.h"
#include "commands.h"
#include "run_opts.h"
#include "term.h"

/* The signal that stopped the run (SIGINT, SIGTERM, SIGHUP), or 0. */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    interrupted = sig;
}

/* ---- what the user sees ------------------------------------------------- */

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


/* The progress line on a terminal: position, elapsed time, an estimate
 * of the time left (the mean time of the case-rounds done so far times
 * those left: "~"), and the id shortened in the middle so the line never
 * wraps (a wrapped line leaves stale text behind "\r"). */
static void progress(int round, int rounds, int i, int n, const char *id,
                     double elapsed_s, int done, int total)
{
    char head[128], el[32], left[32], sid[512];
    tb_fmt_clock(elapsed_s, el, sizeof el);
    if (done > 0) {
        tb_fmt_clock(elapsed_s / done * (total - done), left, sizeof left);
    } else {
        snprintf(left, sizeof left, "?");
    }
    int k = rounds > 1 ? snprintf(head, sizeof head, "round %d/%d ",
                                  round + 1, rounds)
                       : 0;
    snprintf(head + k, sizeof head - (size_t)k, "[%d/%d] %s, ~%s left  ",
             i + 1, n, el, left);
    int room = tb_term_width(STDERR_FILENO) - 1 - (int)strlen(head);
    tb_shorten_middle(id, room, sid, sizeof sid);
    fprintf(stderr, "\r\033[K%s%s", head, sid);
    fflush(stderr);
}

/* "summary: 81 cases: 80 ok, 1 failed-check; exit 1 (...)" */
static void print_summary(FILE *f, const tb_case_sum *res, int started,
                          int n, int rc, bool color)
{
    int count[TB_STATUS_TIMEOUT + 1] = {0};
    for (int i = 0; i < started; i++)
        if ((unsigned)res[i].status <= TB_STATUS_TIMEOUT)
            count[res[i].status]++;
    fprintf(f, "summary: %d case%s", n, n == 1 ? "" : "s");
    const char *sep = ": ";
    for (int s = 0; s <= TB_STATUS_TIMEOUT; s++) {
        if (!count[s])
            continue;
        const char *name = tb_status_name((tb_status)s);
        const char *on = color ? tb_term_status_color(name) : "";
        fprintf(f, "%s%s%d %s%s", sep, on, count[s], name,
                *on ? TB_TERM_RESET : "");
        sep = ", ";
    }
    if (started < n)
        fprintf(f, "%s%d not run", sep, n - started);
    const char *why =
        rc == TB_EXIT_OKAY ? "every case ran or was unavailable/unsupported"
        : rc == TB_EXIT_CASES ? "a case failed its check, errored, crashed or "
                             "timed out, or results could not be written"
        : rc > 128 ? "stopped by a signal; finished cases are saved"
                   : "see the message above";
    fprintf(f, "; exit %d (%s)\n", rc, why);
}

/* The session's sink (session.h) for a terminal: the progress line
 * (only when stderr is one), warnings (not with -q), the result files. */
typedef struct run_ui {
    const char *outdir;
    bool quiet;
    bool show;   /* the progress line: not quiet and stderr a terminal */
    bool ecolor; /* stderr takes colours */
} run_ui;

static int ui_write(void *ctx, const tb_results_doc *doc, char *err,
                    size_t errlen)
{
    const run_ui *u = ctx;
    return tb_results_doc_write(doc, u->outdir, err, errlen);
}

static void ui_progress(void *ctx, const tb_session_progress *p)
{
    const run_ui *u = ctx;
    if (!u->show)
        return;
    if (p->step == TB_SESSION_CASE) {
        progress(p->round, p->rounds, p->index, p->n, p->id, p->elapsed_s,
                 p->done, p->total);
    } else if (p->step == TB_SESSION_COUNT) {
        fprintf(stderr, "\r\033[K[%d/%d] %s: counting (instructions, "
                        "cache)", p->index + 1, p->n, p->id);
        fflush(stderr);
    } else {
        fprintf(stderr, "\r\033[K");
    }
}

static void ui_warning(void *ctx, const char *id, const char *text)
{
    const run_ui *u = ctx;
    const char *on = u->ecolor ? TB_TERM_YELLOW : "";
    const char *off = u->ecolor ? TB_TERM_RESET : "";
    if (u->quiet)
        return;
    if (id)
        fprintf(stderr, "%stbench: %swarning:%s %s: %s\n",
                u->show ? "\r\033[K" : "", on, off, id, text);
    else
        fprintf(stderr, "%stbench: %swarning:%s %s\n",
                u->show ? "\r\033[K" : "", on, off, text);
}

/* ---- baselines: --save-baseline, --baseline, --force ------------------- */

#define BASELINE_DIR "results/baselines"
#define BASELINE_NAME_MAX 100
#define BASELINES_MAX 16

typedef struct baselines {
    const char *save; /* --save-baseline NAME, or NULL */
    bool force;
    bool allow_missing; /* --allow-missing: compare's */
    double max_mde;     /* --max-mde PCT as a fraction; 0: not given */
    int n; /* --baseline NAME, repeatable */
    const char *names[BASELINES_MAX];
    tb_resfile *files[BASELINES_MAX];
} baselines;

/* A baseline name is a file name, never a path: 1-100 characters from
 * A-Z a-z 0-9 . _ -, not starting with '.' (so no "..", no hidden
 * files).  Prints the error; 0 or TB_EXIT_USAGE. */
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
    return TB_EXIT_USAGE;
}

static void baseline_path(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s.json", BASELINE_DIR, name);
}

/* Before anything runs: valid names, the --save-baseline file free (or
 * --force), every --baseline file loadable.  0 or TB_EXIT_USAGE. */
static int baselines_prepare(baselines *b)
{
    char path[512], err[1024];
    struct stat st;
    if (b->save) {
        if (baseline_name_ok("--save-baseline", b->save))
            return TB_EXIT_USAGE;
        baseline_path(b->save, path, sizeof path);
        if (!b->force && stat(path, &st) == 0) {
            fprintf(stderr, "tbench: --save-baseline: %s exists; add --force "
                    "to replace it\n", path);
            return TB_EXIT_USAGE;
        }
    } else if (b->force) {
        return tb_usage_error("run: --force is only for --save-baseline%s",
                              "");
    }
    for (int i = 0; i < b->n; i++) {
        if (baseline_name_ok("--baseline", b->names[i]))
            return TB_EXIT_USAGE;
        baseline_path(b->names[i], path, sizeof path);
        if (tb_resfile_load(path, &b->files[i], err, sizeof err)) {
            fprintf(stderr, "tbench: --baseline: %s\n", err);
            return TB_EXIT_USAGE;
        }
    }
    return 0;
}

/* Every baseline must share a case id with the plan.  0 or TB_EXIT_USAGE. */
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
            return TB_EXIT_USAGE;
        }
    }
    return 0;
}

/* Is case id in the plan (compare's in_scope: a baseline case that a
 * --filter, --exclude, --backend or --shard left out is not missing; a
 * case the configs no longer plan still is)? */
static bool plan_has(const char *id, void *arg)
{
    const tb_plan *plan = arg;
    for (int k = 0; k < plan->n; k++)
        if (!strcmp(plan->cases[k].id, id))
            return true;
    return false;
}

/* A copy of the results.json in outdir at path, written atomically
 * (tb_atomic_begin) in constant memory.  0 or TB_EIO with the reason in
 * err. */
static int copy_results(const char *outdir, const char *path, char *err,
                        size_t errlen)
{
    char src[4096 + 64];
    snprintf(src, sizeof src, "%s/results.json", outdir);
    int fd = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%.900s: %s", src, strerror(errno));
        if (fd >= 0)
            close(fd);
        return TB_EIO;
    }
    tb_atomic a;
    int rc = tb_atomic_begin(&a, path, err, errlen);
    if (!rc)
        rc = tb_atomic_put_fd(&a, fd, st.st_size, err, errlen);
    if (!rc)
        rc = tb_atomic_commit(&a, err, errlen);
    close(fd);
    return rc;
}

/* After the run (results written to outdir, and loaded back as run, or
 * NULL with the loader's message in lerr): compare with the baselines
 * (printed, and written to outdir/compare.json), then save the run as a
 * baseline unless it was interrupted.  Returns the exit status given
 * the run's own `rc`. */
static int baselines_finish(baselines *b, const tb_plan *plan,
                            tb_resfile *run, const char *lerr,
                            const char *outdir, int rc)
{
    char path[4096 + 64], err[1024]; /* outdir is at most 4095 bytes */
    if (b->n) {
        tb_cmp cmp;
        tb_cmp_opts o;
        tb_cmp_opts_default(&o);
        o.allow_missing = b->allow_missing;
        if (plan) { /* a narrowed run: the rest was not asked for */
            o.in_scope = plan_has;
            o.scope_arg = (void *)plan;
        }
        if (b->max_mde > 0)
            o.max_mde = b->max_mde;
        if (!run) {
            fprintf(stderr, "tbench: --baseline: %s\n", lerr);
            return rc > 128 ? rc : TB_EXIT_CASES;
        }
        if (tb_compare(b->files, b->n, &run, 1, &o, &cmp, err,
                       sizeof err)) {
            fprintf(stderr, "tbench: --baseline: %s\n", err);
            return rc > 128 ? rc : TB_EXIT_CASES;
        }
        printf("\ncomparison with baseline");
        for (int i = 0; i < b->n; i++)
            printf("%s %s", i ? "," : "", b->names[i]);
        printf(":\n");
        tb_cmp_print(stdout, &cmp, false,
                     tb_term_color(STDOUT_FILENO) ? tb_term_status_color
                                                  : NULL);
        cJSON *j = tb_cmp_json(&cmp);
        char *text = j ? cJSON_Print(j) : NULL;
        bool fits = snprintf(path, sizeof path, "%s/compare.json",
                             outdir) < (int)sizeof path;
        if (!text || !fits ||
            tb_write_atomic(path, text, strlen(text), err, sizeof err)) {
            fprintf(stderr, "tbench: writing %s: %s\n", path,
                    !text ? "out of memory" : !fits ? "path too long" : err);
            if (rc <= 128)
                rc = TB_EXIT_CASES;
        } else {
            printf("comparison: %s\n", path);
        }
        free(text);
        cJSON_Delete(j);
        if (cmp.failed && rc <= 128)
            rc = TB_EXIT_CASES;
        tb_cmp_free(&cmp);
    }
    if (b->save) {
        if (rc > 128) { /* stopped by a signal */
            fprintf(stderr, "tbench: --save-baseline: not saved, the run was "
                    "interrupted\n");
            return rc;
        }
        struct stat st;
        baseline_path(b->save, path, sizeof path);
        if (!b->force && stat(path, &st) == 0) {
            fprintf(stderr, "tbench: --save-baseline: %s appeared during the "
                    "run; not replaced (add --force)\n", path);
            rc = TB_EXIT_CASES;
        } else if (tb_mkdir_p(BASELINE_DIR, err, sizeof err) ||
                   copy_results(outdir, path, err, sizeof err)) {
            fprintf(stderr, "tbench: --save-baseline: %s\n", err);
            rc = TB_EXIT_CASES;
        } else {
            printf("baseline: %s\n", path);
        }
    }
    return rc;
}

static void baselines_free(baselines *b)
{
    for (int i = 0; i < b->n; i++)
        tb_resfile_free(b->files[i]);
    b->n = 0;
}

/* ---- tbench run ----------------------------------------------------------- */

/* What the command line asks for. */
typedef struct run_args {
    const char *outdir;    /* -o, or NULL: a new folder under results/ */
    bool list_cases;       /* --list-cases: print the plan and stop */
    bool quiet;
    bool peaks;            /* --peaks: measure them (else: the cache) */
    bool isolate;          /* false: --no-isolate, cases in this process */
    tb_run_quick quick;    /* --op ...: one case without a config */
    tb_run_overrides ovr;  /* --rounds, --max-time ... */
    baselines bl;
    tb_plan_opts opts;     /* --filter, --exclude, --backend */
    /* --backend's specs (NAME or NAME[AXIS=V,...]) and their names */
    char bspec[TB_PLAN_MAX_BACKENDS][TB_RUN_SPEC_LEN];
    char bname[TB_PLAN_MAX_BACKENDS][TB_RUN_SPEC_LEN];
    const char *bspecs[TB_PLAN_MAX_BACKENDS], *bnames[TB_PLAN_MAX_BACKENDS];
    int nb;
    bool to_stdout;        /* -o -: results.json on stdout */
    tb_cli_patterns pats;
    tb_shard shard;        /* --shard I/N; count 0: the whole plan */
    char **cfg_paths;      /* the config files (argv's tail) */
    int ncfg;              /* their number; 1 with --op */
} run_args;

static const struct option run_longopts[] = {
    {"output", required_argument, NULL, 'o'},
    {"filter", required_argument, NULL, 'f'},
    {"exclude", required_argument, NULL, 'x'},
    {"backend", required_argument, NULL, 'b'},
    {"quiet", no_argument, NULL, 'q'},
    {"save-baseline", required_argument, NULL, 'S'},
    {"baseline", required_argument, NULL, 'B'},
    {"force", no_argument, NULL, 'F'},
    {"allow-missing", no_argument, NULL, 'M'},
    {"max-mde", required_argument, NULL, 'm'},
    {"peaks", no_argument, NULL, 'P'},
    {"no-isolate", no_argument, NULL, 'I'},
    {"no-nvtx", no_argument, NULL, 'N'},
    {"help", no_argument, NULL, 'h'},
    {"list-cases", no_argument, NULL, 'L'},
    {"op", required_argument, NULL, 'O'},
    {"shape", required_argument, NULL, 's'},
    {"params", required_argument, NULL, 'p'},
    {"dtype", required_argument, NULL, 'd'},
    /* measure overrides: val = 1000 + tb_override */
    {"warmup-ms", required_argument, NULL, 1000 + TB_OVR_WARMUP_MS},
    {"warmup-iters", required_argument, NULL, 1000 + TB_OVR_WARMUP_ITERS},
    {"sample-ms", required_argument, NULL, 1000 + TB_OVR_SAMPLE_MS},
    {"min-samples", required_argument, NULL, 1000 + TB_OVR_MIN_SAMPLES},
    {"max-samples", required_argument, NULL, 1000 + TB_OVR_MAX_SAMPLES},
    {"ci-target", required_argument, NULL, 1000 + TB_OVR_CI_TARGET},
    {"max-time", required_argument, NULL, 1000 + TB_OVR_MAX_TIME},
    {"rounds", required_argument, NULL, 1000 + TB_OVR_ROUNDS},
    {"timeout", required_argument, NULL, 1000 + TB_OVR_TIMEOUT},
    {"shard", required_argument, NULL, 'D'},
    {NULL, 0, NULL, 0},
};
const tb_cmd_opts tb_opts_run = {run_longopts, ":o:f:x:b:qhs:p:d:", NULL};

/* One option c (its value: optarg) into a.  0, or the exit status
 * (after the message): --help, a bad value. */
static int run_option(run_args *a, int c, char **argv)
{
    char why[512];
    if (c >= 1000 && c < 1000 + TB_OVR_COUNT) {
        if (tb_run_override_set(&a->ovr, (tb_override)(c - 1000), optarg,
                                why, sizeof why))
            return tb_usage_error("run: %s", why);
        return 0;
    }
    switch (c) {
    case 'L': a->list_cases = true; break;
    case 'O': a->quick.op = optarg; break;
    case 's':
        if (a->quick.n_shapes == TB_RUN_MAX_SHAPES)
            return tb_usage_error("run: at most 16 --shape options%s", "");
        a->quick.shapes[a->quick.n_shapes++] = optarg;
        break;
    case 'p': a->quick.params = optarg; break;
    case 'd': a->quick.dtype = optarg; break;
    case 'o': a->outdir = optarg; break;
    case 'f':
    case 'x': return tb_opt_pattern("run", c, optarg, &a->pats, &a->opts);
    case 'b':
        if (tb_run_backend_split(optarg, a->bspec, a->bname, &a->nb,
                                 TB_PLAN_MAX_BACKENDS, why, sizeof why))
            return tb_usage_error("run: %s", why);
        break;
    case 'q': a->quiet = true; break;
    case 'S': a->bl.save = optarg; break;
    case 'F': a->bl.force = true; break;
    case 'M': a->bl.allow_missing = true; break;
    case 'm': {
        char *end;
        double v = strtod(optarg, &end);
        if (end == optarg || *end || !(v > 0 && v <= 1000))
            return tb_usage_error("run: --max-mde: expected a percentage "
                                  "above 0, up to 1000, got '%s'", optarg);
        a->bl.max_mde = v / 100;
        break;
    }
    case 'B':
        if (a->bl.n == BASELINES_MAX)
            return tb_usage_error("run: at most 16 --baseline options%s",
                                  "");
        a->bl.names[a->bl.n++] = optarg;
        break;
    case 'P': a->peaks = true; break;
    case 'I': a->isolate = false; break;
    case 'N': tb_trace_enable(false); break;
    case 'D':
        if (tb_shard_parse(optarg, &a->shard, why, sizeof why)) {
            fprintf(stderr, "tbench: --shard: %s\n", why);
            return TB_EXIT_USAGE;
        }
        break;
    case 'h': tb_cmd_usage(stdout, "run"); return TB_EXIT_OKAY;
    default: return tb_opt_error("run", c, argv, run_longopts);
    }
    return 0;
}

/* The command line into a.  true to go on; false: stop with *rc (help
 * printed, or a usage error). */
static bool run_parse(int argc, char **argv, run_args *a, int *rc)
{
    *rc = 0;
    memset(a, 0, sizeof *a);
    a->isolate = true;
    a->opts.filters = a->pats.filters;
    a->opts.excludes = a->pats.excludes;
    int c;
    bool first = true;
    while ((c = tb_opt_next(argc, argv, &tb_opts_run, &first)) !=
           -1)
        if ((*rc = run_option(a, c, argv)) || c == 'h')
            return false;
    a->cfg_paths = argv + optind;
    a->ncfg = argc - optind;
    const tb_run_quick *q = &a->quick;
    if (q->op && a->ncfg > 0)
        *rc = tb_usage_error("run: --op runs one case without a config "
                             "file; got a config file too ('%s')",
                             argv[optind]);
    else if (!q->op && (q->n_shapes || q->params || q->dtype))
        *rc = tb_usage_error("run: --shape, --params and --dtype describe "
                             "the case of --op; %s", "give --op NAME");
    if (*rc)
        return false;
    for (int i = 0; i < a->nb; i++) {
        a->bspecs[i] = a->bspec[i];
        a->bnames[i] = a->bname[i];
        if (!tb_backend_find(a->bname[i]))
            *rc = tb_usage_error("--backend: unknown backend '%s' (see "
                                 "'tbench list')", a->bname[i]);
        else if (!q->op && strcmp(a->bspec[i], a->bname[i]))
            *rc = tb_usage_error("run: --backend '%s': axes only with --op "
                                 "(a config file gives them in its "
                                 "\"backends\")", a->bspec[i]);
        if (*rc)
            return false;
    }
    if (q->op) { /* the backends are the config's own */
        a->quick.backends = a->bspecs;
        a->quick.n_backends = a->nb;
        a->ncfg = 1;
    } else {
        a->opts.backends = a->bnames;
        a->opts.n_backends = a->nb;
    }
    if (a->outdir && !strcmp(a->outdir, "-")) {
        a->to_stdout = true;
        if (a->bl.n || a->bl.save)
            *rc = tb_usage_error("run: -o - writes results.json to stdout; "
                                 "%s", "--baseline and --save-baseline need "
                                 "an output folder");
    }
    if (!*rc && a->ncfg <= 0)
        *rc = tb_usage_error("run: no config file given (or --op NAME "
                             "--shape S for one case)%s", "");
    return *rc == 0;
}

/* The shard object's "selection": what narrowed the plan (--filter,
 * --exclude, --backend), so that merge can build the plan again from
 * the recorded configs.  false when out of memory. */
static cJSON *str_array(const char *const *v, int n)
{
    static const char *const none[1] = {""};
    return cJSON_CreateStringArray(n ? v : none, n);
}

static bool add_selection(cJSON *info, const tb_plan_opts *o)
{
    cJSON *sel = cJSON_AddObjectToObject(info, TB_RES_KEY(selection));
    cJSON *f = str_array(o->filters, o->n_filters);
    cJSON *x = str_array(o->excludes, o->n_excludes);
    cJSON *b = str_array(o->backends, o->n_backends);
    bool ok = sel && f && x && b;
    if (ok) {
        cJSON_AddItemToObject(sel, TB_RES_KEY(filters), f);
        cJSON_AddItemToObject(sel, TB_RES_KEY(excludes), x);
        cJSON_AddItemToObject(sel, TB_RES_KEY(backends), b);
    } else {
        cJSON_Delete(f);
        cJSON_Delete(x);
        cJSON_Delete(b);
    }
    return ok;
}

/* The configs (with the overrides), the plan, --list-cases and --shard.
 * Returns 0, or the exit status after the message; *listed: the plan was
 * printed (--list-cases) and nothing is to run. */
static int run_plan(run_args *a, tb_config *cfgs, tb_plan *plan,
                    cJSON **shard_info, bool *listed)
{
    char err[1024];
    for (int i = 0; i < a->ncfg; i++) {
        if ((a->quick.op
                 ? tb_run_quick_config(&a->quick, &cfgs[i], err, sizeof err)
                 : tb_config_load(a->cfg_paths[i], &cfgs[i], err,
                                  sizeof err)) ||
            tb_run_overrides_apply(&a->ovr, &cfgs[i], err, sizeof err)) {
            fprintf(stderr, "tbench: %s\n", err);
            return TB_EXIT_USAGE;
        }
    }
    if (tb_plan_build(cfgs, a->ncfg, &a->opts, plan, err, sizeof err)) {
        fprintf(stderr, "tbench: %s\n", err);
        return TB_EXIT_USAGE;
    }
    if (plan->n == 0) {
        fprintf(stderr, "tbench: no case to run%s\n",
                a->opts.n_filters || a->opts.n_excludes
                    ? " (no case id is selected by the --filter and "
                      "--exclude patterns)" : "");
        return TB_EXIT_USAGE;
    }
    const tb_shard *sh = &a->shard;
    if (sh->count > plan->n) {
        fprintf(stderr, "tbench: --shard %d/%d: the plan has only %d "
                "case%s; use at most %d shards\n", sh->index, sh->count,
                plan->n, plan->n == 1 ? "" : "s", plan->n);
        return TB_EXIT_USAGE;
    }
    if (sh->count) {
        int whole = plan->n;
        if (tb_shard_select(plan, sh, shard_info) ||
            !add_selection(*shard_info, &a->opts)) {
            fprintf(stderr, "tbench: out of memory\n");
            return TB_EXIT_USAGE;
        }
        if (!a->quiet && !a->list_cases)
            fprintf(stderr, "tbench: shard %d/%d: %d of the plan's %d "
                    "cases\n", sh->index, sh->count, plan->n, whole);
    }
    /* the plan (this shard's cases with --shard), one id per line;
     * nothing runs */
    if (a->list_cases) {
        for (int i = 0; i < plan->n; i++)
            printf("%s\n", plan->cases[i].id);
        fprintf(stderr, "%d case%s\n", plan->n, plan->n == 1 ? "" : "s");
        *listed = true;
        return 0;
    }
    return baselines_match_plan(&a->bl, plan) ? TB_EXIT_USAGE : 0;
}

/* After the session: the table, where the files are, the signal, the
 * baselines, the summary.  Returns the exit status. */
static int run_finish(run_args *a, const tb_plan *plan, const tb_session *s,
                      const char *outdir)
{
    int rc = s->failed ? TB_EXIT_CASES : TB_EXIT_OKAY;
    /* with -o -, stdout is results.json's alone */
    FILE *out = a->to_stdout ? stderr : stdout;
    bool color = tb_term_color(fileno(out));
    /* the session keeps no document: the table, the note and the
     * baselines read results.json back through the one loader */
    tb_resfile *run = NULL;
    char lerr[1024] = "";
    if ((!a->quiet || a->bl.n) &&
        tb_resfile_load(outdir, &run, lerr, sizeof lerr))
        run = NULL;
    if (!a->quiet) {
        tb_table_style sty = {
            .width = isatty(fileno(out)) ? tb_term_width(fileno(out)) : 0,
            .color = color ? tb_term_status_color : NULL};
        if (run) {
            tb_table_print_file(out, run, &sty);
            tb_note_slow_threads_file(out, run);
        } else {
            fprintf(out, "no table: %s\n", lerr);
        }
    }
    if (!a->to_stdout)
        printf("results: %s/results.json, %s/results.csv\n", outdir,
               outdir);
    if (s->signal) {
        const char *abbr = sigabbrev_np(s->signal);
        fprintf(stderr, "tbench: stopped by SIG%s; finished cases are "
                "saved\n", abbr ? abbr : "?");
        rc = 128 + s->signal; /* 130 SIGINT, 143 SIGTERM, 129 SIGHUP */
    }
    bool narrowed = a->opts.n_filters || a->opts.n_excludes ||
                    a->opts.n_backends || a->shard.count;
    rc = baselines_finish(&a->bl, narrowed ? plan : NULL, run, lerr, outdir,
                          rc);
    tb_resfile_free(run);
    if (!a->quiet)
        print_summary(out, s->sum, s->started, s->n, rc, color);
    return rc;
}

/* -o -: dir's results.json to stdout, then dir (the private folder of
 * run_session) removed with what the run wrote there.  0, or -1 after a
 * message. */
static int stdout_results(const char *dir)
{
    char path[4200], buf[1 << 16];
    snprintf(path, sizeof path, "%s/results.json", dir);
    /* copied in pieces: the file grows with the cases, memory must not */
    int rc = 0;
    FILE *in = fopen(path, "rb");
    if (!in) {
        fprintf(stderr, "tbench: -o -: %s: %s\n", path, strerror(errno));
        rc = -1;
    }
    size_t got;
    while (in && !rc && (got = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, got, stdout) != got) {
            fprintf(stderr, "tbench: -o -: writing to stdout: %s\n",
                    strerror(errno));
            rc = -1;
        }
    if (in && !rc && ferror(in)) {
        fprintf(stderr, "tbench: -o -: %s: %s\n", path, strerror(errno));
        rc = -1;
    }
    if (!rc && fflush(stdout)) {
        fprintf(stderr, "tbench: -o -: writing to stdout: %s\n",
                strerror(errno));
        rc = -1;
    }
    if (in)
        fclose(in);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) <
                (int)sizeof path)
                unlink(path);
        }
    if (d)
        closedir(d);
    rmdir(dir);
    return rc ? -1 : 0;
}

/* The output folder (made), the session, its outcome.  Returns the exit
 * status. */
static int run_session(run_args *a, const tb_config *cfgs, tb_plan *plan,
                       cJSON *shard_info)
{
    char err[1024], dirbuf[4096];
    const char *outdir = a->outdir;
    if (a->to_stdout) { /* a private folder, results.json then to stdout */
        const char *t = getenv("TMPDIR");
        snprintf(dirbuf, sizeof dirbuf, "%s/tbench-stdout-XXXXXX",
                 t && t[0] == '/' && strlen(t) < 4000 ? t : "/tmp");
        if (!mkdtemp(dirbuf)) {
            cJSON_Delete(shard_info);
            fprintf(stderr, "tbench: -o -: cannot make a folder '%s': %s\n",
                    dirbuf, strerror(errno));
            return TB_EXIT_USAGE;
        }
        outdir = dirbuf;
    } else if (!outdir) {
        default_outdir(&cfgs[0], dirbuf, sizeof dirbuf);
        outdir = dirbuf;
    }
    if (!a->to_stdout && tb_mkdir_p(outdir, err, sizeof err)) {
        cJSON_Delete(shard_info);
        fprintf(stderr, "tbench: -o: %s\n", err);
        return TB_EXIT_USAGE;
    }
    tb_workers_catch_stop(on_signal);
    run_ui ui = {.outdir = outdir, .quiet = a->quiet,
                 .show = !a->quiet && isatty(STDERR_FILENO),
                 .ecolor = tb_term_color(STDERR_FILENO)};
    tb_session_sink sink = {.ctx = &ui, .write = ui_write,
                            .progress = ui_progress, .warning = ui_warning};
    tb_session_opts o = {.isolate = a->isolate, .measure_peaks = a->peaks,
                         .quiet = a->quiet, .stop = &interrupted,
                         .cfg_paths = (const char *const *)a->cfg_paths,
                         .n_cfg_paths = a->ncfg,
                         .shard = shard_info, .spool_dir = outdir};
    tb_session s;
    int rc;
    if (tb_session_run(plan, cfgs, a->ncfg, &o, &sink, &s, err,
                       sizeof err)) {
        fprintf(stderr, "tbench: %s\n", err);
        rc = TB_EXIT_CASES;
    } else {
        rc = run_finish(a, plan, &s, outdir);
    }
    tb_session_free(&s);
    if (a->to_stdout && stdout_results(outdir) && rc == TB_EXIT_OKAY)
        rc = TB_EXIT_CASES;
    return rc;
}

int tb_cmd_run(int argc, char **argv)
{
    run_args a;
    int rc;
    if (!run_parse(argc, argv, &a, &rc))
        return rc;
    if (tb_env_check())
        return TB_EXIT_USAGE;
    if ((rc = baselines_prepare(&a.bl))) {
        baselines_free(&a.bl);
        return rc;
    }
    tb_config *cfgs = calloc((size_t)a.ncfg, sizeof *cfgs);
    tb_plan plan = {0};
    cJSON *shard_info = NULL;
    bool listed = false;
    if (!cfgs) {
        fprintf(stderr, "tbench: out of memory\n");
        rc = TB_EXIT_USAGE;
    } else if (!(rc = run_plan(&a, cfgs, &plan, &shard_info, &listed)) &&
               !listed) {
        rc = run_session(&a, cfgs, &plan, shard_info);
    } else {
        cJSON_Delete(shard_info);
    }
    baselines_free(&a.bl);
    tb_plan_free(&plan);
    for (int i = 0; cfgs && i < a.ncfg; i++)
        tb_config_free(&cfgs[i]);
    free(cfgs);
    return rc;
}
