/* Benchmark configuration parser: JSON with comments -> tb_config.
 *
 * The text level (UTF-8, comments, syntax, where every key and value
 * starts) is jsonc.c's.  The semantic pass here then checks keys, types
 * and ranges and fills the tb_config; its first error is reported as one
 * line:
 *
 *     PATH:LINE:COL: KEYPATH: what is wrong
 *
 * The key and field reference is docs/CONFIG.md. */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/fileio.h"
#include "../base/suggest.h"
#include "../base/jsonc.h"

#define CFG_MAX_OPS 1024           /* entries in "ops" */
#define CFG_MAX_FILE (16u << 20)   /* bytes in a config file */
#define CFG_MAX_ELEMS 9007199254740992.0 /* 2^53: dims and numel */
#define CFG_MAX_SAMPLES 10000000
#define CFG_MAX_ITERS 1000000000
#define CFG_MAX_FREE_KEYS 64 /* keys in a params or backend object */
#define CFG_KP 256 /* key path buffer */

#if defined(__GNUC__)
#define CFG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CFG_PRINTF(f, a)
#endif

/* ---------------------------------------------------------------------
 * Parser state and messages
 * ------------------------------------------------------------------- */

typedef struct parser {
    const char *path;
    const tb_jsonc *doc; /* the parsed text, with positions */
    char *err;
    size_t errlen;
} parser;

static const tb_jsonc_pos *pos_find(const parser *P, const cJSON *node)
{
    return tb_jsonc_find(P->doc, node);
}

CFG_PRINTF(6, 0)
static int vfail_at(parser *P, int code, int line, int col, const char *kp,
                    const char *fmt, va_list ap)
{
    tb_jsonc_vmessage(P->err, P->errlen, P->path, line, col, kp, fmt, ap);
    return code;
}

CFG_PRINTF(6, 7)
static int fail_at(parser *P, int code, int line, int col, const char *kp,
                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail_at(P, code, line, col, kp, fmt, ap);
    va_end(ap);
    return code;
}

/* TB_EINVAL at node's value (at_key false) or at its key (at_key true). */
CFG_PRINTF(5, 6)
static int fail(parser *P, const cJSON *node, bool at_key, const char *kp,
                const char *fmt, ...)
{
    int line, col;
    tb_jsonc_where(P->doc, node, at_key, &line, &col);
    va_list ap;
    va_start(ap, fmt);
    vfail_at(P, TB_EINVAL, line, col, kp, fmt, ap);
    va_end(ap);
    return TB_EINVAL;
}

static void node_pos(const parser *P, const cJSON *node, int *line,
                     int *col)
{
    tb_jsonc_where(P->doc, node, false, line, col);
}

/* Key paths longer than CFG_KP are cut; they only appear in messages. */
static void kp_key(char *buf, const char *parent, const char *key)
{
    char tmp[48];
    tb_jsonc_shorten(key, tmp, 40);
    int r = parent && *parent ? snprintf(buf, CFG_KP, "%s.%s", parent, tmp)
                              : snprintf(buf, CFG_KP, "%s", tmp);
    if (r >= CFG_KP)
        memcpy(buf + CFG_KP - 4, "...", 4);
}

static void kp_idx(char *buf, const char *parent, int i)
{
    if (snprintf(buf, CFG_KP, "%s[%d]", parent, i) >= CFG_KP)
        memcpy(buf + CFG_KP - 4, "...", 4);
}

/* ---------------------------------------------------------------------
 * Generic checks
 * ------------------------------------------------------------------- */

/* obj must be an object whose keys are all in `keys` (NULL-terminated;
 * keys == NULL accepts any key) and appear once.  kp is obj's key path,
 * "" for the top level. */
static int check_object(parser *P, const cJSON *obj, const char *kp,
                        const char *const *keys)
{
    char got[64], msg[400];
    if (!cJSON_IsObject(obj))
        return fail(P, obj, false, kp, "expected an object, got %s",
                    tb_jsonc_describe(obj, got, sizeof(got)));
    /* Free-form objects (parameters, backend axes) are small; the bound
     * keeps the quadratic duplicate check cheap on hostile input. */
    int nkeys = cJSON_GetArraySize(obj);
    if (!keys && nkeys > CFG_MAX_FREE_KEYS)
        return fail(P, obj, false, kp, "too many keys (%d, at most %d)",
                    nkeys, CFG_MAX_FREE_KEYS);
    const cJSON *at;
    if (tb_jsonc_check_keys(obj, keys, !*kp, &at, msg, sizeof msg))
        return fail(P, at, true, kp, "%s", msg);
    return 0;
}

/* Reads a finite number in [lo, hi] (an integer if `integer`).  `want`
 * describes the accepted values: "expected WANT, got X". */
static int get_number(parser *P, const cJSON *v, const char *kp,
                      const char *want, double lo, double hi, bool integer,
                      double *out)
{
    char got[64];
    *out = 0;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
        v->valuedouble < lo || v->valuedouble > hi ||
        (integer && v->valuedouble != floor(v->valuedouble)))
        return fail(P, v, false, kp, "expected %s, got %s", want,
                    tb_jsonc_describe(v, got, sizeof(got)));
    *out = v->valuedouble;
    return 0;
}

static int get_int(parser *P, const cJSON *v, const char *kp,
                   const char *want, int lo, int hi, int *out)
{
    double d;
    int rc = get_number(P, v, kp, want, lo, hi, true, &d);
    if (rc == 0)
        *out = (int)d;
    return rc;
}

