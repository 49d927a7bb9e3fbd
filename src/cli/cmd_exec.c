/* tbench exec: options -> one case (its op, shapes, parameters, dtype,
 * backend, seed, or --input files) -> the harness computes it once and
 * writes its tensors as .npy files and exec.json (src/harness/exec.h) ->
 * the exit status. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../backends/backend.h"
#include "../base/error.h"
#include "../ops/npy.h"
#include "../harness/config.h"
#include "../harness/exec.h"
#include "../harness/plan.h"
#include "commands.h"

/* Destroy the --input tensors (zeroed entries too: given[] starts
 * zeroed, so every early return can free all n); returns rc. */
static int given_free(tb_tensor *given, int n, int rc)
{
    for (int k = 0; k < n; k++)
        tb_tensor_destroy(&given[k]);
    return rc;
}

/* "256x256" -> shape.  0, or TB_EINVAL with a reason. */
static int parse_one_shape(const char *s, tb_shape *out, char *err,
                           size_t len)
{
    memset(out, 0, sizeof *out);
    const char *p = s;
    while (*p) {
        if (out->ndim == TB_MAX_DIMS) {
            snprintf(err, len, "more than %d dims", TB_MAX_DIMS);
            return TB_EINVAL;
        }
        char *end = (char *)p;
        errno = 0;
        long long v = 0; /* digits only: strtoll takes a sign and spaces */
        if (*p >= '0' && *p <= '9')
            v = strtoll(p, &end, 10);
        if (end == p || errno || v <= 0 || v > (1LL << 53)) {
            snprintf(err, len, "'%s': dims must be positive integers", s);
            return TB_EINVAL;
        }
        out->dim[out->ndim++] = v;
        if (*end == 'x' && end[1])
            end++;
        else if (*end) {
            snprintf(err, len, "'%s': expected dims like 64x128", s);
            return TB_EINVAL;
        }
        p = end;
    }
    if (out->ndim == 0) {
        snprintf(err, len, "empty shape");
        return TB_EINVAL;
    }
    return 0;
}

/* "64x128,128x32" -> shapes (one per input; one shape for all inputs). */
static int parse_shapes(const char *s, tb_cfg_shapes *cs, char *err,
                        size_t len)
{
    char buf[1024];
    if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf) {
        snprintf(err, len, "too long");
        return TB_EINVAL;
    }
    memset(cs, 0, sizeof *cs);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (cs->n_in == TB_MAX_INPUTS) {
            snprintf(err, len, "more than %d shapes", TB_MAX_INPUTS);
            return TB_EINVAL;
        }
        if (parse_one_shape(tok, &cs->in[cs->n_in++], err, len))
            return TB_EINVAL;
    }
    if (cs->n_in == 0) {
        snprintf(err, len, "no shape");
        return TB_EINVAL;
    }
    return 0;
}

/* "axis=0,keepdim=true" (or "equation=ij,jk->ik": tb_params_next) ->
 * params of op. */
static int parse_params(const tb_op *op, const char *s, tb_params *p,
                        char *err, size_t len)
{
    char seen[TB_MAX_PARAMS + 1][64]; /* the names so far: one value
                                       * each, as a config's "params"
                                       * object has */
    int n_seen = 0, got;
    char name[64], vs[TB_PARAM_STR_MAX + 64];
    const char *cur = s;
    while ((got = tb_params_next(&cur, name, sizeof name, vs, sizeof vs))) {
        if (got < 0) {
            snprintf(err, len, "'%.80s': expected name=value,...", s);
            return TB_EINVAL;
        }
        for (int i = 0; i < n_seen; i++)
            if (!strcmp(seen[i], name)) {
                snprintf(err, len, "%s is given twice", name);
                return TB_EINVAL;
            }
        if (n_seen < (int)(sizeof seen / sizeof seen[0]))
            snprintf(seen[n_seen++], sizeof seen[0], "%s", name);
        int k = tb_op_param_index(op, name);
        if (k >= 0 && op->params[k].kind == TB_PARAM_STRING) {
            int rc = tb_params_set_str(op, p, name, vs, err, len);
            if (rc)
                return rc;
            continue;
        }
        double v;
        char *end;
        if (!strcmp(vs, "true"))
            v = 1;
        else if (!strcmp(vs, "false"))
            v = 0;
        else {
            v = strtod(vs, &end);
            if (end == vs || *end) {
                snprintf(err, len, "%s: '%s' is not a number", name, vs);
                return TB_EINVAL;
            }
        }
        int rc = tb_params_set(op, p, name, v, err, len);
        if (rc)
            return rc;
    }
    return 0;
}

