/* Loading result files (schema "tbench.results/1", docs/FORMAT.md): the
 * one loader behind compare, history, export, `run --baseline`, plot and
 * report, so every command accepts and rejects the same files with the
 * same messages.
 *
 * A loaded file keeps its cJSON document; the case records below point
 * into it, with the fields those commands need looked up and checked
 * once, so that the statistics code never meets a missing or mistyped
 * value.  Every problem is reported as one line "FILE: what" (the file
 * as the user named it, then where in it and what is wrong). */
#ifndef TB_REPORT_RESULTSIO_H
#define TB_REPORT_RESULTSIO_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* The exact per-iteration counters that compare treats as regressions
 * when they grow (docs/FORMAT.md, "counters"), in this order. */
#define TB_RES_COUNTERS(X)                                               \
    X(KERNEL_LAUNCHES, "kernel_launches")                                \
    X(MEMCPY_COUNT, "memcpy_count")                                      \
    X(MEMCPY_BYTES, "memcpy_bytes")                                      \
    X(ALLOCS, "allocs")                                                  \
    X(ALLOC_BYTES, "alloc_bytes")                                        \
    X(DEVICE_ALLOCS, "device_allocs")                                    \
    X(DEVICE_ALLOC_BYTES, "device_alloc_bytes")

typedef enum {
#define TB_RES_CTR_ENUM(e, s) TB_RES_CTR_##e,
    TB_RES_COUNTERS(TB_RES_CTR_ENUM)
#undef TB_RES_CTR_ENUM
        TB_RES_NCOUNTERS
} tb_res_counter;

/* Name of counter k as in the result file ("kernel_launches"). */
const char *tb_res_counter_name(int k);

/* The case statuses of docs/FORMAT.md.  Only "ok" is timed; the others
 * carry a message saying why ("crashed": the worker died, naming the
 * signal and the phase; "timeout": the worker passed the time limit). */
#define TB_RES_STATUSES(X)                                               \
    X(OK, "ok")                                                          \
    X(UNSUPPORTED, "unsupported")                                        \
    X(UNAVAILABLE, "unavailable")                                        \
    X(FAILED_CHECK, "failed-check")                                      \
    X(ERROR, "error")                                                    \
    X(CRASHED, "crashed")                                                \
    X(TIMEOUT, "timeout")                                                \
    X(SKIPPED, "skipped")

/* Is s one of TB_RES_STATUSES? */
bool tb_res_status_known(const char *s);

/* Member key of o as a finite number; NAN when o is not an object, the
 * member is absent or null, not a number or not finite. */
double tb_json_num(const cJSON *o, const char *key);

/* Member key of o as a string, or NULL. */
const char *tb_json_str(const cJSON *o, const char *key);

/* v as a JSON number, or null when it is not finite (NAN: not
 * available); s as a JSON string, or null when NULL.  NULL on allocation
 * failure.  For the JSON that compare and history write. */
cJSON *tb_json_num_or_null(double v);
cJSON *tb_json_str_or_null(const char *s);

/* One case record of a loaded file.  Strings point into the document. */
typedef struct tb_rescase {
    const cJSON *json; /* the whole record */
    const char *id;
    const char *op, *dtype, *backend; /* non-empty */
    const char *status;  /* one of TB_RES_STATUSES */
    const char *message; /* NULL when null */
    const char *impl;    /* NULL when null */
    bool timed;          /* status "ok": every field below is valid */
    size_t n;            /* samples */
    double *samples_ns;  /* n per-iteration times (heap, owned) */
    int n_rounds;              /* 0 when the file has no round medians */
    double *round_medians_ns;  /* n_rounds medians, one per round (owned) */
    double iters_per_sample;
    double median_ns, ci_low_ns, ci_high_ns, ci_rel, min_ns, mean_ns;
    double bytes, flops, items; /* the cost model (NAN if absent) */
    double gb_s, gflop_s, items_s;         /* NAN when null */
    double counters[TB_RES_NCOUNTERS];     /* NAN when absent */
    /* instructions per iteration (docs/FORMAT.md, "Instruction counts"):
     * NAN when the record has none (not asked for, or null); then the
     * source ("perf", "callgrind") and the ISA that ran, or NULL. */
    double instructions;
    const char *instr_source, *instr_isa;
} tb_rescase;

typedef struct tb_resfile {
    char *path;   /* the file actually read (DIR/results.json for a DIR) */
    cJSON *doc;   /* the whole document */
    bool complete;
    const char *date, *hostname, *git_commit, *cpu_model; /* or NULL */
    int n;
    tb_rescase *cases; /* in file order */
    int *by_id;        /* indices of cases sorted by id (for lookups) */
} tb_resfile;

/* Load and check the result file at path (a file, or a run folder that
 * holds results.json).  Checks: readable, complete JSON, an object with
 * "schema" == "tbench.results/1", a "cases" array whose records are
 * objects with a unique non-empty string id, non-empty op, dtype and
 * backend strings and a known status (TB_RES_STATUSES), and for "ok"
 * records a stats object with finite numbers n >= 1 (as many finite
 * samples_ns values), positive median_ns, ci_low_ns <= median_ns <=
 * ci_high_ns, min_ns, mean_ns, iters_per_sample >= 1, finite numbers
 * (or nulls) in throughput and counters, and an instructions object (or
 * null) whose per_iter is a number >= 0 or null and whose source and isa
 * are strings or null.  On failure *out is
 * NULL and err holds one line "PATH: what".  Returns 0, TB_EIO
 * (unreadable), TB_EPARSE (not JSON, truncated), TB_EINVAL (not a result
 * file or a bad field) or TB_ENOMEM.  Free with tb_resfile_free. */
int tb_resfile_load(const char *path, tb_resfile **out, char *err,
                    size_t errlen);

/* The same checks on a document already in memory: text[0..len) with
 * text[len] == '\0'; path names it in messages and in f->path. */
int tb_resfile_from_text(const char *path, const char *text, size_t len,
                         tb_resfile **out, char *err, size_t errlen);

void tb_resfile_free(tb_resfile *f); /* accepts NULL */

/* The case with this id, or NULL.  O(log n). */
const tb_rescase *tb_resfile_find(const tb_resfile *f, const char *id);

/* The case ids of files f[0..k), each once, in order of first
 * appearance (file by file, each in its own order).  *ids is a heap
 * array of pointers into the files (caller frees the array only).
 * 0 or TB_ENOMEM. */
int tb_resfile_union_ids(tb_resfile *const *f, int k, const char ***ids,
                         int *n);

/* Does f share a case id with any of the files g[0..k)? */
bool tb_resfile_shares_id(const tb_resfile *f, tb_resfile *const *g, int k);

/* Path of result file `arg` as load would read it: arg itself, or
 * arg/results.json when arg is a folder.  Returns buf. */
const char *tb_resfile_resolve(const char *arg, char *buf, size_t len);

#endif
