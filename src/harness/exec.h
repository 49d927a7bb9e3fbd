/* `tbench exec`: one case computed once on deterministic inputs, every
 * input, output and reference output written as a NumPy .npy file, and
 * exec.json naming them (docs/FORMAT.md).  The case is planned and
 * checked exactly as `tbench run` would (same id, same seed mixing, same
 * inputs), so exec reproduces what a run measured. */
#ifndef TB_HARNESS_EXEC_H
#define TB_HARNESS_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "plan.h"
#include "runner.h"

/* The config of one case: op (its entry cfg->ops[0] has no shape or
 * parameter set yet: fill shapes[0] and paramsets[0]) in dtype dt on
 * backend (its default axis values), inputs seeded by seed.  Free with
 * tb_config_free.  0 or TB_ENOMEM. */
int tb_exec_config(const tb_op *op, tb_dtype dt, const char *backend,
                   uint64_t seed, tb_config *cfg);

/* Plan cfg (from tb_exec_config, filled): exactly one case.  0, or
 * TB_EINVAL/TB_ESHAPE/TB_ENOMEM with a one-line message in err. */
int tb_exec_plan(const tb_config *cfg, tb_plan *plan, char *err,
                 size_t errlen);

typedef struct tb_exec_opts {
    const char *outdir; /* DIR: made all or nothing (base/outdir.h) */
    uint64_t seed;      /* the config's seed, recorded in exec.json */
    /* The files the case's given inputs (tb_case.given_in) were read
     * from, recorded in exec.json; n 0: generated inputs. */
    const char *const *input_files;
    int n_input_files;
} tb_exec_opts;

/* What the case did when its files were written. */
typedef struct tb_exec_out {
    tb_status status; /* ok or failed-check */
    char impl[256];   /* the kernel that ran, or "?" */
    char message[512]; /* failed-check: why */
} tb_exec_out;

/* Run case c once and write its files into o->outdir.  Returns 0 when
 * they are written (out: ok or failed-check); else nothing is left in
 * DIR and err holds a one-line message: TB_EUNAVAILABLE (c's backend is
 * unavailable), TB_EINVAL (DIR cannot be made), TB_EFAIL (the case did
 * not run: unsupported, an error...), TB_EIO or TB_ENOMEM. */
int tb_exec_run(const tb_case *c, const tb_exec_opts *o, tb_exec_out *out,
                char *err, size_t errlen);

#endif
