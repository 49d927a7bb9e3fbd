/* tbench plot and tbench report: charts and the Markdown report from
 * result files (src/report/plot.h, src/report/report.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/fileio.h"
#include "../base/outdir.h"
#include "../base/strbuf.h"
#include "../report/html.h"
#include "../report/plot.h"
#include "../report/report.h"
#include "commands.h"

#define MAX_WITH 16

/* Options both commands share. */
typedef struct {
    const char *out;
    const char *baseline;
    const char *with[MAX_WITH];
    int n_with;
    const char *charts;     /* report: chart folder relative to the .md */
    bool no_charts;         /* report */
    const char *generated_by;
    bool html;              /* report: the web page (html.h) */
    const char *append_md;  /* report: Markdown appended to the text */
    bool png, svg, render;  /* plot */
    int n_noisy;
    double threshold;       /* fraction */
} opts;

enum { O_FORMAT = 256, O_NOISY, O_THRESHOLD, O_NO_RENDER, O_CHARTS,
       O_NO_CHARTS, O_GENERATED_BY, O_HTML, O_APPEND_MD };

/* Parse "png", "svg" or "png,svg" into o.  0 or -1. */
static int parse_format(const char *s, opts *o)
{
    o->png = o->svg = false;
    char buf[64];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
         t = strtok_r(NULL, ",", &save)) {
        int i = tb_word_index(TB_CHART_FORMATS, t, strlen(t));
        if (i < 0)
            return -1;
        *(i == 0 ? &o->png : &o->svg) = true;
    }
    return o->png || o->svg ? 0 : -1;
}

/* A number in [lo, hi] from s, or -1e300 when it is not one. */
static double parse_num(const char *s, double lo, double hi)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= lo && v <= hi))
        return -1e300;
    return v;
}

/* The options of plot and report: one table; each command refuses the
 * other's own (plot_only, report_only). */
