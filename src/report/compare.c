/* Case-by-case comparison of result files: see compare.h for the rules
 * and docs/FORMAT.md ("compare") for the outputs. */
#include "compare.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../base/stats.h"
#include "../base/error.h"
#include "../base/strbuf.h"
#include "table.h"

/* ---- small helpers -------------------------------------------------- */

/* Uniform integer in [0, n), n < 2^32 (multiply-shift on 32 bits; the
 * bias, below n / 2^32, is far under the bootstrap's own error). */
static inline size_t draw(tb_rng *r, size_t n)
{
    return (size_t)(((tb_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
    return h;
}

/* ---- Mann-Whitney U --------------------------------------------------- */

typedef struct {
    double v;
    int from_x;
} tagged;

static int cmp_tagged(const void *pa, const void *pb)
{
    const tagged *a = pa, *b = pb;
    return (a->v > b->v) - (a->v < b->v);
}

/* P(U <= u) under the null for sizes m, n without ties: c(m, n, u), the
 * number of orderings with U = u, obeys c(m, n, u) = c(m-1, n, u-n) +
 * c(m, n-1, u) (the largest value is an x, beating all n y's, or a y).
 * Two layers over m, each (n+1) x (m n + 1); sums only, so no
 * cancellation; the counts (< 2^100 for m, n <= 50) fit a double's range
 * and keep 53 bits of relative precision.  NAN on allocation failure. */
static double mwu_exact_cdf(size_t m, size_t n, double u)
{
    size_t umax = m * n, w = umax + 1;
    double *prev = calloc((n + 1) * w, sizeof *prev);
    double *cur = calloc((n + 1) * w, sizeof *cur);
    if (!prev || !cur) {
        free(prev);
        free(cur);
        return NAN;
    }
    for (size_t j = 0; j <= n; j++)
        prev[j * w] = 1; /* m = 0: U = 0 */
    for (size_t i = 1; i <= m; i++) {
        memset(cur, 0, (n + 1) * w * sizeof *cur);
        cur[0] = 1; /* n = 0: U = 0 */
        for (size_t j = 1; j <= n; j++) {
            double *c = cur + j * w;
            const double *left = cur + (j - 1) * w, *up = prev + j * w;
            size_t top = i * j;
            for (size_t k = 0; k <= top; k++)
                c[k] = left[k] + (k >= j ? up[k - j] : 0);
        }
        double *t = prev;
        prev = cur;
        cur = t;
    }
    const double *c = prev + n * w;
    double below = 0, total = 0;
    for (size_t k = 0; k <= umax; k++) {
        total += c[k];
        if ((double)k <= u)
            below += c[k];
    }
    free(prev);
    free(cur);
    return below / total;
}

int tb_mann_whitney(const double *x, size_t nx, const double *y, size_t ny,
                    tb_mwu *out)
{
    if (!x || !y || !out || nx == 0 || ny == 0)
        return TB_EINVAL;
    size_t n = nx + ny;
    tagged *t = malloc(n * sizeof *t);
    if (!t)
        return TB_ENOMEM;
    for (size_t i = 0; i < nx; i++)
        t[i] = (tagged){x[i], 1};
    for (size_t i = 0; i < ny; i++)
        t[nx + i] = (tagged){y[i], 0};
    for (size_t i = 0; i < n; i++)
        if (isnan(t[i].v)) {
            free(t);
            return TB_EINVAL;
        }
    qsort(t, n, sizeof *t, cmp_tagged);
    double rank_x = 0, tie_term = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && t[j].v == t[i].v)
            j++;
        double mid = 0.5 * ((double)(i + 1) + (double)j); /* midrank */
        size_t cx = 0;
        for (size_t k = i; k < j; k++)
            cx += (size_t)t[k].from_x;
        rank_x += mid * (double)cx;
        double tc = (double)(j - i);
        tie_term += tc * tc * tc - tc;
        i = j;
    }
    free(t);
    double fx = (double)nx, fy = (double)ny, fn = (double)n;
    double u1 = rank_x - fx * (fx + 1) / 2;
    double umax = u1 > fx * fy - u1 ? u1 : fx * fy - u1;
    out->u = u1;
    if (tie_term == 0 && nx <= TB_MWU_EXACT_MAX && ny <= TB_MWU_EXACT_MAX) {
        double cdf = mwu_exact_cdf(nx, ny, fx * fy - umax);
        if (isnan(cdf))
            return TB_ENOMEM;
        out->exact = true;
        out->p = fmin(1.0, 2 * cdf);
        return 0;
    }
    out->exact = false;
    double var = fx * fy / 12 * ((fn + 1) - tie_term / (fn * (fn - 1)));
    if (!(var > 0)) {
        out->p = 1;
        return 0;
    }
    double z = (umax - fx * fy / 2 - 0.5) / sqrt(var);
    out->p = fmin(1.0, erfc(z / sqrt(2.0)));
    return 0;
}

/* ---- Student t quantile ---------------------------------------------- */

/* Continued fraction of the regularized incomplete beta function
 * (modified Lentz); converges fast for x < (a+1)/(a+b+2). */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300, eps = 1e-16;
    double qab = a + b, qap = a + 1, qam = a - 1;
    double c = 1, d = 1 - qab * x / qap;
    d = 1 / (fabs(d) < tiny ? tiny : d);
    double h = d;
    for (int m = 1; m <= 10000; m++) {
        double m2 = 2.0 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d;
        c = 1 + aa / c;
        d = 1 / (fabs(d) < tiny ? tiny : d);
        c = fabs(c) < tiny ? tiny : c;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        c = 1 + aa / c;
        d = 1 / (fabs(d) < tiny ? tiny : d);
        c = fabs(c) < tiny ? tiny : c;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < eps)
            break;
    }
    return h;
}

/* Regularized incomplete beta I_x(a, b). */
static double inc_beta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) +
                 b * log1p(-x);
    if (x < (a + 1) / (a + b + 2))
        return exp(lbt) * beta_cf(a, b, x) / a;
    return 1 - exp(lbt) * beta_cf(b, a, 1 - x) / b;
}

/* P(T > t) for t >= 0, T ~ Student t with df degrees of freedom. */
static double t_sf(double t, double df)
{
    return 0.5 * inc_beta(df / 2, 0.5, df / (df + t * t));
}

