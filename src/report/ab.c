/* A/B verdicts: see ab.h. */
#include "ab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/abstats.h"
#include "../base/error.h"
#include "../base/rng.h"
#include "../base/stats.h"

const char *tb_ab_verdict_name(tb_ab_verdict v)
{
    switch (v) {
    case TB_AB_REGRESSED:
    case TB_AB_IMPROVED:
    case TB_AB_UNCHANGED:
    case TB_AB_INCONCLUSIVE: return tb_res_verdict_name((int)v);
    case TB_AB_ERROR: return "error";
    case TB_AB_SKIPPED: return "skipped";
    }
    return "?";
}

void tb_ab_opts_default(tb_ab_opts *o)
{
    o->alpha = 0.05;
    o->threshold = 0.005;
    o->max_mde = INFINITY;
    o->seed = UINT64_C(0xab7e57ab);
    o->sequential = false;
    o->power_resamples = TB_AB_POWER_RESAMPLES;
}

double tb_ab_look_share(int k)
{
    return k >= 1 ? 1.0 / ((double)k * (double)(k + 1)) : 1.0;
}

/* The share of alpha case c spends (tb_ab_look_share of its look in a
 * sequential design, else 1). */
static double share_of(const tb_ab_case *c, const tb_ab_opts *o)
{
    return o->sequential ? tb_ab_look_share(c->look) : 1.0;
}

/* FNV-1a of an id: each case's bootstrap gets its own stream. */
static uint64_t hash_id(const char *s)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
    return h;
}

static double median_of(const double *x, size_t n, double *tmp)
{
    memcpy(tmp, x, n * sizeof *tmp);
    return tb_median_inplace(tmp, n);
}

/* Everything of one case but p_holm, mde and the verdict. */
static int analyze_one(tb_ab_case *c, const tb_ab_opts *o, double *d,
                       double *tmp)
{
    size_t n = (size_t)c->n;
    c->change = c->ci_low = c->ci_high = c->ci_level = NAN;
    c->p = c->p_holm = NAN;
    c->mde = INFINITY;
    c->old_median_ns = c->new_median_ns = NAN;
    c->exact = false;
    if (c->failed || n == 0) {
        c->verdict = c->skipped ? TB_AB_SKIPPED : TB_AB_ERROR;
        if (!c->failed)
            snprintf(c->message, sizeof c->message, "no block measured");
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (!(c->old_ns[i] > 0) || !(c->new_ns[i] > 0)) {
            c->verdict = TB_AB_ERROR;
            snprintf(c->message, sizeof c->message,
                     "block %zu has a time <= 0 (too fast to time?)", i);
            return 0;
        }
        d[i] = log(c->new_ns[i] / c->old_ns[i]);
    }
    c->old_median_ns = median_of(c->old_ns, n, tmp);
    c->new_median_ns = median_of(c->new_ns, n, tmp);
    c->change = expm1(median_of(d, n, tmp));
    double lo, hi, share = share_of(c, o);
    c->ci_level = 1 - 0.05 * share;
    int rc = tb_ab_bootstrap_median(d, n, TB_AB_RESAMPLES, c->ci_level,
                                    o->seed ^ hash_id(c->id), &lo, &hi);
    if (rc)
        return rc;
    c->ci_low = expm1(lo);
    c->ci_high = expm1(hi);
    tb_wilcoxon w;
    if ((rc = tb_wilcoxon_test(d, n, &w)))
        return rc;
    c->p = w.p;
    c->exact = w.exact;
    c->verdict = TB_AB_INCONCLUSIVE;
    return 0;
}

