/* A result set (rset.h): the files of a report or of a set of charts,
 * their cases, the reference backend and the baseline comparison. */
#include "rset.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/strbuf.h"

/* c from the loader's checked record r: nothing here can fail; the
 * optional display fields (MAD, p5, p95, stop reason) are NAN/NULL when
 * absent. */
static void derive_case(tb_rcase *c, const tb_rescase *r)
{
    memset(c, 0, sizeof *c);
    c->rc = r;
    c->id = r->id;
    c->op = r->op;
    c->dtype = r->dtype;
    c->backend = r->backend;
    c->status = r->status;
    c->message = r->message;
    c->category = r->category ? r->category : "other";
    c->key = r->key;
    c->opp = r->opp;
    c->shapes = r->shapes_text;
    c->variant = r->variant;
    c->items = r->items;
    c->flops = r->flops;
    c->bytes = r->bytes;
    c->reduce_len = r->f.model_reduce_len;
    c->counters = r->has_counters ? r->counters : NULL;
    c->median = c->ci_lo = c->ci_hi = c->ci_rel = NAN;
    c->mad = c->p5 = c->p95 = c->min = NAN;
    c->gb_s = c->gflop_s = c->items_s = NAN;
    c->iters = NAN;
    if (!r->timed)
        return;
    c->ok = true;
    c->median = r->median_ns;
    c->ci_lo = r->ci_low_ns;
    c->ci_hi = r->ci_high_ns;
    c->ci_rel = r->ci_rel;
    c->min = r->min_ns;
    c->n = (int)r->n;
    c->iters = r->iters_per_sample;
    c->samples = r->samples_ns;
    c->gb_s = r->gb_s;
    c->gflop_s = r->gflop_s;
    c->items_s = r->items_s;
    c->mad = r->f.stats_mad_ns;
    c->p5 = r->f.stats_p5_ns;
    c->p95 = r->f.stats_p95_ns;
    c->stop_reason = r->f.stats_stop_reason;
}

/* The slot of key in s->key_slots: the one holding its first case, or the
 * empty one where it goes. */
static size_t key_slot(const tb_rset *s, const char *key)
{
    size_t m = s->n_slots - 1, i = tb_str_hash(key) & m;
    while (s->key_slots[i] >= 0 && strcmp(s->cases[s->key_slots[i]].key, key))
        i = (i + 1) & m;
    return i;
}

/* (Re)build the key index over all s->n cases.  0 or TB_ENOMEM (the old
 * index freed, s->n_slots 0: lookups then find nothing). */
static int index_keys(tb_rset *s)
{
    free(s->key_next);
    free(s->key_slots);
    s->n_slots = 0;
    size_t slots = 16;
    while (slots < 2 * (size_t)s->n)
        slots *= 2;
    s->key_next = malloc((size_t)(s->n ? s->n : 1) * sizeof *s->key_next);
    s->key_slots = malloc(slots * sizeof *s->key_slots);
    int *last = malloc(slots * sizeof *last); /* per slot: its last case */
    if (!s->key_next || !s->key_slots || !last) {
        free(last);
        return TB_ENOMEM;
    }
    s->n_slots = slots;
    memset(s->key_slots, 0xff, slots * sizeof *s->key_slots); /* all -1 */
    for (int i = 0; i < s->n; i++) {
        size_t k = key_slot(s, s->cases[i].key);
        s->key_next[i] = -1;
        if (s->key_slots[k] < 0)
            s->key_slots[k] = i;
        else
            s->key_next[last[k]] = i;
        last[k] = i;
    }
    free(last);
    return 0;
}

int tb_rset_key_first(const tb_rset *s, const char *key)
{
    return s->n_slots ? s->key_slots[key_slot(s, key)] : -1;
}

int tb_rset_load(tb_rset *s, const char *path, tb_role role, char *err,
                 size_t errlen)
{
    if (s->n_docs >= TB_RSET_MAX_DOCS) {
        snprintf(err, errlen, "%s: too many result files (at most %d)", path,
                 TB_RSET_MAX_DOCS);
        return TB_ERANGE;
    }
    tb_resfile *f;
    int rc = tb_resfile_load(path, &f, err, errlen);
    if (rc)
        return rc;
    if (s->n + f->n > s->cap) {
        int cap = s->cap ? s->cap : 64;
        while (cap < s->n + f->n)
            cap *= 2;
        tb_rcase *v = realloc(s->cases, (size_t)cap * sizeof *v);
        if (!v) {
            snprintf(err, errlen, "%s: out of memory", f->path);
            tb_resfile_free(f);
            return TB_ENOMEM;
        }
        s->cases = v;
        s->cap = cap;
    }
    for (int i = 0; i < f->n; i++) {
        tb_rcase *c = &s->cases[s->n + i];
        derive_case(c, &f->cases[i]);
        c->doc = s->n_docs;
        c->role = role;
    }
    s->docs[s->n_docs].file = f;
    s->docs[s->n_docs].role = role;
    s->docs[s->n_docs].first = s->n;
    s->n += f->n;
    s->n_docs++;
    if (index_keys(s)) {
        snprintf(err, errlen, "%s: out of memory", f->path);
        return TB_ENOMEM;
    }
    return 0;
}