double tb_t_quantile(double p, double df)
{
    if (!(p > 0 && p < 1) || !(df > 0))
        return NAN;
    if (p < 0.5)
        return -tb_t_quantile(1 - p, df);
    double q = 1 - p, lo = 0, hi = 1;
    if (q == 0.5)
        return 0;
    while (t_sf(hi, df) > q && hi < 1e300)
        hi *= 2;
    /* bisection: the tail is monotone, 200 halvings reach the double
     * spacing of any bracket */
    for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (t_sf(mid, df) > q)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* ---- bootstrap CI of the ratio of medians ----------------------------- */

/* A resample's median without the resample.  Sort the run: x_0 <= ... <=
 * x_(n-1).  n draws of an index with replacement are floor(n U) for n
 * uniforms U on [0, 1), and floor is monotone, so the resample's order
 * statistic of rank k is x at floor(n U_(k)), U_(k) the rank-k one of n
 * uniforms: Beta(k + 1, n - k).  Given U_(k) = u, the n - k - 1 uniforms
 * above it are uniform on (u, 1), so U_(k+1), their smallest, is
 * 1 - (1 - u) V^(1 / (n - k - 1)) for one more uniform V.  The median is
 * rank k = (n - 1) / 2 for odd n, the mean of ranks n/2 - 1 and n/2 for
 * even n (both may fall on one index: the resample drew it twice).  A
 * Beta draw is G_a / (G_a + G_b) of two Gamma draws, each by Marsaglia
 * and Tsang's squeeze-and-reject (2000; shape >= 1, accepted about 98%
 * of the time from one normal and one uniform), the normals by
 * Marsaglia's polar method, two a time.  Exact in distribution up to
 * rounding (tests/test_compare.c: chi-square against resampling), and
 * about ten uniforms and four logs a replicate whatever n: drawing n
 * samples took O(n), the binomial halving this replaces O(sqrt n) (a
 * table of terms per binomial: 2.3 ms of CPU a case of two runs of 460
 * samples at 2000 resamples, now 0.51; docs/ARCHITECTURE.md, "Scale"). */
typedef struct {
    tb_rng r;
    double spare; /* the polar method's second normal */
    bool have;
} bootrng;

static double std_normal(bootrng *g)
{
    if (g->have) {
        g->have = false;
        return g->spare;
    }
    double u, v, s;
    do {
        u = 2 * tb_rng_uniform(&g->r) - 1;
        v = 2 * tb_rng_uniform(&g->r) - 1;
        s = u * u + v * v;
    } while (s >= 1 || s == 0);
    double f = sqrt(-2 * log(s) / s);
    g->spare = v * f;
    g->have = true;
    return u * f;
}

/* Gamma(a, 1) for a >= 1, given d = a - 1/3 and c = 1 / sqrt(9 d). */
static double gamma_draw(bootrng *g, double d, double c)
{
    for (;;) {
        double z, v;
        do {
            z = std_normal(g);
            v = 1 + c * z;
        } while (v <= 0);
        v = v * v * v;
        double u = tb_rng_uniform(&g->r), z2 = z * z;
        if (u < 1 - 0.0331 * z2 * z2 ||
            log(u) < 0.5 * z2 + d * (1 - v + log(v)))
            return d * v;
    }
}

/* Runs of at most BOOT_DIRECT samples are resampled (n draws and a
 * selection: as cheap as the sampler there, and the intervals of small
 * runs stay those of every earlier version); above, each is sorted once
 * and drawn by the sampler. */
#define BOOT_DIRECT 16
typedef struct {
    const double *x; /* the samples, sorted (a copy) when exact */
    size_t n;
    double *own;
    bool exact;
    double da, ca, db, cb; /* Gamma(k + 1) and Gamma(n - k): d, c */
    double inv_m;          /* 1 / (n - k - 1), even n */
} bootrun;

static int bootrun_init(bootrun *b, const tb_sampleset *s, size_t direct)
{
    *b = (bootrun){.x = s->x, .n = s->n};
    if (s->n <= direct || s->n < 2)
        return 0;
    b->own = malloc(s->n * sizeof *b->own);
    if (!b->own)
        return TB_ENOMEM;
    memcpy(b->own, s->x, s->n * sizeof *b->own);
    qsort(b->own, s->n, sizeof *b->own, tb_cmp_double);
    b->x = b->own;
    b->exact = true;
    size_t n = s->n, k = (n - 1) / 2;
    b->da = (double)(k + 1) - 1.0 / 3;
    b->ca = 1 / sqrt(9 * b->da);
    b->db = (double)(n - k) - 1.0 / 3;
    b->cb = 1 / sqrt(9 * b->db);
    b->inv_m = 1 / (double)(n - k - 1);
    return 0;
}

/* The index floor(n u), u in [0, 1], kept at least lo and below n. */
static size_t cell(double u, size_t n, size_t lo)
{
    double f = floor(u * (double)n);
    size_t i = f < (double)n ? (size_t)f : n - 1;
    return i < lo ? lo : i;
}

/* The median of one resample of run b; scratch holds n values. */
static double boot_median(const bootrun *b, bootrng *g, double *scratch)
{
    size_t n = b->n;
    if (!b->exact) {
        for (size_t i = 0; i < n; i++)
            scratch[i] = b->x[draw(&g->r, n)];
        return tb_median_inplace(scratch, n);
    }
    double ga = gamma_draw(g, b->da, b->ca);
    double u = ga / (ga + gamma_draw(g, b->db, b->cb));
    size_t i = cell(u, n, 0);
    if (n % 2)
        return b->x[i];
    double w = pow(tb_rng_uniform(&g->r), b->inv_m);
    size_t j = cell(1 - (1 - u) * w, n, i);
    /* the midpoint as tb_median_inplace rounds it: the same value as
     * the resample's */
    return b->x[j] - (b->x[j] - b->x[i]) * 0.5;
}

/* One bootstrap replicate of a side's M: k runs drawn with replacement,
 * each resampled; scratch holds max n, meds holds k. */
static double side_replicate(const bootrun *s, int k, bootrng *g,
                             double *scratch, double *meds)
{
    for (int j = 0; j < k; j++)
        meds[j] = boot_median(&s[draw(&g->r, (size_t)k)], g, scratch);
    return tb_median_inplace(meds, (size_t)k);
}

/* k runs of sets prepared for bootstrapping, and scratch for a replicate
 * (max n values); NULL when out of memory or a set is bad (*rc says). */
static bootrun *bootruns_new(const tb_sampleset *s, int k, size_t direct,
                             size_t *maxn, int *rc)
{
    *rc = TB_EINVAL;
    if (k < 1)
        return NULL;
    for (int j = 0; j < k; j++) {
        if (!s[j].x || !s[j].n || s[j].n >= UINT32_MAX)
            return NULL;
        *maxn = s[j].n > *maxn ? s[j].n : *maxn;
    }
    *rc = TB_ENOMEM;
    bootrun *b = calloc((size_t)k, sizeof *b);
    for (int j = 0; b && j < k; j++)
        if (bootrun_init(&b[j], &s[j], direct)) {
            for (int i = 0; i < j; i++)
                free(b[i].own);
            free(b);
            return NULL;
        }
    if (b)
        *rc = 0;
    return b;
}

static void bootruns_free(bootrun *b, int k)
{
    for (int j = 0; b && j < k; j++)
        free(b[j].own);
    free(b);
}

static int boot_medians(const tb_sampleset *s, int k, int resamples,
                        uint64_t seed, size_t direct, double *out)
{
    if (!s || k < 1 || resamples < 1 || !out)
        return TB_EINVAL;
    size_t maxn = 0;
    int rc;
    bootrun *b = bootruns_new(s, k, direct, &maxn, &rc);
    if (!b)
        return rc;
    double *scratch = malloc(maxn * sizeof *scratch);
    double *meds = malloc((size_t)k * sizeof *meds);
    rc = TB_ENOMEM;
    if (scratch && meds) {
        bootrng g = {0};
        tb_rng_seed(&g.r, seed);
        for (int i = 0; i < resamples; i++)
            out[i] = side_replicate(b, k, &g, scratch, meds);
        rc = 0;
    }
    bootruns_free(b, k);
    free(scratch);
    free(meds);
    return rc;
}

int tb_boot_medians(const tb_sampleset *s, int k, int resamples,
                    uint64_t seed, double *out)
{
    return boot_medians(s, k, resamples, seed, BOOT_DIRECT, out);
}

int tb_boot_medians_exact(const tb_sampleset *s, int resamples,
                          uint64_t seed, double *out)
{
    return boot_medians(s, 1, resamples, seed, 0, out);
}

int tb_ratio_ci(const tb_sampleset *old, int k_old, const tb_sampleset *nw,
                int k_new, int resamples, uint64_t seed, double *lo,
                double *hi)
{
    if (!old || !nw || k_old < 1 || k_new < 1 || resamples < 1 || !lo ||
        !hi)
        return TB_EINVAL;
    size_t maxn = 0;
    int rc;
    bootrun *bo = bootruns_new(old, k_old, BOOT_DIRECT, &maxn, &rc);
    if (!bo)
        return rc;
    bootrun *bn = bootruns_new(nw, k_new, BOOT_DIRECT, &maxn, &rc);
    if (!bn) {
        bootruns_free(bo, k_old);
        return rc;
    }
    int kmax = k_old > k_new ? k_old : k_new;
    rc = TB_ENOMEM;
    double *scratch = malloc(maxn * sizeof *scratch);
    double *meds = malloc((size_t)kmax * sizeof *meds);
    double *ratios = malloc((size_t)resamples * sizeof *ratios);
    if (scratch && meds && ratios) {
        bootrng g = {0};
        tb_rng_seed(&g.r, seed);
        for (int b = 0; b < resamples; b++) {
            double mo = side_replicate(bo, k_old, &g, scratch, meds);
            double mn = side_replicate(bn, k_new, &g, scratch, meds);
            ratios[b] = mn / mo;
        }
        *lo = tb_quantile_select(ratios, (size_t)resamples, 0.025);
        *hi = tb_quantile_select(ratios, (size_t)resamples, 0.975);
        rc = 0;
    }
    bootruns_free(bo, k_old);
    bootruns_free(bn, k_new);
    free(scratch);
    free(meds);
    free(ratios);
    return rc;
}

/* ---- options ---------------------------------------------------------- */

void tb_cmp_opts_default(tb_cmp_opts *o)
{
    *o = (tb_cmp_opts){0}; /* every slot a later version adds, off */
    o->threshold = 0.02;
    o->alpha = 0.01;
    o->fail_on = TB_FAIL_ALL;
    o->resamples = 2000;
    o->seed = UINT64_C(0x7b5eedc0ffee);
    o->instr_threshold = 0.001;
    o->cache_threshold = 0.01;
    o->max_mde = INFINITY;
}

int tb_cmp_parse_fail_on(const char *s, unsigned *bits)
{
    unsigned b = 0;
    if (!strcmp(s, "none")) {
        *bits = 0;
        return 0;
    }
    static const unsigned bit[] = {TB_FAIL_TIME, TB_FAIL_COUNTERS,
                                   TB_FAIL_STATUS};
    while (*s) {
        size_t l = strcspn(s, ",");
        int i = tb_word_index(TB_FAIL_ON_WORDS, s, l);
        if (i < 0 || i >= (int)(sizeof bit / sizeof bit[0]))
            return TB_EINVAL;
        b |= bit[i];
        s += l;
        if (*s == ',' && *++s == '\0')
            return TB_EINVAL;
    }
    if (!b)
        return TB_EINVAL;
    *bits = b;
    return 0;
}

/* ---- the comparison ----------------------------------------------------- */

static bool is_ok(const char *status)
{
    return tb_res_status_parse(status) == TB_RES_STATUS_OK;
}

/* Statuses that mean "did not run here" rather than "failed". */
static bool status_not_run(const char *s)
{
    return tb_res_status_kind_of(s) == TB_RES_NOT_RUN;
}

/* A side's status for a case: "ok" when every run that has it is ok,
 * else the first other status (with its message). */
static void side_status(const tb_rescase *const *rc, int k,
                        const char **status, const char **message,
                        const char **impl)
{
    *status = NULL;
    *message = NULL;
    *impl = NULL;
    for (int j = 0; j < k; j++) {
        if (!*status || is_ok(*status)) {
            *status = rc[j]->status;
            *message = rc[j]->message;
        }
        if (!*impl)
            *impl = rc[j]->impl;
    }
}

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Instructions per iteration: exact counts, so each side's largest, and
 * a change beyond o->instr_threshold either way is a counter verdict;
 * counts of different sources or ISA paths are not compared. */
static void compare_instr(tb_cmp_case *c, const tb_rescase *const *ro,
                          int ko, const tb_rescase *const *rn, int kn,
                          const tb_cmp_opts *o)
{
    const tb_rescase *a = NULL, *b = NULL;
    for (int j = 0; j < ko; j++)
        if (!isnan(ro[j]->instructions) &&
            (!a || ro[j]->instructions > a->instructions))
            a = ro[j];
    for (int j = 0; j < kn; j++)
        if (!isnan(rn[j]->instructions) &&
            (!b || rn[j]->instructions > b->instructions))
            b = rn[j];
    c->instr_old = a ? a->instructions : NAN;
    c->instr_new = b ? b->instructions : NAN;
    c->instr_change = NAN;
    if (!a || !b)
        return;
    c->instr_source = a->instr_source;
    c->instr_isa = a->instr_isa;
    if (!same_str(a->instr_source, b->instr_source)) {
        c->instr_note = "counted by different sources";
        return;
    }
    if (!same_str(a->instr_isa, b->instr_isa)) {
        c->instr_note = "counted on different ISA paths";
        return;
    }
    c->instr_change = a->instructions > 0
                          ? b->instructions / a->instructions - 1
                          : b->instructions > 0 ? INFINITY : 0;
    if (c->instr_change > o->instr_threshold) {
        c->instr_dir = 1;
        c->ctr_regressed = true;
    } else if (c->instr_change < -o->instr_threshold) {
        c->instr_dir = -1;
        c->ctr_improved = true;
    }
}

/* Time and counters of a case that is ok on both sides. */
static int compare_timed(tb_cmp_case *c, const tb_rescase *const *ro,
                         int ko, const tb_rescase *const *rn, int kn,
                         const tb_cmp_opts *o)
{
    int kmax = ko > kn ? ko : kn;
    int rc = TB_ENOMEM;
    double *v = malloc((size_t)kmax * 2 * sizeof *v);
    tb_sampleset *so = malloc((size_t)ko * sizeof *so);
    tb_sampleset *sn = malloc((size_t)kn * sizeof *sn);
    double *px = NULL, *py = NULL;
    if (!v || !so || !sn)
        goto out;
    double *cis = v + kmax;
    size_t nx = 0, ny = 0;
    for (int j = 0; j < ko; j++) {
        so[j] = (tb_sampleset){ro[j]->samples_ns, ro[j]->n};
        nx += ro[j]->n;
    }
    for (int j = 0; j < kn; j++) {
        sn[j] = (tb_sampleset){rn[j]->samples_ns, rn[j]->n};
        ny += rn[j]->n;
    }
    /* medians and within-run noise of each side; the pooled variance of
     * log run medians over the sides with two or more runs */
    double within = 0, between = NAN, ss = 0;
    int df = 0, keff[2] = {ko, kn};
    for (int side = 0; side < 2; side++) {
        const tb_rescase *const *r = side ? rn : ro;
        int k = side ? kn : ko;
        double mean = 0;
        for (int j = 0; j < k; j++) {
            v[j] = r[j]->median_ns;
            cis[j] = r[j]->ci_rel;
            mean += log(v[j]) / k;
        }
        /* in place: the sum of squares below does not depend on order */
        double m = tb_median_inplace(v, (size_t)k);
        within += 0.5 * tb_median_inplace(cis, (size_t)k);
        if (k >= 2) {
            for (int j = 0; j < k; j++)
                ss += (log(v[j]) - mean) * (log(v[j]) - mean);
            df += k - 1;
        } else if (r[0]->n_rounds >= 2) {
            /* one run measured in rounds: its round medians show the
             * noise between phases of the machine as several runs would */
            int nr = r[0]->n_rounds;
            double rm = 0;
            for (int j = 0; j < nr; j++)
                rm += log(r[0]->round_medians_ns[j]) / nr;
            for (int j = 0; j < nr; j++) {
                double d = log(r[0]->round_medians_ns[j]) - rm;
                ss += d * d;
            }
            df += nr - 1;
            keff[side] = nr;
        }
        if (side)
            c->new_median = m;
        else
            c->old_median = m;
    }
    c->run_sd = NAN;
    c->run_df = df;
    if (df > 0) {
        /* the smallest change a two-sample t test on the log run medians
         * would call significant at alpha */
        c->run_sd = sqrt(ss / df);
        between = expm1(tb_t_quantile(1 - o->alpha / 2, df) * c->run_sd *
                        sqrt(1.0 / keff[0] + 1.0 / keff[1]));
    }
    c->floor_within = within;
    c->floor_between = between;
    c->mde = isnan(between) ? within : fmax(within, between);
    c->floor = fmax(o->threshold, c->mde);
    c->change = c->new_median / c->old_median - 1;

    double lo, hi;
    if ((rc = tb_ratio_ci(so, ko, sn, kn, o->resamples,
                          o->seed ^ hash_str(c->id), &lo, &hi)))
        goto out;
    c->ci_lo = lo - 1;
    c->ci_hi = hi - 1;

    rc = TB_ENOMEM;
    px = malloc(nx * sizeof *px);
    py = malloc(ny * sizeof *py);
    if (!px || !py)
        goto out;
    nx = ny = 0;
    for (int j = 0; j < ko; j++)
        for (size_t i = 0; i < ro[j]->n; i++)
            px[nx++] = ro[j]->samples_ns[i];
    for (int j = 0; j < kn; j++)
        for (size_t i = 0; i < rn[j]->n; i++)
            py[ny++] = rn[j]->samples_ns[i];
    tb_mwu t;
    if ((rc = tb_mann_whitney(py, ny, px, nx, &t)))
        goto out;
    c->p = t.p;
    c->u = t.u;
    c->exact = t.exact;
    c->n_old = nx;
    c->n_new = ny;

    c->time = (tb_time_verdict)tb_verdict_judge(&(tb_verdict_in){
        .change = c->change, .ci_low = c->ci_lo, .ci_high = c->ci_hi,
        .p = c->p, .alpha = o->alpha, .threshold = o->threshold,
        .floor = c->floor, .mde = c->mde});

    /* Counters are exact; take each side's largest, so a run that does
     * more work is never hidden by another run of the same side. */
    for (int k = 0; k < TB_RES_NCOUNTERS; k++) {
        double a = NAN, b = NAN;
        for (int j = 0; j < ko; j++)
            if (!isnan(ro[j]->counters[k]))
                a = isnan(a) ? ro[j]->counters[k] : fmax(a, ro[j]->counters[k]);
        for (int j = 0; j < kn; j++)
            if (!isnan(rn[j]->counters[k]))
                b = isnan(b) ? rn[j]->counters[k] : fmax(b, rn[j]->counters[k]);
        c->ctr_old[k] = a;
        c->ctr_new[k] = b;
        if (isnan(a) || isnan(b))
            continue;
        /* per-iteration values are count / iterations: compare with a
         * relative slack far below one event per iteration */
        double slack = 1e-9 * fmax(1.0, fabs(a));
        if (b > a + slack) {
            c->ctr_dir[k] = 1;
            c->ctr_regressed = true;
        } else if (b < a - slack) {
            c->ctr_dir[k] = -1;
            c->ctr_improved = true;
        }
    }
    compare_instr(c, ro, ko, rn, kn, o);
    tb_cmp_cache(c, ro, ko, rn, kn, o);
    rc = 0;
out:
    free(v);
    free(so);
    free(sn);
    free(px);
    free(py);
    return rc;
}

/* The CUPTI counts of one side: the largest over its runs with a valid
 * cupti object.  *why (when none has one) is the first run's reason. */
static bool cupti_side(const tb_rescase *const *r, int k, double *out,
                       const char **why)
{
    bool any = false;
    *why = NULL;
    for (int i = 0; i < TB_RES_NCUPTI; i++)
        out[i] = NAN;
    for (int j = 0; j < k; j++) {
        if (r[j]->cupti_state != TB_RES_CUPTI_VALID) {
            if (!*why)
                *why = r[j]->cupti_state == TB_RES_CUPTI_NULL
                           ? r[j]->cupti_reason
                           : "the file has no cupti field";
            continue;
        }
        any = true;
        for (int i = 0; i < TB_RES_NCUPTI; i++)
            out[i] = isnan(out[i]) ? r[j]->cupti_ctr[i]
                                   : fmax(out[i], r[j]->cupti_ctr[i]);
    }
    return any;
}

/* CUPTI counts of a case ok on both sides: exact regressions when both
 * sides measured them, no verdict (and why) when only one did. */
static void compare_cupti(tb_cmp_case *c, const tb_rescase *const *ro,
                          int ko, const tb_rescase *const *rn, int kn)
{
    const char *wo, *wn;
    bool vo = cupti_side(ro, ko, c->cu_old, &wo);
    bool vn = cupti_side(rn, kn, c->cu_new, &wn);
    if (!vo && !vn)
        return; /* neither side measured: nothing to say */
    if (!vo || !vn) {
        snprintf(c->cu_na, sizeof c->cu_na,
                 "no CUPTI verdict: not measured in the %s run%s: %.250s",
                 vo ? "new" : "old", (vo ? kn : ko) > 1 ? "s" : "",
                 vo ? wn : wo);
        return;
    }
    for (int k = 0; k < TB_RES_NCUPTI; k++) {
        double a = c->cu_old[k], b = c->cu_new[k];
        double slack = 1e-9 * fmax(1.0, fabs(a));
        if (b > a + slack) {
            c->cu_dir[k] = 1;
            c->ctr_regressed = true;
        } else if (b < a - slack) {
            c->cu_dir[k] = -1;
            c->ctr_improved = true;
        }
    }
}

static void count_case(tb_cmp *out, tb_cmp_case *c)
{
    if (c->presence == TB_CMP_ADDED) {
        out->n_added++;
        return;
    }
    if (c->presence == TB_CMP_REMOVED) {
        out->n_removed++;
        c->missing = true;
        out->n_missing++;
        return;
    }
    /* ran and no longer runs here: missing rather than broken */
    c->missing = c->schg == TB_SCHG_FAILURE && is_ok(c->old_status) &&
                 status_not_run(c->new_status);
    out->n_missing += c->missing;
    c->unresolved = c->time != TB_TIME_NA && !(c->mde <= out->opts.max_mde);
    out->n_unresolved += c->unresolved;
    out->n_common++;
    out->n_failures += c->schg == TB_SCHG_FAILURE;
    out->n_fixed += c->schg == TB_SCHG_FIXED;
    out->n_changed += c->schg == TB_SCHG_CHANGED;
    if (c->time != TB_TIME_NA)
        out->n_timed++;
    out->n_regressed += c->time == TB_TIME_REGRESSED;
    out->n_improved += c->time == TB_TIME_IMPROVED;
    out->n_unchanged += c->time == TB_TIME_UNCHANGED;
    out->n_inconclusive += c->time == TB_TIME_INCONCLUSIVE;
    out->n_ctr_regressed += c->ctr_regressed;
    out->n_ctr_improved += c->ctr_improved;
}

int tb_compare(tb_resfile *const *old, int k_old, tb_resfile *const *nw,
               int k_new, const tb_cmp_opts *opts, tb_cmp *out, char *err,
               size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!old || !nw || k_old < 1 || k_new < 1 || !opts) {
        snprintf(err, errlen, "compare: no file to compare");
        return TB_EINVAL;
    }
    out->opts = *opts;
    out->old_files = old;
    out->new_files = nw;
    out->k_old = k_old;
    out->k_new = k_new;
    for (int side = 0; side < 2; side++) {
        tb_resfile *const *mine = side ? nw : old, *const *other = side ? old
                                                                        : nw;
        int km = side ? k_new : k_old, ko = side ? k_old : k_new;
        for (int j = 0; j < km; j++)
            if (!tb_resfile_shares_id(mine[j], other, ko)) {
                snprintf(err, errlen, "%s: no case id in common with %s%s "
                         "(a different matrix?)", mine[j]->path,
                         other[0]->path, ko > 1 ? " and the other runs" : "");
                return TB_EINVAL;
            }
    }

    tb_resfile **all = malloc((size_t)(k_old + k_new) * sizeof *all);
    const tb_rescase **ro = malloc((size_t)k_old * sizeof *ro);
    const tb_rescase **rn = malloc((size_t)k_new * sizeof *rn);
    const char **ids = NULL;
    int u = 0;
    if (!all || !ro || !rn)
        goto oom;
    memcpy(all, old, (size_t)k_old * sizeof *all);
    memcpy(all + k_old, nw, (size_t)k_new * sizeof *all);
    if (tb_resfile_union_ids(all, k_old + k_new, &ids, &u))
        goto oom;
    out->cases = calloc((size_t)(u ? u : 1), sizeof *out->cases);
    if (!out->cases)
        goto oom;
    for (int i = 0; i < u; i++) {
        if (opts->in_scope && !opts->in_scope(ids[i], opts->scope_arg)) {
            bool in_new = false;
            for (int j = 0; j < k_new && !in_new; j++)
                in_new = tb_resfile_find(nw[j], ids[i]) != NULL;
            if (!in_new)
                continue; /* not asked for by the new side's plan */
        }
        tb_cmp_case *c = &out->cases[out->n++];
        c->id = ids[i];
        c->bytes = c->flops = c->items = NAN;
        for (int k = 0; k < TB_RES_NCOUNTERS; k++)
            c->ctr_old[k] = c->ctr_new[k] = NAN;
        for (int k = 0; k < TB_RES_NCUPTI; k++)
            c->cu_old[k] = c->cu_new[k] = NAN;
        c->instr_old = c->instr_new = c->instr_change = NAN;
        tb_cmp_cache_init(c);
        int ko = 0, kn = 0;
        for (int j = 0; j < k_old; j++)
            if ((ro[ko] = tb_resfile_find(old[j], c->id)))
                ko++;
        for (int j = 0; j < k_new; j++)
            if ((rn[kn] = tb_resfile_find(nw[j], c->id)))
                kn++;
        c->k_old = ko;
        c->k_new = kn;
        side_status(ro, ko, &c->old_status, &c->old_message, &c->old_impl);
        side_status(rn, kn, &c->new_status, &c->new_message, &c->new_impl);
        const tb_rescase *any = ko ? ro[0] : rn[0];
        c->bytes = any->bytes;
        c->flops = any->flops;
        c->items = any->items;
        c->time = TB_TIME_NA;
        c->floor_between = NAN;
        if (!ko || !kn) {
            c->presence = ko ? TB_CMP_REMOVED : TB_CMP_ADDED;
            count_case(out, c);
            continue;
        }
        c->presence = TB_CMP_BOTH;
        bool ook = is_ok(c->old_status);
        bool nok = is_ok(c->new_status);
        if (!strcmp(c->old_status, c->new_status))
            c->schg = TB_SCHG_SAME;
        else if (nok)
            c->schg = TB_SCHG_FIXED;
        else if (ook || !status_not_run(c->new_status))
            c->schg = TB_SCHG_FAILURE;
        else
            c->schg = TB_SCHG_CHANGED;
        if (ook && nok) {
            int rc = compare_timed(c, ro, ko, rn, kn, opts);
            if (rc) {
                free(all);
                free(ids);
                free(ro);
                free(rn);
                tb_cmp_free(out);
                snprintf(err, errlen, "compare: %s", tb_strerror(rc));
                return rc;
            }
            compare_cupti(c, ro, ko, rn, kn);
        }
        count_case(out, c);
    }
    /* status failures that are missing cases pass with allow_missing */
    int vanished = out->n_missing - out->n_removed;
    int broken = out->n_failures - vanished;
    out->failed = ((opts->fail_on & TB_FAIL_TIME) && out->n_regressed) ||
                  ((opts->fail_on & TB_FAIL_COUNTERS) &&
                   out->n_ctr_regressed) ||
                  ((opts->fail_on & TB_FAIL_STATUS) &&
                   (broken || (!opts->allow_missing && out->n_missing))) ||
                  out->n_unresolved;
    free(all);
    free(ids);
    free(ro);
    free(rn);
    return 0;
oom:
    free(all);
    free(ids);
    free(ro);
    free(rn);
    tb_cmp_free(out);
    snprintf(err, errlen, "compare: out of memory");
    return TB_ENOMEM;
}

