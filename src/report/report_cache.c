/* The report's cache behaviour (issue 31 item 2): every case of the run
 * with cache events (measure.cache), per call: L1D and LL misses, and
 * the bytes those misses bring in (misses x the line size of the
 * simulated geometry, or 64 B for hardware counts) over the cost model's
 * bytes, dTLB misses and IPC where hardware counted them.
 * scripts/audit_work.py (check_cache) derives it again. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_impl.h"

/* The line size of geometry "32768 B, 64 B, 8-way", else 64. */
static double line_bytes(const char *g)
{
    const char *p = g ? strstr(g, " B, ") : NULL;
    double v = p ? strtod(p + 4, NULL) : 0;
    return v > 0 ? v : 64;
}

/* A count per call, or "n/a" when it was not counted. */
static const char *count(double v, char *buf, size_t len)
{
    if (isnan(v))
        return "n/a";
    return tb_md_num(v, buf, len);
}

/* misses x line / model bytes, as "0.98x", or "n/a". */
static const char *ratio(double misses, double line, double bytes,
                         char *buf, size_t len)
{
    if (isnan(misses) || !(bytes > 0))
        return "n/a";
    char n[32];
    snprintf(buf, len, "%sx", tb_md_num(misses * line / bytes, n, sizeof n));
    return buf;
}

void tb_rpt_cache(const tb_rpt *x)
{
    const tb_rset *s = x->s;
    tb_strbuf rows = {0};
    const char *d1 = NULL, *ll = NULL;
    bool mixed = false;
    int nrows = 0;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        const tb_res_fields *f = &c->rc->f;
        if (c->role != TB_ROLE_MAIN || !c->ok || !f->cache_source)
            continue;
        if (f->cache_simulated) {
            mixed = mixed || (d1 && (strcmp(d1, f->cache_d1 ? f->cache_d1
                                                            : "") ||
                                     strcmp(ll, f->cache_ll ? f->cache_ll
                                                            : "")));
            d1 = f->cache_d1 ? f->cache_d1 : "";
            ll = f->cache_ll ? f->cache_ll : "";
        }
        double line = f->cache_simulated ? line_bytes(f->cache_d1) : 64;
        double lline = f->cache_simulated ? line_bytes(f->cache_ll) : 64;
        char a[32], b[32], r1[40], r2[40], t[32], p[32];
        sb(&rows, "| %s | %s | %s | %s | %s%s | %s | %s | %s | %s | %s | %s "
                  "|\n",
           c->opp, c->shapes, c->dtype, c->variant, f->cache_source,
           f->cache_simulated ? " (simulated)" : "",
           count(f->cache_l1d_misses, a, sizeof a),
           ratio(f->cache_l1d_misses, line, c->bytes, r1, sizeof r1),
           count(f->cache_llc_misses, b, sizeof b),
           ratio(f->cache_llc_misses, lline, c->bytes, r2, sizeof r2),
           count(f->cache_dtlb_misses, t, sizeof t),
           count(f->cache_ipc, p, sizeof p));
        nrows++;
    }
    if (nrows && !rows.oom) {
        sb(x->b, "## Cache behaviour\n\n"
                 "Misses per call of the cases run with `measure.cache`, "
                 "counted after the timing in a process of their own, over "
                 "calls made back to back after an uncounted one (the "
                 "steady state: a working set that fits a cache stays in "
                 "it). \"Bytes / model\" is the misses times the line size "
                 "over the bytes of the op's cost model: near 1x each byte "
                 "the model counts comes from beyond that cache once; above "
                 "1x lines are fetched again (conflicts, a stride across "
                 "lines, blocking that re-reads); near 0 the data stays in "
                 "the cache between calls.");
        if (d1)
            sb(x->b, " Simulated figures are valgrind's (callgrind "
                     "`--cache-sim=yes`): a D1 of %s and one last level (LL) "
                     "of %s%s, no L2, no prefetcher, so they count what the "
                     "code's accesses need, not what this CPU's caches did; "
                     "cycles, IPC and dTLB misses are not simulated.",
               d1, ll, mixed ? " (the first simulated case's; cases differ)"
                             : "");
        sb(x->b, "\n\n| Op | Shapes | Dtype | Backend | Source | L1D "
                 "misses | Bytes / model | LL misses | Bytes / model | dTLB "
                 "misses | IPC |\n|---|---|---|---|---|---|---|---|---|---|"
                 "---|\n%s\n", rows.p);
    }
    free(rows.p);
}
