/* gnuplot charts of result files (contracts in plot.h).
 *
 * Every chart is written as NAME.dat (data blocks separated by two blank
 * lines, one per series, read with `index`) and NAME.gp (the script),
 * then rendered by running gnuplot on the script in the output folder. */
#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../base/error.h"
#include "../base/fileio.h"
#include "../base/grow.h"
#include "gpscript.h"
#include "plot_impl.h"
#include "history.h"
#include "training.h"

#define MAX_CHANGE 40   /* bars in the baseline chart */
#define MAX_PEAKS 6     /* peak lines per throughput chart */


/* Bar colours of the change chart by compare's time verdict. */
static const char *const colour[] = {
    [TB_TIME_NA] = "#7f7f7f",
    [TB_TIME_UNCHANGED] = "#7f7f7f",
    [TB_TIME_INCONCLUSIVE] = "#ff7f0e",
    [TB_TIME_REGRESSED] = "#d62728",
    [TB_TIME_IMPROVED] = "#2ca02c",
};

void tb_chart_list_free(tb_chart_list *l)
{
    if (!l)
        return;
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* Do the group's series differ in their parameters (OP[PARAMS])? */
static bool group_multi_params(const tb_rset *s, const int *v, int n)
{
    for (int k = 1; k < n; k++)
        if (strcmp(s->cases[v[k]].opp, s->cases[v[0]].opp))
            return true;
    return false;
}

static void series_title(const tb_rset *s, int i, bool params, char *buf,
                         size_t len)
{
    const tb_rcase *c = &s->cases[i];
    if (params)
        snprintf(buf, len, "%s %s", c->opp, c->variant);
    else
        snprintf(buf, len, "%s", c->variant);
}

/* The style of series k (cases sv[0..k], at most CHART_SERIES) of a
 * chart: a colour and a point shape of its own (8 of each, so no two
 * lines of a chart look alike even in grey); tbench's backends solid,
 * each other backend (NumPy, PyTorch...) a dash pattern of its own. */
static void series_style(const tb_rset *s, const int *sv, int k, char *buf,
                         size_t len)
{
    /* filled circle, square, up and down triangles, diamond, pentagon,
     * open circle, open square */
    static const int shapes[CHART_SERIES] = {7, 5, 9, 11, 13, 15, 6, 4};
    const tb_rcase *c = &s->cases[sv[k]];
    int dt = 1, pt = shapes[k % CHART_SERIES];
    if (c->role != TB_ROLE_MAIN) {
        int idx = 0; /* distinct other backends before this one */
        for (int j = 0; j < k; j++) {
            const tb_rcase *d = &s->cases[sv[j]];
            if (d->role == TB_ROLE_MAIN || !strcmp(d->backend, c->backend))
                continue;
            bool first = true;
            for (int i = 0; i < j && first; i++)
                first = strcmp(s->cases[sv[i]].backend, d->backend) != 0;
            idx += first;
        }
        dt = 2 + idx % 3;
    }
    snprintf(buf, len, "lc rgb '%s' dt %d pt %d", tb_plt_colour[k % CHART_SERIES], dt,
             pt);
}

/* ---- time and throughput vs size ------------------------------------------- */

typedef struct {
    char label[160];
    double v;
    int dt;       /* dash type: the level or ISA */
    bool most;    /* at the largest thread count drawn */
} peak;

static bool has_int(const int *v, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

/* Peak lines for a throughput chart from the MAIN document's "peaks"
 * (schema tbench.peaks/1, docs/FORMAT.md): a GFLOP/s chart gets the FMA
 * peaks of its dtype, a GB/s chart the bandwidth of kernel at every
 * level, each for the thread counts in threads[0..nt) (all when nt is
 * 0); the MAX_PEAKS largest.  Returns the count. */
static int peaks_pick(const tb_rset *s, bool flops, const char *dtype,
                      const int *threads, int nt, const char *kernel,
                      peak *out)
{
    int md = tb_rset_first(s, TB_ROLE_MAIN);
    const tb_respeaks *pk = md >= 0 ? &s->docs[md].file->peaks : NULL;
    int n = !pk ? 0 : flops ? pk->n_flops : pk->n_bandwidth;
    int m = 0;
    for (int i = 0; i < n; i++) {
        const tb_res_peak *e = flops ? &pk->flops[i] : &pk->bandwidth[i];
        double t = e->threads, v = e->best;
        const char *k = flops ? e->dtype : e->kernel;
        const char *l = flops ? e->isa : e->level;
        if (!(v > 0) || isnan(t) || !k || !l ||
            strcmp(k, flops ? dtype : kernel) ||
            (nt && !has_int(threads, nt, (int)t)))
            continue;
        /* a level measured on several sets (the L3): its first, own set
         * only, one line per level as the legend names them */
        bool again = false;
        for (int j = 0; j < i && !flops; j++) {
            const tb_res_peak *o = &pk->bandwidth[j];
            again = again || (o->kernel && o->level && o->threads == t &&
                              !strcmp(o->kernel, k) && !strcmp(o->level, l));
        }
        if (again)
            continue;
        peak p;
        if (flops)
            snprintf(p.label, sizeof p.label, "FMA peak %s %s, %.0f thread%s",
                     l, dtype, t, t == 1 ? "" : "s");
        else
            snprintf(p.label, sizeof p.label, "%s bandwidth %s, %.0f thread%s",
                     kernel, l, t, t == 1 ? "" : "s");
        p.v = v;
        static const char *const kinds[] = {"L2", "L3",   "DRAM",  "scalar",
                                            "avx2", "avx512", "avx512bf16"};
        static const int dts[] = {3, 4, 2, 2, 4, 3, 1};
        p.dt = 5;
        for (int j = 0; j < 7; j++)
            if (!strcmp(l, kinds[j]))
                p.dt = dts[j];
        p.most = true;
        for (int j = 0; j < nt; j++)
            p.most = p.most && threads[j] <= (int)t;
        /* keep the MAX_PEAKS largest, sorted descending */
        int pos = m;
        while (pos > 0 && out[pos - 1].v < v)
            pos--;
        if (pos >= MAX_PEAKS)
            continue;
        if (m < MAX_PEAKS)
            m++;
        memmove(&out[pos + 1], &out[pos],
                (size_t)(m - 1 - pos) * sizeof *out);
        out[pos] = p;
    }
    return m;
}

/* The x tick label of a case: MxNxK for matmul-like ops (batch dims,
 * when any, are left out: the label names the GEMM), else its shapes. */
static void x_label(const tb_rcase *c, bool mnk, char *buf, size_t len)
{
    snprintf(buf, len, "%s", c->shapes);
    if (!mnk)
        return;
    const tb_rescase *r = c->rc;
    const tb_res_shape *a = r->n_shapes ? &r->shapes[0] : NULL;
    const tb_res_shape *o = r->n_out_shapes ? &r->out_shapes[0] : NULL;
    if (!a || !o || a->ndim < 1 || o->ndim < 2)
        return;
    double m = o->dim[o->ndim - 2], n = o->dim[o->ndim - 1],
           k = a->dim[a->ndim - 1];
    if (m > 0 && n > 0 && k > 0)
        snprintf(buf, len, "%.0fx%.0fx%.0f", m, n, k);
}

/* A time or throughput chart of one op and dtype: its series, what the
 * axes show, its file name and title. */
typedef struct {
    tb_chart_kind kind;
    const tb_rcase *gc; /* the group's first case */
    int sv[MAX_SERIES], ns;
    bool params; /* series differ in their parameters */
    bool flops;  /* GFLOP/s, else GB/s */
    bool mnk;    /* the x axis says M x N x K */
    char name[192], title[256];
} vs_size;

/* The chart of case g's group, or false when there is none: no series
 * has two sizes, or (throughput) the model has no rate. */
static bool vs_size_plan(const tb_rset *s, int g, tb_chart_kind kind,
                         vs_size *v)
{
    v->kind = kind;
    v->gc = &s->cases[g];
    v->ns = tb_plt_group_series(s, g, M_MAIN | M_WITH, v->sv, MAX_SERIES);
    v->params = group_multi_params(s, v->sv, v->ns);
    /* a line needs two sizes: no chart when no series has them */
    int pts[512], most = 0;
    for (int k = 0; k < v->ns; k++) {
        int np = tb_plt_series_points(s, v->sv[k], pts, 512);
        most = np > most ? np : most;
    }
    if (most < 2)
        return false;
    /* throughput metric: GFLOP/s for compute-heavy ops (>= 1 FLOP per
     * byte of the cost model at the largest size), else GB/s */
    v->flops = false;
    for (int k = 0; k < v->ns; k++) {
        int np = tb_plt_series_points(s, v->sv[k], pts, 512);
        for (int p = 0; p < np; p++) {
            const tb_rcase *c = &s->cases[pts[p]];
            if (c->flops > 0 && c->bytes > 0 && c->flops >= c->bytes)
                v->flops = true;
        }
    }
    double maxv = 0;
    for (int k = 0; k < v->ns; k++) {
        int np = tb_plt_series_points(s, v->sv[k], pts, 512);
        for (int p = 0; p < np; p++) {
            const tb_rcase *c = &s->cases[pts[p]];
            double y = kind == TB_CHART_TIME ? c->ci_hi
                       : v->flops            ? c->gflop_s
                                             : c->gb_s;
            if (y > maxv)
                maxv = y;
        }
    }
    if (kind == TB_CHART_THROUGHPUT && !(maxv > 0))
        return false; /* no rate in the model (e.g. 0 bytes) */
    const tb_rcase *gc = v->gc;
    char base[160];
    tb_plt_safe_name(base, sizeof base, gc->op);
    snprintf(v->name, sizeof v->name, "%s-%s-%s",
             kind == TB_CHART_TIME ? "time" : "throughput", base, gc->dtype);
    /* matmul-like ops: the x axis says M x N x K (from the output's
     * last two dims and the first input's last one), not elements */
    v->mnk = gc->category && !strcmp(gc->category, "matmul");
    if (kind == TB_CHART_TIME)
        snprintf(v->title, sizeof v->title,
                 "%s (%s): time per call vs size (median, 95%% CI)", gc->op,
                 gc->dtype);
    else
        snprintf(v->title, sizeof v->title, "%s (%s): %s vs size", gc->op,
                 gc->dtype, v->flops ? "GFLOP/s" : "GB/s");
    return true;
}

/* NAME.dat: a block per series, a line per size. */
static int vs_size_dat(pctx *x, const vs_size *v)
{
    const tb_rset *s = x->s;
    FILE *d = tb_plt_open_out(x, v->name, "dat");
    if (!d)
        return TB_EIO;
    int pts[512];
    for (int k = 0; k < v->ns; k++) {
        char t[600];
        series_title(s, v->sv[k], v->params, t, sizeof t);
        fprintf(d, "%s# %s\n", k ? "\n\n" : "", t);
        int np = tb_plt_series_points(s, v->sv[k], pts, 512);
        for (int p = 0; p < np; p++) {
            const tb_rcase *c = &s->cases[pts[p]];
            char xl[300];
            x_label(c, v->mnk, xl, sizeof xl);
            /* times in seconds, so gnuplot's SI format prints "10 µs" */
            if (v->kind == TB_CHART_TIME)
                fprintf(d, "%.9g %.9g %.9g %.9g \"%s\" # %s\n", c->items,
                        c->median * 1e-9, c->ci_lo * 1e-9, c->ci_hi * 1e-9,
                        xl, c->shapes);
            else
                fprintf(d, "%.9g %.9g \"%s\" # %s\n", c->items,
                        v->flops ? c->gflop_s : c->gb_s, xl, c->shapes);
        }
    }
    return tb_plt_close_out(x, d, v->name, "dat");
}

/* The peak lines of a throughput chart: the MAIN document's peaks for
 * the thread counts of the tbench series and the bandwidth kernel of
 * their roofline. */
static void vs_size_peaks(const tb_rset *s, const vs_size *v, FILE *m)
{
    int thr[MAX_SERIES], nt = 0;
    const char *kernel = NULL;
    for (int k = 0; k < v->ns; k++) {
        const tb_rcase *c = &s->cases[v->sv[k]];
        const char *t = tb_rescase_axis(c->rc, "threads");
        if (c->role == TB_ROLE_MAIN && t && !has_int(thr, nt, atoi(t)))
            thr[nt++] = atoi(t);
        if (!kernel)
            kernel = c->rc->f.roofline_bw_kernel;
    }
    peak pk[MAX_PEAKS];
    int npk = peaks_pick(s, v->flops, v->gc->dtype, thr, nt,
                         kernel ? kernel : "copy", pk);
    for (int k = 0; k < npk; k++) {
        char t[1200];
        snprintf(t, sizeof t, "%s: %.4g", pk[k].label, pk[k].v);
        fprintf(m, ", \\\n     %.9g with lines dt %d lw 1.5 lc rgb "
                   "'%s' title ",
                pk[k].v, pk[k].dt, pk[k].most ? "#444444" : "#999999");
        tb_gp_str(m, t);
    }
}

/* NAME.gp: the axes, then a line per series (and the peaks). */
static int vs_size_gp(pctx *x, const vs_size *v)
{
    const tb_rset *s = x->s;
    bool time = v->kind == TB_CHART_TIME;
    FILE *f = tb_plt_open_out(x, v->name, "gp");
    if (!f)
        return TB_EIO;
    tb_gp_head(f, v->name, v->title);
    if (v->mnk)
        fprintf(f, "set xlabel 'M x N x K'\nset logscale x\n"
                   "set xtics rotate by -30\n");
    else
        fprintf(f, "set xlabel 'size (elements of the largest tensor)'\n"
                   "set logscale x\nset format x '%%.0s%%c'\n");
    if (time)
        fprintf(f, "set ylabel 'time per call'\nset logscale y\n"
                   "set format y '%%.0s %%cs'\n"
                   "set offsets graph 0.05, graph 0.05, 0, 0\n");
    else
        fprintf(f, "set ylabel '%s'\nset yrange [0:*]\n"
                   "set offsets graph 0.05, graph 0.05, graph 0.1, 0\n",
                v->flops ? "GFLOP/s (FLOPs of the cost model / median)"
                         : "GB/s (bytes of the cost model / median)");
    char *body;
    size_t blen;
    FILE *m = tb_plt_body_open(x, f, &body, &blen);
    if (!m)
        return TB_ENOMEM;
    fprintf(m, "plot ");
    for (int k = 0; k < v->ns; k++) {
        char t[600], st[96];
        series_title(s, v->sv[k], v->params, t, sizeof t);
        series_style(s, v->sv, k, st, sizeof st);
        fprintf(m, "%s'%s.dat' index %d using 1:2%s%s with %s lw 2 %s "
                   "title ",
                k ? ", \\\n     " : "", v->name, k, time ? ":3:4" : "",
                !v->mnk ? "" : time ? ":xtic(5)" : ":xtic(3)",
                time ? "yerrorlines" : "linespoints", st);
        tb_gp_str(m, t);
    }
    if (!time)
        vs_size_peaks(s, v, m);
    fprintf(m, "\n");
    return tb_plt_script_close(x, f, m, &body, v->name, W,
                        H + tb_plt_key_height(v->ns + 2));
}

/* Time (kind TIME) or throughput (THROUGHPUT) vs size for the op/dtype
 * group of case g. */
static int chart_vs_size(pctx *x, int g, tb_chart_kind kind)
{
    vs_size all;
    if (!vs_size_plan(x->s, g, kind, &all))
        return 0;
    /* at most CHART_SERIES lines a chart: parts 2, 3... get "-2", "-3"
     * and every part says which it is */
    int parts = (all.ns + CHART_SERIES - 1) / CHART_SERIES;
    for (int p = 0; p < parts; p++) {
        vs_size v = all;
        v.ns = all.ns - p * CHART_SERIES < CHART_SERIES
                   ? all.ns - p * CHART_SERIES
                   : CHART_SERIES;
        memcpy(v.sv, all.sv + p * CHART_SERIES, (size_t)v.ns * sizeof *v.sv);
        if (p)
            snprintf(v.name, sizeof v.name, "%.170s-%d", all.name, p + 1);
        if (parts > 1) {
            char t[48];
            snprintf(t, sizeof t, " (part %d of %d)", p + 1, parts);
            strncat(v.title, t, sizeof v.title - strlen(v.title) - 1);
        }
        int rc = vs_size_dat(x, &v);
        if (!rc)
            rc = vs_size_gp(x, &v);
        if (rc)
            return rc;
        char group[160];
        snprintf(group, sizeof group, "%s/%s", v.gc->op, v.gc->dtype);
        if (!tb_plt_chart_add(x->out, kind, group, v.name, v.title))
            return TB_ENOMEM;
    }
    return 0;
}

/* ---- roofline per backend -------------------------------------------------------- */

typedef struct {
    double bw, peak; /* GB/s and GFLOP/s of one roof */
    char label[160];
} roof;

/* One chart per backend whose cases carry a roofline object (measured
 * peaks, results.json "roofline"): each ok case a point at its
 * arithmetic intensity (FLOPs / bytes of the cost model) and its
 * GFLOP/s, under the roofs min(peak, bandwidth x intensity) of the
 * bandwidths and peaks those cases were held against. */
/* Is c an ok MAIN case of backend be with a roofline to draw: FLOPs,
 * bytes and GFLOP/s, and the bandwidth and peak it was held against? */
static bool on_roofline(const tb_rcase *c, const char *be)
{
    return c->ok && c->role == TB_ROLE_MAIN && !strcmp(c->backend, be) &&
           c->flops > 0 && c->bytes > 0 && c->gflop_s > 0 &&
           c->rc->f.roofline_bandwidth_gb_s > 0 &&
           c->rc->f.roofline_peak_gflop_s > 0;
}

/* A point of a roofline chart, for sorting by op, fastest first. */
typedef struct {
    const tb_rcase *c;
    int i; /* its index: ties stay in file order */
} roof_pt;

static int roof_pt_cmp(const void *a, const void *b)
{
    const roof_pt *p = a, *q = b;
    int o = strcmp(p->c->op, q->c->op);
    if (o)
        return o;
    if (p->c->gflop_s != q->c->gflop_s)
        return p->c->gflop_s > q->c->gflop_s ? -1 : 1;
    return (p->i > q->i) - (p->i < q->i);
}

static int chart_roofline(pctx *x, int g)
{
    const tb_rset *s = x->s;
    const char *be = s->cases[g].backend;
    roof rf[MAX_PEAKS];
    int nr = 0, npts = 0;
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!on_roofline(c, be))
            continue;
        const tb_res_fields *r = &c->rc->f;
        double bw = r->roofline_bandwidth_gb_s, pk = r->roofline_peak_gflop_s;
        npts++;
        double ai = c->flops / c->bytes;
        lo = ai < lo ? ai : lo;
        hi = ai > hi ? ai : hi;
        bool dup = false;
        for (int k = 0; k < nr && !dup; k++)
            dup = rf[k].bw == bw && rf[k].peak == pk;
        if (!dup && nr < MAX_PEAKS) {
            const char *lv = r->roofline_level, *isa = r->roofline_isa;
            rf[nr].bw = bw;
            rf[nr].peak = pk;
            snprintf(rf[nr].label, sizeof rf[nr].label,
                     "roof: %s %.4g GB/s, %s %.4g GFLOP/s, %.0f thread(s)",
                     lv ? lv : "?", bw, isa ? isa : "?", pk,
                     r->roofline_threads);
            nr++;
        }
    }
    if (npts == 0)
        return 0;
    char name[192], base[160], title[256];
    tb_plt_safe_name(base, sizeof base, be);
    snprintf(name, sizeof name, "roofline-%s", base);
    snprintf(title, sizeof title,
             "%s: roofline (measured peaks; each ok case a point)", be);
    FILE *d = tb_plt_open_out(x, name, "dat");
    if (!d)
        return TB_EIO;
    /* each op's label at its fastest point (the others ""): the points
     * sorted by op, fastest first */
    roof_pt *pt = malloc((size_t)npts * sizeof *pt);
    if (!pt) {
        fclose(d);
        return TB_ENOMEM;
    }
    int np = 0;
    for (int i = 0; i < s->n; i++)
        if (on_roofline(&s->cases[i], be))
            pt[np++] = (roof_pt){&s->cases[i], i};
    qsort(pt, (size_t)np, sizeof *pt, roof_pt_cmp);
    fprintf(d, "# FLOPs/byte | GFLOP/s | case | label\n");
    for (int k = 0; k < np; k++) {
        const tb_rcase *c = pt[k].c;
        bool best = k == 0 || strcmp(pt[k - 1].c->op, c->op);
        fprintf(d, "%.9g %.9g ", c->flops / c->bytes, c->gflop_s);
        tb_plt_dat_str(d, c->id);
        fputc(' ', d);
        tb_plt_dat_str(d, best ? c->op : "");
        fprintf(d, "\n");
    }
    free(pt);
    int rc;
    FILE *f = tb_plt_script_open(x, d, name, title, &rc);
    if (!f)
        return rc;
    fprintf(f, "set logscale xy\nset format x '%%g'\n"
               "set xlabel 'arithmetic intensity (FLOPs / byte of the cost "
               "model)'\nset ylabel 'GFLOP/s'\nset samples 400\n"
               "set xrange [%.6g:%.6g]\n",
            lo / 4, hi * 4);
    char *body;
    size_t blen;
    FILE *m = tb_plt_body_open(x, f, &body, &blen);
    if (!m)
        return TB_ENOMEM;
    fprintf(m, "plot '%s.dat' using 1:2 with points pt 7 ps 0.8 lc rgb "
               "'#1f77b4' title 'cases (%d; each op named at its fastest)', "
               "\\\n     '' using 1:2:4 with labels left offset char 0.4,0.4 "
               "font ',7' tc rgb '#333333' notitle",
            name, npts);
    /* a colour and a dash pattern per roof */
    static const char *const roof_colour[MAX_PEAKS] = {
        "#444444", "#8c564b", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf"};
    for (int k = 0; k < nr; k++) {
        fprintf(m, ", \\\n     (x * %.9g < %.9g ? x * %.9g : %.9g) with lines "
                   "lw 1.5 dt %d lc rgb '%s' title ",
                rf[k].bw, rf[k].peak, rf[k].bw, rf[k].peak, k + 1,
                roof_colour[k % MAX_PEAKS]);
        tb_gp_str(m, rf[k].label);
    }
    fprintf(m, "\n");
    rc = tb_plt_script_close(x, f, m, &body, name, W, H + tb_plt_key_height(nr + 1));
    if (rc)
        return rc;
    return tb_plt_chart_add(x->out, TB_CHART_ROOFLINE, be, name, title) ? 0
                                                                : TB_ENOMEM;
}

/* ---- speedup bars ------------------------------------------------------------ */

static int chart_speedup(pctx *x, int g)
{
    const tb_rset *s = x->s;
    const tb_rcase *gc = &s->cases[g];
    unsigned mask = M_MAIN; /* tbench's own backends */
    /* rows: keys of the group that have a reference, by size */
    int keys[256], nk = 0;
    for (int i = 0; i < s->n && nk < 256; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !tb_plt_inm(c, mask) || !tb_plt_same_opdt(c, gc))
            continue;
        bool dup = false;
        for (int k = 0; k < nk && !dup; k++)
            dup = !strcmp(s->cases[keys[k]].key, c->key);
        if (!dup && tb_rset_reference(s, c->key, M_MAIN))
            keys[nk++] = i;
    }
    for (int a = 1; a < nk; a++) {
        int t = keys[a], b = a - 1;
        while (b >= 0 && s->cases[keys[b]].items > s->cases[t].items) {
            keys[b + 1] = keys[b];
            b--;
        }
        keys[b + 1] = t;
    }
    /* columns: (document, variant) pairs that are not the reference */
    int cols[MAX_SERIES], nc = 0;
    const tb_rcase *ref0 = NULL;
    for (int i = 0; i < s->n && nc < MAX_SERIES; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !tb_plt_inm(c, mask) || !tb_plt_same_opdt(c, gc))
            continue;
        const tb_rcase *ref = tb_rset_reference(s, c->key, M_MAIN);
        if (!ref || ref == c)
            continue;
        ref0 = ref;
        bool dup = false;
        for (int k = 0; k < nc && !dup; k++)
            dup = s->cases[cols[k]].doc == c->doc &&
                  !strcmp(s->cases[cols[k]].variant, c->variant);
        if (!dup)
            cols[nc++] = i;
    }
    if (nc == 0 || nk == 0)
        return 0;
    bool params = false;
    for (int k = 1; k < nk; k++)
        params = params || strcmp(s->cases[keys[k]].opp, s->cases[keys[0]].opp);

    char name[192], base[160], title[256];
    tb_plt_safe_name(base, sizeof base, gc->op);
    snprintf(name, sizeof name, "speedup-%s-%s", base, gc->dtype);
    snprintf(title, sizeof title,
             "%.60s (%s): speedup over the reference %.100s (higher is "
             "faster)",
             gc->op, gc->dtype, ref0->variant);
    FILE *d = tb_plt_open_out(x, name, "dat");
    if (!d)
        return TB_EIO;
    fprintf(d, "# size");
    for (int k = 0; k < nc; k++)
        fprintf(d, " | %s", s->cases[cols[k]].variant);
    fprintf(d, "\n");
    for (int r = 0; r < nk; r++) {
        const tb_rcase *kc = &s->cases[keys[r]];
        const tb_rcase *ref = tb_rset_reference(s, kc->key, M_MAIN);
        char label[600];
        if (params)
            snprintf(label, sizeof label, "%s %s", kc->opp, kc->shapes);
        else
            snprintf(label, sizeof label, "%s", kc->shapes);
        tb_plt_dat_str(d, label);
        for (int k = 0; k < nc; k++) {
            const tb_rcase *col = &s->cases[cols[k]], *v = NULL;
            for (int i = 0; i < s->n && !v; i++) {
                const tb_rcase *c = &s->cases[i];
                if (c->ok && c->doc == col->doc &&
                    !strcmp(c->variant, col->variant) &&
                    !strcmp(c->key, kc->key) && c != ref)
                    v = c;
            }
            if (v && v->median > 0)
                fprintf(d, " %.6g", ref->median / v->median);
            else
                fprintf(d, " ?");
        }
        fprintf(d, "\n");
    }
    int rc;
    FILE *f = tb_plt_script_open(x, d, name, title, &rc);
    if (!f)
        return rc;
    fprintf(f, "set datafile missing '?'\nset style data histograms\n"
               "set style histogram clustered gap 1\n"
               "set style fill solid 0.8 border -1\nset boxwidth 0.9\n"
               "set yrange [0:*]\nset xtics rotate by -30 noenhanced\n"
               "set xlabel 'shapes'\n"
               "set ylabel 'speedup (reference median / median)'\n");
    char *body;
    size_t blen;
    FILE *m = tb_plt_body_open(x, f, &body, &blen);
    if (!m)
        return TB_ENOMEM;
    for (int k = 0; k < nc; k++) {
        if (k == 0)
            fprintf(m, "plot '%s.dat' using 2:xtic(1) title ", name);
        else
            fprintf(m, ", \\\n     '' using %d title ", k + 2);
        tb_gp_str(m, s->cases[cols[k]].variant);
    }
    fprintf(m, ", \\\n     1 with lines dt 2 lc 'black' title 'reference "
               "(1x)'\n");
    rc = tb_plt_script_close(x, f, m, &body, name, W, H);
    if (rc)
        return rc;
    char group[160];
    snprintf(group, sizeof group, "%s/%s", gc->op, gc->dtype);
    return tb_plt_chart_add(x->out, TB_CHART_SPEEDUP, group, name, title)
               ? 0
               : TB_ENOMEM;
}

