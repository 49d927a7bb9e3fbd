/* tbench ab: paired, interleaved A/B of two tbench builds (RMIT, and
 * optionally duet), and tbench worker, the exec'd entry point it talks
 * to (src/harness/xworker.h).  The blocks are measured by the harness's
 * scheduler (src/harness/ab_run.h), judged by src/report/ab.h. */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/error.h"
#include "../base/fileio.h"
#include "../base/grow.h"
#include "../base/result_schema.h"
#include "../base/strbuf.h"
#include "../harness/ab_run.h"
#include "../harness/config.h"
#include "../harness/noise.h"
#include "../harness/plan.h"
#include "../harness/timer.h"
#include "../harness/worker.h"
#include "../harness/xworker.h"
#include "../report/ab.h"
#include "../report/table.h"
#include "term.h"
#include "commands.h"

#define AB_BLOCKS_DEFAULT 20

static volatile sig_atomic_t ab_stop;

static void on_ab_signal(int sig)
{
    ab_stop = sig;
}

/* ---- tbench worker --protocol V --fd N ---------------------------------- */

int tb_cmd_worker(int argc, char **argv)
{
    long proto = -1, fd = -1;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (!strcmp(argv[i], "--protocol") && i + 1 < argc)
            proto = strtol(argv[++i], &end, 10);
        else if (!strcmp(argv[i], "--fd") && i + 1 < argc)
            fd = strtol(argv[++i], &end, 10);
        else
            return tb_usage_error("worker: unknown argument '%s' (the "
                                  "worker is started by 'tbench ab')",
                                  argv[i]);
        if (!end || *end)
            return tb_usage_error("worker: '%s' is not a number", argv[i]);
    }
    if (fd < 0 || fd > INT_MAX || proto < 0)
        return tb_usage_error("worker: --protocol V and --fd N are "
                              "required%s", "");
    if (proto != TB_XW_PROTOCOL) {
        /* Say which version this build speaks, then refuse. */
        tb_xworker_hello((int)fd);
        fprintf(stderr, "tbench: worker: protocol %ld is not spoken by this "
                "build (it speaks %d)\n", proto, TB_XW_PROTOCOL);
        return TB_EXIT_USAGE;
    }
    struct stat st;
    if (fstat((int)fd, &st) || !S_ISSOCK(st.st_mode)) {
        char n[24];
        snprintf(n, sizeof n, "%ld", fd);
        return tb_usage_error("worker: --fd %s is not an open socket (the "
                              "worker is started by 'tbench ab')", n);
    }
    tb_xworker_default_signals();
    return tb_xworker_serve((int)fd) ? TB_EXIT_CASES : TB_EXIT_OKAY;
}

/* ---- tbench ab ------------------------------------------------------------ */

/* Record block b of case k on side `which` (0 old, 1 new). */
static void record(tb_ab_case *c, int which, int b, const tb_xw_block *r,
                   bool use_min)
{
    double *v = which ? c->new_ns : c->old_ns;
    if (c->failed)
        return;
    if (tb_res_status_parse(r->status_name) != TB_RES_STATUS_OK ||
        !((use_min ? r->min_ns : r->median_ns) > 0)) {
        c->failed = true;
        c->skipped = tb_res_status_kind_of(r->status_name) == TB_RES_NOT_RUN;
        snprintf(c->message, sizeof c->message, "%s build, block %d: %s%s%s",
                 which ? "new" : "old", b + 1,
                 r->status_name[0] ? r->status_name : "error",
                 r->message[0] ? ": " : "", r->message);
        return;
    }
    v[b] = use_min ? r->min_ns : r->median_ns;
}

/* One look of a sequential run: when, and how many cases were open. */
typedef struct ab_look {
    int blocks;
    double elapsed_s;
    int open;       /* cases still open after it */
    double mde_max; /* the largest MDE among the judged cases */
} ab_look;

#define AB_MAX_LOOKS 64

