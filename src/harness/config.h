/* Benchmark configuration: a JSON file (comments allowed) parsed into a
 * tb_config.  Field-by-field description: docs/CONFIG.md.
 *
 * The parser checks syntax, types and unknown keys and that every op,
 * dtype, backend and parameter name exists.  Shapes are checked against
 * the op's shape rule later, by the planner, which has the whole case.
 * Every error is one line: "FILE:LINE:COL: KEYPATH: what is wrong" (the
 * line/column is given when the problem has a position in the text). */
#ifndef TB_HARNESS_CONFIG_H
#define TB_HARNESS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../ops/op.h"

#define TB_CFG_MAX_SHAPES 64
#define TB_CFG_MAX_PARAMSETS 16
#define TB_CFG_MAX_BACKENDS 8
#define TB_CFG_MAX_AXISVALS 32
#define TB_CFG_MAX_ROUNDS 64
#define TB_STR_(x) #x
#define TB_STR(x) TB_STR_(x)

typedef struct tb_cfg_warmup {
    double min_time_s; /* warm up at least this long ... */
    int min_iters;     /* ... and at least this many iterations */
} tb_cfg_warmup;

typedef struct tb_cfg_measure {
    double sample_time_s; /* a sample lasts at least this long (batching) */
    int min_samples;
    int max_samples;
    double ci_target;  /* stop when (ci_high-ci_low)/median < this */
    double max_time_s; /* time limit for sampling one case */
    int rounds;        /* passes over the plan that share the sampling */
    double timeout_s;  /* a case's worker is killed after this long */
    int instructions;  /* TB_INSTR_*: count instructions per iteration */
    int instructions_iters; /* iterations counted (their mean is kept),
                               for instructions and cache alike */
    int cache;         /* TB_INSTR_*: cache and TLB events per iteration */
    bool breakdown;      /* a workload's per-op pass after sampling */
    int breakdown_steps; /* its steps; 0: a tenth of those sampled */
} tb_cfg_measure;

/* measure.instructions and measure.cache: where the counts come from
 * (instr.h). */
enum {
    TB_INSTR_NONE,      /* not counted (the default) */
    TB_INSTR_PERF,      /* perf_event_open, user-mode instructions */
    TB_INSTR_CALLGRIND, /* the case re-run under valgrind's callgrind */
    TB_INSTR_AUTO,      /* perf where the kernel allows it, else callgrind */
};

/* One shape entry: one shape per op input. */
typedef struct tb_cfg_shapes {
    tb_shape in[TB_MAX_INPUTS];
    int n_in;       /* number of shapes given (1 = same for all inputs) */
    int line, col;  /* position in the file, for messages */
} tb_cfg_shapes;

typedef struct tb_cfg_op {
    const tb_op *op;
    int n_shapes;
    tb_cfg_shapes shapes[TB_CFG_MAX_SHAPES];
    int n_paramsets; /* at least 1 (an empty set) */
    tb_params paramsets[TB_CFG_MAX_PARAMSETS];
    bool has_dtypes; /* per-op dtype override */
    bool dtypes[TB_DTYPE_COUNT];
    /* "alloc": alloc[0] = outputs allocated once (out=, the default),
     * alloc[1] = allocated by every call; each set one is a case. */
    bool alloc[2];
    int line, col;
    /* "transfers": transfers[0] = data resident on the backend (the
     * default), transfers[1] = every call uploads the inputs from host
     * memory and downloads the outputs; each set one is a case. */
    bool transfers[2];
    /* "layout": how the inputs lie in memory (tensor.h); each set one
     * is a case.  Absent: contiguous only. */
    bool layouts[TB_LAYOUT_COUNT];
} tb_cfg_op;

/* A backend and, per axis it names, the list of values to sweep.
 * Axis names/values are validated by the planner against the backend. */
typedef struct tb_cfg_axis {
    char name[32];
    int n_values;
    char values[TB_CFG_MAX_AXISVALS][32];
    int line, col; /* position of the axis key, for messages */
    int vline[TB_CFG_MAX_AXISVALS], vcol[TB_CFG_MAX_AXISVALS]; /* values */
} tb_cfg_axis;

typedef struct tb_cfg_backend {
    char name[32];
    int n_axes;
    tb_cfg_axis axes[4];
    int line, col;
} tb_cfg_backend;

typedef struct tb_config {
    char path[4096];
    char name[128];
    uint64_t seed;
    tb_cfg_warmup warmup;
    tb_cfg_measure measure;
    bool dtypes[TB_DTYPE_COUNT];
    int n_backends;
    tb_cfg_backend backends[TB_CFG_MAX_BACKENDS];
    int n_ops;
    tb_cfg_op *ops; /* heap array of n_ops */
    char *text;     /* the file's text, kept to embed in results */
} tb_config;

/* Defaults for every optional field (documented in docs/CONFIG.md). */
void tb_config_defaults(tb_config *cfg);

/* Parse the file at path.  On error returns TB_EIO/TB_EPARSE/TB_EINVAL and
 * writes a one-line message (no trailing newline) into err. */
int tb_config_load(const char *path, tb_config *cfg, char *err,
                   size_t errlen);
/* Parse from memory; `path` is only used in messages. */
int tb_config_parse(const char *text, size_t len, const char *path,
                    tb_config *cfg, char *err, size_t errlen);
void tb_config_free(tb_config *cfg);

#endif
