/* History of medians and change points: see history.h for the method and
 * docs/FORMAT.md ("history") for the outputs. */
#include "history.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/stats.h"
#include "compare.h"
#include "table.h"

void tb_hist_opts_default(tb_hist_opts *o)
{
    o->threshold = 0.02;
    o->penalty = 4.0;
    o->alpha = 0.01;
}

/* Compare's verdict on the ok runs idx[a..b) against idx[b..e) of c. */
static int judge_step(const tb_hist_case *c, const int *idx, int a, int b,
                      int e, const tb_hist_opts *o, tb_cmp_case *v,
                      const tb_rescase **buf)
{
    tb_cmp_opts co;
    tb_cmp_opts_default(&co);
    co.threshold = o->threshold;
    co.alpha = o->alpha;
    for (int i = a; i < e; i++)
        buf[i - a] = c->rc[idx[i]];
    return tb_cmp_runs(buf, b - a, buf + (b - a), e - b, &co, v);
}

/* Keep only the boundaries of starts[0..nseg) that compare's verdict
 * calls a step (regressed or improved), merging the others, the one with
 * the largest p first.  verdicts[s], p[s], lo[s], hi[s] get boundary s's
 * verdict.  Returns the number of segments left, or a negative TB_E*. */
static int confirm_steps(const tb_hist_case *c, const int *idx, int m,
                         int *starts, int nseg, const tb_hist_opts *o,
                         tb_cmp_case *v)
{
    const tb_rescase **buf = malloc((size_t)m * sizeof *buf);
    if (!buf)
        return TB_ENOMEM;
    for (;;) {
        int worst = -1;
        double worst_p = -1;
        for (int s = 1; s < nseg; s++) {
            int e = s + 1 < nseg ? starts[s + 1] : m;
            int rc = judge_step(c, idx, starts[s - 1], starts[s], e, o,
                                &v[s], buf);
            if (rc) {
                free(buf);
                return rc;
            }
            bool step = v[s].time == TB_TIME_REGRESSED ||
                        v[s].time == TB_TIME_IMPROVED;
            double p = isnan(v[s].p) ? 2 : v[s].p;
            if (!step && p > worst_p) {
                worst = s;
                worst_p = p;
            }
        }
        if (worst < 0)
            break;
        memmove(&starts[worst], &starts[worst + 1],
                (size_t)(nseg - worst - 1) * sizeof *starts);
        nseg--;
    }
    free(buf);
    return nseg;
}

/* Median of v[0..n) (n >= 1) using scratch (n doubles). */
static double median(const double *v, int n, double *scratch)
{
    memcpy(scratch, v, (size_t)n * sizeof *v);
    return tb_median_inplace(scratch, (size_t)n);
}

int tb_changepoints(const double *y, int n, double beta, double min_step,
                    int *starts)
{
    if (!y || n < 1 || !starts || !(beta >= 0) || !(min_step >= 0))
        return TB_EINVAL;
    for (int i = 0; i < n; i++)
        if (!isfinite(y[i]))
            return TB_EINVAL;
    double *s1 = malloc((size_t)(n + 1) * sizeof *s1);
    double *s2 = malloc((size_t)(n + 1) * sizeof *s2);
    double *best = malloc((size_t)(n + 1) * sizeof *best);
    double *scratch = malloc((size_t)n * sizeof *scratch);
    int *last = malloc((size_t)(n + 1) * sizeof *last);
    if (!s1 || !s2 || !best || !scratch || !last) {
        free(s1);
        free(s2);
        free(best);
        free(scratch);
        free(last);
        return TB_ENOMEM;
    }
    /* prefix sums of centred values: segment cost in O(1) without the
     * cancellation of raw sums of squares */
    double mean = 0;
    for (int i = 0; i < n; i++)
        mean += y[i] / n;
    s1[0] = s2[0] = 0;
    for (int i = 0; i < n; i++) {
        double d = y[i] - mean;
        s1[i + 1] = s1[i] + d;
        s2[i + 1] = s2[i] + d * d;
    }
    /* best[j]: optimal cost of y[0..j); last[j]: start of its last
     * segment.  O(n^2), fine for the few hundred runs of a history. */
    best[0] = -beta;
    for (int j = 1; j <= n; j++) {
        /* with an infinite beta (noise so large that sigma^2
         * overflows) no candidate is below INFINITY: one segment */
        best[j] = INFINITY;
        last[j] = 0;
        for (int i = 0; i < j; i++) {
            double s = s1[j] - s1[i], len = j - i;
            double sse = s2[j] - s2[i] - s * s / len;
            double v = best[i] + (sse > 0 ? sse : 0) + beta;
            if (v < best[j]) {
                best[j] = v;
                last[j] = i;
            }
        }
    }
    int k = 0;
    for (int j = n; j > 0; j = last[j])
        starts[k++] = last[j];
    for (int i = 0; i < k / 2; i++) {
        int t = starts[i];
        starts[i] = starts[k - 1 - i];
        starts[k - 1 - i] = t;
    }
    /* merge steps below min_step, the smallest first */
    while (k > 1) {
        int at = -1;
        double smallest = INFINITY, prev = NAN;
        for (int s = 0; s < k; s++) {
            int end = s + 1 < k ? starts[s + 1] : n;
            double m = median(y + starts[s], end - starts[s], scratch);
            if (s && fabs(m - prev) < smallest) {
                smallest = fabs(m - prev);
                at = s;
            }
            prev = m;
        }
        if (smallest >= min_step)
            break;
        memmove(starts + at, starts + at + 1,
                (size_t)(k - at - 1) * sizeof *starts);
        k--;
    }
    free(s1);
    free(s2);
    free(best);
    free(scratch);
    free(last);
    return k;
}

