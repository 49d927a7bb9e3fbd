/* The Markdown report (docs/PERFORMANCE.md) of a result set (rset.h).
 *
 * The report only reads result files (schema tbench.results/1,
 * docs/FORMAT.md) through the loader's typed records: every number it
 * prints comes from them, and nothing in it depends on the clock or the
 * machine it is generated on, so the same files always give the same
 * text (the golden test relies on it).  The baseline verdicts are those
 * of `tbench compare`, and every "significant" or "winner" is
 * compare's verdict on the pair (tb_cmp_pair, compare.h). */
#ifndef TB_REPORT_REPORT_H
#define TB_REPORT_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "compare.h"
#include "mdtext.h"
#include "rset.h"

struct tb_chart_list;

typedef struct tb_report_opts {
    const char *command;      /* the command that made the report (top) */
    const char *generated_by; /* optional: the script that ran command */
    const char *chart_dir;    /* charts folder relative to the .md */
    const struct tb_chart_list *charts; /* NULL: no charts */
    const tb_cmp *baseline; /* tb_rset_compare's result, or NULL: no
                               baseline section */
    double anomaly;     /* scaling anomaly factor (3) */
    int n_noisy;        /* rows in the noisiest-cases table (8) */
} tb_report_opts;

/* The Markdown report of s: the MAIN document is the run reported, WITH
 * documents are put side by side, and o->baseline (the comparison of the
 * BASELINE document with the MAIN one) gives the baseline section.  A
 * section without data is left out.  *md is heap text (caller frees).
 * 0, TB_EINVAL (no MAIN document) or TB_ENOMEM. */
int tb_report_markdown(const tb_rset *s, const tb_report_opts *o,
                       char **md);

#endif