int tb_ab_analyze(tb_ab_case *cases, size_t m, const tb_ab_opts *o)
{
    if ((!cases && m) || !o || !(o->alpha > 0 && o->alpha < 1) ||
        !(o->threshold >= 0))
        return TB_EINVAL;
    size_t nmax = 1;
    for (size_t k = 0; k < m; k++)
        if ((size_t)cases[k].n > nmax)
            nmax = (size_t)cases[k].n;
    double *d = malloc(nmax * sizeof *d), *tmp = malloc(nmax * sizeof *tmp);
    double *p = calloc(m ? m : 1, sizeof *p);
    size_t *idx = malloc((m ? m : 1) * sizeof *idx);
    int rc = !d || !tmp || !p || !idx ? TB_ENOMEM : 0;
    size_t np = 0;
    for (size_t k = 0; k < m && !rc; k++) {
        rc = analyze_one(&cases[k], o, d, tmp);
        if (!rc && cases[k].verdict != TB_AB_ERROR &&
            cases[k].verdict != TB_AB_SKIPPED) {
            /* p' of the case's look (ab.h): valid whatever stopped it */
            p[np] = fmin(1, cases[k].p / share_of(&cases[k], o));
            idx[np++] = k;
        }
    }
    if (!rc)
        rc = tb_holm(p, np, p);
    for (size_t j = 0; j < np && !rc; j++) {
        tb_ab_case *c = &cases[idx[j]];
        size_t n = (size_t)c->n;
        c->p_holm = p[j];
        for (size_t i = 0; i < n; i++)
            d[i] = log(c->new_ns[i] / c->old_ns[i]);
        double mde = o->power_resamples < 1
                         ? INFINITY
                         : expm1(tb_ab_mde_boot(
                               d, n, o->alpha * share_of(c, o) / (double)np,
                               0.8, o->power_resamples,
                               o->seed ^ hash_id(c->id) ^ 1));
        if (isnan(mde)) {
            rc = TB_ENOMEM;
            break;
        }
        c->mde = mde > o->threshold ? mde : o->threshold;
        c->verdict = (tb_ab_verdict)tb_verdict_judge(&(tb_verdict_in){
            .change = c->change, .ci_low = c->ci_low,
            .ci_high = c->ci_high, .p = c->p_holm, .alpha = o->alpha,
            .threshold = o->threshold, .floor = o->threshold,
            .mde = c->mde});
    }
    free(d);
    free(tmp);
    free(p);
    free(idx);
    return rc;
}

int tb_ab_look(tb_ab_case *cases, size_t m, const tb_ab_opts *o, int k,
               int blocks, double target, const char *final_why, int *rc)
{
    for (size_t i = 0; i < m; i++)
        if (!cases[i].stop) {
            cases[i].n = blocks;
            cases[i].look = k;
        }
    if ((*rc = tb_ab_analyze(cases, m, o)))
        return -1;
    int open = 0;
    for (size_t i = 0; i < m; i++) {
        tb_ab_case *c = &cases[i];
        if (c->stop)
            continue;
        if (c->verdict == TB_AB_ERROR || c->verdict == TB_AB_SKIPPED)
            c->stop = TB_AB_STOP_ERROR;
        else if (c->verdict == TB_AB_REGRESSED ||
                 c->verdict == TB_AB_IMPROVED)
            c->stop = TB_AB_STOP_DECIDED;
        else if (c->mde <= target)
            c->stop = TB_AB_STOP_TARGET;
        else if (final_why)
            c->stop = final_why;
        else
            open++;
    }
    return open;
}

size_t tb_ab_unresolved(const tb_ab_case *cases, size_t m,
                        const tb_ab_opts *o)
{
    size_t k = 0;
    for (size_t i = 0; i < m; i++)
        k += tb_verdict_is_change((int)cases[i].verdict) &&
             !(cases[i].mde <= o->max_mde);
    return k;
}

size_t tb_ab_count(const tb_ab_case *cases, size_t m, tb_ab_verdict v)
{
    size_t k = 0;
    for (size_t i = 0; i < m; i++)
        k += cases[i].verdict == v;
    return k;
}

static void fmt_time(char *buf, size_t len, double ns)
{
    if (!isfinite(ns))
        snprintf(buf, len, "-");
    else if (ns < 1e3)
        snprintf(buf, len, "%.1f ns", ns);
    else if (ns < 1e6)
        snprintf(buf, len, "%.2f us", ns / 1e3);
    else if (ns < 1e9)
        snprintf(buf, len, "%.2f ms", ns / 1e6);
    else
        snprintf(buf, len, "%.3f s", ns / 1e9);
}

