/* Shards: see shard.h. */
#include "shard.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/rng.h"

int tb_shard_parse(const char *s, tb_shard *out, char *err, size_t errlen)
{
    long v[2];
    const char *p = s;
    for (int k = 0; k < 2; k++) {
        if (*p < '0' || *p > '9') {
            snprintf(err, errlen, "expected I/N (two whole numbers, e.g. "
                     "2/4), got '%.60s'", s);
            return TB_EINVAL;
        }
        char *end;
        errno = 0;
        v[k] = strtol(p, &end, 10);
        if (errno || v[k] > TB_SHARD_MAX) {
            snprintf(err, errlen, "'%.60s': at most %d shards", s,
                     TB_SHARD_MAX);
            return TB_EINVAL;
        }
        if (*end != (k == 0 ? '/' : '\0')) {
            snprintf(err, errlen, "expected I/N (two whole numbers, e.g. "
                     "2/4), got '%.60s'", s);
            return TB_EINVAL;
        }
        p = end + 1;
    }
    if (v[1] < 1 || v[0] < 1 || v[0] > v[1]) {
        snprintf(err, errlen, "'%.60s': expected 1 <= I <= N (shards are "
                 "numbered from 1)", s);
        return TB_EINVAL;
    }
    out->index = (int)v[0];
    out->count = (int)v[1];
    return 0;
}

/* Nominal rates of the cost model.  They are constants, not this
 * machine's measured peaks: every shard must compute the same costs.
 * Only the ratios between cases matter. */
#define KERNEL_FLOPS 1e10   /* FLOP/s of a timed kernel */
#define KERNEL_BYTES 1e10   /* bytes/s of a timed kernel */
#define REF_FLOPS 1e9       /* FLOP/s of the double reference */
#define REF_BYTES 1e9       /* bytes/s of input generation and the check */
#define REF_FLOPS_MAX 2.5e8 /* bigger matmuls are checked by projection */
#define SETUP_S 0.005       /* a case's fixed cost (worker request, setup) */

/* Estimated wall time of a case:
 *   setup + check + warm-up in every round + sampling, where
 *   one call     = flops / 1e10 + bytes / 1e10 s,
 *   check        = min(flops, 2.5e8) / 1e9 + bytes / 1e9 s (inputs made,
 *                  the reference run in double),
 *   warm-up      = max(warmup.min_time_s, warmup.min_iters * call),
 *   sampling     = max(measure.max_time_s, measure.min_samples * call)
 *                  (the time limit shared by the rounds; a case whose
 *                  minimum samples take longer runs past it).
 * Sampling often stops earlier (the CI target is met); the estimate is
 * the limit, the same for every case of a config, so what tells cases
 * apart is their size through the FLOP and byte models. */
double tb_shard_cost(const tb_case *c)
{
    double flops = isfinite(c->flops) && c->flops > 0 ? c->flops : 0;
    double bytes = isfinite(c->bytes) && c->bytes > 0 ? c->bytes : 0;
    double call = flops / KERNEL_FLOPS + bytes / KERNEL_BYTES;
    double check = fmin(flops, REF_FLOPS_MAX) / REF_FLOPS + bytes / REF_BYTES;
    int rounds = c->measure.rounds > 1 ? c->measure.rounds : 1;
    double warm = fmax(c->warmup.min_time_s, c->warmup.min_iters * call);
    double samp = fmax(c->measure.max_time_s, c->measure.min_samples * call);
    double t = SETUP_S + check + rounds * warm + samp;
    return isfinite(t) && t > 0 ? t : SETUP_S;
}

typedef struct {
    double cost;
    int i;
} costed;

/* Decreasing cost, then plan order. */
static int cmp_costed(const void *pa, const void *pb)
{
    const costed *a = pa, *b = pb;
    if (a->cost != b->cost)
        return a->cost > b->cost ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* A binary min-heap of shards by (load, number): the least loaded
 * shard, lowest number on ties, is at the top. */
typedef struct {
    double load;
    int shard;
} bin;

static bool bin_less(const bin *a, const bin *b)
{
    return a->load < b->load || (a->load == b->load && a->shard < b->shard);
}

static void sift_down(bin *h, int n, int k)
{
    for (;;) {
        int l = 2 * k + 1, r = l + 1, m = k;
        if (l < n && bin_less(&h[l], &h[m]))
            m = l;
        if (r < n && bin_less(&h[r], &h[m]))
            m = r;
        if (m == k)
            return;
        bin t = h[k];
        h[k] = h[m];
        h[m] = t;
        k = m;
    }
}

int tb_shard_assign(const tb_plan *plan, int count, int *shard_of)
{
    costed *v = malloc((size_t)(plan->n ? plan->n : 1) * sizeof *v);
    bin *h = malloc((size_t)count * sizeof *h);
    if (!v || !h) {
        free(v);
        free(h);
        return TB_ENOMEM;
    }
    for (int i = 0; i < plan->n; i++)
        v[i] = (costed){tb_shard_cost(&plan->cases[i]), i};
    qsort(v, (size_t)plan->n, sizeof *v, cmp_costed);
    for (int s = 0; s < count; s++)
        h[s] = (bin){0, s + 1}; /* all zero, in order: already a heap */
    for (int k = 0; k < plan->n; k++) {
        shard_of[v[k].i] = h[0].shard;
        h[0].load += v[k].cost;
        sift_down(h, count, 0);
    }
    free(v);
    free(h);
    return 0;
}

void tb_plan_digest(const tb_plan *plan, char *buf, size_t len)
{
    uint64_t h = TB_FNV1A_BASIS;
    for (int i = 0; i < plan->n; i++)
        h = tb_fnv1a(tb_fnv1a(h, plan->cases[i].id), "\n");
    snprintf(buf, len, "%016" PRIx64, h);
}

int tb_shard_select(tb_plan *plan, const tb_shard *s, cJSON **info)
{
    *info = NULL;
    int *of = malloc((size_t)(plan->n ? plan->n : 1) * sizeof *of);
    if (!of || tb_shard_assign(plan, s->count, of)) {
        free(of);
        return TB_ENOMEM;
    }
    char digest[32];
    tb_plan_digest(plan, digest, sizeof digest);
    int whole = plan->n, k = 0;
    for (int i = 0; i < whole; i++) {
        if (of[i] != s->index)
            continue;
        plan->cases[k] = plan->cases[i];
        plan->cases[k++].plan_index = i;
    }
    plan->n = k;
    free(of);
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddNumberToObject(o, "index", s->index) ||
        !cJSON_AddNumberToObject(o, "count", s->count) ||
        !cJSON_AddNumberToObject(o, "cases", k) ||
        !cJSON_AddNumberToObject(o, "plan_cases", whole) ||
        !cJSON_AddStringToObject(o, "plan_digest", digest) ||
        !cJSON_AddStringToObject(o, "rule", "lpt")) {
        cJSON_Delete(o);
        return TB_ENOMEM;
    }
    *info = o;
    return 0;
}
