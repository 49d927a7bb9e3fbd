/* The result document (schema "tbench.results/1", docs/FORMAT.md) and
 * its CSV summary: the writer, which spells every member with the
 * schema's names (base/result_schema.h).  The runner's structs go in;
 * JSON and CSV text come out.  The CSV is derived from the JSON
 * document, never from the run, so the two cannot disagree. */
#ifndef TB_HARNESS_RESULTS_H
#define TB_HARNESS_RESULTS_H

#include <stdbool.h>
#include <cjson/cJSON.h>

#include "config.h"
#include "plan.h"
#include "runner.h"
#include "../base/result_schema.h"

/* New document with env (taken over), "peaks": null, the configs and an
 * empty cases array.  NULL on allocation failure. */
cJSON *tb_results_new(cJSON *env, const tb_config *cfgs, int n_cfgs,
                      double timer_overhead_ns);
/* Set the document's "peaks" to a "tbench.peaks/1" object (taken over;
 * NULL: null).  Cases added afterwards get a "roofline" object computed
 * from it (see tb_roofline_compute); call it before adding cases.
 * 0 or TB_ENOMEM. */
int tb_results_set_peaks(cJSON *doc, cJSON *peaks);
/* Append one case record, with its roofline when the document has peaks
 * and the case ran ("ok") on a host backend (one with a "threads" axis:
 * the peaks are the host CPU's) or on a GPU backend (one with the `peak`
 * slot: against peaks.gpu, gpu_peak.h).  0 or TB_ENOMEM. */
int tb_results_add_case(cJSON *doc, const tb_case *c, const tb_result *r);

/* Replace case record `index` of the document with a new record of c/r,
 * or append it when index is the number of records (0 <= index <= that
 * number).  Only that record is rebuilt, so writing the document after
 * each case costs the same whatever the number of cases before it.
 * 0, TB_EINVAL (index out of range) or TB_ENOMEM. */
int tb_results_set_case(cJSON *doc, int index, const tb_case *c,
                        const tb_result *r);

/* tb_results_set_case in O(1) whatever the number of records: *slot is
 * the case's record in the document, or NULL when it has none yet (the
 * new record is then appended: call it for new cases in plan order).
 * On success *slot is the new record.  0 or TB_ENOMEM. */
int tb_results_put_case(cJSON *doc, cJSON **slot, const tb_case *c,
                        const tb_result *r);

/* Record how the cases ran: "process" (isolated workers) or "none". */
int tb_results_set_isolation(cJSON *doc, const char *mode);

/* Record whether NVTX ranges were emitted (trace.h). */
int tb_results_set_nvtx(cJSON *doc, bool on);
/* Set "complete" and the per-status summary counts. */
int tb_results_finish(cJSON *doc, bool complete);

/* CSV text (header + one row per case) from a result document; caller
 * frees.  0 or TB_ENOMEM. */
int tb_results_csv(const cJSON *doc, char **out);

/* Write DIR/results.json and DIR/results.csv, each atomically. */
int tb_results_write(const cJSON *doc, const char *dir, char *err,
                     size_t errlen);

/* The document's env.warnings: an array of sentences on what makes this
 * machine noisy (env.h), or NULL when it has none. */
const cJSON *tb_results_warnings(const cJSON *doc);

/* Set the document's "shard" (taken over on success) to the object of
 * tb_shard_select for a `run --shard I/N`.  Cases added afterwards
 * record their shard and plan_index.  0 or TB_ENOMEM. */
int tb_results_set_shard(cJSON *doc, cJSON *shard);

#endif
