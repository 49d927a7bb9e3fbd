/* Merging shard result files: see merge.h. */
#include "merge.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/rng.h"

/* err = printf(fmt, ...).  Returns TB_EINVAL. */
static int refuse(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return TB_EINVAL;
}

/* One shard file, its "shard" object read and checked. */
typedef struct {
    const tb_resfile *f;
    int index, count, cases, plan_cases;
    const char *digest;
    const char *host, *cpu; /* or NULL */
} shard;

/* v as a whole number in [lo, hi], or -1. */
static int whole(double v, int lo, int hi)
{
    return isfinite(v) && v == floor(v) && v >= lo && v <= hi ? (int)v : -1;
}

static int read_shard(const tb_resfile *f, shard *s, char *err,
                      size_t errlen)
{
    s->f = f;
    if (!f->has_shard)
        return refuse(err, errlen, "%s: not a shard's result file (no "
                      "\"shard\" object: it was not made by run --shard "
                      "I/N)", f->path);
    s->count = whole(f->shard_count, 1, 100000);
    s->index = whole(f->shard_index, 1, s->count < 1 ? 1 : s->count);
    s->cases = whole(f->shard_cases, 0, INT32_MAX);
    s->plan_cases = whole(f->shard_plan_cases, 1, INT32_MAX);
    s->digest = f->shard_plan_digest;
    if (s->count < 1 || s->index < 1 || s->cases < 0 || s->plan_cases < 1 ||
        !s->digest)
        return refuse(err, errlen, "%s: \"shard\": expected whole numbers "
                      "1 <= index <= count, cases >= 0, plan_cases >= 1 and "
                      "a plan_digest string", f->path);
    s->host = f->hostname;
    s->cpu = f->cpu_model;
    return 0;
}

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* FNV-1a 64 of s, for messages about config texts. */
static uint64_t fnv(const char *s)
{
    return tb_fnv1a(TB_FNV1A_BASIS, s);
}

/* Do the effective settings objects a and b (warmup or measure: the
 * config's with run's command-line overrides) agree?  Both absent
 * agree (files from before they were recorded). */
static bool same_settings(const cJSON *a, const cJSON *b)
{
    return (!a && !b) || (a && b && cJSON_Compare(a, b, true));
}

/* The same seed: two numbers equal to a double's precision (a seed is
 * a JSON integer, exact up to 2^64-1, which a double rounds). */
static bool same_seed(double a, double b)
{
    return isfinite(a) && isfinite(b) &&
           fabs(a - b) <= fmax(fabs(a), fabs(b)) * DBL_EPSILON;
}

/* Do the two files' "config" arrays hold the same configs (name, seed
 * and text; the path may differ between machines)?  On a difference,
 * describes it in why. */
static bool same_config(const tb_resfile *a, const tb_resfile *b,
                        char *why, size_t len)
{
    if (!a->has_config || !b->has_config || a->n_config != b->n_config) {
        snprintf(why, len, "%d config file(s) against %d", b->n_config,
                 a->n_config);
        return false;
    }
    for (int i = 0; i < a->n_config; i++) {
        const tb_res_config *x = &a->config[i], *y = &b->config[i];
        if (!x->text || !y->text || strcmp(x->text, y->text) ||
            !same_str(x->name, y->name) || !same_seed(x->seed, y->seed)) {
            snprintf(why, len, "config[%d] text digest %016" PRIx64
                     " against %016" PRIx64 "%s", i, fnv(y->text),
                     fnv(x->text),
                     same_seed(x->seed, y->seed) ? "" : ", another seed");
            return false;
        }
        bool w = same_settings(x->warmup, y->warmup);
        if (!w || !same_settings(x->measure, y->measure)) {
            snprintf(why, len, "config[%d].%s differs: another --%s "
                     "override?", i, w ? "measure" : "warmup",
                     w ? "max-time, --rounds, --min-samples or other "
                         "measure"
                       : "warmup-iters or other warm-up");
            return false;
        }
    }
    return true;
}

static const char *orq(const char *s)
{
    return s ? s : "(unknown)";
}

