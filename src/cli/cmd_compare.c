/* tbench compare, history and export: result files in, verdicts, series
 * and dashboard formats out (docs/FORMAT.md).  Exit codes: 0 success
 * (compare: no regression of a kind in --fail-on), 1 compare found such
 * regressions, 2 usage or input error (one line on stderr). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/error.h"
#include "../report/compare.h"
#include "../report/export.h"
#include "../base/fileio.h"
#include "../base/strbuf.h"
#include "../report/history.h"
#include "../report/resultsio.h"
#include "commands.h"
#include "term.h"

/* Options shared by the three commands; each command accepts a subset. */
typedef struct cli {
    const char *cmd;
    const char *format, *output, *fail_on;
    const char *backends; /* compare --backends OLD,NEW */
    double threshold, alpha, penalty;
    double instr_threshold, cache_threshold;
    double max_mde;     /* compare --max-mde, fraction; NAN: not given */
    bool allow_missing; /* compare --allow-missing */
    bool vs_seen;
    int n_old, n_new;   /* positionals before and after --vs */
    const char **files; /* every positional, old ones first */
} cli;

enum { OPT_THRESHOLD = 1, OPT_ALPHA = 2, OPT_FORMAT = 4, OPT_FAILON = 8,
       OPT_PENALTY = 16, OPT_OUTPUT = 32, OPT_VS = 64,
       OPT_INSTR_THRESHOLD = 128, OPT_BACKENDS = 256, OPT_MAX_MDE = 512,
       OPT_ALLOW_MISSING = 1024, OPT_CACHE_THRESHOLD = 2048 };

/* The options of compare, history and export: one table, each command
 * taking the part its mask says. */
#define COMPARE_TAKES                                                     \
    (OPT_THRESHOLD | OPT_ALPHA | OPT_FORMAT | OPT_FAILON | OPT_OUTPUT |  \
     OPT_VS | OPT_INSTR_THRESHOLD | OPT_BACKENDS | OPT_MAX_MDE |          \
     OPT_ALLOW_MISSING | OPT_CACHE_THRESHOLD)
#define HISTORY_TAKES                                                     \
    (OPT_THRESHOLD | OPT_PENALTY | OPT_ALPHA | OPT_FORMAT | OPT_OUTPUT)
#define EXPORT_TAKES (OPT_FORMAT | OPT_OUTPUT)
static const struct option longopts[] = {
    {"threshold", required_argument, NULL, 1000 + OPT_THRESHOLD},
    {"alpha", required_argument, NULL, 1000 + OPT_ALPHA},
    {"format", required_argument, NULL, 1000 + OPT_FORMAT},
    {"fail-on", required_argument, NULL, 1000 + OPT_FAILON},
    {"penalty", required_argument, NULL, 1000 + OPT_PENALTY},
    {"instr-threshold", required_argument, NULL,
     1000 + OPT_INSTR_THRESHOLD},
    {"cache-threshold", required_argument, NULL,
     1000 + OPT_CACHE_THRESHOLD},
    {"backends", required_argument, NULL, 1000 + OPT_BACKENDS},
    {"max-mde", required_argument, NULL, 1000 + OPT_MAX_MDE},
    {"allow-missing", no_argument, NULL, 1000 + OPT_ALLOW_MISSING},
    {"output", required_argument, NULL, 'o'},
    {"vs", no_argument, NULL, 1000 + OPT_VS},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Does cmd (compare, history or export) take the option named name? */
static bool takes(const char *cmd, const char *name)
{
    unsigned mask = !strcmp(cmd, "compare")   ? COMPARE_TAKES
                    : !strcmp(cmd, "history") ? HISTORY_TAKES
                                              : EXPORT_TAKES;
    for (const struct option *o = longopts; o->name; o++)
        if (!strcmp(o->name, name)) {
            unsigned bit = o->val == 'o'   ? OPT_OUTPUT
                           : o->val >= 1000 ? (unsigned)(o->val - 1000)
                                            : 0;
            return o->val == 'h' || (bit & mask);
        }
    return false;
}
const tb_cmd_opts tb_opts_compare = {longopts, "-:o:h", takes};
const tb_cmd_opts tb_opts_history = {longopts, "-:o:h", takes};
const tb_cmd_opts tb_opts_export = {longopts, "-:o:h", takes};

/* A number from an option value: digits, optionally ending in '%' when
 * pct is set.  false when malformed. */
static bool parse_num(const char *s, bool pct, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v))
        return false;
    if (pct && *end == '%')
        end++;
    if (*end)
        return false;
    *out = v;
    return true;
}

