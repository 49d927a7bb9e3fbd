/* Loading and checking result files: see resultsio.h. */
#include "resultsio_impl.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/error.h"
#include "../base/fileio.h"
#include "../base/jsonc.h"

#define SCHEMA TB_RES_SCHEMA

const char *tb_resfile_resolve(const char *arg, char *buf, size_t len)
{
    struct stat st;
    if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
        size_t l = strlen(arg);
        snprintf(buf, len, "%s%sresults.json", arg,
                 l && arg[l - 1] == '/' ? "" : "/");
    } else {
        snprintf(buf, len, "%s", arg);
    }
    return buf;
}

/* Line and column (1-based) of offset off in text. */
static void line_col(const char *text, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && text[i]; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

bool tb_res_status_known(const char *s)
{
    return tb_res_status_parse(s) >= 0;
}

/* The loader's own member reads (resultsio_json.c), for other JSON. */
double tb_json_num(const cJSON *o, const char *key)
{
    return tb_res_num(o, key);
}

const char *tb_json_str(const cJSON *o, const char *key)
{
    return tb_res_str(o, key);
}

cJSON *tb_cjson_num_or_null(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

cJSON *tb_cjson_str_or_null(const char *s)
{
    return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

/* qsort_r comparator: case indices by id. */
static int cmp_by_id(const void *a, const void *b, void *ctx)
{
    const tb_resfile *f = ctx;
    return strcmp(f->cases[*(const int *)a].id,
                  f->cases[*(const int *)b].id);
}

/* Does text[0..len) end inside a string or an unclosed object/array?
 * (cJSON reports where the failing value starts, which does not tell a
 * cut-off file from a damaged one.) */
static bool ends_open(const char *text, size_t len)
{
    long depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (in_str) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                in_str = false;
        } else if (ch == '"') {
            in_str = true;
        } else if (ch == '{' || ch == '[') {
            depth++;
        } else if ((ch == '}' || ch == ']') && --depth < 0) {
            return false;
        }
    }
    return in_str || depth > 0;
}

/* Read path into a NUL-terminated heap buffer, refusing files over
 * TB_RES_MAX_BYTES (by size before reading, when it is a regular file)
 * and stopping at the first NUL byte (no result file has one; this is
 * what makes `compare /dev/zero x` fail at once). */
static int read_limited(const char *path, char **data, size_t *len,
                        char *err, size_t errlen)
{
    *data = NULL;
    *len = 0;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
        (unsigned long long)st.st_size > TB_RES_MAX_BYTES)
        return tb_res_fail(err, errlen, path, TB_EIO,
                    "too large (%llu bytes; a result file is at most %zu "
                    "MiB)", (unsigned long long)st.st_size,
                    TB_RES_MAX_BYTES >> 20);
    tb_read_fail why;
    int rc = tb_read_file_max(path, TB_RES_MAX_BYTES, TB_READ_NO_NUL, data,
                              len, &why);
    switch (rc) {
    case 0:
        return 0;
    case TB_EIO:
        return why.opening ? tb_res_fail(err, errlen, path, TB_EIO, "%s",
                                         strerror(why.errnum))
                           : tb_res_fail(err, errlen, path, TB_EIO,
                                         "read error");
    case TB_EPARSE:
        return tb_res_fail(err, errlen, path, TB_EPARSE,
                    "corrupt: contains a NUL byte at offset %zu",
                    why.nul_at);
    case TB_ERANGE:
        return tb_res_fail(err, errlen, path, TB_EIO,
                    "too large (more than %zu MiB; a result file is at "
                    "most that)", TB_RES_MAX_BYTES >> 20);
    default:
        return tb_res_fail(err, errlen, path, TB_ENOMEM, "out of memory");
    }
}

/* Control bytes of s (C0 and DEL; but tab and newline when lines) become
 * '?': a result file from elsewhere must not reach a terminal or a
 * report with escape sequences in its ids, messages or impl names (it
 * could set the window title, clear the screen or forge lines with a
 * carriage return). */
static void clean(char *s, bool lines)
{
    for (; s && *s; s++)
        if (((unsigned char)*s < 0x20 || *s == 0x7f) &&
            !(lines && (*s == '\n' || *s == '\t')))
            *s = '?';
}

/* clean() every key and string of the tree at n; the recorded config
 * texts (member "text") keep their lines. */