/* The scheduler's sink (harness/ab_run.h): each block into the case's
 * values, the builds' names and the progress line on the terminal; in a
 * sequential run (--target-mde), the looks. */
typedef struct ab_ui {
    tb_ab_case *cases;
    int n;
    bool use_min; /* --estimator min (else median) */
    bool quiet;
    bool show; /* the progress line: not quiet and stderr a terminal */
    /* sequential */
    const tb_ab_opts *judge;
    double target, budget_s; /* MDE target (ratio), seconds (INF: none) */
    int max_blocks, next_look, nlooks, rc;
    uint64_t t0;
    int nlost[2], caplost[2];
    int *lost[2]; /* blocks (1-based) whose results file was never written */
    ab_look looks[AB_MAX_LOOKS];
} ab_ui;

static bool ui_block(void *ctx, int k, int side, int b,
                     const tb_xw_block *r)
{
    ab_ui *u = ctx;
    record(&u->cases[k], side, b, r, u->use_min);
    return !u->cases[k].failed;
}

/* A look after b blocks (final_why: the run ends here).  false when no
 * case is open any more or the look failed (u->rc). */
static bool ui_look(ab_ui *u, int b, bool *done, const char *final_why)
{
    int k = u->nlooks + 1;
    int open = tb_ab_look(u->cases, (size_t)u->n, u->judge, k, b,
                          u->target, final_why, &u->rc);
    if (open < 0)
        return false;
    ab_look *l = &u->looks[u->nlooks++];
    l->blocks = b;
    l->elapsed_s = (double)(tb_now_ns() - u->t0) / 1e9;
    l->open = open;
    l->mde_max = 0;
    for (int i = 0; i < u->n; i++) {
        const tb_ab_case *c = &u->cases[i];
        if (c->stop)
            done[i] = true; /* no more blocks */
        if (c->verdict != TB_AB_ERROR && c->verdict != TB_AB_SKIPPED &&
            !(c->mde <= l->mde_max))
            l->mde_max = c->mde;
    }
    if (u->show)
        fprintf(stderr, "\r\033[Klook %d after %d blocks (%.0f s): %d of %d "
                "cases open, largest MDE %.2f%%\n", k, b, l->elapsed_s, open,
                u->n, 100 * l->mde_max);
    return open > 0;
}

/* After block b (harness/ab_run.h's `more`): a look at the scheduled
 * block counts (--blocks, then x1.5 each), and a last one when the next
 * block would pass the budget or the block limit is reached. */
static bool ui_more(void *ctx, int b, bool *done)
{
    ab_ui *u = ctx;
    double elapsed = (double)(tb_now_ns() - u->t0) / 1e9;
    bool out_of_time = elapsed + elapsed / b > u->budget_s;
    const char *final_why = b >= u->max_blocks ? TB_AB_STOP_MAX_BLOCKS
                            : out_of_time      ? TB_AB_STOP_BUDGET
                                               : NULL;
    if (u->nlooks + 1 >= AB_MAX_LOOKS)
        final_why = TB_AB_STOP_MAX_BLOCKS;
    if (b < u->next_look && !final_why)
        return true;
    bool open = ui_look(u, b, done, final_why);
    u->next_look = b + (b + 1) / 2;
    return open && !final_why;
}

static void ui_started(void *ctx, const char *old_build,
                       const char *new_build)
{
    const ab_ui *u = ctx;
    if (!u->quiet)
        fprintf(stderr, "tbench: ab: old %s\ntbench: ab: new %s\n",
                old_build, new_build);
}

/* A block's results file a dead worker never wrote: a warning on its
 * own line (past the progress line, quiet or not), and the block in
 * ab.json's builds.old|new.missing_blocks. */
static void ui_lost(void *ctx, int side, int b, const char *msg)
{
    ab_ui *u = ctx;
    fprintf(stderr, "%stbench: warning: %s\n", u->show ? "\r\033[K" : "",
            msg);
    int *p = tb_grow(u->lost[side], &u->caplost[side], u->nlost[side],
                     sizeof *p, 8);
    if (!p)
        return; /* the warning stands; ab.json lists fewer */
    u->lost[side] = p;
    p[u->nlost[side]++] = b + 1;
}

