/* The report's "Layouts" section: what reading inputs as views cost
 * (a config's "layout": ids with @layout=L, records with `layout`).  For
 * each case of the main run in a layout other than contiguous whose
 * contiguous twin (the same id without "@layout=L") ran too: both
 * medians, their ratio with compare's 95% bootstrap CI of it, and
 * compare's verdict on the pair (the view as the new side), so a ratio
 * inside the noise is never read as a cost.  scripts/audit_speed.py
 * derives the ratios again from the records and the CI and verdict
 * from `tbench compare` of each pair. */
#include "report_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"

/* s without its first "@layout=L" into out; false when s has none. */
static bool drop_layout(const char *s, const char *tag, char *out,
                        size_t len)
{
    const char *at = strstr(s, tag);
    if (at)
        snprintf(out, len, "%.*s%s", (int)(at - s), s, at + strlen(tag));
    return at != NULL;
}

/* The contiguous twin of layout case c in the main run, or NULL: found
 * through the result set's key index (the key without the tag), so the
 * section stays linear in cases. */
static const tb_rcase *contiguous_twin(const tb_rset *s, const tb_rcase *c)
{
    char id[600], key[600], tag[48];
    snprintf(tag, sizeof tag, "@layout=%s", c->rc->layout);
    if (!drop_layout(c->id, tag, id, sizeof id) ||
        !drop_layout(c->key, tag, key, sizeof key))
        return NULL;
    for (int k = tb_rset_key_first(s, key); k >= 0; k = s->key_next[k]) {
        const tb_rcase *t = &s->cases[k];
        if (t->ok && tb_rpt_in(t, M_MAIN) && !t->rc->layout &&
            strcmp(t->id, id) == 0)
            return t;
    }
    return NULL;
}

/* compare's word for the view against its contiguous twin. */
static const char *layout_verdict(int v)
{
    switch (v) {
    case TB_TIME_REGRESSED: return "view slower";
    case TB_TIME_IMPROVED: return "view faster";
    case TB_TIME_UNCHANGED: return "equal within the threshold";
    case TB_TIME_INCONCLUSIVE: return "inconclusive";
    default: return "not tested";
    }
}

void tb_rpt_layouts(const tb_rpt *x)
{
    const tb_rset *s = x->s;
    bool any = false;
    for (int i = 0; i < s->n && !any; i++) {
        const tb_rcase *c = &s->cases[i];
        any = c->ok && tb_rpt_in(c, M_MAIN) && c->rc->layout &&
              contiguous_twin(s, c);
    }
    if (!any)
        return;
    tb_strbuf *b = x->b;
    sb(b, "### Layouts\n\n"
          "Cases whose inputs were views of larger buffers (config "
          "`\"layout\"`: `transposed`, the last two dims swapped; "
          "`strided`, every 2nd element of a buffer twice as wide; "
          "`sliced`, an offset window; ids with `@layout=`) beside the "
          "same case on contiguous inputs (the same values): the median "
          "of each and the ratio, view over contiguous (above 1: the "
          "view costs that much more) with the 95%% bootstrap CI of the "
          "ratio and `tbench compare`'s verdict on the pair, the view as "
          "the new side (docs/FORMAT.md, \"compare\": slower or faster "
          "only beyond the noise floor, with p < 0.01 and the CI on that "
          "side of 1). The kernel that ran is each record's `impl` "
          "(`tbench show ID DIR`).\n\n"
          "| Op | Shapes | Dtype | Backend | Layout | Contiguous | View | "
          "Ratio | 95%% CI | Verdict |\n"
          "|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        const tb_rcase *t = c->ok && tb_rpt_in(c, M_MAIN) && c->rc->layout
                                ? contiguous_twin(s, c)
                                : NULL;
        if (!t)
            continue;
        tb_cmp_case v;
        bool judged = !tb_rpt_pair(t, c, &v);
        char mt[32], mc[32], r[32], lo[32], hi[32], ci[80] = "-";
        if (judged && v.time != TB_TIME_NA && !isnan(v.ci_lo) &&
            !isnan(v.ci_hi))
            snprintf(ci, sizeof ci, "%sx … %sx",
                     tb_md_num(1 + v.ci_lo, lo, sizeof lo),
                     tb_md_num(1 + v.ci_hi, hi, sizeof hi));
        sb(b, "| %s | %s | %s | %s | %s | %s | %s | %sx | %s | %s |\n",
           t->opp, c->shapes, c->dtype, c->variant, c->rc->layout,
           tb_report_fmt_time(t->median, t->median, mt, sizeof mt),
           tb_report_fmt_time(c->median, c->median, mc, sizeof mc),
           tb_md_num(c->median / t->median, r, sizeof r), ci,
           layout_verdict(judged ? (int)v.time : TB_TIME_NA));
    }
    sb(b, "\n");
}