/* A non-empty string without control bytes, shorter than n bytes. */
static int get_string(parser *P, const cJSON *v, const char *kp,
                      const char *what, char *out, size_t n)
{
    char got[64];
    if (!cJSON_IsString(v))
        return fail(P, v, false, kp, "expected %s (a string), got %s", what,
                    tb_jsonc_describe(v, got, sizeof(got)));
    const char *s = v->valuestring;
    size_t l = strlen(s);
    if (l == 0)
        return fail(P, v, false, kp, "%s must not be empty", what);
    if (l >= n)
        return fail(P, v, false, kp, "%s is too long (%zu bytes, at most %zu)",
                    what, l, n - 1);
    for (size_t i = 0; i < l; i++)
        if ((unsigned char)s[i] < 32 || s[i] == 127)
            return fail(P, v, false, kp, "%s contains a control character",
                        what);
    memcpy(out, s, l + 1);
    return 0;
}

/* ---------------------------------------------------------------------
 * Sections
 * ------------------------------------------------------------------- */

static int parse_seed(parser *P, const cJSON *v, uint64_t *seed)
{
    char got[64];
    const char *want = "an unsigned 64-bit integer";
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
        v->valuedouble < 0 || v->valuedouble != floor(v->valuedouble) ||
        v->valuedouble > 18446744073709551616.0)
        return fail(P, v, false, "seed", "expected %s, got %s", want,
                    tb_jsonc_describe(v, got, sizeof(got)));
    if (v->valuedouble < CFG_MAX_ELEMS) {
        *seed = (uint64_t)v->valuedouble;
        return 0;
    }
    /* Above 2^53 a double is not exact: read the digits themselves. */
    const tb_jsonc_pos *e = pos_find(P, v);
    if (e) {
        const char *s = P->doc->text + e->off;
        size_t n = 0;
        while (e->off + n < P->doc->len && s[n] >= '0' && s[n] <= '9')
            n++;
        if (n > 0 && n < 21 &&
            (e->off + n == P->doc->len ||
             (s[n] != '.' && s[n] != 'e' && s[n] != 'E'))) {
            char digits[24];
            memcpy(digits, s, n);
            digits[n] = '\0';
            errno = 0;
            unsigned long long u = strtoull(digits, NULL, 10);
            if (errno == 0) {
                *seed = (uint64_t)u;
                return 0;
            }
        }
    }
    return fail(P, v, false, "seed",
                "expected %s written as plain digits, got %s", want,
                tb_jsonc_describe(v, got, sizeof(got)));
}

/* A number key of "warmup" or "measure": its range (want says it in
 * words), and where it goes: *d (divided by per, when set: ms -> s), or
 * *i (integers). */
typedef struct num_key {
    const char *key;
    const char *want;
    double lo, hi;
    double per;
    double *d;
    int *i;
} num_key;

/* Read the keys k[0..n) of section (an object, whose keys are checked)
 * that obj has, in order.  0 or the first error. */
static int get_keys(parser *P, const cJSON *obj, const char *section,
                    const num_key *k, int n)
{
    for (int j = 0; j < n; j++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, k[j].key);
        char kp[CFG_KP];
        double d = 0; /* set by get_number; read only then */
        if (!v)
            continue;
        kp_key(kp, section, k[j].key);
        int rc = k[j].i ? get_int(P, v, kp, k[j].want, (int)k[j].lo,
                                  (int)k[j].hi, k[j].i)
                        : get_number(P, v, kp, k[j].want, k[j].lo, k[j].hi,
                                     false, &d);
        if (rc)
            return rc;
        if (k[j].d)
            *k[j].d = k[j].per ? d / k[j].per : d;
    }
    return 0;
}

static int parse_warmup(parser *P, const cJSON *obj, tb_cfg_warmup *w)
{
    static const char *const keys[] = {"min_time_ms", "min_iters", NULL};
    int rc = check_object(P, obj, "warmup", keys);
    if (rc)
        return rc;
    const num_key k[] = {
        {.key = "min_time_ms", .d = &w->min_time_s, .per = 1000.0,
         .want = "a number of milliseconds in [0, 3600000]", .lo = 0,
         .hi = 3600000},
        {.key = "min_iters", .i = &w->min_iters,
         .want = "an integer in [1, 1000000000]", .lo = 1,
         .hi = CFG_MAX_ITERS},
    };
    return get_keys(P, obj, "warmup", k, 2);
}

/* measure.instructions or measure.cache (key): a source's name. */
static int parse_instr_source(parser *P, const cJSON *v, const char *key,
                              int *out)
{
    static const char *const src[] = {"none", "perf", "callgrind", "auto"};
    char got[64];
    int k = -1;
    for (int i = 0; cJSON_IsString(v) && i < 4; i++)
        if (!strcmp(v->valuestring, src[i]))
            k = i;
    if (k < 0)
        return fail(P, v, false, key,
                    "expected \"none\", \"perf\", \"callgrind\" or "
                    "\"auto\", got %s", tb_jsonc_describe(v, got, sizeof(got)));
    *out = k;
    return 0;
}

