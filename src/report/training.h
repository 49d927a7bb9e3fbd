/* The report's training sections (issue 14): hooks, API layers, step
 * rates by batch (with a chart) and the memory pool, from the cases of
 * the workload ops (mlp_train_step, mlp_infer_step, cnn_train_step,
 * cnn_infer_step, tfm_train_step, tfm_infer_step, api_add) of a result
 * set.  MAIN cases are tbench's;
 * the ok WITH case of the same key (scripts/compare_torch_training.py's
 * torch cases) is shown beside each figure, "-" when there is none.
 * Every figure is a median of the results or arithmetic on medians and
 * counters, as each section's text states. */
#ifndef TB_REPORT_TRAINING_H
#define TB_REPORT_TRAINING_H

#include <stddef.h>

#include "../base/strbuf.h"
#include "plot.h"
#include "rset.h"

/* Markdown of the sections that have data (none: *md = ""), each
 * starting with "## ".  The step-rate section links the chart of
 * charts named "training-steps" when it was rendered, from chart_dir.
 * *md is heap text (caller frees).  0 or TB_ENOMEM. */
int tb_report_training(const tb_rset *s, const tb_chart_list *charts,
                       const char *chart_dir, char **md);

/* The per-op breakdown of the model steps: "## Where a step's time
 * goes" with a row per part (top five by time, then "other"), the gap
 * and the step of each MAIN case that has one; nothing without any
 * (breakdown.c). */
void tb_report_breakdown(const tb_rset *s, tb_strbuf *b);

/* The step-rate chart's file name (without extension) and title. */
#define TB_TRAINING_CHART "training-steps"
#define TB_TRAINING_CHART_TITLE                                            \
    "Training and inference steps: samples/s vs batch (median)"

/* Write dir/training-steps.dat and .gp (samples/s vs batch, log x and y,
 * a line per model step and backend, MAIN and WITH) for o's formats.
 * *made: whether there was anything to draw (at least one series of two
 * batches).  0, or TB_EIO with "PATH: reason" in err. */
int tb_training_chart_write(const tb_rset *s, const tb_plot_opts *o,
                            bool *made, char *err, size_t errlen);

#endif
