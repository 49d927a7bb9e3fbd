/* The result document (schema "tbench.results/1", docs/FORMAT.md) and
 * its CSV summary.  The runner's structs go in; JSON and CSV text come
 * out.  The CSV is derived from the JSON document, never from the run,
 * so the two cannot disagree. */
#ifndef TB_REPORT_RESULTS_H
#define TB_REPORT_RESULTS_H

#include <stdbool.h>
#include <cjson/cJSON.h>

#include "../harness/config.h"
#include "../harness/plan.h"
#include "../harness/runner.h"

#define TB_RESULTS_SCHEMA "tbench.results/1"

/* New document with env (taken over), the configs and an empty cases
 * array.  NULL on allocation failure. */
cJSON *tb_results_new(cJSON *env, const tb_config *cfgs, int n_cfgs,
                      double timer_overhead_ns);
/* Append one case record.  0 or TB_ENOMEM. */
int tb_results_add_case(cJSON *doc, const tb_case *c, const tb_result *r);
/* Set "complete" and the per-status summary counts. */
int tb_results_finish(cJSON *doc, bool complete);

/* CSV text (header + one row per case) from a result document; caller
 * frees.  0 or TB_ENOMEM. */
int tb_results_csv(const cJSON *doc, char **out);

/* Write DIR/results.json and DIR/results.csv, each atomically. */
int tb_results_write(const cJSON *doc, const char *dir, char *err,
                     size_t errlen);

#endif
