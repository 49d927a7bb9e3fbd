/* The report's sections on other runs and what did not run: the
 * comparison with a baseline, the side-by-side files (NumPy, PyTorch),
 * the noisiest cases and the cases that did not run (report_impl.h). */
#include "report_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- noise ---------------------------------------------------------------- */

void tb_rpt_noise(const tb_rpt *x)
{
    const tb_rset *s = x->s;
    int *idx;
    int n = tb_rset_noisiest(s, x->o->n_noisy, &idx);
    if (n <= 0)
        return;
    sb(x->b, "## Noisiest cases\n\n"
             "The %d case%s with the largest spread of samples (MAD / "
             "median). Outliers are Tukey's (beyond 1.5 IQR; severe beyond "
             "3 IQR).\n\n"
             "| Case | Median | MAD / median | 95%% CI width | p5 – p95 | "
             "Outliers low / high (severe) | Stopped by |\n"
             "|---|---|---|---|---|---|---|\n",
       n, n == 1 ? "" : "s");
    for (int k = 0; k < n; k++) {
        const tb_rcase *c = &s->cases[idx[k]];
        const tb_res_fields *o = &c->rc->f;
        char m[32], p5[32], p95[32];
        sb(x->b, "| `%s` | %s | %.1f%% | %.1f%% | %s – %s | %.0f / %.0f "
                 "(%.0f / %.0f) | %s |\n",
           c->id, tb_report_fmt_time(c->median, c->median, m, sizeof m),
           100 * c->mad / c->median, 100 * c->ci_rel,
           tb_report_fmt_time(c->p5, c->median, p5, sizeof p5),
           tb_report_fmt_time(c->p95, c->median, p95, sizeof p95),
           o->outliers_low_mild + o->outliers_low_severe,
           o->outliers_high_mild + o->outliers_high_severe,
           o->outliers_low_severe, o->outliers_high_severe,
           c->stop_reason ? c->stop_reason : "?");
    }
    sb(x->b, "\n");
    free(idx);
    tb_rpt_chart_link(x, tb_rpt_chart(x, TB_CHART_NOISE, NULL));
}

/* ---- cases that did not run ---------------------------------------------- */

/* The meaning of the other statuses that cases of mask have. */
static void not_run_more(const tb_rpt *x, unsigned mask)
{
    static const struct {
        tb_res_status status;
        const char *meaning;
    } more[] = {
        {TB_RES_STATUS_ERROR, "the kernel or the backend failed"},
        {TB_RES_STATUS_CRASHED, "the worker process running the case died "
                                "(the message names the signal and the "
                                "phase: check, warmup or sampling)"},
        {TB_RES_STATUS_TIMEOUT, "the case passed its time limit and its "
                                "worker was killed"},
        {TB_RES_STATUS_SKIPPED, "the case was not run"},
    };
    for (size_t k = 0; k < sizeof more / sizeof more[0]; k++) {
        bool have = false;
        for (int i = 0; i < x->s->n && !have; i++)
            have = tb_rpt_in(&x->s->cases[i], mask) &&
                   x->s->cases[i].rc->st == more[k].status;
        if (have)
            sb(x->b, "; `%s`: %s", tb_res_status_name(more[k].status),
               more[k].meaning);
    }
}

/* Is d a case of mask that did not run, in c's group: the same
 * document, backend variant, status and message? */
static bool same_group(const tb_rcase *d, const tb_rcase *c, unsigned mask)
{
    return !d->ok && tb_rpt_in(d, mask) && d->doc == c->doc &&
           !strcmp(d->variant, c->variant) && d->rc->st == c->rc->st &&
           !strcmp(d->message ? d->message : "",
                   c->message ? c->message : "");
}

