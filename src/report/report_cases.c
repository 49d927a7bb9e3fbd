/* What the report's sections share (report_impl.h): grouping cases,
 * compare's verdict on a pair, the charts to link. */
#include "report_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/strbuf.h"
#include "compare.h"

/* ---- grouping cases ------------------------------------------------------ */

double tb_rpt_work(const tb_rcase *c)
{
    if (c->flops > 0)
        return c->flops;
    if (c->bytes > 0)
        return c->bytes;
    return c->items > 0 ? c->items : 0;
}

void tb_rpt_column_label(const tb_rcase *c, char *buf, size_t len)
{
    size_t u = (size_t)snprintf(buf, len, "%s", c->backend);
    bool first = true;
    for (int i = 0; i < c->rc->n_axes; i++) {
        const tb_res_axis *a = &c->rc->axes[i];
        if (!strcmp(a->name, "threads") || u >= len)
            continue;
        u += (size_t)snprintf(buf + u, len - u, "%s%s=%s", first ? "[" : ",",
                              a->name, a->value);
        first = false;
    }
    if (!first && u < len)
        snprintf(buf + u, len - u, "]");
}

static void field(const tb_rcase *c, int f, char *buf, size_t len)
{
    switch (f) {
    case F_KEY: snprintf(buf, len, "%s", c->key); break;
    case F_OPDT: snprintf(buf, len, "%s/%s", c->op, c->dtype); break;
    case F_SERIES:
        snprintf(buf, len, "%d|%s/%s/%s", c->doc, c->opp, c->dtype,
                 c->variant);
        break;
    case F_CAT: snprintf(buf, len, "%s", c->category); break;
    case F_OPPDT: snprintf(buf, len, "%s/%s", c->opp, c->dtype); break;
    case F_OPVAR: /* NumPy/PyTorch: thread counts share a row */
        if (c->role == TB_ROLE_WITH) {
            char l[128];
            tb_rpt_column_label(c, l, sizeof l);
            snprintf(buf, len, "%d|%s/%s", c->doc, c->op, l);
        } else {
            snprintf(buf, len, "%d|%s/%s", c->doc, c->op, c->variant);
        }
        break;
    default: snprintf(buf, len, "%d|%s", c->doc, c->variant); break;
    }
}

bool tb_rpt_same(const tb_rcase *a, const tb_rcase *b, int f)
{
    char x[800], y[800];
    field(a, f, x, sizeof x);
    field(b, f, y, sizeof y);
    return !strcmp(x, y);
}

/* Group the cases by field f: x->same[f], x->same_next[f] (allocated by
 * the caller).  slots: a power of two >= 2 * cases, scratch. */
static void group_field(tb_rpt *x, int f, int *slots, size_t n_slots,
                        size_t *hash)
{
    const tb_rset *s = x->s;
    int *same = x->same[f], *next = x->same_next[f];
    char a[800], b[800];
    memset(slots, 0xff, n_slots * sizeof *slots); /* all -1 */
    for (int i = 0; i < s->n; i++) {
        field(&s->cases[i], f, a, sizeof a);
        hash[i] = tb_str_hash(a);
        size_t k = hash[i] & (n_slots - 1);
        for (; slots[k] >= 0; k = (k + 1) & (n_slots - 1)) {
            if (hash[slots[k]] != hash[i])
                continue;
            field(&s->cases[slots[k]], f, b, sizeof b);
            if (!strcmp(a, b))
                break;
        }
        next[i] = -1;
        if (slots[k] < 0) { /* the first of its group; slots[k]: the last */
            same[i] = i;
        } else {
            same[i] = same[slots[k]];
            next[slots[k]] = i;
        }
        slots[k] = i;
    }
}

int tb_rpt_group_fields(tb_rpt *x)
{
    size_t n = (size_t)(x->s->n ? x->s->n : 1), n_slots = 16;
    while (n_slots < 2 * n)
        n_slots *= 2;
    int *slots = malloc(n_slots * sizeof *slots);
    size_t *hash = malloc(n * sizeof *hash);
    int rc = slots && hash ? 0 : TB_ENOMEM;
    for (int f = 0; f < F_COUNT && !rc; f++) {
        x->same[f] = malloc(n * sizeof *x->same[f]);
        x->same_next[f] = malloc(n * sizeof *x->same_next[f]);
        if (!x->same[f] || !x->same_next[f])
            rc = TB_ENOMEM;
        else
            group_field(x, f, slots, n_slots, hash);
    }
    free(slots);
    free(hash);
    return rc;
}

void tb_rpt_ungroup(tb_rpt *x)
{
    for (int f = 0; f < F_COUNT; f++) {
        free(x->same[f]);
        free(x->same_next[f]);
        x->same[f] = x->same_next[f] = NULL;
    }
}