/* ---- baseline vs current ----------------------------------------------------- */

static int chart_change(pctx *x)
{
    const tb_cmp *cmp = x->o->baseline;
    if (!cmp || cmp->n == 0)
        return 0;
    double thr = cmp->opts.threshold;
    int *idx = malloc((size_t)cmp->n * sizeof *idx);
    int n = 0;
    if (!idx)
        return TB_ENOMEM;
    for (int i = 0; i < cmp->n; i++)
        if (cmp->cases[i].time != TB_TIME_NA)
            idx[n++] = i;
    /* keep the MAX_CHANGE largest |change|, in file order */
    while (n > MAX_CHANGE) {
        int sm = 0;
        for (int k = 1; k < n; k++)
            if (fabs(cmp->cases[idx[k]].change) <
                fabs(cmp->cases[idx[sm]].change))
                sm = k;
        memmove(&idx[sm], &idx[sm + 1], (size_t)(n - sm - 1) * sizeof *idx);
        n--;
    }
    int rc = 0;
    if (n == 0)
        goto out;
    const char *name = "change";
    char title[256];
    snprintf(title, sizeof title,
             "change vs baseline (current / baseline median - 1, %%)");
    FILE *d = tb_plt_open_out(x, name, "dat");
    if (!d) {
        rc = TB_EIO;
        goto out;
    }
    fprintf(d, "# index change_pct colour verdict label\n");
    for (int k = 0; k < n; k++) {
        const tb_cmp_case *c = &cmp->cases[idx[k]];
        unsigned rgb = (unsigned)strtoul(colour[c->time] + 1, NULL, 16);
        fprintf(d, "%d %.6g %u %s ", k, 100 * c->change, rgb,
                tb_cmp_case_verdict(c));
        tb_plt_dat_str(d, c->id);
        fprintf(d, "\n");
    }
    FILE *f = tb_plt_script_open(x, d, name, title, &rc);
    if (!f)
        goto out;
    fprintf(f, "set key outside top center horizontal\n"
               "set offsets graph 0.05, graph 0.05, 0, 0\n"
               "set style fill solid 0.8 border -1\n"
               "set yrange [%d.5:-0.5]\nset ytics font ',8' noenhanced\n"
               "set xlabel 'change in median time (%%; positive = slower)'\n"
               "set arrow from 0, graph 0 to 0, graph 1 nohead lc 'black'\n"
               "set arrow from %g, graph 0 to %g, graph 1 nohead dt 2 "
               "lw 1.5 lc rgb '#999999'\n"
               "set arrow from %g, graph 0 to %g, graph 1 nohead dt 2 "
               "lw 1.5 lc rgb '#999999'\n",
            n - 1, 100 * thr, 100 * thr, -100 * thr, -100 * thr);
    char body[2048];
    snprintf(body, sizeof body,
             "plot '%s.dat' using (0.5*$2):1:(0.5*abs($2)):(0.35):3:ytic(5) "
             "with boxxyerror lc rgb variable notitle, \\\n"
             "     NaN with boxes lc rgb '%s' title 'regressed', \\\n"
             "     NaN with boxes lc rgb '%s' title 'improved', \\\n"
             "     NaN with boxes lc rgb '%s' title 'inconclusive', \\\n"
             "     NaN with boxes lc rgb '%s' title 'unchanged (tbench "
             "compare, threshold %g%%)'\n",
             name, colour[TB_TIME_REGRESSED], colour[TB_TIME_IMPROVED],
             colour[TB_TIME_INCONCLUSIVE], colour[TB_TIME_UNCHANGED],
             100 * thr);
    tb_plt_gp_outputs(f, x->o, name, body, W, 120 + 18 * n);
    rc = tb_plt_close_out(x, f, name, "gp");
    if (!rc && !tb_plt_chart_add(x->out, TB_CHART_CHANGE, "", name, title))
        rc = TB_ENOMEM;
out:
    free(idx);
    return rc;
}