static void free_case(tb_hist_case *c)
{
    free(c->rc);
    free(c->seg_first);
    free(c->seg_last);
    free(c->seg_median);
    free(c->steps);
}

void tb_history_free(tb_history *h)
{
    if (!h)
        return;
    for (int i = 0; i < h->n; i++)
        free_case(&h->cases[i]);
    free(h->cases);
    h->cases = NULL;
    h->n = 0;
}

/* Series, noise, segments and steps of one case over k runs. */
static int build_case(tb_hist_case *c, tb_resfile *const *files, int k,
                      const tb_hist_opts *o)
{
    int rc = TB_ENOMEM;
    tb_cmp_case *v = NULL; /* each boundary's verdict */
    double *y = malloc((size_t)k * 3 * sizeof *y);
    int *idx = malloc((size_t)k * 2 * sizeof *idx);
    c->rc = calloc((size_t)k, sizeof *c->rc);
    if (!y || !idx || !c->rc)
        goto out;
    double *tmp = y + k, *scratch = y + 2 * k;
    int *starts = idx + k;
    int m = 0;
    for (int j = 0; j < k; j++) {
        c->rc[j] = tb_resfile_find(files[j], c->id);
        if (c->rc[j] && c->rc[j]->timed) {
            y[m] = log(c->rc[j]->median_ns);
            tmp[m] = c->rc[j]->ci_rel;
            idx[m++] = j;
        }
    }
    c->n_ok = m;
    if (m == 0) {
        rc = 0;
        goto out;
    }
    /* noise: within-run (a 95% CI spans about 2 x 1.96 standard errors)
     * and between runs (robust spread of consecutive differences) */
    double sigma = median(tmp, m, scratch) / 3.92;
    if (m >= 3) {
        for (int i = 0; i + 1 < m; i++)
            tmp[i] = y[i + 1] - y[i];
        double md = median(tmp, m - 1, scratch);
        for (int i = 0; i + 1 < m; i++)
            tmp[i] = fabs(tmp[i] - md);
        double s = 1.4826 * median(tmp, m - 1, scratch) / sqrt(2.0);
        sigma = fmax(sigma, s);
    }
    c->sigma = sigma;
    double beta = o->penalty * sigma * sigma * fmax(1.0, log((double)m));
    int nseg;
    if (m == 2) { /* no series to fit: the one question is the pair */
        starts[0] = 0;
        starts[1] = 1;
        nseg = 2;
    } else {
        nseg = tb_changepoints(y, m, beta, log1p(o->threshold), starts);
    }
    if (nseg < 0) {
        rc = nseg;
        goto out;
    }
    if (nseg > 1) {
        v = malloc((size_t)nseg * sizeof *v);
        if (!v)
            goto out;
        nseg = confirm_steps(c, idx, m, starts, nseg, o, v);
        if (nseg < 0) {
            rc = nseg;
            goto out;
        }
    }
    c->seg_first = malloc((size_t)nseg * sizeof *c->seg_first);
    c->seg_last = malloc((size_t)nseg * sizeof *c->seg_last);
    c->seg_median = malloc((size_t)nseg * sizeof *c->seg_median);
    c->steps = malloc((size_t)nseg * sizeof *c->steps);
    if (!c->seg_first || !c->seg_last || !c->seg_median || !c->steps)
        goto out;
    c->n_seg = nseg;
    for (int s = 0; s < nseg; s++) {
        int end = s + 1 < nseg ? starts[s + 1] : m;
        for (int i = starts[s]; i < end; i++)
            tmp[i - starts[s]] = c->rc[idx[i]]->median_ns;
        c->seg_first[s] = idx[starts[s]];
        c->seg_last[s] = idx[end - 1];
        c->seg_median[s] = median(tmp, end - starts[s], scratch);
        if (s) {
            tb_hist_step *st = &c->steps[c->n_steps++];
            st->run = c->seg_first[s];
            st->before_ns = c->seg_median[s - 1];
            st->after_ns = c->seg_median[s];
            st->change = st->after_ns / st->before_ns - 1;
            st->verdict = (int)v[s].time;
            st->p = v[s].p;
            st->ci_low = v[s].ci_lo;
            st->ci_high = v[s].ci_hi;
        }
    }
    rc = 0;
out:
    free(y);
    free(idx);
    free(v);
    return rc;
}