/* Parse argv (argv[0] is the command) accepting the options in `allow`,
 * with getopt_long like every command ("--x=v", "-oFILE", "--" ends the
 * options).  The files keep their order around --vs (getopt's "-" mode
 * hands positionals back in place).  Returns 0, -1 after --help, or
 * TB_EXIT_USAGE after printing the message. */
static int parse_cli(int argc, char **argv, unsigned allow, cli *c)
{
    c->files = calloc((size_t)argc, sizeof *c->files);
    if (!c->files) {
        fprintf(stderr, "tbench: out of memory\n");
        return TB_EXIT_USAGE;
    }
    int o;
    bool first = true;
    while ((o = tb_opt_next(argc, argv, &tb_opts_compare, &first)) !=
           -1) {
        const char *val = optarg;
        /* long options return 1000 + their bit: getopt's "-" mode
         * returns 1 for a positional */
        unsigned bit = o == 'o' ? OPT_OUTPUT
                       : o >= 1000 ? (unsigned)(o - 1000) : 0;
        if (o == 1) { /* a file, in its place */
            c->files[c->n_old + c->n_new] = val;
            if (c->vs_seen)
                c->n_new++;
            else
                c->n_old++;
            continue;
        }
        if (o == 'h') {
            tb_cmd_usage(stdout, c->cmd);
            return -1;
        }
        if (o == '?' || o == ':')
            return tb_opt_error(c->cmd, o, argv, longopts);
        if (!(bit & allow)) {
            fprintf(stderr, "tbench: %s: option '%s' is not an option of "
                    "this command\nTry 'tbench help %s'.\n", c->cmd,
                    argv[optind - 1], c->cmd);
            return TB_EXIT_USAGE;
        }
        switch (bit) {
        case OPT_VS:
            if (c->vs_seen)
                return tb_usage_error("compare: '--vs' given twice%s", "");
            c->vs_seen = true;
            break;
        case OPT_THRESHOLD:
            if (!parse_num(val, true, &c->threshold) || c->threshold < 0 ||
                c->threshold > 1000)
                return tb_usage_error("--threshold: expected a percentage "
                                      "from 0 to 1000, got '%s'", val);
            c->threshold /= 100;
            break;
        case OPT_INSTR_THRESHOLD:
            if (!parse_num(val, true, &c->instr_threshold) ||
                c->instr_threshold < 0 || c->instr_threshold > 1000)
                return tb_usage_error("--instr-threshold: expected a "
                                      "percentage from 0 to 1000, got '%s'",
                                      val);
            c->instr_threshold /= 100;
            break;
        case OPT_CACHE_THRESHOLD:
            if (!parse_num(val, true, &c->cache_threshold) ||
                c->cache_threshold < 0 || c->cache_threshold > 1000)
                return tb_usage_error("--cache-threshold: expected a "
                                      "percentage from 0 to 1000, got '%s'",
                                      val);
            c->cache_threshold /= 100;
            break;
        case OPT_MAX_MDE:
            if (!parse_num(val, true, &c->max_mde) || !(c->max_mde > 0) ||
                c->max_mde > 1000)
                return tb_usage_error("--max-mde: expected a percentage "
                                      "above 0, up to 1000, got '%s'", val);
            c->max_mde /= 100;
            break;
        case OPT_ALLOW_MISSING: c->allow_missing = true; break;
        case OPT_ALPHA:
            if (!parse_num(val, false, &c->alpha) || !(c->alpha > 0) ||
                !(c->alpha < 1))
                return tb_usage_error("--alpha: expected a number between 0 "
                                      "and 1, got '%s'", val);
            break;
        case OPT_PENALTY:
            if (!parse_num(val, false, &c->penalty) || !(c->penalty > 0) ||
                c->penalty > 1e6)
                return tb_usage_error("--penalty: expected a positive number, "
                                      "got '%s'", val);
            break;
        case OPT_FORMAT: c->format = val; break;
        case OPT_FAILON: c->fail_on = val; break;
        case OPT_OUTPUT: c->output = val; break;
        case OPT_BACKENDS: c->backends = val; break;
        }
    }
    for (; optind < argc; optind++) { /* after "--": files only */
        c->files[c->n_old + c->n_new] = argv[optind];
        if (c->vs_seen)
            c->n_new++;
        else
            c->n_old++;
    }
    return 0;
}

