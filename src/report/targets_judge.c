/* Targets against result files: the verdicts (targets.h), the table and
 * the JSON form of `tbench targets`.
 *
 * Nothing here measures noise anew: a time target reads the median's CI
 * the run recorded, a bound target divides it by the bound, and a peer
 * target takes compare's verdict machinery for a pair (tb_cmp_pair),
 * whose bootstrap CI of the ratio of medians is the interval judged. */
#include "targets.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/grow.h"
#include "../base/idmatch.h"
#include "compare.h"
#include "table.h"

const char *tb_tgt_verdict_word(tb_tgt_verdict v)
{
    static const char *const w[] = {"met", "missed", "inconclusive",
                                    "missing"};
    return v >= TB_TGT_MET && v <= TB_TGT_MISSING ? w[v] : "?";
}

static bool selects(const tb_target *t, const tb_rescase *c)
{
    return (!t->glob || tb_case_id_match(t->glob, c->id)) &&
           (!t->op || !strcmp(t->op, c->op)) &&
           (!t->dtype || !strcmp(t->dtype, c->dtype)) &&
           (!t->backend || !strcmp(t->backend, c->backend));
}

/* Do a and b run at compatible thread counts: the same "threads" axis
 * value, or one of them has no such axis (the report's side-by-side
 * rule, report_runs.c). */
static bool same_threads(const tb_rescase *a, const tb_rescase *b)
{
    const char *x = tb_rescase_axis(a, "threads");
    const char *y = tb_rescase_axis(b, "threads");
    return !x || !y || !strcmp(x, y);
}

/* c's peer for t: the fastest ok case of backend t->peer in the --with
 * files with c's key at a compatible thread count; NULL when there is
 * none, *seen then the first such case that did not run (or NULL). */
static const tb_rescase *find_peer(const tb_tgt_result *r,
                                   const tb_target *t, const tb_rescase *c,
                                   const tb_rescase **seen)
{
    const tb_rescase *best = NULL;
    *seen = NULL;
    for (int w = 0; w < r->n_with; w++)
        for (int i = 0; i < r->with[w]->n; i++) {
            const tb_rescase *p = &r->with[w]->cases[i];
            if (strcmp(p->backend, t->peer) || strcmp(p->key, c->key) ||
                !same_threads(p, c))
                continue;
            if (!p->timed) {
                if (!*seen)
                    *seen = p;
            } else if (!best || p->median_ns < best->median_ns) {
                best = p;
            }
        }
    return best;
}

/* The quantity target t holds case k->c to, with its 95% CI, in k;
 * false with k->why filled when there is none (and *rc TB_ENOMEM when
 * the pair test ran out of memory). */
static bool quantity(const tb_tgt_result *r, const tb_target *t,
                    tb_tgt_check *k, int *rc)
{
    const tb_rescase *c = k->c, *seen;
    if (!c->timed) {
        snprintf(k->why, sizeof k->why, "not run (%s)", c->status);
        return false;
    }
    if (t->kind == TB_TGT_TIME) {
        k->value = c->median_ns;
        k->lo = c->ci_low_ns;
        k->hi = c->ci_high_ns;
        return true;
    }
    if (t->kind == TB_TGT_BOUND) {
        double b = c->f.roofline_min_time_ns;
        if (!(b > 0)) {
            snprintf(k->why, sizeof k->why, "no roofline bound (a run "
                     "without peaks)");
            return false;
        }
        k->value = c->median_ns / b;
        k->lo = c->ci_low_ns / b;
        k->hi = c->ci_high_ns / b;
        return true;
    }
    if (!(k->peer = find_peer(r, t, c, &seen))) {
        if (seen)
            snprintf(k->why, sizeof k->why, "%s's case not run (%s)",
                     t->peer, seen->status);
        else
            snprintf(k->why, sizeof k->why, "no %s case", t->peer);
        return false;
    }
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    tb_cmp_case cc;
    if ((*rc = tb_cmp_pair(k->peer, c, &o, &cc)))
        return false;
    k->value = cc.new_median / cc.old_median;
    k->lo = 1 + cc.ci_lo;
    k->hi = 1 + cc.ci_hi;
    return true;
}

/* The backends of the cases of with[0..n_with), each once (the first
 * 16), in buf: "numpy, torch". */
