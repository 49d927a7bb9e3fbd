/* Targets files: JSON with comments -> tb_targets (targets.h).
 *
 * The text level is base/jsonc's, and so are the words of the messages:
 * the first error is one line "PATH:LINE:COL: KEYPATH: what", as the
 * config's.  The keys are docs/CONFIG.md's "Targets files".  Members are
 * read by walking each object once (unknown and repeated keys refused
 * first), so a target's keys may come in any order. */
#include "targets.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/fileio.h"
#include "../base/jsonc.h"

#define TGT_MAX_FILE (16u << 20) /* bytes in a targets file */
#define TGT_MAX_STR 512          /* bytes in a name or selector */
#define TGT_MAX_NS 3.6e12        /* max_time: one hour */
#define TGT_MAX_RATIO 1e6
#define TGT_KP 64 /* key path buffer: "targets[4095].max_ratio_to.ratio" */

#if defined(__GNUC__)
#define TGT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TGT_PRINTF(f, a)
#endif

typedef struct parser {
    const char *path;
    const tb_jsonc *doc;
    char *err;
    size_t errlen;
} parser;

TGT_PRINTF(6, 7)
static int fail_at(parser *P, int code, int line, int col, const char *kp,
                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tb_jsonc_vmessage(P->err, P->errlen, P->path, line, col, kp, fmt, ap);
    va_end(ap);
    return code;
}

/* TB_EINVAL at node's value, or at its key (at_key). */
#define fail(P, node, at_key, kp, ...)                                    \
    tb_jsonc_fail((P)->doc, node, at_key, (P)->path, (P)->err,            \
                  (P)->errlen, kp, __VA_ARGS__)

/* buf = parent.key, cut with "..." when longer than TGT_KP (messages
 * only). */
static void kp_key(char *buf, const char *parent, const char *key)
{
    if (snprintf(buf, TGT_KP, "%s.%s", parent, key) >= TGT_KP)
        memcpy(buf + TGT_KP - 4, "...", 4);
}

/* obj is an object whose keys are all in keys, each once. */
static int check_object(parser *P, const cJSON *obj, const char *kp,
                        const char *const *keys)
{
    char got[64], msg[400];
    const cJSON *at;
    if (!cJSON_IsObject(obj))
        return fail(P, obj, false, kp, "expected an object, got %s",
                    tb_jsonc_describe(obj, got, sizeof got));
    if (tb_jsonc_check_keys(obj, keys, !*kp, &at, msg, sizeof msg))
        return fail(P, at, true, kp, "%s", msg);
    return 0;
}

/* A copy of v: a non-empty string of at most TGT_MAX_STR bytes without
 * control characters, called `what` in messages. */
static int get_string(parser *P, const cJSON *v, const char *kp,
                      const char *what, char **out)
{
    char got[64];
    if (!cJSON_IsString(v))
        return fail(P, v, false, kp, "expected %s (a string), got %s", what,
                    tb_jsonc_describe(v, got, sizeof got));
    size_t l = strlen(v->valuestring);
    if (l == 0)
        return fail(P, v, false, kp, "%s must not be empty", what);
    if (l > TGT_MAX_STR)
        return fail(P, v, false, kp, "%s is too long (%zu bytes, at most %d)",
                    what, l, TGT_MAX_STR);
    for (size_t i = 0; i < l; i++)
        if ((unsigned char)v->valuestring[i] < 32 ||
            v->valuestring[i] == 127)
            return fail(P, v, false, kp, "%s contains a control character",
                        what);
    if (!(*out = strdup(v->valuestring)))
        return fail_at(P, TB_ENOMEM, 0, 0, "", "out of memory");
    return 0;
}

/* A ratio: a number above 0, at most TGT_MAX_RATIO. */
static int get_ratio(parser *P, const cJSON *v, const char *kp, double *out)
{
    char got[64];
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) ||
        v->valuedouble > TGT_MAX_RATIO)
        return fail(P, v, false, kp, "expected a ratio (a number above 0, "
                    "at most 1000000), got %s",
                    tb_jsonc_describe(v, got, sizeof got));
    *out = v->valuedouble;
    return 0;
}

int tb_tgt_parse_duration(const char *s, double *ns)
{
    static const struct {
        const char *unit;
        double ns;
    } units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
    /* digits first: no sign, no space, no "inf", "nan" or hex */
    if (!s || !((*s >= '0' && *s <= '9') || *s == '.'))
        return TB_EINVAL;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    const char *hex = strpbrk(s, "xX");
    if (end == s || errno || !isfinite(v) || !(v > 0) || (hex && hex < end))
        return TB_EINVAL;
    if (*end == ' ')
        end++;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(end, units[i].unit)) {
            *ns = v * units[i].ns;
            return isfinite(*ns) ? 0 : TB_EINVAL;
        }
    return TB_EINVAL;
}

