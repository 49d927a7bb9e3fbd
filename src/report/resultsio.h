/* Loading result files (schema "tbench.results/1", docs/FORMAT.md): the
 * one loader behind compare, history, export, merge, show, targets,
 * `run`'s table and `run --baseline`, plot and report, so every command
 * accepts and rejects the same files with the same messages.
 *
 * The loader is the only reader of a result file's JSON (its names come
 * from base/result_schema.h): it checks the document once and returns
 * typed records, a tb_rescase per case and the run's env, peaks, config,
 * summary and shard in tb_resfile, so that no renderer reads a key and
 * no statistics code meets a missing or mistyped value.  A record's
 * strings and arrays live in the file's arena (or, for a file loaded
 * from memory, point into its kept tree); the run's into the kept
 * head of the document.  Every
 * problem is reported as one line "FILE: what" (the file as the user
 * named it, then where in it and what is wrong). */
#ifndef TB_REPORT_RESULTSIO_H
#define TB_REPORT_RESULTSIO_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "../base/result_schema.h"

/* What a case record says about its CUPTI counts. */
typedef enum {
    TB_RES_CUPTI_ABSENT, /* no "cupti" member (a file older than it) */
    TB_RES_CUPTI_NULL,   /* "cupti": null; cupti_reason says why */
    TB_RES_CUPTI_VALID,  /* an object, checked; cupti and cupti_ctr valid */
} tb_res_cupti_state;

/* Is s one of TB_RES_STATUSES? */
bool tb_res_status_known(const char *s);

/* Member key of o as a finite number; NAN when o is not an object, the
 * member is absent or null, not a number or not finite.  For JSON that
 * is not a result file (compare's own output, in its tests). */
double tb_json_num(const cJSON *o, const char *key);

/* Member key of o as a string, or NULL (as tb_json_num). */
const char *tb_json_str(const cJSON *o, const char *key);

/* v as a JSON number, or null when it is not finite (NAN: not
 * available); s as a JSON string, or null when NULL.  NULL on allocation
 * failure.  For the JSON that compare, history, merge and ab write. */
cJSON *tb_cjson_num_or_null(double v);
cJSON *tb_cjson_str_or_null(const char *s);

/* A shape as recorded (shapes, out_shapes): ndim sizes. */
typedef struct tb_res_shape {
    int ndim;
    const double *dim;
} tb_res_shape;

/* An op parameter (a bool as 0 or 1; a string parameter's text in
 * text, value NAN) or a backend axis, as recorded. */
typedef struct tb_res_param {
    const char *name;
    double value;
    const char *text; /* NULL unless the value is a string */
} tb_res_param;

typedef struct tb_res_axis {
    const char *name, *value;
} tb_res_axis;

/* One kernel of cupti.kernels. */
typedef struct tb_res_kernel {
    const char *name;
    double count, device_ns;
} tb_res_kernel;

/* A checked "cupti" object (docs/FORMAT.md), per iteration. */
typedef struct tb_res_cupti {
    double iterations;
#define TB_RES_CUPTI_NUM_DECL(k) double k;
    TB_RES_CUPTI_NUMS(TB_RES_CUPTI_NUM_DECL)
#undef TB_RES_CUPTI_NUM_DECL
    double memcpy_count[TB_RES_NDIRS], memcpy_bytes[TB_RES_NDIRS];
    int n_kernels;
    const tb_res_kernel *kernels;
} tb_res_cupti;

/* One part of a workload step's breakdown (docs/FORMAT.md, "Per-op
 * breakdown"): per step, calls and time (ns), share of the step. */
typedef struct tb_res_part {
    const char *op, *kernel; /* non-empty */
    const char *phase;       /* "fwd", "bwd" or "optimizer" */
    double calls, ns, share;
} tb_res_part;

/* A checked "breakdown" object: the pass's steps, the step's time and
 * its parts' sum, gap = step - parts (the tape's overhead). */
typedef struct tb_res_breakdown {
    double steps, kept_steps; /* the pass's, and those averaged */
    double step_ns, parts_ns, gap_ns, gap_fraction;
    int n_parts;
    const tb_res_part *parts; /* in the order of their first call */
} tb_res_breakdown;

