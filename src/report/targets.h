/* Performance targets as a gate: `tbench targets RESULTS -t FILE`.
 *
 * A targets file (JSON with comments, docs/CONFIG.md "Targets files")
 * lists targets; each selects cases of a result file (a glob on the id
 * as `run --filter` matches, and/or op, dtype, backend) and holds them
 * to one bound:
 *   max_time         the median time;
 *   max_ratio_to     the time over a peer's: the fastest ok case of the
 *                    peer backend (e.g. "numpy", "torch") in the --with
 *                    files with the same key (op, params, shapes,
 *                    dtype) and a compatible thread count (equal, or
 *                    either side without a threads axis), as the
 *                    report's side-by-side table pairs them;
 *   max_bound_ratio  the time over the case's roofline bound
 *                    (roofline.min_time_ns, from measured peaks).
 * Each (target, case) gets a verdict from the 95% CI of the quantity:
 * met when its upper end is at or below the limit, missed when its lower
 * end is above it, inconclusive otherwise.  The CIs are the recorded
 * ones: the median's (stats.ci_low_ns, ci_high_ns), that CI over the
 * bound, and for a peer ratio compare's pair test (tb_cmp_pair: the
 * bootstrap CI of the ratio of medians).  A case (or peer case) that did
 * not run, a peer case that is absent and a case without a bound are
 * missing; a target that selects no case is unmatched.  Rules and the
 * JSON form: docs/FORMAT.md "targets". */
#ifndef TB_REPORT_TARGETS_H
#define TB_REPORT_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "resultsio.h"

#define TB_TARGETS_SCHEMA "tbench.targets/1"

/* ---- the file --------------------------------------------------------- */

typedef enum {
    TB_TGT_TIME,  /* max_time: limit in ns */
    TB_TGT_PEER,  /* max_ratio_to: time / peer's time */
    TB_TGT_BOUND, /* max_bound_ratio: time / roofline.min_time_ns */
} tb_tgt_kind;

typedef struct tb_target {
    char *name;  /* "name", else made from the selectors */
    bool named;  /* "name" was given */
    char *glob;  /* "case" (tb_case_id_match), or NULL */
    char *op, *dtype, *backend; /* exact names, or NULL */
    tb_tgt_kind kind;
    double limit; /* ns (TB_TGT_TIME) or a ratio */
    char *peer;   /* TB_TGT_PEER: the peer's backend name */
    int line, col;           /* where the target's object starts */
    int peer_line, peer_col; /* TB_TGT_PEER: where "peer"'s value is */
} tb_target;

typedef struct tb_targets {
    char *path; /* as the user named it */
    int n;      /* >= 1 */
    tb_target *t;
} tb_targets;

/* The most targets a file may hold. */
#define TB_TARGETS_MAX 4096

/* Parse text[0..len) (path names it in messages).  0, or TB_EPARSE (not
 * JSON with comments), TB_EINVAL (a key, type or value docs/CONFIG.md
 * does not allow) or TB_ENOMEM, with one line "PATH:LINE:COL: KEYPATH:
 * what" in err and *out empty.  Free with tb_targets_free. */
int tb_targets_parse(const char *text, size_t len, const char *path,
                     tb_targets *out, char *err, size_t errlen);

/* Read and parse the file at path.  As tb_targets_parse, plus TB_EIO
 * ("PATH: cannot open: why"). */
int tb_targets_load(const char *path, tb_targets *out, char *err,
                    size_t errlen);

void tb_targets_free(tb_targets *t); /* accepts NULL and an empty one */

/* A duration as a targets file writes it: a number, an optional space
 * and a unit, ns, us, ms or s ("2ms", "150 us", "1.5e3ns").  0 with *ns,
 * or TB_EINVAL (no unit, another unit, not a positive finite number). */
int tb_tgt_parse_duration(const char *s, double *ns);

/* ---- the verdicts ----------------------------------------------------- */

typedef enum {
    TB_TGT_MET,
    TB_TGT_MISSED,
    TB_TGT_INCONCLUSIVE,
    TB_TGT_MISSING, /* not judged: why says why */
} tb_tgt_verdict;

/* "met", "missed", "inconclusive", "missing". */
const char *tb_tgt_verdict_word(tb_tgt_verdict v);

/* One case under one target. */
typedef struct tb_tgt_check {
    int target;             /* index into the targets */
    const tb_rescase *c;    /* the case (a record of the results file) */
    const tb_rescase *peer; /* TB_TGT_PEER: the peer's case, or NULL */
    double value, lo, hi;   /* ns or a ratio, and its 95% CI; NAN when
                               missing */
    tb_tgt_verdict v;
    char why[160]; /* TB_TGT_MISSING: "not run (unsupported)"... */
} tb_tgt_check;

typedef struct tb_tgt_opts {
    bool strict;        /* an inconclusive check fails too */
    bool allow_missing; /* a missing check does not fail */
} tb_tgt_opts;

typedef struct tb_tgt_result {
    const tb_targets *targets; /* not owned: they outlive the result */
    const tb_resfile *res;
    tb_resfile *const *with;
    int n_with;
    tb_tgt_opts opts;
    int n;
    tb_tgt_check *checks; /* target after target, each in file order */
    int *matched;         /* per target: its checks */
    int n_met, n_missed, n_inconclusive, n_missing;
    int n_unmatched; /* targets that selected no case */
    /* a missed check, an unmatched target, a missing check (unless
     * allow_missing) or an inconclusive one (when strict) */
    bool failed;
} tb_tgt_result;

/* Judge every target of t against the cases of res, the peers' cases in
 * with[0..n_with).  t, res and with must outlive *out.  0, TB_ENOMEM,
 * or TB_EINVAL with one line in err when a target cannot be judged with
 * these files: a max_ratio_to without --with files, or whose peer has
 * no case in them ("PATH:LINE:COL: targets[I].max_ratio_to.peer: ...").
 * Free with tb_tgt_result_free. */
int tb_targets_judge(const tb_targets *t, const tb_resfile *res,
                     tb_resfile *const *with, int n_with,
                     const tb_tgt_opts *opts, tb_tgt_result *out, char *err,
                     size_t errlen);
void tb_tgt_result_free(tb_tgt_result *r);

/* The table: one line per check (target, case id, value [95% CI],
 * limit, verdict), a line per unmatched target, then the summary line.
 * width > 0: ids and names are shortened in the middle so that lines
 * fit width columns where they can; 0: everything in full. */
void tb_tgt_print(FILE *f, const tb_tgt_result *r, int width);

/* The JSON form (schema TB_TARGETS_SCHEMA, docs/FORMAT.md); NULL on
 * allocation failure.  Caller frees with cJSON_Delete. */
cJSON *tb_tgt_json(const tb_tgt_result *r);

#endif