static int get_duration(parser *P, const cJSON *v, const char *kp,
                        double *out)
{
    char got[64];
    double ns = 0;
    if (!cJSON_IsString(v) || tb_tgt_parse_duration(v->valuestring, &ns) ||
        ns > TGT_MAX_NS)
        return fail(P, v, false, kp, "expected a duration with a unit (ns, "
                    "us, ms or s) up to 1 hour, e.g. \"2ms\" or \"150us\", "
                    "got %s", tb_jsonc_describe(v, got, sizeof got));
    *out = ns;
    return 0;
}

/* "max_ratio_to": {"peer": NAME, "ratio": R}, both required. */
static int parse_peer(parser *P, const cJSON *v, const char *kp,
                      tb_target *t)
{
    static const char *const keys[] = {"peer", "ratio", NULL};
    char sub[TGT_KP];
    int rc = check_object(P, v, kp, keys);
    bool have_ratio = false;
    for (const cJSON *m = v->child; m && !rc; m = m->next) {
        kp_key(sub, kp, m->string);
        if (!strcmp(m->string, "peer")) {
            rc = get_string(P, m, sub, "the peer's backend name", &t->peer);
            tb_jsonc_where(P->doc, m, false, &t->peer_line, &t->peer_col);
        } else {
            rc = get_ratio(P, m, sub, &t->limit);
            have_ratio = true;
        }
    }
    if (!rc && (!t->peer || !have_ratio))
        rc = fail(P, v, false, kp, "needs \"%s\" (e.g. {\"peer\": "
                  "\"numpy\", \"ratio\": 1.0})", t->peer ? "ratio" : "peer");
    return rc;
}

/* The name of an unnamed target: its selectors, in the file's order of
 * keys case, op, dtype, backend. */
static int default_name(parser *P, tb_target *t)
{
    const char *part[] = {t->glob, t->op, t->dtype, t->backend};
    size_t n = 1;
    for (int i = 0; i < 4; i++)
        n += part[i] ? strlen(part[i]) + 1 : 0;
    if (!(t->name = malloc(n)))
        return fail_at(P, TB_ENOMEM, 0, 0, "", "out of memory");
    t->name[0] = '\0';
    for (int i = 0; i < 4; i++)
        if (part[i]) {
            if (t->name[0])
                strcat(t->name, " ");
            strcat(t->name, part[i]);
        }
    return 0;
}

/* One member m of target t (kp: the target's key path): a selector, the
 * name or a bound.  *bound: the bound member seen so far, or NULL. */
static int target_member(parser *P, const cJSON *m, const char *kp,
                         tb_target *t, const cJSON **bound)
{
    char sub[TGT_KP];
    const char *k = m->string;
    kp_key(sub, kp, k);
    if (!strcmp(k, "name"))
        return get_string(P, m, sub, "the target's name", &t->name);
    if (!strcmp(k, "case"))
        return get_string(P, m, sub, "a case id or glob", &t->glob);
    if (!strcmp(k, "op"))
        return get_string(P, m, sub, "an op name", &t->op);
    if (!strcmp(k, "dtype"))
        return get_string(P, m, sub, "a dtype", &t->dtype);
    if (!strcmp(k, "backend"))
        return get_string(P, m, sub, "a backend name", &t->backend);
    if (*bound)
        return fail(P, m, true, kp, "a target holds one bound: '%s' after "
                    "'%s' (write a second target)", k, (*bound)->string);
    *bound = m;
    if (!strcmp(k, "max_time")) {
        t->kind = TB_TGT_TIME;
        return get_duration(P, m, sub, &t->limit);
    }
    if (!strcmp(k, "max_bound_ratio")) {
        t->kind = TB_TGT_BOUND;
        return get_ratio(P, m, sub, &t->limit);
    }
    t->kind = TB_TGT_PEER;
    return parse_peer(P, m, sub, t);
}