/* ---- noisiest cases ------------------------------------------------------------ */

static int chart_noise(pctx *x)
{
    const tb_rset *s = x->s;
    int *idx;
    int n = tb_rset_noisiest(s, x->o->n_noisy, &idx);
    if (n < 0)
        return TB_ENOMEM;
    int rc = 0;
    if (n == 0)
        goto out;
    const char *name = "noise";
    char title[256];
    snprintf(title, sizeof title,
             "samples of the %d noisiest cases (by MAD / median), each "
             "divided by its median", n);
    FILE *d = tb_plt_open_out(x, name, "dat");
    if (!d) {
        rc = TB_EIO;
        goto out;
    }
    for (int k = 0; k < n; k++) {
        const tb_rcase *c = &s->cases[idx[k]];
        fprintf(d, "%s# %s\n", k ? "\n\n" : "", c->id);
        for (int i = 0; i < c->n; i++)
            fprintf(d, "%.6g\n", c->samples[i] / c->median);
    }
    FILE *f = tb_plt_script_open(x, d, name, title, &rc);
    if (!f)
        goto out;
    fprintf(f, "set style fill solid 0.4 border -1\n"
               "set style boxplot outliers pointtype 7\n"
               "set pointsize 0.4\nset boxwidth 0.6\nunset key\n"
               "set ylabel 'sample / median of the case'\n"
               "set xrange [0.3:%d.7]\nset bmargin %d\n"
               "set xlabel 'case (numbered below)'\nset xtics 1\n",
            n, 6 + n);
    /* ids are long: the boxes are numbered and the ids listed under the
     * plot, one per line, so none is cut at the image's edge */
    for (int k = 0; k < n; k++) {
        const tb_rcase *c = &s->cases[idx[k]];
        char t[1100];
        snprintf(t, sizeof t, "%d: %s", k + 1, c->id);
        fprintf(f, "set label %d ", k + 2);
        tb_gp_str(f, t);
        fprintf(f, " at screen 0.02, screen %.4f font ',8' noenhanced\n",
                (double)(16 * (n - k) + 8) / (H + 60 + 16 * n));
    }
    fprintf(f, "set label 1 'box: quartiles; whiskers: 1.5 IQR; points: "
               "outliers' at screen 0.02, screen %.4f font ',8'\n",
            (double)(16 * (n + 1) + 8) / (H + 60 + 16 * n));
    char body[512];
    snprintf(body, sizeof body,
             "plot for [i=0:%d] '%s.dat' index i using (i+1):1 with boxplot "
             "lc i+1\n", n - 1, name);
    tb_plt_gp_outputs(f, x->o, name, body, W, H + 60 + 16 * n);
    rc = tb_plt_close_out(x, f, name, "gp");
    if (!rc && !tb_plt_chart_add(x->out, TB_CHART_NOISE, "", name, title))
        rc = TB_ENOMEM;
out:
    free(idx);
    return rc;
}

