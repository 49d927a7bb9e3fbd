/* Cache events per iteration in a comparison (measure.cache): see
 * compare.h, tb_cmp_cache. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "../base/result_schema.h"

const char *tb_cmp_cache_name(int e)
{
    static const char *const names[TB_CMP_NCACHE] = {
        TB_RES_KEY(l1d_misses), TB_RES_KEY(llc_misses),
        TB_RES_KEY(dtlb_misses)};
    return (unsigned)e < TB_CMP_NCACHE ? names[e] : "?";
}

static double event(const tb_rescase *r, int e)
{
    return e == TB_CMP_CACHE_L1D   ? r->f.cache_l1d_misses
           : e == TB_CMP_CACHE_LLC ? r->f.cache_llc_misses
                                   : r->f.cache_dtlb_misses;
}

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The side's record with the most L1D misses (else any count): counts
 * of one binary and input, so the largest, as for instructions. */
static const tb_rescase *pick(const tb_rescase *const *r, int k)
{
    const tb_rescase *best = NULL;
    for (int j = 0; j < k; j++) {
        if (!r[j]->f.cache_source)
            continue;
        double v = r[j]->f.cache_l1d_misses;
        if (!best || (!isnan(v) && !(v <= best->f.cache_l1d_misses)))
            best = r[j];
    }
    return best;
}

void tb_cmp_cache_init(tb_cmp_case *c)
{
    for (int e = 0; e < TB_CMP_NCACHE; e++)
        c->cache_old[e] = c->cache_new[e] = c->cache_change[e] = NAN;
}

void tb_cmp_cache(tb_cmp_case *c, const tb_rescase *const *ro, int ko,
                  const tb_rescase *const *rn, int kn, const tb_cmp_opts *o)
{
    tb_cmp_cache_init(c);
    const tb_rescase *a = pick(ro, ko), *b = pick(rn, kn);
    for (int e = 0; e < TB_CMP_NCACHE; e++) {
        c->cache_old[e] = a ? event(a, e) : NAN;
        c->cache_new[e] = b ? event(b, e) : NAN;
    }
    if (!a || !b)
        return;
    c->cache_source = a->f.cache_source;
    c->cache_isa = a->f.cache_isa;
    c->cache_simulated = a->f.cache_simulated;
    if (!same_str(a->f.cache_source, b->f.cache_source) ||
        a->f.cache_simulated != b->f.cache_simulated)
        c->cache_note = "counted by different sources";
    else if (!same_str(a->f.cache_isa, b->f.cache_isa))
        c->cache_note = "counted on different ISA paths";
    else if (!same_str(a->f.cache_d1, b->f.cache_d1) ||
             !same_str(a->f.cache_ll, b->f.cache_ll))
        c->cache_note = "simulated with different cache geometries";
    if (c->cache_note)
        return;
    for (int e = 0; e < TB_CMP_NCACHE; e++) {
        double x = c->cache_old[e], y = c->cache_new[e];
        if (isnan(x) || isnan(y))
            continue;
        /* a change below one event per iteration is none: a warm LL
         * misses a handful of lines over the counted calls */
        if (fabs(y - x) < 1) {
            c->cache_change[e] = 0;
            continue;
        }
        c->cache_change[e] = x > 0 ? y / x - 1 : INFINITY;
        if (c->cache_change[e] > o->cache_threshold) {
            c->cache_dir[e] = 1;
            c->ctr_regressed = true;
        } else if (c->cache_change[e] < -o->cache_threshold) {
            c->cache_dir[e] = -1;
            c->ctr_improved = true;
        }
    }
}

bool tb_cmp_cache_line(const tb_cmp_case *k, int e, double threshold,
                       char *out, size_t len)
{
    const char *name = tb_cmp_cache_name(e);
    if (k->cache_note) {
        if (e)
            return false;
        snprintf(out, len, ": cache events not compared: %s", k->cache_note);
        return true;
    }
    if (!k->cache_dir[e])
        return false;
    snprintf(out, len, ": %s %.10g -> %.10g (%+.3f%%, threshold %.3g%%, "
                       "%s%s%s%s: %s)",
             name, k->cache_old[e], k->cache_new[e],
             100 * k->cache_change[e], 100 * threshold,
             k->cache_source ? k->cache_source : "?",
             k->cache_simulated ? " simulated" : "",
             k->cache_isa ? " " : "", k->cache_isa ? k->cache_isa : "",
             k->cache_dir[e] > 0 ? "counter regression"
                                 : "counter improvement");
    return true;
}