static int parse_target(parser *P, const cJSON *v, int i, tb_target *t)
{
    static const char *const keys[] = {
        "name",    "case",     "op",           "dtype",
        "backend", "max_time", "max_ratio_to", "max_bound_ratio",
        NULL};
    char kp[TGT_KP];
    snprintf(kp, sizeof kp, "targets[%d]", i);
    int rc = check_object(P, v, kp, keys);
    if (rc)
        return rc;
    tb_jsonc_where(P->doc, v, false, &t->line, &t->col);
    const cJSON *bound = NULL;
    for (const cJSON *m = v->child; m; m = m->next)
        if ((rc = target_member(P, m, kp, t, &bound)))
            return rc;
    if (!t->glob && !t->op && !t->dtype && !t->backend)
        return fail(P, v, false, kp, "selects no cases: give \"case\" (a "
                    "glob on the id), \"op\", \"dtype\" or \"backend\"");
    if (!bound)
        return fail(P, v, false, kp, "no bound: give one of \"max_time\", "
                    "\"max_ratio_to\" or \"max_bound_ratio\"");
    t->named = t->name != NULL;
    return t->named ? 0 : default_name(P, t);
}

static int parse_root(parser *P, const cJSON *root, tb_targets *out)
{
    static const char *const keys[] = {"targets", NULL};
    char got[64];
    int rc = check_object(P, root, "", keys);
    if (rc)
        return rc;
    const cJSON *list = root->child;
    if (!list)
        return fail(P, root, false, "", "no \"targets\" (a list of "
                    "targets, docs/CONFIG.md)");
    int n = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : -1;
    if (n < 1 || n > TB_TARGETS_MAX) {
        if (n < 0)
            tb_jsonc_describe(list, got, sizeof got);
        else if (n == 0)
            snprintf(got, sizeof got, "an empty list");
        else
            snprintf(got, sizeof got, "%d", n);
        return fail(P, list, false, "targets", "expected a list of 1 to %d "
                    "targets, got %s", TB_TARGETS_MAX, got);
    }
    if (!(out->t = calloc((size_t)n, sizeof *out->t)))
        return fail_at(P, TB_ENOMEM, 0, 0, "", "out of memory");
    int i = 0;
    for (const cJSON *v = list->child; v; v = v->next, i++) {
        out->n = i + 1; /* freed on failure */
        if ((rc = parse_target(P, v, i, &out->t[i])))
            return rc;
        for (int j = 0; j < i; j++)
            if (out->t[i].named && out->t[j].named &&
                !strcmp(out->t[i].name, out->t[j].name)) {
                char kp[TGT_KP];
                snprintf(kp, sizeof kp, "targets[%d]", i);
                return fail(P, v, false, kp, "name '%s' already names "
                            "targets[%d]", out->t[i].name, j);
            }
    }
    return 0;
}

int tb_targets_parse(const char *text, size_t len, const char *path,
                     tb_targets *out, char *err, size_t errlen)
{
    parser P = {.path = path ? path : "<targets>", .err = err,
                .errlen = errlen};
    memset(out, 0, sizeof *out);
    if (err && errlen)
        err[0] = '\0';
    tb_jsonc doc;
    tb_jsonc_error e;
    int rc = tb_jsonc_parse(text ? text : "", text ? len : 0,
                            "targets file", &doc, &e);
    if (rc)
        return fail_at(&P, rc, e.line, e.col, "", "%s", e.msg);
    P.doc = &doc;
    rc = parse_root(&P, doc.root, out);
    tb_jsonc_free(&doc);
    if (!rc && !(out->path = strdup(P.path)))
        rc = fail_at(&P, TB_ENOMEM, 0, 0, "", "out of memory");
    if (rc)
        tb_targets_free(out);
    return rc;
}

int tb_targets_load(const char *path, tb_targets *out, char *err,
                    size_t errlen)
{
    parser P = {.path = path, .err = err, .errlen = errlen};
    char *buf = NULL;
    size_t len = 0;
    tb_read_fail why;
    memset(out, 0, sizeof *out);
    int rc = tb_read_file_max(path, TGT_MAX_FILE - 1, 0, &buf, &len, &why);
    if (rc == TB_EIO)
        return fail_at(&P, TB_EIO, 0, 0, "", "cannot %s: %s",
                       why.opening ? "open" : "read", strerror(why.errnum));
    if (rc == TB_ERANGE)
        return fail_at(&P, TB_EIO, 0, 0, "", "file is too large (%u MiB "
                       "or more)", TGT_MAX_FILE >> 20);
    if (rc)
        return fail_at(&P, TB_ENOMEM, 0, 0, "", "out of memory");
    rc = tb_targets_parse(buf, len, path, out, err, errlen);
    free(buf);
    return rc;
}

void tb_targets_free(tb_targets *t)
{
    if (!t)
        return;
    for (int i = 0; t->t && i < t->n; i++) {
        tb_target *x = &t->t[i];
        free(x->name);
        free(x->glob);
        free(x->op);
        free(x->dtype);
        free(x->backend);
        free(x->peer);
    }
    free(t->t);
    free(t->path);
    memset(t, 0, sizeof *t);
}