static void clean_tree(cJSON *n)
{
    for (; n; n = n->next) {
        clean(n->string, false);
        if (cJSON_IsString(n))
            clean(n->valuestring,
                  n->string && !strcmp(n->string, TB_RES_KEY(text)));
        clean_tree(n->child);
    }
}

/* The checks before any parse: no NUL byte, valid UTF-8, not empty. */
static int precheck(tb_resfile *f, const char *text, size_t len, char *err,
                    size_t errlen)
{
    if (memchr(text, '\0', len))
        return tb_res_fail(err, errlen, f->path, TB_EPARSE,
                    "corrupt: contains a NUL byte at offset %zu",
                    (size_t)((const char *)memchr(text, '\0', len) - text));
    size_t bad = tb_utf8_check(text, len);
    if (bad < len) {
        int line, col;
        line_col(text, bad, &line, &col);
        return tb_res_fail(err, errlen, f->path, TB_EPARSE,
                    "corrupt: invalid UTF-8 (byte 0x%02x) at line %d, "
                    "column %d", (unsigned char)text[bad], line, col);
    }
    size_t start = 0;
    while (start < len && strchr(" \t\r\n", text[start]))
        start++;
    if (start == len)
        return tb_res_fail(err, errlen, f->path, TB_EPARSE,
                    len ? "only white space, not a result file"
                        : "empty file, not a result file");
    return 0;
}

/* Parse text into f->doc with a precise message on failure. */
static int parse(tb_resfile *f, const char *text, size_t len, char *err,
                 size_t errlen)
{
    /* text[len] is a NUL; cJSON wants it counted */
    const char *end = NULL;
    f->doc = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
    if (f->doc) {
        clean_tree(f->doc);
        return 0;
    }
    size_t off = end && end >= text ? (size_t)(end - text) : 0;
    if (off >= len || ends_open(text, len))
        return tb_res_fail(err, errlen, f->path, TB_EPARSE,
                    "truncated: the JSON ends after %zu bytes before the "
                    "document is complete", len);
    int line, col;
    line_col(text, off, &line, &col);
    return tb_res_fail(err, errlen, f->path, TB_EPARSE,
                "corrupt: not valid JSON at line %d, column %d", line, col);
}


/* The document's top level: an object of finite numbers (outside
 * "cases", whose records are checked one by one so that the message
 * names the case) with the schema, a "cases" array, objects or nulls
 * for env, peaks, summary and timer and an array for config. */
static int check_top(tb_resfile *f, char *err, size_t errlen)
{
    const char *path = f->path;
    int rc = TB_EINVAL;
    if (!cJSON_IsObject(f->doc))
        return tb_res_fail(err, errlen, path, rc, "not a tbench result file "
                           "(the JSON is not an object)");
    const cJSON *top;
    cJSON_ArrayForEach(top, f->doc)
    {
        char where[256];
        snprintf(where, sizeof where, "%.60s", top->string);
        const cJSON *inf = strcmp(top->string, TB_RES_KEY(cases))
                               ? tb_res_nonfinite(top, where, sizeof where,
                                                  strlen(where))
                               : NULL;
        if (inf)
            return tb_res_fail(err, errlen, path, rc, "%s: expected a finite "
                               "number, got %g (too large for a double)",
                               where, inf->valuedouble);
    }
    const char *schema = tb_json_str(f->doc, TB_RES_KEY(schema));
    if (!schema)
        return tb_res_fail(err, errlen, path, rc, "not a tbench result file "
                           "(no \"schema\" string; expected \"%s\")", SCHEMA);
    if (strcmp(schema, SCHEMA))
        return tb_res_fail(err, errlen, path, rc, "schema is \"%.100s\", "
                           "expected \"%s\"", schema, SCHEMA);
    if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(f->doc,
                                                        TB_RES_KEY(cases))))
        return tb_res_fail(err, errlen, path, rc, "\"cases\": expected an "
                           "array");
    static const char *const tops[] = {TB_RES_KEY(env), TB_RES_KEY(peaks),
                                       TB_RES_KEY(summary),
                                       TB_RES_KEY(timer)};
    for (size_t k = 0; k < sizeof tops / sizeof tops[0]; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(f->doc, tops[k]);
        if (v && !cJSON_IsNull(v) && !cJSON_IsObject(v))
            return tb_res_fail(err, errlen, path, rc, "\"%s\": expected an "
                               "object or null", tops[k]);
    }
    const cJSON *cm = cJSON_GetObjectItemCaseSensitive(f->doc,
                                                       TB_RES_KEY(complete));
    if (cm && !cJSON_IsBool(cm))
        return tb_res_fail(err, errlen, path, rc, "\"complete\": expected "
                           "true or false");
    const cJSON *cf = cJSON_GetObjectItemCaseSensitive(f->doc,
                                                       TB_RES_KEY(config));
    if (cf && !cJSON_IsNull(cf) && !cJSON_IsArray(cf))
        return tb_res_fail(err, errlen, path, rc, "\"config\": expected an "
                           "array");
    return 0;
}