void tb_rpt_not_run(const tb_rpt *x)
{
    const tb_rset *s = x->s;
    unsigned mask = M_MAIN | M_WITH;
    bool header = false;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (c->ok || !tb_rpt_in(c, mask))
            continue;
        /* group by document, backend variant, status and message */
        bool dup = false;
        for (int k = 0; k < i && !dup; k++)
            dup = same_group(&s->cases[k], c, mask);
        if (dup)
            continue;
        int count = 0;
        for (int k = i; k < s->n; k++)
            count += same_group(&s->cases[k], c, mask);
        if (!header) {
            sb(x->b, "## Cases that did not run\n\n"
                     "Not timed, so absent from every table above: "
                     "`failed-check` failed its correctness check against "
                     "the reference; `unsupported` means the backend has no "
                     "kernel for it; `unavailable` means the backend cannot "
                     "run on this machine");
            not_run_more(x, mask);
            sb(x->b, ".\n\n"
                     "| Backend | Status | Cases | First case | Message |\n"
                     "|---|---|---|---|---|\n");
            header = true;
        }
        char m[600];
        sb(x->b, "| %s | %s | %d | `%s` | %s |\n", c->variant, c->status,
           count, c->id, tb_md_cell(c->message ? c->message : "", m, sizeof m));
    }
    if (header)
        sb(x->b, "\n");
}

/* ---- baseline -------------------------------------------------------------- */

/* Is this compare verdict one that `tbench compare` fails on? */
static bool verdict_bad(const tb_cmp_case *k)
{
    return k->time == TB_TIME_REGRESSED || k->schg == TB_SCHG_FAILURE ||
           (k->time != TB_TIME_NA && k->time != TB_TIME_IMPROVED &&
            k->ctr_regressed) ||
           k->missing;
}

/* A side of a case in the baseline table: its median, or its status. */
static const char *side_text(const char *status, double median,
                             double scale, char *buf, size_t len)
{
    if (tb_res_status_parse(status) != TB_RES_STATUS_OK)
        return status;
    return tb_report_fmt_time(median, scale, buf, len);
}

void tb_rpt_baseline(const tb_rpt *x)
{
    const tb_cmp *cmp = x->o->baseline;
    if (!cmp || x->base_doc < 0)
        return;
    tb_strbuf *b = x->b;
    tb_strbuf rows = {0};
    for (int i = 0; i < cmp->n; i++) {
        const tb_cmp_case *k = &cmp->cases[i];
        if (k->presence != TB_CMP_BOTH ||
            (k->time == TB_TIME_NA && k->schg == TB_SCHG_SAME))
            continue; /* in one file only, or not run in either */
        const char *v = tb_cmp_case_verdict(k);
        const char *em = verdict_bad(k) ? "**" : "";
        char m1[32], m2[32];
        if (k->time == TB_TIME_NA) {
            const tb_rescase *o = tb_resfile_find(cmp->old_files[0], k->id);
            const tb_rescase *c = tb_resfile_find(cmp->new_files[0], k->id);
            sb(&rows, "| `%s` | %s | %s | | | | | %s%s%s |\n", k->id,
               side_text(o->status, o->median_ns, o->median_ns, m1,
                         sizeof m1),
               side_text(c->status, c->median_ns, c->median_ns, m2,
                         sizeof m2),
               em, v, em);
            continue;
        }
        char ch[32], l[32], h[32], fl[32], p[32];
        if (k->p < 0.001)
            snprintf(p, sizeof p, "%.0e", k->p);
        else
            snprintf(p, sizeof p, "%.3f", k->p);
        if (k->floor < 10)
            snprintf(fl, sizeof fl, "%.1f%%", 100 * k->floor);
        else
            snprintf(fl, sizeof fl, ">999%%");
        sb(&rows, "| `%s` | %s | %s | %s | %s … %s | %s | %s | %s%s%s |\n",
           k->id,
           tb_report_fmt_time(k->old_median, k->old_median, m1, sizeof m1),
           tb_report_fmt_time(k->new_median, k->old_median, m2, sizeof m2),
           tb_md_pct(k->change, ch, sizeof ch),
           tb_md_pct(k->ci_lo, l, sizeof l),
           tb_md_pct(k->ci_hi, h, sizeof h), p, fl, em, v, em);
    }
    const char *commit = cmp->old_files[0]->git_commit;
    char t[32];
    snprintf(t, sizeof t, "%g", 100 * cmp->opts.threshold);
    sb(b, "## Comparison with the baseline\n\n"
          "Baseline: `%s`%s%s%s. The verdicts are those of `tbench compare "
          "%s %s --threshold %s` (docs/FORMAT.md, \"compare\"): change = "
          "current median / baseline median - 1, with a 95%% bootstrap CI "
          "of that ratio; p is a two-sided Mann-Whitney test on the raw "
          "samples; the floor is the largest of the threshold (%s%%) and "
          "the runs' own noise. Regressed (improved) only when the change "
          "is beyond the floor, p < %g and the CI lies above (below) 0; "
          "unchanged only when the whole CI lies within +-%s%% and the "
          "noise floor is no larger than the threshold (a change of %s%% "
          "would have been seen); inconclusive otherwise (the data cannot "
          "tell); "
          "`failure` when a case that ran no longer does or newly fails "
          "(`failed-check`, `error`, `crashed`, `timeout`); `counters` "
          "when an exact per-iteration counter grew.\n\n",
       cmp->old_files[0]->path, commit ? " (commit " : "",
       commit ? commit : "", commit ? ")" : "", cmp->old_files[0]->path,
       cmp->new_files[0]->path, t, t, cmp->opts.alpha, t, t);
    sb(b, "%d regressed, %d improved, %d unchanged, %d inconclusive, %d "
          "missing; %d status failure%s, "
          "%d counter regression%s; %d case%s only in the current run, %d "
          "only in the baseline.\n\n",
       cmp->n_regressed, cmp->n_improved, cmp->n_unchanged,
       cmp->n_inconclusive, cmp->n_missing, cmp->n_failures,
       cmp->n_failures == 1 ? "" : "s", cmp->n_ctr_regressed,
       cmp->n_ctr_regressed == 1 ? "" : "s", cmp->n_added,
       cmp->n_added == 1 ? "" : "s", cmp->n_removed);
    if (rows.n)
        sb(b, "| Case | Baseline | Current | Change | 95%% CI | p | Floor | "
              "Verdict |\n|---|---|---|---|---|---|---|---|\n%s\n",
           rows.p);
    free(rows.p);
    tb_rpt_chart_link(x, tb_rpt_chart(x, TB_CHART_CHANGE, NULL));
}