/* ---- history ------------------------------------------------------------------- */

/* The runs of the history, oldest first: HISTORY documents in load
 * order, then the first MAIN one; none without a HISTORY document. */
static int history_runs(const tb_rset *s, int *runs)
{
    int n = 0;
    for (int d = 0; d < s->n_docs; d++)
        if (s->docs[d].role == TB_ROLE_HISTORY)
            runs[n++] = d;
    for (int d = 0; n > 0 && d < s->n_docs; d++)
        if (s->docs[d].role == TB_ROLE_MAIN) {
            runs[n++] = d;
            break;
        }
    return n;
}

static void run_label(const tb_rset *s, int d, int k, char *buf, size_t len)
{
    const tb_resfile *f = s->docs[d].file;
    snprintf(buf, len, "%d: %.10s %.12s", k + 1, f->date ? f->date : "",
             f->git_commit ? f->git_commit : "");
}

static const tb_rcase *case_in_doc(const tb_rset *s, int d, const char *id)
{
    for (int i = 0; i < s->n; i++)
        if (s->cases[i].doc == d && s->cases[i].ok &&
            !strcmp(s->cases[i].id, id))
            return &s->cases[i];
    return NULL;
}

/* The history of case id, or NULL. */
static const tb_hist_case *hist_case(const tb_history *h, const char *id)
{
    for (int i = 0; i < h->n; i++)
        if (!strcmp(h->cases[i].id, id))
            return &h->cases[i];
    return NULL;
}

