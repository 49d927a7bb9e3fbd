/* tbench command line: run, list, --help, --version.
 *
 * Exit codes: 0 success; 1 a case failed its check or errored; 2 usage
 * or input error (nothing is run, no result file is written); 130 the
 * run was interrupted (finished cases are kept). */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../backends/backend.h"
#include "../ops/error.h"
#include "../report/fileio.h"
#include "../report/results.h"
#include "../report/table.h"
#include "config.h"
#include "env.h"
#include "plan.h"
#include "runner.h"
#include "tb_commit.h"
#include "tb_config.h"

enum { EXIT_OKAY = 0, EXIT_CASES = 1, EXIT_USAGE = 2, EXIT_INTR = 130 };

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static const char usage_text[] =
    "usage: tbench <command> [options]\n"
    "\n"
    "Benchmark tensor operations on every backend of this machine.\n"
    "\n"
    "commands:\n"
    "  run CONFIG... [options]   run every case of the configs' matrices\n"
    "      -o, --output DIR      write DIR/results.json and DIR/results.csv\n"
    "                            (default: a new folder under results/)\n"
    "      -f, --filter GLOB     run only cases whose id matches GLOB, e.g.\n"
    "                            'matmul*' or '*/f64/*' (ids: docs/FORMAT.md)\n"
    "      -b, --backend NAME    run only on backend NAME (with its default\n"
    "                            axis values if the config does not list it)\n"
    "      -q, --quiet           no progress line and no table\n"
    "  list [--json]             ops (arity, dtypes, parameters) and backends\n"
    "                            (availability with reason, parameter axes)\n"
    "  help                      this text\n"
    "\n"
    "options:\n"
    "  -h, --help                this text\n"
    "  -V, --version             version and git commit\n"
    "\n"
    "exit status:\n"
    "  0    every case ran (ok, unsupported or unavailable)\n"
    "  1    a case failed its correctness check or hit an error\n"
    "  2    usage or input error: nothing was run, no result was written\n"
    "  130  interrupted: the cases finished so far are in the results\n"
    "\n"
    "Config format: docs/CONFIG.md.  Result format: docs/FORMAT.md.\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "tbench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'tbench --help'.\n");
    return EXIT_USAGE;
}

/* ---- list ---------------------------------------------------------------- */

static const char *param_kind(tb_param_kind k)
{
    return k == TB_PARAM_INT ? "int" : k == TB_PARAM_BOOL ? "bool" : "float";
}

static cJSON *list_json(void)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON *ops = cJSON_AddArrayToObject(doc, "ops");
    for (int i = 0; i < TB_OP_COUNT; i++) {
        const tb_op *op = tb_op_get((tb_op_id)i);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", op->name);
        cJSON_AddStringToObject(o, "category",
                                tb_op_category_name(op->category));
        cJSON_AddNumberToObject(o, "inputs", op->n_in);
        cJSON_AddNumberToObject(o, "outputs", op->n_out);
        cJSON *dt = cJSON_AddArrayToObject(o, "dtypes");
        for (int d = 0; d < TB_DTYPE_COUNT; d++)
            cJSON_AddItemToArray(dt,
                                 cJSON_CreateString(tb_dtype_name(d)));
        cJSON *ps = cJSON_AddArrayToObject(o, "params");
        for (int p = 0; p < op->n_params; p++) {
            const tb_param_spec *s = &op->params[p];
            cJSON *pj = cJSON_CreateObject();
            cJSON_AddStringToObject(pj, "name", s->name);
            cJSON_AddStringToObject(pj, "type", param_kind(s->kind));
            cJSON_AddBoolToObject(pj, "optional", s->optional);
            if (s->optional)
                cJSON_AddNullToObject(pj, "default");
            else
                cJSON_AddNumberToObject(pj, "default", s->def);
            cJSON_AddNumberToObject(pj, "min", s->min);
            cJSON_AddNumberToObject(pj, "max", s->max);
            cJSON_AddStringToObject(pj, "doc", s->doc);
            cJSON_AddItemToArray(ps, pj);
        }
        cJSON *tol = cJSON_AddObjectToObject(o, "tolerance");
        for (int d = 0; d < TB_DTYPE_COUNT; d++) {
            cJSON *t = cJSON_AddObjectToObject(tol, tb_dtype_name(d));
            cJSON_AddNumberToObject(t, "rtol", op->tol[d].rtol);
            cJSON_AddNumberToObject(t, "atol", op->tol[d].atol);
        }
        cJSON_AddStringToObject(o, "doc", op->doc);
        cJSON_AddItemToArray(ops, o);
    }
    cJSON *bes = cJSON_AddArrayToObject(doc, "backends");
    int n;
    const tb_backend *const *list = tb_backend_list(&n);
    for (int i = 0; i < n; i++) {
        char reason[256] = "";
        bool ok = list[i]->probe(reason, sizeof reason) == 0;
        cJSON *b = cJSON_CreateObject();
        cJSON_AddStringToObject(b, "name", list[i]->name);
        cJSON_AddBoolToObject(b, "available", ok);
        if (ok)
            cJSON_AddNullToObject(b, "reason");
        else
            cJSON_AddStringToObject(b, "reason", reason);
        cJSON_AddStringToObject(b, "doc", list[i]->doc);
        cJSON *ax = cJSON_AddArrayToObject(b, "axes");
        tb_axis axes[TB_MAX_AXES];
        int na = ok ? list[i]->axes(axes, TB_MAX_AXES) : 0;
        for (int a = 0; a < na; a++) {
            cJSON *aj = cJSON_CreateObject();
            cJSON_AddStringToObject(aj, "name", axes[a].name);
            cJSON *vals = cJSON_AddArrayToObject(aj, "values");
            for (int v = 0; v < axes[a].n_values; v++)
                cJSON_AddItemToArray(vals,
                                     cJSON_CreateString(axes[a].values[v]));
            cJSON_AddStringToObject(aj, "default",
                                    axes[a].values[axes[a].def]);
            cJSON_AddStringToObject(aj, "doc", axes[a].doc ? axes[a].doc
                                                           : "");
            cJSON_AddItemToArray(ax, aj);
        }
        cJSON_AddItemToArray(bes, b);
    }
    return doc;
}