/* The checks between shard s and the first shard s0. */
static int check_pair(const shard *s0, const shard *s, bool mixed_ok,
                      char *err, size_t errlen)
{
    const char *p0 = s0->f->path, *p = s->f->path;
    char why[128];
    if (s->count != s0->count)
        return refuse(err, errlen, "%s: shard %d/%d, but %s is shard %d/%d: "
                      "not shards of one run", p, s->index, s->count, p0,
                      s0->index, s0->count);
    if (!same_config(s0->f, s->f, why, sizeof why))
        return refuse(err, errlen, "%s: shard %d/%d ran another config "
                      "than %s (%s)", p, s->index, s->count, p0, why);
    if (!same_str(s->f->git_commit, s0->f->git_commit))
        return refuse(err, errlen, "%s: shard %d/%d ran tbench commit %s, "
                      "%s ran %s", p, s->index, s->count,
                      orq(s->f->git_commit), p0, orq(s0->f->git_commit));
    const char *bd = tb_resfile_build_diff(s0->f, s->f);
    if (bd)
        return refuse(err, errlen, "%s: shard %d/%d ran another build of "
                      "tbench than %s (env.build.%s differs)", p, s->index,
                      s->count, p0, bd);
    if (s->plan_cases != s0->plan_cases || strcmp(s->digest, s0->digest))
        return refuse(err, errlen, "%s: shard %d/%d planned other cases "
                      "than %s (%d cases, digest %s, against %d, %s): "
                      "another --filter, --exclude or --backend, or a "
                      "machine that offers other axis values?", p, s->index,
                      s->count, p0, s->plan_cases, s->digest, s0->plan_cases,
                      s0->digest);
    bool same_host = same_str(s->host, s0->host) && same_str(s->cpu, s0->cpu);
    if (!same_host && !mixed_ok)
        return refuse(err, errlen, "%s: shard %d/%d ran on host %s (%s), "
                      "%s on %s (%s): mixed machines; add "
                      "--allow-mixed-hosts to merge them", p, s->index,
                      s->count, orq(s->host), orq(s->cpu), p0, orq(s0->host),
                      orq(s0->cpu));
    return 0;
}

/* A shard on its own: it finished, and every case of its slice is
 * there. */
static int check_finished(const shard *s, char *err, size_t errlen)
{
    const tb_resfile *f = s->f;
    if (!f->complete)
        return refuse(err, errlen, "%s: shard %d/%d did not finish "
                      "(\"complete\" is false: interrupted, failed or still "
                      "running)", f->path, s->index, s->count);
    if (f->n != s->cases)
        return refuse(err, errlen, "%s: shard %d/%d has %d case records, "
                      "its plan gave it %d", f->path, s->index, s->count,
                      f->n, s->cases);
    return 0;
}

/* Is c's id the one its fields spell (KEY/VARIANT, resultsio.h)? */
static bool id_fits(const tb_rescase *c)
{
    size_t k = strlen(c->key);
    return !strncmp(c->id, c->key, k) && c->id[k] == '/' &&
           !strcmp(c->id + k + 1, c->variant);
}

/* Every case record of shard s is tagged with this shard and a
 * plan_index in range, not taken within the shard: slot[plan_index] =
 * the record's index (slot: plan_cases entries, -1 when free). */
static int check_tags(const shard *s, int *slot, char *err, size_t errlen)
{
    const tb_resfile *f = s->f;
    for (int i = 0; i < f->n; i++) {
        const tb_res_fields *t = &f->cases[i].f;
        int pi = whole(t->shard_plan_index, 0, s->plan_cases - 1);
        if (whole(t->shard_index, 1, 100000) != s->index ||
            whole(t->shard_count, 1, 100000) != s->count || pi < 0)
            return refuse(err, errlen, "%s: cases[%d] (%s): \"shard\": "
                          "expected index %d, count %d and a plan_index "
                          "below %d", f->path, i, f->cases[i].id, s->index,
                          s->count, s->plan_cases);
        if (slot[pi] >= 0)
            return refuse(err, errlen, "%s: cases[%d] (%s): plan_index %d "
                          "is taken by another case", f->path, i,
                          f->cases[i].id, pi);
        if (!id_fits(&f->cases[i]))
            return refuse(err, errlen, "%s: cases[%d] (%s): the id does not "
                          "spell the record's op, params, shapes, dtype and "
                          "backend (%s/%s)", f->path, i, f->cases[i].id,
                          f->cases[i].key, f->cases[i].variant);
        slot[pi] = i;
    }
    return 0;
}

