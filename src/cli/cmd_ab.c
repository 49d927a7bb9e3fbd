/* tbench ab: paired, interleaved A/B of two tbench builds (RMIT, and
 * optionally duet), and tbench worker, the exec'd entry point it talks
 * to (src/harness/xworker.h).  Verdicts: src/report/ab.h. */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/error.h"
#include "../base/fileio.h"
#include "../base/result_schema.h"
#include "../base/rng.h"
#include "../harness/config.h"
#include "../harness/plan.h"
#include "../harness/worker.h"
#include "../harness/xworker.h"
#include "../report/ab.h"
#include "commands.h"

#define AB_PATTERNS_MAX 64
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
        return EXIT_USAGE;
    }
    tb_workers_catch_stop(on_ab_signal);
    return tb_xworker_serve((int)fd, &ab_stop) ? EXIT_CASES : EXIT_OKAY;
}

/* ---- tbench ab ------------------------------------------------------------ */

typedef struct side {
    const char *name; /* "OLD" or "NEW" */
    const char *exe;
    tb_xw *w;
} side;

static int side_start(side *s, const char *config)
{
    char err[1024];
    int rc = tb_xw_start(&s->w, s->exe, err, sizeof err);
    if (!rc && (rc = tb_xw_load(s->w, config, err, sizeof err))) {
        tb_xw_stop(s->w);
        s->w = NULL;
    }
    if (rc)
        fprintf(stderr, "tbench: ab: %s: %s\n", s->name, err);
    return rc;
}

/* With -o: the worker writes the results of its block b (the cases it
 * measured) as DIR/old|new/block-NN/results.json. 0 or EXIT_CASES. */
static int side_finish(side *s, int which, const char *outdir, int b)
{
    char path[4200], err[1024];
    if (!outdir)
        return 0;
    snprintf(path, sizeof path, "%s/%s/block-%02d", outdir,
             which ? "new" : "old", b + 1);
    if (tb_xw_finish(s->w, path, err, sizeof err)) {
        fprintf(stderr, "tbench: ab: %s: writing %s: %s\n", s->name, path,
                err);
        return EXIT_CASES;
    }
    return 0;
}

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

