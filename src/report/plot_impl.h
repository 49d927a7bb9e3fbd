/* What the chart files share (plot.c, plot_summary.c; the helpers are
 * plot_files.c's): the context of one tbench plot, the chart files'
 * helpers and the grouping of cases into series.  Internal to
 * src/report. */
#ifndef TB_REPORT_PLOT_IMPL_H
#define TB_REPORT_PLOT_IMPL_H

#include <stdbool.h>
#include <stdio.h>

#include "plot.h"
#include "rset.h"

#define MAX_SERIES 24  /* series of a group */
#define CHART_SERIES 8 /* lines per chart: a group with more gets parts */
#define W 900          /* image size in pixels */
#define H 480

#define M_MAIN TB_RSET_MASK(TB_ROLE_MAIN)
#define M_WITH TB_RSET_MASK(TB_ROLE_WITH)

/* One tbench plot: the result set, the options, the charts made so far
 * and where an error's message goes. */
typedef struct {
    const tb_rset *s;
    const tb_plot_opts *o;
    tb_chart_list *out;
    char *err;
    size_t errlen;
} pctx;

/* The series' colours, one per line of a chart. */
extern const char *const tb_plt_colour[CHART_SERIES];

/* A chart made: added to l (NULL when out of memory). */
tb_chart *tb_plt_chart_add(tb_chart_list *l, tb_chart_kind kind,
                           const char *group, const char *name,
                           const char *title);
/* s as a file name part: letters, digits, '_' and '-' kept. */
void tb_plt_safe_name(char *dst, size_t len, const char *s);
/* s quoted for a .dat file. */
void tb_plt_dat_str(FILE *f, const char *s);
/* NAME.EXT in the output folder, for writing (NULL: x->err says why). */
FILE *tb_plt_open_out(pctx *x, const char *name, const char *ext);
/* Close f, written as NAME.EXT (0, or the error with x->err). */
int tb_plt_close_out(pctx *x, FILE *f, const char *name, const char *ext);
/* The plot commands in body, written to every requested format. */
void tb_plt_gp_outputs(FILE *f, const tb_plot_opts *o, const char *name,
                       const char *body, int w, int h);
/* Extra image height for a key of n entries below the plot. */
int tb_plt_key_height(int n);
/* NAME.gp once NAME.dat (d) is written, its head written; NULL with *rc. */
FILE *tb_plt_script_open(pctx *x, FILE *d, const char *name,
                         const char *title, int *rc);
/* The plot commands of script f, gathered in memory (NULL: f closed). */
FILE *tb_plt_body_open(pctx *x, FILE *f, char **body, size_t *len);
/* The body m written to every format at w x h, and script f closed. */
int tb_plt_script_close(pctx *x, FILE *f, FILE *m, char **body,
                        const char *name, int w, int h);

/* Is c of a role in mask? */
bool tb_plt_inm(const tb_rcase *c, unsigned mask);
bool tb_plt_same_opdt(const tb_rcase *a, const tb_rcase *b);
/* An ok case of mask with c's op and dtype before i? */
bool tb_plt_group_seen(const tb_rset *s, int i, unsigned mask);
/* The series (first cases) of case g's op/dtype group, at most max. */
int tb_plt_group_series(const tb_rset *s, int g, unsigned mask, int *v,
                        int max);
/* The ok cases of case i's series, by elements then work. */
int tb_plt_series_points(const tb_rset *s, int i, int *v, int max);

/* plot_summary.c: the summaries of case first's category and dtype. */
int tb_plt_category(pctx *x, int first);

#endif
