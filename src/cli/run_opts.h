/* `tbench run` options that build or change the matrix from the command
 * line (run_opts.c): one case without a config file, and overrides of a
 * config's warm-up and measure settings. */
#ifndef TB_CLI_RUN_OPTS_H
#define TB_CLI_RUN_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "../harness/config.h"

#define TB_RUN_MAX_SHAPES 16 /* cmd_run.c's message says 16 */

/* --op NAME --shape S [--shape S ...] [--params K=V,...] [--dtype D,...]
 * [--backend B ...] */
typedef struct tb_run_quick {
    const char *op, *params, *dtype;
    const char *shapes[TB_RUN_MAX_SHAPES];
    int n_shapes;
    const char *const *backends; /* specs (tb_run_backend_split), or none */
    int n_backends;
} tb_run_quick;

/* A --backend value: backend specs joined by ',' outside brackets, each
 * NAME or NAME[AXIS=V,V;AXIS=V] (the axes in the case id's own syntax,
 * several values per axis, e.g. "cpu[threads=1,2;isa=avx2,avx512]").
 * Appends each spec to spec[*n] and its name alone to name[*n] (both of
 * TB_RUN_SPEC_LEN bytes), at most max in all.  0, or TB_EINVAL with a
 * one-line message. */
#define TB_RUN_SPEC_LEN 256
int tb_run_backend_split(const char *arg, char (*spec)[TB_RUN_SPEC_LEN],
                         char (*name)[TB_RUN_SPEC_LEN], int *n, int max,
                         char *err, size_t errlen);

/* Write the config text of the matrix q describes (one op; its shapes,
 * dtypes, backends: cpu unless given, f32 unless given) and parse it into
 * cfg, whose config[].text then reproduces the run.  0, or an error code
 * with a one-line message. */
int tb_run_quick_config(const tb_run_quick *q, tb_config *cfg, char *err,
                        size_t errlen);

typedef enum {
    TB_OVR_WARMUP_MS,   /* --warmup-ms     warmup.min_time_ms */
    TB_OVR_WARMUP_ITERS, /* --warmup-iters warmup.min_iters */
    TB_OVR_SAMPLE_MS,   /* --sample-ms     measure.sample_time_ms */
    TB_OVR_MIN_SAMPLES, /* --min-samples   measure.min_samples */
    TB_OVR_MAX_SAMPLES, /* --max-samples   measure.max_samples */
    TB_OVR_CI_TARGET,   /* --ci-target     measure.ci_target */
    TB_OVR_MAX_TIME,    /* --max-time      measure.max_time_s */
    TB_OVR_ROUNDS,      /* --rounds        measure.rounds */
    TB_OVR_TIMEOUT,     /* --timeout       measure.timeout_s */
    TB_OVR_COUNT
} tb_override;

typedef struct tb_run_overrides {
    bool set[TB_OVR_COUNT];
    double v[TB_OVR_COUNT];
} tb_run_overrides;

/* Parse the value of one override option, with the config key's range.
 * 0, or TB_EINVAL with a one-line message naming the option. */
int tb_run_override_set(tb_run_overrides *o, tb_override which,
                        const char *text, char *err, size_t errlen);
/* The long option's name ("rounds"). */
const char *tb_run_override_name(tb_override which);
/* Apply the overrides to a loaded config (the values every case of it is
 * measured with; results record them under config[]).  TB_EINVAL when
 * min_samples ends up above max_samples. */
int tb_run_overrides_apply(const tb_run_overrides *o, tb_config *cfg,
                           char *err, size_t errlen);

#endif