typedef struct {
    const char *id;
    int shard; /* index into the shard array */
} idref;

static int cmp_idref(const void *pa, const void *pb)
{
    const idref *a = pa, *b = pb;
    int d = strcmp(a->id, b->id);
    return d ? d : (a->shard > b->shard) - (a->shard < b->shard);
}

/* A case id recorded by two shards. */
static int check_ids(const shard *sh, int n, char *err, size_t errlen)
{
    size_t total = 0, m = 0;
    for (int k = 0; k < n; k++)
        total += (size_t)sh[k].f->n;
    idref *r = malloc((total ? total : 1) * sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return TB_ENOMEM;
    }
    for (int k = 0; k < n; k++)
        for (int i = 0; i < sh[k].f->n; i++)
            r[m++] = (idref){sh[k].f->cases[i].id, k};
    qsort(r, total, sizeof *r, cmp_idref);
    int rc = 0;
    for (size_t i = 1; i < total && !rc; i++)
        if (!strcmp(r[i - 1].id, r[i].id)) {
            const shard *a = &sh[r[i - 1].shard], *b = &sh[r[i].shard];
            rc = refuse(err, errlen, "case '%s' is recorded twice: by "
                        "shard %d/%d (%s) and shard %d/%d (%s)", r[i].id,
                        a->index, a->count, a->f->path, b->index, b->count,
                        b->f->path);
        }
    free(r);
    return rc;
}

/* The records, in plan order, are the plan the shards claim: the
 * digest of their ids (tb_plan_digest's rule, harness/shard.h) is the
 * shards' plan_digest.  A record replaced by a case of another config,
 * or an id edited, changes it. */
static int check_digest(const shard *sh, int total, const int *owner,
                        const int *slot, char *err, size_t errlen)
{
    uint64_t h = TB_FNV1A_BASIS;
    for (int i = 0; i < total; i++)
        h = tb_fnv1a(tb_fnv1a(h, sh[owner[i]].f->cases[slot[i]].id), "\n");
    char got[17];
    snprintf(got, sizeof got, "%016" PRIx64, h);
    if (!strcmp(got, sh[0].digest))
        return 0;
    return refuse(err, errlen, "the shards' case ids in plan order have "
                  "digest %s, their plan_digest is %s: a record is not one "
                  "of the plan's cases (an id edited, or a case of another "
                  "run)", got, sh[0].digest);
}

static int cmp_shard(const void *pa, const void *pb)
{
    const shard *a = pa, *b = pb;
    return (a->index > b->index) - (a->index < b->index);
}

/* The "merge" object (docs/FORMAT.md, "merge"): each shard's index,
 * count, file, host, CPU, date and cases, the plan's cases and digest,
 * and whether the hosts were mixed.  NULL when out of memory. */
static cJSON *merge_json(const shard *sh, int n, int total, bool mixed)
{
    cJSON *mg = cJSON_CreateObject();
    cJSON *list = cJSON_AddArrayToObject(mg, TB_RES_KEY(shards));
    bool ok = mg && list;
    for (int k = 0; ok && k < n; k++) {
        const tb_resfile *f = sh[k].f;
        cJSON *o = cJSON_CreateObject();
        ok = o && cJSON_AddItemToArray(list, o) &&
             cJSON_AddNumberToObject(o, TB_RES_KEY(index), sh[k].index) &&
             cJSON_AddNumberToObject(o, TB_RES_KEY(count), sh[k].count) &&
             cJSON_AddStringToObject(o, TB_RES_KEY(file), f->path) &&
             cJSON_AddItemToObject(o, TB_RES_KEY(host),
                                   tb_cjson_str_or_null(f->hostname)) &&
             cJSON_AddItemToObject(o, TB_RES_KEY(cpu_model),
                                   tb_cjson_str_or_null(f->cpu_model)) &&
             cJSON_AddItemToObject(o, TB_RES_KEY(date),
                                   tb_cjson_str_or_null(f->date)) &&
             cJSON_AddNumberToObject(o, TB_RES_KEY(cases), f->n);
    }
    ok = ok && cJSON_AddNumberToObject(mg, TB_RES_KEY(plan_cases), total) &&
         cJSON_AddStringToObject(mg, TB_RES_KEY(plan_digest),
                                 sh[0].digest) &&
         cJSON_AddBoolToObject(mg, TB_RES_KEY(mixed_hosts), mixed);
    if (!ok) {
        cJSON_Delete(mg);
        return NULL;
    }
    return mg;
}