static int parse_measure(parser *P, const cJSON *obj, tb_cfg_measure *m)
{
    static const char *const keys[] = {"sample_time_ms", "min_samples",
                                       "max_samples",    "ci_target",
                                       "max_time_s",     "rounds",
                                       "timeout_s",      "instructions",
                                       "instructions_iters", "cache",
                                       "breakdown", "breakdown_steps",
                                       NULL};
    int rc = check_object(P, obj, "measure", keys);
    if (rc)
        return rc;
    /* in the order they are checked: samples (and their order), then the
     * rest; the first error is the one reported */
    const num_key k[] = {
        {.key = "sample_time_ms", .d = &m->sample_time_s, .per = 1000.0,
         .lo = DBL_MIN, .hi = 60000,
         .want = "a number of milliseconds > 0 and <= 60000"},
        {.key = "min_samples", .i = &m->min_samples, .lo = 3,
         .hi = CFG_MAX_SAMPLES, .want = "an integer in [3, 10000000]"},
        {.key = "max_samples", .i = &m->max_samples, .lo = 3,
         .hi = CFG_MAX_SAMPLES, .want = "an integer in [3, 10000000]"},
        {.key = "ci_target", .d = &m->ci_target, .lo = DBL_MIN,
         .hi = nextafter(1.0, 0.0),
         .want = "a number > 0 and < 1 (e.g. 0.02 for 2%)"},
        {.key = "rounds", .i = &m->rounds, .lo = 1,
         .hi = TB_CFG_MAX_ROUNDS,
         .want = "an integer in [1, " TB_STR(TB_CFG_MAX_ROUNDS) "]"},
        {.key = "max_time_s", .d = &m->max_time_s, .lo = DBL_MIN,
         .hi = 86400, .want = "a number of seconds > 0 and <= 86400"},
        {.key = "timeout_s", .d = &m->timeout_s, .lo = DBL_MIN,
         .hi = 86400, .want = "a number of seconds > 0 and <= 86400"},
        {.key = "instructions_iters", .i = &m->instructions_iters,
         .lo = 1, .hi = 1000000, .want = "an integer in [1, 1000000]"},
        {.key = "breakdown_steps", .i = &m->breakdown_steps, .lo = 0,
         .hi = 1000000,
         .want = "an integer in [0, 1000000] (0: a tenth of the steps "
                 "sampled, 3 to 1000)"},
    };
    if ((rc = get_keys(P, obj, "measure", k, 3)))
        return rc;
    if (m->max_samples < m->min_samples) {
        const cJSON *maxv = cJSON_GetObjectItemCaseSensitive(obj,
                                                             "max_samples");
        const cJSON *at = maxv ? maxv
                               : cJSON_GetObjectItemCaseSensitive(
                                     obj, "min_samples");
        return fail(P, at, false, maxv ? "measure.max_samples"
                                       : "measure.min_samples",
                    "max_samples (%d) must be >= min_samples (%d)",
                    m->max_samples, m->min_samples);
    }
    if ((rc = get_keys(P, obj, "measure", k + 3, 4)))
        return rc;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "instructions");
    if (v && (rc = parse_instr_source(P, v, "measure.instructions",
                                      &m->instructions)))
        return rc;
    v = cJSON_GetObjectItemCaseSensitive(obj, "cache");
    if (v && (rc = parse_instr_source(P, v, "measure.cache", &m->cache)))
        return rc;
    if ((rc = get_keys(P, obj, "measure", k + 7, 2)))
        return rc;
    if ((v = cJSON_GetObjectItemCaseSensitive(obj, "breakdown"))) {
        char got[64];
        if (!cJSON_IsBool(v))
            return fail(P, v, false, "measure.breakdown",
                        "expected true or false, got %s",
                        tb_jsonc_describe(v, got, sizeof(got)));
        m->breakdown = cJSON_IsTrue(v);
    }
    return 0;
}

static int dtype_one(parser *P, const cJSON *v, const char *kp, bool *out)
{
    char got[64], names[64] = "";
    if (!cJSON_IsString(v))
        return fail(P, v, false, kp, "expected a dtype name, got %s",
                    tb_jsonc_describe(v, got, sizeof(got)));
    tb_dtype dt;
    if (tb_dtype_parse(v->valuestring, &dt) != 0 ||
        (unsigned)dt >= TB_DTYPE_COUNT) {
        size_t n = 0;
        for (int i = 0; i < TB_DTYPE_COUNT && n < sizeof(names); i++) {
            const char *nm = tb_dtype_name((tb_dtype)i);
            int r = snprintf(names + n, sizeof(names) - n, "%s%s",
                             i ? ", " : "", nm ? nm : "?");
            if (r < 0)
                break;
            n += (size_t)r;
        }
        return fail(P, v, false, kp, "unknown dtype %s (known: %s)",
                    tb_jsonc_describe(v, got, sizeof(got)), names);
    }
    out[dt] = true;
    return 0;
}

/* A dtype name or a non-empty list of them; replaces out[]. */
static int parse_dtypes(parser *P, const cJSON *v, const char *kp,
                        bool out[TB_DTYPE_COUNT])
{
    char ckp[CFG_KP];
    memset(out, 0, TB_DTYPE_COUNT * sizeof(bool));
    if (!cJSON_IsArray(v))
        return dtype_one(P, v, kp, out);
    if (!v->child)
        return fail(P, v, false, kp, "expected at least one dtype");
    int i = 0;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        kp_idx(ckp, kp, i);
        int rc = dtype_one(P, e, ckp, out);
        if (rc)
            return rc;
    }
    return 0;
}

/* An op entry's "layout": a layout name (tensor.h) or a non-empty list
 * of them, each a case of its own; absent: contiguous only. */
