/* One case computed once, its tensors written as .npy files: see
 * exec.h. */
#include "exec.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../base/error.h"
#include "../base/fileio.h"
#include "../base/outdir.h"
#include "../ops/npy.h"

int tb_exec_config(const tb_op *op, tb_dtype dt, const char *backend,
                   uint64_t seed, tb_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    tb_config_defaults(cfg);
    snprintf(cfg->path, sizeof cfg->path, "tbench exec");
    snprintf(cfg->name, sizeof cfg->name, "exec");
    cfg->seed = seed;
    for (int i = 0; i < TB_DTYPE_COUNT; i++)
        cfg->dtypes[i] = i == (int)dt;
    cfg->n_backends = 1;
    memset(&cfg->backends[0], 0, sizeof cfg->backends[0]);
    snprintf(cfg->backends[0].name, sizeof cfg->backends[0].name, "%s",
             backend);
    tb_cfg_op *co = calloc(1, sizeof *co);
    if (!co)
        return TB_ENOMEM;
    cfg->ops = co;
    cfg->n_ops = 1;
    co->op = op;
    co->n_shapes = 1;
    co->n_paramsets = 1;
    return 0;
}

int tb_exec_plan(const tb_config *cfg, tb_plan *plan, char *err,
                 size_t errlen)
{
    int rc = tb_plan_build(cfg, 1, NULL, plan, err, errlen);
    if (rc)
        return rc;
    if (plan->n != 1) {
        snprintf(err, errlen, "exec: planned %d cases, expected 1",
                 plan->n);
        return TB_EINVAL;
    }
    return 0;
}

/* ---- the files ----------------------------------------------------------- */

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

/* exec.json's fields known before the run: the case and its seeds. */
static cJSON *doc_new(const tb_case *cs, const tb_exec_opts *o)
{
    cJSON *doc = cJSON_CreateObject();
    const tb_op *op = cs->op;
    cJSON_AddStringToObject(doc, "id", cs->id);
    cJSON_AddStringToObject(doc, "op", op->name);
    cJSON_AddStringToObject(doc, "dtype", tb_dtype_name(cs->dtype));
    cJSON_AddStringToObject(doc, "backend", cs->backend->name);
    cJSON *bp = cJSON_AddObjectToObject(doc, "backend_params");
    for (int i = 0; i < cs->n_axes; i++)
        cJSON_AddStringToObject(bp, cs->axis_name[i], cs->axis_value[i]);
    cJSON *pj = cJSON_AddObjectToObject(doc, "params");
    for (int i = 0; i < op->n_params; i++) {
        const char *t = op->params[i].kind == TB_PARAM_STRING
                            ? tb_params_str(&cs->params, i)
                            : NULL;
        if (t)
            cJSON_AddStringToObject(pj, op->params[i].name, t);
        else if (tb_params_has(&cs->params, i))
            cJSON_AddNumberToObject(pj, op->params[i].name,
                                    cs->params.v[i]);
    }
    char sd[24]; /* a JSON integer, exact above 2^53 too */
    snprintf(sd, sizeof sd, "%llu", (unsigned long long)o->seed);
    cJSON_AddRawToObject(doc, "seed", sd);
    char hex[32]; /* 64-bit seeds do not survive a JSON double */
    snprintf(hex, sizeof hex, "0x%016llx", (unsigned long long)cs->seed);
    cJSON_AddStringToObject(doc, "input_seed", hex);
    cJSON *gf = cJSON_AddArrayToObject(doc, "input_files");
    for (int k = 0; k < o->n_input_files; k++) /* read, not generated */
        cJSON_AddItemToArray(gf, cJSON_CreateString(o->input_files[k]));
    return doc;
}