/* The history chart of g's op and dtype over the runs runs[0..nr); h is
 * `tbench history` of the same runs: its steps are the change points. */
static int chart_history(pctx *x, int g, const int *runs, int nr,
                         const tb_history *h)
{
    const tb_rset *s = x->s;
    const tb_rcase *gc = &s->cases[g];
    int last = runs[nr - 1];
    /* series: case ids of the group in the newest run */
    int ids[MAX_SERIES], ni = 0;
    for (int i = 0; i < s->n && ni < MAX_SERIES; i++) {
        const tb_rcase *c = &s->cases[i];
        if (c->doc == last && c->ok && tb_plt_same_opdt(c, gc))
            ids[ni++] = i;
    }
    if (ni == 0)
        return 0;
    const double div = 1e9; /* seconds: gnuplot's SI ticks ("20 us") */
    char name[192], base[160], title[256];
    tb_plt_safe_name(base, sizeof base, gc->op);
    snprintf(name, sizeof name, "history-%s-%s", base, gc->dtype);
    snprintf(title, sizeof title,
             "%s (%s): median time per run, oldest first (change points "
             "circled)", gc->op, gc->dtype);
    FILE *d = tb_plt_open_out(x, name, "dat");
    if (!d)
        return TB_EIO;
    int ncp = 0;
    char *cps = NULL;
    size_t cpl = 0;
    FILE *cpf = open_memstream(&cps, &cpl);
    if (!cpf) {
        fclose(d);
        return TB_ENOMEM;
    }
    for (int k = 0; k < ni; k++) {
        const char *id = s->cases[ids[k]].id;
        fprintf(d, "%s# %s\n", k ? "\n\n" : "", id);
        for (int r = 0; r < nr; r++) {
            const tb_rcase *c = case_in_doc(s, runs[r], id);
            if (c)
                fprintf(d, "%d %.9g %.9g %.9g\n", r + 1, c->median / div,
                        c->ci_lo / div, c->ci_hi / div);
        }
        /* a step's run is the first run of the new level */
        const tb_hist_case *hc = hist_case(h, id);
        for (int k2 = 0; hc && k2 < hc->n_steps; k2++) {
            int r = hc->steps[k2].run;
            fprintf(cpf, "%d %.9g\n", r + 1,
                    hc->rc[r]->median_ns / div);
            ncp++;
        }
    }
    fclose(cpf);
    if (ncp)
        fprintf(d, "\n\n# change points\n%s", cps);
    free(cps);
    int rc;
    FILE *f = tb_plt_script_open(x, d, name, title, &rc);
    if (!f)
        return rc;
    fprintf(f, "set key below vertical\nset logscale y\n"
               "set ylabel 'median time per call'\n"
               "set format y '%%.0s %%cs'\nset xlabel 'run'\n"
               "set xrange [0.5:%d.5]\nset xtics rotate by -30 font ',8' (",
            nr);
    for (int r = 0; r < nr; r++) {
        char l[128];
        run_label(s, runs[r], r, l, sizeof l);
        fprintf(f, "%s", r ? ", " : "");
        tb_gp_str(f, l);
        fprintf(f, " %d", r + 1);
    }
    fprintf(f, ")\n");
    char *body;
    size_t blen;
    FILE *m = tb_plt_body_open(x, f, &body, &blen);
    if (!m)
        return TB_ENOMEM;
    for (int k = 0; k < ni; k++) {
        fprintf(m, "%s'%s.dat' index %d using 1:2:3:4 with yerrorlines lw 2 "
                   "pt 7 title ",
                k ? ", \\\n     " : "plot ", name, k);
        char t[1100];
        snprintf(t, sizeof t, "%s %s %s", s->cases[ids[k]].opp,
                 s->cases[ids[k]].shapes, s->cases[ids[k]].variant);
        tb_gp_str(m, t);
    }
    if (ncp)
        fprintf(m, ", \\\n     '%s.dat' index %d using 1:2 with points pt 6 "
                   "ps 3 lw 2 lc 'red' title 'change point'",
                name, ni);
    fprintf(m, "\n");
    rc = tb_plt_script_close(x, f, m, &body, name, W, H + 18 * ni);
    if (rc)
        return rc;
    char group[160];
    snprintf(group, sizeof group, "%s/%s", gc->op, gc->dtype);
    return tb_plt_chart_add(x->out, TB_CHART_HISTORY, group, name, title)
               ? 0
               : TB_ENOMEM;
}