static void backends_of(tb_resfile *const *with, int n_with, char *buf,
                        size_t len)
{
    const char *seen[16];
    int ns = 0;
    size_t l = 0;
    buf[0] = '\0';
    for (int w = 0; w < n_with; w++)
        for (int j = 0; j < with[w]->n && ns < 16 && l + 1 < len; j++) {
            const char *b = with[w]->cases[j].backend;
            int k = 0;
            while (k < ns && strcmp(seen[k], b))
                k++;
            if (k < ns)
                continue;
            seen[ns++] = b;
            int r = snprintf(buf + l, len - l, "%s%s", l ? ", " : "", b);
            l += r > 0 ? (size_t)r : 0;
        }
}

/* A target that compares with a peer needs the peer's cases.  0, or
 * TB_EINVAL with the message. */
static int check_peers(const tb_targets *t, tb_resfile *const *with,
                       int n_with, char *err, size_t errlen)
{
    for (int i = 0; i < t->n; i++) {
        const tb_target *x = &t->t[i];
        if (x->kind != TB_TGT_PEER)
            continue;
        bool found = false;
        for (int w = 0; w < n_with && !found; w++)
            for (int j = 0; j < with[w]->n && !found; j++)
                found = !strcmp(with[w]->cases[j].backend, x->peer);
        if (found)
            continue;
        if (!n_with) {
            snprintf(err, errlen, "%s:%d:%d: targets[%d].max_ratio_to.peer:"
                     " '%s' needs the peer's result file (--with FILE)",
                     t->path, x->peer_line, x->peer_col, i, x->peer);
            return TB_EINVAL;
        }
        char seen[256];
        backends_of(with, n_with, seen, sizeof seen);
        snprintf(err, errlen, "%s:%d:%d: targets[%d].max_ratio_to.peer: no "
                 "case of backend '%s' in the --with files (their backends: "
                 "%s)", t->path, x->peer_line, x->peer_col, i, x->peer, seen);
        return TB_EINVAL;
    }
    return 0;
}

/* Check k of target x: its quantity, then the verdict, counted in r.
 * 0 or TB_ENOMEM. */
static int judge_check(tb_tgt_result *r, const tb_target *x,
                       tb_tgt_check *k)
{
    int rc = 0;
    if (!quantity(r, x, k, &rc)) {
        k->v = TB_TGT_MISSING;
        k->value = k->lo = k->hi = NAN;
        r->n_missing++;
        return rc;
    }
    k->v = k->hi <= x->limit  ? TB_TGT_MET
           : k->lo > x->limit ? TB_TGT_MISSED
                              : TB_TGT_INCONCLUSIVE;
    r->n_met += k->v == TB_TGT_MET;
    r->n_missed += k->v == TB_TGT_MISSED;
    r->n_inconclusive += k->v == TB_TGT_INCONCLUSIVE;
    return 0;
}

int tb_targets_judge(const tb_targets *t, const tb_resfile *res,
                     tb_resfile *const *with, int n_with,
                     const tb_tgt_opts *opts, tb_tgt_result *out, char *err,
                     size_t errlen)
{
    *out = (tb_tgt_result){.targets = t, .res = res, .with = with,
                           .n_with = n_with, .opts = *opts};
    int rc = check_peers(t, with, n_with, err, errlen), cap = 0;
    if (rc)
        return rc;
    out->matched = calloc(t->n > 0 ? (size_t)t->n : 1, sizeof *out->matched);
    if (!out->matched)
        return TB_ENOMEM;
    for (int i = 0; i < t->n; i++) {
        for (int j = 0; j < res->n; j++) {
            if (!selects(&t->t[i], &res->cases[j]))
                continue;
            tb_tgt_check *g = tb_grow(out->checks, &cap, out->n,
                                      sizeof *g, 64);
            if (!g) {
                tb_tgt_result_free(out);
                return TB_ENOMEM;
            }
            out->checks = g;
            g[out->n] = (tb_tgt_check){.target = i, .c = &res->cases[j]};
            if ((rc = judge_check(out, &t->t[i], &g[out->n++]))) {
                tb_tgt_result_free(out);
                return rc;
            }
            out->matched[i]++;
        }
        out->n_unmatched += !out->matched[i];
    }
    out->failed = out->n_missed || out->n_unmatched ||
                  (out->n_missing && !opts->allow_missing) ||
                  (out->n_inconclusive && opts->strict);
    return 0;
}

void tb_tgt_result_free(tb_tgt_result *r)
{
    if (!r)
        return;
    free(r->checks);
    free(r->matched);
    r->checks = NULL;
    r->matched = NULL;
    r->n = 0;
}

/* ---- the table -------------------------------------------------------- */

/* v with 3 significant digits in fixed notation ("1.23", "12.3", "123";
 * more digits from 1000 up). */
static void fix3(double v, char *buf, size_t len)
{
    double a = fabs(v);
    snprintf(buf, len, a < 9.995 ? "%.2f" : a < 99.95 ? "%.1f" : "%.0f",
             v);
}

