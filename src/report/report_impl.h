/* The Markdown report's own parts, shared by its files: report.c (the
 * head and the sections in order), report_cases.c (the helpers below),
 * report_env.c (how to reproduce, the build, the environment),
 * report_speed.c (summary, category tables, speedups, transfers),
 * report_work.c (counters, fused ops, scaling, threads) and
 * report_runs.c (the baseline, the side-by-side files, noise, the cases
 * that did not run).  Not for the rest of the tree, which includes
 * report.h. */
#ifndef TB_REPORT_REPORT_IMPL_H
#define TB_REPORT_REPORT_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "../base/strbuf.h"
#include "mdtext.h"
#include "plot.h"
#include "report.h"

/* What every section reads: the set, the options, the text so far, the
 * MAIN document and the BASELINE one (-1 when none). */
/* What groups cases: the key; op and dtype; a series (document, op and
 * params, dtype, variant); the category; op and variant (NumPy and
 * PyTorch: thread counts share a row); document and variant; op with
 * its params and dtype (every variant). */
enum { F_KEY, F_OPDT, F_SERIES, F_CAT, F_OPVAR, F_VARIANT, F_OPPDT,
       F_COUNT };

typedef struct tb_rpt {
    const tb_rset *s;
    const tb_report_opts *o;
    tb_strbuf *b;
    int main_doc;
    int base_doc;
    signed char *vs_ref; /* per case, tb_rpt_vs_ref's verdict, 2: not yet */
    /* Per field f (F_*), the cases grouped by their value of f, so that a
     * section finds a case's group in the group's size, not in all cases
     * (tb_rpt_group_fields): same[f][i] is the first case with case i's
     * value, same_next[f][i] the next one after i, -1 after the last. */
    int *same[F_COUNT];
    int *same_next[F_COUNT];
} tb_rpt;

#define sb tb_strbuf_add

#define M_MAIN TB_RSET_MASK(TB_ROLE_MAIN)
#define M_WITH TB_RSET_MASK(TB_ROLE_WITH)

/* Is c of a role in mask? */
static inline bool tb_rpt_in(const tb_rcase *c, unsigned mask)
{
    return (mask & TB_RSET_MASK(c->role)) != 0;
}

/* The MAIN document's file. */
static inline const tb_resfile *tb_rpt_main(const tb_rpt *x)
{
    return x->s->docs[x->main_doc].file;
}

/* The size used to order a series: the cost model's work, the measure
 * that "grows" between sizes (FLOPs, else bytes, else elements). */
double tb_rpt_work(const tb_rcase *c);

/* The column label of a WITH case: its variant without the threads axis
 * ("numpy[form=out]"). */
void tb_rpt_column_label(const tb_rcase *c, char *buf, size_t len);


/* Do a and b have the same field f? */
bool tb_rpt_same(const tb_rcase *a, const tb_rcase *b, int f);

/* Fill x->same and x->same_next for every field: 0 or TB_ENOMEM.  Free
 * them with tb_rpt_ungroup (also after a failure). */
int tb_rpt_group_fields(tb_rpt *x);
void tb_rpt_ungroup(tb_rpt *x);

/* Is there an earlier case (index < i) of mask (ok ones only when
 * ok_only) with case i's field f? */
bool tb_rpt_seen_before(const tb_rpt *x, int i, unsigned mask, int f,
                        bool ok_only);

/* Indices of the ok cases of mask with case i's field f, sorted by
 * work (then file order).  Returns the count; *out is heap. */
int tb_rpt_collect_sorted(const tb_rpt *x, int i, unsigned mask, int f,
                          int **out);
/* When case i is the first ok MAIN case of its series (op, parameters,
 * dtype, backend): the series' ok cases sorted by work into *out (to
 * free) and their count; else 0 and *out NULL. */
int tb_rpt_series_at(const tb_rpt *x, int i, int **out);

/* The ok case of c's document and variant with this key, or NULL. */
const tb_rcase *tb_rpt_find_key(const tb_rset *s, const tb_rcase *c,
                                const char *key);

