/* The chart files' common steps and the grouping of cases into series,
 * for plot.c and plot_summary.c (plot_impl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/grow.h"
#include "gpscript.h"
#include "plot_impl.h"

const char *const tb_plt_colour[CHART_SERIES] = {
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd",
    "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};


tb_chart *tb_plt_chart_add(tb_chart_list *l, tb_chart_kind kind,
                           const char *group, const char *name,
                           const char *title)
{
    tb_chart *v = tb_grow(l->v, &l->cap, l->n, sizeof *v, 32);
    if (!v)
        return NULL;
    l->v = v;
    tb_chart *c = &l->v[l->n++];
    memset(c, 0, sizeof *c);
    c->kind = kind;
    snprintf(c->group, sizeof c->group, "%s", group);
    snprintf(c->name, sizeof c->name, "%s", name);
    snprintf(c->title, sizeof c->title, "%s", title);
    return c;
}

/* A file-name-safe copy of s: [A-Za-z0-9_.-], anything else becomes _. */
void tb_plt_safe_name(char *dst, size_t len, const char *s)
{
    size_t o = 0;
    for (; *s && o + 1 < len; s++) {
        char c = *s;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
        dst[o++] = ok ? c : '_';
    }
    dst[o] = '\0';
}

/* s as a double-quoted data-file field (no quotes or newlines inside). */
void tb_plt_dat_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++)
        fputc(*s == '"' || *s == '\n' ? '\'' : *s, f);
    fputc('"', f);
}

FILE *tb_plt_open_out(pctx *x, const char *name, const char *ext)
{
    return tb_gp_open(x->o->dir, name, ext, x->err, x->errlen);
}

int tb_plt_close_out(pctx *x, FILE *f, const char *name, const char *ext)
{
    return tb_gp_close(f, x->o->dir, name, ext, x->err, x->errlen);
}

/* Extra image height for a key of n entries below the plot (tb_gp_head
 * puts it there, in two columns). */
int tb_plt_key_height(int n)
{
    return 16 * ((n + 1) / 2);
}

/* Write the plot command in body to every requested format. */
void tb_plt_gp_outputs(FILE *f, const tb_plot_opts *o, const char *name,
                       const char *body, int w, int h)
{
    bool first = true;
    if (o->png) {
        fprintf(f, "set terminal pngcairo size %d,%d font 'sans,9' "
                   "noenhanced\nset output '%s.png'\n%s",
                w, h, name, body);
        first = false;
    }
    if (o->svg) {
        fprintf(f, "set terminal svg size %d,%d font 'sans,9' noenhanced "
                   "background '#ffffff'\nset output '%s.svg'\n%s",
                w, h, name, first ? body : "replot\n");
    }
    fprintf(f, "set output\n");
}

/* Start NAME.gp once NAME.dat is written: close d, open the script and
 * write its head.  NULL (*rc the error, its message in x->err) when
 * either fails. */
FILE *tb_plt_script_open(pctx *x, FILE *d, const char *name,
                         const char *title, int *rc)
{
    *rc = tb_plt_close_out(x, d, name, "dat");
    if (*rc)
        return NULL;
    FILE *f = tb_plt_open_out(x, name, "gp");
    if (!f) {
        *rc = TB_EIO;
        return NULL;
    }
    tb_gp_head(f, name, title);
    return f;
}

/* The plot commands of script f, gathered in memory (gp_outputs writes
 * them once per format): a stream into *body, or NULL (f closed) when
 * out of memory. */
FILE *tb_plt_body_open(pctx *x, FILE *f, char **body, size_t *len)
{
    *body = NULL;
    FILE *m = open_memstream(body, len);
    if (!m) {
        fclose(f);
        snprintf(x->err, x->errlen, "out of memory");
    }
    return m;
}

/* Close the body m, write it to every requested format at w x h, and
 * close script f. */
int tb_plt_script_close(pctx *x, FILE *f, FILE *m, char **body,
                        const char *name, int w, int h)
{
    fclose(m);
    tb_plt_gp_outputs(f, x->o, name, *body, w, h);
    free(*body);
    return tb_plt_close_out(x, f, name, "gp");
}

/* ---- grouping helpers ---------------------------------------------------- */

bool tb_plt_inm(const tb_rcase *c, unsigned mask)
{
    return (mask & (1u << c->role)) != 0;
}

bool tb_plt_same_opdt(const tb_rcase *a, const tb_rcase *b)
{
    return !strcmp(a->op, b->op) && !strcmp(a->dtype, b->dtype);
}

static bool same_series(const tb_rcase *a, const tb_rcase *b)
{
    return a->doc == b->doc && !strcmp(a->opp, b->opp) &&
           !strcmp(a->dtype, b->dtype) && !strcmp(a->variant, b->variant);
}

/* First ok case of mask with the same op and dtype before i? */
bool tb_plt_group_seen(const tb_rset *s, int i, unsigned mask)
{
    for (int k = 0; k < i; k++)
        if (s->cases[k].ok && tb_plt_inm(&s->cases[k], mask) &&
            tb_plt_same_opdt(&s->cases[k], &s->cases[i]))
            return true;
    return false;
}

/* Series (first cases) of the op/dtype group of case g, in file order;
 * returns the count (at most max). */
int tb_plt_group_series(const tb_rset *s, int g, unsigned mask, int *v,
                        int max)
{
    int n = 0;
    for (int i = 0; i < s->n && n < max; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !tb_plt_inm(c, mask) || !tb_plt_same_opdt(c, &s->cases[g]))
            continue;
        bool dup = false;
        for (int k = 0; k < n && !dup; k++)
            dup = same_series(&s->cases[v[k]], c);
        if (!dup)
            v[n++] = i;
    }
    return n;
}

/* The ok cases of the series of case i, sorted by elements then work. */
int tb_plt_series_points(const tb_rset *s, int i, int *v, int max)
{
    int n = 0;
    for (int k = 0; k < s->n && n < max; k++)
        if (s->cases[k].ok && same_series(&s->cases[k], &s->cases[i]))
            v[n++] = k;
    for (int a = 1; a < n; a++) {
        int t = v[a], b = a - 1;
        while (b >= 0 && s->cases[v[b]].items > s->cases[t].items) {
            v[b + 1] = v[b];
            b--;
        }
        v[b + 1] = t;
    }
    return n;
}