/* The scalars of TB_RES_CASE_FIELDS (base/result_schema.h), read
 * without a check of their own: f.OBJECT_KEY, e.g. f.check_n_bad (NAN,
 * NULL or false when absent, null or of another type). */
#define TB_RES_FIELD_num double
#define TB_RES_FIELD_str const char *
#define TB_RES_FIELD_flag bool
typedef struct tb_res_fields {
#define TB_RES_FIELD_DECL(o, k, t) TB_RES_FIELD_##t o##_##k;
    TB_RES_CASE_FIELDS(TB_RES_FIELD_DECL)
#undef TB_RES_FIELD_DECL
} tb_res_fields;

/* One case record of a loaded file, typed: every renderer reads these
 * fields, never the JSON.  Strings and arrays belong to the file (freed
 * with it). */
typedef struct tb_rescase {
    const cJSON *json; /* the record, without its samples_ns values when
                          the file is pruned; NULL when the file keeps
                          typed records alone (compact): then src_off
                          and src_len place its text in the file.  Read
                          it through tb_rescase_record. */
    size_t src_off, src_len;
    const char *id;
    const char *op, *dtype, *backend; /* non-empty */
    const char *category; /* NULL when absent */
    const char *status;   /* one of TB_RES_STATUSES */
    tb_res_status st;     /* the same, as a number */
    const char *message;  /* NULL when null */
    const char *impl;     /* NULL when null */
    const char *host;     /* NULL when absent or null */
    bool alloc_outputs, transfers; /* the forms (false when absent) */
    const char *layout; /* "transposed"...; NULL when absent: contiguous */
    /* The parts of the id, from the fields (docs/FORMAT.md, "A case": a
     * case with no input shapes names its first output shape): key is
     * OPP/SHAPES/DTYPE, what cases of several backends share; opp is
     * OP[@alloc][@layout=L][PARAMS]; variant BACKEND[AXES][@transfers]. */
    const char *key, *opp, *shapes_text, *variant;
    int n_shapes, n_out_shapes;
    const tb_res_shape *shapes, *out_shapes;
    int n_params; /* in file order */
    const tb_res_param *params;
    int n_axes; /* backend_params, in file order */
    const tb_res_axis *axes;
    bool timed;          /* status "ok": every field below is valid */
    size_t n;            /* samples */
    double *samples_ns;  /* n per-iteration times (heap, owned) */
    int n_rounds;              /* 0 when the file has no round medians */
    double *round_medians_ns;  /* n_rounds medians, one per round (owned) */
    double iters_per_sample;
    double median_ns, ci_low_ns, ci_high_ns, ci_rel, min_ns, mean_ns;
    double bytes, flops, items; /* the cost model (NAN if absent) */
    double gb_s, gflop_s, items_s;         /* NAN when null */
    bool has_counters;                     /* "counters" is an object */
    double counters[TB_RES_NCOUNTERS_ALL]; /* NAN when absent */
    tb_res_cupti_state cupti_state;
    const char *cupti_reason;        /* NULL: VALID or ABSENT */
    tb_res_cupti cupti;              /* valid when VALID */
    double cupti_ctr[TB_RES_NCUPTI]; /* NAN unless VALID */
    /* instructions per iteration (docs/FORMAT.md, "Instruction counts"):
     * NAN when the record has none (not asked for, or null); then the
     * source ("perf", "callgrind") and the ISA that ran, or NULL. */
    double instructions;
    const char *instr_source, *instr_isa;
    /* a workload step's per-op breakdown: has_breakdown when the
     * record has one (else breakdown_reason says why, or is NULL: no
     * workload, or a file older than the breakdown) */
    bool has_breakdown;
    tb_res_breakdown breakdown;
    const char *breakdown_reason;
    int n_throttle_reasons; /* gpu_clock.throttle_reasons (strings) */
    const char *const *throttle_reasons;
    tb_res_fields f;
} tb_rescase;