/* f->by_id sorted by id over f->cases[0..n); TB_EINVAL with the message
 * in err when an id is used twice. */
static int index_ids(tb_resfile *f, char *err, size_t errlen)
{
    for (int i = 0; i < f->n; i++)
        f->by_id[i] = i;
    qsort_r(f->by_id, (size_t)f->n, sizeof *f->by_id, cmp_by_id, f);
    for (int i = 1; i < f->n; i++) {
        int a = f->by_id[i - 1], b = f->by_id[i];
        if (!strcmp(f->cases[a].id, f->cases[b].id))
            return tb_res_fail(err, errlen, f->path, TB_EINVAL, "cases[%d]: "
                               "id '%s' already used by cases[%d]",
                               a > b ? a : b, f->cases[a].id, a < b ? a : b);
    }
    return 0;
}

/* Every case record, checked and typed, then no id twice. */
static int load_cases(tb_resfile *f, char *err, size_t errlen)
{
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(f->doc,
                                                          TB_RES_KEY(cases));
    int n = cJSON_GetArraySize(cases);
    f->cases = calloc((size_t)(n ? n : 1), sizeof *f->cases);
    f->by_id = calloc((size_t)(n ? n : 1), sizeof *f->by_id);
    if (!f->cases || !f->by_id)
        return tb_res_fail(err, errlen, f->path, TB_ENOMEM, "out of memory");
    const cJSON *cj;
    cJSON_ArrayForEach(cj, cases)
    {
        int i = f->n++;
        int rc = tb_res_load_case(f, &f->cases[i], cj, i, err, errlen);
        if (rc)
            return rc;
    }
    return index_ids(f, err, errlen);
}

/* ---- the fast path: one case record at a time ---------------------------
 *
 * cJSON's whole-document tree takes about ten times the file (a node of
 * 64 bytes and more per sample: 368 MB for a 37 MB file), so a 200 MB
 * file needed 2 GB.  Here a byte scan (strings and brackets only) finds
 * the top-level members and the records of "cases"; the rest of the
 * document (env, configs, peaks, summary: small) is parsed as one
 * document with "cases": [], then each record alone, checked by the
 * same tb_res_load_case, its samples kept as doubles and its
 * stats.samples_ns array emptied in the tree (tb_rescase_record puts
 * them back for `show` and `merge`).  The records' trees go into the
 * document's empty "cases" array, so the rest of the loader and every
 * command see the document they saw before, minus the samples' nodes.
 *
 * Only files that load cleanly take this path: any doubt (a top-level
 * key with an escape, "cases" twice or not an array, nesting near
 * cJSON's limit, a record that does not parse or fails a check) makes
 * tb_resfile_from_text load the whole document as before, so every
 * refusal keeps its message, its precedence (a syntax error anywhere
 * before any check) and its line and column. */

/* Deepest nesting the scan lets through: cJSON refuses a document
 * nested deeper than CJSON_NESTING_LIMIT, and a record parsed alone is
 * two levels shallower than in the document. */
#define SPLIT_MAX_DEPTH 500

typedef struct {
    const char *t;
    size_t len, at;
    int depth, max_depth;
    bool mapped;     /* t is a mapped file (tb_resfile_load) */
    size_t released; /* its pages before this offset were given back */
} scan;

/* A mapped file's pages behind s->at go back once 16 MB have been read
 * (each pass reads the text once, and the page cache keeps it): so the
 * text of a 200 MB file never counts in the RSS all at once. */
#define RELEASE_STEP ((size_t)16 << 20)
static void release_behind(scan *s)
{
    if (!s->mapped || s->at - s->released < RELEASE_STEP)
        return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t end = s->at / page * page;
    madvise((void *)(s->t + s->released), end - s->released,
            MADV_DONTNEED);
    s->released = end;
}

/* cJSON's white space: every byte up to ' ' (NUL is refused before). */
static void skip_ws(scan *s)
{
    while (s->at < s->len && (unsigned char)s->t[s->at] <= ' ')
        s->at++;
}