/* The unit of a time of ns nanoseconds: its name and size in ns. */
static const char *time_unit(double ns, double *scale)
{
    *scale = ns < 1e3 ? 1 : ns < 1e6 ? 1e3 : ns < 1e9 ? 1e6 : 1e9;
    return ns < 1e3 ? "ns" : ns < 1e6 ? "us" : ns < 1e9 ? "ms" : "s";
}

/* "1.23 ms [1.20, 1.25]", "1.08x [1.05, 1.11]", or "-". */
static void value_text(const tb_tgt_check *k, tb_tgt_kind kind, char *buf,
                       size_t len)
{
    char v[32], lo[32], hi[32];
    double s = 1;
    const char *unit = kind == TB_TGT_TIME ? time_unit(k->value, &s) : "x";
    if (k->v == TB_TGT_MISSING) {
        snprintf(buf, len, "-");
        return;
    }
    fix3(k->value / s, v, sizeof v);
    fix3(k->lo / s, lo, sizeof lo);
    fix3(k->hi / s, hi, sizeof hi);
    snprintf(buf, len, "%s%s%s [%s, %s]", v, kind == TB_TGT_TIME ? " " : "",
             unit, lo, hi);
}

/* The heading of target t: "NAME: at most 2 ms", "... at most 1.2x the
 * roofline bound", "... at most 1x numpy". */
static void print_heading(FILE *f, const tb_target *t)
{
    double s;
    if (t->kind == TB_TGT_TIME) {
        const char *unit = time_unit(t->limit, &s);
        fprintf(f, "%s: at most %.4g %s\n", t->name, t->limit / s, unit);
    } else {
        fprintf(f, "%s: at most %.4gx %s\n", t->name, t->limit,
                t->kind == TB_TGT_BOUND ? "the roofline bound" : t->peer);
    }
}

/* The width of the case column: the longest id, cut (to 24 at least)
 * so that "  ID  VALUE  VERDICT" fits width (0: no limit), the verdict
 * counted as 12 ("inconclusive"; a missing one's reason may run over). */
static int id_width(const tb_tgt_result *r, int width, int vw)
{
    int iw = (int)strlen("case") - 2;
    for (int i = 0; i < r->n; i++)
        if ((int)strlen(r->checks[i].c->id) > iw)
            iw = (int)strlen(r->checks[i].c->id);
    if (width > 0 && 2 + iw + 2 + vw + 2 + 12 > width)
        iw = width - (2 + 2 + vw + 2 + 12);
    return iw < 24 ? 24 : iw;
}

void tb_tgt_print(FILE *f, const tb_tgt_result *r, int width)
{
    char val[160], id[1100];
    int vw = (int)strlen("value [95% CI]"), ci = 0;
    for (int i = 0; i < r->n; i++) {
        const tb_tgt_check *k = &r->checks[i];
        value_text(k, r->targets->t[k->target].kind, val, sizeof val);
        if ((int)strlen(val) > vw)
            vw = (int)strlen(val);
    }
    int iw = id_width(r, width, vw);
    fprintf(f, "%-*s  %-*s  verdict\n", iw + 2, "target / case", vw,
            "value [95% CI]");
    for (int i = 0; i < r->targets->n; i++) {
        const tb_target *t = &r->targets->t[i];
        print_heading(f, t);
        if (!r->matched[i])
            fprintf(f, "  matched no case (%s:%d:%d)  unmatched\n",
                    r->targets->path, t->line, t->col);
        for (; ci < r->n && r->checks[ci].target == i; ci++) {
            const tb_tgt_check *k = &r->checks[ci];
            value_text(k, t->kind, val, sizeof val);
            fprintf(f, "  %-*s  %-*s  %s%s%s\n", iw,
                    tb_shorten_middle(k->c->id, iw, id, sizeof id), vw, val,
                    tb_tgt_verdict_word(k->v),
                    k->v == TB_TGT_MISSING ? ": " : "",
                    k->v == TB_TGT_MISSING ? k->why : "");
        }
    }
    fprintf(f, "summary: %d met, %d missed, %d inconclusive, %d missing, "
            "%d unmatched (%d case%s under %d target%s)\n", r->n_met,
            r->n_missed, r->n_inconclusive, r->n_missing, r->n_unmatched,
            r->n, r->n == 1 ? "" : "s", r->targets->n,
            r->targets->n == 1 ? "" : "s");
}

/* ---- JSON ------------------------------------------------------------- */

