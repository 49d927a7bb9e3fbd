/* tbench targets RESULTS -t FILE [--with PEER]...: each target of FILE
 * judged on the cases of RESULTS (report/targets.h; the file's keys in
 * docs/CONFIG.md, the output in docs/FORMAT.md).  Exit codes: 0 every
 * check met (inconclusive ones too, unless --strict; missing ones with
 * --allow-missing), 1 a check missed, a target matched no case, a
 * missing check or (--strict) an inconclusive one, 2 usage or input
 * error (one line on stderr). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/error.h"
#include "../base/strbuf.h"
#include "../report/resultsio.h"
#include "../report/targets.h"
#include "commands.h"
#include "term.h"


/* The options `targets` parses (and `tbench __options` lists). */
static const struct option longopts[] = {
    {"targets", required_argument, NULL, 't'},
    {"with", required_argument, NULL, 'w'},
    {"strict", no_argument, NULL, 'S'},
    {"allow-missing", no_argument, NULL, 'M'},
    {"format", required_argument, NULL, 'F'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};
const tb_cmd_opts tb_opts_targets = {longopts, ":t:w:h", NULL};
typedef struct cli {
    const char *targets;   /* -t FILE */
    const char *results;   /* the one positional */
    const char **with;     /* --with FILE..., argc slots */
    int n_with;
    bool json;
    tb_tgt_opts opts;
} cli;

/* argv -> c.  0, -1 after --help, or TB_EXIT_USAGE after the message. */
static int parse_cli(int argc, char **argv, cli *c)
{
    int o, npos = 0;
    bool first = true;
    while ((o = tb_opt_next(argc, argv, &tb_opts_targets, &first)) !=
           -1) {
        switch (o) {
        case 't': c->targets = optarg; break;
        case 'w': c->with[c->n_with++] = optarg; break;
        case 'S': c->opts.strict = true; break;
        case 'M': c->opts.allow_missing = true; break;
        case 'F':
        {
            int i = tb_word_index(TB_TARGETS_FORMATS, optarg, strlen(optarg));
            if (i < 0)
                return tb_usage_error("targets: --format: expected text or "
                                      "json, got '%s'", optarg);
            c->json = i == 1;
        }
            break;
        case 'h': tb_cmd_usage(stdout, "targets"); return -1;
        default: return tb_opt_error("targets", o, argv, longopts);
        }
    }
    for (; optind < argc; optind++, npos++)
        c->results = argv[optind];
    if (npos != 1)
        return tb_usage_error("targets: expected one result file (RESULTS), "
                              "got %s", npos ? "several" : "none");
    if (!c->targets)
        return tb_usage_error("targets: -t FILE (the targets file) is "
                              "required%s", "");
    return 0;
}

/* Print the verdicts of r as text or JSON.  0 or TB_EXIT_USAGE. */
static int emit(const cli *c, const tb_tgt_result *r)
{
    if (!c->json) {
        tb_tgt_print(stdout, r, isatty(STDOUT_FILENO)
                                    ? tb_term_width(STDOUT_FILENO) : 0);
    } else {
        cJSON *doc = tb_tgt_json(r);
        char *s = doc ? cJSON_Print(doc) : NULL;
        cJSON_Delete(doc);
        if (!s) {
            fprintf(stderr, "tbench: out of memory\n");
            return TB_EXIT_USAGE;
        }
        printf("%s\n", s);
        free(s);
    }
    return fflush(stdout) ? TB_EXIT_USAGE : 0;
}

int tb_cmd_targets(int argc, char **argv)
{
    cli c = {.with = calloc((size_t)argc, sizeof(char *))};
    tb_resfile **files = calloc((size_t)argc + 1, sizeof *files);
    tb_targets t = {0};
    tb_tgt_result r = {0};
    char err[2048];
    int rc = TB_EXIT_USAGE, nf = 0;
    if (!c.with || !files) {
        fprintf(stderr, "tbench: out of memory\n");
        goto out;
    }
    if ((rc = parse_cli(argc, argv, &c))) {
        rc = rc < 0 ? TB_EXIT_OKAY : rc;
        goto out;
    }
    rc = TB_EXIT_USAGE;
    if (tb_targets_load(c.targets, &t, err, sizeof err)) {
        fprintf(stderr, "tbench: %s\n", err);
        goto out;
    }
    /* files[0]: RESULTS; then the --with files */
    for (; nf <= c.n_with; nf++)
        if (tb_resfile_load(nf ? c.with[nf - 1] : c.results, &files[nf],
                            err, sizeof err)) {
            fprintf(stderr, "tbench: %s\n", err);
            goto out;
        }
    int jr = tb_targets_judge(&t, files[0], files + 1, c.n_with, &c.opts, &r,
                              err, sizeof err);
    if (jr) {
        fprintf(stderr, "tbench: %s\n", jr == TB_ENOMEM ? "out of memory"
                                                         : err);
        goto out;
    }
    rc = emit(&c, &r);
    if (!rc && r.failed)
        rc = TB_EXIT_CASES;
out:
    tb_tgt_result_free(&r);
    tb_targets_free(&t);
    for (int i = 0; i < nf; i++)
        tb_resfile_free(files[i]);
    free(files);
    free(c.with);
    return rc;
}
