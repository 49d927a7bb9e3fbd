/* The report as one self-contained web page (tbench report --html).
 *
 * The page is the Markdown report (report.h) rendered by cmark-gfm (GFM
 * tables), so it has the same sections and never a second writer of
 * them; its charts are gnuplot's SVG output placed inline where the
 * Markdown has their image lines; a per-case detail of every ok case of
 * the MAIN document follows (a samples histogram drawn here, the median
 * and its 95% CI, the counters, the implementation that ran).  A small
 * inline script sorts a table by a clicked header (numbers with units by
 * value) and filters rows and cases by a text box.  Nothing is loaded
 * from the network: the only links are the Markdown's relative ones. */
#ifndef TB_REPORT_HTML_H
#define TB_REPORT_HTML_H

#include <stddef.h>

#include "plot.h"
#include "rset.h"

typedef struct tb_html_opts {
    const char *chart_rel; /* the charts folder the Markdown names */
    const char *chart_dir; /* where their NAME.svg files are, or NULL */
    const tb_chart_list *charts; /* NULL: no charts */
} tb_html_opts;

/* NULL when this build can write the page, else the one-line reason
 * (built without cmark-gfm). */
const char *tb_report_html_missing(void);

/* The page of md, tb_report_markdown's text of s: every image line of a
 * rendered chart of o->charts (o->chart_rel/NAME.png) becomes NAME.svg
 * read from o->chart_dir; any other image becomes its alt text, a link
 * with a scheme (http:, ...) its text, raw HTML in md text.  *html is
 * heap (caller frees); *n_charts the number of charts placed in it.
 * Returns 0, TB_EIO ("PATH: reason" in err: an SVG file could not be
 * read), TB_ENOMEM, or TB_EUNAVAILABLE (built without cmark-gfm:
 * tb_report_html_missing's reason in err). */
int tb_report_html(const tb_rset *s, const char *md, const tb_html_opts *o,
                   char **html, int *n_charts, char *err, size_t errlen);

/* html_case.c: the per-case details of the ok MAIN cases of s (one
 * <details> each) appended to b; text escaped. */
struct tb_strbuf;
void tb_html_cases(const tb_rset *s, struct tb_strbuf *b);

/* s with & < > " ' as entities, appended to b (html_case.c). */
void tb_html_esc(struct tb_strbuf *b, const char *s);

#endif