/* A case of one pair of sides, before anything is compared. */
static void pair_init(tb_cmp_case *out, const tb_rescase *old,
                      const tb_rescase *nw, int ko, int kn)
{
    memset(out, 0, sizeof *out);
    out->id = nw->id;
    out->presence = TB_CMP_BOTH;
    out->old_status = old->status;
    out->new_status = nw->status;
    out->k_old = ko;
    out->k_new = kn;
    out->time = TB_TIME_NA;
    out->bytes = nw->bytes;
    out->flops = nw->flops;
    out->items = nw->items;
    for (int k = 0; k < TB_RES_NCOUNTERS; k++)
        out->ctr_old[k] = out->ctr_new[k] = NAN;
    for (int k = 0; k < TB_RES_NCUPTI; k++)
        out->cu_old[k] = out->cu_new[k] = NAN;
    out->instr_old = out->instr_new = out->instr_change = NAN;
    tb_cmp_cache_init(out);
    out->floor_between = NAN;
}

int tb_cmp_pair(const tb_rescase *old, const tb_rescase *nw,
                const tb_cmp_opts *opts, tb_cmp_case *out)
{
    pair_init(out, old, nw, 1, 1);
    if (!old->timed || !nw->timed)
        return 0;
    return compare_timed(out, &old, 1, &nw, 1, opts);
}

