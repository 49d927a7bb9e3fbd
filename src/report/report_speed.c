/* The report's speed sections: the fastest backend per op and size, a
 * table per category of ops, speedups over the reference backend with
 * the selection guidelines, and the cost of host transfers
 * (report_impl.h). */
#include "report_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What "significant" means in these sections: compare's verdict on the
 * pair (tb_rpt_versus), as its text says. */
#define COMPARE_TEST                                                      \
    "Mann-Whitney U on the two cases' samples with p below 0.01, a ratio " \
    "of medians beyond the noise floor (the 2% threshold, or the runs' "   \
    "own noise when larger) and a 95% bootstrap CI of the ratio on the "   \
    "same side of 1"

/* A p-value for the summary table. */
static const char *fmt_p(double p, char *buf, size_t len)
{
    if (isnan(p))
        snprintf(buf, len, "not tested");
    else if (p < 1e-4)
        snprintf(buf, len, "p < 0.0001");
    else
        snprintf(buf, len, "p = %.2g", p);
    return buf;
}

/* ---- summary: fastest per op and size ------------------------------------ */

/* A case whose data started and ended on the host (config "transfers";
 * its variant ends in "@transfers"). */
static bool is_transfers(const tb_rcase *c)
{
    return c->rc->transfers;
}

/* Are d (data resident on the device) and t (data starting on the host)
 * one case run both ways: ok, the same document and key, t's variant
 * d's with "@transfers"? */
static bool twins(const tb_rcase *d, const tb_rcase *t)
{
    size_t n = strlen(t->variant) - strlen("@transfers");
    return d->ok && t->ok && !is_transfers(d) && is_transfers(t) &&
           d->doc == t->doc && !strcmp(d->key, t->key) &&
           strlen(d->variant) == n && !strncmp(d->variant, t->variant, n);
}

/* The resident twin of a transfers case t, or NULL. */
static const tb_rcase *resident_twin(const tb_rset *s, const tb_rcase *t)
{
    for (int i = tb_rset_key_first(s, t->key); i >= 0; i = s->key_next[i])
        if (twins(&s->cases[i], t))
            return &s->cases[i];
    return NULL;
}

/* Does the resident case c have an @transfers twin that ran? */
static bool has_transfers_twin(const tb_rset *s, const tb_rcase *c)
{
    for (int i = tb_rset_key_first(s, c->key); i >= 0; i = s->key_next[i])
        if (twins(c, &s->cases[i]))
            return true;
    return false;
}

/* Is case d one of the competitors of a view: resident (transfers
 * false: every case whose data stays where its backend keeps it, no
 * @transfers case) or host (true: the data starts and ends on the
 * host: the @transfers cases and the cases of backends without them)? */
static bool in_view(const tb_rset *s, const tb_rcase *d, bool transfers)
{
    if (!transfers)
        return !d->rc->transfers;
    return d->rc->transfers || !has_transfers_twin(s, d);
}

/* The fastest ok case of key among the roles of mask in a view, and the
 * next fastest (NULL when only one ran): the Summary's (resident view)
 * and the selection guidelines' one choice. */
static void best_of_key(const tb_rset *s, const char *key, unsigned mask,
                        bool transfers, const tb_rcase **best,
                        const tb_rcase **next)
{
    *best = *next = NULL;
    for (int k = tb_rset_key_first(s, key); k >= 0; k = s->key_next[k]) {
        const tb_rcase *d = &s->cases[k];
        if (!d->ok || !tb_rpt_in(d, mask) || !in_view(s, d, transfers))
            continue;
        if (!*best || d->median < (*best)->median) {
            *next = *best;
            *best = d;
        } else if (!*next || d->median < (*next)->median) {
            *next = d;
        }
    }
}

/* The Summary's "Winner" cell for compare's verdict of the fastest
 * against the next (tb_rpt_versus_verdict). */
static const char *winner_word(int v)
{
    return v == TB_TIME_IMPROVED       ? "yes"
           : v == TB_TIME_UNCHANGED    ? "no winner (equal within the threshold)"
           : v == TB_TIME_INCONCLUSIVE ? "no winner (inconclusive)"
                                       : "no winner (not tested)";
}