/* Past the string that starts at s->at ('"'); *escaped when it holds a
 * backslash.  false when it does not end. */
static bool skip_string(scan *s, bool *escaped)
{
    *escaped = false;
    for (size_t i = s->at + 1; i < s->len; i++) {
        if (s->t[i] == '\\') {
            *escaped = true;
            i++;
        } else if (s->t[i] == '"') {
            s->at = i + 1;
            return true;
        }
    }
    return false;
}

/* Past the value that starts at s->at: a string, an object or array to
 * its matching bracket (strings skipped), or a scalar up to the next
 * ',', '}', ']' or white space.  Only delimits: cJSON checks the
 * value.  false when it does not end. */
static bool skip_value(scan *s)
{
    bool esc;
    char ch = s->t[s->at];
    if (ch == '"')
        return skip_string(s, &esc);
    if (ch != '{' && ch != '[') {
        while (s->at < s->len && !strchr(",}]", s->t[s->at]) &&
               (unsigned char)s->t[s->at] > ' ')
            s->at++;
        return true;
    }
    int depth = 0;
    while (s->at < s->len) {
        ch = s->t[s->at];
        if (ch == '"') {
            if (!skip_string(s, &esc))
                return false;
            continue;
        }
        if (ch == '{' || ch == '[') {
            depth++;
            if (s->depth + depth > s->max_depth)
                s->max_depth = s->depth + depth;
        } else if ((ch == '}' || ch == ']') && --depth == 0) {
            s->at++;
            return true;
        }
        s->at++;
        release_behind(s);
    }
    return false;
}

/* The records of the array text[lo, hi) (inside its brackets): their
 * spans, start and end, into *spans (heap).  -1: not a plain list of
 * objects; else their count. */
static long split_cases(scan *s, size_t lo, size_t hi, size_t **spans)
{
    size_t cap = 1024, n = 0;
    size_t *sp = malloc(cap * 2 * sizeof *sp);
    if (!sp)
        return -1;
    scan e = *s;
    e.len = hi;
    e.at = lo;
    e.depth = 2; /* the document and "cases" */
    skip_ws(&e);
    while (e.at < hi) {
        if (e.t[e.at] != '{' || n == (size_t)1 << 30)
            goto bad;
        size_t start = e.at;
        if (!skip_value(&e))
            goto bad;
        if (n == cap) {
            size_t *g = realloc(sp, cap * 4 * sizeof *sp);
            if (!g)
                goto bad;
            sp = g;
            cap *= 2;
        }
        sp[2 * n] = start;
        sp[2 * n + 1] = e.at;
        n++;
        skip_ws(&e);
        if (e.at < hi) {
            if (e.t[e.at] != ',')
                goto bad;
            e.at++;
            skip_ws(&e);
            if (e.at >= hi) /* a trailing comma */
                goto bad;
        }
    }
    s->max_depth = e.max_depth > s->max_depth ? e.max_depth : s->max_depth;
    s->released = e.released;
    *spans = sp;
    return (long)n;
bad:
    free(sp);
    return -1;
}

/* The top-level object's "cases" value: its span [*lo, *hi) (the
 * brackets included).  false: not an object of plain keys with one
 * "cases" array. */
static bool find_cases(scan *s, size_t *lo, size_t *hi)
{
    bool seen = false, esc;
    s->depth = 1;
    skip_ws(s);
    if (s->at >= s->len || s->t[s->at] != '{')
        return false;
    s->at++;
    skip_ws(s);
    if (s->at < s->len && s->t[s->at] == '}')
        return false;
    while (s->at < s->len) {
        size_t k = s->at;
        if (s->t[k] != '"' || !skip_string(s, &esc) || esc)
            return false;
        bool is_cases = s->at - k == 7 && !memcmp(s->t + k, "\"cases\"", 7);
        skip_ws(s);
        if (s->at >= s->len || s->t[s->at] != ':')
            return false;
        s->at++;
        skip_ws(s);
        if (s->at >= s->len)
            return false;
        size_t v = s->at;
        if (is_cases) {
            if (seen || s->t[v] != '[')
                return false;
            seen = true;
            *lo = v;
        }
        if (!skip_value(s))
            return false;
        if (is_cases)
            *hi = s->at;
        skip_ws(s);
        if (s->at >= s->len)
            return false;
        if (s->t[s->at] == '}')
            return seen && s->max_depth <= SPLIT_MAX_DEPTH;
        if (s->t[s->at] != ',')
            return false;
        s->at++;
        skip_ws(s);
    }
    return false;
}