static const struct option longopts[] = {
    {"output", required_argument, NULL, 'o'},
    {"baseline", required_argument, NULL, 'b'},
    {"with", required_argument, NULL, 'w'},
    {"format", required_argument, NULL, O_FORMAT},
    {"noisy", required_argument, NULL, O_NOISY},
    {"threshold", required_argument, NULL, O_THRESHOLD},
    {"no-render", no_argument, NULL, O_NO_RENDER},
    {"charts", required_argument, NULL, O_CHARTS},
    {"no-charts", no_argument, NULL, O_NO_CHARTS},
    {"generated-by", required_argument, NULL, O_GENERATED_BY},
    {"html", no_argument, NULL, O_HTML},
    {"append-md", required_argument, NULL, O_APPEND_MD},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static bool plot_only(int c) { return c == O_FORMAT || c == O_NO_RENDER; }
static bool report_only(int c)
{
    return c == O_CHARTS || c == O_NO_CHARTS || c == O_GENERATED_BY ||
           c == O_HTML || c == O_APPEND_MD;
}

/* Does cmd (plot or report) take the option named name? */
static bool takes(const char *cmd, const char *name)
{
    bool report = !strcmp(cmd, "report");
    for (const struct option *o = longopts; o->name; o++)
        if (!strcmp(o->name, name))
            return report ? !plot_only(o->val) : !report_only(o->val);
    return false;
}
const tb_cmd_opts tb_opts_plot = {longopts, ":o:b:w:h", takes};
const tb_cmd_opts tb_opts_report = {longopts, ":o:b:w:h", takes};

/* Parse argv (argv[0] is the command).  Returns -1 when parsing went
 * fine and the command should go on, else the exit status. */
static int parse(int argc, char **argv, bool report, opts *o)
{
    const char *cmd = argv[0];
    memset(o, 0, sizeof *o);
    o->png = true;
    o->svg = !report;
    o->render = true;
    o->n_noisy = 8;
    tb_cmp_opts dflt; /* the threshold is compare's --threshold */
    tb_cmp_opts_default(&dflt);
    o->threshold = dflt.threshold;
    int c;
    double v;
    bool first = true;
    while ((c = tb_opt_next(argc, argv, &tb_opts_report, &first)) != -1) {
        /* options that belong to the other command are errors */
        if ((report && plot_only(c)) || (!report && report_only(c))) {
            fprintf(stderr, "tbench: %s: option '%s' is not an option of "
                            "this command\nTry 'tbench help %s'.\n",
                    cmd, argv[optind - 1], cmd);
            return TB_EXIT_USAGE;
        }
        switch (c) {
        case 'o': o->out = optarg; break;
        case 'b': o->baseline = optarg; break;
        case 'w':
            if (o->n_with == MAX_WITH)
                return tb_usage_error("--with: at most 16 files (got '%s')",
                                      optarg);
            o->with[o->n_with++] = optarg;
            break;
        case O_FORMAT:
            if (parse_format(optarg, o))
                return tb_usage_error("--format: expected png, svg or "
                                      "png,svg, got '%s'", optarg);
            break;
        case O_NOISY:
            v = parse_num(optarg, 1, 100);
            if (v < 0 || v != (int)v)
                return tb_usage_error("--noisy: expected an integer 1-100, "
                                      "got '%s'", optarg);
            o->n_noisy = (int)v;
            break;
        case O_THRESHOLD: {
            /* as compare's: a percentage, optionally ending in '%' */
            char t[64];
            snprintf(t, sizeof t, "%s", optarg);
            size_t l = strlen(t);
            if (l && t[l - 1] == '%')
                t[l - 1] = '\0';
            v = parse_num(t, 0, 1000);
            if (v < 0)
                return tb_usage_error("--threshold: expected a percentage "
                                      "0-1000, got '%s'", optarg);
            o->threshold = v / 100;
            break;
        }
        case O_NO_RENDER: o->render = false; break;
        case O_CHARTS: o->charts = optarg; break;
        case O_NO_CHARTS: o->no_charts = true; break;
        case O_GENERATED_BY: o->generated_by = optarg; break;
        case O_HTML: o->html = true; break;
        case O_APPEND_MD: o->append_md = optarg; break;
        case 'h': tb_cmd_usage(stdout, cmd); return TB_EXIT_OKAY;
        default: return tb_opt_error(cmd, c, argv, longopts);
        }
    }
    if (!o->out) {
        fprintf(stderr, "tbench: %s: -o %s is required\nTry 'tbench "
                        "--help'.\n", cmd, report ? "FILE" : "DIR");
        return TB_EXIT_USAGE;
    }
    if (optind >= argc) {
        fprintf(stderr, "tbench: %s: no result file given\nTry 'tbench "
                        "--help'.\n", cmd);
        return TB_EXIT_USAGE;
    }
    if (report && argc - optind > 1) {
        fprintf(stderr, "tbench: report: one result file expected, got %d "
                        "(use --with for side-by-side files)\nTry 'tbench "
                        "--help'.\n", argc - optind);
        return TB_EXIT_USAGE;
    }
    if (o->html && tb_report_html_missing()) {
        fprintf(stderr, "tbench: report: --html: %s\n",
                tb_report_html_missing());
        return TB_EXIT_USAGE;
    }
    if (o->html && o->charts)
        return tb_usage_error("--charts: '%s': the --html page holds its "
                              "charts inline (no chart folder)", o->charts);
    if (o->charts && (o->charts[0] == '/' || strstr(o->charts, ".."))) {
        return tb_usage_error("--charts: '%s' must be a folder inside the "
                              "report's folder (relative, no '..')",
                              o->charts);
    }
    return -1;
}

/* Load the WITH and BASELINE files of o into s and, with a baseline,
 * compare it with the MAIN file into *cmp as `tbench compare BASELINE
 * MAIN --threshold` does (cmp->n stays 0 without one).  Every message is
 * the loader's or compare's "PATH: what", as those commands print it.
 * 0 or the exit status. */
static int load_extra(tb_rset *s, const opts *o, tb_cmp *cmp)
{
    char err[1024];
    memset(cmp, 0, sizeof *cmp);
    for (int i = 0; i < o->n_with; i++)
        if (tb_rset_load(s, o->with[i], TB_ROLE_WITH, err, sizeof err)) {
            fprintf(stderr, "tbench: %s\n", err);
            return TB_EXIT_USAGE;
        }
    if (!o->baseline)
        return 0;
    if (tb_rset_load(s, o->baseline, TB_ROLE_BASELINE, err, sizeof err) ||
        tb_rset_compare(s, o->threshold, cmp, err, sizeof err)) {
        fprintf(stderr, "tbench: %s\n", err);
        return TB_EXIT_USAGE;
    }
    return 0;
}

/* "name1,name2|backend1,backend2": what makes files one matrix for the
 * history charts (the config names and the set of backends). */
static void matrix_sig(const tb_rset *s, int d, char *buf, size_t len)
{
    size_t u = 0;
    const tb_resfile *f = s->docs[d].file;
    buf[0] = '\0';
    for (int i = 0; i < f->n_config; i++)
        if (f->config[i].name && u < len)
            u += (size_t)snprintf(buf + u, len - u, "%s,",
                                  f->config[i].name);
    if (u < len)
        u += (size_t)snprintf(buf + u, len - u, "|");
    /* backends in sorted order, each once */
    const char *prev = "";
    for (;;) {
        const char *next = NULL;
        for (int i = 0; i < s->n; i++) {
            const char *b = s->cases[i].backend;
            if (s->cases[i].doc == d && strcmp(b, prev) > 0 &&
                (!next || strcmp(b, next) < 0))
                next = b;
        }
        if (!next || u >= len)
            break;
        u += (size_t)snprintf(buf + u, len - u, "%s,", next);
        prev = next;
    }
}

static void set_role(tb_rset *s, int d, tb_role r)
{
    s->docs[d].role = r;
    for (int i = 0; i < s->n; i++)
        if (s->cases[i].doc == d)
            s->cases[i].role = r;
}

static int count_ok(const tb_rset *s)
{
    int n = 0;
    for (int i = 0; i < s->n; i++)
        n += s->cases[i].ok;
    return n;
}

/* Tell the user what rendering did; returns the exit status. */
static int render_note(const tb_chart_list *l, const char *dir)
{
    if (l->n == 0)
        return TB_EXIT_OKAY;
    if (l->gnuplot_missing) {
        fprintf(stderr,
                "tbench: note: gnuplot not found (install gnuplot-nox, or "
                "name it in TBENCH_GNUPLOT): no image was made; the %d "
                "scripts and their data are in %s; render them later with: "
                "cd %s && for f in *.gp; do gnuplot \"$f\"; done\n",
                l->n, dir, dir);
        return TB_EXIT_OKAY;
    }
    if (l->n_failed) {
        fprintf(stderr, "tbench: gnuplot could not render %d of %d "
                        "chart(s); its messages are in %s/gnuplot.log\n",
                l->n_failed, l->n, dir);
        return TB_EXIT_CASES;
    }
    return TB_EXIT_OKAY;
}

int tb_cmd_plot(int argc, char **argv)
{
    opts o;
    int rc = parse(argc, argv, false, &o);
    if (rc >= 0)
        return rc;
    if (tb_out_check("plot", o.out, true))
        return TB_EXIT_USAGE;
    tb_rset *s = calloc(1, sizeof *s);
    tb_chart_list charts = {0};
    tb_cmp cmp = {0};
    char err[1024];
    tb_outdir od = {.tmp = ""};
    if (!s) {
        fprintf(stderr, "tbench: out of memory\n");
        return TB_EXIT_USAGE;
    }
    int nfiles = argc - optind;
    char **files = argv + optind;
    rc = TB_EXIT_OKAY;
    for (int i = 0; i < nfiles; i++)
        if (tb_rset_load(s, files[i], TB_ROLE_MAIN, err, sizeof err)) {
            fprintf(stderr, "tbench: %s\n", err);
            rc = TB_EXIT_USAGE;
            goto out;
        }
    /* several files of one matrix: a history, the last one the newest */
    if (nfiles >= 2) {
        char a[1024], b[1024];
        bool one = true;
        matrix_sig(s, 0, a, sizeof a);
        for (int d = 1; d < nfiles && one; d++) {
            matrix_sig(s, d, b, sizeof b);
            one = !strcmp(a, b);
        }
        if (one)
            for (int d = 0; d < nfiles - 1; d++)
                set_role(s, d, TB_ROLE_HISTORY);
    }
    rc = load_extra(s, &o, &cmp);
    if (rc)
        goto out;
    /* charts go to DIR.tmp-XXXXXX, renamed to DIR at the end: a failed
     * write (a full disk) leaves no half-written DIR */
    if (tb_outdir_begin(&od, o.out, err, sizeof err)) {
        fprintf(stderr, "tbench: plot: -o: %s\n", err);
        rc = TB_EXIT_CASES;
        goto out;
    }
    tb_plot_opts po = {od.tmp, o.png, o.svg, o.render, o.n_noisy,
                       o.baseline ? &cmp : NULL};
    if (tb_plot_write(s, &po, &charts, err, sizeof err)) {
        /* a message that names the temporary folder names DIR */
        size_t tl = strlen(od.tmp);
        if (!strncmp(err, od.tmp, tl))
            fprintf(stderr, "tbench: plot: %s%s\n", od.target, err + tl);
        else
            fprintf(stderr, "tbench: plot: %s\n", err);
        rc = TB_EXIT_CASES;
        goto out;
    }
    if (tb_outdir_commit(&od, err, sizeof err)) {
        fprintf(stderr, "tbench: plot: -o: %s\n", err);
        rc = TB_EXIT_CASES;
        goto out;
    }
    if (charts.n == 0)
        fprintf(stderr, "tbench: note: no case in these files has "
                        "measurements (status ok): nothing to draw\n");
    else
        printf("plot: %d chart%s in %s%s\n", charts.n,
               charts.n == 1 ? "" : "s", o.out,
               charts.gnuplot_missing || !o.render
                   ? " (scripts and data only)" : "");
    rc = render_note(&charts, o.out);
out:
    tb_outdir_discard(&od); /* nothing left after a commit */
    tb_cmp_free(&cmp);
    tb_chart_list_free(&charts);
    tb_rset_free(s);
    free(s);
    return rc;
}

/* argv as one shell-quoted line, after "tbench ". */
static void command_line(int argc, char **argv, char *buf, size_t len)
{
    size_t u = (size_t)snprintf(buf, len, "tbench");
    for (int i = 0; i < argc && u < len; i++) {
        const char *a = argv[i];
        bool plain = a[0] != '\0';
        for (const char *p = a; *p && plain; p++)
            plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"
                           "WXYZ0123456789_./=:,+-@%", *p) != NULL;
        if (plain) {
            u += (size_t)snprintf(buf + u, len - u, " %s", a);
            continue;
        }
        u += (size_t)snprintf(buf + u, len - u, " '");
        for (const char *p = a; *p && u < len; p++)
            u += (size_t)snprintf(buf + u, len - u, *p == '\'' ? "'\\''"
                                                                : "%c", *p);
        if (u < len)
            u += (size_t)snprintf(buf + u, len - u, "'");
    }
}