/* The merged document's head (merge.h): the first shard's, "cases"
 * empty, the summary counted from the records (never copied from the
 * shards), no "shard", the peaks only when every shard had the same,
 * and "merge"; m->file and m->cases the records in plan order. */
static int build(const shard *sh, int n, int total, const int *owner,
                 const int *slot, bool mixed, tb_merged *m)
{
    cJSON *doc = cJSON_Duplicate(sh[0].f->doc, 1);
    cJSON *cases = cJSON_CreateArray();
    cJSON *mg = merge_json(sh, n, total, mixed);
    m->file = malloc((size_t)(total ? total : 1) * sizeof *m->file);
    m->cases = malloc((size_t)(total ? total : 1) * sizeof *m->cases);
    bool ok = doc && cases && mg && m->file && m->cases;
    int count[TB_RES_NSTATUSES] = {0};
    for (int i = 0; ok && i < total; i++) {
        m->file[i] = sh[owner[i]].f;
        m->cases[i] = &sh[owner[i]].f->cases[slot[i]];
        count[m->cases[i]->st]++;
    }
    m->n = total;
    cJSON *sum = ok ? tb_res_summary_counts(total, count) : NULL;
    ok = ok && sum;
    /* The peaks describe one machine: kept only when every shard had the
     * same (the rooflines in the records are each shard's own). */
    bool same_peaks = true;
    for (int k = 1; k < n; k++)
        same_peaks = same_peaks && tb_resfile_same_peaks(sh[0].f, sh[k].f);
    if (ok) {
        cJSON_DeleteItemFromObjectCaseSensitive(doc, TB_RES_KEY(shard));
        if (!same_peaks)
            cJSON_ReplaceItemInObjectCaseSensitive(doc, TB_RES_KEY(peaks),
                                                   cJSON_CreateNull());
        cJSON_ReplaceItemInObjectCaseSensitive(doc, TB_RES_KEY(complete),
                                               cJSON_CreateTrue());
        ok = cJSON_ReplaceItemInObjectCaseSensitive(doc, TB_RES_KEY(summary),
                                                    sum);
        if (ok)
            sum = NULL;
        ok = ok && cJSON_ReplaceItemInObjectCaseSensitive(
                       doc, TB_RES_KEY(cases), cases);
        if (ok)
            cases = NULL;
        ok = ok && cJSON_AddItemToObject(doc, TB_RES_KEY(merge), mg);
        if (ok)
            mg = NULL;
    }
    cJSON_Delete(cases);
    cJSON_Delete(sum);
    cJSON_Delete(mg);
    m->doc = doc;
    if (!ok) {
        tb_merged_free(m);
        return TB_ENOMEM;
    }
    return 0;
}

void tb_merged_free(tb_merged *m)
{
    if (!m)
        return;
    cJSON_Delete(m->doc);
    free(m->file);
    free(m->cases);
    *m = (tb_merged){0};
}