void tb_rpt_summary(const tb_rpt *x)
{
    const tb_rset *s = x->s;
    unsigned mask = M_MAIN | M_WITH;
    bool any = false, multi = false;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !tb_rpt_in(c, mask))
            continue;
        any = true;
        for (int k = tb_rset_key_first(s, c->key); k >= 0 && !multi;
             k = s->key_next[k])
            multi = k != i && s->cases[k].ok &&
                    tb_rpt_in(&s->cases[k], mask);
    }
    if (!any)
        return;
    tb_strbuf *b = x->b;
    sb(b, "## Summary: fastest backend per op and size\n\n"
          "For each op, shape and dtype, the backend with the lowest median "
          "time%s.%s\n\n",
       x->s->n_docs > 1 ? " among all files of this report" : "",
       multi ? " \"Next\" is the second fastest and how much slower it is "
               "(ratio of medians). \"Winner\" says whether the fastest "
               "beats the next by the verdict `tbench compare` gives the "
               "pair (" COMPARE_TEST "); where it does not, there is no "
               "winner, and the cell says why: the two are equal within "
               "the threshold, or the run cannot tell (inconclusive)."
             : "");
    sb(b, "| Op | Shapes | Dtype | Fastest | Median |%s\n"
          "|---|---|---|---|---|%s\n",
       multi ? " Next | Next is slower by | Winner |" : "",
       multi ? "---|---|---|" : "");
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !tb_rpt_in(c, mask) ||
            tb_rpt_seen_before(x, i, mask, F_KEY, true))
            continue;
        const tb_rcase *best, *next;
        best_of_key(s, c->key, mask, false, &best, &next);
        char m[32], nm[32], r[32];
        sb(b, "| %s | %s | %s | %s | %s |", c->opp, c->shapes, c->dtype,
           best->variant, tb_report_fmt_time(best->median, best->median, m,
                                             sizeof m));
        if (multi) {
            if (next) {
                double p;
                char pt[32];
                int v = tb_rpt_versus_verdict(best, next, &p);
                sb(b, " %s (%s) | %sx | %s (%s) |", next->variant,
                   tb_report_fmt_time(next->median, next->median, nm,
                                      sizeof nm),
                   tb_md_num(next->median / best->median, r, sizeof r),
                   winner_word(v), fmt_p(p, pt, sizeof pt));
            } else {
                sb(b, " only one backend ran | | |");
            }
        }
        sb(b, "\n");
    }
    sb(b, "\n");
}

/* ---- per-category sections ----------------------------------------------- */

enum { K_RATE, K_FLOPS, K_STEPS, K_TIME };

static const struct {
    const char *title;
    const char *cats; /* comma-separated category names */
    int kind;
} sections[] = {
    {"Element-wise", "elementwise", K_RATE},
    {"Activations", "activation", K_RATE},
    {"Reductions", "reduction", K_RATE},
    {"Matrix multiplication", "matmul,gemm,bmm,contraction", K_FLOPS},
    {"Transpose and layout", "layout,transpose", K_RATE},
    {"NN ops: softmax, convolution, pooling, normalization",
     "softmax,conv,convolution,pool,pooling,norm,normalization,nn,loss,"
     "attention",
     K_RATE},
    {"Fused ops", "fused,unfused", K_RATE},
    {"Creation", "creation", K_RATE},
    {"In-place forms", "inplace", K_RATE},
    {"Optimizers", "optimizer,optim", K_STEPS},
    {"Linear algebra", "linalg,lapack,decomposition,solve", K_FLOPS},
    {"API overhead", "overhead,api", K_TIME},
    {"Backward ops (gradients)", "backward", K_RATE},
    {"Training workloads: model steps, hooks, API layers, pool", "workload",
     K_TIME},
};
#define N_SECTIONS ((int)(sizeof sections / sizeof sections[0]))

static bool in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == n && !strncmp(p, name, n))
            return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

static int section_of(const char *cat)
{
    for (int i = 0; i < N_SECTIONS; i++)
        if (in_list(sections[i].cats, cat))
            return i;
    return -1;
}

/* Is c an ok MAIN case of the table of section sect (or, for sect < 0,
 * of category cat)? */
