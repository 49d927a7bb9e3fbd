/* JSON with comments, with positions (jsonc.h).
 *
 * Pipeline: validate UTF-8, blank out comments (every comment byte becomes
 * a space, newlines are kept, so offsets and line:column are those of the
 * original text), parse with cJSON, then walk the text once alongside the
 * cJSON tree to learn where every key and value starts (cJSON keeps no
 * positions). */
#include "jsonc.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

#if defined(__GNUC__)
#define JSONC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define JSONC_PRINTF(f, a)
#endif

/* ---------------------------------------------------------------------
 * Positions
 * ------------------------------------------------------------------- */

typedef struct walker {
    const unsigned char *s;    /* comment-stripped text (what cJSON saw) */
    const unsigned char *orig; /* original text, for column counting */
    size_t len, i;
    int line, col;
    tb_jsonc_pos *e;
    size_t n, cap;
    bool ok;
    size_t bad_num; /* offset of the first non-RFC 8259 number, or len */
    size_t bad_nul; /* offset of the first string with \u0000, or len */
} walker;

/* Columns count code points, not bytes, so they match what an editor
 * shows for non-ASCII text; a tab counts as one column. */
static void w_adv(walker *w)
{
    unsigned char c = w->orig[w->i++];
    if (c == '\n') {
        w->line++;
        w->col = 1;
    } else if ((c & 0xC0) != 0x80) {
        w->col++;
    }
}

/* cJSON treats every byte <= 32 as white space; so must we. */
static void w_ws(walker *w)
{
    while (w->i < w->len && w->s[w->i] <= 32)
        w_adv(w);
}

static int w_peek(const walker *w)
{
    return w->i < w->len ? w->s[w->i] : -1;
}

/* Same scan as cJSON's parse_string: a backslash skips the next byte.
 * cJSON decodes \u0000 into a NUL that silently ends the C string
 * ("a\u0000b" would be read as "a"): note where the first such string
 * starts so that the parse refuses it. */
static void w_string(walker *w)
{
    size_t start = w->i;
    w_adv(w); /* opening quote */
    while (w->i < w->len && w->s[w->i] != '"') {
        if (w->s[w->i] == '\\' && w->i + 1 < w->len) {
            if (w->s[w->i + 1] == 'u' && w->i + 5 < w->len &&
                memcmp(w->s + w->i + 2, "0000", 4) == 0 &&
                w->bad_nul == w->len)
                w->bad_nul = start;
            w_adv(w);
        }
        w_adv(w);
    }
    if (w->i < w->len)
        w_adv(w);
}

/* Is s[0..n) a number as RFC 8259 writes it:
 * -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?  cJSON hands anything
 * strtod takes to it, so "01", "-01" and "1." would pass unnoticed. */
static bool rfc_number(const unsigned char *s, size_t n)
{
    size_t i = 0;
    if (i < n && s[i] == '-')
        i++;
    if (i >= n || s[i] < '0' || s[i] > '9')
        return false;
    if (s[i] == '0') {
        i++;
    } else {
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < n && s[i] == '.') {
        size_t d = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == d)
            return false;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        size_t d = i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == d)
            return false;
    }
    return i == n;
}

static void w_add(walker *w, const cJSON *node, int kl, int kc)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 64;
        tb_jsonc_pos *e = realloc(w->e, cap * sizeof(*e));
        if (!e) {
            w->ok = false;
            return;
        }
        w->e = e;
        w->cap = cap;
    }
    w->e[w->n++] = (tb_jsonc_pos){node, w->i, kl, kc, w->line, w->col};
}

/* Walks one value of the text that cJSON has already accepted, in step
 * with `node`.  Any mismatch (which would be a bug) just stops recording:
 * messages then lack a position but are otherwise unaffected.  Recursion
 * depth is bounded by cJSON's nesting limit. */
static void w_value(walker *w, const cJSON *node, int kl, int kc)
{
    w_ws(w);
    if (!w->ok || w->i >= w->len) {
        w->ok = false;
        return;
    }
    w_add(w, node, kl, kc);
    int c = w_peek(w);
    if (c == '{' || c == '[') {
        bool obj = c == '{';
        if (obj != (bool)cJSON_IsObject(node) ||
            !obj != (bool)cJSON_IsArray(node)) {
            w->ok = false;
            return;
        }
        w_adv(w);
        for (const cJSON *ch = node->child; ch && w->ok; ch = ch->next) {
            w_ws(w);
            if (ch != node->child) {
                if (w_peek(w) != ',') {
                    w->ok = false;
                    return;
                }
                w_adv(w);
                w_ws(w);
            }
            int l = 0, k = 0;
            if (obj) {
                if (w_peek(w) != '"') {
                    w->ok = false;
                    return;
                }
                l = w->line;
                k = w->col;
                w_string(w);
                w_ws(w);
                if (w_peek(w) != ':') {
                    w->ok = false;
                    return;
                }
                w_adv(w);
            }
            w_value(w, ch, l, k);
        }
        w_ws(w);
        if (w_peek(w) != (obj ? '}' : ']')) {
            w->ok = false;
            return;
        }
        w_adv(w);
    } else if (c == '"') {
        w_string(w);
    } else {
        size_t start = w->i;
        while (w->i < w->len && w->s[w->i] > 32 && w->s[w->i] != ',' &&
               w->s[w->i] != ']' && w->s[w->i] != '}')
            w_adv(w);
        if (cJSON_IsNumber(node) && w->bad_num == w->len &&
            !rfc_number(w->s + start, w->i - start))
            w->bad_num = start;
    }
}