int tb_merge(tb_resfile *const *f, int n, const tb_merge_opts *o,
             tb_merged *out, char *err, size_t errlen)
{
    *out = (tb_merged){0};
    if (n < 1)
        return refuse(err, errlen, "no shard file given");
    shard *sh = calloc((size_t)n, sizeof *sh);
    int *slot = NULL, *owner = NULL;
    int rc = TB_ENOMEM;
    if (!sh)
        goto oom;
    for (int k = 0; k < n; k++)
        if ((rc = read_shard(f[k], &sh[k], err, errlen)))
            goto out;
    qsort(sh, (size_t)n, sizeof *sh, cmp_shard);
    bool mixed = false;
    for (int k = 1; k < n; k++) {
        if (sh[k].index == sh[k - 1].index &&
            sh[k].count == sh[k - 1].count) {
            rc = refuse(err, errlen, "shard %d/%d given twice: %s and %s",
                        sh[k].index, sh[k].count, sh[k - 1].f->path,
                        sh[k].f->path);
            goto out;
        }
        if ((rc = check_pair(&sh[0], &sh[k], o && o->allow_mixed_hosts, err,
                             errlen)))
            goto out;
        mixed = mixed || !same_str(sh[k].host, sh[0].host) ||
                !same_str(sh[k].cpu, sh[0].cpu);
    }
    int count = sh[0].count, total = sh[0].plan_cases;
    long long sum = 0;
    for (int k = 0; k < n; k++) {
        if ((rc = check_finished(&sh[k], err, errlen)))
            goto out;
        sum += sh[k].cases;
    }
    if (n != count) {
        /* name the first missing shard (the array is sorted by index) */
        int want = 1;
        for (int k = 0; k < n && sh[k].index == want; k++)
            want++;
        rc = refuse(err, errlen, "shard %d/%d is missing: %d of the %d "
                    "shards given (each shard's result file, or its run "
                    "folder, must be named)", want, count, n, count);
        goto out;
    }
    if (sum != total) {
        rc = refuse(err, errlen, "the %d shards hold %lld cases, their plan "
                    "has %d: the plan was split differently", n, sum, total);
        goto out;
    }
    slot = malloc((size_t)total * sizeof *slot);
    owner = malloc((size_t)total * sizeof *owner);
    if (!slot || !owner)
        goto oom;
    for (int i = 0; i < total; i++)
        slot[i] = owner[i] = -1;
    int *tmp = malloc((size_t)total * sizeof *tmp);
    if (!tmp)
        goto oom;
    for (int k = 0; k < n && !rc; k++) {
        for (int i = 0; i < total; i++)
            tmp[i] = -1;
        rc = check_tags(&sh[k], tmp, err, errlen);
        for (int i = 0; i < total && !rc; i++) {
            if (tmp[i] < 0)
                continue;
            if (owner[i] >= 0)
                rc = refuse(err, errlen, "%s and %s both hold the case of "
                            "plan_index %d", sh[owner[i]].f->path,
                            sh[k].f->path, i);
            owner[i] = k;
            slot[i] = tmp[i];
        }
    }
    free(tmp);
    if (rc || (rc = check_ids(sh, n, err, errlen)))
        goto out;
    for (int i = 0; i < total; i++)
        if (owner[i] < 0) {
            rc = refuse(err, errlen, "the shards hold no case of plan_index "
                        "%d of %d: the plan was split differently", i,
                        total);
            goto out;
        }
    if ((rc = check_digest(sh, total, owner, slot, err, errlen)))
        goto out;
    if (build(sh, n, total, owner, slot, mixed, out))
        goto oom;
    rc = 0;
    goto out;
oom:
    rc = TB_ENOMEM;
    snprintf(err, errlen, "out of memory");
out:
    free(sh);
    free(slot);
    free(owner);
    return rc;
}

int tb_merge_write(const tb_merged *m,
                   int (*put)(void *ctx, const void *p, size_t n),
                   void *ctx, char *err, size_t errlen)
{
    static const char mark[] = "\n\t\"cases\":\t[]";
    char *head = cJSON_Print(m->doc);
    const char *at = head ? strstr(head, mark) : NULL;
    if (!at) {
        free(head);
        snprintf(err, errlen, "out of memory");
        return TB_ENOMEM;
    }
    /* the head up to "cases":\t[, the records with ", " between, then
     * "]" and the rest: cJSON_Print's bytes of the whole document */
    size_t open = (size_t)(at - head) + sizeof mark - 2;
    int rc = put(ctx, head, open);
    for (int i = 0; i < m->n && !rc; i++) {
        cJSON *r = tb_rescase_record(m->file[i], m->cases[i], err, errlen);
        if (!r)
            rc = TB_EIO;
        if (!rc && i)
            rc = put(ctx, ", ", 2);
        /* a record is two levels deep: the document, "cases" */
        if (!rc && (rc = tb_res_put_nested(r, 2, put, ctx)) == TB_ENOMEM)
            snprintf(err, errlen, "out of memory");
        cJSON_Delete(r);
    }
    if (!rc)
        rc = put(ctx, head + open, strlen(head + open));
    free(head);
    return rc;
}