static bool in_table(const tb_rcase *c, int sect, const char *cat)
{
    return c->ok && tb_rpt_in(c, M_MAIN) &&
           (sect >= 0 ? section_of(c->category) == sect
                      : cat && strcmp(c->category, cat) == 0);
}

/* The attainable time per call the case's roofline records (NAN when it
 * has none) and what bounds it: "copy, L3" for memory (the bandwidth
 * kernel and cache level), "avx512 FMA" for compute. */
static double case_bound(const tb_rcase *c, char *what, size_t len)
{
    const tb_res_fields *r = &c->rc->f;
    double t = r->roofline_min_time_ns;
    if (isnan(t) || t <= 0)
        return NAN;
    if (r->roofline_bound && !strcmp(r->roofline_bound, "compute"))
        snprintf(what, len, "%s FMA%s%s",
                 r->roofline_isa ? r->roofline_isa : "?",
                 r->roofline_peak_dtype &&
                         strcmp(r->roofline_peak_dtype, c->dtype)
                     ? ", "
                     : "",
                 r->roofline_peak_dtype &&
                         strcmp(r->roofline_peak_dtype, c->dtype)
                     ? r->roofline_peak_dtype
                     : "");
    else
        snprintf(what, len, "%s, %s",
                 r->roofline_bw_kernel ? r->roofline_bw_kernel : "?",
                 r->roofline_level ? r->roofline_level : "?");
    return t;
}

/* Which cases of the table ran on a GPU that held its clock down, why,
 * and how far (gpu_clock). */
static void throttle_note(const tb_rpt *x, int sect, const char *cat)
{
    const tb_rset *s = x->s;
    sb(x->b, "**GPU throttled**: NVML reported a power or thermal limit "
             "holding the SM clock down while these cases were timed "
             "(`gpu_clock`), so they ran slower than the GPU can; cool the "
             "GPU or check its power limit, and run them again.\n\n");
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!in_table(c, sect, cat) || !c->rc->f.gpu_clock_throttled)
            continue;
        sb(x->b, "- `%s`: SM clock %.0f-%.0f MHz;", c->id,
           c->rc->f.gpu_clock_sm_mhz_min, c->rc->f.gpu_clock_sm_mhz_max);
        for (int k = 0; k < c->rc->n_throttle_reasons; k++)
            sb(x->b, "%s %s", k ? "," : "", c->rc->throttle_reasons[k]);
        sb(x->b, "\n");
    }
    sb(x->b, "\n");
}

/* The optional columns of a category table: steps/s, GB/s, GFLOP/s,
 * "of peak" and "time / bound", each when a case has the figure. */
typedef struct {
    int kind;
    bool steps, gb, gf, pf, bd;
} columns;

/* The table's intro and header. */
static void table_head(const tb_rpt *x, const columns *k, const char *title)
{
    tb_strbuf *b = x->b;
    sb(b, "## %s\n\n", title);
    sb(b, "Median time per call with its 95%% bootstrap confidence "
          "interval%s%s%s%s.\n\n",
       k->steps ? "; steps/s is calls per second (1 / median)" : "",
       k->gb || k->gf ? "; rates are the op's cost model (bytes moved, "
                        "FLOPs) divided by the median"
                      : "",
       k->pf ? "; \"of peak\" is the case's roofline fraction: the time the "
               "measured machine peaks allow for its FLOPs and bytes, "
               "divided by the median"
             : "",
       k->bd ? "; \"time / bound\" is its inverse, the median over that "
               "attainable time, with the bound itself and what sets it "
               "(the bandwidth kernel and cache level of a memory bound: a "
               "copy, a read or an add of the op's bytes; or the FMA peak "
               "of a compute bound)"
             : "");
    bool gb = k->gb && k->kind != K_TIME, gf = k->gf && k->kind != K_TIME;
    sb(b, "| Op | Shapes | Dtype | Backend | Median | 95%% CI |%s%s%s%s%s "
          "Samples | Stopped by |\n|---|---|---|---|---|---|",
       k->steps ? " Steps/s |" : "", gb ? " GB/s |" : "",
       gf ? " GFLOP/s |" : "", k->pf ? " Of peak |" : "",
       k->bd ? " Time / bound |" : "");
    int extra = k->steps + gb + gf + k->pf + k->bd;
    for (int e = 0; e < extra; e++)
        sb(b, "---|");
    sb(b, "---|---|\n");
}