int tb_cmp_runs(const tb_rescase *const *old, int ko,
                const tb_rescase *const *nw, int kn, const tb_cmp_opts *opts,
                tb_cmp_case *out)
{
    pair_init(out, old[0], nw[0], ko, kn);
    return compare_timed(out, old, ko, nw, kn, opts);
}

void tb_cmp_free(tb_cmp *c)
{
    if (!c)
        return;
    free(c->cases);
    c->cases = NULL;
    c->n = 0;
}

const char *tb_cmp_case_verdict(const tb_cmp_case *c)
{
#define V(e) tb_res_verdict_name(TB_RES_VERDICT_##e)
    if (c->presence == TB_CMP_ADDED)
        return V(ADDED);
    if (c->presence == TB_CMP_REMOVED)
        return V(REMOVED);
    switch (c->schg) {
    case TB_SCHG_FAILURE: return V(FAILURE);
    case TB_SCHG_FIXED: return V(FIXED);
    case TB_SCHG_CHANGED: return V(STATUS_CHANGED);
    case TB_SCHG_SAME: break;
    }
    switch (c->time) {
    case TB_TIME_REGRESSED: return V(REGRESSED);
    case TB_TIME_IMPROVED: return V(IMPROVED);
    case TB_TIME_UNCHANGED: return c->ctr_regressed ? V(COUNTERS)
                                                    : V(UNCHANGED);
    case TB_TIME_INCONCLUSIVE: return c->ctr_regressed ? V(COUNTERS)
                                                       : V(INCONCLUSIVE);
    case TB_TIME_NA: break;
    }
#undef V
    return c->old_status; /* the same status on both sides */
}