/* The Markdown of FILE (--append-md) added to *md (heap, replaced).
 * 0 or the exit status after one line. */
static int append_md(char **md, const char *path)
{
    char err[1024], *extra = NULL;
    size_t n = 0;
    if (tb_read_file(path, &extra, &n, err, sizeof err)) {
        fprintf(stderr, "tbench: report: --append-md: %s\n", err);
        return TB_EXIT_USAGE;
    }
    size_t m = strlen(*md);
    char *both = realloc(*md, m + 2 + n + 1);
    if (!both) {
        free(extra);
        fprintf(stderr, "tbench: report: out of memory\n");
        return TB_EXIT_CASES;
    }
    memcpy(both + m, "\n\n", 2);
    memcpy(both + m + 2, extra, n + 1);
    free(extra);
    *md = both;
    return 0;
}

/* What rendering did for the page, whose charts live in a folder that
 * is removed: the exit status. */
static int html_note(const tb_chart_list *l)
{
    if (l->gnuplot_missing)
        fprintf(stderr, "tbench: note: gnuplot not found (install "
                        "gnuplot-nox, or name it in TBENCH_GNUPLOT): the "
                        "page has no charts\n");
    else if (l->n_failed) {
        fprintf(stderr, "tbench: gnuplot could not render %d of %d "
                        "chart(s); the page leaves them out\n",
                l->n_failed, l->n);
        return TB_EXIT_CASES;
    }
    return TB_EXIT_OKAY;
}

