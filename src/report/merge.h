/* Merging the result files of the shards of one sharded run
 * (`tbench run --shard I/N`, then `tbench merge`; docs/FORMAT.md,
 * "merge").
 *
 * The merged document is a result file like any other (schema
 * "tbench.results/1"): the first shard's env, timer and config, every
 * shard's case records copied unchanged and put back in plan order (each
 * still names its host and shard), a summary summed over the shards,
 * and a "merge" object listing the shards.  The files must be loaded by
 * tb_resfile_load (the one loader) first. */
#ifndef TB_REPORT_MERGE_H
#define TB_REPORT_MERGE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "resultsio.h"

typedef struct tb_merge_opts {
    /* Accept shards whose env.hostname or env.cpu.model differ. */
    bool allow_mixed_hosts;
} tb_merge_opts;

/* Merge the shard files f[0..n) (any order).  Refused, with one line
 * naming the file or the shard and what is wrong: a file without a
 * "shard" object (not from run --shard); shards of different counts, a
 * shard given twice or missing; another plan (digest), config text,
 * tbench commit or build; a shard not complete or short of cases; a
 * case id in two shards; different hosts unless allowed.
 * Returns 0 with *out a new document (caller frees), or TB_EINVAL /
 * TB_ENOMEM with the message in err (*out NULL). */
int tb_merge(tb_resfile *const *f, int n, const tb_merge_opts *o,
             cJSON **out, char *err, size_t errlen);

/* The text of the merged document doc (tb_merge's, whose records hold
 * no samples_ns values: the loader keeps them apart) as cJSON_Print
 * would print it with the samples in place, each record's taken from
 * the shard of f[0..n) that holds its id, one record at a time (the
 * whole tree with a node per sample would take several times the
 * file).  NULL when out of memory.  The caller frees it. */
char *tb_merge_print(cJSON *doc, tb_resfile *const *f, int n);

#endif
