/* JSON with comments, with positions: the text level of the files a
 * person writes, the configs (harness/config.c) and the targets files
 * (report/targets.c), and the words of their messages.
 *
 * The text must be UTF-8 without NUL bytes; // and block comments are
 * blanked out (offsets, lines and columns stay those of the original
 * text); cJSON parses the rest; one walk of the text beside the cJSON
 * tree then records where every key and value starts, since cJSON keeps
 * no positions.  What cJSON would take but RFC 8259 does not is refused:
 * numbers such as 01, -01 or 1., and strings holding \u0000 (which
 * cJSON would silently cut).  Lines and columns are 1-based; columns
 * count code points, a tab counts one, a byte order mark none. */
#ifndef TB_BASE_JSONC_H
#define TB_BASE_JSONC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* Where one node's key (members of objects only) and value start. */
typedef struct tb_jsonc_pos {
    const cJSON *node;
    size_t off;            /* byte offset of the value */
    int key_line, key_col; /* 0 when the node has no key */
    int line, col;
} tb_jsonc_pos;

/* A parsed document: owns root, text and pos. */
typedef struct tb_jsonc {
    cJSON *root;
    char *text;        /* the comment-stripped text, NUL-terminated */
    size_t len;        /* its bytes, as the original's */
    tb_jsonc_pos *pos; /* one per node, sorted by node */
    size_t npos;
} tb_jsonc;

/* Why a text was refused. */
typedef struct tb_jsonc_error {
    int line, col; /* 0 when the error has no place */
    char msg[256]; /* "syntax error near '...'", without the place */
} tb_jsonc_error;

/* Offset of the first byte of text[0..len) that is not valid UTF-8
 * (overlong forms, surrogates and code points past U+10FFFF are not) or
 * is NUL; len when there is none.  The config reader's and the result
 * loader's one check. */
size_t tb_utf8_check(const char *text, size_t len);

/* Parse text[0..len).  what names the document in the one message that
 * has no place ("empty config (expected a JSON object)").  0 with *doc
 * filled (free it with tb_jsonc_free); or TB_EPARSE (the text is not
 * such a JSON document) or TB_ENOMEM, with *e filled and *doc empty. */
int tb_jsonc_parse(const char *text, size_t len, const char *what,
                   tb_jsonc *doc, tb_jsonc_error *e);

/* Free what doc owns and empty it.  Accepts NULL and an empty doc. */
void tb_jsonc_free(tb_jsonc *doc);

/* The position of node in doc, or NULL when not known (a node of
 * another document, or a walk that lost step, which would be a bug:
 * messages then lack a place but are otherwise unaffected). */
const tb_jsonc_pos *tb_jsonc_find(const tb_jsonc *doc, const cJSON *node);

/* ---- messages: the words of every reader of such a document ----------- */

/* Where node starts in doc: at its key (at_key, when it is a member) or
 * at its value.  0, 0 when not known. */
void tb_jsonc_where(const tb_jsonc *doc, const cJSON *node, bool at_key,
                    int *line, int *col);

/* The one-line message "PATH:LINE:COL: KEYPATH: what" in err[0..errlen)
 * (no ":LINE:COL" when line is 0, no "KEYPATH: " when kp is NULL or
 * empty), cut to fit; control bytes (of the file's name, of key names
 * cJSON decoded) become '?', a tab a space.  err NULL or errlen 0:
 * nothing is written. */
void tb_jsonc_vmessage(char *err, size_t errlen, const char *path,
                       int line, int col, const char *kp, const char *fmt,
                       va_list ap);

/* tb_jsonc_where of node, then the message of tb_jsonc_vmessage there:
 * a reader's "this node is wrong" in one call.  Returns TB_EINVAL. */
#if defined(__GNUC__)
__attribute__((format(printf, 8, 9)))
#endif
int tb_jsonc_fail(const tb_jsonc *doc, const cJSON *node, bool at_key,
                  const char *path, char *err, size_t errlen,
                  const char *kp, const char *fmt, ...);

/* v as the shortest decimal text that reads back as v ("3", "0.1"). */
void tb_jsonc_number(double v, char *buf, size_t n);

/* s, cut to fit buf[0..n) (n > 4) and then ending in "...".  Returns
 * buf. */
const char *tb_jsonc_shorten(const char *s, char *buf, size_t n);

/* The keys of the object obj: each one of keys (NULL-terminated; NULL:
 * any key) and none twice.  0, or TB_EINVAL with *at the member to
 * blame (a message belongs at its key) and msg[0..n) "unknown key 'K'
 * (expected one of: A, B)" or "duplicate key 'K'" ("top-level key" when
 * top).  Quadratic in the keys: bound their number first when keys is
 * NULL. */
int tb_jsonc_check_keys(const cJSON *obj, const char *const *keys, bool top,
                        const cJSON **at, char *msg, size_t n);

/* What a message says a value is after "got ": a number as written, a
 * string in quotes (cut to 40 bytes), true, false, null, "a list", "an
 * object".  Returns buf. */
const char *tb_jsonc_describe(const cJSON *v, char *buf, size_t n);

#endif
