/* compare's JSON form, schema "tbench.compare/1" (tb_cmp_json in
 * compare.h; docs/FORMAT.md, "compare"): the rules are compare.c's. */
#include "compare.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"

/* ---- JSON --------------------------------------------------------------- */

static cJSON *side_json(tb_resfile *const *f, int k)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *a = cJSON_AddArrayToObject(o, "files");
    for (int j = 0; j < k; j++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "path", f[j]->path);
        cJSON_AddItemToObject(e, "date", tb_cjson_str_or_null(f[j]->date));
        cJSON_AddItemToObject(e, "git_commit",
                              tb_cjson_str_or_null(f[j]->git_commit));
        cJSON_AddItemToObject(e, "hostname",
                              tb_cjson_str_or_null(f[j]->hostname));
        cJSON_AddBoolToObject(e, "complete", f[j]->complete);
        cJSON_AddItemToArray(a, e);
    }
    return o;
}

/* Rate for the throughput block: amount / time, NAN if not applicable. */
static double rate(double amount, double ns, double scale)
{
    return isfinite(amount) && amount > 0 ? amount / ns * scale : NAN;
}

/* A counter's verdict word by its direction: +1 grew. */
static const char *dir_word(int dir)
{
    return tb_res_verdict_name(dir > 0   ? TB_RES_VERDICT_REGRESSED
                               : dir < 0 ? TB_RES_VERDICT_IMPROVED
                                         : TB_RES_VERDICT_UNCHANGED);
}

/* {old, new, verdict} of one exact count. */
static cJSON *count_json(double old, double nw, const char *verdict)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddItemToObject(e, "old", tb_cjson_num_or_null(old));
    cJSON_AddItemToObject(e, "new", tb_cjson_num_or_null(nw));
    cJSON_AddStringToObject(e, "verdict", verdict);
    return e;
}