static int parse_layouts(parser *P, const cJSON *v, const char *kp,
                         bool out[TB_LAYOUT_COUNT])
{
    char got[64], ekp[CFG_KP];
    memset(out, 0, TB_LAYOUT_COUNT * sizeof(bool));
    if (cJSON_IsArray(v) && !v->child)
        return fail(P, v, false, kp, "expected at least one layout");
    const cJSON *e = cJSON_IsArray(v) ? v->child : v;
    for (int i = 0; e; e = cJSON_IsArray(v) ? e->next : NULL, i++) {
        if (cJSON_IsArray(v))
            kp_idx(ekp, kp, i);
        else
            snprintf(ekp, sizeof ekp, "%s", kp);
        tb_layout l;
        if (!cJSON_IsString(e) || tb_layout_parse(e->valuestring, &l))
            return fail(P, e, false, ekp,
                        "unknown layout %s (known: contiguous, transposed, "
                        "strided, sliced)",
                        tb_jsonc_describe(e, got, sizeof(got)));
        if (out[l])
            return fail(P, e, false, ekp, "layout %s is listed twice",
                        e->valuestring);
        out[l] = true;
    }
    return 0;
}

/* An axis value: a string, or a number stored in its shortest form. */
static int axis_value(parser *P, const cJSON *v, const char *kp, char *out)
{
    char got[64];
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble)) {
        tb_jsonc_number(v->valuedouble, out, 32);
        return 0;
    }
    if (cJSON_IsString(v))
        return get_string(P, v, kp, "an axis value", out, 32);
    if (cJSON_IsBool(v)) { /* e.g. cuda's pool: kept as "true"/"false" */
        snprintf(out, 32, "%s", cJSON_IsTrue(v) ? "true" : "false");
        return 0;
    }
    return fail(P, v, false, kp,
                "expected an axis value (a number, a string, true or "
                "false), got %s",
                tb_jsonc_describe(v, got, sizeof(got)));
}

static int parse_axis(parser *P, const cJSON *v, const char *kp,
                      tb_cfg_axis *ax)
{
    char ckp[CFG_KP], tmp[48];
    if (!cJSON_IsArray(v)) {
        ax->n_values = 1;
        node_pos(P, v, &ax->vline[0], &ax->vcol[0]);
        return axis_value(P, v, kp, ax->values[0]);
    }
    int n = cJSON_GetArraySize(v);
    if (n == 0)
        return fail(P, v, false, kp, "expected at least one value");
    if (n > TB_CFG_MAX_AXISVALS)
        return fail(P, v, false, kp, "too many values (%d, at most %d)", n,
                    TB_CFG_MAX_AXISVALS);
    int i = 0;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        kp_idx(ckp, kp, i);
        node_pos(P, e, &ax->vline[i], &ax->vcol[i]);
        int rc = axis_value(P, e, ckp, ax->values[i]);
        if (rc)
            return rc;
        /* Duplicates would make two cases with the same id. */
        for (int j = 0; j < i; j++)
            if (strcmp(ax->values[j], ax->values[i]) == 0)
                return fail(P, e, false, ckp, "duplicate value '%s'",
                            tb_jsonc_shorten(ax->values[i], tmp, 40));
    }
    ax->n_values = n;
    return 0;
}

/* The size *n of list v at kp: a list ("expected EXPECTED, got ..."),
 * not empty (the message EMPTY), at most `most` items ("too many MANY
 * (n, at most most)"). */
static int list_size(parser *P, const cJSON *v, const char *kp,
                     const char *expected, const char *empty,
                     const char *many, int most, int *n)
{
    char got[64];
    if (!cJSON_IsArray(v))
        return fail(P, v, false, kp, "expected %s, got %s", expected,
                    tb_jsonc_describe(v, got, sizeof(got)));
    *n = cJSON_GetArraySize(v);
    if (*n == 0)
        return fail(P, v, false, kp, "%s", empty);
    if (*n > most)
        return fail(P, v, false, kp, "too many %s (%d, at most %d)", many,
                    *n, most);
    return 0;
}

/* Item i of a list, at key path kp (kp[i]), into the array ctx says. */
typedef int (*cfg_item_fn)(parser *P, const cJSON *e, const char *kp,
                           void *ctx, int i);

/* fn on every item of list v at kp, in order; the first error. */
static int parse_items(parser *P, const cJSON *v, const char *kp,
                       cfg_item_fn fn, void *ctx)
{
    char ckp[CFG_KP];
    int i = 0;
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        kp_idx(ckp, kp, i);
        int rc = fn(P, e, ckp, ctx, i);
        if (rc)
            return rc;
    }
    return 0;
}

