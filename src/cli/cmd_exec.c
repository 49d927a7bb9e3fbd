/* tbench exec: compute one op once on deterministic inputs and write
 * every input, output and reference output as NumPy .npy files, plus
 * exec.json naming them.  The case is planned and checked exactly as
 * `tbench run` would (same id, same seed mixing, same inputs), so exec
 * reproduces what a run measured. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../backends/backend.h"
#include "../base/error.h"
#include "../base/fileio.h"
#include "../base/outdir.h"
#include "../ops/npy.h"
#include "commands.h"
#include "../harness/config.h"
#include "../harness/plan.h"
#include "../harness/runner.h"

/* Destroy the --input tensors (zeroed entries too: given[] starts
 * zeroed, so every early return can free all n); returns rc. */
static int given_free(tb_tensor *given, int n, int rc)
{
    for (int k = 0; k < n; k++)
        tb_tensor_destroy(&given[k]);
    return rc;
}

/* "256x256" -> shape.  0 or -1 with a reason. */
static int parse_one_shape(const char *s, tb_shape *out, char *err,
                           size_t len)
{
    memset(out, 0, sizeof *out);
    const char *p = s;
    while (*p) {
        if (out->ndim == TB_MAX_DIMS) {
            snprintf(err, len, "more than %d dims", TB_MAX_DIMS);
            return -1;
        }
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || v <= 0 || v > (1LL << 53)) {
            snprintf(err, len, "'%s': dims must be positive integers", s);
            return -1;
        }
        out->dim[out->ndim++] = v;
        if (*end == 'x')
            end++;
        else if (*end) {
            snprintf(err, len, "'%s': expected dims like 64x128", s);
            return -1;
        }
        p = end;
    }
    if (out->ndim == 0) {
        snprintf(err, len, "empty shape");
        return -1;
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
        return -1;
    }
    memset(cs, 0, sizeof *cs);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (cs->n_in == TB_MAX_INPUTS) {
            snprintf(err, len, "more than %d shapes", TB_MAX_INPUTS);
            return -1;
        }
        if (parse_one_shape(tok, &cs->in[cs->n_in++], err, len))
            return -1;
    }
    if (cs->n_in == 0) {
        snprintf(err, len, "no shape");
        return -1;
    }
    return 0;
}

/* "axis=0,keepdim=true" -> params of op. */
static int parse_params(const tb_op *op, const char *s, tb_params *p,
                        char *err, size_t len)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            snprintf(err, len, "'%s': expected name=value", tok);
            return -1;
        }
        *eq = '\0';
        const char *vs = eq + 1;
        double v;
        char *end;
        if (!strcmp(vs, "true"))
            v = 1;
        else if (!strcmp(vs, "false"))
            v = 0;
        else {
            v = strtod(vs, &end);
            if (end == vs || *end) {
                snprintf(err, len, "%s: '%s' is not a number", tok, vs);
                return -1;
            }
        }
        if (tb_params_set(op, p, tok, v, err, len))
            return -1;
    }
    return 0;
}

typedef struct {
    const char *dir;
    const tb_case *c;
    cJSON *doc;
    char err[512];
} exec_ctx;

static cJSON *shape_json(const tb_tensor *t)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < t->ndim; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)t->shape[i]));
    return a;
}

/* Write n tensors as DIR/<stem><i>.npy and list them in doc[key]. */
static int write_set(exec_ctx *x, const char *key, const char *stem,
                     const tb_tensor *t, int n)
{
    cJSON *arr = cJSON_AddArrayToObject(x->doc, key);
    for (int i = 0; i < n; i++) {
        char name[64], path[PATH_MAX];
        snprintf(name, sizeof name, "%s%d.npy", stem, i);
        snprintf(path, sizeof path, "%s/%s", x->dir, name);
        int rc = tb_npy_write(path, &t[i], x->err, sizeof x->err);
        if (rc)
            return rc;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "file", name);
        cJSON_AddStringToObject(o, "dtype", tb_dtype_name(t[i].dtype));
        cJSON_AddItemToObject(o, "shape", shape_json(&t[i]));
        cJSON_AddItemToArray(arr, o);
    }
    return 0;
}

static int write_all(void *arg, const tb_tensor *in, const tb_tensor *out,
                     const tb_tensor *ref)
{
    exec_ctx *x = arg;
    int rc = write_set(x, "inputs", "input", in, x->c->op->n_in);
    if (!rc)
        rc = write_set(x, "outputs", "output", out, x->c->op->n_out);
    if (!rc)
        rc = write_set(x, "reference", "reference", ref, x->c->op->n_out);
    return rc;
}