/* Write md (with its charts' SVG from chart_tmp) as the page o->out. */
static int write_html(const tb_rset *s, const opts *o, const char *md,
                      const tb_chart_list *charts, const char *chart_tmp,
                      const char *rel)
{
    char err[1024], *html = NULL;
    tb_html_opts ho = {rel, chart_tmp[0] ? chart_tmp : NULL,
                       o->no_charts ? NULL : charts};
    int inline_n = 0;
    int rc = tb_report_html(s, md, &ho, &html, &inline_n, err, sizeof err);
    if (rc) {
        fprintf(stderr, "tbench: report: --html: %s\n",
                rc == TB_ENOMEM ? "out of memory" : err);
        return TB_EXIT_CASES;
    }
    if (tb_write_atomic(o->out, html, strlen(html), err, sizeof err)) {
        free(html);
        fprintf(stderr, "tbench: -o: %s\n", err);
        return TB_EXIT_USAGE;
    }
    free(html);
    printf("report: %s (%d chart%s inline)\n", o->out, inline_n,
           inline_n == 1 ? "" : "s");
    return html_note(charts);
}

int tb_cmd_report(int argc, char **argv)
{
    opts o;
    char cmd[4096], dir[4096], chart_dir[8200];
    /* before getopt, which reorders argv */
    command_line(argc, argv, cmd, sizeof cmd);
    int rc = parse(argc, argv, true, &o);
    if (rc >= 0)
        return rc;
    tb_rset *s = calloc(1, sizeof *s);
    tb_chart_list charts = {0};
    tb_cmp cmp = {0};
    char err[1024], *md = NULL;
    tb_outdir od = {.tmp = ""};
    if (!s) {
        fprintf(stderr, "tbench: out of memory\n");
        return TB_EXIT_USAGE;
    }
    rc = TB_EXIT_OKAY;
    if (tb_rset_load(s, argv[optind], TB_ROLE_MAIN, err, sizeof err)) {
        fprintf(stderr, "tbench: %s\n", err);
        rc = TB_EXIT_USAGE;
        goto out;
    }
    rc = load_extra(s, &o, &cmp);
    if (rc)
        goto out;

    /* the report's folder, created if missing */
    snprintf(dir, sizeof dir, "%s", o.out);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    if (tb_mkdir_p(dir, err, sizeof err)) {
        fprintf(stderr, "tbench: -o: %s\n", err);
        rc = TB_EXIT_USAGE;
        goto out;
    }
    /* the page's SVG charts go to a private OUT.charts.tmp-XXXXXX
     * folder that is read into the page and removed, never committed */
    const char *rel = o.charts ? o.charts : o.html ? "charts" : "perf";
    if (o.html)
        snprintf(chart_dir, sizeof chart_dir, "%s.charts", o.out);
    else
        snprintf(chart_dir, sizeof chart_dir, "%s/%s", dir, rel);
    /* charts go to a private CHARTS.tmp-XXXXXX folder, moved into
     * CHARTS after the .md is written: nothing else can plant a file or
     * symlink where they are written, and a failed write (a full disk)
     * leaves the report and its charts as they were */
    if (!o.no_charts && count_ok(s) > 0) {
        if (tb_outdir_begin(&od, chart_dir, err, sizeof err)) {
            fprintf(stderr, "tbench: report: charts: %s\n", err);
            rc = TB_EXIT_CASES;
            goto out;
        }
        tb_plot_opts po = {od.tmp, !o.html, o.html, true, o.n_noisy,
                           o.baseline ? &cmp : NULL};
        if (tb_plot_write(s, &po, &charts, err, sizeof err)) {
            /* a message that names the temporary folder names CHARTS */
            size_t tl = strlen(od.tmp);
            if (!strncmp(err, od.tmp, tl))
                fprintf(stderr, "tbench: report: charts: %s%s\n",
                        od.target, err + tl);
            else
                fprintf(stderr, "tbench: report: charts: %s\n", err);
            rc = TB_EXIT_CASES;
            goto out;
        }
    }
    tb_report_opts ro = {cmd, o.generated_by, rel,
                         o.no_charts ? NULL : &charts,
                         o.baseline ? &cmp : NULL, 3, o.n_noisy};
    if (tb_report_markdown(s, &ro, &md)) {
        fprintf(stderr, "tbench: report: out of memory\n");
        rc = TB_EXIT_CASES;
        goto out;
    }
    if (o.append_md && (rc = append_md(&md, o.append_md)) != 0)
        goto out;
    if (o.html) {
        rc = write_html(s, &o, md, &charts, od.tmp, rel);
        goto out;
    }
    if (tb_write_atomic(o.out, md, strlen(md), err, sizeof err)) {
        fprintf(stderr, "tbench: -o: %s\n", err);
        rc = TB_EXIT_USAGE;
        goto out;
    }
    if (od.tmp[0] && tb_outdir_commit(&od, err, sizeof err)) {
        fprintf(stderr, "tbench: report: charts: %s\n", err);
        rc = TB_EXIT_CASES;
        goto out;
    }
    int rendered = 0;
    for (int i = 0; i < charts.n; i++)
        rendered += charts.v[i].rendered;
    printf("report: %s", o.out);
    if (rendered)
        printf(" (%d chart%s in %s)", rendered, rendered == 1 ? "" : "s",
               chart_dir);
    printf("\n");
    rc = render_note(&charts, chart_dir);
out:
    tb_outdir_discard(&od); /* nothing left after a commit */
    tb_cmp_free(&cmp);
    free(md);
    tb_chart_list_free(&charts);
    tb_rset_free(s);
    free(s);
    return rc;
}