/* ---- rendering ------------------------------------------------------------------ */

/* The gnuplot executable: $TBENCH_GNUPLOT (a path, or a name looked up
 * on PATH), else gnuplot on PATH.  false when not found. */
static bool find_gnuplot(char *path, size_t len)
{
    const char *want = getenv("TBENCH_GNUPLOT");
    if (!want)
        want = "gnuplot";
    if (!want[0])
        return false;
    if (strchr(want, '/')) {
        snprintf(path, len, "%s", want);
        return access(path, X_OK) == 0;
    }
    const char *p = getenv("PATH");
    if (!p)
        p = "/usr/bin:/bin";
    while (*p) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        snprintf(path, len, "%.*s/%s", (int)n, n ? p : ".", want);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
            access(path, X_OK) == 0)
            return true;
        p = e ? e + 1 : p + n;
    }
    return false;
}

/* Run gnuplot on SCRIPT in dir, its output appended to log_fd.  Returns
 * the exit status (127 when it could not be started), or -1. */
static int run_gnuplot(const char *gp, const char *dir, const char *script,
                       int log_fd)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0)
            dup2(nul, 0);
        if (log_fd >= 0) {
            dup2(log_fd, 1);
            dup2(log_fd, 2);
        }
        if (chdir(dir) != 0)
            _exit(126);
        execl(gp, "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool nonempty(const char *dir, const char *name, const char *ext)
{
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
    return stat(path, &st) == 0 && st.st_size > 0;
}

static void render(pctx *x, int first)
{
    char gp[4096];
    tb_chart_list *l = x->out;
    if (!find_gnuplot(gp, sizeof gp)) {
        l->gnuplot_missing = true;
        return;
    }
    char logp[4096];
    snprintf(logp, sizeof logp, "%s/gnuplot.log", x->o->dir);
    int fd = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW |
                            O_CLOEXEC, 0644);
    for (int i = first; i < l->n; i++) {
        char script[256];
        snprintf(script, sizeof script, "%s.gp", l->v[i].name);
        if (fd >= 0) {
            char head[300];
            int k = snprintf(head, sizeof head, "--- %s\n", script);
            if (write(fd, head, (size_t)k) < 0) { /* the log is best-effort */
            }
        }
        /* remove stale images so success means "made now" */
        char p[4096];
        snprintf(p, sizeof p, "%s/%s.png", x->o->dir, l->v[i].name);
        unlink(p);
        snprintf(p, sizeof p, "%s/%s.svg", x->o->dir, l->v[i].name);
        unlink(p);
        int st = run_gnuplot(gp, x->o->dir, script, fd);
        if (st == 127 && i == first) {
            l->gnuplot_missing = true;
            break;
        }
        l->v[i].rendered = st == 0 &&
                           (!x->o->png || nonempty(x->o->dir, l->v[i].name,
                                                   "png")) &&
                           (!x->o->svg || nonempty(x->o->dir, l->v[i].name,
                                                   "svg"));
        if (!l->v[i].rendered)
            l->n_failed++;
    }
    if (fd >= 0)
        close(fd);
}