/* One row; *over counts the cases above their roofline. */
static void table_row(const tb_rpt *x, const columns *k, const tb_rcase *c,
                      int *over)
{
    tb_strbuf *b = x->b;
    char m[32], lo[32], hi[32], v[32];
    sb(b, "| %s | %s | %s | %s | %s | %s – %s |", c->opp, c->shapes,
       c->dtype, c->variant,
       tb_report_fmt_time(c->median, c->median, m, sizeof m),
       tb_report_fmt_time(c->ci_lo, c->median, lo, sizeof lo),
       tb_report_fmt_time(c->ci_hi, c->median, hi, sizeof hi));
    if (k->steps)
        sb(b, " %s |", tb_md_rate(1e9 / c->median, v, sizeof v));
    if (k->gb && k->kind != K_TIME)
        sb(b, " %s |", isnan(c->gb_s) ? "" : tb_md_num(c->gb_s, v, sizeof v));
    if (k->gf && k->kind != K_TIME)
        sb(b, " %s |",
           isnan(c->gflop_s) ? "" : tb_md_num(c->gflop_s, v, sizeof v));
    if (k->pf) {
        double f = c->rc->f.roofline_fraction;
        if (isnan(f))
            sb(b, " |");
        else if (f > 1) {
            char why[256];
            sb(b, " %.0f%% (**above the roof**: %s) |", 100 * f,
               tb_rpt_over_roof_cause(x, c, why, sizeof why));
            (*over)++;
        } else
            sb(b, " %.0f%% |", 100 * f);
    }
    if (k->bd) {
        char w[64], t[32];
        double bt = case_bound(c, w, sizeof w);
        if (isnan(bt))
            sb(b, " |");
        else
            sb(b, " %.2fx of %s (%s) |", c->median / bt,
               tb_report_fmt_time(bt, bt, t, sizeof t), w);
    }
    sb(b, " %d x %.0f | %s%s |\n", c->n, c->iters,
       c->stop_reason ? c->stop_reason : "?",
       c->rc->f.gpu_clock_throttled ? "; **GPU throttled**" : "");
}

/* The table of the ok MAIN cases in sect (or, for sect < 0, with
 * category cat), its notes, then the charts of its ops. */
static void category_table(const tb_rpt *x, int sect, const char *cat,
                           const char *title)
{
    const tb_rset *s = x->s;
    columns k = {.kind = sect >= 0 ? sections[sect].kind : K_RATE};
    bool any = false;
    k.steps = k.kind == K_STEPS;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!in_table(c, sect, cat))
            continue;
        any = true;
        k.gb = k.gb || !isnan(c->gb_s);
        k.gf = k.gf || !isnan(c->gflop_s);
        k.pf = k.pf || !isnan(c->rc->f.roofline_fraction);
        char w[64];
        k.bd = k.bd || !isnan(case_bound(c, w, sizeof w));
    }
    if (!any)
        return;
    table_head(x, &k, title);
    int over = 0;      /* cases above their roofline */
    int throttled = 0; /* cases timed while their GPU throttled */
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!in_table(c, sect, cat))
            continue;
        table_row(x, &k, c, &over);
        throttled += c->rc->f.gpu_clock_throttled;
    }
    sb(x->b, "\n");
    if (over)
        tb_rpt_over_peak_note(x, over);
    if (throttled)
        throttle_note(x, sect, cat);
    /* the summary of each category and dtype of the section (its ops
     * measured at one size), then the charts of its ops, in order */
    char done[32][200];
    int nd = 0;
    for (int i = 0; i < s->n && nd < 32; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!in_table(c, sect, cat))
            continue;
        char g[200];
        snprintf(g, sizeof g, "category:%s/%s", c->category, c->dtype);
        bool seen = false;
        for (int j = 0; j < nd && !seen; j++)
            seen = !strcmp(done[j], g);
        if (seen)
            continue;
        snprintf(done[nd++], sizeof done[0], "%s", g);
        tb_rpt_chart_links(x, TB_CHART_TIME, g);
    }
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!in_table(c, sect, cat) ||
            tb_rpt_seen_before(x, i, M_MAIN, F_OPDT, true))
            continue;
        char g[160];
        snprintf(g, sizeof g, "%s/%s", c->op, c->dtype);
        tb_rpt_chart_links(x, TB_CHART_TIME, g);
        tb_rpt_chart_links(x, TB_CHART_THROUGHPUT, g);
    }
}