static cJSON *check_json(const tb_tgt_check *k)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    bool ok =
        cJSON_AddStringToObject(o, "id", k->c->id) &&
        cJSON_AddStringToObject(o, "status", k->c->status) &&
        cJSON_AddStringToObject(o, "verdict", tb_tgt_verdict_word(k->v)) &&
        cJSON_AddItemToObject(o, "value", tb_cjson_num_or_null(k->value)) &&
        cJSON_AddItemToObject(o, "ci_low", tb_cjson_num_or_null(k->lo)) &&
        cJSON_AddItemToObject(o, "ci_high", tb_cjson_num_or_null(k->hi)) &&
        cJSON_AddItemToObject(
            o, "peer_id", tb_cjson_str_or_null(k->peer ? k->peer->id : NULL)) &&
        cJSON_AddItemToObject(
            o, "why",
            tb_cjson_str_or_null(k->v == TB_TGT_MISSING ? k->why : NULL));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *target_json(const tb_tgt_result *r, int i, int *ci)
{
    static const char *const bound[] = {"max_time", "max_ratio_to",
                                        "max_bound_ratio"};
    const tb_target *t = &r->targets->t[i];
    cJSON *o = cJSON_CreateObject(), *sel, *checks;
    bool ok =
        o && cJSON_AddStringToObject(o, "name", t->name) &&
        cJSON_AddNumberToObject(o, "line", t->line) &&
        cJSON_AddNumberToObject(o, "col", t->col) &&
        (sel = cJSON_AddObjectToObject(o, "select")) &&
        cJSON_AddItemToObject(sel, "case", tb_cjson_str_or_null(t->glob)) &&
        cJSON_AddItemToObject(sel, "op", tb_cjson_str_or_null(t->op)) &&
        cJSON_AddItemToObject(sel, "dtype", tb_cjson_str_or_null(t->dtype)) &&
        cJSON_AddItemToObject(sel, "backend",
                              tb_cjson_str_or_null(t->backend)) &&
        cJSON_AddStringToObject(o, "bound", bound[t->kind]) &&
        cJSON_AddNumberToObject(o, "limit", t->limit) &&
        cJSON_AddStringToObject(o, "unit",
                                t->kind == TB_TGT_TIME ? "ns" : "ratio") &&
        cJSON_AddItemToObject(o, "peer", tb_cjson_str_or_null(t->peer)) &&
        cJSON_AddNumberToObject(o, "matched", r->matched[i]) &&
        (checks = cJSON_AddArrayToObject(o, "checks"));
    for (; ok && *ci < r->n && r->checks[*ci].target == i; (*ci)++) {
        cJSON *c = check_json(&r->checks[*ci]);
        ok = c && cJSON_AddItemToArray(checks, c);
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

cJSON *tb_tgt_json(const tb_tgt_result *r)
{
    cJSON *doc = cJSON_CreateObject(), *with, *list, *sum;
    bool ok =
        doc && cJSON_AddStringToObject(doc, "schema", TB_TARGETS_SCHEMA) &&
        cJSON_AddStringToObject(doc, "targets_file", r->targets->path) &&
        cJSON_AddStringToObject(doc, "results", r->res->path) &&
        (with = cJSON_AddArrayToObject(doc, "with")) &&
        cJSON_AddBoolToObject(doc, "strict", r->opts.strict) &&
        cJSON_AddBoolToObject(doc, "allow_missing", r->opts.allow_missing) &&
        (list = cJSON_AddArrayToObject(doc, "targets"));
    for (int w = 0; ok && w < r->n_with; w++) {
        cJSON *s = cJSON_CreateString(r->with[w]->path);
        ok = s && cJSON_AddItemToArray(with, s);
    }
    for (int i = 0, ci = 0; ok && i < r->targets->n; i++) {
        cJSON *t = target_json(r, i, &ci);
        ok = t && cJSON_AddItemToArray(list, t);
    }
    ok = ok && (sum = cJSON_AddObjectToObject(doc, "summary")) &&
         cJSON_AddNumberToObject(sum, "met", r->n_met) &&
         cJSON_AddNumberToObject(sum, "missed", r->n_missed) &&
         cJSON_AddNumberToObject(sum, "inconclusive", r->n_inconclusive) &&
         cJSON_AddNumberToObject(sum, "missing", r->n_missing) &&
         cJSON_AddNumberToObject(sum, "unmatched", r->n_unmatched) &&
         cJSON_AddNumberToObject(sum, "checks", r->n) &&
         cJSON_AddNumberToObject(sum, "targets", r->targets->n) &&
         cJSON_AddBoolToObject(sum, "failed", r->failed);
    if (!ok) {
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}