int tb_cmd_exec(int argc, char **argv)
{
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
    const char *shape = NULL, *params = "", *dtype = NULL,
               *backend = "cpu", *outdir = NULL, *seed_s = "42";
    const char *inputs[TB_MAX_INPUTS + 1];
    int n_inputs = 0;
    int c;
    opterr = 0;
    optind = 0; /* 0: glibc re-reads the option string (a fresh parse) */
    while ((c = getopt_long(argc, argv, ":s:p:d:b:S:o:i:h", longopts,
                            NULL)) != -1) {
        switch (c) {
        case 's': shape = optarg; break;
        case 'p': params = optarg; break;
        case 'd': dtype = optarg; break;
        case 'i':
            if (n_inputs == TB_MAX_INPUTS)
                return tb_usage_error("exec: --input: more than %s files",
                                      TB_STR(TB_MAX_INPUTS));
            inputs[n_inputs++] = optarg;
            break;
        case 'b': backend = optarg; break;
        case 'S': seed_s = optarg; break;
        case 'o': outdir = optarg; break;
        case 'h': tb_cmd_usage(stdout, "exec"); return TB_EXIT_OKAY;
        default:
            return tb_opt_error("exec", c, argv, longopts);
        }
    }
    if (optind != argc - 1)
        return tb_usage_error("exec: give exactly one OP%s", "");
    if (tb_env_check())
        return TB_EXIT_USAGE;
    const char *opname = argv[optind];
    char err[1024];
    /* the files go to DIR.tmp-XXXXXX, renamed to DIR at the end: a
     * failed write (a full disk) leaves no half-written DIR */
    tb_outdir od = {.tmp = ""};
    const tb_op *op = tb_op_find(opname);
    if (!op)
        return tb_usage_error("exec: unknown op '%s' (see 'tbench list')",
                              opname);
    if (!shape && !n_inputs)
        return tb_usage_error("exec: --shape is required (e.g. --shape "
                              "256x256)%s", "");
    if (!outdir)
        return tb_usage_error("exec: -o DIR is required%s", "");
    tb_dtype dt = TB_F32;
    if (dtype && tb_dtype_parse(dtype, &dt))
        return tb_usage_error("exec: --dtype: unknown dtype '%s' (f32, f64)",
                              dtype);
    if (n_inputs && n_inputs != op->n_in) {
        fprintf(stderr, "tbench: exec: --input: %s takes %d input%s, got %d "
                "file%s\n", op->name, op->n_in, op->n_in == 1 ? "" : "s",
                n_inputs, n_inputs == 1 ? "" : "s");
        return TB_EXIT_USAGE;
    }
    /* Given inputs: shapes from the files; the dtype too unless --dtype
     * names it (then every file must have it). */
    tb_tensor given[TB_MAX_INPUTS];
    memset(given, 0, sizeof given);
    char gshape[512] = "";
    for (int i = 0; i < n_inputs; i++) {
        char why[512];
        if (tb_npy_read(inputs[i], &given[i], why, sizeof why)) {
            fprintf(stderr, "tbench: exec: --input: %s\n", why);
            return given_free(given, n_inputs, TB_EXIT_USAGE);
        }
        if (i == 0 && !dtype)
            dt = given[0].dtype;
        char one[128];
        tb_shape gs = tb_tensor_shape(&given[i]);
        size_t u = strlen(gshape);
        snprintf(gshape + u, sizeof gshape - u, "%s%s", i ? "," : "",
                 tb_shape_format(&gs, one, sizeof one));
        if (given[i].dtype != dt) {
            fprintf(stderr, "tbench: exec: --input: %s: %s, but the case "
                    "is %s (--dtype, or the first file, sets it)\n",
                    inputs[i], tb_dtype_name(given[i].dtype),
                    tb_dtype_name(dt));
            return given_free(given, n_inputs, TB_EXIT_USAGE);
        }
    }
    /* Factorizations of non-finite matrices have no meaning (LAPACK's
     * may loop or return garbage): bad input, refused before running. */
    for (int i = 0; i < n_inputs && op->category == TB_CAT_LINALG; i++) {
        int64_t n = tb_tensor_numel(&given[i]);
        for (int64_t k = 0; k < n; k++) {
            double v = tb_tensor_get(&given[i], k);
            if (isfinite(v))
                continue;
            fprintf(stderr, "tbench: exec: --input: %s: element %lld is "
                    "%g; %s needs finite values\n", inputs[i],
                    (long long)k, v, op->name);
            return given_free(given, n_inputs, TB_EXIT_USAGE);
        }
    }
    if (n_inputs && shape) {
        tb_cfg_shapes a, b;
        char why[256];
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        bool same = parse_shapes(shape, &a, why, sizeof why) == 0 &&
                    parse_shapes(gshape, &b, why, sizeof why) == 0;
        for (int i = 0; same && i < op->n_in; i++)
            same = tb_shape_equal(&a.in[a.n_in == 1 ? 0 : i], &b.in[i]);
        if (!same) {
            fprintf(stderr, "tbench: exec: --shape %s does not match the "
                    "--input files (%s)\n", shape, gshape);
            return given_free(given, n_inputs, TB_EXIT_USAGE);
        }
    }
    if (n_inputs)
        shape = gshape;
    if (!tb_backend_find(backend))
        return tb_usage_error("exec: --backend: unknown backend '%s'",
                              backend);
    char *end;
    errno = 0;
    unsigned long long seed = strtoull(seed_s, &end, 10);
    if (end == seed_s || *end || errno || seed_s[0] == '-')
        return tb_usage_error("exec: --seed: '%s' is not a non-negative "
                              "integer", seed_s);

    tb_config cfg;
    memset(&cfg, 0, sizeof cfg);
    tb_config_defaults(&cfg);
    snprintf(cfg.path, sizeof cfg.path, "tbench exec");
    snprintf(cfg.name, sizeof cfg.name, "exec");
    cfg.seed = seed;
    for (int i = 0; i < TB_DTYPE_COUNT; i++)
        cfg.dtypes[i] = i == (int)dt;
    cfg.n_backends = 1;
    memset(&cfg.backends[0], 0, sizeof cfg.backends[0]);
    snprintf(cfg.backends[0].name, sizeof cfg.backends[0].name, "%s",
             backend);
    tb_cfg_op *co = calloc(1, sizeof *co);
    if (!co) {
        fprintf(stderr, "tbench: out of memory\n");
        return TB_EXIT_USAGE;
    }
    cfg.ops = co;
    cfg.n_ops = 1;
    co->op = op;
    co->n_shapes = 1;
    co->n_paramsets = 1;
    int rc = TB_EXIT_USAGE;
    tb_plan plan = {0};
    tb_runner *runner = NULL;
    exec_ctx x = {0};
    if (parse_shapes(shape, &co->shapes[0], err, sizeof err)) {
        fprintf(stderr, "tbench: exec: --shape: %s\n", err);
        goto out;
    }
    if (op->n_in == 0 && co->shapes[0].n_in != 1) {
        fprintf(stderr, "tbench: exec: --shape: %s creates a tensor and "
                "takes one shape (the output's), got %d\n", op->name,
                co->shapes[0].n_in);
        goto out;
    }
    if (op->n_in && co->shapes[0].n_in != 1 &&
        co->shapes[0].n_in != op->n_in) {
        fprintf(stderr, "tbench: exec: --shape: %s takes %d input%s, got "
                "%d shapes\n", op->name, op->n_in, op->n_in == 1 ? "" : "s",
                co->shapes[0].n_in);
        goto out;
    }
    for (int i = co->shapes[0].n_in; i < op->n_in; i++)
        co->shapes[0].in[i] = co->shapes[0].in[0];
    if (parse_params(op, params, &co->paramsets[0], err, sizeof err)) {
        fprintf(stderr, "tbench: exec: --params: %s\n", err);
        goto out;
    }
    tb_shape outs[TB_MAX_OUTPUTS];
    if (tb_op_infer(op, co->shapes[0].in, tb_op_n_shapes(op),
                    &co->paramsets[0], outs,
                    err, sizeof err)) {
        fprintf(stderr, "tbench: exec: --shape/--params: %s\n", err);
        goto out;
    }
    if (tb_plan_build(&cfg, 1, NULL, &plan, err, sizeof err)) {
        fprintf(stderr, "tbench: %s\n", err);
        goto out;
    }
    if (plan.n != 1) {
        fprintf(stderr, "tbench: exec: planned %d cases, expected 1\n",
                plan.n);
        goto out;
    }
    if (n_inputs)
        plan.cases[0].given_in = given;
    const tb_case *cs = &plan.cases[0];
    if (!cs->available) {
        fprintf(stderr, "tbench: exec: backend %s is unavailable: %s\n",
                backend, cs->unavailable_reason);
        goto out;
    }
    if (tb_outdir_begin(&od, outdir, err, sizeof err)) {
        fprintf(stderr, "tbench: exec: -o: %s\n", err);
        goto out;
    }
    rc = TB_EXIT_CASES;
    if (tb_runner_create(&runner, NULL)) {
        fprintf(stderr, "tbench: out of memory\n");
        goto out;
    }
    tb_result res;
    x.dir = od.tmp;
    x.c = cs;
    x.doc = cJSON_CreateObject();
    cJSON_AddStringToObject(x.doc, "id", cs->id);
    cJSON_AddStringToObject(x.doc, "op", op->name);
    cJSON_AddStringToObject(x.doc, "dtype", tb_dtype_name(dt));
    cJSON_AddStringToObject(x.doc, "backend", backend);
    cJSON *bp = cJSON_AddObjectToObject(x.doc, "backend_params");
    for (int i = 0; i < cs->n_axes; i++)
        cJSON_AddStringToObject(bp, cs->axis_name[i], cs->axis_value[i]);
    cJSON *pj = cJSON_AddObjectToObject(x.doc, "params");
    for (int i = 0; i < op->n_params; i++)
        if (tb_params_has(&cs->params, i))
            cJSON_AddNumberToObject(pj, op->params[i].name,
                                    cs->params.v[i]);
    char sd[24]; /* a JSON integer, exact above 2^53 too */
    snprintf(sd, sizeof sd, "%llu", seed);
    cJSON_AddRawToObject(x.doc, "seed", sd);
    char hex[32]; /* 64-bit seeds do not survive a JSON double */
    snprintf(hex, sizeof hex, "0x%016llx", (unsigned long long)cs->seed);
    cJSON_AddStringToObject(x.doc, "input_seed", hex);
    cJSON *gf = cJSON_AddArrayToObject(x.doc, "input_files");
    for (int k = 0; k < n_inputs; k++) /* inputs read, not generated */
        cJSON_AddItemToArray(gf, cJSON_CreateString(inputs[k]));
    int wrc = tb_runner_exec(runner, cs, &res, write_all, &x);
    cJSON_AddStringToObject(x.doc, "status", tb_status_name(res.status));
    cJSON_AddItemToObject(x.doc, "impl", res.impl
                                             ? cJSON_CreateString(res.impl)
                                             : cJSON_CreateNull());
    if (res.checked) {
        cJSON *ck = cJSON_AddObjectToObject(x.doc, "check");
        cJSON_AddBoolToObject(ck, "passed", res.check.passed);
        cJSON_AddNumberToObject(ck, "max_abs_err", res.check.max_abs_err);
        cJSON_AddNumberToObject(ck, "max_rel_err", res.check.max_rel_err);
        cJSON_AddNumberToObject(ck, "rtol", res.check.rtol);
        cJSON_AddNumberToObject(ck, "atol", res.check.atol);
    }
    tb_result_free(&res);
    if (wrc) {
        /* a message that names the temporary folder names DIR */
        size_t tl = strlen(od.tmp);
        if (!strncmp(x.err, od.tmp, tl))
            fprintf(stderr, "tbench: exec: %s%s\n", od.target, x.err + tl);
        else
            fprintf(stderr, "tbench: exec: %s\n", x.err);
        goto out;
    }
    if (res.status != TB_STATUS_OK && res.status != TB_STATUS_FAILED_CHECK) {
        fprintf(stderr, "tbench: exec: %s: %s\n", tb_status_name(res.status),
                res.message);
        goto out;
    }
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/exec.json", od.tmp);
    char *text = cJSON_Print(x.doc);
    if (!text || tb_write_atomic(path, text, strlen(text), err, sizeof err)) {
        fprintf(stderr, "tbench: exec: %s\n", text ? err : "out of memory");
        free(text);
        goto out;
    }
    free(text);
    if (tb_outdir_commit(&od, err, sizeof err)) {
        fprintf(stderr, "tbench: exec: -o: %s\n", err);
        goto out;
    }
    printf("%s: %s (%s); files in %s\n", cs->id, tb_status_name(res.status),
           res.impl ? res.impl : "?", outdir);
    if (res.status == TB_STATUS_FAILED_CHECK)
        fprintf(stderr, "tbench: exec: check failed: %s\n", res.message);
    rc = res.status == TB_STATUS_OK ? TB_EXIT_OKAY : TB_EXIT_CASES;
out:
    tb_outdir_discard(&od); /* nothing left after a commit */
    given_free(given, n_inputs, rc);
    cJSON_Delete(x.doc);
    tb_runner_destroy(runner);
    tb_plan_free(&plan);
    tb_config_free(&cfg);
    return rc;
}
