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

/* tb_results_set_case in O(1) whatever the number of records, in the
 * array `cases` (NULL: the document's own; a run keeps its records in
 * flight apart from the document, tb_results_doc).  *slot is the case's
 * record there, or NULL when it has none yet (the new record is then
 * appended: call it for new cases in plan order).  On success *slot is
 * the new record.  0 or TB_ENOMEM. */
int tb_results_put_case(cJSON *doc, cJSON *cases, cJSON **slot,
                        const tb_case *c, const tb_result *r);

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

/* ---- a run's document in constant memory ----------------------------
 *
 * A run of N cases writes its document many times; held whole, as cJSON
 * and as printed text, it costs about 17 KB a tiny case.  Instead a
 * finished ("settled") case's record is printed once and appended to a
 * spool, and each write streams the head, the spooled text, the records
 * still in flight and the tail into the file: the bytes are those of
 * cJSON_Print of the whole document (and of tb_results_csv), in memory
 * that does not grow with the cases. */

/* The records of a run's first settled cases, as JSON text and CSV rows,
 * in two files of a private folder (mkdtemp, mode 0700, made in `dir`,
 * or in $TMPDIR or /tmp when dir is NULL), created O_EXCL|O_NOFOLLOW and
 * unlinked at once with their folder: only the descriptors remain, so
 * nothing is left behind however the run ends.  0, TB_ENOMEM or TB_EIO
 * with "DIR: ..." in err.  Close with tb_results_spool_close (NULL
 * accepted). */
typedef struct tb_results_spool tb_results_spool;
int tb_results_spool_open(tb_results_spool **sp, const char *dir,
                          char *err, size_t errlen);
void tb_results_spool_close(tb_results_spool *sp);
/* Append record rec (the next in plan order; it can be freed after).
 * 0, TB_ENOMEM or TB_EIO (a full disk, EFBIG) with the reason in err;
 * the spool then holds what it held before. */
int tb_results_spool_add(tb_results_spool *sp, const cJSON *rec,
                         char *err, size_t errlen);
/* Records spooled (0 for NULL). */
int tb_results_spool_count(const tb_results_spool *sp);

/* A document being written: head (every member but the records, from
 * tb_results_new: its "cases" empty), then the records of spool (NULL:
 * none) and those of the array flight (NULL: none). */
typedef struct tb_results_doc {
    const cJSON *head;
    const tb_results_spool *spool;
    const cJSON *flight;
} tb_results_doc;

/* tb_results_finish for such a document: "complete" and the summary of
 * the spooled records and those in flight, set in head.  0 or
 * TB_ENOMEM. */
int tb_results_finish_doc(cJSON *head, const tb_results_spool *spool,
                          const cJSON *flight, bool complete);

/* tb_results_write of d: DIR/results.json and DIR/results.csv, each
 * atomically (tb_atomic_begin: random name, O_EXCL|O_NOFOLLOW, fsync,
 * rename), streamed.  0 or an error (TB_EIO, TB_ENOMEM) with a one-line
 * message in err; a file not written is left as it was. */
int tb_results_doc_write(const tb_results_doc *d, const char *dir,
                         char *err, size_t errlen);

/* The texts that tb_results_doc_write would write (heap strings, caller
 * frees), for tests and embedders.  0, TB_ENOMEM or TB_EIO. */
int tb_results_doc_text(const tb_results_doc *d, char **json, char **csv);

/* The document's env.warnings: an array of sentences on what makes this
 * machine noisy (env.h), or NULL when it has none. */
const cJSON *tb_results_warnings(const cJSON *doc);

/* Set the document's "shard" (taken over on success) to the object of
 * tb_shard_select for a `run --shard I/N`.  Cases added afterwards
 * record their shard and plan_index.  0 or TB_ENOMEM. */
int tb_results_set_shard(cJSON *doc, cJSON *shard);

#endif