/* Empty c's stats.samples_ns in record cj (the values are in c). */
static void prune_samples(const tb_rescase *c, cJSON *cj)
{
    if (!c->samples_ns)
        return;
    cJSON *st = cJSON_GetObjectItemCaseSensitive(cj, TB_RES_KEY(stats));
    cJSON *sa = cJSON_GetObjectItemCaseSensitive(st, TB_RES_KEY(samples_ns));
    if (!cJSON_IsArray(sa))
        return;
    cJSON_Delete(sa->child);
    sa->child = NULL;
}

/* Load text[0..len) (checked for NUL bytes and UTF-8) into the empty f
 * record by record: 0, or 1 when the file must be loaded as one document
 * instead (its shape is unusual, or it has a problem, which that load
 * words); f is then to be freed. */
static int load_split(tb_resfile *f, const char *text, size_t len,
                      bool mapped)
{
    scan s = {.t = text, .len = len, .mapped = mapped};
    size_t lo = 0, hi = 0, *spans = NULL;
    if (!find_cases(&s, &lo, &hi))
        return 1;
    long n = split_cases(&s, lo + 1, hi - 1, &spans);
    if (n < 0 || s.max_depth > SPLIT_MAX_DEPTH) {
        free(spans);
        return 1;
    }
    s.at = s.released = 0; /* the records' pass: from the start again */
    int rc = 1;
    char err[512];
    /* the head: the document with "cases": [] */
    size_t hlen = lo + 2 + (len - hi);
    char *head = malloc(hlen + 1);
    if (!head)
        goto out;
    memcpy(head, text, lo);
    memcpy(head + lo, "[]", 2);
    memcpy(head + lo + 2, text + hi, len - hi);
    head[hlen] = '\0';
    const char *end = NULL;
    f->doc = cJSON_ParseWithLengthOpts(head, hlen + 1, &end, 1);
    free(head);
    if (!f->doc)
        goto out;
    clean_tree(f->doc);
    if (check_top(f, err, sizeof err) || tb_res_load_run(f))
        goto out;
    cJSON *arr = cJSON_GetObjectItemCaseSensitive(f->doc, TB_RES_KEY(cases));
    f->cases = calloc((size_t)(n ? n : 1), sizeof *f->cases);
    f->by_id = calloc((size_t)(n ? n : 1), sizeof *f->by_id);
    if (!f->cases || !f->by_id)
        goto out;
    for (long i = 0; i < n; i++) {
        size_t a = spans[2 * i], b = spans[2 * i + 1];
        cJSON *cj = cJSON_ParseWithLengthOpts(text + a, b - a, &end, 0);
        if (!cj)
            goto out;
        if (end != text + b || !cJSON_IsObject(cj)) {
            cJSON_Delete(cj);
            goto out;
        }
        clean_tree(cj);
        int k = f->n++;
        tb_rescase *c = &f->cases[k];
        if (mapped) {
            /* the typed record alone; the text stays in the file */
            bool bad = tb_res_load_case(f, c, cj, k, err, sizeof err) ||
                       !tb_res_detach_case(f, c);
            cJSON_Delete(cj);
            if (bad)
                goto out;
            c->src_off = a;
            c->src_len = b - a;
        } else {
            /* in the document first: freed with it whatever happens */
            cJSON_AddItemToArray(arr, cj);
            if (tb_res_load_case(f, c, cj, k, err, sizeof err))
                goto out;
            prune_samples(c, cj);
        }
        s.at = b;
        release_behind(&s);
    }
    if (index_ids(f, err, sizeof err))
        goto out;
    f->pruned = true;
    f->compact = mapped;
    rc = 0;
out:
    free(spans);
    return rc;
}

/* A new, empty tb_resfile named path, or NULL. */
static tb_resfile *resfile_new(const char *path)
{
    tb_resfile *f = calloc(1, sizeof *f);
    if (f && !(f->path = strdup(path))) {
        free(f);
        return NULL;
    }
    return f;
}

/* st's change time in nanoseconds. */
static long long ctime_ns(const struct stat *st)
{
    return (long long)st->st_ctim.tv_sec * 1000000000LL +
           st->st_ctim.tv_nsec;
}

