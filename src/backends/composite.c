/* Unfused compositions run step by step.  See composite.h. */
#include "composite.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"

typedef struct {
    const tb_op *op;
    tb_kernel k;
    tb_params params;
    int8_t src[TB_MAX_INPUTS]; /* >= 0: an input; < 0: TB_STEP_TMP(k) */
    int8_t dst;                /* temporary, or -1: the output */
    int last_use_of[TB_MAX_STEPS]; /* temporaries freed after this step */
    int n_free;
} step_run;

struct tb_composite {
    const tb_backend *be;
    void *ctx;
    tb_dtype dt;
    int n_steps;
    step_run step[TB_MAX_STEPS];
    tb_shape tmp_shape[TB_MAX_STEPS];
    char impl[256];
};

/* The step's parameters: those of the composition with the same name,
 * then the fixed ones. */
static int step_params(const tb_op *comp, const tb_params *p,
                       const tb_step *s, const tb_op *op, tb_params *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < comp->n_params; i++) {
        if (!tb_params_has(p, i))
            continue;
        int j = tb_op_param_index(op, comp->params[i].name);
        if (j >= 0 && tb_params_set(op, out, comp->params[i].name, p->v[i],
                                    NULL, 0))
            return TB_EPARAM;
    }
    for (int k = 0; k < 2 && s->fixed[k].name; k++)
        if (tb_params_set(op, out, s->fixed[k].name, s->fixed[k].v, NULL, 0))
            return TB_EPARAM;
    tb_params_defaults(op, out);
    return 0;
}

int tb_composite_create(const tb_backend *be, void *ctx, const tb_op *op,
                        tb_dtype dt, const tb_shape *in, const tb_params *p,
                        tb_composite **out, char *err, size_t errlen)
{
    *out = NULL;
    if (op->n_steps < 1 || op->n_steps > TB_MAX_STEPS)
        return TB_EINVAL;
    tb_composite *c = calloc(1, sizeof *c);
    if (!c)
        return TB_ENOMEM;
    c->be = be;
    c->ctx = ctx;
    c->dt = dt;
    c->n_steps = op->n_steps;
    int last[TB_MAX_STEPS];
    for (int k = 0; k < TB_MAX_STEPS; k++)
        last[k] = -1;
    size_t used = 0;
    for (int s = 0; s < op->n_steps; s++) {
        const tb_step *st = &op->steps[s];
        step_run *r = &c->step[s];
        r->op = tb_op_get(st->op);
        memcpy(r->src, st->in, sizeof r->src);
        r->dst = st->out;
        int rc = step_params(op, p, st, r->op, &r->params);
        if (!rc && op->step_params)
            rc = op->step_params(op, s, in, p, &r->params);
        tb_shape ish[TB_MAX_INPUTS], osh[TB_MAX_OUTPUTS];
        for (int i = 0; !rc && i < r->op->n_in; i++) {
            int src = st->in[i];
            if (src >= 0 && src < op->n_in) {
                ish[i] = in[src];
            } else if (src < 0 && -1 - src < s) {
                ish[i] = c->tmp_shape[-1 - src];
                last[-1 - src] = s;
            } else {
                rc = TB_EINVAL; /* a malformed table row */
            }
        }
        char why[256] = "";
        if (!rc)
            rc = tb_op_infer(r->op, ish, r->op->n_in, &r->params, osh, why,
                             sizeof why);
        if (rc) {
            snprintf(err, errlen, "step %d (%s): %s", s + 1, r->op->name,
                     why[0] ? why : tb_strerror(rc));
            tb_composite_destroy(c);
            return rc;
        }
        if (st->out >= 0)
            c->tmp_shape[st->out] = osh[0];
        const char *impl = NULL;
        r->k = be->kernel(ctx, r->op, dt, &r->params, &impl);
        if (!r->k.fn) {
            snprintf(err, errlen,
                     "the backend has no kernel for step %d (%s)", s + 1,
                     r->op->name);
            tb_composite_destroy(c);
            return TB_EUNSUPPORTED;
        }
        int w = snprintf(c->impl + used, sizeof c->impl - used, "%s%s",
                         s ? "+" : "", impl ? impl : r->op->name);
        if (w > 0 && (size_t)w < sizeof c->impl - used)
            used += (size_t)w;
    }
    for (int k = 0; k < TB_MAX_STEPS; k++)
        if (last[k] >= 0) {
            step_run *r = &c->step[last[k]];
            r->last_use_of[r->n_free++] = k;
        }
    *out = c;
    return 0;
}

void tb_composite_destroy(tb_composite *c)
{
    free(c);
}

const char *tb_composite_impl(const tb_composite *c)
{
    return c->impl;
}

int tb_composite_run(void *comp, const tb_tensor *in, tb_tensor *out,
                     const tb_params *p)
{
    (void)p; /* resolved into each step's parameters at create */
    tb_composite *c = comp;
    tb_tensor tmp[TB_MAX_STEPS];
    bool live[TB_MAX_STEPS] = {false};
    int rc = 0;
    for (int s = 0; s < c->n_steps && !rc; s++) {
        step_run *r = &c->step[s];
        tb_tensor ins[TB_MAX_INPUTS];
        for (int i = 0; i < r->op->n_in; i++) {
            int src = r->src[i];
            ins[i] = src >= 0 ? in[src] : tmp[-1 - src];
        }
        tb_tensor *dst = out;
        if (r->dst >= 0) {
            tb_tensor_init(&tmp[r->dst], c->dt, &c->tmp_shape[r->dst]);
            if ((rc = c->be->alloc(c->ctx, &tmp[r->dst])))
                break;
            live[r->dst] = true;
            dst = &tmp[r->dst];
        }
        rc = tb_kernel_call(&r->k, ins, dst, &r->params);
        for (int k = 0; k < r->n_free; k++) {
            int t = r->last_use_of[k];
            c->be->free(c->ctx, &tmp[t]);
            live[t] = false;
        }
    }
    for (int k = 0; k < TB_MAX_STEPS; k++) /* after an error */
        if (live[k])
            c->be->free(c->ctx, &tmp[k]);
    return rc;
}