void tb_ab_print(FILE *f, const tb_ab_case *cases, size_t m,
                 const tb_ab_opts *o, const char *(*color)(const char *))
{
    fprintf(f, "%-52s %10s %10s %8s %18s %9s %7s  %s\n", "case", "old", "new",
            "change", o->sequential ? "CI (at its look)" : "95% CI",
            "p(Holm)", "MDE", o->sequential ? "verdict (blocks, stop)"
                                            : "verdict");
    for (size_t k = 0; k < m; k++) {
        const tb_ab_case *c = &cases[k];
        if (c->verdict == TB_AB_ERROR || c->verdict == TB_AB_SKIPPED) {
            fprintf(f, "%-52s %s: %s\n", c->id,
                    tb_ab_verdict_name(c->verdict), c->message);
            continue;
        }
        char a[32], b[32], ci[48], mde[16];
        fmt_time(a, sizeof a, c->old_median_ns);
        fmt_time(b, sizeof b, c->new_median_ns);
        snprintf(ci, sizeof ci, "[%+.2f%%, %+.2f%%]", 100 * c->ci_low,
                 100 * c->ci_high);
        if (isfinite(c->mde))
            snprintf(mde, sizeof mde, "%.2f%%", 100 * c->mde);
        else
            snprintf(mde, sizeof mde, "none"); /* inconclusive */
        const char *v = tb_ab_verdict_name(c->verdict);
        const char *on = color ? color(v) : "";
        fprintf(f, "%-52s %10s %10s %+7.2f%% %18s %9.2g %7s  %s%s%s", c->id,
                a, b, 100 * c->change, ci, c->p_holm, mde, on, v,
                *on ? "\033[0m" : "");
        if (o->sequential)
            fprintf(f, " (%d, %s)", c->n, c->stop ? c->stop : "-");
        fputc('\n', f);
    }
    size_t nm = 0;
    double *v = malloc((m ? m : 1) * sizeof *v);
    for (size_t k = 0; v && k < m; k++)
        if (cases[k].verdict != TB_AB_ERROR &&
            cases[k].verdict != TB_AB_SKIPPED)
            v[nm++] = cases[k].mde;
    char med[32] = "-";
    if (v && nm) {
        double x = tb_median_inplace(v, nm);
        if (isfinite(x))
            snprintf(med, sizeof med, "%.2f%%", 100 * x);
        else
            snprintf(med, sizeof med, "none (more blocks needed)");
    }
    free(v);
    fprintf(f,
            "%zu cases: %zu regressed, %zu improved, %zu unchanged, %zu "
            "inconclusive, %zu error, %zu skipped; "
            "median MDE %s (alpha %g over the cases, Holm; threshold "
            "%.2f%%)\n",
            m, tb_ab_count(cases, m, TB_AB_REGRESSED),
            tb_ab_count(cases, m, TB_AB_IMPROVED),
            tb_ab_count(cases, m, TB_AB_UNCHANGED),
            tb_ab_count(cases, m, TB_AB_INCONCLUSIVE),
            tb_ab_count(cases, m, TB_AB_ERROR),
            tb_ab_count(cases, m, TB_AB_SKIPPED), med, o->alpha,
            100 * o->threshold);
    if (tb_ab_count(cases, m, TB_AB_INCONCLUSIVE))
        fprintf(f, "inconclusive: the blocks cannot tell a change of %.2f%% "
                "from none (the CI spans +-threshold, or the MDE is above "
                "it); more blocks narrow both\n", 100 * o->threshold);
    size_t un = tb_ab_unresolved(cases, m, o);
    if (un)
        fprintf(f, "%zu case%s cannot be judged at --max-mde %.2f%% (MDE "
                "above it): FAIL\n", un, un == 1 ? "" : "s",
                100 * o->max_mde);
}

