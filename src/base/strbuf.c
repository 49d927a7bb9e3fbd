/* The growing text buffer (strbuf.h). */
#include "strbuf.h"

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Room for `more` bytes and a NUL after the text; false on failure. */
static bool reserve(tb_strbuf *b, size_t more)
{
    if (b->oom)
        return false;
    if (b->n + more + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + more + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void tb_strbuf_vadd(tb_strbuf *b, const char *fmt, va_list ap)
{
    if (b->oom)
        return;
    va_list ap2;
    va_copy(ap2, ap);
    int k = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (k < 0) {
        b->oom = true;
        return;
    }
    if (!reserve(b, (size_t)k))
        return;
    vsnprintf(b->p + b->n, (size_t)k + 1, fmt, ap);
    b->n += (size_t)k;
}

void tb_strbuf_add(tb_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tb_strbuf_vadd(b, fmt, ap);
    va_end(ap);
}

void tb_strbuf_put(tb_strbuf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

char *tb_strbuf_take(tb_strbuf *b)
{
    if (!b->oom && !b->p)
        reserve(b, 0);
    if (b->oom) {
        tb_strbuf_free(b);
        return NULL;
    }
    b->p[b->n] = '\0';
    char *p = b->p;
    *b = (tb_strbuf){0};
    return p;
}

void tb_strbuf_free(tb_strbuf *b)
{
    free(b->p);
    *b = (tb_strbuf){0};
}

int tb_word_index(const char *words, const char *s, size_t n)
{
    int i = 0;
    for (const char *w = words; *w; i++) {
        size_t l = strcspn(w, " ");
        if (n && l == n && !memcmp(w, s, n))
            return i;
        w += l;
        w += *w == ' ';
    }
    return -1;
}

size_t tb_str_hash(const char *s)
{
    uint64_t h = 14695981039346656037ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)h;
}
