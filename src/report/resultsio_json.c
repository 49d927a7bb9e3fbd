/* The loader's reading helpers (resultsio_impl.h): its one message
 * format, members read by type, the check for numbers too large for a
 * double, and the arena that holds every typed string and array of a
 * loaded file. */
#include "resultsio_impl.h"

#include <math.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tb_res_fail(char *err, size_t errlen, const char *path, int code,
                const char *fmt, ...)
{
    int k = snprintf(err, errlen, "%s: ", path);
    if (k >= 0 && (size_t)k < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return code;
}

const cJSON *tb_res_nonfinite(const cJSON *v, char *buf, size_t len,
                              size_t at)
{
    if (cJSON_IsNumber(v))
        return isfinite(v->valuedouble) ? NULL : v;
    if (!cJSON_IsArray(v) && !cJSON_IsObject(v))
        return NULL;
    int i = 0;
    const cJSON *ch;
    cJSON_ArrayForEach(ch, v)
    {
        int k = 0;
        if (at < len) {
            if (cJSON_IsObject(v))
                k = snprintf(buf + at, len - at, "%s%.60s", at ? "." : "",
                             ch->string ? ch->string : "");
            else
                k = snprintf(buf + at, len - at, "[%d]", i);
        }
        size_t next = k > 0 ? at + (size_t)k : at;
        const cJSON *bad = tb_res_nonfinite(ch, buf, len,
                                            next < len ? next : len);
        if (bad)
            return bad;
        if (at < len)
            buf[at] = '\0';
        i++;
    }
    return NULL;
}

/* ---- the arena ------------------------------------------------------------ */

#define CHUNK ((size_t)64 << 10)

struct tb_res_arena {
    tb_res_arena *next;
    size_t used, cap;
    alignas(max_align_t) unsigned char data[];
};

void *tb_res_alloc(tb_resfile *f, size_t n)
{
    const size_t al = alignof(max_align_t);
    n = (n + al - 1) / al * al;
    tb_res_arena *a = f->arena;
    if (!a || a->cap - a->used < n) {
        size_t cap = n > CHUNK ? n : CHUNK;
        tb_res_arena *b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->used = 0;
        b->cap = cap;
        b->next = a;
        f->arena = a = b;
    }
    void *p = a->data + a->used;
    a->used += n;
    memset(p, 0, n);
    return p;
}

char *tb_res_strndup(tb_resfile *f, const char *s, size_t n)
{
    char *p = tb_res_alloc(f, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

/* The shared strings: open addressing over their FNV-1a hashes, at
 * most half full. */
struct tb_res_shared {
    size_t cap, n;
    const char **slot;
};

void tb_res_arena_free(tb_resfile *f)
{
    for (tb_res_arena *a = f->arena, *next; a; a = next) {
        next = a->next;
        free(a);
    }
    f->arena = NULL;
    if (f->shared)
        free(f->shared->slot);
    free(f->shared);
    f->shared = NULL;
}

static size_t str_hash(const char *s)
{
    uint64_t h = 14695981039346656037u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return (size_t)h;
}

/* The table twice as large, every string placed again.  false when out
 * of memory (the table is unchanged). */
static bool shared_grow(tb_res_shared *t)
{
    size_t cap = t->cap ? t->cap * 2 : 256;
    const char **slot = calloc(cap, sizeof *slot);
    if (!slot)
        return false;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slot[i])
            continue;
        size_t k = str_hash(t->slot[i]) & (cap - 1);
        while (slot[k])
            k = (k + 1) & (cap - 1);
        slot[k] = t->slot[i];
    }
    free(t->slot);
    t->slot = slot;
    t->cap = cap;
    return true;
}

bool tb_res_share(tb_resfile *f, const char **s)
{
    if (!*s)
        return true;
    if (!f->shared && !(f->shared = calloc(1, sizeof *f->shared)))
        return false;
    tb_res_shared *t = f->shared;
    if (2 * (t->n + 1) > t->cap && !shared_grow(t))
        return false;
    size_t k = str_hash(*s) & (t->cap - 1);
    for (; t->slot[k]; k = (k + 1) & (t->cap - 1))
        if (!strcmp(t->slot[k], *s)) {
            *s = t->slot[k];
            return true;
        }
    char *copy = tb_res_strndup(f, *s, strlen(*s));
    if (!copy)
        return false;
    t->slot[k] = copy;
    t->n++;
    *s = copy;
    return true;
}

/* ---- members --------------------------------------------------------------- */

const char *tb_res_str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

double tb_res_num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble
                                                         : NAN;
}

const cJSON *tb_res_obj(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsObject(v) ? v : NULL;
}

bool tb_res_strings(tb_resfile *f, const cJSON *a, const char *const **out,
                    int *n, int *items)
{
    int k = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
    const char **v = k ? tb_res_alloc(f, (size_t)k * sizeof *v) : NULL;
    *out = v;
    *n = 0;
    if (items)
        *items = k;
    if (k && !v)
        return false;
    const cJSON *e;
    cJSON_ArrayForEach(e, (cJSON_IsArray(a) ? a : NULL))
        if (cJSON_IsString(e))
            v[(*n)++] = e->valuestring;
    return true;
}