int tb_history_build(tb_resfile *const *files, int k,
                     const tb_hist_opts *opts, tb_history *out, char *err,
                     size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!files || k < 1 || !opts) {
        snprintf(err, errlen, "history: no file given");
        return TB_EINVAL;
    }
    out->opts = *opts;
    out->files = files;
    out->k = k;
    /* each run against the runs before it, so the message names the
     * file that left the matrix */
    for (int j = 1; j < k; j++)
        if (!tb_resfile_shares_id(files[j], files, j)) {
            snprintf(err, errlen, "%s: no case id in common with the "
                     "earlier runs (a different matrix?)", files[j]->path);
            return TB_EINVAL;
        }
    const char **ids;
    int n;
    if (tb_resfile_union_ids(files, k, &ids, &n)) {
        snprintf(err, errlen, "history: out of memory");
        return TB_ENOMEM;
    }
    out->cases = calloc((size_t)(n ? n : 1), sizeof *out->cases);
    if (!out->cases) {
        free(ids);
        snprintf(err, errlen, "history: out of memory");
        return TB_ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        tb_hist_case *c = &out->cases[out->n++];
        c->id = ids[i];
        int rc = build_case(c, files, k, opts);
        if (rc) {
            free(ids);
            tb_history_free(out);
            snprintf(err, errlen, "history: %s", tb_strerror(rc));
            return rc;
        }
    }
    free(ids);
    return 0;
}

/* ---- output ----------------------------------------------------------- */

static void steps_text(const tb_hist_case *c, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int s = 0; s < c->n_steps && used < len; s++) {
        const tb_hist_step *st = &c->steps[s];
        int w = snprintf(buf + used, len - used, "%s%+.1f%% at run %d",
                         s ? "; " : "", 100 * st->change, st->run + 1);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (!c->n_steps)
        snprintf(buf, len, c->n_ok ? "-" : "(never ok)");
}

void tb_history_print(FILE *f, const tb_history *h, bool md)
{
    fprintf(f, md ? "## History\n\nRuns, oldest first:\n\n"
                  : "runs (oldest first):\n");
    for (int j = 0; j < h->k; j++) {
        const tb_resfile *r = h->files[j];
        fprintf(f, "%s%3d  %s  %s  %s%s\n", md ? "- " : "  ", j + 1,
                r->date ? r->date : "?", r->git_commit ? r->git_commit : "?",
                r->path, r->complete ? "" : " (incomplete)");
    }
    int w = 4;
    for (int i = 0; i < h->n; i++)
        if ((int)strlen(h->cases[i].id) > w)
            w = (int)strlen(h->cases[i].id);
    if (md)
        fprintf(f, "\n| case | ok runs | first | last | min | max | noise "
                "| steps |\n|---|--:|--:|--:|--:|--:|--:|---|\n");
    else
        fprintf(f, "\n%-*s  %7s %10s %10s %10s %10s %6s  %s\n", w, "case",
                "ok runs", "first", "last", "min", "max", "noise", "steps");
    int with_steps = 0;
    for (int i = 0; i < h->n; i++) {
        const tb_hist_case *c = &h->cases[i];
        char runs[32], first[32] = "-", lastb[32] = "-", mn[32] = "-",
                       mx[32] = "-", noise[32] = "-", steps[1024];
        snprintf(runs, sizeof runs, "%d/%d", c->n_ok, h->k);
        if (c->n_ok) {
            double lo = INFINITY, hi = -INFINITY, a = NAN, b = NAN;
            for (int j = 0; j < h->k; j++) {
                if (!c->rc[j] || !c->rc[j]->timed)
                    continue;
                double v = c->rc[j]->median_ns;
                if (isnan(a))
                    a = v;
                b = v;
                lo = fmin(lo, v);
                hi = fmax(hi, v);
            }
            tb_fmt_ns(a, first, sizeof first);
            tb_fmt_ns(b, lastb, sizeof lastb);
            tb_fmt_ns(lo, mn, sizeof mn);
            tb_fmt_ns(hi, mx, sizeof mx);
            snprintf(noise, sizeof noise, "%.1f%%", 100 * c->sigma);
        }
        steps_text(c, steps, sizeof steps);
        with_steps += c->n_steps > 0;
        if (md)
            fprintf(f, "| `%s` | %s | %s | %s | %s | %s | %s | %s |\n", c->id,
                    runs, first, lastb, mn, mx, noise, steps);
        else
            fprintf(f, "%-*s  %7s %10s %10s %10s %10s %6s  %s\n", w, c->id,
                    runs, first, lastb, mn, mx, noise, steps);
    }
    fprintf(f, "\n%d cases over %d runs; %d with a step of at least %g%% "
            "(run numbers as listed above; noise: the per-run standard "
            "deviation used for the penalty)\n",
            h->n, h->k, with_steps, 100 * h->opts.threshold);
}