static int pos_cmp(const void *a, const void *b)
{
    const tb_jsonc_pos *x = a, *y = b;
    if ((uintptr_t)x->node != (uintptr_t)y->node)
        return (uintptr_t)x->node < (uintptr_t)y->node ? -1 : 1;
    return 0;
}

/* Line and column (1-based) of byte offset off. */
static void line_col(const char *s, size_t off, int *line, int *col)
{
    int l = 1, c = 1;
    size_t i = 0;
    if (off >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
        i = 3; /* a byte order mark takes no column */
    for (; i < off; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '\n') {
            l++;
            c = 1;
        } else if ((ch & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *col = c;
}

/* ---------------------------------------------------------------------
 * Text level: UTF-8, comments
 * ------------------------------------------------------------------- */

size_t tb_utf8_check(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        size_t n;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c == 0)
            return i;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            n = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 2;
            if (c == 0xE0)
                lo = 0xA0; /* overlong */
            if (c == 0xED)
                hi = 0x9F; /* surrogates */
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 3;
            if (c == 0xF0)
                lo = 0x90;
            if (c == 0xF4)
                hi = 0x8F;
        } else {
            return i;
        }
        if (i + n >= len)
            return i;
        if (s[i + 1] < lo || s[i + 1] > hi)
            return i;
        for (size_t k = 2; k <= n; k++)
            if (s[i + k] < 0x80 || s[i + k] > 0xBF)
                return i;
        i += n + 1;
    }
    return len;
}

/* Blanks out // and block comments in place, keeping newlines, and never
 * inside strings.  Returns false with *bad = offset of an unterminated
 * block comment. */
static bool strip_comments(char *s, size_t len, size_t *bad)
{
    size_t i = 0;
    while (i < len) {
        if (s[i] == '"') {
            i++;
            while (i < len && s[i] != '"') {
                if (s[i] == '\\' && i + 1 < len)
                    i++;
                i++;
            }
            i++;
        } else if (s[i] == '/' && i + 1 < len && s[i + 1] == '/') {
            while (i < len && s[i] != '\n')
                s[i++] = ' ';
        } else if (s[i] == '/' && i + 1 < len && s[i + 1] == '*') {
            size_t start = i;
            s[i] = s[i + 1] = ' ';
            i += 2;
            while (i < len && !(s[i] == '*' && i + 1 < len && s[i + 1] == '/')) {
                if (s[i] != '\n')
                    s[i] = ' ';
                i++;
            }
            if (i >= len) {
                *bad = start;
                return false;
            }
            s[i] = s[i + 1] = ' ';
            i += 2;
        } else {
            i++;
        }
    }
    return true;
}

/* ---------------------------------------------------------------------
 * The document
 * ------------------------------------------------------------------- */

JSONC_PRINTF(5, 6)
static int fail(tb_jsonc_error *e, int code, int line, int col,
                const char *fmt, ...)
{
    e->line = line;
    e->col = col;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return code;
}

/* The syntax error at offset off of the stripped text s (orig: the
 * original text, both len bytes). */
static int syntax_error(const char *orig, const char *s, size_t len,
                        size_t off, tb_jsonc_error *e)
{
    int line, col;
    if (off > len)
        off = len;
    line_col(orig, off, &line, &col);
    size_t rest = off;
    while (rest < len && (unsigned char)s[rest] <= 32)
        rest++;
    if (rest >= len)
        return fail(e, TB_EPARSE, line, col,
                    "syntax error: unexpected end of input");
    char near[24];
    size_t n = 0;
    while (n < 20 && off + n < len && orig[off + n] != '\n' &&
           orig[off + n] != '\r')
        n++;
    /* Do not cut a UTF-8 sequence in two. */
    while (n > 0 && off + n < len &&
           ((unsigned char)orig[off + n] & 0xC0) == 0x80)
        n--;
    memcpy(near, orig + off, n);
    near[n] = '\0';
    return fail(e, TB_EPARSE, line, col, "syntax error near '%s'", near);
}