/* ---- entry point ----------------------------------------------------------------- */

int tb_plot_write(const tb_rset *s, const tb_plot_opts *o, tb_chart_list *out,
                  char *err, size_t errlen)
{
    pctx x = {s, o, out, err, errlen};
    int rc = tb_mkdir_p(o->dir, err, errlen);
    if (rc)
        return rc;
    int first = out->n;
    unsigned mask = M_MAIN | M_WITH;
    for (int i = 0; i < s->n && !rc; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !tb_plt_inm(c, mask) || tb_plt_group_seen(s, i, mask))
            continue;
        rc = chart_vs_size(&x, i, TB_CHART_TIME);
        if (!rc)
            rc = chart_vs_size(&x, i, TB_CHART_THROUGHPUT);
        if (!rc)
            rc = chart_speedup(&x, i);
    }
    for (int i = 0; i < s->n && !rc; i++) { /* one per category, dtype */
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !tb_plt_inm(c, mask))
            continue;
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = s->cases[j].ok && tb_plt_inm(&s->cases[j], mask) &&
                   !strcmp(s->cases[j].category, c->category) &&
                   !strcmp(s->cases[j].dtype, c->dtype);
        if (!seen)
            rc = tb_plt_category(&x, i);
    }
    for (int i = 0; i < s->n && !rc; i++) { /* one per backend */
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = !strcmp(s->cases[j].backend, s->cases[i].backend);
        if (!seen)
            rc = chart_roofline(&x, i);
    }
    if (!rc)
        rc = chart_change(&x);
    if (!rc)
        rc = chart_noise(&x);
    bool steps = false;
    if (!rc)
        rc = tb_training_chart_write(s, o, &steps, err, errlen);
    if (!rc && steps &&
        !tb_plt_chart_add(out, TB_CHART_STEPS, "", TB_TRAINING_CHART,
                   TB_TRAINING_CHART_TITLE))
        rc = TB_ENOMEM;
    int runs[TB_RSET_MAX_DOCS];
    int nr = history_runs(s, runs);
    tb_history h = {0};
    if (nr >= 2 && !rc) {
        /* the change points of `tbench history` on the same runs */
        tb_resfile *files[TB_RSET_MAX_DOCS];
        tb_hist_opts ho;
        tb_hist_opts_default(&ho);
        for (int r = 0; r < nr; r++)
            files[r] = s->docs[runs[r]].file;
        int hr = tb_history_build(files, nr, &ho, &h, err, errlen);
        if (hr == TB_ENOMEM)
            rc = hr;
        else if (hr) /* a run shares no case with the earlier ones */
            nr = 0;
    }
    if (nr >= 2 && !rc) {
        for (int i = 0; i < s->n && !rc; i++) {
            const tb_rcase *c = &s->cases[i];
            if (!c->ok || c->doc != runs[nr - 1])
                continue;
            bool seen = false;
            for (int k = 0; k < i && !seen; k++)
                seen = s->cases[k].doc == c->doc && s->cases[k].ok &&
                       tb_plt_same_opdt(&s->cases[k], c);
            if (seen)
                continue;
            rc = chart_history(&x, i, runs, nr, &h);
        }
    }
    tb_history_free(&h);
    if (rc == TB_ENOMEM)
        snprintf(err, errlen, "out of memory");
    if (rc)
        return rc;
    if (o->render)
        render(&x, first);
    return 0;
}
