/* A growing text buffer: append with printf formats or raw bytes, then
 * take the heap string.  An allocation failure sets `oom` and makes
 * every later append a no-op, so a caller checks once at the end. */
#ifndef TB_BASE_STRBUF_H
#define TB_BASE_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct tb_strbuf {
    char *p;    /* NUL-terminated text, or NULL before the first append */
    size_t n;   /* bytes of text */
    size_t cap; /* bytes allocated */
    bool oom;   /* an append failed: the text is incomplete */
} tb_strbuf;    /* zero-initialise before use */

/* Append printf(fmt, ...). */
void tb_strbuf_add(tb_strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void tb_strbuf_vadd(tb_strbuf *b, const char *fmt, va_list ap);

/* Append the n bytes at s. */
void tb_strbuf_put(tb_strbuf *b, const char *s, size_t n);

/* The text as a heap string the caller frees ("" when nothing was
 * appended), leaving b empty; NULL (and b freed) after an allocation
 * failure. */
char *tb_strbuf_take(tb_strbuf *b);

/* Free the text; b is empty again.  Accepts an empty buffer. */
void tb_strbuf_free(tb_strbuf *b);

/* The position of the n bytes at s in words, a list of words separated
 * by single spaces ("text md json": 0 for "text"), or -1 when they are
 * not one of them.  An option's accepted words are declared once as such
 * a list: its parser picks with this and `tbench __options` offers the
 * same list to the shell completions. */
int tb_word_index(const char *words, const char *s, size_t n);

/* A hash of the string s (FNV-1a) for the hash tables of the readers. */
size_t tb_str_hash(const char *s);

#endif