/* ---- side by side with NumPy / PyTorch ------------------------------------ */

#define MAX_COLS 16

typedef struct {
    char v[MAX_COLS][128];
    int n;
} columns;

/* The fastest ok case of doc d whose backend is lib with the axis
 * form=out, or NULL. */
static const tb_rcase *fastest_out(const tb_rset *s, int d, const char *lib)
{
    const tb_rcase *best = NULL;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (c->doc == d && c->ok && !strcmp(c->backend, lib) &&
            strstr(c->variant, "form=out") &&
            (!best || c->median < best->median))
            best = c;
    }
    return best;
}

/* The Python layer's per-call figures of WITH document d, each with its
 * CI; a 1-element figure whose CI lies above the fastest case of the
 * same library and form is said to be so (issue 27: a per-call cost
 * above a whole 1,000-element add can only mean two phases of the
 * machine). */
static void python_overhead(const tb_rpt *x, int d, const tb_resenv *e)
{
    tb_strbuf *b = x->b;
    const char *m = e->python_overhead_method;
    sb(b, "\nPer-call overhead of the Python layer, measured by the "
          "script%s%s%s; the library times below include it, which "
          "matters at small sizes:\n\n| Call | Median | 95%% CI |\n"
          "|---|---|---|\n",
       m ? " (" : "", m ? m : "", m ? ")" : "");
    for (int i = 0; i < e->n_python_overhead; i++) {
        const tb_res_figure *v = &e->python_overhead[i];
        char ms[32], lo[32], hi[32], name[128];
        snprintf(name, sizeof name, "%s", v->name);
        size_t nl = strlen(name);
        if (nl > 3 && !strcmp(name + nl - 3, "_ns"))
            name[nl - 3] = '\0';
        for (char *q = name; *q; q++)
            if (*q == '_')
                *q = ' ';
        tb_report_fmt_time(v->value, v->value, ms, sizeof ms);
        if (isnan(v->lo))
            sb(b, "| %s | %s | not recorded (an older script) |\n", name,
               ms);
        else
            sb(b, "| %s | %s | %s – %s |\n", name, ms,
               tb_report_fmt_time(v->lo, v->value, lo, sizeof lo),
               tb_report_fmt_time(v->hi, v->value, hi, sizeof hi));
    }
    for (int i = 0; i < e->n_python_overhead; i++) {
        const tb_res_figure *v = &e->python_overhead[i];
        const char *lib = !strncmp(v->name, "numpy_", 6)   ? "numpy"
                          : !strncmp(v->name, "torch_", 6) ? "torch"
                                                           : NULL;
        const tb_rcase *c = lib ? fastest_out(x->s, d, lib) : NULL;
        double low = isnan(v->lo) ? v->value : v->lo;
        if (!c || !(low > c->median))
            continue;
        char a[32], z[32];
        sb(b, "\nThe %s 1-element call (%s%s) took longer than the whole "
              "`%s` (%s), its fastest case of the same form: the two were "
              "timed in different phases of the machine, so neither sets a "
              "floor for the other.\n",
           lib, tb_report_fmt_time(v->value, v->value, a, sizeof a),
           isnan(v->lo) ? "" : ", CI above it", c->id,
           tb_report_fmt_time(c->median, c->median, z, sizeof z));
    }
}