/* Load files[0..n) into out[0..n); on failure print the error and free
 * what was loaded. */
static int load_all(const char *const *files, int n, tb_resfile **out)
{
    char err[1024];
    for (int i = 0; i < n; i++) {
        if (tb_resfile_load(files[i], &out[i], err, sizeof err)) {
            fprintf(stderr, "tbench: %s\n", err);
            for (int j = 0; j < i; j++)
                tb_resfile_free(out[j]);
            return TB_EXIT_USAGE;
        }
    }
    return 0;
}

/* Write text to -o FILE (atomically) or stdout.  0 or TB_EXIT_USAGE. */
static int emit(const char *output, const char *text, size_t len)
{
    if (!output) {
        fwrite(text, 1, len, stdout);
        return fflush(stdout) ? TB_EXIT_USAGE : 0;
    }
    char err[1024];
    if (tb_write_atomic(output, text, len, err, sizeof err)) {
        fprintf(stderr, "tbench: -o: %s\n", err);
        return TB_EXIT_USAGE;
    }
    return 0;
}

static int emit_json(const char *output, cJSON *doc)
{
    char *s = doc ? cJSON_Print(doc) : NULL;
    if (!s) {
        fprintf(stderr, "tbench: out of memory\n");
        return TB_EXIT_USAGE;
    }
    size_t l = strlen(s);
    s[l] = '\n'; /* replaces the NUL; emit gets the length */
    int rc = emit(output, s, l + 1);
    free(s);
    return rc;
}

/* What compare and history print, in one signature. */
typedef void (*print_fn)(FILE *f, const void *what, bool markdown);

/* The verdicts' colours: set when the text goes to a terminal. */
static const char *(*verdict_color)(const char *word);

static void print_cmp(FILE *f, const void *c, bool md)
{
    tb_cmp_print(f, c, md, verdict_color);
}

static void print_history(FILE *f, const void *h, bool md)
{
    tb_history_print(f, h, md);
}

/* The text or Markdown form of what (print), or its JSON (doc, for fmt
 * 2), through emit.  0 or TB_EXIT_USAGE. */
static int emit_form(const char *output, int fmt, print_fn print,
                     const void *what, cJSON *doc)
{
    if (fmt == 2)
        return emit_json(output, doc);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) {
        fprintf(stderr, "tbench: out of memory\n");
        return TB_EXIT_USAGE;
    }
    print(m, what, fmt == 1);
    fclose(m);
    int rc = emit(output, buf, len);
    free(buf);
    return rc;
}

/* 0 text, 1 markdown, 2 json; -1 for anything else. */
static int text_format(const char *f)
{
    return f ? tb_word_index(TB_TEXT_FORMATS, f, strlen(f)) : 0;
}