/* Changes first (regressed, then improved), then the rest in order. */
static int md_rank(const tb_ab_case *c)
{
    return c->verdict == TB_AB_REGRESSED ? 0
           : c->verdict == TB_AB_IMPROVED ? 1
           : c->verdict == TB_AB_ERROR    ? 2
                                          : 3;
}

void tb_ab_print_md(FILE *f, const tb_ab_case *cases, size_t m,
                    const tb_ab_opts *o, const char *stopped)
{
    size_t reg = tb_ab_count(cases, m, TB_AB_REGRESSED);
    size_t err = tb_ab_count(cases, m, TB_AB_ERROR);
    size_t un = tb_ab_unresolved(cases, m, o);
    fprintf(f, "### tbench ab: %s\n\n",
            stopped ? "stopped early, no verdict of the change"
            : reg || err || un ? "FAIL"
                               : "no regression");
    if (stopped)
        fprintf(f, "The blocks stopped early: %s.\n\n", stopped);
    fprintf(f, "%zu cases: **%zu regressed**, %zu improved, %zu unchanged, "
            "%zu inconclusive, %zu error, %zu skipped (alpha %g over the "
            "cases, Holm; threshold %.2f%%).\n\n",
            m, reg, tb_ab_count(cases, m, TB_AB_IMPROVED),
            tb_ab_count(cases, m, TB_AB_UNCHANGED),
            tb_ab_count(cases, m, TB_AB_INCONCLUSIVE), err,
            tb_ab_count(cases, m, TB_AB_SKIPPED), o->alpha,
            100 * o->threshold);
    fprintf(f, "| case | old | new | change | 95%% CI | p(Holm) | MDE | "
            "verdict |\n|---|--:|--:|--:|--:|--:|--:|---|\n");
    for (int rank = 0; rank < 4; rank++)
        for (size_t k = 0; k < m; k++) {
            const tb_ab_case *c = &cases[k];
            if (md_rank(c) != rank)
                continue;
            const char *v = tb_ab_verdict_name(c->verdict);
            if (c->verdict == TB_AB_ERROR || c->verdict == TB_AB_SKIPPED) {
                fprintf(f, "| `%s` | | | | | | | %s: %s |\n", c->id, v,
                        c->message);
                continue;
            }
            char a[32], b[32], mde[16];
            fmt_time(a, sizeof a, c->old_median_ns);
            fmt_time(b, sizeof b, c->new_median_ns);
            if (isfinite(c->mde))
                snprintf(mde, sizeof mde, "%.2f%%", 100 * c->mde);
            else
                snprintf(mde, sizeof mde, "none");
            fprintf(f, "| `%s` | %s | %s | %+.2f%% | [%+.2f%%, %+.2f%%] | "
                    "%.2g | %s | %s%s%s |\n", c->id, a, b, 100 * c->change,
                    100 * c->ci_low, 100 * c->ci_high, c->p_holm, mde,
                    rank < 2 ? "**" : "", v, rank < 2 ? "**" : "");
        }
    if (tb_ab_count(cases, m, TB_AB_INCONCLUSIVE))
        fprintf(f, "\ninconclusive: the blocks cannot tell a change of "
                "%.2f%% from none; more blocks narrow the CI and the MDE.\n",
                100 * o->threshold);
    if (un)
        fprintf(f, "\n%zu case%s cannot be judged at --max-mde %.2f%% (MDE "
                "above it): FAIL\n", un, un == 1 ? "" : "s",
                100 * o->max_mde);
}

/* A finite number, or null. */
static cJSON *num(double x)
{
    return isfinite(x) ? cJSON_CreateNumber(x) : cJSON_CreateNull();
}