static int parse_backend(parser *P, const cJSON *v, const char *kp,
                         tb_cfg_backend *b)
{
    char got[64], ckp[CFG_KP];
    node_pos(P, v, &b->line, &b->col);
    if (cJSON_IsString(v))
        return get_string(P, v, kp, "a backend name", b->name,
                          sizeof(b->name));
    if (!cJSON_IsObject(v))
        return fail(P, v, false, kp,
                    "expected a backend name or an object "
                    "{\"name\": ..., AXIS: VALUES}, got %s",
                    tb_jsonc_describe(v, got, sizeof(got)));
    int rc = check_object(P, v, kp, NULL);
    if (rc)
        return rc;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(v, "name");
    if (!name)
        return fail(P, v, false, kp, "missing required key 'name'");
    kp_key(ckp, kp, "name");
    rc = get_string(P, name, ckp, "a backend name", b->name,
                    sizeof(b->name));
    if (rc)
        return rc;
    for (const cJSON *ch = v->child; ch; ch = ch->next) {
        if (ch == name)
            continue;
        kp_key(ckp, kp, ch->string ? ch->string : "");
        if (b->n_axes == (int)(sizeof(b->axes) / sizeof(b->axes[0])))
            return fail(P, ch, true, kp, "too many axes (at most %d)",
                        (int)(sizeof(b->axes) / sizeof(b->axes[0])));
        tb_cfg_axis *ax = &b->axes[b->n_axes];
        /* The key is the axis name: checked like a string value but
         * reported at the key. */
        const char *an = ch->string ? ch->string : "";
        size_t al = strlen(an);
        if (al == 0)
            return fail(P, ch, true, kp, "empty axis name");
        if (al >= sizeof(ax->name))
            return fail(P, ch, true, ckp, "axis name is too long (%zu "
                        "bytes, at most %zu)", al, sizeof(ax->name) - 1);
        for (size_t k = 0; k < al; k++)
            if ((unsigned char)an[k] < 32 || an[k] == 127)
                return fail(P, ch, true, ckp,
                            "axis name contains a control character");
        memcpy(ax->name, an, al + 1);
        const tb_jsonc_pos *e = pos_find(P, ch);
        if (e && e->key_line) {
            ax->line = e->key_line;
            ax->col = e->key_col;
        }
        rc = parse_axis(P, ch, ckp, ax);
        if (rc)
            return rc;
        b->n_axes++;
    }
    return 0;
}

static int backend_item(parser *P, const cJSON *e, const char *kp,
                        void *ctx, int i)
{
    tb_config *cfg = ctx;
    return parse_backend(P, e, kp, &cfg->backends[i]);
}

static int parse_backends(parser *P, const cJSON *v, tb_config *cfg)
{
    cfg->n_backends = 0;
    memset(cfg->backends, 0, sizeof(cfg->backends));
    if (!cJSON_IsArray(v)) {
        cfg->n_backends = 1;
        return parse_backend(P, v, "backends", &cfg->backends[0]);
    }
    int n;
    int rc = list_size(P, v, "backends", "a list of backends",
                       "expected at least one backend", "backends",
                       TB_CFG_MAX_BACKENDS, &n);
    if (rc || (rc = parse_items(P, v, "backends", backend_item, cfg)))
        return rc;
    cfg->n_backends = n;
    return 0;
}

/* A list of 1..TB_MAX_DIMS positive integers. */
static int parse_shape(parser *P, const cJSON *v, const char *kp,
                       tb_shape *s)
{
    char ckp[CFG_KP];
    int n;
    int rc = list_size(P, v, kp, "a shape (a list of dims)",
                       "empty shape (a shape needs at least one dim)",
                       "dims", TB_MAX_DIMS, &n);
    if (rc)
        return rc;
    double numel = 1;
    int i = 0;
    memset(s, 0, sizeof(*s));
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        double d;
        kp_idx(ckp, kp, i);
        rc = get_number(P, e, ckp, "a positive integer", 1, CFG_MAX_ELEMS,
                        true, &d);
        if (rc)
            return rc;
        s->dim[i] = (int64_t)d;
        numel *= d;
    }
    if (numel > CFG_MAX_ELEMS)
        return fail(P, v, false, kp, "shape has too many elements "
                    "(more than 2^53)");
    s->ndim = n;
    return 0;
}

static int shape_item(parser *P, const cJSON *e, const char *kp, void *ctx,
                      int i)
{
    tb_cfg_shapes *sh = ctx;
    return parse_shape(P, e, kp, &sh->in[i]);
}

/* One entry of "shapes": a shape for every input, or a list of shapes,
 * one per input.  A single shape is also copied into in[1..op->n_in) so
 * that readers may index in[] by input either way; n_in says which form
 * was written. */
static int parse_shape_entry(parser *P, const cJSON *v, const char *kp,
                             const tb_op *op, tb_cfg_shapes *sh)
{
    char got[64];
    node_pos(P, v, &sh->line, &sh->col);
    if (!cJSON_IsArray(v))
        return fail(P, v, false, kp,
                    "expected a shape (a list of dims) or a list of shapes "
                    "(one per input), got %s%s",
                    tb_jsonc_describe(v, got, sizeof(got)),
                    cJSON_IsNumber(v) ? " (\"shapes\" is a list of shapes: "
                                        "write [[256, 256]], not [256, 256])"
                                      : "");
    if (!cJSON_IsArray(v->child)) {
        int rc = parse_shape(P, v, kp, &sh->in[0]);
        if (rc)
            return rc;
        sh->n_in = 1;
        for (int i = 1; i < op->n_in && i < TB_MAX_INPUTS; i++)
            sh->in[i] = sh->in[0];
        return 0;
    }
    int n = cJSON_GetArraySize(v);
    if (op->n_in == 0 && n != 1)
        return fail(P, v, false, kp,
                    "%s creates a tensor and takes one shape (the "
                    "output's), got %d",
                    op->name, n);
    if (op->n_in && n != op->n_in)
        return fail(P, v, false, kp,
                    "%s takes %d input%s, got %d shapes (give one shape "
                    "for all inputs, or exactly one per input)",
                    op->name, op->n_in, op->n_in == 1 ? "" : "s", n);
    if (n > TB_MAX_INPUTS) /* an op table bug; never index past in[] */
        return fail(P, v, false, kp, "too many shapes (at most %d)",
                    TB_MAX_INPUTS);
    int rc = parse_items(P, v, kp, shape_item, sh);
    if (rc)
        return rc;
    sh->n_in = n;
    return 0;
}