int tb_cmd_compare(int argc, char **argv)
{
    cli c = {.cmd = "compare", .threshold = NAN, .alpha = NAN,
             .instr_threshold = NAN, .cache_threshold = NAN,
             .max_mde = NAN};
    int rc = parse_cli(argc, argv, COMPARE_TAKES, &c);
    tb_resfile **files = NULL;
    int nf = c.n_old + c.n_new;
    if (rc) {
        free(c.files);
        return rc < 0 ? TB_EXIT_OKAY : rc;
    }
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    if (!isnan(c.threshold))
        o.threshold = c.threshold;
    if (!isnan(c.alpha))
        o.alpha = c.alpha;
    if (!isnan(c.instr_threshold))
        o.instr_threshold = c.instr_threshold;
    if (!isnan(c.cache_threshold))
        o.cache_threshold = c.cache_threshold;
    if (!isnan(c.max_mde))
        o.max_mde = c.max_mde;
    o.allow_missing = c.allow_missing;
    int fmt = text_format(c.format);
    if (fmt < 0)
        rc = tb_usage_error("compare: --format: expected text, md or json, "
                            "got '%s'", c.format);
    else if (c.fail_on && tb_cmp_parse_fail_on(c.fail_on, &o.fail_on))
        rc = tb_usage_error("compare: --fail-on: expected a comma-separated "
                            "list of time, counters, status (or none), got "
                            "'%s'", c.fail_on);
    else if (!c.vs_seen && nf != 2)
        rc = tb_usage_error("compare: expected OLD NEW (two result files) or "
                            "OLD... --vs NEW...%s", "");
    else if (c.vs_seen && (!c.n_old || !c.n_new))
        rc = tb_usage_error("compare: --vs needs at least one file on each "
                            "side%s", "");
    if (rc) {
        free(c.files);
        return rc;
    }
    if (!c.vs_seen) {
        c.n_old = 1;
        c.n_new = 1;
    }
    files = calloc((size_t)nf, sizeof *files);
    if (!files || load_all(c.files, nf, files)) {
        if (!files)
            fprintf(stderr, "tbench: out of memory\n");
        free(files);
        free(c.files);
        return TB_EXIT_USAGE;
    }
    tb_cmp cmp;
    char err[1024];
    if (c.backends) { /* --backends OLD,NEW: two backends' cases as one */
        const char *comma = strchr(c.backends, ',');
        char old_be[64];
        if (!comma || comma == c.backends || !comma[1] ||
            strchr(comma + 1, ',') ||
            (size_t)(comma - c.backends) >= sizeof old_be) {
            rc = tb_usage_error("compare: --backends: expected OLD,NEW "
                                "(two backend names), got '%s'",
                                c.backends);
            goto out;
        }
        snprintf(old_be, sizeof old_be, "%.*s",
                 (int)(comma - c.backends), c.backends);
        for (int i = 0; i < nf; i++)
            if (tb_resfile_pick_backend(files[i],
                                        i < c.n_old ? old_be : comma + 1,
                                        err, sizeof err)) {
                fprintf(stderr, "tbench: %s\n", err);
                rc = TB_EXIT_USAGE;
                goto out;
            }
    }
    if (tb_compare(files, c.n_old, files + c.n_old, c.n_new, &o, &cmp, err,
                   sizeof err)) {
        fprintf(stderr, "tbench: %s\n", err);
        rc = TB_EXIT_USAGE;
        goto out;
    }
    cJSON *doc = fmt == 2 ? tb_cmp_json(&cmp) : NULL;
    if (!c.output && tb_term_color(STDOUT_FILENO))
        verdict_color = tb_term_status_color;
    rc = emit_form(c.output, fmt, print_cmp, &cmp, doc);
    cJSON_Delete(doc);
    if (!rc && cmp.failed)
        rc = TB_EXIT_CASES;
    tb_cmp_free(&cmp);
out:
    for (int i = 0; i < nf; i++)
        tb_resfile_free(files[i]);
    free(files);
    free(c.files);
    return rc;
}