int tb_resfile_from_text(const char *path, const char *text, size_t len,
                         tb_resfile **out, char *err, size_t errlen)
{
    *out = NULL;
    tb_resfile *f = resfile_new(path);
    int rc;
    if (!f)
        return tb_res_fail(err, errlen, path, TB_ENOMEM, "out of memory");
    if (len > TB_RES_MAX_BYTES)
        rc = tb_res_fail(err, errlen, path, TB_EIO, "too large (%zu bytes; "
                         "a result file is at most %zu MiB)", len,
                         TB_RES_MAX_BYTES >> 20);
    else if (!(rc = precheck(f, text, len, err, errlen))) {
        /* record by record (resultsio_split.c); on any doubt, again as
         * one document, which finds and words the problem */
        if (!load_split(f, text, len, false)) {
            *out = f;
            return 0;
        }
        tb_resfile_free(f);
        if (!(f = resfile_new(path)))
            return tb_res_fail(err, errlen, path, TB_ENOMEM,
                               "out of memory");
        if (!(rc = parse(f, text, len, err, errlen)) &&
            !(rc = check_top(f, err, errlen)) &&
            (rc = tb_res_load_run(f)))
            tb_res_fail(err, errlen, path, rc, "%s",
                        rc == TB_EINVAL ? "shard.selection: filters, "
                                          "excludes and backends must be "
                                          "arrays of strings"
                                        : "out of memory");
        if (!rc)
            rc = load_cases(f, err, errlen);
    }
    if (rc) {
        tb_resfile_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

/* Does the mapped text t[0..len) pass precheck (no NUL byte, valid
 * UTF-8, not only white space)?  Read in steps whose pages then go back
 * (release_behind); a step ends before a UTF-8 continuation byte, so no
 * character is cut. */
static bool mapped_clean(const char *t, size_t len)
{
    scan s = {.t = t, .len = len, .mapped = true};
    bool text = false;
    while (s.at < len) {
        size_t end = len - s.at > RELEASE_STEP ? s.at + RELEASE_STEP : len;
        while (end < len && end > s.at && ((unsigned char)t[end] & 0xc0) ==
                                              0x80)
            end--;
        if (end == s.at || memchr(t + s.at, '\0', end - s.at) ||
            tb_utf8_check(t + s.at, end - s.at) < end - s.at)
            return false;
        for (size_t i = s.at; !text && i < end; i++)
            text = !strchr(" \t\r\n", t[i]);
        s.at = end;
        release_behind(&s);
    }
    return text;
}

/* Load the regular file path through a read-only mapping, record by
 * record (load_split), its pages given back as they are read: 0 with
 * *out, or 1 when it is not a regular file of 1 byte to
 * TB_RES_MAX_BYTES, or has any problem (then the caller reads it whole
 * and words the problem). */
static int load_mapped(const char *path, tb_resfile **out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return 1;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (unsigned long long)st.st_size > TB_RES_MAX_BYTES) {
        close(fd);
        return 1;
    }
    size_t len = (size_t)st.st_size;
    void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
        close(fd);
        return 1;
    }
    tb_resfile *f = NULL;
    int rc = 1;
    if (mapped_clean(m, len) && (f = resfile_new(path)) &&
        !load_split(f, m, len, true)) {
        /* what tb_rescase_record finds again when it reads a record */
        f->src_dev = (unsigned long long)st.st_dev;
        f->src_ino = (unsigned long long)st.st_ino;
        f->src_size = (long long)st.st_size;
        f->src_ctime_ns = ctime_ns(&st);
        *out = f;
        f = NULL;
        rc = 0;
    }
    close(fd);
    tb_resfile_free(f);
    munmap(m, len);
    return rc;
}

int tb_resfile_load(const char *arg, tb_resfile **out, char *err,
                    size_t errlen)
{
    char pbuf[4096];
    const char *path = tb_resfile_resolve(arg, pbuf, sizeof pbuf);
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    if (!load_mapped(path, out))
        return 0;
    int rc = read_limited(path, &text, &len, err, errlen);
    if (rc)
        return rc;
    rc = tb_resfile_from_text(path, text, len, out, err, errlen);
    free(text);
    return rc;
}

int tb_resfile_from_doc(const char *path, const cJSON *doc,
                        tb_resfile **out, char *err, size_t errlen)
{
    *out = NULL;
    char *text = cJSON_PrintUnformatted(doc);
    if (!text)
        return tb_res_fail(err, errlen, path, TB_ENOMEM, "out of memory");
    int rc = tb_resfile_from_text(path, text, strlen(text), out, err, errlen);
    free(text);
    return rc;
}

