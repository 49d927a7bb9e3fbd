/* Charts of result files: gnuplot scripts and data written into a
 * folder, then rendered by gnuplot (pngcairo and svg terminals).
 *
 * Each chart is NAME.gp (the script, which reads NAME.dat and writes
 * NAME.png and/or NAME.svg) so a user without gnuplot can render them
 * later with `cd DIR && gnuplot NAME.gp`.  gnuplot runs as a child
 * process (fork/exec, never a shell), one per chart, in DIR, with its
 * messages appended to DIR/gnuplot.log. */
#ifndef TB_REPORT_PLOT_H
#define TB_REPORT_PLOT_H

#include <stdbool.h>
#include <stddef.h>

#include "rset.h"

typedef enum {
    TB_CHART_TIME,       /* per op and dtype with 2+ sizes: time vs size,
                            log-log, CI; one size: a bar per series */
    TB_CHART_THROUGHPUT, /* the same: GB/s or GFLOP/s vs size */
    TB_CHART_SPEEDUP,    /* per op and dtype: bars over the reference */
    TB_CHART_CHANGE,     /* baseline vs current, coloured by verdict */
    TB_CHART_NOISE,      /* box plots of the noisiest cases' samples */
    TB_CHART_HISTORY,    /* per op and dtype: median over runs */
    TB_CHART_ROOFLINE,   /* per backend with measured peaks: GFLOP/s vs
                          * FLOPs/byte under the roofs */
    TB_CHART_STEPS,      /* model steps: samples/s vs batch (training.h) */
} tb_chart_kind;

typedef struct tb_chart {
    tb_chart_kind kind;
    char group[160]; /* "OP/DTYPE" for per-op charts, else "" */
    char name[192];  /* file name without extension */
    char title[256];
    bool rendered;   /* gnuplot made every requested image */
} tb_chart;

typedef struct tb_chart_list {
    int n, cap;
    tb_chart *v;
    bool gnuplot_missing; /* scripts written, nothing rendered */
    int n_failed;         /* charts gnuplot could not render */
} tb_chart_list;

typedef struct tb_plot_opts {
    const char *dir; /* output folder; created if missing */
    bool png, svg;
    bool render;     /* false: write scripts and data only */
    int n_noisy;     /* cases in the noise chart (default 8) */
    const tb_cmp *baseline; /* tb_rset_compare's result (the change
                               chart), or NULL */
} tb_plot_opts;

/* Write the charts of s into o->dir and render them.  MAIN and WITH
 * cases are drawn together; o->baseline gives the change chart, coloured
 * by compare's verdicts; two or more HISTORY documents (oldest first;
 * MAIN counts as the newest if present) give the history charts, whose
 * change points are those of `tbench history` with its default options
 * (tb_history_build, history.h).  gnuplot is the program named by the
 * environment variable TBENCH_GNUPLOT, else `gnuplot` on PATH; when it is
 * missing, out->gnuplot_missing is set and 0 returned.  Returns 0,
 * TB_EIO (with "PATH: reason" in err) or TB_ENOMEM.  out must be zeroed
 * before the first call; free it with tb_chart_list_free. */
int tb_plot_write(const tb_rset *s, const tb_plot_opts *o, tb_chart_list *out,
                  char *err, size_t errlen);

void tb_chart_list_free(tb_chart_list *l);

#endif