static cJSON *case_json(const tb_cmp_case *k, double threshold)
{
    static const char *const presence[] = {"both", "added", "removed"};
    static const char *const schg[] = {"same", "failure", "fixed",
                                       "changed"};
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", k->id);
    cJSON_AddStringToObject(o, "verdict", tb_cmp_case_verdict(k));
    cJSON_AddStringToObject(o, "presence", presence[k->presence]);
    cJSON_AddItemToObject(o, "old_status", tb_cjson_str_or_null(k->old_status));
    cJSON_AddItemToObject(o, "new_status", tb_cjson_str_or_null(k->new_status));
    cJSON_AddStringToObject(o, "status_change", k->presence == TB_CMP_BOTH
                                                    ? schg[k->schg]
                                                    : presence[k->presence]);
    cJSON_AddItemToObject(o, "old_impl", tb_cjson_str_or_null(k->old_impl));
    cJSON_AddItemToObject(o, "new_impl", tb_cjson_str_or_null(k->new_impl));
    cJSON_AddBoolToObject(o, "impl_changed", tb_cmp_case_impl_changed(k));
    cJSON_AddNumberToObject(o, "old_runs", k->k_old);
    cJSON_AddNumberToObject(o, "new_runs", k->k_new);
    cJSON_AddBoolToObject(o, "missing", k->missing);
    if (k->time == TB_TIME_NA) {
        cJSON_AddNullToObject(o, "time");
        cJSON_AddNullToObject(o, "throughput");
        cJSON_AddNullToObject(o, "counters");
        return o;
    }
    cJSON *t = cJSON_AddObjectToObject(o, "time");
    cJSON_AddStringToObject(t, "verdict", tb_res_verdict_name(k->time));
    cJSON_AddNumberToObject(t, "old_median_ns", k->old_median);
    cJSON_AddNumberToObject(t, "new_median_ns", k->new_median);
    cJSON_AddNumberToObject(t, "change", k->change);
    cJSON_AddNumberToObject(t, "ci_low", k->ci_lo);
    cJSON_AddNumberToObject(t, "ci_high", k->ci_hi);
    cJSON_AddNumberToObject(t, "p_value", k->p);
    cJSON_AddNumberToObject(t, "u", k->u);
    cJSON_AddStringToObject(t, "test", k->exact ? "exact" : "normal");
    cJSON_AddNumberToObject(t, "old_samples", (double)k->n_old);
    cJSON_AddNumberToObject(t, "new_samples", (double)k->n_new);
    cJSON_AddNumberToObject(t, "floor", k->floor);
    cJSON_AddNumberToObject(t, "mde", k->mde);
    cJSON *fl = cJSON_AddObjectToObject(t, "floor_parts");
    cJSON_AddNumberToObject(fl, "threshold", threshold);
    cJSON_AddNumberToObject(fl, "within_run", k->floor_within);
    cJSON_AddItemToObject(fl, "between_runs",
                          tb_cjson_num_or_null(k->floor_between));
    cJSON_AddItemToObject(t, "run_sd", tb_cjson_num_or_null(k->run_sd));
    cJSON_AddNumberToObject(t, "run_df", k->run_df);

    cJSON *tp = cJSON_AddObjectToObject(o, "throughput");
    static const char *const rn[] = {"gb_s", "gflop_s", "items_s"};
    double amt[] = {k->bytes, k->flops, k->items};
    double sc[] = {1, 1, 1e9};
    for (int i = 0; i < 3; i++) {
        cJSON *r = cJSON_CreateArray();
        cJSON_AddItemToArray(r, tb_cjson_num_or_null(rate(amt[i], k->old_median,
                                                 sc[i])));
        cJSON_AddItemToArray(r, tb_cjson_num_or_null(rate(amt[i], k->new_median,
                                                 sc[i])));
        cJSON_AddItemToObject(tp, rn[i], r);
    }
    cJSON_AddNumberToObject(tp, "change", k->old_median / k->new_median - 1);

    cJSON *ct = cJSON_AddObjectToObject(o, "counters");
    for (int j = 0; j < TB_RES_NCOUNTERS; j++) {
        if (isnan(k->ctr_old[j]) && isnan(k->ctr_new[j]))
            continue;
        cJSON_AddItemToObject(ct, tb_res_counter_name(j),
                              count_json(k->ctr_old[j], k->ctr_new[j],
                                         dir_word(k->ctr_dir[j])));
    }
    for (int j = 0; j < TB_RES_NCUPTI; j++) {
        if (isnan(k->cu_old[j]) && isnan(k->cu_new[j]))
            continue;
        cJSON_AddItemToObject(ct, tb_res_cupti_name(j),
                              count_json(k->cu_old[j], k->cu_new[j],
                                         k->cu_na[0] ? "not-compared"
                                                     : dir_word(k->cu_dir[j])));
    }
    cJSON_AddItemToObject(o, "cupti_no_verdict",
                          tb_cjson_str_or_null(k->cu_na[0] ? k->cu_na
                                                          : NULL));
    if (!isnan(k->instr_old) || !isnan(k->instr_new)) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToObject(e, "old", tb_cjson_num_or_null(k->instr_old));
        cJSON_AddItemToObject(e, "new", tb_cjson_num_or_null(k->instr_new));
        cJSON_AddItemToObject(e, "change",
                              tb_cjson_num_or_null(k->instr_change));
        cJSON_AddItemToObject(e, "source",
                              tb_cjson_str_or_null(k->instr_source));
        cJSON_AddItemToObject(e, "isa", tb_cjson_str_or_null(k->instr_isa));
        cJSON_AddStringToObject(e, "verdict",
                                !k->instr_dir && k->instr_note
                                    ? "not-compared"
                                    : dir_word(k->instr_dir));
        cJSON_AddItemToObject(ct, "instructions", e);
    }
    for (int j = 0; j < TB_CMP_NCACHE; j++) {
        if (isnan(k->cache_old[j]) && isnan(k->cache_new[j]))
            continue;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToObject(e, "old", tb_cjson_num_or_null(k->cache_old[j]));
        cJSON_AddItemToObject(e, "new", tb_cjson_num_or_null(k->cache_new[j]));
        cJSON_AddItemToObject(e, "change",
                              tb_cjson_num_or_null(k->cache_change[j]));
        cJSON_AddItemToObject(e, "source",
                              tb_cjson_str_or_null(k->cache_source));
        cJSON_AddBoolToObject(e, "simulated", k->cache_simulated);
        cJSON_AddItemToObject(e, "isa", tb_cjson_str_or_null(k->cache_isa));
        cJSON_AddStringToObject(e, "verdict",
                                k->cache_note || isnan(k->cache_change[j])
                                    ? "not-compared"
                                    : dir_word(k->cache_dir[j]));
        cJSON_AddItemToObject(ct, tb_cmp_cache_name(j), e);
    }
    return o;
}