void tb_rpt_categories(const tb_rpt *x)
{
    for (int k = 0; k < N_SECTIONS; k++)
        category_table(x, k, NULL, sections[k].title);
    const tb_rset *s = x->s;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !tb_rpt_in(c, M_MAIN) ||
            section_of(c->category) >= 0 ||
            tb_rpt_seen_before(x, i, M_MAIN, F_CAT, true))
            continue;
        char t[200];
        snprintf(t, sizeof t, "Other ops: %s", c->category);
        category_table(x, -1, c->category, t);
    }
}

/* ---- backend speedups and crossovers ------------------------------------- */

/* Speedup of c over its reference ref, and compare's verdict on the
 * pair (+1 c faster, -1 slower, 0 neither). */
static double speedup(const tb_rpt *x, const tb_rcase *ref,
                      const tb_rcase *c, int *sig)
{
    *sig = tb_rpt_vs_ref(x, c, ref);
    return ref->median / c->median;
}

/* One size's outcome for the guidelines: the winner (NULL: none), the
 * next fastest and compare's verdict of the one against the other. */
typedef struct {
    const tb_rcase *best, *next;
    int verdict;
} g_size;

/* The same outcome at two neighbouring sizes (one run of sizes)? */
static bool g_same(const g_size *a, const g_size *b)
{
    bool wa = a->verdict == TB_TIME_IMPROVED,
         wb = b->verdict == TB_TIME_IMPROVED;
    if (wa != wb)
        return false;
    return wa ? !strcmp(a->best->variant, b->best->variant)
              : a->verdict == b->verdict;
}

/* The guideline of case i's op (with params) and dtype: over its
 * measured sizes in order of work, the fastest variant of each size
 * (the Summary's choice, best_of_key) where compare's test finds it
 * faster than the next fastest, else "no winner" and why; consecutive
 * sizes with the same outcome are one range. */
static void guideline(const tb_rpt *x, int i, unsigned mask, bool transfers)
{
    const tb_rset *s = x->s;
    int *v;
    int n = tb_rpt_collect_sorted(x, i, mask, F_OPPDT, &v);
    g_size *g = calloc((size_t)(n ? n : 1), sizeof *g);
    int m = 0;
    for (int k = 0; g && k < n; k++) {
        const tb_rcase *c = &s->cases[v[k]];
        if (!in_view(s, c, transfers))
            continue;
        bool seen = false;
        for (int j = 0; j < m && !seen; j++)
            seen = !strcmp(g[j].best->key, c->key);
        if (seen)
            continue;
        const tb_rcase *best, *next;
        best_of_key(s, c->key, mask, transfers, &best, &next);
        if (!next)
            continue; /* one variant: nothing to choose */
        double p;
        g[m++] = (g_size){best, next, tb_rpt_versus_verdict(best, next, &p)};
    }
    free(v);
    if (m == 0) {
        free(g);
        return;
    }
    sb(x->b, "- %s %s%s:", s->cases[i].opp, s->cases[i].dtype,
       transfers ? ", data starting on the host" : "");
    for (int a = 0; a < m;) {
        int z = a;
        while (z + 1 < m && g_same(&g[a], &g[z + 1]))
            z++;
        char lo[32], hi[32];
        double rlo = INFINITY, rhi = 0;
        for (int k = a; k <= z; k++) {
            double r = g[k].next->median / g[k].best->median;
            rlo = r < rlo ? r : rlo;
            rhi = r > rhi ? r : rhi;
        }
        tb_md_num(rlo, lo, sizeof lo);
        tb_md_num(rhi, hi, sizeof hi);
        char range[96];
        snprintf(range, sizeof range, strcmp(lo, hi) ? "%s-%sx" : "%sx", lo,
                 hi);
        bool one_next = true; /* the same runner-up over the range */
        for (int k = a + 1; k <= z; k++)
            one_next = one_next &&
                       !strcmp(g[k].next->variant, g[a].next->variant);
        sb(x->b, "%s at %s%s%s: ", a ? ";" : "", g[a].best->shapes,
           a == z ? "" : " to ", a == z ? "" : g[z].best->shapes);
        if (g[a].verdict == TB_TIME_IMPROVED)
            sb(x->b, "use %s (%s faster than the next%s%s)",
               g[a].best->variant, range, one_next ? ", " : "",
               one_next ? g[a].next->variant : "");
        else if (g[a].verdict == TB_TIME_UNCHANGED)
            sb(x->b, "no winner: the fastest two are equal within the "
                     "threshold (%s)",
               range);
        else
            sb(x->b, "no winner: inconclusive, this run cannot tell the "
                     "fastest two apart (%s)",
               range);
        a = z + 1;
    }
    sb(x->b, ".\n");
    free(g);
}

