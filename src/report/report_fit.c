/* The report's complexity fits (issue 31 item 3): each series of three or
 * more sizes fitted as time = c x f(n), Google Benchmark's Complexity()
 * form (least squares through the origin), for f = n, n log2 n, n^2,
 * n^3 (n the elements of the largest tensor, the cost model's items) and
 * the op's own cost model (FLOPs, else bytes), on relative residuals;
 * the fit with the smallest RMS error is shown, with the sizes whose
 * median lies further from the fit than half their 95% CI.
 * scripts/audit_work.py (check_complexity) derives it again. */
#include <math.h>
#include <stdlib.h>

#include "report_impl.h"

#define FIT_MODELS 5
#define FIT_MIN 3    /* sizes a series needs */
#define FIT_LISTED 3 /* off-fit sizes named per row */

static const char *const fit_name[FIT_MODELS] = {
    "O(n)", "O(n log n)", "O(n^2)", "O(n^3)", "cost model"};

static double fit_f(int model, const tb_rcase *c)
{
    double n = c->items;
    switch (model) {
    case 0: return n;
    case 1: return n > 1 ? n * log2(n) : 0;
    case 2: return n * n;
    case 3: return n * n * n;
    default: return tb_rpt_work(c);
    }
}

/* The best model of the series v[0..n): its index, coefficient and RMS
 * of the relative residuals (t - c f) / t; -1 when no model has a
 * positive f(n) at every size.  c minimises that sum of squares (each
 * size weighs alike: unweighted least squares over sizes that span
 * decades is decided by the largest size alone). */
static int fit_best(const tb_rset *s, const int *v, int n, double *coef,
                    double *rms)
{
    int best = -1;
    for (int m = 0; m < FIT_MODELS; m++) {
        double a = 0, aa = 0; /* sums of f/t and (f/t)^2 */
        bool ok = true;
        for (int k = 0; k < n && ok; k++) {
            double f = fit_f(m, &s->cases[v[k]]), t = s->cases[v[k]].median;
            ok = f > 0 && isfinite(f) && t > 0;
            a += f / t;
            aa += (f / t) * (f / t);
        }
        if (!ok || !(aa > 0))
            continue;
        double c = a / aa, ss = 0;
        for (int k = 0; k < n; k++) {
            double t = s->cases[v[k]].median;
            double r = (t - c * fit_f(m, &s->cases[v[k]])) / t;
            ss += r * r;
        }
        double e = sqrt(ss / n);
        /* a later model must be better by more than rounding: models
         * proportional to each other (a step's cost model and O(n)) fit
         * alike, and the first of them is kept (audit_work.py agrees) */
        if (best < 0 || e < *rms * (1 - 1e-9)) {
            best = m;
            *coef = c;
            *rms = e;
        }
    }
    return best;
}

/* The sizes of v[0..n) off the fit: "SHAPES (+12%)", the first
 * FIT_LISTED of them, then "and N more"; "none" without one. */
static void off_fit(const tb_rset *s, const int *v, int n, int m, double c,
                    tb_strbuf *b)
{
    int off = 0;
    for (int k = 0; k < n; k++) {
        const tb_rcase *x = &s->cases[v[k]];
        double fit = c * fit_f(m, x);
        if (!(fabs(x->median - fit) > (x->ci_hi - x->ci_lo) / 2))
            continue;
        if (off < FIT_LISTED) {
            char p[32];
            sb(b, "%s%s (%s%s%%)", off ? ", " : "", x->shapes,
               x->median > fit ? "+" : "",
               tb_md_num(100 * (x->median / fit - 1), p, sizeof p));
        }
        off++;
    }
    if (off > FIT_LISTED)
        sb(b, " and %d more", off - FIT_LISTED);
    if (!off)
        sb(b, "none");
}

void tb_rpt_complexity(const tb_rpt *x)
{
    const tb_rset *s = x->s;
    tb_strbuf rows = {0};
    int nrows = 0;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        int *v;
        int n = tb_rpt_series_at(x, i, &v);
        double coef = 0, rms = 0;
        int m = n >= FIT_MIN ? fit_best(s, v, n, &coef, &rms) : -1;
        if (m >= 0) {
            char e[32];
            sb(&rows, "| %s | %s | %s | %d | %s | %s%% | ", c->opp, c->dtype,
               c->variant, n, fit_name[m], tb_md_num(100 * rms, e, sizeof e));
            off_fit(s, v, n, m, coef, &rows);
            sb(&rows, " |\n");
            nrows++;
        }
        free(v);
    }
    if (!nrows || rows.oom) {
        free(rows.p);
        return;
    }
    sb(x->b, "## Complexity\n\n"
             "Each series of %d or more sizes (one op, parameters, dtype and "
             "backend) fitted as time = c x f(n), the form of Google "
             "Benchmark's `Complexity()`, for f = n, n log n, n^2, n^3 (n: "
             "the elements of the largest tensor) and the op's cost model "
             "(FLOPs, else bytes); c minimises the squares of the relative "
             "residuals (time - fit) / time, so that every size weighs "
             "alike (sizes spanning decades would otherwise be fitted to the "
             "largest alone), and the fit with the smallest RMS of them is "
             "shown. A "
             "size is off the fit when its median lies further from the "
             "fit than half its 95%% CI (fixed costs at small sizes, a "
             "cache level crossed); at most %d are named.\n\n"
             "| Op | Dtype | Backend | Sizes | Fit | RMS error | Off the fit "
             "(median vs fit) |\n|---|---|---|---|---|---|---|\n%s\n",
       FIT_MIN, FIT_LISTED, rows.p);
    free(rows.p);
}