void tb_resfile_free(tb_resfile *f)
{
    if (!f)
        return;
    for (int i = 0; i < f->n; i++) {
        free(f->cases[i].samples_ns);
        free(f->cases[i].round_medians_ns);
    }
    free(f->cases);
    free(f->by_id);
    tb_res_arena_free(f);
    cJSON_Delete(f->doc);
    free(f->path);
    free(f);
}

const tb_rescase *tb_resfile_find(const tb_resfile *f, const char *id)
{
    int lo = 0, hi = f->n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        const tb_rescase *c = &f->cases[f->by_id[mid]];
        int d = strcmp(id, c->id);
        if (!d)
            return c;
        if (d < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return NULL;
}

typedef struct {
    const char *id;
    size_t order;
} idref;

static int cmp_idref(const void *pa, const void *pb)
{
    const idref *a = pa, *b = pb;
    int d = strcmp(a->id, b->id);
    return d ? d : (a->order > b->order) - (a->order < b->order);
}

static int cmp_order(const void *pa, const void *pb)
{
    const idref *a = pa, *b = pb;
    return (a->order > b->order) - (a->order < b->order);
}

int tb_resfile_union_ids(tb_resfile *const *f, int k, const char ***ids,
                         int *n)
{
    size_t total = 0, m = 0, u = 0;
    for (int j = 0; j < k; j++)
        total += (size_t)f[j]->n;
    idref *r = malloc((total ? total : 1) * sizeof *r);
    const char **out = malloc((total ? total : 1) * sizeof *out);
    if (!r || !out) {
        free(r);
        free(out);
        return TB_ENOMEM;
    }
    for (int j = 0; j < k; j++)
        for (int i = 0; i < f[j]->n; i++, m++)
            r[m] = (idref){f[j]->cases[i].id, m};
    /* sort by id (then order), keep the first of each id, restore order */
    qsort(r, total, sizeof *r, cmp_idref);
    for (size_t i = 0; i < total; i++)
        if (!u || strcmp(r[i].id, r[u - 1].id))
            r[u++] = r[i];
    qsort(r, u, sizeof *r, cmp_order);
    for (size_t i = 0; i < u; i++)
        out[i] = r[i].id;
    free(r);
    *ids = out;
    *n = (int)u;
    return 0;
}

bool tb_resfile_shares_id(const tb_resfile *f, tb_resfile *const *g, int k)
{
    for (int i = 0; i < f->n; i++)
        for (int j = 0; j < k; j++)
            if (g[j] != f && tb_resfile_find(g[j], f->cases[i].id))
                return true;
    return false;
}

int tb_resfile_pick_backend(tb_resfile *f, const char *name, char *err,
                            size_t errlen)
{
    int k = 0;
    for (int i = 0; i < f->n; i++) {
        tb_rescase c = f->cases[i];
        const char *slash = strrchr(c.id, '/');
        size_t nl = strlen(name);
        if (strcmp(c.backend, name) || !slash ||
            strncmp(slash + 1, name, nl)) {
            free(c.samples_ns);
            free(c.round_medians_ns);
            continue;
        }
        /* id up to the last '/', then '*', then the axes */
        size_t head = (size_t)(slash - c.id) + 1;
        size_t len = strlen(c.id) - nl + 1;
        char *id = tb_res_alloc(f, len + 1);
        cJSON *s = NULL;
        if (id) {
            snprintf(id, len + 1, "%.*s*%s", (int)head, c.id,
                     slash + 1 + nl);
            s = c.json ? cJSON_CreateString(id) : NULL;
        }
        if (!id || (c.json && (!s || !cJSON_ReplaceItemInObjectCaseSensitive(
                                         (cJSON *)c.json, "id", s)))) {
            cJSON_Delete(s);
            f->cases[k++] = c; /* still owned: freed with the file */
            for (int j = i + 1; j < f->n; j++)
                f->cases[k++] = f->cases[j];
            f->n = k;
            return TB_ENOMEM;
        }
        c.id = s ? s->valuestring : id;
        f->cases[k++] = c;
    }
    f->n = k;
    if (!k)
        return tb_res_fail(err, errlen, f->path, TB_EINVAL,
                    "no case ran on backend '%s'", name);
    for (int i = 0; i < k; i++)
        f->by_id[i] = i;
    qsort_r(f->by_id, (size_t)k, sizeof *f->by_id, cmp_by_id, f);
    return 0;
}

/* Case c's record read again from f's file (compact), its id c->id
 * (tb_resfile_pick_backend renames it), or NULL with the message. */
static cJSON *record_again(const tb_resfile *f, const tb_rescase *c,
                           char *err, size_t errlen)
{
    struct stat st;
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) ||
        (unsigned long long)st.st_dev != f->src_dev ||
        (unsigned long long)st.st_ino != f->src_ino ||
        (long long)st.st_size != f->src_size ||
        ctime_ns(&st) != f->src_ctime_ns) {
        if (fd >= 0)
            close(fd);
        tb_res_fail(err, errlen, f->path, TB_EIO, "the file changed after "
                    "it was loaded (or is gone): cases[%d] (%s) cannot be "
                    "read again", (int)(c - f->cases), c->id);
        return NULL;
    }
    char *t = malloc(c->src_len + 1);
    size_t got = 0;
    while (t && got < c->src_len) {
        ssize_t k = pread(fd, t + got, c->src_len - got,
                          (off_t)(c->src_off + got));
        if (k <= 0 && !(k < 0 && errno == EINTR))
            break;
        got += k > 0 ? (size_t)k : 0;
    }
    close(fd);
    if (!t || got < c->src_len) {
        tb_res_fail(err, errlen, f->path, t ? TB_EIO : TB_ENOMEM, "%s",
                    t ? "read error" : "out of memory");
        free(t);
        return NULL;
    }
    t[got] = '\0';
    const char *end = NULL;
    cJSON *r = cJSON_ParseWithLengthOpts(t, got, &end, 0);
    bool whole = r && end == t + got && cJSON_IsObject(r);
    free(t);
    if (whole)
        clean_tree(r);
    const char *id = whole ? tb_res_record_id(r) : NULL;
    if (id && strcmp(id, c->id)) {
        cJSON *s = cJSON_CreateString(c->id);
        if (!s || !cJSON_ReplaceItemInObjectCaseSensitive(r, "id", s)) {
            cJSON_Delete(s);
            id = NULL;
        }
    }
    if (!id) {
        cJSON_Delete(r);
        if (whole)
            tb_res_fail(err, errlen, f->path, TB_ENOMEM, "out of memory");
        else
            tb_res_fail(err, errlen, f->path, TB_EIO, "cases[%d] (%s) read "
                        "again is not the record loaded", (int)(c - f->cases),
                        c->id);
        return NULL;
    }
    return r;
}