/* Where each WITH file comes from: its path, its libraries and the
 * Python layer's own per-call overhead the script measured. */
static void with_sources(const tb_rpt *x)
{
    const tb_rset *s = x->s;
    tb_strbuf *b = x->b;
    for (int d = 0; d < s->n_docs; d++) {
        if (s->docs[d].role != TB_ROLE_WITH)
            continue;
        const tb_resenv *e = &s->docs[d].file->env;
        char t[600];
        sb(b, "From `%s`", s->docs[d].file->path);
        if (e->libraries && e->libraries->child) {
            const cJSON *l;
            bool first = true;
            sb(b, " (");
            cJSON_ArrayForEach(l, e->libraries)
            {
                if (cJSON_IsNull(l))
                    continue;
                sb(b, "%s%s %s", first ? "" : ", ", l->string,
                   tb_rpt_value_text(l, t, sizeof t));
                first = false;
            }
            sb(b, ")");
        }
        sb(b, ".\n");
        if (e->has_python_overhead)
            python_overhead(x, d, e);
        sb(b, "\n");
    }
}

/* A bullet per backend of the WITH files that was unavailable. */
static void with_unavailable(const tb_rpt *x)
{
    const tb_rset *s = x->s;
    bool bullets = false;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!tb_rpt_in(c, M_WITH) || c->rc->st != TB_RES_STATUS_UNAVAILABLE)
            continue;
        bool dup = false;
        for (int k = 0; k < i && !dup; k++)
            dup = tb_rpt_in(&s->cases[k], M_WITH) &&
                  s->cases[k].rc->st == TB_RES_STATUS_UNAVAILABLE &&
                  !strcmp(s->cases[k].backend, c->backend);
        if (!dup) {
            char m[600];
            sb(x->b, "- `%s` is unavailable: %s\n", c->backend,
               tb_md_cell(c->message ? c->message : "no reason given", m,
                          sizeof m));
            bullets = true;
        }
    }
    if (bullets)
        sb(x->b, "\n");
}

/* The fastest ok MAIN case of c's key with c's thread count (or no
 * threads axis), else the fastest of that key at any count, or NULL. */
static const tb_rcase *fastest_tbench(const tb_rset *s, const tb_rcase *c)
{
    const tb_rcase *tb = NULL, *any_tb = NULL;
    for (int k = 0; k < s->n; k++) {
        const tb_rcase *d = &s->cases[k];
        if (!d->ok || !tb_rpt_in(d, M_MAIN) || strcmp(d->key, c->key))
            continue;
        if (!any_tb || d->median < any_tb->median)
            any_tb = d;
        const char *dt = tb_rescase_axis(d->rc, "threads");
        if ((!dt || !strcmp(dt, tb_rcase_threads(c))) &&
            (!tb || d->median < tb->median))
            tb = d;
    }
    return tb ? tb : any_tb;
}