/* What RFC 8259 refuses and cJSON took (walker.bad_num, .bad_nul). */
static int strict_error(const walker *w, const char *orig, const char *s,
                        size_t len, tb_jsonc_error *e)
{
    bool num = w->bad_num < w->bad_nul;
    size_t at = num ? w->bad_num : w->bad_nul, n = 0;
    int line, col;
    char tok[24];
    while (n < 20 && at + n < len && (unsigned char)s[at + n] > 32 &&
           !strchr(",]}", s[at + n]))
        n++;
    memcpy(tok, s + at, n);
    tok[n] = '\0';
    line_col(orig, at, &line, &col);
    if (num)
        return fail(e, TB_EPARSE, line, col,
                    "syntax error: '%s' is not a JSON number (RFC 8259: "
                    "no leading zeros, no '+', digits on both sides of "
                    "'.')", tok);
    return fail(e, TB_EPARSE, line, col,
                "a string contains \\u0000 (a NUL character), which no "
                "name or value may contain");
}

/* The text level: UTF-8, comments, something there.  0 or TB_EPARSE. */
static int check_text(const char *text, char *s, size_t len,
                      const char *what, tb_jsonc_error *e)
{
    int line, col;
    size_t bad = tb_utf8_check(text, len);
    if (bad < len) {
        line_col(text, bad, &line, &col);
        return fail(e, TB_EPARSE, line, col,
                    text[bad] ? "invalid UTF-8 (byte 0x%02x)"
                              : "NUL byte (0x%02x) in the text",
                    (unsigned char)text[bad]);
    }
    if (!strip_comments(s, len, &bad)) {
        line_col(text, bad, &line, &col);
        return fail(e, TB_EPARSE, line, col,
                    "syntax error: unterminated /* comment");
    }
    size_t first = 0;
    while (first < len && (unsigned char)s[first] <= 32)
        first++;
    if (first == len)
        return fail(e, TB_EPARSE, 0, 0, "empty %s (expected a JSON object)",
                    what);
    return 0;
}

int tb_jsonc_parse(const char *text, size_t len, const char *what,
                   tb_jsonc *doc, tb_jsonc_error *e)
{
    memset(doc, 0, sizeof *doc);
    memset(e, 0, sizeof *e);
    char *s = malloc(len + 1);
    if (!s)
        return fail(e, TB_ENOMEM, 0, 0, "out of memory");
    memcpy(s, text, len);
    s[len] = '\0';
    doc->text = s;
    doc->len = len;
    int rc = check_text(text, s, len, what, e);
    if (rc)
        goto fail;
    /* The length given to cJSON includes the terminating NUL (the text
     * has no other): at a premature end cJSON then points at the end,
     * not at the last byte. */
    const char *end = NULL;
    doc->root = cJSON_ParseWithLengthOpts(s, len + 1, &end, false);
    if (!doc->root) {
        rc = syntax_error(text, s, len, end ? (size_t)(end - s) : 0, e);
        goto fail;
    }
    size_t off = (size_t)(end - s);
    while (off < len && (unsigned char)s[off] <= 32)
        off++;
    if (off < len) {
        rc = syntax_error(text, s, len, off, e);
        goto fail;
    }
    walker w = {.s = (const unsigned char *)s,
                .orig = (const unsigned char *)text, .len = len,
                .line = 1, .col = 1, .ok = true, .bad_num = len,
                .bad_nul = len};
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        w.i = 3; /* cJSON skips a byte order mark; it has no column */
    w_value(&w, doc->root, 0, 0);
    qsort(w.e, w.n, sizeof(*w.e), pos_cmp);
    doc->pos = w.e;
    doc->npos = w.n;
    if (w.bad_num < len || w.bad_nul < len) {
        rc = strict_error(&w, text, s, len, e);
        goto fail;
    }
    return 0;
fail:
    tb_jsonc_free(doc);
    return rc;
}

void tb_jsonc_free(tb_jsonc *doc)
{
    if (!doc)
        return;
    cJSON_Delete(doc->root);
    free(doc->pos);
    free(doc->text);
    memset(doc, 0, sizeof *doc);
}

const tb_jsonc_pos *tb_jsonc_find(const tb_jsonc *doc, const cJSON *node)
{
    if (!doc || !doc->pos || !node)
        return NULL;
    tb_jsonc_pos key = {.node = node};
    return bsearch(&key, doc->pos, doc->npos, sizeof(key), pos_cmp);
}

/* ---------------------------------------------------------------------
 * Messages
 * ------------------------------------------------------------------- */