static cJSON *case_json(const tb_ab_case *c)
{
    cJSON *j = cJSON_CreateObject();
    cJSON *o = cJSON_CreateArray(), *w = cJSON_CreateArray();
    if (!j || !o || !w) {
        cJSON_Delete(j);
        cJSON_Delete(o);
        cJSON_Delete(w);
        return NULL;
    }
    cJSON_AddStringToObject(j, "id", c->id);
    cJSON_AddStringToObject(j, "verdict", tb_ab_verdict_name(c->verdict));
    if (c->verdict == TB_AB_ERROR || c->verdict == TB_AB_SKIPPED)
        cJSON_AddStringToObject(j, "message", c->message);
    else
        cJSON_AddNullToObject(j, "message");
    cJSON_AddNumberToObject(j, "blocks", c->n);
    cJSON_AddItemToObject(j, "old_median_ns", num(c->old_median_ns));
    cJSON_AddItemToObject(j, "new_median_ns", num(c->new_median_ns));
    cJSON_AddItemToObject(j, "change", num(c->change));
    cJSON_AddItemToObject(j, "ci_low", num(c->ci_low));
    cJSON_AddItemToObject(j, "ci_high", num(c->ci_high));
    cJSON_AddItemToObject(j, "p", num(c->p));
    cJSON_AddItemToObject(j, "p_holm", num(c->p_holm));
    if (c->verdict == TB_AB_ERROR || c->verdict == TB_AB_SKIPPED)
        cJSON_AddNullToObject(j, "test");
    else
        cJSON_AddStringToObject(j, "test", c->exact ? "exact" : "normal");
    cJSON_AddItemToObject(j, "mde", num(c->mde));
    cJSON_AddItemToObject(j, "ci_level", num(c->ci_level));
    cJSON_AddNumberToObject(j, "look", c->look);
    cJSON_AddStringToObject(j, "stop", c->stop ? c->stop : "fixed");
    for (int i = 0; i < c->n; i++) {
        cJSON_AddItemToArray(o, num(c->old_ns[i]));
        cJSON_AddItemToArray(w, num(c->new_ns[i]));
    }
    cJSON_AddItemToObject(j, "old_block_ns", o);
    cJSON_AddItemToObject(j, "new_block_ns", w);
    return j;
}

cJSON *tb_ab_json(const tb_ab_case *cases, size_t m, const tb_ab_opts *o,
                  cJSON *builds, cJSON *settings)
{
    cJSON *doc = cJSON_CreateObject(), *arr = cJSON_CreateArray();
    cJSON *sum = cJSON_CreateObject();
    if (!doc || !arr || !sum || !builds || !settings) {
        cJSON_Delete(doc);
        cJSON_Delete(arr);
        cJSON_Delete(sum);
        cJSON_Delete(builds);
        cJSON_Delete(settings);
        return NULL;
    }
    cJSON_AddStringToObject(doc, "schema", TB_AB_SCHEMA);
    cJSON_AddItemToObject(doc, "builds", builds);
    cJSON_AddNumberToObject(settings, "alpha", o->alpha);
    cJSON_AddNumberToObject(settings, "threshold", o->threshold);
    cJSON_AddItemToObject(settings, "max_mde", num(o->max_mde));
    cJSON_AddBoolToObject(settings, "sequential", o->sequential);
    cJSON_AddItemToObject(doc, "settings", settings);
    for (size_t k = 0; k < m; k++) {
        cJSON *c = case_json(&cases[k]);
        if (!c) {
            cJSON_Delete(doc);
            cJSON_Delete(arr);
            cJSON_Delete(sum);
            return NULL;
        }
        cJSON_AddItemToArray(arr, c);
    }
    cJSON_AddItemToObject(doc, "cases", arr);
    static const struct {
        const char *name;
        int verdict; /* -1: unresolved */
    } counts[] = {{"regressed", TB_AB_REGRESSED},
                  {"improved", TB_AB_IMPROVED},
                  {"unchanged", TB_AB_UNCHANGED},
                  {"inconclusive", TB_AB_INCONCLUSIVE},
                  {"unresolved", -1},
                  {"error", TB_AB_ERROR},
                  {"skipped", TB_AB_SKIPPED}};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
        cJSON_AddNumberToObject(
            sum, counts[k].name,
            (double)(counts[k].verdict < 0
                         ? tb_ab_unresolved(cases, m, o)
                         : tb_ab_count(cases, m, counts[k].verdict)));
    cJSON_AddItemToObject(doc, "summary", sum);
    return doc;
}