static int parse_paramset(parser *P, const cJSON *v, const char *kp,
                          const tb_op *op, tb_params *p)
{
    char got[64], ckp[CFG_KP], why[256];
    int rc = check_object(P, v, kp, NULL);
    if (rc)
        return rc;
    memset(p, 0, sizeof(*p));
    for (const cJSON *ch = v->child; ch; ch = ch->next) {
        const char *name = ch->string ? ch->string : "";
        kp_key(ckp, kp, name);
        int idx = tb_op_param_index(op, name);
        bool text = idx >= 0 && op->params[idx].kind == TB_PARAM_STRING;
        double d = 0;
        if (text && !cJSON_IsString(ch)) {
            return fail(P, ch, false, ckp, "expected a string, got %s",
                        tb_jsonc_describe(ch, got, sizeof(got)));
        } else if (idx >= 0 && !text && cJSON_IsBool(ch)) {
            if (op->params[idx].kind != TB_PARAM_BOOL)
                return fail(P, ch, false, ckp, "expected a number, got %s",
                            tb_jsonc_describe(ch, got, sizeof(got)));
            d = cJSON_IsTrue(ch) ? 1 : 0;
        } else if (idx >= 0 && !text && (!cJSON_IsNumber(ch) ||
                                !isfinite(ch->valuedouble) ||
                                op->params[idx].kind == TB_PARAM_BOOL)) {
            return fail(P, ch, false, ckp, "expected %s, got %s",
                        op->params[idx].kind == TB_PARAM_BOOL
                            ? "true or false"
                            : "a number",
                        tb_jsonc_describe(ch, got, sizeof(got)));
        } else if (!text) {
            d = cJSON_IsNumber(ch) ? ch->valuedouble : 0;
        }
        why[0] = '\0';
        rc = text ? tb_params_set_str(op, p, name, ch->valuestring, why,
                                      sizeof(why))
                  : tb_params_set(op, p, name, d, why, sizeof(why));
        if (rc == 0)
            continue;
        /* The op table's text may start with "NAME: ", which the key
         * path already says. */
        const char *msg = why;
        size_t nl = strlen(name);
        if (nl && strncmp(msg, name, nl) == 0 && msg[nl] == ':' &&
            msg[nl + 1] == ' ')
            msg += nl + 2;
        if (!*msg)
            msg = rc == TB_ENOTFOUND ? "unknown parameter" : tb_strerror(rc);
        return fail(P, ch, rc == TB_ENOTFOUND || idx < 0, ckp, "%s", msg);
    }
    tb_params_defaults(op, p);
    return 0;
}

/* parse_items' context for the parameter sets of o, an op of table row
 * op. */
typedef struct paramsets_ctx {
    const tb_op *op;
    tb_cfg_op *o;
} paramsets_ctx;

static int paramset_item(parser *P, const cJSON *e, const char *kp,
                         void *ctx, int i)
{
    paramsets_ctx *c = ctx;
    return parse_paramset(P, e, kp, c->op, &c->o->paramsets[i]);
}

static int parse_params(parser *P, const cJSON *v, const char *kp,
                        const tb_op *op, tb_cfg_op *o)
{
    if (cJSON_IsObject(v)) {
        o->n_paramsets = 1;
        return parse_paramset(P, v, kp, op, &o->paramsets[0]);
    }
    int n;
    paramsets_ctx c = {op, o};
    int rc = list_size(P, v, kp, "a parameter object or a list of them",
                       "expected at least one parameter set (use {} for the "
                       "defaults)",
                       "parameter sets", TB_CFG_MAX_PARAMSETS, &n);
    if (rc || (rc = parse_items(P, v, kp, paramset_item, &c)))
        return rc;
    o->n_paramsets = n;
    return 0;
}

/* The op name closest to s when it is a likely typo (at most 2 edits,
 * base/suggest.h). */
static const char *closest_op(const char *s)
{
    const char *names[TB_OP_COUNT];
    for (int i = 0; i < TB_OP_COUNT; i++) {
        const tb_op *k = tb_op_get((tb_op_id)i);
        names[i] = k ? k->name : NULL;
    }
    return tb_closest_within(s, names, TB_OP_COUNT, 2);
}

/* An op entry's "alloc" or "transfers" (key): true, false or a list of
 * both, each listed value a case of its own (out[1]: true, out[0]:
 * false); absent: false only.  no_true (or NULL): an op to which true
 * does not apply ("alloc" of an op that writes into its inputs). */
static int parse_bool_set(parser *P, const cJSON *v, const char *kp,
                          const char *key, bool out[2], const tb_op *no_true)
{
    char got[64], ckp[CFG_KP];
    out[0] = true;
    out[1] = false;
    const cJSON *set = cJSON_GetObjectItemCaseSensitive(v, key);
    if (!set)
        return 0;
    kp_key(ckp, kp, key);
    out[0] = false;
    const cJSON *one = set;
    int k = 0;
    if (cJSON_IsArray(set)) {
        if (!set->child)
            return fail(P, set, false, ckp,
                        "expected true, false or a list of them, got an "
                        "empty list");
        one = set->child;
    }
    for (; one; one = cJSON_IsArray(set) ? one->next : NULL, k++) {
        char ekp[CFG_KP];
        if (cJSON_IsArray(set))
            kp_idx(ekp, ckp, k);
        else
            snprintf(ekp, sizeof ekp, "%s", ckp);
        if (!cJSON_IsBool(one))
            return fail(P, one, false, ekp, "expected true or false, got %s",
                        tb_jsonc_describe(one, got, sizeof(got)));
        bool on = cJSON_IsTrue(one);
        if (out[on])
            return fail(P, one, false, ekp, "%s is listed twice",
                        on ? "true" : "false");
        if (on && no_true)
            return fail(P, one, false, ekp,
                        "%s writes its results into its inputs; "
                        "\"%s\": true does not apply to it",
                        no_true->name, key);
        out[on] = true;
    }
    return 0;
}