/* exec.json's fields of the run: status, kernel, check. */
static void doc_result(cJSON *doc, const tb_result *res)
{
    cJSON_AddStringToObject(doc, "status", tb_status_name(res->status));
    cJSON_AddItemToObject(doc, "impl", res->impl
                                           ? cJSON_CreateString(res->impl)
                                           : cJSON_CreateNull());
    if (!res->checked)
        return;
    cJSON *ck = cJSON_AddObjectToObject(doc, "check");
    cJSON_AddBoolToObject(ck, "passed", res->check.passed);
    cJSON_AddNumberToObject(ck, "max_abs_err", res->check.max_abs_err);
    cJSON_AddNumberToObject(ck, "max_rel_err", res->check.max_rel_err);
    cJSON_AddNumberToObject(ck, "rtol", res->check.rtol);
    cJSON_AddNumberToObject(ck, "atol", res->check.atol);
}

/* Run the case into x->dir (the temporary folder of od) and write
 * exec.json there.  0 or an error with the message. */
static int run_case(tb_runner *runner, exec_ctx *x, const tb_outdir *od,
                    tb_exec_out *out, char *err, size_t errlen)
{
    tb_result res;
    int wrc = tb_runner_exec(runner, x->c, &res, write_all, x);
    doc_result(x->doc, &res);
    out->status = res.status;
    snprintf(out->impl, sizeof out->impl, "%s", res.impl ? res.impl : "?");
    snprintf(out->message, sizeof out->message, "%s", res.message);
    tb_result_free(&res);
    if (wrc) {
        /* a message that names the temporary folder names DIR */
        size_t tl = strlen(od->tmp);
        if (!strncmp(x->err, od->tmp, tl))
            snprintf(err, errlen, "exec: %s%s", od->target, x->err + tl);
        else
            snprintf(err, errlen, "exec: %s", x->err);
        return TB_EIO;
    }
    if (out->status != TB_STATUS_OK &&
        out->status != TB_STATUS_FAILED_CHECK) {
        snprintf(err, errlen, "exec: %s: %s", tb_status_name(out->status),
                 out->message);
        return TB_EFAIL;
    }
    char path[PATH_MAX + 16], why[1024];
    snprintf(path, sizeof path, "%s/exec.json", od->tmp);
    char *text = cJSON_Print(x->doc);
    int rc = 0;
    if (!text || tb_write_atomic(path, text, strlen(text), why,
                                 sizeof why)) {
        snprintf(err, errlen, "exec: %s", text ? why : "out of memory");
        rc = text ? TB_EIO : TB_ENOMEM;
    }
    free(text);
    return rc;
}

int tb_exec_run(const tb_case *c, const tb_exec_opts *o, tb_exec_out *out,
                char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!c->available) {
        snprintf(err, errlen, "exec: backend %s is unavailable: %s",
                 c->backend->name, c->unavailable_reason);
        return TB_EUNAVAILABLE;
    }
    /* the files go to DIR.tmp-XXXXXX, renamed to DIR at the end: a
     * failed write (a full disk) leaves no half-written DIR */
    tb_outdir od = {.tmp = ""};
    char why[1024];
    if (tb_outdir_begin(&od, o->outdir, why, sizeof why)) {
        snprintf(err, errlen, "exec: -o: %s", why);
        return TB_EINVAL;
    }
    tb_runner *runner = NULL;
    exec_ctx x = {.dir = od.tmp, .c = c};
    int rc = 0;
    if (tb_runner_create(&runner, NULL)) {
        snprintf(err, errlen, "out of memory");
        rc = TB_ENOMEM;
    } else {
        x.doc = doc_new(c, o);
        rc = run_case(runner, &x, &od, out, err, errlen);
    }
    if (!rc && tb_outdir_commit(&od, why, sizeof why)) {
        snprintf(err, errlen, "exec: -o: %s", why);
        rc = TB_EIO;
    }
    tb_outdir_discard(&od); /* nothing left after a commit */
    cJSON_Delete(x.doc);
    tb_runner_destroy(runner);
    return rc;
}