/* ---- text and Markdown ------------------------------------------------ */

static void fmt_pct(double f, char *buf, size_t len)
{
    double p = 100 * f;
    snprintf(buf, len, "%+.*f%%", fabs(p) < 10 ? 1 : 0, p);
}

static void fmt_p(double p, char *buf, size_t len)
{
    if (p < 0.001)
        snprintf(buf, len, "%.0e", p);
    else
        snprintf(buf, len, "%.3f", p);
}

static void fmt_ctr(double v, char *buf, size_t len)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.6g", v);
}

/* "PATH" or "PATH and N more runs" for a side, PATH in backticks for
 * Markdown. */
static void side_label(tb_resfile *const *f, int k, bool md, char *buf,
                       size_t len)
{
    int w = snprintf(buf, len, "%s%s%s", md ? "`" : "", f[0]->path,
                     md ? "`" : "");
    if (k > 1 && w > 0 && (size_t)w < len)
        snprintf(buf + w, len - (size_t)w, " and %d more run%s", k - 1,
                 k > 2 ? "s" : "");
}

static const char *fail_on_text(unsigned b, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s%s", b & TB_FAIL_TIME ? "time," : "",
             b & TB_FAIL_COUNTERS ? "counters," : "",
             b & TB_FAIL_STATUS ? "status," : "", b ? "" : "none");
    size_t l = strlen(buf);
    if (l && buf[l - 1] == ',')
        buf[l - 1] = '\0';
    return buf;
}