static int parse_op(parser *P, const cJSON *v, const char *kp, tb_cfg_op *o)
{
    static const char *const keys[] = {"op",     "shapes", "params",
                                       "dtypes", "alloc",  "transfers",
                                       "layout", NULL};
    char got[64], ckp[CFG_KP];
    int rc = check_object(P, v, kp, keys);
    if (rc)
        return rc;
    node_pos(P, v, &o->line, &o->col);

    const cJSON *name = cJSON_GetObjectItemCaseSensitive(v, "op");
    if (!name)
        return fail(P, v, false, kp, "missing required key 'op'");
    kp_key(ckp, kp, "op");
    if (!cJSON_IsString(name))
        return fail(P, name, false, ckp, "expected an op name, got %s",
                    tb_jsonc_describe(name, got, sizeof(got)));
    const tb_op *op = tb_op_find(name->valuestring);
    if (!op) {
        const char *near = closest_op(name->valuestring);
        char hint[96] = "";
        if (near)
            snprintf(hint, sizeof hint, "did you mean '%s'? ", near);
        return fail(P, name, false, ckp,
                    "unknown op %s (%s'tbench list' shows all %d ops)",
                    tb_jsonc_describe(name, got, sizeof(got)), hint,
                    TB_OP_COUNT);
    }
    o->op = op;

    const cJSON *shapes = cJSON_GetObjectItemCaseSensitive(v, "shapes");
    kp_key(ckp, kp, "shapes");
    if (!shapes)
        return fail(P, v, false, kp, "missing required key 'shapes'");
    if (!cJSON_IsArray(shapes))
        return fail(P, shapes, false, ckp, "expected a list of shapes, got %s",
                    tb_jsonc_describe(shapes, got, sizeof(got)));
    int n = cJSON_GetArraySize(shapes);
    if (n == 0)
        return fail(P, shapes, false, ckp, "expected at least one shape");
    if (n > TB_CFG_MAX_SHAPES)
        return fail(P, shapes, false, ckp, "too many shapes (%d, at most %d)",
                    n, TB_CFG_MAX_SHAPES);
    int i = 0;
    for (const cJSON *e = shapes->child; e; e = e->next, i++) {
        char ekp[CFG_KP];
        kp_idx(ekp, ckp, i);
        rc = parse_shape_entry(P, e, ekp, op, &o->shapes[i]);
        if (rc)
            return rc;
    }
    o->n_shapes = n;

    const cJSON *params = cJSON_GetObjectItemCaseSensitive(v, "params");
    if (params) {
        kp_key(ckp, kp, "params");
        rc = parse_params(P, params, ckp, op, o);
        if (rc)
            return rc;
    } else {
        o->n_paramsets = 1;
        memset(&o->paramsets[0], 0, sizeof(o->paramsets[0]));
        tb_params_defaults(op, &o->paramsets[0]);
    }

    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(v, "dtypes");
    if (dt) {
        kp_key(ckp, kp, "dtypes");
        rc = parse_dtypes(P, dt, ckp, o->dtypes);
        if (rc)
            return rc;
        o->has_dtypes = true;
    }

    const cJSON *lay = cJSON_GetObjectItemCaseSensitive(v, "layout");
    o->layouts[TB_LAYOUT_CONTIGUOUS] = true;
    if (lay) {
        kp_key(ckp, kp, "layout");
        if ((rc = parse_layouts(P, lay, ckp, o->layouts)) != 0)
            return rc;
    }

    /* default: outputs allocated once (out=), data resident on the
     * backend */
    rc = parse_bool_set(P, v, kp, "alloc", o->alloc,
                        op->alias ? op : NULL);
    return rc ? rc : parse_bool_set(P, v, kp, "transfers", o->transfers,
                                    NULL);
}

/* cfg->n_ops counts the ops parsed so far (tb_config_free's bound). */
static int op_item(parser *P, const cJSON *e, const char *kp, void *ctx,
                   int i)
{
    tb_config *cfg = ctx;
    int rc = parse_op(P, e, kp, &cfg->ops[i]);
    if (!rc)
        cfg->n_ops = i + 1;
    return rc;
}

static int parse_ops(parser *P, const cJSON *v, tb_config *cfg)
{
    int n;
    int rc = list_size(P, v, "ops", "a list of ops",
                       "expected at least one op", "ops", CFG_MAX_OPS, &n);
    if (rc)
        return rc;
    cfg->ops = calloc((size_t)n, sizeof(*cfg->ops));
    if (!cfg->ops)
        return fail_at(P, TB_ENOMEM, 0, 0, "ops", "out of memory");
    return parse_items(P, v, "ops", op_item, cfg);
}

