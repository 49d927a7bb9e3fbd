/* The charts of the ops measured at one size: one summary per category
 * and dtype (clustered bars) instead of a single-bar chart per op
 * (plot.c calls tb_plt_category; the shared helpers: plot_impl.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "gpscript.h"
#include "plot_impl.h"

#define CAT_ROWS 16 /* ops per summary chart */

/* Was the op/dtype group of case g measured at one size only in every
 * series (no line to draw)? */
static bool single_size(const tb_rset *s, int g)
{
    int sv[MAX_SERIES], pts[2];
    int ns = tb_plt_group_series(s, g, M_MAIN | M_WITH, sv, MAX_SERIES);
    for (int k = 0; k < ns; k++)
        if (tb_plt_series_points(s, sv[k], pts, 2) >= 2)
            return false;
    return ns > 0;
}

/* The summary of one category and dtype: for each op measured at one
 * size only, a cluster of bars, one per configuration (backend and
 * axes: at most CHART_SERIES a chart), the median time with its 95% CI
 * on a log axis: one chart where there was a single-bar chart per op.
 * rows: the first case of each such op (rows[0..nr)); parts of
 * CAT_ROWS ops and CHART_SERIES configurations. */
static int category_part(pctx *x, const int *rows, int nr, const int *cols,
                         int nc, const char *name, const char *title)
{
    const tb_rset *s = x->s;
    FILE *d = tb_plt_open_out(x, name, "dat");
    if (!d)
        return TB_EIO;
    fprintf(d, "# op");
    for (int k = 0; k < nc; k++)
        fprintf(d, " | %s median s, ci low, ci high", s->cases[cols[k]].variant);
    fprintf(d, "\n");
    for (int r = 0; r < nr; r++) {
        const tb_rcase *g = &s->cases[rows[r]];
        tb_plt_dat_str(d, g->opp);
        for (int k = 0; k < nc; k++) {
            const tb_rcase *hit = NULL; /* the op's case of this variant */
            for (int i = 0; i < s->n && !hit; i++) {
                const tb_rcase *c = &s->cases[i];
                if (c->ok && tb_plt_inm(c, M_MAIN | M_WITH) &&
                    !strcmp(c->opp, g->opp) && tb_plt_same_opdt(c, g) &&
                    c->doc == s->cases[cols[k]].doc &&
                    !strcmp(c->variant, s->cases[cols[k]].variant))
                    hit = c;
            }
            if (hit)
                fprintf(d, " %.9g %.9g %.9g", hit->median * 1e-9,
                        hit->ci_lo * 1e-9, hit->ci_hi * 1e-9);
            else
                fprintf(d, " ? ? ?");
        }
        fprintf(d, "\n");
    }
    int rc;
    FILE *f = tb_plt_script_open(x, d, name, title, &rc);
    if (!f)
        return rc;
    fprintf(f, "set datafile missing '?'\nset style data histograms\n"
               "set style histogram errorbars gap 1 lw 1\n"
               "set style fill solid 0.7 border -1\nset logscale y\n"
               "set format y '%%.0s %%cs'\nset ylabel 'time per call'\n"
               "set xtics rotate by -30 noenhanced\nset bmargin 8\n");
    char *body;
    size_t blen;
    FILE *m = tb_plt_body_open(x, f, &body, &blen);
    if (!m)
        return TB_ENOMEM;
    fprintf(m, "plot ");
    for (int k = 0; k < nc; k++) {
        fprintf(m, "%s'%s.dat' using %d:%d:%d%s lc rgb '%s' title ",
                k ? ", \\\n     " : "", name, 2 + 3 * k, 3 + 3 * k,
                4 + 3 * k, k ? "" : ":xtic(1)", tb_plt_colour[k]);
        tb_gp_str(m, s->cases[cols[k]].variant);
    }
    fprintf(m, "\n");
    return tb_plt_script_close(x, f, m, &body, name, W, H + tb_plt_key_height(nc));
}

/* The summaries of category cat in dtype dt (case first: its first
 * case).  Group "category:CAT/DTYPE". */
int tb_plt_category(pctx *x, int first)
{
    const tb_rset *s = x->s;
    const tb_rcase *fc = &s->cases[first];
    int *rows = malloc((size_t)s->n * sizeof *rows);
    if (!rows)
        return TB_ENOMEM;
    int nr = 0, cols[MAX_SERIES], nc = 0;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !tb_plt_inm(c, M_MAIN | M_WITH) ||
            strcmp(c->category, fc->category) ||
            strcmp(c->dtype, fc->dtype))
            continue;
        bool seen = false; /* an op (with its params) once */
        for (int r = 0; r < nr && !seen; r++)
            seen = !strcmp(s->cases[rows[r]].opp, c->opp);
        if (seen)
            continue;
        int g = 0; /* the first case of the op's group */
        while (g < i && !(s->cases[g].ok &&
                          tb_plt_inm(&s->cases[g], M_MAIN | M_WITH) &&
                          tb_plt_same_opdt(&s->cases[g], c)))
            g++;
        if (single_size(s, g))
            rows[nr++] = i;
    }
    for (int r = 0; r < nr; r++)
        for (int i = 0; i < s->n && nc < MAX_SERIES; i++) {
            const tb_rcase *c = &s->cases[i];
            if (!c->ok || !tb_plt_inm(c, M_MAIN | M_WITH) ||
                strcmp(c->opp, s->cases[rows[r]].opp) ||
                !tb_plt_same_opdt(c, &s->cases[rows[r]]))
                continue;
            bool dup = false;
            for (int k = 0; k < nc && !dup; k++)
                dup = s->cases[cols[k]].doc == c->doc &&
                      !strcmp(s->cases[cols[k]].variant, c->variant);
            if (!dup)
                cols[nc++] = i;
        }
    int rc = 0;
    int rparts = (nr + CAT_ROWS - 1) / CAT_ROWS;
    int cparts = (nc + CHART_SERIES - 1) / CHART_SERIES;
    char base[160], group[200];
    tb_plt_safe_name(base, sizeof base, fc->category);
    snprintf(group, sizeof group, "category:%s/%s", fc->category, fc->dtype);
    for (int rp = 0; rp < rparts && !rc; rp++)
        for (int cp = 0; cp < cparts && !rc; cp++) {
            int part = rp * cparts + cp, parts = rparts * cparts;
            char name[192], title[320];
            if (part)
                snprintf(name, sizeof name, "summary-%s-%s-%d", base,
                         fc->dtype, part + 1);
            else
                snprintf(name, sizeof name, "summary-%s-%s", base,
                         fc->dtype);
            int n1 = nr - rp * CAT_ROWS < CAT_ROWS ? nr - rp * CAT_ROWS
                                                   : CAT_ROWS;
            int n2 = nc - cp * CHART_SERIES < CHART_SERIES
                         ? nc - cp * CHART_SERIES
                         : CHART_SERIES;
            int w = snprintf(title, sizeof title,
                             "%s ops measured at one size (%s): time per "
                             "call (median, 95%% CI)",
                             fc->category, fc->dtype);
            if (parts > 1 && w > 0 && (size_t)w < sizeof title)
                snprintf(title + w, sizeof title - (size_t)w,
                         " (part %d of %d)", part + 1, parts);
            rc = category_part(x, rows + rp * CAT_ROWS, n1,
                               cols + cp * CHART_SERIES, n2, name, title);
            if (!rc && !tb_plt_chart_add(x->out, TB_CHART_TIME, group, name, title))
                rc = TB_ENOMEM;
        }
    free(rows);
    return rc;
}