void tb_jsonc_where(const tb_jsonc *doc, const cJSON *node, bool at_key,
                    int *line, int *col)
{
    const tb_jsonc_pos *e = tb_jsonc_find(doc, node);
    *line = *col = 0;
    if (e) {
        *line = at_key && e->key_line ? e->key_line : e->line;
        *col = at_key && e->key_line ? e->key_col : e->col;
    }
}

void tb_jsonc_vmessage(char *err, size_t errlen, const char *path,
                       int line, int col, const char *kp, const char *fmt,
                       va_list ap)
{
    if (!err || errlen == 0)
        return;
    size_t n = 0;
    int r;
    if (line > 0)
        r = snprintf(err, errlen, "%s:%d:%d: ", path, line, col);
    else
        r = snprintf(err, errlen, "%s: ", path);
    if (r > 0)
        n = (size_t)r < errlen ? (size_t)r : errlen - 1;
    if (kp && *kp && n + 1 < errlen) {
        r = snprintf(err + n, errlen - n, "%s: ", kp);
        if (r > 0)
            n += (size_t)r < errlen - n ? (size_t)r : errlen - n - 1;
    }
    if (n + 1 < errlen)
        vsnprintf(err + n, errlen - n, fmt, ap);
    for (char *s = err; *s; s++) /* one line */
        if ((unsigned char)*s < 32 || *s == 127)
            *s = *s == '\t' ? ' ' : '?';
}

int tb_jsonc_fail(const tb_jsonc *doc, const cJSON *node, bool at_key,
                  const char *path, char *err, size_t errlen,
                  const char *kp, const char *fmt, ...)
{
    int line, col;
    tb_jsonc_where(doc, node, at_key, &line, &col);
    va_list ap;
    va_start(ap, fmt);
    tb_jsonc_vmessage(err, errlen, path, line, col, kp, fmt, ap);
    va_end(ap);
    return TB_EINVAL;
}

void tb_jsonc_number(double v, char *buf, size_t n)
{
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, n, "%.0f", v);
    } else {
        snprintf(buf, n, "%.15g", v);
        if (strtod(buf, NULL) != v)
            snprintf(buf, n, "%.17g", v);
    }
}

const char *tb_jsonc_shorten(const char *s, char *buf, size_t n)
{
    size_t l = strlen(s);
    if (l < n) {
        memcpy(buf, s, l + 1);
    } else {
        memcpy(buf, s, n - 4);
        memcpy(buf + n - 4, "...", 4);
    }
    return buf;
}

const char *tb_jsonc_describe(const cJSON *v, char *buf, size_t n)
{
    char tmp[48];
    if (cJSON_IsNumber(v))
        tb_jsonc_number(v->valuedouble, buf, n);
    else if (cJSON_IsString(v))
        snprintf(buf, n, "\"%s\"",
                 tb_jsonc_shorten(v->valuestring, tmp, 40));
    else if (cJSON_IsTrue(v))
        snprintf(buf, n, "true");
    else if (cJSON_IsFalse(v))
        snprintf(buf, n, "false");
    else if (cJSON_IsNull(v))
        snprintf(buf, n, "null");
    else if (cJSON_IsArray(v))
        snprintf(buf, n, "a list");
    else if (cJSON_IsObject(v))
        snprintf(buf, n, "an object");
    else
        snprintf(buf, n, "an invalid value");
    return buf;
}

static bool key_in(const char *key, const char *const *keys)
{
    for (; *keys; keys++)
        if (strcmp(key, *keys) == 0)
            return true;
    return false;
}

int tb_jsonc_check_keys(const cJSON *obj, const char *const *keys, bool top,
                        const cJSON **at, char *msg, size_t n)
{
    char tmp[48];
    const char *what = top ? "top-level key" : "key";
    *at = NULL;
    for (const cJSON *ch = obj->child; ch; ch = ch->next) {
        const char *k = ch->string ? ch->string : "";
        *at = ch;
        if (keys && !key_in(k, keys)) {
            char list[256];
            size_t l = 0;
            list[0] = '\0';
            for (const char *const *q = keys; *q && l < sizeof(list); q++) {
                int r = snprintf(list + l, sizeof(list) - l, "%s%s",
                                 q == keys ? "" : ", ", *q);
                if (r < 0)
                    break;
                l += (size_t)r;
            }
            snprintf(msg, n, "unknown %s '%s' (expected one of: %s)", what,
                     tb_jsonc_shorten(k, tmp, 40), list);
            return TB_EINVAL;
        }
        for (const cJSON *d = obj->child; d != ch; d = d->next)
            if (d->string && strcmp(d->string, k) == 0) {
                snprintf(msg, n, "duplicate %s '%s'", what,
                         tb_jsonc_shorten(k, tmp, 40));
                return TB_EINVAL;
            }
    }
    return 0;
}