/* The guideline lines of every op and dtype into x->b; how many bytes
 * they took. */
static size_t guidelines(const tb_rpt *x)
{
    const tb_rset *s = x->s;
    size_t at = x->b->n;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !tb_rpt_in(c, M_MAIN | M_WITH) ||
            tb_rpt_seen_before(x, i, M_MAIN | M_WITH, F_OPPDT, true))
            continue;
        guideline(x, i, M_MAIN | M_WITH, false);
        bool any_transfers = false;
        for (int k = x->same[F_OPPDT][i]; k >= 0 && !any_transfers;
             k = x->same_next[F_OPPDT][k])
            any_transfers = s->cases[k].ok && s->cases[k].rc->transfers;
        if (any_transfers)
            guideline(x, i, M_MAIN | M_WITH, true);
    }
    return x->b->n - at;
}

/* "Selection guidelines (measured)": under the speedups (a subsection)
 * or, in a run without a reference backend (two variants neither of
 * which is the reference: cuda and blas; a peer's run beside the main
 * one), a section of its own.  Nothing when no op and dtype had two
 * variants to choose between. */
static void selection_guidelines(const tb_rpt *x, bool sub)
{
    tb_strbuf lines = {0};
    tb_rpt y = *x;
    y.b = &lines;
    if (!guidelines(&y)) {
        tb_strbuf_free(&lines);
        return;
    }
    sb(x->b, "%s Selection guidelines (measured)\n\n"
          "Per op and dtype, over the measured sizes in order of work: the "
          "fastest variant of each size (the Summary's) where the verdict "
          "of `tbench compare` finds it faster than the next fastest; "
          "otherwise no winner, and why: the two are equal within the "
          "threshold, or the run cannot tell them apart (inconclusive). "
          "Consecutive sizes with the same outcome form one range; the "
          "ratio is the next fastest's median over the winner's. A device "
          "backend's `@transfers` cases get a line of their own (\"data "
          "starting on the host\"), against the backends that keep their "
          "data on the host.\n\n",
       sub ? "\n###" : "##");
    if (lines.oom)
        x->b->oom = true;
    else
        tb_strbuf_put(x->b, lines.p, lines.n);
    tb_strbuf_free(&lines);
    sb(x->b, "\n");
}