/* Compare's verdict on a against b, one run a side (tb_cmp_pair): +1 a
 * is faster (improved), -1 slower (regressed), 0 neither; *p gets the
 * p-value (NAN when not tested). */
int tb_rpt_versus(const tb_rcase *a, const tb_rcase *b, double *p);

/* The same pair's verdict word: TB_TIME_IMPROVED (a faster),
 * _REGRESSED, _UNCHANGED (equal within the threshold), _INCONCLUSIVE,
 * or TB_TIME_NA (not tested). */
int tb_rpt_versus_verdict(const tb_rcase *a, const tb_rcase *b, double *p);

/* compare's whole judgement of nw against old (its default options): 0
 * with *v filled, or TB_ENOMEM; v->time is TB_TIME_NA unless both ran.
 * The report sections' one call of tb_cmp_pair. */
struct tb_cmp_case;
int tb_rpt_pair(const tb_rcase *old, const tb_rcase *nw,
                struct tb_cmp_case *v);

/* tb_rpt_versus(c, its reference ref), computed once per case. */
int tb_rpt_vs_ref(const tb_rpt *x, const tb_rcase *c, const tb_rcase *ref);

/* The rendered chart of kind (and group, when not NULL), or NULL; its
 * Markdown image line. */
const tb_chart *tb_rpt_chart(const tb_rpt *x, tb_chart_kind kind,
                             const char *group);
void tb_rpt_chart_link(const tb_rpt *x, const tb_chart *ch);
/* Every rendered chart of kind and group, in order (a chart with more
 * series than one image holds comes in parts). */
void tb_rpt_chart_links(const tb_rpt *x, tb_chart_kind kind,
                        const char *group);

/* One JSON value of the environment as table text (a string, yes/no,
 * "not recorded" for null, a number, "k: v, ..." for an object). */
const char *tb_rpt_value_text(const cJSON *v, char *buf, size_t len);

/* Why cases ran faster than their roofline allows (report_env.c). */
void tb_rpt_over_peak_note(const tb_rpt *x, int over);
/* Why case c runs above 100% of its roofline, from the run's records: a
 * working set that fits the L1 in peaks without an L1 level, a roof
 * below a fewer-thread figure, an in-place op held to the add kernel, a
 * DRAM-level set far below the DRAM roof's, an L2- or L3-level set a
 * quarter or more of which the level below holds, a fraction above 1 by
 * no more than the roof's own repetitions spread, peaks measured under
 * load, else "no measured cause".  Writes buf. */
const char *tb_rpt_over_roof_cause(const tb_rpt *x, const tb_rcase *c,
                                   char *buf, size_t len);

/* The sections, in the report's order. */
void tb_rpt_reproduce(const tb_rpt *x);
void tb_rpt_build(const tb_rpt *x);
void tb_rpt_environment(const tb_rpt *x);
void tb_rpt_summary(const tb_rpt *x);
void tb_rpt_categories(const tb_rpt *x);
void tb_rpt_speedups(const tb_rpt *x);
void tb_rpt_dtypes(const tb_rpt *x);
void tb_rpt_transfers(const tb_rpt *x);
/* "Layouts": each layout case beside its contiguous twin (report_layout.c). */
void tb_rpt_layouts(const tb_rpt *x);
void tb_rpt_counters(const tb_rpt *x);
void tb_rpt_fused(const tb_rpt *x);
void tb_rpt_scaling(const tb_rpt *x);
/* report_fit.c: the complexity fits of the series of 3+ sizes. */
void tb_rpt_complexity(const tb_rpt *x);
/* report_cache.c: misses per call of the cases run with measure.cache. */
void tb_rpt_cache(const tb_rpt *x);
void tb_rpt_threads(const tb_rpt *x);
void tb_rpt_baseline(const tb_rpt *x);
void tb_rpt_with(const tb_rpt *x);
void tb_rpt_noise(const tb_rpt *x);
void tb_rpt_not_run(const tb_rpt *x);

#endif