int tb_cmd_history(int argc, char **argv)
{
    cli c = {.cmd = "history", .threshold = NAN, .penalty = NAN,
             .alpha = NAN};
    int rc = parse_cli(argc, argv, HISTORY_TAKES, &c);
    int nf = c.n_old;
    if (rc) {
        free(c.files);
        return rc < 0 ? TB_EXIT_OKAY : rc;
    }
    tb_hist_opts o;
    tb_hist_opts_default(&o);
    if (!isnan(c.threshold))
        o.threshold = c.threshold;
    if (!isnan(c.penalty))
        o.penalty = c.penalty;
    if (!isnan(c.alpha))
        o.alpha = c.alpha;
    int fmt = text_format(c.format);
    if (fmt < 0)
        rc = tb_usage_error("history: --format: expected text, md or json, "
                            "got '%s'", c.format);
    else if (nf < 1)
        rc = tb_usage_error("history: no result file given (FILE..., oldest "
                            "first)%s", "");
    if (rc) {
        free(c.files);
        return rc;
    }
    tb_resfile **files = calloc((size_t)nf, sizeof *files);
    if (!files || load_all(c.files, nf, files)) {
        if (!files)
            fprintf(stderr, "tbench: out of memory\n");
        free(files);
        free(c.files);
        return TB_EXIT_USAGE;
    }
    tb_history h;
    char err[1024];
    if (tb_history_build(files, nf, &o, &h, err, sizeof err)) {
        fprintf(stderr, "tbench: %s\n", err);
        rc = TB_EXIT_USAGE;
        goto out;
    }
    cJSON *doc = fmt == 2 ? tb_history_json(&h) : NULL;
    rc = emit_form(c.output, fmt, print_history, &h, doc);
    cJSON_Delete(doc);
    tb_history_free(&h);
out:
    for (int i = 0; i < nf; i++)
        tb_resfile_free(files[i]);
    free(files);
    free(c.files);
    return rc;
}

int tb_cmd_export(int argc, char **argv)
{
    cli c = {.cmd = "export"};
    int rc = parse_cli(argc, argv, EXPORT_TAKES, &c);
    if (rc) {
        free(c.files);
        return rc < 0 ? TB_EXIT_OKAY : rc;
    }
    tb_export_format fmt = TB_EXPORT_GBENCH;
    if (c.n_old != 1)
        rc = tb_usage_error("export: expected one result file, got %s",
                            c.n_old ? "several" : "none");
    else if (!c.format)
        rc = tb_usage_error("export: --format is required (gbench, bmf or "
                            "gab)%s", "");
    else if (tb_export_parse_format(c.format, &fmt))
        rc = tb_usage_error("export: --format: expected gbench, bmf or gab, "
                            "got '%s'", c.format);
    if (rc) {
        free(c.files);
        return rc;
    }
    tb_resfile *f;
    char err[1024];
    if (tb_resfile_load(c.files[0], &f, err, sizeof err)) {
        fprintf(stderr, "tbench: %s\n", err);
        free(c.files);
        return TB_EXIT_USAGE;
    }
    cJSON *doc = tb_export(f, fmt);
    /* bmf and gab hold measured values only, gbench an entry per case
     * (errors too); an empty upload would read as a run that
     * measured nothing, not as an error */
    int entries = fmt == TB_EXPORT_GBENCH ? f->n : cJSON_GetArraySize(doc);
    if (doc && entries == 0) {
        fprintf(stderr, "tbench: export: %s: no case%s, so nothing to "
                "export as %s (the file has %d case%s)\n", c.files[0],
                fmt == TB_EXPORT_GBENCH ? "" : " with status ok",
                c.format, f->n, f->n == 1 ? "" : "s");
        cJSON_Delete(doc);
        tb_resfile_free(f);
        free(c.files);
        return TB_EXIT_USAGE;
    }
    rc = emit_json(c.output, doc);
    cJSON_Delete(doc);
    tb_resfile_free(f);
    free(c.files);
    return rc;
}