bool tb_cmp_case_impl_changed(const tb_cmp_case *k)
{
    return k->presence == TB_CMP_BOTH && k->old_impl && k->new_impl &&
           strcmp(k->old_impl, k->new_impl) != 0;
}

/* The head (the two sides, the options) and the table of the cases
 * timed on both sides. */
static void print_table(FILE *f, const tb_cmp *c, bool md,
                        const char *(*color)(const char *))
{
    char a[4096], b[4096], fo[64];
    side_label(c->old_files, c->k_old, md, a, sizeof a);
    side_label(c->new_files, c->k_new, md, b, sizeof b);
    fail_on_text(c->opts.fail_on, fo, sizeof fo);
    if (md)
        fprintf(f, "## Comparison\n\nold: %s  \nnew: %s  \nthreshold "
                "%g%%, alpha %g, fail on %s\n\n",
                a, b, 100 * c->opts.threshold, c->opts.alpha, fo);
    else
        fprintf(f, "old: %s\nnew: %s\nthreshold %g%%, alpha %g, fail on "
                "%s\n\n",
                a, b, 100 * c->opts.threshold, c->opts.alpha, fo);
    int w = 4;
    for (int i = 0; i < c->n; i++)
        if (c->cases[i].time != TB_TIME_NA && (int)strlen(c->cases[i].id) > w)
            w = (int)strlen(c->cases[i].id);
    if (c->n_timed) {
        if (md)
            fprintf(f, "| case | old | new | change | 95%% CI | p | floor "
                    "| verdict |\n|---|--:|--:|--:|--:|--:|--:|---|\n");
        else
            fprintf(f, "%-*s  %10s %10s %7s %17s %7s %6s  %s\n", w, "case",
                    "old", "new", "change", "95% CI", "p", "floor",
                    "verdict");
    }
    for (int i = 0; i < c->n; i++) {
        const tb_cmp_case *k = &c->cases[i];
        if (k->time == TB_TIME_NA)
            continue;
        char om[32], nm[32], ch[32], lo[32], hi[32], ci[80], p[32], fl[32];
        tb_fmt_ns(k->old_median, om, sizeof om);
        tb_fmt_ns(k->new_median, nm, sizeof nm);
        fmt_pct(k->change, ch, sizeof ch);
        fmt_pct(k->ci_lo, lo, sizeof lo);
        fmt_pct(k->ci_hi, hi, sizeof hi);
        snprintf(ci, sizeof ci, "[%s, %s]", lo, hi);
        fmt_p(k->p, p, sizeof p);
        if (k->floor < 10)
            snprintf(fl, sizeof fl, "%.1f%%", 100 * k->floor);
        else
            snprintf(fl, sizeof fl, ">999%%");
        const char *kc = tb_cmp_case_impl_changed(k) ? " (kernel changed)"
                                                     : "";
        if (md)
            fprintf(f, "| `%s` | %s | %s | %s | %s | %s | %s | %s%s |\n",
                    k->id, om, nm, ch, ci, p, fl, tb_cmp_case_verdict(k),
                    kc);
        else {
            const char *v = tb_cmp_case_verdict(k);
            const char *on = color ? color(v) : "";
            fprintf(f, "%-*s  %10s %10s %7s %17s %7s %6s  %s%s%s%s\n", w,
                    k->id, om, nm, ch, ci, p, fl, on, v, *on ? "\033[0m" : "",
                    kc);
        }
    }
}