cJSON *tb_history_json(const tb_history *h)
{
    cJSON *doc = cJSON_CreateObject();
    if (!doc)
        return NULL;
    cJSON_AddStringToObject(doc, "schema", TB_HISTORY_SCHEMA);
    cJSON *op = cJSON_AddObjectToObject(doc, "options");
    cJSON_AddNumberToObject(op, "threshold", h->opts.threshold);
    cJSON_AddNumberToObject(op, "penalty", h->opts.penalty);
    cJSON_AddNumberToObject(op, "alpha", h->opts.alpha);
    cJSON *runs = cJSON_AddArrayToObject(doc, "runs");
    for (int j = 0; j < h->k; j++) {
        const tb_resfile *r = h->files[j];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "index", j);
        cJSON_AddStringToObject(e, "path", r->path);
        cJSON_AddItemToObject(e, "date", tb_cjson_str_or_null(r->date));
        cJSON_AddItemToObject(e, "git_commit",
                              tb_cjson_str_or_null(r->git_commit));
        cJSON_AddItemToObject(e, "hostname", tb_cjson_str_or_null(r->hostname));
        cJSON_AddBoolToObject(e, "complete", r->complete);
        cJSON_AddItemToArray(runs, e);
    }
    cJSON *cases = cJSON_AddArrayToObject(doc, "cases");
    for (int i = 0; i < h->n; i++) {
        const tb_hist_case *c = &h->cases[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "id", c->id);
        cJSON *st = cJSON_AddArrayToObject(e, "status");
        cJSON *md = cJSON_AddArrayToObject(e, "median_ns");
        cJSON *lo = cJSON_AddArrayToObject(e, "ci_low_ns");
        cJSON *hi = cJSON_AddArrayToObject(e, "ci_high_ns");
        for (int j = 0; j < h->k; j++) {
            const tb_rescase *r = c->rc[j];
            bool t = r && r->timed;
            cJSON_AddItemToArray(st,
                                 tb_cjson_str_or_null(r ? r->status : NULL));
            cJSON_AddItemToArray(md,
                                 tb_cjson_num_or_null(t ? r->median_ns : NAN));
            cJSON_AddItemToArray(lo,
                                 tb_cjson_num_or_null(t ? r->ci_low_ns : NAN));
            cJSON_AddItemToArray(hi,
                                 tb_cjson_num_or_null(t ? r->ci_high_ns : NAN));
        }
        cJSON_AddItemToObject(e, "noise",
                              tb_cjson_num_or_null(c->n_ok ? c->sigma : NAN));
        cJSON *segs = cJSON_AddArrayToObject(e, "segments");
        for (int s = 0; s < c->n_seg; s++) {
            cJSON *g = cJSON_CreateObject();
            cJSON_AddNumberToObject(g, "first_run", c->seg_first[s]);
            cJSON_AddNumberToObject(g, "last_run", c->seg_last[s]);
            cJSON_AddNumberToObject(g, "median_ns", c->seg_median[s]);
            cJSON_AddItemToArray(segs, g);
        }
        cJSON *steps = cJSON_AddArrayToObject(e, "steps");
        for (int s = 0; s < c->n_steps; s++) {
            const tb_hist_step *p = &c->steps[s];
            cJSON *g = cJSON_CreateObject();
            cJSON_AddNumberToObject(g, "run", p->run);
            cJSON_AddStringToObject(g, "path", h->files[p->run]->path);
            cJSON_AddNumberToObject(g, "before_ns", p->before_ns);
            cJSON_AddNumberToObject(g, "after_ns", p->after_ns);
            cJSON_AddNumberToObject(g, "change", p->change);
            cJSON_AddStringToObject(g, "kind", p->change > 0 ? "regression"
                                                             : "improvement");
            cJSON_AddStringToObject(g, "verdict",
                                    tb_res_verdict_name(p->verdict));
            cJSON_AddNumberToObject(g, "p_value", p->p);
            cJSON_AddNumberToObject(g, "ci_low", p->ci_low);
            cJSON_AddNumberToObject(g, "ci_high", p->ci_high);
            cJSON_AddItemToArray(steps, g);
        }
        cJSON_AddItemToArray(cases, e);
    }
    return doc;
}