/* Parameter `name` of c, or def when it has none. */
double tb_rescase_param(const tb_rescase *c, const char *name, double def);

/* Value of c's backend axis `name`, or NULL when it has none. */
const char *tb_rescase_axis(const tb_rescase *c, const char *name);

/* ---- the run: env, peaks, config, summary, shard ------------------------ */

typedef struct tb_res_cache {
    double level, size_bytes;
    const char *type, *shared_cpus; /* or NULL */
} tb_res_cache;

typedef struct tb_res_plugin {
    const char *name, *path; /* or NULL */
} tb_res_plugin;

/* A named number: a summary count. */
typedef struct tb_res_count {
    const char *name;
    double value; /* NAN when not a number */
} tb_res_count;

/* A python_overhead figure: its median and 95% CI (NAN when the file
 * has none: an older compare_numpy.py). */
typedef struct tb_res_figure {
    const char *name;
    double value, lo, hi;
} tb_res_figure;

/* "env" (docs/FORMAT.md): every field NULL, NAN or false (has_*) when
 * the file lacks it.  build, libraries and json are shown member by
 * member as recorded (the report's tables), so they stay JSON. */
typedef struct tb_resenv {
    const cJSON *json; /* the env object, or NULL */
    const char *date, *hostname, *command;
    const cJSON *build; /* object or NULL */
    const char *git_commit, *build_type, *c_args, *sanitize,
        *tbench_version;
    bool has_cpu;
    const char *cpu_model, *cpu_vendor;
    double logical_cpus, physical_cores, mhz;
    int n_isa_items; /* cpu.isa's length, strings or not */
    int n_isa;
    const char *const *isa; /* its strings */
    bool has_caches;        /* cpu.caches is an array */
    int n_caches;           /* its items, one each */
    const tb_res_cache *caches;
    bool has_governor;      /* cpu.governor present (null: not readable) */
    const char *governor;   /* a string, else NULL */
    bool has_memory;
    double memory_total, memory_available;
    bool has_os;
    const char *os_name, *os_kernel, *os_machine;
    int n_loadavg; /* loadavg's length, -1 when not an array (its first
                      3 below, 0 for an item that is not a number) */
    double loadavg[3];
    bool has_clock;
    const char *clock_source;
    double clock_resolution_ns;
    const cJSON *libraries; /* object or NULL */
    int n_warning_items;    /* warnings' length */
    int n_warnings;
    const char *const *warnings; /* its strings */
    int n_plugins;
    const tb_res_plugin *plugins;
    bool has_python_overhead;
    const char *python_overhead_method;
    int n_python_overhead; /* its numbers, in order */
    const tb_res_figure *python_overhead;
} tb_resenv;

/* One bandwidth or FMA figure of "peaks" (or of peaks.gpu). */
typedef struct tb_res_peak {
    const char *kernel, *level; /* bandwidth: kernel and level */
    const char *isa, *dtype;    /* flops: ISA and dtype */
    double threads, working_set_bytes;
    double best, median, vendor; /* GB/s or GFLOP/s */
    double worst;                /* bandwidth: the slowest repetition */
} tb_res_peak;

/* "peaks" (docs/FORMAT.md, "peaks"). */
typedef struct tb_respeaks {
    bool present; /* an object */
    bool quick;
    const char *date;
    double load_avg_1m;
    int n_bandwidth, n_flops;
    const tb_res_peak *bandwidth, *flops;
    bool has_gpu; /* peaks.gpu is an object */
    bool gpu_available;
    const char *gpu_backend, *gpu_reason, *gpu_name, *gpu_cc;
    double gpu_sm_count;
    int n_gpu_bandwidth, n_gpu_flops;
    const tb_res_peak *gpu_bandwidth, *gpu_flops;
} tb_respeaks;

/* One entry of "config". */
typedef struct tb_res_config {
    const char *path, *name, *text; /* or NULL */
    double seed; /* NAN when not a number */
    /* the effective settings the cases ran with (overrides included):
     * the file's "warmup" and "measure" objects, or NULL */
    const cJSON *warmup, *measure;
} tb_res_config;