int tb_cmd_ab(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"filter", required_argument, NULL, 'f'},
        {"exclude", required_argument, NULL, 'x'},
        {"blocks", required_argument, NULL, 'n'},
        {"duet", no_argument, NULL, 'D'},
        {"alpha", required_argument, NULL, 'a'},
        {"threshold", required_argument, NULL, 't'},
        {"seed", required_argument, NULL, 's'},
        {"estimator", required_argument, NULL, 'E'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *outdir = NULL;
    const char *filters[AB_PATTERNS_MAX], *excludes[AB_PATTERNS_MAX];
    tb_plan_opts popts = {0};
    popts.filters = filters;
    popts.excludes = excludes;
    int blocks = AB_BLOCKS_DEFAULT;
    bool duet = false, quiet = false, use_min = true;
    tb_ab_opts o;
    tb_ab_opts_default(&o);
    uint64_t order_seed = 1;
    int c;
    char *end;
    opterr = 0;
    optind = 0; /* 0: glibc re-reads the option string (a fresh parse) */
    while ((c = getopt_long(argc, argv, ":o:f:x:n:qh", longopts, NULL)) !=
           -1) {
        switch (c) {
        case 'o': outdir = optarg; break;
        case 'f':
        case 'x': {
            const char **v = c == 'f' ? filters : excludes;
            int *n = c == 'f' ? &popts.n_filters : &popts.n_excludes;
            if (*n == AB_PATTERNS_MAX)
                return tb_usage_error("ab: at most 64 --%s options",
                                      c == 'f' ? "filter" : "exclude");
            v[(*n)++] = optarg;
            break;
        }
        case 'n': {
            long v = strtol(optarg, &end, 10);
            if (*end || v < 6 || v > TB_CFG_MAX_ROUNDS)
                return tb_usage_error("ab: --blocks must be an integer from "
                                      "6 to 64, not '%s'", optarg);
            blocks = (int)v;
            break;
        }
        case 'D': duet = true; break;
        case 'a':
            o.alpha = strtod(optarg, &end);
            if (*end || !(o.alpha > 0 && o.alpha < 0.5))
                return tb_usage_error("ab: --alpha must be in (0, 0.5), not "
                                      "'%s'", optarg);
            break;
        case 't':
            o.threshold = strtod(optarg, &end) / 100;
            if (*end || !(o.threshold >= 0 && o.threshold < 10))
                return tb_usage_error("ab: --threshold must be a percentage "
                                      "from 0 to 1000, not '%s'", optarg);
            break;
        case 's': {
            unsigned long long v = strtoull(optarg, &end, 10);
            if (*end || !*optarg)
                return tb_usage_error("ab: --seed must be an integer, not "
                                      "'%s'", optarg);
            order_seed = v;
            o.seed ^= v;
            break;
        }
        case 'E':
            if (!strcmp(optarg, "min") || !strcmp(optarg, "median"))
                use_min = !strcmp(optarg, "min");
            else
                return tb_usage_error("ab: --estimator must be min or median, "
                                      "not '%s'", optarg);
            break;
        case 'q': quiet = true; break;
        case 'h': tb_cmd_usage(stdout, "ab"); return EXIT_OKAY;
        default: return tb_opt_error("ab", c, argv, longopts);
        }
    }
    if (argc - optind != 3)
        return tb_usage_error("ab: expected OLD NEW CONFIG (two tbench "
                              "executables and a config)%s", "");
    side sides[2] = {{"OLD", argv[optind], NULL},
                     {"NEW", argv[optind + 1], NULL}};
    const char *config = argv[optind + 2];

    char err[1024];
    tb_config cfg;
    tb_plan plan = {0};
    tb_ab_case *cases = NULL;
    double *store = NULL;
    int rc = EXIT_OKAY;
    if (tb_config_load(config, &cfg, err, sizeof err)) {
        fprintf(stderr, "tbench: %s\n", err);
        return EXIT_USAGE;
    }
    if (tb_plan_build(&cfg, 1, &popts, &plan, err, sizeof err)) {
        fprintf(stderr, "tbench: %s\n", err);
        tb_config_free(&cfg);
        return EXIT_USAGE;
    }
    if (plan.n == 0) {
        fprintf(stderr, "tbench: ab: no case to run%s\n",
                popts.n_filters || popts.n_excludes
                    ? " (no case id is selected by the --filter and "
                      "--exclude patterns)" : "");
        rc = EXIT_USAGE;
        goto out;
    }
    if (outdir && tb_mkdir_p(outdir, err, sizeof err)) {
        fprintf(stderr, "tbench: ab: -o: %s\n", err);
        rc = EXIT_USAGE;
        goto out;
    }
    tb_workers_catch_stop(on_ab_signal);
    for (int s = 0; s < 2; s++)
        if (side_start(&sides[s], config)) {
            rc = EXIT_USAGE;
            goto out;
        }
    cases = calloc((size_t)plan.n, sizeof *cases);
    store = calloc((size_t)plan.n * 2 * (size_t)blocks, sizeof *store);
    int *order = calloc((size_t)plan.n, sizeof *order);
    if (!cases || !store || !order) {
        free(order);
        fprintf(stderr, "tbench: out of memory\n");
        rc = EXIT_CASES;
        goto out;
    }
    for (int k = 0; k < plan.n; k++) {
        snprintf(cases[k].id, sizeof cases[k].id, "%s", plan.cases[k].id);
        cases[k].old_ns = store + (size_t)k * 2 * (size_t)blocks;
        cases[k].new_ns = cases[k].old_ns + blocks;
        cases[k].n = blocks;
        order[k] = k;
    }
    if (!quiet)
        fprintf(stderr, "tbench: ab: old %s\ntbench: ab: new %s\n",
                tb_xw_build(sides[0].w), tb_xw_build(sides[1].w));
    bool show = !quiet && isatty(STDERR_FILENO);
    tb_rng rng;
    tb_rng_seed(&rng, order_seed);
    /* RMIT: every block visits the cases in a fresh random order, and
     * runs the two builds of each case in a random order (duet: at the
     * same time, their CPUs swapped every block). */
    for (int b = 0; b < blocks && !ab_stop; b++) {
        /* A fresh worker process per block and build: what a process
         * fixes for its life (memory layout and page placement, the CPU
         * it lands on) then differs from block to block, as noise the
         * test sees, instead of biasing every block of a build alike. */
        for (int s = 0; s < 2 && b > 0; s++) {
            if (side_finish(&sides[s], s, outdir, b - 1)) {
                free(order);
                rc = EXIT_CASES;
                goto out;
            }
            tb_xw_stop(sides[s].w);
            sides[s].w = NULL;
            if (side_start(&sides[s], config)) {
                free(order);
                rc = EXIT_USAGE;
                goto out;
            }
        }
        for (int k = plan.n - 1; k > 0; k--) {
            int j = (int)tb_rng_below(&rng, (uint64_t)k + 1);
            int t = order[k];
            order[k] = order[j];
            order[j] = t;
        }
        for (int q = 0; q < plan.n && !ab_stop; q++) {
            int k = order[q];
            tb_ab_case *cs = &cases[k];
            const tb_case *pc = &plan.cases[k];
            if (cs->failed)
                continue;
            if (show) {
                fprintf(stderr, "\r\033[Kblock %d/%d [%d/%d] %s", b + 1,
                        blocks, q + 1, plan.n, pc->id);
                fflush(stderr);
            }
            int first = (int)tb_rng_below(&rng, 2);
            tb_xw_block r[2];
            if (duet) {
                for (int s = 0; s < 2; s++)
                    if (tb_xw_send_run(sides[s].w, pc->id, b, blocks,
                                       (s + b) % 2))
                        memset(&r[s], 0, sizeof r[s]);
                for (int s = 0; s < 2; s++)
                    tb_xw_recv_run(sides[s].w, pc->measure.timeout_s, &r[s]);
            } else {
                for (int t = 0; t < 2; t++) {
                    int s = t ? 1 - first : first;
                    memset(&r[s], 0, sizeof r[s]);
                    if (!tb_xw_send_run(sides[s].w, pc->id, b, blocks, -1))
                        tb_xw_recv_run(sides[s].w, pc->measure.timeout_s,
                                       &r[s]);
                    else
                        snprintf(r[s].message, sizeof r[s].message,
                                 "the worker is gone");
                }
            }
            for (int s = 0; s < 2; s++) {
                record(cs, s, b, &r[s], use_min);
                /* A worker that died or hung is replaced for the cases
                 * that follow; this case keeps its failure. */
                if (!tb_xw_alive(sides[s].w)) {
                    tb_xw_stop(sides[s].w);
                    sides[s].w = NULL;
                    if (side_start(&sides[s], config)) {
                        free(order);
                        rc = EXIT_USAGE;
                        goto out;
                    }
                }
            }
        }
    }
    free(order);
    if (show)
        fprintf(stderr, "\r\033[K");
    for (int s = 0; s < 2 && !ab_stop; s++)
        if (side_finish(&sides[s], s, outdir, blocks - 1)) {
            rc = EXIT_CASES;
            goto out;
        }
    if (ab_stop) {
        const char *abbr = sigabbrev_np(ab_stop);
        fprintf(stderr, "tbench: ab: stopped by SIG%s; nothing judged\n",
                abbr ? abbr : "?");
        rc = 128 + ab_stop;
        goto out;
    }
    if (tb_ab_analyze(cases, (size_t)plan.n, &o)) {
        fprintf(stderr, "tbench: ab: out of memory\n");
        rc = EXIT_CASES;
        goto out;
    }
    tb_ab_print(stdout, cases, (size_t)plan.n, &o);
    if (outdir) {
        char path[4200];
        cJSON *builds = cJSON_CreateObject(), *settings = cJSON_CreateObject();
        for (int s = 0; builds && s < 2; s++) {
            cJSON *bj = cJSON_CreateObject();
            if (bj) {
                cJSON_AddStringToObject(bj, "path", sides[s].exe);
                cJSON_AddStringToObject(bj, "build", tb_xw_build(sides[s].w));
                cJSON_AddStringToObject(bj, "results",
                                        s ? "new/block-*/results.json"
                                          : "old/block-*/results.json");
            }
            cJSON_AddItemToObject(builds, s ? "new" : "old", bj);
        }
        if (settings) {
            cJSON_AddStringToObject(settings, "config", config);
            cJSON_AddNumberToObject(settings, "blocks", blocks);
            cJSON_AddStringToObject(settings, "order",
                                    duet ? "duet" : "rmit");
            cJSON_AddNumberToObject(settings, "seed", (double)order_seed);
            cJSON_AddStringToObject(settings, "estimator",
                                    use_min ? "min" : "median");
        }
        cJSON *doc = tb_ab_json(cases, (size_t)plan.n, &o, builds, settings);
        char *text = doc ? cJSON_Print(doc) : NULL;
        cJSON_Delete(doc);
        snprintf(path, sizeof path, "%s/ab.json", outdir);
        if (!text ||
            tb_write_atomic(path, text, strlen(text), err, sizeof err)) {
            fprintf(stderr, "tbench: ab: writing %s: %s\n", path,
                    text ? err : "out of memory");
            free(text);
            rc = EXIT_CASES;
            goto out;
        }
        free(text);
        printf("ab: %s/ab.json; each block's results: %s/old/block-*, "
               "%s/new/block-*\n", outdir, outdir, outdir);
    }
    if (tb_ab_count(cases, (size_t)plan.n, TB_AB_REGRESSED) ||
        tb_ab_count(cases, (size_t)plan.n, TB_AB_ERROR))
        rc = EXIT_CASES;
out:
    for (int s = 0; s < 2; s++)
        tb_xw_stop(sides[s].w);
    free(cases);
    free(store);
    tb_plan_free(&plan);
    tb_config_free(&cfg);
    return rc;
}
