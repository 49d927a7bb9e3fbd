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
#include "../report/fileio.h"
#include "../report/results.h"
#include "../report/table.h"
#include "commands.h"
#include "config.h"
#include "env.h"
#include "plan.h"
#include "runner.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
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

static void progress(int i, int n, const char *id)
{
    fprintf(stderr, "\r\033[K[%d/%d] %s", i + 1, n, id);
    fflush(stderr);
}

int tb_cmd_run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"filter", required_argument, NULL, 'f'},
        {"backend", required_argument, NULL, 'b'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *outdir = NULL;
    bool quiet = false;
    tb_plan_opts opts = {0};
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":o:f:b:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': outdir = optarg; break;
        case 'f': opts.filter = optarg; break;
        case 'b': opts.backend = optarg; break;
        case 'q': quiet = true; break;
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

    char err[1024];
    int rc = EXIT_OKAY;
    tb_config *cfgs = calloc((size_t)ncfg, sizeof *cfgs);
    tb_plan plan = {0};
    tb_runner *runner = NULL;
    cJSON *doc = NULL;
    if (!cfgs) {
        fprintf(stderr, "tbench: out of memory\n");
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
        fprintf(stderr, "tbench: no case to run%s%s%s\n",
                opts.filter ? " (filter '" : "",
                opts.filter ? opts.filter : "", opts.filter ? "')" : "");
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

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    if (tb_runner_create(&runner, &interrupted) ||
        !(doc = tb_results_new(tb_env_capture(), cfgs, ncfg,
                               tb_runner_timer_overhead(runner)))) {
        fprintf(stderr, "tbench: out of memory\n");
        rc = EXIT_CASES;
        goto out;
    }
    const cJSON *warn;
    cJSON_ArrayForEach(warn, cJSON_GetObjectItem(
                                 cJSON_GetObjectItem(doc, "env"), "warnings"))
        if (!quiet && cJSON_IsString(warn))
            fprintf(stderr, "tbench: warning: %s\n", warn->valuestring);

    bool show = !quiet && isatty(STDERR_FILENO);
    for (int i = 0; i < plan.n && !interrupted; i++) {
        tb_result res;
        if (show)
            progress(i, plan.n, plan.cases[i].id);
        tb_runner_run(runner, &plan.cases[i], &res);
        if (res.status == TB_STATUS_FAILED_CHECK ||
            res.status == TB_STATUS_ERROR)
            rc = EXIT_CASES;
        int arc = tb_results_add_case(doc, &plan.cases[i], &res);
        tb_result_free(&res);
        if (arc || tb_results_finish(doc, false) ||
            tb_results_write(doc, outdir, err, sizeof err)) {
            if (show)
                fprintf(stderr, "\r\033[K");
            fprintf(stderr, "tbench: writing results: %s\n",
                    arc ? "out of memory" : err);
            rc = EXIT_CASES;
            goto out;
        }
    }
    if (show)
        fprintf(stderr, "\r\033[K");
    if (tb_results_finish(doc, !interrupted) ||
        tb_results_write(doc, outdir, err, sizeof err)) {
        fprintf(stderr, "tbench: writing results: %s\n", err);
        rc = EXIT_CASES;
        goto out;
    }
    if (!quiet)
        tb_table_print(stdout, doc);
    printf("results: %s/results.json, %s/results.csv\n", outdir, outdir);
    if (interrupted) {
        fprintf(stderr, "tbench: interrupted; finished cases are saved\n");
        rc = EXIT_INTR;
    }
out:
    cJSON_Delete(doc);
    tb_runner_destroy(runner);
    tb_plan_free(&plan);
    for (int i = 0; i < ncfg; i++)
        tb_config_free(&cfgs[i]);
    free(cfgs);
    return rc;
}