/* The largest result file the loader reads: a run of 10M samples per
 * case (measure.max_samples' limit) is about 200 MB of JSON, and the
 * parsed document takes about three times the file's size. */
#define TB_RES_MAX_BYTES ((size_t)1 << 30)

typedef struct tb_res_arena tb_res_arena;
typedef struct tb_res_shared tb_res_shared;

typedef struct tb_resfile {
    char *path;   /* the file actually read (DIR/results.json for a DIR) */
    cJSON *doc;   /* the whole document */
    bool complete;   /* "complete": true */
    bool incomplete; /* "complete": false (a run cut short) */
    const char *date, *hostname, *git_commit, *cpu_model; /* or NULL */
    tb_resenv env;
    tb_respeaks peaks;
    bool has_config; /* "config" is an array */
    int n_config;
    const tb_res_config *config;
    bool has_summary; /* an object: its members in file order */
    int n_summary;
    const tb_res_count *summary;
    /* "shard" of a shard's run (run --shard I/N): numbers NAN unless
     * numbers, digest NULL unless a string */
    bool has_shard;
    double shard_index, shard_count, shard_cases, shard_plan_cases;
    const char *shard_plan_digest;
    /* the shard's "selection": the run's --filter, --exclude and
     * --backend values (each array NULL-terminated); has_selection
     * false in files written before it (their plan is not rebuilt) */
    bool has_selection;
    const char **sel_filters, **sel_excludes, **sel_backends;
    int n;
    tb_rescase *cases; /* in file order */
    int *by_id;        /* indices of cases sorted by id (for lookups) */
    tb_res_arena *arena; /* the typed fields' strings and arrays */
    tb_res_shared *shared; /* the arena's strings kept once (loading) */
    /* loaded record by record: each ok record's stats.samples_ns is
     * empty in its json (the values are in samples_ns) */
    bool pruned;
    /* loaded record by record from a regular file and its records'
     * trees freed, every typed string copied (a tiny record's tree took
     * about 11 KB): a record read again opens path anew (no descriptor
     * is held: merge may read thousands of shards), which must still be
     * this file (device, inode), of this size and change time */
    bool compact;
    unsigned long long src_dev, src_ino;
    long long src_size, src_ctime_ns;
} tb_resfile;

/* Summary member `name` of f ("cases", a status name), NAN when it has
 * none. */
double tb_resfile_summary(const tb_resfile *f, const char *name);

/* The first member of env.build that differs between a and b (or
 * "env.build" when one has no build, or they have other members), NULL
 * when the builds are the same. */
const char *tb_resfile_build_diff(const tb_resfile *a, const tb_resfile *b);

/* Do a and b have the same "peaks" (member for member)? */
bool tb_resfile_same_peaks(const tb_resfile *a, const tb_resfile *b);

