/* Shards: a deterministic slice of a plan (`tbench run --shard I/N`).
 *
 * Every shard of a sharded run builds the same whole plan, then keeps
 * the cases this module assigns to it.  The assignment depends only on
 * the plan (the case ids, the op table's FLOP and byte models and the
 * config's warm-up and measure settings), never on the machine, the
 * clock or a measurement, so N processes on N machines agree on it
 * without talking to each other.  The rule (docs/CONFIG.md, "Shards"):
 * greedy LPT — cases in decreasing estimated cost (ties: plan order),
 * each to the shard with the least estimated load so far (ties: the
 * lowest shard number). */
#ifndef TB_HARNESS_SHARD_H
#define TB_HARNESS_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "plan.h"

#define TB_SHARD_MAX 100000 /* the largest N of --shard I/N */

typedef struct tb_shard {
    int index; /* 1..count */
    int count;
} tb_shard;

/* Parse "I/N" (decimal, 1 <= I <= N <= TB_SHARD_MAX, nothing else).
 * 0, or TB_EINVAL with "what is wrong" in err. */
int tb_shard_parse(const char *s, tb_shard *out, char *err, size_t errlen);

/* Estimated seconds case c takes to run (the cost model of the rule
 * above; see the comment in shard.c).  Always > 0 and finite. */
double tb_shard_cost(const tb_case *c);

/* shard_of[i] = the shard (1..count) of plan case i, for every case of
 * the plan.  count >= 1.  0 or TB_ENOMEM. */
int tb_shard_assign(const tb_plan *plan, int count, int *shard_of);

/* FNV-1a (64 bits) of the plan's case ids in order, each followed by a
 * newline, as 16 lowercase hex digits in buf (>= 17 bytes): shards that
 * planned different cases (another config, another --filter, another
 * machine's axis values) have different digests. */
void tb_plan_digest(const tb_plan *plan, char *buf, size_t len);

/* Keep only the cases of shard s, in plan order, setting each case's
 * plan_index to its position in the whole plan.  *info (taken over by
 * the caller; NULL on failure) is the result file's "shard" object:
 * index, count, cases (kept), plan_cases (the whole plan), plan_digest,
 * rule.  0 or TB_ENOMEM. */
int tb_shard_select(tb_plan *plan, const tb_shard *s, cJSON **info);

#endif