/* The row of WITH case c: the fastest tbench case, then each column's
 * library median at c's thread count, then the speedup over the fastest
 * library. */
static void with_row(const tb_rpt *x, const columns *cols, const tb_rcase *c)
{
    const tb_rset *s = x->s;
    tb_strbuf *b = x->b;
    const tb_rcase *tb = fastest_tbench(s, c);
    if (!tb)
        return;
    char m[32];
    const char *thr = tb_rcase_threads(c);
    sb(b, "| %s | %s | %s | %s | %s | %s |", c->opp, c->shapes, c->dtype,
       thr[0] ? thr : "-", tb->variant,
       tb_report_fmt_time(tb->median, tb->median, m, sizeof m));
    double best = NAN;
    for (int col = 0; col < cols->n; col++) {
        const tb_rcase *w = NULL;
        for (int k = 0; k < s->n && !w; k++) {
            const tb_rcase *d = &s->cases[k];
            char l[128];
            if (!d->ok || !tb_rpt_in(d, M_WITH) || strcmp(d->key, c->key) ||
                strcmp(tb_rcase_threads(d), thr))
                continue;
            tb_rpt_column_label(d, l, sizeof l);
            if (!strcmp(l, cols->v[col]))
                w = d;
        }
        if (w) {
            sb(b, " %s |",
               tb_report_fmt_time(w->median, tb->median, m, sizeof m));
            if (isnan(best) || w->median < best)
                best = w->median;
        } else {
            sb(b, " |");
        }
    }
    sb(b, " %sx |\n", tb_md_num(best / tb->median, m, sizeof m));
}

/* The table: a row per key and thread count of the WITH cases. */
static void with_table(const tb_rpt *x, const columns *cols)
{
    const tb_rset *s = x->s;
    tb_strbuf *b = x->b;
    sb(b, "Each row pairs a thread count of the library with the fastest "
          "tbench backend that ran with as many threads (or, when tbench "
          "did not run that count, the fastest at any count). \"tbench "
          "speedup\" = fastest library median / tbench median (above 1: "
          "tbench is faster).\n\n"
          "| Op | Shapes | Dtype | Threads | tbench | tbench median |");
    for (int k = 0; k < cols->n; k++)
        sb(b, " %s |", cols->v[k]);
    sb(b, " tbench speedup |\n|---|---|---|---|---|---|");
    for (int k = 0; k < cols->n; k++)
        sb(b, "---|");
    sb(b, "---|\n");
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !tb_rpt_in(c, M_WITH))
            continue;
        /* one row per (key, threads): first occurrence only */
        bool dup = false;
        for (int k = 0; k < i && !dup; k++)
            dup = s->cases[k].ok && tb_rpt_in(&s->cases[k], M_WITH) &&
                  !strcmp(s->cases[k].key, c->key) &&
                  !strcmp(tb_rcase_threads(&s->cases[k]),
                          tb_rcase_threads(c));
        if (!dup)
            with_row(x, cols, c);
    }
    sb(b, "\n");
}

void tb_rpt_with(const tb_rpt *x)
{
    const tb_rset *s = x->s;
    columns cols = {.n = 0};
    bool any = false;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!tb_rpt_in(c, M_WITH))
            continue;
        any = true;
        if (!c->ok)
            continue;
        char l[128];
        tb_rpt_column_label(c, l, sizeof l);
        int k = 0;
        while (k < cols.n && strcmp(cols.v[k], l))
            k++;
        if (k == cols.n && cols.n < MAX_COLS)
            snprintf(cols.v[cols.n++], sizeof cols.v[0], "%s", l);
    }
    if (!any)
        return;
    sb(x->b, "## Side by side with NumPy and PyTorch\n\n");
    with_sources(x);
    with_unavailable(x);
    if (cols.n)
        with_table(x, &cols);
}