void tb_rset_free(tb_rset *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n_docs; i++)
        tb_resfile_free(s->docs[i].file);
    free(s->cases);
    free(s->key_next);
    free(s->key_slots);
    memset(s, 0, sizeof *s);
}

double tb_rcase_counter(const tb_rcase *c, int k)
{
    return c && c->counters ? c->counters[k] : NAN;
}

const char *tb_rcase_threads(const tb_rcase *c)
{
    const char *t = tb_rescase_axis(c->rc, "threads");
    return t ? t : "";
}

const tb_rcase *tb_rset_case_of(const tb_rset *s, int doc,
                                const tb_rescase *r)
{
    const tb_resfile *f = s->docs[doc].file;
    if (!r || r < f->cases || r >= f->cases + f->n)
        return NULL;
    return &s->cases[s->docs[doc].first + (r - f->cases)];
}

int tb_rset_first(const tb_rset *s, tb_role r)
{
    for (int d = 0; d < s->n_docs; d++)
        if (s->docs[d].role == r)
            return d;
    return -1;
}

int tb_rset_compare(const tb_rset *s, double threshold, tb_cmp *out,
                    char *err, size_t errlen)
{
    int main_doc = tb_rset_first(s, TB_ROLE_MAIN);
    int base_doc = tb_rset_first(s, TB_ROLE_BASELINE);
    memset(out, 0, sizeof *out);
    if (main_doc < 0 || base_doc < 0) {
        snprintf(err, errlen, "report: no %s to compare",
                 main_doc < 0 ? "result file" : "baseline");
        return TB_EINVAL;
    }
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    o.threshold = threshold;
    return tb_compare(&s->docs[base_doc].file, 1, &s->docs[main_doc].file,
                      1, &o, out, err, errlen);
}

int tb_rcase_ref_score(const tb_rcase *c)
{
    if (strcmp(c->backend, "cpu") != 0)
        return -1;
    const char *isa = tb_rescase_axis(c->rc, "isa");
    const char *thr = tb_rescase_axis(c->rc, "threads");
    bool scalar = isa && !strcmp(isa, "scalar");
    bool one = !thr || !strcmp(thr, "1");
    return scalar && one ? 3 : scalar ? 2 : one ? 1 : -1;
}

const tb_rcase *tb_rset_reference(const tb_rset *s, const char *key,
                                  unsigned mask)
{
    const tb_rcase *best = NULL;
    int best_score = -1;
    for (int i = tb_rset_key_first(s, key); i >= 0; i = s->key_next[i]) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !(mask & TB_RSET_MASK(c->role)))
            continue;
        int sc = tb_rcase_ref_score(c);
        if (sc > best_score) {
            best = c;
            best_score = sc;
        }
    }
    return best;
}

/* MAD / median of case i: the noisiest's order. */
static double noise(const tb_rset *s, int i)
{
    return s->cases[i].mad / s->cases[i].median;
}

/* Insert case v into the first n (< cap) of top, kept by descending
 * noise, after its equals: the order a stable sort gives.  The new count
 * (at most cap). */
static int keep_top(const tb_rset *s, int *top, int n, int cap, int v)
{
    int b = n;
    while (b > 0 && noise(s, top[b - 1]) < noise(s, v))
        b--;
    if (b >= cap)
        return n;
    if (n == cap)
        n--;
    memmove(top + b + 1, top + b, (size_t)(n - b) * sizeof *top);
    top[b] = v;
    return n + 1;
}

int tb_rset_noisiest(const tb_rset *s, int want, int **out)
{
    int *idx = malloc((size_t)(s->n ? s->n : 1) * sizeof *idx);
    int n = 0;
    *out = NULL;
    if (!idx)
        return -1;
    if (want <= 0)
        want = 8;
    bool unordered = false; /* a NaN (no MAD recorded) */
    for (int i = 0; i < s->n; i++)
        if (s->cases[i].ok && s->cases[i].role == TB_ROLE_MAIN) {
            idx[n++] = i;
            unordered = unordered || isnan(noise(s, i));
        }
    if (!unordered) { /* the first want in O(cases * want) */
        int k = 0;
        for (int a = 0; a < n; a++)
            k = keep_top(s, idx, k, want, idx[a]);
        n = k;
    }
    for (int a = 1; unordered && a < n; a++) { /* the order of a NaN's */
        int v = idx[a], b = a - 1;          /* neighbours as before */
        double kv = noise(s, v);
        while (b >= 0 && noise(s, idx[b]) < kv) {
            idx[b + 1] = idx[b];
            b--;
        }
        idx[b + 1] = v;
    }
    if (n > want)
        n = want;
    if (n == 0) {
        free(idx);
        return 0;
    }
    *out = idx;
    return n;
}