static void list_text(const cJSON *doc)
{
    const cJSON *o, *p, *b, *a, *v;
    printf("ops (all in f32 and f64):\n");
    cJSON_ArrayForEach(o, cJSON_GetObjectItem(doc, "ops"))
    {
        printf("  %-12s %-12s %d in  ",
               cJSON_GetObjectItem(o, "name")->valuestring,
               cJSON_GetObjectItem(o, "category")->valuestring,
               cJSON_GetObjectItem(o, "inputs")->valueint);
        int first = 1;
        cJSON_ArrayForEach(p, cJSON_GetObjectItem(o, "params"))
        {
            const cJSON *def = cJSON_GetObjectItem(p, "default");
            if (cJSON_IsNull(def))
                printf("%s%s=(none)", first ? "" : " ",
                       cJSON_GetObjectItem(p, "name")->valuestring);
            else
                printf("%s%s=%g", first ? "" : " ",
                       cJSON_GetObjectItem(p, "name")->valuestring,
                       def->valuedouble);
            first = 0;
        }
        printf("%s  %s\n", first ? "-" : "",
               cJSON_GetObjectItem(o, "doc")->valuestring);
    }
    printf("\nbackends:\n");
    cJSON_ArrayForEach(b, cJSON_GetObjectItem(doc, "backends"))
    {
        bool ok = cJSON_IsTrue(cJSON_GetObjectItem(b, "available"));
        printf("  %-8s %s", cJSON_GetObjectItem(b, "name")->valuestring,
               ok ? "available" : "unavailable: ");
        if (!ok)
            printf("%s", cJSON_GetObjectItem(b, "reason")->valuestring);
        printf("\n");
        cJSON_ArrayForEach(a, cJSON_GetObjectItem(b, "axes"))
        {
            printf("           axis %s:",
                   cJSON_GetObjectItem(a, "name")->valuestring);
            cJSON_ArrayForEach(v, cJSON_GetObjectItem(a, "values"))
                printf(" %s", v->valuestring);
            printf("  (default %s)\n",
                   cJSON_GetObjectItem(a, "default")->valuestring);
        }
    }
}

static int cmd_list(int argc, char **argv)
{
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage_text, stdout);
            return EXIT_OKAY;
        } else
            return usage_error("list: unknown argument '%s'", argv[i]);
    }
    cJSON *doc = list_json();
    if (json) {
        char *s = cJSON_Print(doc);
        puts(s);
        free(s);
    } else {
        list_text(doc);
    }
    cJSON_Delete(doc);
    return EXIT_OKAY;
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

static int cmd_run(int argc, char **argv)
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
        case 'h': fputs(usage_text, stdout); return EXIT_OKAY;
        case ':':
            return usage_error("run: option '%s' needs a value",
                               argv[optind - 1]);
        default:
            return usage_error("run: unknown option '%s'", argv[optind - 1]);
        }
    }
    int ncfg = argc - optind;
    if (ncfg <= 0)
        return usage_error("run: no config file given%s", "");
    if (opts.backend && !tb_backend_find(opts.backend))
        return usage_error("--backend: unknown backend '%s' (see 'tbench "
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

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(usage_text, stdout);
        return EXIT_OKAY;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
        printf("tbench %s (commit %s, %s build)\n", TB_VERSION, TB_GIT_COMMIT,
               TB_BUILD_TYPE);
        return EXIT_OKAY;
    }
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "list"))
        return cmd_list(argc - 1, argv + 1);
    return usage_error("unknown command '%s'", cmd);
}