/* Load and check the result file at path (a file, or a run folder that
 * holds results.json).  Checks: readable, at most TB_RES_MAX_BYTES (a
 * larger regular file is refused before it is read; a stream stops at
 * the limit or at its first NUL byte, so /dev/zero fails at once),
 * valid UTF-8, complete JSON in which every number is finite (1e999
 * overflows to infinity), an object with
 * "schema" == "tbench.results/1", "complete" a bool when present, a
 * "cases" array whose records are
 * objects with a unique non-empty string id, non-empty op, dtype and
 * backend strings and a known status (TB_RES_STATUSES), stats null or
 * absent unless "ok", model flops, bytes and items >= 0, and for "ok"
 * records a stats object with finite numbers n >= 1 (as many finite
 * samples_ns values >= 0, median_ns within their range), positive
 * median_ns, ci_low_ns <= median_ns <=
 * ci_high_ns, ci_low_ns, min_ns and mean_ns >= 0, iters_per_sample >= 1,
 * a finite ci_rel, and numbers (or nulls) in throughput, counters and
 * the optional stats (max_ns, stddev_ns, mad_ns, p5_ns, p95_ns, ci_rel,
 * outliers); "env" and "peaks" objects or null; per case
 * "backend_params" an object of strings, "params", "model", "check",
 * "timing" and "roofline" objects, "shapes" and "out_shapes" lists of
 * lists of numbers (each when present and not null), so that no command
 * meets a member of the wrong type; for any record, "cupti" absent,
 * null with a "cupti_reason" string, or an object whose every count is a
 * finite number >= 0 (iterations an integer >= 1; memcpy h2d, d2h, d2d
 * and other each {count, bytes}; kernels an array of {name, count,
 * device_ns} with a non-empty name); and an instructions object (or
 * null) whose per_iter is a number >= 0 or null and whose source and isa
 * are strings or null; "breakdown" absent, null (with
 * "breakdown_reason" a string or null) or an object (steps an integer
 * >= 1, kept_steps an integer in [1, steps], step_ns and parts_ns >= 0,
 * gap_ns and gap_fraction numbers, parts an array of {op, kernel:
 * non-empty strings, phase "fwd", "bwd" or "optimizer", calls, ns,
 * share: numbers >= 0}).  On failure *out is
 * NULL and err holds one line "PATH: what".  Returns 0, TB_EIO
 * (unreadable), TB_EPARSE (not JSON, truncated), TB_EINVAL (not a result
 * file or a bad field) or TB_ENOMEM.  Free with tb_resfile_free. */
int tb_resfile_load(const char *path, tb_resfile **out, char *err,
                    size_t errlen);

/* The same checks on a document already in memory: text[0..len) with
 * text[len] == '\0'; path names it in messages and in f->path. */
int tb_resfile_from_text(const char *path, const char *text, size_t len,
                         tb_resfile **out, char *err, size_t errlen);

/* The same checks on a document being written (`tbench run`'s, before
 * or after it reaches the disk): exactly the text the writer would
 * write, loaded as the file would be.  path names it in messages. */
int tb_resfile_from_doc(const char *path, const cJSON *doc,
                        tb_resfile **out, char *err, size_t errlen);

void tb_resfile_free(tb_resfile *f); /* accepts NULL */

/* A copy of case c's record as the file has it, with its samples
 * (c->json with them put back, or the record's text read again from the
 * file and parsed when f is compact; its id c->id), or NULL with one
 * line "PATH: what" in err (out of memory, a read error, or the file
 * changed since it was loaded).  The caller deletes it. */
cJSON *tb_rescase_record(const tb_resfile *f, const tb_rescase *c,
                         char *err, size_t errlen);

/* cJSON_Print's text of record r as it stands depth levels deep in a
 * document (depth 0 to 8), handed to put(ctx, bytes, len) in pieces:
 * its own print re-indented by depth tabs after every newline (an
 * escaped string holds none), so that a document of many records is
 * written one record at a time (merge: depth 2; show --json's array:
 * 1).  0, TB_ENOMEM, TB_EINVAL (depth) or put's non-zero return. */
int tb_res_put_nested(const cJSON *r, int depth,
                      int (*put)(void *ctx, const void *p, size_t n),
                      void *ctx);

/* The id of record rec (a string member "id"), or NULL. */
const char *tb_res_record_id(const cJSON *rec);

/* The case with this id, or NULL.  O(log n). */
const tb_rescase *tb_resfile_find(const tb_resfile *f, const char *id);

/* The case of f that runs c with one thread (the same key, backend,
 * forms and axes, but the axis threads = 1), or NULL: c has no threads
 * axis of a number above 1, or f has no such case. */
const tb_rescase *tb_resfile_one_thread(const tb_resfile *f,
                                        const tb_rescase *c);

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

/* Keep only the cases that ran on backend `name` and rename each to its
 * id with the backend's name replaced by '*' (so add/64/f32/v1 becomes
 * "add/64/f32/" + "*"), so that cases of two backends (two builds of
 * one plugin under two labels) join as one case in compare.
 * Returns 0, TB_ENOMEM, or TB_EINVAL with "PATH: no case ran on backend
 * NAME" when none is left. */
int tb_resfile_pick_backend(tb_resfile *f, const char *name, char *err,
                            size_t errlen);

#endif