/* The options `exec` parses (and `tbench __options` lists). */
static const struct option longopts[] = {
    {"shape", required_argument, NULL, 's'},
    {"params", required_argument, NULL, 'p'},
    {"dtype", required_argument, NULL, 'd'},
    {"backend", required_argument, NULL, 'b'},
    {"seed", required_argument, NULL, 'S'},
    {"output", required_argument, NULL, 'o'},
    {"input", required_argument, NULL, 'i'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};
const tb_cmd_opts tb_opts_exec = {longopts, ":s:p:d:b:S:o:i:h", NULL};

/* What the command line asks for. */
typedef struct exec_args {
    const char *shape, *params, *dtype, *backend, *outdir, *seed_s;
    const char *inputs[TB_MAX_INPUTS + 1]; /* --input files */
    int n_inputs;
    const tb_op *op;
    tb_dtype dt;
    uint64_t seed;
} exec_args;

/* The options and the op into a.  true to go on; false: stop with *rc
 * (help printed, or a usage error). */
static bool exec_parse(int argc, char **argv, exec_args *a, int *rc)
{
    *rc = 0;
    memset(a, 0, sizeof *a);
    a->params = "";
    a->backend = "cpu";
    a->seed_s = "42";
    a->dt = TB_F32;
    int c;
    bool first = true;
    while ((c = tb_opt_next(argc, argv, &tb_opts_exec, &first)) !=
           -1) {
        switch (c) {
        case 's': a->shape = optarg; break;
        case 'p': a->params = optarg; break;
        case 'd': a->dtype = optarg; break;
        case 'i':
            if (a->n_inputs == TB_MAX_INPUTS) {
                *rc = tb_usage_error("exec: --input: more than %s files",
                                     TB_STR(TB_MAX_INPUTS));
                return false;
            }
            a->inputs[a->n_inputs++] = optarg;
            break;
        case 'b': a->backend = optarg; break;
        case 'S': a->seed_s = optarg; break;
        case 'o': a->outdir = optarg; break;
        case 'h':
            tb_cmd_usage(stdout, "exec");
            *rc = TB_EXIT_OKAY;
            return false;
        default:
            *rc = tb_opt_error("exec", c, argv, longopts);
            return false;
        }
    }
    *rc = TB_EXIT_USAGE;
    if (optind != argc - 1) {
        *rc = tb_usage_error("exec: give exactly one OP%s", "");
        return false;
    }
    if (tb_env_check())
        return false;
    const char *opname = argv[optind];
    if (!(a->op = tb_op_find(opname)))
        *rc = tb_usage_error("exec: unknown op '%s' (see 'tbench list')",
                             opname);
    else if (!a->shape && !a->n_inputs)
        *rc = tb_usage_error("exec: --shape is required (e.g. --shape "
                             "256x256)%s", "");
    else if (!a->outdir)
        *rc = tb_usage_error("exec: -o DIR is required%s", "");
    else if (a->dtype && tb_dtype_parse(a->dtype, &a->dt))
        *rc = tb_usage_error("exec: --dtype: unknown dtype '%s' (f32, "
                             "f64, bf16, f16)", a->dtype);
    else
        *rc = 0;
    if (*rc)
        return false;
    if (a->n_inputs && a->n_inputs != a->op->n_in) {
        fprintf(stderr, "tbench: exec: --input: %s takes %d input%s, got %d "
                "file%s\n", a->op->name, a->op->n_in,
                a->op->n_in == 1 ? "" : "s", a->n_inputs,
                a->n_inputs == 1 ? "" : "s");
        *rc = TB_EXIT_USAGE;
        return false;
    }
    return true;
}

/* The --input files into given[]: shapes from the files (listed in
 * gshape, as --shape writes them); the dtype too unless --dtype names it
 * (then every file must have it).  0 or TB_EXIT_USAGE after the
 * message. */
static int read_inputs(exec_args *a, tb_tensor *given, char *gshape,
                       size_t glen)
{
    const tb_op *op = a->op;
    for (int i = 0; i < a->n_inputs; i++) {
        char why[512];
        if (tb_npy_read(a->inputs[i], &given[i], why, sizeof why)) {
            fprintf(stderr, "tbench: exec: --input: %s\n", why);
            return TB_EXIT_USAGE;
        }
        if (i == 0 && !a->dtype)
            a->dt = given[0].dtype;
        char one[128];
        tb_shape gs = tb_tensor_shape(&given[i]);
        size_t u = strlen(gshape);
        snprintf(gshape + u, glen - u, "%s%s", i ? "," : "",
                 tb_shape_format(&gs, one, sizeof one));
        if (given[i].dtype != a->dt) {
            fprintf(stderr, "tbench: exec: --input: %s: %s, but the case "
                    "is %s (--dtype, or the first file, sets it)\n",
                    a->inputs[i], tb_dtype_name(given[i].dtype),
                    tb_dtype_name(a->dt));
            return TB_EXIT_USAGE;
        }
    }
    /* Factorizations of non-finite matrices have no meaning (LAPACK's
     * may loop or return garbage): bad input, refused before running. */
    for (int i = 0; i < a->n_inputs && op->category == TB_CAT_LINALG; i++) {
        int64_t n = tb_tensor_numel(&given[i]);
        for (int64_t k = 0; k < n; k++) {
            double v = tb_tensor_get(&given[i], k);
            if (isfinite(v))
                continue;
            fprintf(stderr, "tbench: exec: --input: %s: element %lld is "
                    "%g; %s needs finite values\n", a->inputs[i],
                    (long long)k, v, op->name);
            return TB_EXIT_USAGE;
        }
    }
    return 0;
}

/* --shape against the --input files' shapes, then --backend and --seed.
 * 0 or TB_EXIT_USAGE after the message. */
static int check_case_args(exec_args *a, const char *gshape)
{
    if (a->n_inputs && a->shape) {
        tb_cfg_shapes x, y;
        char why[256];
        memset(&x, 0, sizeof x);
        memset(&y, 0, sizeof y);
        bool same = parse_shapes(a->shape, &x, why, sizeof why) == 0 &&
                    parse_shapes(gshape, &y, why, sizeof why) == 0;
        for (int i = 0; same && i < a->op->n_in; i++)
            same = tb_shape_equal(&x.in[x.n_in == 1 ? 0 : i], &y.in[i]);
        if (!same) {
            fprintf(stderr, "tbench: exec: --shape %s does not match the "
                    "--input files (%s)\n", a->shape, gshape);
            return TB_EXIT_USAGE;
        }
    }
    if (a->n_inputs)
        a->shape = gshape;
    if (!tb_backend_find(a->backend))
        return tb_usage_error("exec: --backend: unknown backend '%s'",
                              a->backend);
    char *end;
    errno = 0;
    unsigned long long seed = strtoull(a->seed_s, &end, 10);
    if (end == a->seed_s || *end || errno || a->seed_s[0] == '-')
        return tb_usage_error("exec: --seed: '%s' is not a non-negative "
                              "integer", a->seed_s);
    a->seed = seed;
    return 0;
}

/* The op entry of the case: --shape (one shape for every input, or one
 * per input), --params, and the output shapes they give.  0 or
 * TB_EXIT_USAGE after the message. */
static int fill_op(const exec_args *a, tb_cfg_op *co)
{
    const tb_op *op = a->op;
    char err[1024];
    if (parse_shapes(a->shape, &co->shapes[0], err, sizeof err)) {
        fprintf(stderr, "tbench: exec: --shape: %s\n", err);
        return TB_EXIT_USAGE;
    }
    if (op->n_in == 0 && co->shapes[0].n_in != 1) {
        fprintf(stderr, "tbench: exec: --shape: %s creates a tensor and "
                "takes one shape (the output's), got %d\n", op->name,
                co->shapes[0].n_in);
        return TB_EXIT_USAGE;
    }
    if (op->n_in && co->shapes[0].n_in != 1 &&
        co->shapes[0].n_in != op->n_in) {
        fprintf(stderr, "tbench: exec: --shape: %s takes %d input%s, got "
                "%d shapes\n", op->name, op->n_in, op->n_in == 1 ? "" : "s",
                co->shapes[0].n_in);
        return TB_EXIT_USAGE;
    }
    for (int i = co->shapes[0].n_in; i < op->n_in; i++)
        co->shapes[0].in[i] = co->shapes[0].in[0];
    if (parse_params(op, a->params, &co->paramsets[0], err, sizeof err)) {
        fprintf(stderr, "tbench: exec: --params: %s\n", err);
        return TB_EXIT_USAGE;
    }
    tb_shape outs[TB_MAX_OUTPUTS];
    if (tb_op_infer(op, co->shapes[0].in, tb_op_n_shapes(op),
                    &co->paramsets[0], outs, err, sizeof err)) {
        fprintf(stderr, "tbench: exec: --shape/--params: %s\n", err);
        return TB_EXIT_USAGE;
    }
    return 0;
}

/* Plan the case, run it (harness/exec.h), say what happened.  Returns
 * the exit status. */
static int exec_case(const exec_args *a, tb_config *cfg, tb_tensor *given)
{
    char err[1600];
    tb_plan plan = {0};
    int rc = fill_op(a, &cfg->ops[0]);
    if (!rc && tb_exec_plan(cfg, &plan, err, sizeof err)) {
        fprintf(stderr, "tbench: %s\n", err);
        rc = TB_EXIT_USAGE;
    }
    if (rc) {
        tb_plan_free(&plan);
        return rc;
    }
    if (a->n_inputs)
        plan.cases[0].given_in = given;
    tb_exec_opts o = {.outdir = a->outdir, .seed = a->seed,
                      .input_files = a->inputs,
                      .n_input_files = a->n_inputs};
    tb_exec_out out;
    int erc = tb_exec_run(&plan.cases[0], &o, &out, err, sizeof err);
    if (erc) {
        fprintf(stderr, "tbench: %s\n", err);
        rc = erc == TB_EUNAVAILABLE || erc == TB_EINVAL ? TB_EXIT_USAGE
                                                        : TB_EXIT_CASES;
    } else {
        printf("%s: %s (%s); files in %s\n", plan.cases[0].id,
               tb_status_name(out.status), out.impl, a->outdir);
        if (out.status == TB_STATUS_FAILED_CHECK)
            fprintf(stderr, "tbench: exec: check failed: %s\n",
                    out.message);
        rc = out.status == TB_STATUS_OK ? TB_EXIT_OKAY : TB_EXIT_CASES;
    }
    tb_plan_free(&plan);
    return rc;
}

int tb_cmd_exec(int argc, char **argv)
{
    exec_args a;
    int rc;
    if (!exec_parse(argc, argv, &a, &rc))
        return rc;
    tb_tensor given[TB_MAX_INPUTS];
    memset(given, 0, sizeof given);
    char gshape[512] = "";
    if ((rc = read_inputs(&a, given, gshape, sizeof gshape)) ||
        (rc = check_case_args(&a, gshape)))
        return given_free(given, a.n_inputs, rc);
    tb_config cfg;
    if (tb_exec_config(a.op, a.dt, a.backend, a.seed, &cfg)) {
        fprintf(stderr, "tbench: out of memory\n");
        rc = TB_EXIT_USAGE;
    } else {
        rc = exec_case(&a, &cfg, given);
    }
    tb_config_free(&cfg);
    return given_free(given, a.n_inputs, rc);
}