/* The start of a list item, "ID" (in backticks for Markdown), under a
 * heading printed before the first item (*hdr false). */
static void print_item(FILE *f, bool md, bool *hdr, const char *heading,
                       const char *id)
{
    if (!*hdr)
        fprintf(f, "\n%s\n%s", heading, md ? "\n" : "");
    *hdr = true;
    fprintf(f, "%s%s%s%s", md ? "- " : "  ", md ? "`" : "", id,
            md ? "`" : "");
}

/* One side's machine as its files recorded it (env): the highest
 * 1-minute load average at a run's start, the CPUs, the warnings. */
static void print_side_machine(FILE *f, const char *side,
                               tb_resfile *const *files, int k)
{
    double load = NAN, cpus = NAN;
    int warnings = 0;
    const char *first = NULL;
    for (int j = 0; j < k; j++) {
        const tb_resenv *e = &files[j]->env;
        if (e->n_loadavg > 0 && !(e->loadavg[0] <= load))
            load = e->loadavg[0];
        cpus = e->logical_cpus;
        warnings += e->n_warnings;
        if (!first && e->n_warnings)
            first = e->warnings[0];
    }
    fprintf(f, "%s: load average %.2f at the start on %.0f CPUs, %d "
            "warning%s%s%.160s%s", side, load, cpus, warnings,
            warnings == 1 ? "" : "s", first ? " (first: " : "",
            first ? first : "", first ? ")" : "");
}

/* The noise sources the files recorded, beside inconclusive verdicts:
 * a floor wider than the threshold is often the machine's. */
static void print_machines(FILE *f, const tb_cmp *c, bool md)
{
    fprintf(f, "%snote: the machine at the runs (env): ", md ? "\n" : "");
    print_side_machine(f, "OLD", c->old_files, c->k_old);
    fprintf(f, "; ");
    print_side_machine(f, "NEW", c->new_files, c->k_new);
    fprintf(f, ".  'tbench selftest' names this machine's noise sources "
            "now (clock, steal, other processes, load)\n");
}

/* Exact counters, CUPTI counts and instructions that changed. */
static void print_counters(FILE *f, const tb_cmp *c, bool md)
{
    static const char *const head = "counters (per iteration):";
    bool hdr = false;
    char x[32], y[32];
    for (int i = 0; i < c->n; i++) {
        const tb_cmp_case *k = &c->cases[i];
        for (int j = 0; j < TB_RES_NCOUNTERS + TB_RES_NCUPTI; j++) {
            bool cu = j >= TB_RES_NCOUNTERS;
            int jj = cu ? j - TB_RES_NCOUNTERS : j;
            int dir = cu ? k->cu_dir[jj] : k->ctr_dir[jj];
            if (!dir)
                continue;
            print_item(f, md, &hdr, head, k->id);
            fmt_ctr(cu ? k->cu_old[jj] : k->ctr_old[jj], x, sizeof x);
            fmt_ctr(cu ? k->cu_new[jj] : k->ctr_new[jj], y, sizeof y);
            fprintf(f, ": %s %s -> %s (%s)\n",
                    cu ? tb_res_cupti_name(jj) : tb_res_counter_name(jj), x,
                    y, dir > 0 ? "counter regression"
                               : "counter improvement");
        }
        for (int e = 0; e < TB_CMP_NCACHE; e++) {
            char line[400];
            if (!tb_cmp_cache_line(k, e, c->opts.cache_threshold, line,
                                   sizeof line))
                continue;
            print_item(f, md, &hdr, head, k->id);
            fprintf(f, "%s\n", line);
        }
        if (!k->instr_dir && !k->instr_note)
            continue;
        print_item(f, md, &hdr, head, k->id);
        if (k->instr_dir)
            fprintf(f, ": instructions %.10g -> %.10g (%+.3f%%, threshold "
                    "%.3g%%, %s%s%s: %s)\n", k->instr_old, k->instr_new,
                    100 * k->instr_change, 100 * c->opts.instr_threshold,
                    k->instr_source, k->instr_isa ? " " : "",
                    k->instr_isa ? k->instr_isa : "",
                    k->instr_dir > 0 ? "counter regression"
                                     : "counter improvement");
        else
            fprintf(f, ": instructions %.10g -> %.10g not compared: %s\n",
                    k->instr_old, k->instr_new, k->instr_note);
    }
}

/* CUPTI counts not compared, kernel changes, status changes, and the
 * cases of one side only. */