cJSON *tb_rescase_record(const tb_resfile *f, const tb_rescase *c,
                         char *err, size_t errlen)
{
    if (f->compact)
        return record_again(f, c, err, errlen);
    cJSON *r = cJSON_Duplicate(c->json, 1);
    if (!r)
        tb_res_fail(err, errlen, f->path, TB_ENOMEM, "out of memory");
    if (!r || !f->pruned || !c->samples_ns)
        return r;
    cJSON *st = cJSON_GetObjectItemCaseSensitive(r, TB_RES_KEY(stats));
    cJSON *sa = cJSON_GetObjectItemCaseSensitive(st, TB_RES_KEY(samples_ns));
    if (!cJSON_IsArray(sa) || sa->child)
        return r;
    for (size_t i = 0; i < c->n; i++) {
        cJSON *v = cJSON_CreateNumber(c->samples_ns[i]);
        if (!v || !cJSON_AddItemToArray(sa, v)) {
            cJSON_Delete(v);
            cJSON_Delete(r);
            tb_res_fail(err, errlen, f->path, TB_ENOMEM, "out of memory");
            return NULL;
        }
    }
    return r;
}

const char *tb_res_record_id(const cJSON *rec)
{
    return tb_res_str(rec, TB_RES_KEY(id));
}

int tb_res_put_nested(const cJSON *r, int depth,
                      int (*put)(void *ctx, const void *p, size_t n),
                      void *ctx)
{
    static const char tabs[] = "\n\t\t\t\t\t\t\t\t";
    if (depth < 0 || depth > (int)sizeof tabs - 2)
        return TB_EINVAL;
    char *t = cJSON_Print(r);
    if (!t)
        return TB_ENOMEM;
    int rc = 0;
    for (const char *p = t, *nl; *p && !rc; p = nl + 1) {
        nl = strchr(p, '\n');
        if (!nl) {
            rc = put(ctx, p, strlen(p));
            break;
        }
        rc = put(ctx, p, (size_t)(nl - p));
        if (!rc)
            rc = put(ctx, tabs, 1 + (size_t)depth);
    }
    free(t);
    return rc;
}