static void ui_progress(void *ctx, int b, int blocks, int q, int n,
                        const char *id)
{
    const ab_ui *u = ctx;
    if (!u->show)
        return;
    if (!id) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
        return;
    }
    /* the time left: to the end, or in a sequential run to the next
     * look, at the mean time per case-block so far */
    int end = u->judge->sequential ? u->next_look : blocks;
    double done = (double)b * n + q;
    double el = (double)(tb_now_ns() - u->t0) / 1e9;
    char head[160], e[32], left[32], sid[512];
    tb_fmt_clock(el, e, sizeof e);
    if (done > 0)
        tb_fmt_clock(el / done * ((double)end * n - done), left, sizeof left);
    else
        snprintf(left, sizeof left, "?");
    snprintf(head, sizeof head, "block %d/%d [%d/%d] %s, ~%s %s  ", b + 1,
             end, q + 1, n, e, left,
             u->judge->sequential ? "to the look" : "left");
    int room = tb_term_width(STDERR_FILENO) - 1 - (int)strlen(head);
    tb_shorten_middle(id, room, sid, sizeof sid);
    fprintf(stderr, "\r\033[K%s%s", head, sid);
    fflush(stderr);
}

/* What the command line asks for. */
typedef struct ab_args {
    tb_ab_run_opts run; /* exe, config, blocks, duet, seed, outdir */
    tb_ab_opts judge;   /* alpha, threshold, seed */
    tb_plan_opts popts; /* --filter, --exclude */
    tb_cli_patterns pats;
    bool quiet, use_min;
    double target_mde; /* --target-mde as a ratio; NAN: a fixed design */
    double budget_s;   /* --budget; INFINITY: none */
    int max_blocks;    /* --max-blocks */
    int format;        /* --format: 0 text, 1 md, 2 json (on stdout) */
} ab_args;

#define AB_MAX_BLOCKS_DEFAULT 400
#define AB_MAX_BLOCKS_LIMIT 10000

/* A duration: a number of seconds, or a number with the unit s, m or h
 * ("90", "90s", "15m", "1.5h").  false when it is none. */
static bool parse_duration(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    double unit = !strcmp(end, "") || !strcmp(end, "s") ? 1
                  : !strcmp(end, "m")                   ? 60
                  : !strcmp(end, "h")                   ? 3600
                                                        : NAN;
    *out = v * unit;
    return end != s && isfinite(*out) && *out > 0;
}