cJSON *tb_cmp_json(const tb_cmp *c)
{
    cJSON *doc = cJSON_CreateObject();
    if (!doc)
        return NULL;
    cJSON_AddStringToObject(doc, "schema", TB_COMPARE_SCHEMA);
    cJSON_AddItemToObject(doc, "old", side_json(c->old_files, c->k_old));
    cJSON_AddItemToObject(doc, "new", side_json(c->new_files, c->k_new));
    cJSON *op = cJSON_AddObjectToObject(doc, "options");
    cJSON_AddNumberToObject(op, "threshold", c->opts.threshold);
    cJSON_AddNumberToObject(op, "instr_threshold", c->opts.instr_threshold);
    cJSON_AddNumberToObject(op, "cache_threshold", c->opts.cache_threshold);
    cJSON_AddNumberToObject(op, "alpha", c->opts.alpha);
    cJSON *fo = cJSON_AddArrayToObject(op, "fail_on");
    if (c->opts.fail_on & TB_FAIL_TIME)
        cJSON_AddItemToArray(fo, cJSON_CreateString("time"));
    if (c->opts.fail_on & TB_FAIL_COUNTERS)
        cJSON_AddItemToArray(fo, cJSON_CreateString("counters"));
    if (c->opts.fail_on & TB_FAIL_STATUS)
        cJSON_AddItemToArray(fo, cJSON_CreateString("status"));
    cJSON_AddNumberToObject(op, "resamples", c->opts.resamples);
    cJSON_AddItemToObject(op, "max_mde",
                          tb_cjson_num_or_null(isfinite(c->opts.max_mde)
                                                   ? c->opts.max_mde
                                                   : NAN));
    cJSON_AddBoolToObject(op, "allow_missing", c->opts.allow_missing);
    cJSON *s = cJSON_AddObjectToObject(doc, "summary");
    cJSON_AddNumberToObject(s, "compared", c->n_common);
    cJSON_AddNumberToObject(s, "timed", c->n_timed);
    cJSON_AddNumberToObject(s, "regressed", c->n_regressed);
    cJSON_AddNumberToObject(s, "improved", c->n_improved);
    cJSON_AddNumberToObject(s, "unchanged", c->n_unchanged);
    cJSON_AddNumberToObject(s, "inconclusive", c->n_inconclusive);
    cJSON_AddNumberToObject(s, "missing", c->n_missing);
    cJSON_AddNumberToObject(s, "unresolved", c->n_unresolved);
    cJSON_AddNumberToObject(s, "counter_regressions", c->n_ctr_regressed);
    cJSON_AddNumberToObject(s, "counter_improvements", c->n_ctr_improved);
    cJSON_AddNumberToObject(s, "status_failures", c->n_failures);
    cJSON_AddNumberToObject(s, "status_fixed", c->n_fixed);
    cJSON_AddNumberToObject(s, "status_changed", c->n_changed);
    cJSON_AddNumberToObject(s, "added", c->n_added);
    cJSON_AddNumberToObject(s, "removed", c->n_removed);
    cJSON_AddBoolToObject(s, "failed", c->failed);
    /* cJSON reports allocation failures only by missing members: the
     * last one added must be there */
    cJSON *cases = cJSON_AddArrayToObject(doc, "cases");
    if (!cases) {
        cJSON_Delete(doc);
        return NULL;
    }
    for (int i = 0; i < c->n; i++)
        cJSON_AddItemToArray(cases,
                             case_json(&c->cases[i], c->opts.threshold));
    return doc;
}