static int parse_root(parser *P, const cJSON *root, tb_config *cfg)
{
    static const char *const keys[] = {"name",   "seed",     "warmup",
                                       "measure", "dtypes",  "backends",
                                       "ops",    NULL};
    char got[64];
    int line, col;
    node_pos(P, root, &line, &col);
    if (!cJSON_IsObject(root))
        return fail(P, root, false, "",
                    "expected a JSON object at the top level, got %s",
                    tb_jsonc_describe(root, got, sizeof(got)));
    int rc = check_object(P, root, "", keys);
    if (rc)
        return rc;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (!v)
        return fail(P, root, false, "", "missing required key 'name'");
    rc = get_string(P, v, "name", "a name", cfg->name, sizeof(cfg->name));
    if (rc)
        return rc;
    /* The name becomes part of the result directory's name. */
    for (const char *c = cfg->name; *c; c++) {
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                    "0123456789._-", *c) || (c == cfg->name && *c == '.'))
            return fail(P, v, false, "name",
                        "'%s' may contain only letters, digits, '.', '_' "
                        "and '-', and may not start with '.' (it is part "
                        "of the result directory name)", cfg->name);
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "seed")) &&
        (rc = parse_seed(P, v, &cfg->seed)))
        return rc;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "warmup")) &&
        (rc = parse_warmup(P, v, &cfg->warmup)))
        return rc;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "measure")) &&
        (rc = parse_measure(P, v, &cfg->measure)))
        return rc;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "dtypes")) &&
        (rc = parse_dtypes(P, v, "dtypes", cfg->dtypes)))
        return rc;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "backends")) &&
        (rc = parse_backends(P, v, cfg)))
        return rc;
    v = cJSON_GetObjectItemCaseSensitive(root, "ops");
    if (!v)
        return fail(P, root, false, "", "missing required key 'ops'");
    return parse_ops(P, v, cfg);
}

void tb_config_defaults(tb_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->seed = 42;
    cfg->warmup.min_time_s = 0.05;
    cfg->warmup.min_iters = 3;
    cfg->measure.sample_time_s = 0.001;
    cfg->measure.min_samples = 10;
    cfg->measure.max_samples = 2000;
    cfg->measure.ci_target = 0.02;
    cfg->measure.max_time_s = 1.0;
    cfg->measure.rounds = 1;
    cfg->measure.timeout_s = 300.0;
    cfg->measure.instructions = TB_INSTR_NONE;
    cfg->measure.instructions_iters = 10;
    cfg->measure.cache = TB_INSTR_NONE;
    cfg->measure.breakdown = true;
    cfg->measure.breakdown_steps = 0;
    cfg->dtypes[TB_F32] = true;
    cfg->n_backends = 1;
    strcpy(cfg->backends[0].name, "cpu");
}

void tb_config_free(tb_config *cfg)
{
    if (!cfg)
        return;
    free(cfg->ops);
    cfg->ops = NULL;
    cfg->n_ops = 0;
    free(cfg->text);
    cfg->text = NULL;
}

/* The start of tb_config_parse and tb_config_load: the parser of path,
 * err emptied, cfg (not NULL) set to the defaults. */
static int config_begin(parser *P, const char *path, tb_config *cfg,
                        char *err, size_t errlen)
{
    *P = (parser){.path = path ? path : "<config>", .err = err,
                  .errlen = errlen};
    if (err && errlen)
        err[0] = '\0';
    if (!cfg)
        return fail_at(P, TB_EINVAL, 0, 0, "", "no config to fill");
    tb_config_defaults(cfg);
    return 0;
}

int tb_config_parse(const char *text, size_t len, const char *path,
                    tb_config *cfg, char *err, size_t errlen)
{
    parser P;
    int rc = config_begin(&P, path, cfg, err, errlen);
    if (rc)
        return rc;
    if (path)
        snprintf(cfg->path, sizeof(cfg->path), "%s", path);
    if (!text && len)
        return fail_at(&P, TB_EINVAL, 0, 0, "", "no text");
    if (!text)
        text = "";
    cfg->text = malloc(len + 1);
    if (!cfg->text)
        return fail_at(&P, TB_ENOMEM, 0, 0, "", "out of memory");
    memcpy(cfg->text, text, len);
    cfg->text[len] = '\0';
    tb_jsonc doc;
    tb_jsonc_error e;
    rc = tb_jsonc_parse(text, len, "config", &doc, &e);
    if (rc) {
        fail_at(&P, rc, e.line, e.col, "", "%s", e.msg);
    } else {
        P.doc = &doc;
        rc = parse_root(&P, doc.root, cfg);
        tb_jsonc_free(&doc);
    }
    if (rc)
        tb_config_free(cfg);
    return rc;
}

int tb_config_load(const char *path, tb_config *cfg, char *err,
                   size_t errlen)
{
    parser P;
    int rc = config_begin(&P, path, cfg, err, errlen);
    if (rc)
        return rc;
    if (!path)
        return fail_at(&P, TB_EINVAL, 0, 0, "", "no config file given");
    char *buf = NULL;
    size_t len = 0;
    tb_read_fail why;
    rc = tb_read_file_max(path, CFG_MAX_FILE - 1, 0, &buf, &len, &why);
    if (rc == TB_EIO)
        return fail_at(&P, TB_EIO, 0, 0, "", "cannot %s: %s",
                       why.opening ? "open" : "read", strerror(why.errnum));
    if (rc == TB_ERANGE)
        return fail_at(&P, TB_EIO, 0, 0, "",
                       "file is too large (%u MiB or more)",
                       CFG_MAX_FILE >> 20);
    if (rc)
        return fail_at(&P, TB_ENOMEM, 0, 0, "", "out of memory");
    rc = tb_config_parse(buf, len, path, cfg, err, errlen);
    free(buf);
    return rc;
}
