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

/* A merge: the merged document's head (every member but the records:
 * its "cases" is []) and its n records in plan order, cases[i] of the
 * shard file file[i] (pointers into the shards, which must outlive
 * it). */
typedef struct tb_merged {
    cJSON *doc;
    int n;
    const tb_resfile **file;
    const tb_rescase **cases;
} tb_merged;

/* Merge the shard files f[0..n) (any order).  Refused, with one line
 * naming the file or the shard and what is wrong: a file without a
 * "shard" object (not from run --shard); shards of different counts, a
 * shard given twice or missing; another plan (digest), config text,
 * tbench commit or build; a shard not complete or short of cases; a
 * case id in two shards; different hosts unless allowed.
 * Returns 0 with *out (free with tb_merged_free), or TB_EINVAL /
 * TB_ENOMEM with the message in err (*out empty). */
int tb_merge(tb_resfile *const *f, int n, const tb_merge_opts *o,
             tb_merged *out, char *err, size_t errlen);

void tb_merged_free(tb_merged *m); /* accepts NULL; m is then empty */

/* The text of the merged document m, handed to put(ctx, bytes, len) in
 * pieces: the bytes cJSON_Print would give the whole document with every
 * record in place, samples included, each record read from its shard
 * (tb_rescase_record) one at a time, so that neither the records' trees
 * nor the text are ever held whole.  0; put's non-zero return, which
 * stops it; or TB_ENOMEM / TB_EIO with "what" in err (a shard that
 * cannot be read again). */
int tb_merge_write(const tb_merged *m,
                   int (*put)(void *ctx, const void *p, size_t n),
                   void *ctx, char *err, size_t errlen);

#endif