bool tb_rpt_seen_before(const tb_rpt *x, int i, unsigned mask, int f,
                        bool ok_only)
{
    const tb_rset *s = x->s;
    for (int k = x->same[f][i]; k >= 0 && k < i; k = x->same_next[f][k]) {
        const tb_rcase *c = &s->cases[k];
        if (tb_rpt_in(c, mask) && (!ok_only || c->ok))
            return true;
    }
    return false;
}

/* qsort's order of (work, index) pairs: by work, then file order. */
typedef struct work_at {
    double work;
    int k;
} work_at;

static int by_work(const void *pa, const void *pb)
{
    const work_at *a = pa, *b = pb;
    if (a->work != b->work)
        return a->work > b->work ? 1 : -1;
    return (a->k > b->k) - (a->k < b->k);
}

int tb_rpt_series_at(const tb_rpt *x, int i, int **out)
{
    const tb_rcase *c = &x->s->cases[i];
    *out = NULL;
    if (!c->ok || !tb_rpt_in(c, M_MAIN) ||
        tb_rpt_seen_before(x, i, M_MAIN, F_SERIES, true))
        return 0;
    return tb_rpt_collect_sorted(x, i, M_MAIN, F_SERIES, out);
}

int tb_rpt_collect_sorted(const tb_rpt *x, int i, unsigned mask, int f,
                          int **out)
{
    const tb_rset *s = x->s;
    int n = 0;
    for (int k = x->same[f][i]; k >= 0; k = x->same_next[f][k])
        n++;
    work_at *w = malloc((size_t)(n ? n : 1) * sizeof *w);
    int *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    *out = NULL;
    if (!w || !v) {
        free(w);
        free(v);
        return 0;
    }
    n = 0;
    for (int k = x->same[f][i]; k >= 0; k = x->same_next[f][k]) {
        const tb_rcase *c = &s->cases[k];
        if (c->ok && tb_rpt_in(c, mask))
            w[n++] = (work_at){tb_rpt_work(c), k};
    }
    /* work is never NaN (tb_rpt_work): a total order, as stable as the
     * insertion sort this replaces */
    qsort(w, (size_t)n, sizeof *w, by_work);
    for (int k = 0; k < n; k++)
        v[k] = w[k].k;
    free(w);
    *out = v;
    return n;
}

const tb_rcase *tb_rpt_find_key(const tb_rset *s, const tb_rcase *c,
                                const char *key)
{
    for (int i = tb_rset_key_first(s, key); i >= 0; i = s->key_next[i]) {
        const tb_rcase *d = &s->cases[i];
        if (d->ok && d->doc == c->doc && !strcmp(d->variant, c->variant))
            return d;
    }
    return NULL;
}

/* ---- compare's verdict on a pair ----------------------------------------- */

int tb_rpt_versus(const tb_rcase *a, const tb_rcase *b, double *p)
{
    int v = tb_rpt_versus_verdict(a, b, p);
    return v == TB_TIME_IMPROVED ? 1 : v == TB_TIME_REGRESSED ? -1 : 0;
}

int tb_rpt_pair(const tb_rcase *old, const tb_rcase *nw, tb_cmp_case *v)
{
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    return tb_cmp_pair(old->rc, nw->rc, &o, v);
}

int tb_rpt_versus_verdict(const tb_rcase *a, const tb_rcase *b, double *p)
{
    tb_cmp_case v;
    *p = NAN;
    if (!a->ok || !b->ok || tb_rpt_pair(b, a, &v) || v.time == TB_TIME_NA)
        return TB_TIME_NA;
    *p = v.p;
    return (int)v.time;
}

int tb_rpt_vs_ref(const tb_rpt *x, const tb_rcase *c, const tb_rcase *ref)
{
    ptrdiff_t i = c - x->s->cases;
    double p;
    if (!x->vs_ref)
        return tb_rpt_versus(c, ref, &p);
    if (x->vs_ref[i] == 2)
        x->vs_ref[i] = (signed char)tb_rpt_versus(c, ref, &p);
    return x->vs_ref[i];
}

/* ---- charts ---------------------------------------------------------------- */

const tb_chart *tb_rpt_chart(const tb_rpt *x, tb_chart_kind kind,
                             const char *group)
{
    const tb_chart_list *l = x->o->charts;
    for (int i = 0; l && i < l->n; i++)
        if (l->v[i].kind == kind && l->v[i].rendered &&
            (!group || !strcmp(l->v[i].group, group)))
            return &l->v[i];
    return NULL;
}

void tb_rpt_chart_link(const tb_rpt *x, const tb_chart *ch)
{
    if (!ch)
        return;
    sb(x->b, "![%s](%s/%s.png)\n\n", ch->title,
       x->o->chart_dir ? x->o->chart_dir : ".", ch->name);
}

void tb_rpt_chart_links(const tb_rpt *x, tb_chart_kind kind,
                        const char *group)
{
    const tb_chart_list *l = x->o->charts;
    for (int i = 0; l && i < l->n; i++)
        if (l->v[i].kind == kind && l->v[i].rendered &&
            !strcmp(l->v[i].group, group))
            tb_rpt_chart_link(x, &l->v[i]);
}