void tb_rpt_speedups(const tb_rpt *x)
{
    const tb_rset *s = x->s;
    unsigned mask = M_MAIN; /* NumPy/PyTorch have their own section */
    bool any = false;
    for (int i = 0; i < s->n && !any; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !tb_rpt_in(c, mask))
            continue;
        const tb_rcase *ref = tb_rset_reference(s, c->key, M_MAIN);
        any = ref && ref != c;
    }
    if (!any) {
        selection_guidelines(x, false);
        return;
    }
    tb_strbuf *b = x->b;
    sb(b, "## Backend speedups\n\n"
          "Speedup = median time of the reference backend / median time of "
          "the backend, per op, shape and dtype (higher is faster). The "
          "reference is backend `cpu` with `isa=scalar` when the run has it, "
          "else `cpu` with `threads=1`. \"Significant\" is the verdict "
          "`tbench compare` gives the pair: %s.\n\n"
          "| Op | Shapes | Dtype | Backend | Median | Reference | Speedup | "
          "Significant |\n|---|---|---|---|---|---|---|---|\n",
       COMPARE_TEST);
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !tb_rpt_in(c, mask))
            continue;
        const tb_rcase *ref = tb_rset_reference(s, c->key, M_MAIN);
        if (!ref || ref == c)
            continue;
        int sig;
        char m[32], r[32], sp[32];
        double x_ = speedup(x, ref, c, &sig);
        sb(b, "| %s | %s | %s | %s | %s | %s (%s) | %sx | %s |\n", c->opp,
           c->shapes, c->dtype, c->variant,
           tb_report_fmt_time(c->median, c->median, m, sizeof m),
           ref->variant, tb_report_fmt_time(ref->median, ref->median, r,
                                            sizeof r),
           tb_md_num(x_, sp, sizeof sp),
           sig > 0 ? "faster" : sig < 0 ? "slower" : "no");
    }
    selection_guidelines(x, true);
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !tb_rpt_in(c, mask) ||
            tb_rpt_seen_before(x, i, mask, F_OPDT, true))
            continue;
        char g[160];
        snprintf(g, sizeof g, "%s/%s", c->op, c->dtype);
        tb_rpt_chart_link(x, tb_rpt_chart(x, TB_CHART_SPEEDUP, g));
    }
}

/* ---- with and without transfers ------------------------------------------ */

/* The crossover section split by the transfers axis: per op, shape and
 * device variant, the resident time and the time with the data starting
 * and ending on the host, each against the reference backend. */
void tb_rpt_transfers(const tb_rpt *x)
{
    const tb_rset *s = x->s;
    bool any = false;
    for (int i = 0; i < s->n && !any; i++) {
        const tb_rcase *c = &s->cases[i];
        any = c->ok && tb_rpt_in(c, M_MAIN) && is_transfers(c) &&
              resident_twin(s, c);
    }
    if (!any)
        return;
    tb_strbuf *b = x->b;
    sb(b, "### With and without transfers (measured)\n\n"
          "Cases run twice on a device backend: with the data resident on "
          "the device (uploaded once, outside the timing) and with "
          "`\"transfers\": true` (every call uploads its inputs from host "
          "memory and downloads its outputs: the data starts and ends on "
          "the host; ids ending in `@transfers`). Speedups are against the "
          "reference backend above; transfer cost is the difference of "
          "the two medians as a share of the time with transfers. The "
          "selection guidelines above name the fastest variant at each "
          "size: the `@transfers` op's line says from which size the "
          "device wins when the data lives on the host.\n\n"
          "| Op | Shapes | Dtype | Backend | Resident | Speedup | "
          "With transfers | Speedup | Transfer cost |\n"
          "|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !tb_rpt_in(c, M_MAIN) || !is_transfers(c) ||
            tb_rpt_seen_before(x, i, M_MAIN, F_SERIES, true))
            continue;
        int *v;
        int n = tb_rpt_collect_sorted(x, i, M_MAIN, F_SERIES, &v);
        for (int k = 0; k < n; k++) {
            const tb_rcase *t = &s->cases[v[k]];
            const tb_rcase *r = resident_twin(s, t);
            if (!r)
                continue;
            const tb_rcase *ref = tb_rset_reference(s, t->key, M_MAIN);
            char mr[32], mt[32], sr[32] = "-", st[32] = "-";
            if (ref && ref != r && ref != t) {
                char a[32];
                snprintf(sr, sizeof sr, "%sx",
                         tb_md_num(ref->median / r->median, a, sizeof a));
                snprintf(st, sizeof st, "%sx",
                         tb_md_num(ref->median / t->median, a, sizeof a));
            }
            sb(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %.0f%% |\n",
               t->opp, t->shapes, t->dtype, r->variant,
               tb_report_fmt_time(r->median, r->median, mr, sizeof mr), sr,
               tb_report_fmt_time(t->median, t->median, mt, sizeof mt), st,
               t->median > 0 ? 100 * (t->median - r->median) / t->median
                             : 0.0);
        }
        free(v);
    }
    sb(b, "\n");
}

