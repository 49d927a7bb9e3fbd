/* A case record's "breakdown" (docs/FORMAT.md, "Per-op breakdown"):
 * checked and typed for show and the report (resultsio.h). */
#include "resultsio_impl.h"

#include <math.h>
#include <string.h>

#include "../base/error.h"

#define BAD(...) tb_res_fail(err, errlen, f->path, TB_EINVAL, __VA_ARGS__)

/* Member k of o as a finite number (>= 0 when nonneg) into *out. */
static bool num_at(const cJSON *o, const char *k, bool nonneg, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
        (nonneg && v->valuedouble < 0))
        return false;
    *out = v->valuedouble;
    return true;
}

static bool phase_known(const char *p)
{
    return p && (!strcmp(p, "fwd") || !strcmp(p, "bwd") ||
                 !strcmp(p, "optimizer"));
}

/* breakdown.parts into f's arena. */
static int load_parts(tb_resfile *f, tb_rescase *c, const cJSON *ps,
                      int idx, char *err, size_t errlen)
{
    if (!cJSON_IsArray(ps))
        return BAD("cases[%d] (%s): breakdown.parts: expected an array",
                   idx, c->id);
    int n = cJSON_GetArraySize(ps);
    tb_res_part *v = n ? tb_res_alloc(f, (size_t)n * sizeof *v) : NULL;
    if (n && !v)
        return tb_res_fail(err, errlen, f->path, TB_ENOMEM, "out of memory");
    const cJSON *e;
    int i = 0;
    cJSON_ArrayForEach(e, ps)
    {
        tb_res_part *q = &v[i];
        q->op = tb_res_str(e, TB_RES_KEY(op));
        q->kernel = tb_res_str(e, TB_RES_KEY(kernel));
        q->phase = tb_res_str(e, TB_RES_KEY(phase));
        if (!cJSON_IsObject(e) || !q->op || !q->op[0] || !q->kernel ||
            !q->kernel[0] || !phase_known(q->phase) ||
            !num_at(e, TB_RES_KEY(calls), true, &q->calls) ||
            !num_at(e, TB_RES_KEY(ns), true, &q->ns) ||
            !num_at(e, TB_RES_KEY(share), true, &q->share))
            return BAD("cases[%d] (%s): breakdown.parts[%d]: expected "
                       "{\"op\", \"kernel\": non-empty strings, \"phase\": "
                       "\"fwd\", \"bwd\" or \"optimizer\", \"calls\", "
                       "\"ns\", \"share\": numbers >= 0}", idx, c->id, i);
        i++;
    }
    c->breakdown.n_parts = n;
    c->breakdown.parts = v;
    return 0;
}

int tb_res_load_breakdown(tb_resfile *f, tb_rescase *c, const cJSON *cj,
                          int idx, char *err, size_t errlen)
{
    const cJSON *bd = cJSON_GetObjectItemCaseSensitive(cj,
                                                       TB_RES_KEY(breakdown));
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(
        cj, TB_RES_KEY(breakdown_reason));
    if (why && !cJSON_IsNull(why) && !cJSON_IsString(why))
        return BAD("cases[%d] (%s): breakdown_reason: expected a string or "
                   "null", idx, c->id);
    c->breakdown_reason = cJSON_IsString(why) ? why->valuestring : NULL;
    if (!bd || cJSON_IsNull(bd))
        return 0; /* a file older than it, or none: the reason says why */
    if (!cJSON_IsObject(bd))
        return BAD("cases[%d] (%s): breakdown: expected an object or null",
                   idx, c->id);
    tb_res_breakdown *b = &c->breakdown;
    if (!num_at(bd, TB_RES_KEY(steps), true, &b->steps) || b->steps < 1 ||
        b->steps != floor(b->steps))
        return BAD("cases[%d] (%s): breakdown.steps: expected an integer "
                   ">= 1", idx, c->id);
    if (!num_at(bd, TB_RES_KEY(kept_steps), true, &b->kept_steps) ||
        b->kept_steps < 1 || b->kept_steps > b->steps ||
        b->kept_steps != floor(b->kept_steps))
        return BAD("cases[%d] (%s): breakdown.kept_steps: expected an "
                   "integer in [1, steps]", idx, c->id);
    static const char *const keys[] = {TB_RES_KEY(step_ns),
                                       TB_RES_KEY(parts_ns),
                                       TB_RES_KEY(gap_ns),
                                       TB_RES_KEY(gap_fraction)};
    double *const to[] = {&b->step_ns, &b->parts_ns, &b->gap_ns,
                          &b->gap_fraction};
    for (int i = 0; i < 4; i++)
        if (!num_at(bd, keys[i], i < 2, to[i]))
            return BAD("cases[%d] (%s): breakdown.%s: expected a number%s",
                       idx, c->id, keys[i], i < 2 ? " >= 0" : "");
    int rc = load_parts(f, c, cJSON_GetObjectItemCaseSensitive(
                                  bd, TB_RES_KEY(parts)),
                        idx, err, errlen);
    if (rc)
        return rc;
    c->has_breakdown = true;
    return 0;
}