static const struct option ab_longopts[] = {
    {"output", required_argument, NULL, 'o'},
    {"filter", required_argument, NULL, 'f'},
    {"exclude", required_argument, NULL, 'x'},
    {"blocks", required_argument, NULL, 'n'},
    {"duet", no_argument, NULL, 'D'},
    {"alpha", required_argument, NULL, 'a'},
    {"threshold", required_argument, NULL, 't'},
    {"max-mde", required_argument, NULL, 'M'},
    {"seed", required_argument, NULL, 's'},
    {"estimator", required_argument, NULL, 'E'},
    {"target-mde", required_argument, NULL, 'T'},
    {"budget", required_argument, NULL, 'B'},
    {"max-blocks", required_argument, NULL, 'N'},
    {"quiet", no_argument, NULL, 'q'},
    {"format", required_argument, NULL, 'F'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};
const tb_cmd_opts tb_opts_ab = {ab_longopts, ":o:f:x:n:qh", NULL};

/* One option c (its value: optarg) into a.  0, or the exit status
 * (after the message): --help, a bad value. */
static int ab_option(ab_args *a, int c, char **argv)
{
    char *end;
    switch (c) {
    case 'o': a->run.outdir = optarg; break;
    case 'f':
    case 'x': return tb_opt_pattern("ab", c, optarg, &a->pats, &a->popts);
    case 'n': {
        long v = strtol(optarg, &end, 10);
        if (*end || v < 6 || v > TB_CFG_MAX_ROUNDS)
            return tb_usage_error("ab: --blocks must be an integer from "
                                  "6 to 64, not '%s'", optarg);
        a->run.blocks = (int)v;
        break;
    }
    case 'D': a->run.duet = true; break;
    case 'a':
        a->judge.alpha = strtod(optarg, &end);
        if (*end || !(a->judge.alpha > 0 && a->judge.alpha < 0.5))
            return tb_usage_error("ab: --alpha must be in (0, 0.5), not "
                                  "'%s'", optarg);
        break;
    case 't':
        a->judge.threshold = strtod(optarg, &end) / 100;
        if (*end || !(a->judge.threshold >= 0 && a->judge.threshold < 10))
            return tb_usage_error("ab: --threshold must be a percentage "
                                  "from 0 to 1000, not '%s'", optarg);
        break;
    case 'M':
        a->judge.max_mde = strtod(optarg, &end) / 100;
        if (*end || !*optarg || !(a->judge.max_mde > 0 &&
                                  a->judge.max_mde <= 10))
            return tb_usage_error("ab: --max-mde must be a percentage "
                                  "above 0, up to 1000, not '%s'", optarg);
        break;
    case 's': {
        unsigned long long v = strtoull(optarg, &end, 10);
        if (*end || !*optarg || *optarg == '-' || *optarg == '+')
            return tb_usage_error("ab: --seed must be an integer, not "
                                  "'%s'", optarg);
        a->run.seed = v;
        a->judge.seed ^= v;
        break;
    }
    case 'E':
    {
        int i = tb_word_index(TB_AB_ESTIMATORS, optarg, strlen(optarg));
        if (i < 0)
            return tb_usage_error("ab: --estimator must be min or median, "
                                  "not '%s'", optarg);
        a->use_min = i == 0;
    }
        break;
    case 'T':
        a->target_mde = strtod(optarg, &end) / 100;
        if (*end || !*optarg || !(a->target_mde > 0 && a->target_mde <= 10))
            return tb_usage_error("ab: --target-mde must be a percentage "
                                  "above 0, up to 1000, not '%s'", optarg);
        break;
    case 'B':
        if (!parse_duration(optarg, &a->budget_s))
            return tb_usage_error("ab: --budget must be a duration (90, "
                                  "90s, 15m, 1.5h), not '%s'", optarg);
        break;
    case 'N': {
        long v = strtol(optarg, &end, 10);
        if (*end || v < 6 || v > AB_MAX_BLOCKS_LIMIT)
            return tb_usage_error("ab: --max-blocks must be an integer "
                                  "from 6 to 10000, not '%s'", optarg);
        a->max_blocks = (int)v;
        break;
    }
    case 'q': a->quiet = true; break;
    case 'F':
        a->format = tb_word_index(TB_TEXT_FORMATS, optarg, strlen(optarg));
        if (a->format < 0)
            return tb_usage_error("ab: --format is text, md or json, not "
                                  "'%s'", optarg);
        break;
    case 'h': tb_cmd_usage(stdout, "ab"); return TB_EXIT_OKAY;
    default: return tb_opt_error("ab", c, argv, ab_longopts);
    }
    return 0;
}

/* The command line into a.  true to go on; false: stop with *rc (help
 * printed, or a usage error). */
static bool ab_parse(int argc, char **argv, ab_args *a, int *rc)
{
    *rc = 0;
    memset(a, 0, sizeof *a);
    a->run.blocks = AB_BLOCKS_DEFAULT;
    a->run.seed = 1;
    a->run.stop = &ab_stop;
    a->use_min = true;
    a->target_mde = NAN;
    a->budget_s = INFINITY;
    tb_ab_opts_default(&a->judge);
    a->popts.filters = a->pats.filters;
    a->popts.excludes = a->pats.excludes;
    int c;
    bool first = true;
    while ((c = tb_opt_next(argc, argv, &tb_opts_ab, &first)) !=
           -1)
        if ((*rc = ab_option(a, c, argv)) || c == 'h')
            return false;
    if (argc - optind != 3) {
        *rc = tb_usage_error("ab: expected OLD NEW CONFIG (two tbench "
                             "executables and a config)%s", "");
        return false;
    }
    if (isnan(a->target_mde) && (isfinite(a->budget_s) || a->max_blocks)) {
        *rc = tb_usage_error("ab: --budget and --max-blocks bound a "
                             "sequential run: give --target-mde too%s", "");
        return false;
    }
    if (!isnan(a->target_mde)) {
        char why[160];
        if (!a->max_blocks)
            a->max_blocks = AB_MAX_BLOCKS_DEFAULT;
        if (a->target_mde < a->judge.threshold)
            snprintf(why, sizeof why, "--target-mde %g%% is below the "
                     "threshold, %g%%: an MDE is never below it",
                     100 * a->target_mde, 100 * a->judge.threshold);
        else if (a->max_blocks < a->run.blocks)
            snprintf(why, sizeof why, "--max-blocks %d is below --blocks %d",
                     a->max_blocks, a->run.blocks);
        else
            why[0] = '\0';
        if (why[0]) {
            *rc = tb_usage_error("ab: %s", why);
            return false;
        }
        a->judge.sequential = true;
        a->run.max_blocks = a->max_blocks;
    }
    a->run.exe[0] = argv[optind];
    a->run.exe[1] = argv[optind + 1];
    a->run.config = argv[optind + 2];
    return true;
}

/* After the table of a sequential run: how each case stopped, the looks,
 * and where timing could not reach the target, the exact gate. */
static void print_sequential(FILE *f, const ab_args *a, const ab_ui *u)
{
    static const char *const whys[] = {
        TB_AB_STOP_TARGET, TB_AB_STOP_DECIDED, TB_AB_STOP_BUDGET,
        TB_AB_STOP_MAX_BLOCKS, TB_AB_STOP_ERROR};
    fprintf(f, "sequential: target MDE %.2f%%, %d look%s", 100 * a->target_mde,
            u->nlooks, u->nlooks == 1 ? "" : "s");
    for (int w = 0; w < 5; w++) {
        int k = 0;
        for (int i = 0; i < u->n; i++)
            k += u->cases[i].stop && !strcmp(u->cases[i].stop, whys[w]);
        if (k)
            fprintf(f, "; %s %d", whys[w], k);
    }
    fprintf(f, " (alpha %g spread over the looks: look k spends alpha / "
            "(k (k + 1)))\n", a->judge.alpha);
    for (int l = 0; l < u->nlooks; l++)
        fprintf(f, "  look %d: %d blocks, %.0f s, %d case%s open, largest "
                "MDE %.2f%%\n", l + 1, u->looks[l].blocks,
                u->looks[l].elapsed_s, u->looks[l].open,
                u->looks[l].open == 1 ? "" : "s",
                100 * u->looks[l].mde_max);
    int short_of = 0;
    for (int i = 0; i < u->n; i++)
        short_of += u->cases[i].stop &&
                    (!strcmp(u->cases[i].stop, TB_AB_STOP_BUDGET) ||
                     !strcmp(u->cases[i].stop, TB_AB_STOP_MAX_BLOCKS));
    if (short_of)
        fprintf(f, "%d case%s did not reach the target MDE: timing cannot "
                "judge %s at %.2f%% on this machine now.  Gate on exact "
                "counts instead: run both builds with measure.instructions "
                "(docs/CONFIG.md) and 'tbench compare' them (a change of "
                "the instructions per iteration beyond --instr-threshold, "
                "0.1%%, fails)\n", short_of, short_of == 1 ? "" : "s",
                short_of == 1 ? "it" : "them", 100 * a->target_mde);
}

/* The "sequential" object of ab.json: the target, the limits, the looks. */
static cJSON *sequential_json(const ab_args *a, const ab_ui *u)
{
    cJSON *o = cJSON_CreateObject(), *looks = cJSON_CreateArray();
    if (!o || !looks) {
        cJSON_Delete(o);
        cJSON_Delete(looks);
        return NULL;
    }
    cJSON_AddNumberToObject(o, "target_mde", a->target_mde);
    if (isfinite(a->budget_s))
        cJSON_AddNumberToObject(o, "budget_s", a->budget_s);
    else
        cJSON_AddNullToObject(o, "budget_s");
    cJSON_AddNumberToObject(o, "max_blocks", a->max_blocks);
    cJSON_AddStringToObject(o, "spending", "alpha / (k (k + 1))");
    for (int l = 0; l < u->nlooks; l++) {
        cJSON *j = cJSON_CreateObject();
        if (!j)
            break;
        cJSON_AddNumberToObject(j, "look", l + 1);
        cJSON_AddNumberToObject(j, "blocks", u->looks[l].blocks);
        cJSON_AddNumberToObject(j, "elapsed_s", u->looks[l].elapsed_s);
        cJSON_AddNumberToObject(j, "alpha",
                                a->judge.alpha * tb_ab_look_share(l + 1));
        cJSON_AddNumberToObject(j, "open", u->looks[l].open);
        cJSON_AddNumberToObject(j, "mde_max", u->looks[l].mde_max);
        cJSON_AddItemToArray(looks, j);
    }
    cJSON_AddItemToObject(o, "looks", looks);
    return o;
}

/* DIR/ab.json: the verdicts, the builds and the settings.  0 or
 * TB_EXIT_CASES after the message. */
static int write_ab_json(const ab_args *a, const tb_ab_case *cases, int n,
                         const tb_ab_run_out *out, const ab_ui *u,
                         const tb_noise *noise, const char *broken)
{
    char path[4200], err[1024];
    const tb_ab_run_opts *r = &a->run;
    cJSON *builds = cJSON_CreateObject(), *settings = cJSON_CreateObject();
    for (int s = 0; builds && s < 2; s++) {
        cJSON *bj = cJSON_CreateObject();
        if (bj) {
            cJSON_AddStringToObject(bj, "path", r->exe[s]);
            cJSON_AddStringToObject(bj, "build", out->build[s]);
            cJSON_AddStringToObject(bj, "results",
                                    s ? "new/block-*/results.json"
                                      : "old/block-*/results.json");
            cJSON *miss = cJSON_AddArrayToObject(bj, "missing_blocks");
            for (int i = 0; miss && i < u->nlost[s]; i++)
                cJSON_AddItemToArray(miss, cJSON_CreateNumber(u->lost[s][i]));
        }
        cJSON_AddItemToObject(builds, s ? "new" : "old", bj);
    }
    if (settings) {
        cJSON_AddStringToObject(settings, "config", r->config);
        cJSON_AddNumberToObject(settings, "blocks", r->blocks);
        cJSON_AddStringToObject(settings, "order",
                                r->duet ? "duet" : "rmit");
        char seed[32]; /* digit for digit: a double loses above 2^53 */
        snprintf(seed, sizeof seed, "%llu", (unsigned long long)r->seed);
        cJSON_AddRawToObject(settings, "seed", seed);
        cJSON_AddStringToObject(settings, "estimator",
                                a->use_min ? "min" : "median");
        cJSON_AddNumberToObject(settings, "blocks_run", out->blocks);
        if (broken)
            cJSON_AddStringToObject(settings, "stopped", broken);
        else
            cJSON_AddNullToObject(settings, "stopped");
        if (a->judge.sequential)
            cJSON_AddItemToObject(settings, "sequential_run",
                                  sequential_json(a, u));
        cJSON_AddItemToObject(settings, "machine", tb_noise_json(noise));
    }
    cJSON *doc = tb_ab_json(cases, (size_t)n, &a->judge, builds, settings);
    char *text = doc ? cJSON_Print(doc) : NULL;
    cJSON_Delete(doc);
    if (a->format == 2 && text) /* --format json: the same document */
        printf("%s\n", text);
    if (!r->outdir) {
        int rc = text && !fflush(stdout) ? 0 : TB_EXIT_CASES;
        if (!text)
            fprintf(stderr, "tbench: ab: out of memory\n");
        free(text);
        return rc;
    }
    snprintf(path, sizeof path, "%s/ab.json", r->outdir);
    int rc = 0;
    if (!text ||
        tb_write_atomic(path, text, strlen(text), err, sizeof err)) {
        fprintf(stderr, "tbench: ab: writing %s: %s\n", path,
                text ? err : "out of memory");
        rc = TB_EXIT_CASES;
    } else { /* with --format md or json stdout is that alone */
        int lost = u->nlost[0] + u->nlost[1];
        char miss[96] = "";
        if (lost)
            snprintf(miss, sizeof miss, " (%d of %d missing: their workers "
                     "died, see the warnings)", lost, 2 * out->blocks);
        fprintf(a->format ? stderr : stdout, "ab: %s/ab.json; each block's "
                "results: %s/old/block-*, %s/new/block-*%s\n", r->outdir,
                r->outdir, r->outdir, miss);
    }
    free(text);
    return rc;
}

/* The verdicts of the blocks measured (out->blocks of them; broken: why
 * the run stopped before its end, or NULL), printed and written.
 * Returns the exit status. */
static int ab_judge(const ab_args *a, ab_ui *u, const tb_ab_run_out *out,
                    const tb_noise *noise, const char *broken)
{
    tb_ab_case *cases = u->cases;
    size_t n = (size_t)u->n;
    if (broken && a->judge.sequential) {
        /* the cases still open stop here, at one more look */
        bool *scratch = calloc(n ? n : 1, sizeof *scratch);
        if (!scratch)
            u->rc = TB_ENOMEM;
        else if (u->nlooks == 0 ||
                 u->looks[u->nlooks - 1].blocks < out->blocks)
            ui_look(u, out->blocks, scratch, TB_AB_STOP_ERROR);
        free(scratch);
        for (size_t k = 0; k < n; k++)
            if (!cases[k].stop)
                cases[k].stop = TB_AB_STOP_ERROR;
    } else if (broken) {
        for (size_t k = 0; k < n; k++)
            cases[k].n = out->blocks;
    }
    if (u->rc || ((!a->judge.sequential || broken) &&
                  tb_ab_analyze(cases, n, &a->judge))) {
        fprintf(stderr, "tbench: ab: out of memory\n");
        return TB_EXIT_CASES;
    }
    if (a->format == 0) {
        tb_ab_print(stdout, cases, n, &a->judge,
                    tb_term_color(STDOUT_FILENO) ? tb_term_status_color
                                                 : NULL);
        if (a->judge.sequential)
            print_sequential(stdout, a, u);
        tb_noise_print(stdout, "machine during the blocks", noise);
    } else if (a->format == 1) {
        tb_ab_print_md(stdout, cases, n, &a->judge, broken);
    }
    int rc = a->run.outdir || a->format == 2
                 ? write_ab_json(a, cases, (int)n, out, u, noise, broken)
                 : 0;
    if (!rc && broken)
        rc = TB_EXIT_BROKEN;
    if (!rc && (tb_ab_count(cases, n, TB_AB_REGRESSED) ||
                tb_ab_count(cases, n, TB_AB_ERROR) ||
                tb_ab_unresolved(cases, n, &a->judge)))
        rc = TB_EXIT_CASES;
    return rc;
}

/* The blocks of plan on both builds, then the verdicts.  Returns the
 * exit status. */
static int ab_measure(ab_args *a, const tb_plan *plan)
{
    int n = plan->n;
    int blocks = a->judge.sequential ? a->max_blocks : a->run.blocks;
    tb_ab_case *cases = calloc((size_t)n, sizeof *cases);
    double *store = calloc((size_t)n * 2 * (size_t)blocks, sizeof *store);
    int rc = TB_EXIT_CASES;
    if (!cases || !store) {
        fprintf(stderr, "tbench: out of memory\n");
        goto out;
    }
    for (int k = 0; k < n; k++) {
        snprintf(cases[k].id, sizeof cases[k].id, "%s", plan->cases[k].id);
        cases[k].old_ns = store + (size_t)k * 2 * (size_t)blocks;
        cases[k].new_ns = cases[k].old_ns + blocks;
        cases[k].n = blocks;
    }
    ab_ui ui = {.cases = cases, .n = n, .use_min = a->use_min,
                .quiet = a->quiet,
                .show = !a->quiet && isatty(STDERR_FILENO),
                .judge = &a->judge, .target = a->target_mde,
                .budget_s = a->budget_s, .max_blocks = a->max_blocks,
                .next_look = a->run.blocks, .t0 = tb_now_ns()};
    tb_ab_run_sink sink = {.ctx = &ui, .block = ui_block,
                           .started = ui_started, .progress = ui_progress,
                           .lost = ui_lost,
                           .more = a->judge.sequential ? ui_more : NULL};
    tb_ab_run_out out;
    char err[1200];
    tb_noise_snap snap0, snap1;
    tb_noise_take(&snap0);
    int erc = tb_ab_run(plan, &a->run, &sink, &out, err, sizeof err);
    tb_noise_take(&snap1);
    tb_noise noise;
    tb_noise_diff(&snap0, &snap1, &noise);
    if (erc && !out.blocks) { /* nothing measured: nothing to judge */
        fprintf(stderr, "tbench: %s\n", err);
        rc = erc == TB_EINVAL ? TB_EXIT_USAGE : TB_EXIT_CASES;
    } else if (out.signal) {
        const char *abbr = sigabbrev_np(out.signal);
        fprintf(stderr, "tbench: ab: stopped by SIG%s; nothing judged\n",
                abbr ? abbr : "?");
        rc = 128 + out.signal;
    } else {
        if (erc)
            fprintf(stderr, "tbench: %s\ntbench: ab: stopped after %d "
                    "block%s: those are judged below (exit %d: no verdict "
                    "of the change)\n", err, out.blocks,
                    out.blocks == 1 ? "" : "s", TB_EXIT_BROKEN);
        rc = ab_judge(a, &ui, &out, &noise, erc ? err : NULL);
    }
    free(ui.lost[0]);
    free(ui.lost[1]);
out:
    free(cases);
    free(store);
    return rc;
}

int tb_cmd_ab(int argc, char **argv)
{
    ab_args a;
    int rc;
    if (!ab_parse(argc, argv, &a, &rc))
        return rc;
    char err[1024];
    tb_config cfg;
    tb_plan plan = {0};
    if (tb_config_load(a.run.config, &cfg, err, sizeof err)) {
        fprintf(stderr, "tbench: %s\n", err);
        return TB_EXIT_USAGE;
    }
    rc = TB_EXIT_USAGE;
    if (tb_plan_build(&cfg, 1, &a.popts, &plan, err, sizeof err)) {
        fprintf(stderr, "tbench: %s\n", err);
    } else if (plan.n == 0) {
        fprintf(stderr, "tbench: ab: no case to run%s\n",
                a.popts.n_filters || a.popts.n_excludes
                    ? " (no case id is selected by the --filter and "
                      "--exclude patterns)" : "");
    } else if (a.run.outdir &&
               tb_mkdir_p(a.run.outdir, err, sizeof err)) {
        fprintf(stderr, "tbench: ab: -o: %s\n", err);
    } else {
        tb_workers_catch_stop(on_ab_signal);
        rc = ab_measure(&a, &plan);
    }
    tb_plan_free(&plan);
    tb_config_free(&cfg);
    return rc;
}