static void print_changes(FILE *f, const tb_cmp *c, bool md)
{
    bool hdr = false;
    for (int i = 0; i < c->n; i++)
        if (c->cases[i].cu_na[0]) {
            print_item(f, md, &hdr, "CUPTI counts not compared:",
                       c->cases[i].id);
            fprintf(f, ": %s\n", c->cases[i].cu_na);
        }
    hdr = false;
    for (int i = 0; i < c->n; i++) {
        const tb_cmp_case *k = &c->cases[i];
        if (!tb_cmp_case_impl_changed(k))
            continue;
        print_item(f, md, &hdr, "kernel changes (the two sides ran "
                   "different code, e.g. another SIMD level: TBENCH_ISA, "
                   "env.cpu.isa_used):", k->id);
        fprintf(f, ": %s -> %s\n", k->old_impl, k->new_impl);
    }
    hdr = false;
    for (int i = 0; i < c->n; i++) {
        const tb_cmp_case *k = &c->cases[i];
        if (k->presence != TB_CMP_BOTH || k->schg == TB_SCHG_SAME)
            continue;
        print_item(f, md, &hdr, "status changes:", k->id);
        const char *msg = tb_res_status_parse(k->new_status) !=
                                  TB_RES_STATUS_OK
                              ? k->new_message
                              : NULL;
        fprintf(f, ": %s -> %s (%s)%s%s\n", k->old_status, k->new_status,
                tb_cmp_case_verdict(k), msg ? ": " : "", msg ? msg : "");
    }
    for (int pass = 0; pass < 2; pass++) {
        tb_cmp_presence want = pass ? TB_CMP_ADDED : TB_CMP_REMOVED;
        char head[64];
        snprintf(head, sizeof head, "%s (only in the %s file%s):",
                 pass ? "added" : "removed", pass ? "new" : "old",
                 (pass ? c->k_new : c->k_old) > 1 ? "s" : "");
        hdr = false;
        for (int i = 0; i < c->n; i++) {
            const tb_cmp_case *k = &c->cases[i];
            if (k->presence != want)
                continue;
            print_item(f, md, &hdr, head, k->id);
            fprintf(f, " (%s)\n", pass ? k->new_status : k->old_status);
        }
    }
}

/* The summary line, the result and the notes on what the verdicts can
 * and cannot tell. */
static void print_summary(FILE *f, const tb_cmp *c, bool md)
{
    int other = c->n_common - c->n_timed;
    fprintf(f, "\n%s%d regressed, %d improved, %d unchanged, %d "
            "inconclusive, %d missing (%d cases compared, %d not timed on "
            "both sides); %d counter regression%s; %d status failure%s; "
            "%d added, %d removed\n",
            md ? "**Summary:** " : "summary: ", c->n_regressed,
            c->n_improved, c->n_unchanged, c->n_inconclusive, c->n_missing,
            c->n_common, other, c->n_ctr_regressed,
            c->n_ctr_regressed == 1 ? "" : "s", c->n_failures,
            c->n_failures == 1 ? "" : "s", c->n_added, c->n_removed);
    if (c->n_unresolved)
        fprintf(f, "%s%d case%s cannot be judged at --max-mde %g%%: the "
                "smallest change %s can resolve is larger (column floor)\n",
                md ? "\n" : "", c->n_unresolved,
                c->n_unresolved == 1 ? "" : "s", 100 * c->opts.max_mde,
                c->n_unresolved == 1 ? "it" : "they");
    if (c->n_missing && c->opts.allow_missing)
        fprintf(f, "%s%d missing case%s allowed (--allow-missing)\n",
                md ? "\n" : "", c->n_missing, c->n_missing == 1 ? "" : "s");
    fprintf(f, "%sresult: %s\n", md ? "\n" : "",
            c->failed ? "FAIL (a regression of a kind in --fail-on, a "
                        "missing case or a case beyond --max-mde)"
                      : "pass");
    if (c->n_inconclusive)
        fprintf(f, "%snote: inconclusive: the data cannot tell a change of "
                "%g%% from none (the 95%% CI spans +-threshold, or the noise "
                "floor is above it); more runs per side, or a quieter "
                "machine, narrow it.\n",
                md ? "\n" : "", 100 * c->opts.threshold);
    if (c->n_inconclusive)
        print_machines(f, c, md);
    if (c->k_old == 1 && c->k_new == 1 && c->n_timed)
        fprintf(f, "%snote: one run per side, so the noise floor holds "
                "only each run's own (within-run) noise.  Medians of "
                "separate runs can differ by much more on a noisy machine "
                "(see env.warnings); compare several runs per side ("
                "'compare OLD... --vs NEW...', or 'run' with several "
                "--baseline) so the floor includes the spread between "
                "runs.\n",
                md ? "\n" : "");
    if (c->k_old + c->k_new > 2 && c->n_timed) {
        const char *last_old = NULL, *first_new = NULL;
        bool dated = true;
        for (int j = 0; j < c->k_old && dated; j++) {
            const char *d = c->old_files[j]->date;
            dated = d != NULL;
            if (d && (!last_old || strcmp(d, last_old) > 0))
                last_old = d;
        }
        for (int j = 0; j < c->k_new && dated; j++) {
            const char *d = c->new_files[j]->date;
            dated = d != NULL;
            if (d && (!first_new || strcmp(d, first_new) < 0))
                first_new = d;
        }
        if (dated && strcmp(last_old, first_new) < 0)
            fprintf(f, "%snote: every old run precedes every new run, so a "
                    "drift of the machine between the two batches (load, "
                    "other guests) looks like a change; where you can, "
                    "alternate old and new runs.\n",
                    md ? "\n" : "");
    }
    for (int side = 0; side < 2; side++) {
        tb_resfile *const *fs = side ? c->new_files : c->old_files;
        for (int j = 0; j < (side ? c->k_new : c->k_old); j++)
            if (!fs[j]->complete)
                fprintf(f, "%snote: %s is an incomplete run (interrupted "
                        "or still running)\n",
                        md ? "\n" : "", fs[j]->path);
    }
    const char *ho = c->old_files[0]->hostname,
               *hn = c->new_files[0]->hostname;
    const char *co = c->old_files[0]->cpu_model,
               *cn = c->new_files[0]->cpu_model;
    if ((ho && hn && strcmp(ho, hn)) || (co && cn && strcmp(co, cn)))
        fprintf(f, "%snote: the runs come from different machines (%s, %s "
                "vs %s, %s)\n",
                md ? "\n" : "", ho ? ho : "?", co ? co : "?", hn ? hn : "?",
                cn ? cn : "?");
}

void tb_cmp_print(FILE *f, const tb_cmp *c, bool md,
                  const char *(*color)(const char *word))
{
    print_table(f, c, md, md ? NULL : color);
    print_counters(f, c, md);
    print_changes(f, c, md);
    print_summary(f, c, md);
}
