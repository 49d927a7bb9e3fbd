/* Options of `tbench run` that change the matrix or its settings from the
 * command line: one case without a config file (--op), and overrides of
 * the warm-up and measure settings (--rounds, --max-time...).
 *
 * --op writes a config text and hands it to the config parser, so a
 * command-line case is checked exactly like a file's, and the result file
 * records a config that reproduces it (config[].text). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../ops/op.h"
#include "run_opts.h"

/* Append to buf (of cap bytes, used so far *len); false when it is full. */
static bool put(char *buf, size_t cap, size_t *len, const char *s)
{
    size_t n = strlen(s);
    if (*len + n >= cap)
        return false;
    memcpy(buf + *len, s, n + 1);
    *len += n;
    return true;
}

/* "64x128,128x32" -> "[[64,128],[128,32]]" (one shape per input);
 * "1024x1024" -> "[1024,1024]" (one shape for every input, as in a
 * config).  Dims are digits; the parser checks their values.  0, or
 * TB_EINVAL with the message (as the other two below). */
static int shapes_json(const char *s, char *out, size_t cap, char *err,
                       size_t errlen)
{
    size_t len = 0;
    bool many = strchr(s, ',') != NULL, ok = true;
    out[0] = 0;
    if (strspn(s, "0123456789x,") != strlen(s) || !*s) {
        snprintf(err, errlen, "--shape: '%.80s': expected dims joined by "
                 "'x', one shape per input joined by ',' (e.g. 1024x1024 "
                 "or 64x128,128x32)", s);
        return TB_EINVAL;
    }
    if (many)
        ok = put(out, cap, &len, "[");
    for (const char *p = s; ok;) {
        size_t n = strcspn(p, ",");
        ok = put(out, cap, &len, p == s ? "[" : ",[");
        for (size_t k = 0; ok;) {
            size_t d = strcspn(p + k, "x,");
            if (d == 0 || d > 19) {
                snprintf(err, errlen, "--shape: '%.80s': %s dim", s,
                         d ? "too long a" : "an empty");
                return TB_EINVAL;
            }
            char dim[24];
            snprintf(dim, sizeof dim, "%s%.*s", k ? "," : "", (int)d, p + k);
            ok = put(out, cap, &len, dim);
            k += d;
            if (k == n)
                break;
            k++; /* the 'x' */
        }
        ok = ok && put(out, cap, &len, "]");
        p += n;
        if (!*p)
            break;
        p++; /* the ',' */
    }
    if (ok && many)
        ok = put(out, cap, &len, "]");
    if (!ok) {
        snprintf(err, errlen, "--shape: '%.80s': too long", s);
        return TB_EINVAL;
    }
    return 0;
}

/* ---- --shape ranges ----------------------------------------------------- */

/* One number of a range: digits, 2^K or a decimal exponent (1e6); *v
 * its value.  false when it is none of these or above 2^62. */
static bool range_num(const char *s, size_t n, double *v)
{
    char t[32], *end;
    if (n == 0 || n >= sizeof t)
        return false;
    memcpy(t, s, n);
    t[n] = 0;
    char *caret = strchr(t, '^');
    if (caret) {
        *caret = 0;
        long b = strtol(t, &end, 10), e;
        if (*end || b != 2)
            return false;
        e = strtol(caret + 1, &end, 10);
        if (*end || e < 0 || e > 62 || !caret[1])
            return false;
        *v = ldexp(1, (int)e);
        return true;
    }
    if (strspn(t, "0123456789e") != n || t[0] == 'e')
        return false;
    *v = strtod(t, &end);
    return !*end && *v == floor(*v) && *v <= 4.6e18;
}

/* The values of one dim token: "N" (one) or "A..B[*F]" (A, A*F, A*F^2...
 * up to B; F 2 unless given).  Writes up to max values; returns their
 * count, 0 when the token is malformed. */
static int range_values(const char *s, size_t n, double *out, int max)
{
    const char *dots = NULL;
    for (size_t i = 0; i + 1 < n; i++)
        if (s[i] == '.' && s[i + 1] == '.')
            dots = s + i;
    if (!dots) {
        return range_num(s, n, &out[0]) ? 1 : 0;
    }
    const char *star = memchr(dots, '*', (size_t)(s + n - dots));
    double a, b, f = 2;
    if (!range_num(s, (size_t)(dots - s), &a) ||
        !range_num(dots + 2, (size_t)((star ? star : s + n) - dots - 2),
                   &b) ||
        (star && !range_num(star + 1, (size_t)(s + n - star - 1), &f)) ||
        a < 1 || b < a || f < 2)
        return 0;
    int k = 0;
    for (double v = a; v <= b && k < max; v *= f)
        out[k++] = v;
    return k;
}

/* A --shape value with ranges ("2^10..2^24", "64..1024x64..1024",
 * "1000..1e6*10,1") expanded into out[0..*n) plain shapes: every ranged
 * dim steps together (their counts must agree), the others stay.  0, or
 * TB_EINVAL with the message. */
static int shape_expand(const char *s, char (*out)[256], int max, int *n,
                        char *err, size_t errlen)
{
    enum { MAX_TOK = 64 };
    double vals[MAX_TOK][TB_CFG_MAX_SHAPES];
    int cnt[MAX_TOK], ntok = 0, k = 1;
    char seps[MAX_TOK];
    if (!strstr(s, "..")) { /* no range: shapes_json checks it */
        if (max < 1 || snprintf(out[0], 256, "%s", s) >= 256) {
            snprintf(err, errlen, "--shape: '%.80s': too long or too many",
                     s);
            return TB_EINVAL;
        }
        *n = 1;
        return 0;
    }
    for (const char *p = s;;) {
        size_t len = strcspn(p, "x,");
        if (ntok == MAX_TOK) {
            snprintf(err, errlen, "--shape: '%.80s': too many dims", s);
            return TB_EINVAL;
        }
        cnt[ntok] = range_values(p, len, vals[ntok], TB_CFG_MAX_SHAPES);
        if (!cnt[ntok]) {
            snprintf(err, errlen, "--shape: '%.80s': '%.*s' is not a dim "
                     "or a range A..B[*F] (e.g. 2^10..2^24, "
                     "1000..1e6*10)", s, (int)len, p);
            return TB_EINVAL;
        }
        if (cnt[ntok] > 1) {
            if (k > 1 && cnt[ntok] != k) {
                snprintf(err, errlen, "--shape: '%.80s': its ranges have "
                         "%d and %d values (ranged dims step together)",
                         s, k, cnt[ntok]);
                return TB_EINVAL;
            }
            k = cnt[ntok];
        }
        seps[ntok++] = p[len];
        if (!p[len])
            break;
        p += len + 1;
    }
    if (k > max) {
        snprintf(err, errlen, "--shape: at most %d shapes in all", max);
        return TB_EINVAL;
    }
    for (int i = 0; i < k; i++) {
        size_t len = 0;
        out[i][0] = 0;
        for (int t = 0; t < ntok; t++) {
            double v = vals[t][cnt[t] > 1 ? i : 0];
            int w = snprintf(out[i] + len, 256 - len, "%.0f%s", v,
                             seps[t] == 'x' ? "x" : seps[t] == ',' ? "," : "");
            if (w < 0 || (size_t)w >= 256 - len) {
                snprintf(err, errlen, "--shape: '%.80s': too long", s);
                return TB_EINVAL;
            }
            len += (size_t)w;
        }
    }
    *n = k;
    return 0;
}

/* A parameter value as JSON: true, false or a number (as written). */
static bool json_scalar(const char *v)
{
    if (!strcmp(v, "true") || !strcmp(v, "false"))
        return true;
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    (void)d;
    return *v && !*end && strspn(v, "0123456789.eE+-") == strlen(v);
}

/* "axis=0,keepdim=true" -> {"axis":0,"keepdim":true}; a value that is
 * not a number, true or false is a string parameter's text (its commas
 * kept: tb_params_next), written as a JSON string when its characters
 * are a string parameter's (the config parser checks the kinds). */
static int params_json(const char *s, char *out, size_t cap, char *err,
                       size_t errlen)
{
    size_t len = 0;
    out[0] = 0;
    bool ok = put(out, cap, &len, "{");
    const char *cur = s;
    char tok[64], val[TB_PARAM_STR_MAX + 64];
    for (int i = 0; ok; i++) {
        int got = tb_params_next(&cur, tok, sizeof tok, val, sizeof val);
        if (got == 0)
            break;
        if (got < 0 || !val[0]) {
            snprintf(err, errlen, "--params: '%.80s': expected KEY=VALUE,...",
                     s);
            return TB_EINVAL;
        }
        if (strspn(tok, "abcdefghijklmnopqrstuvwxyz0123456789_") !=
            strlen(tok)) {
            snprintf(err, errlen, "--params: '%s': not a parameter name",
                     tok);
            return TB_EINVAL;
        }
        bool text = !json_scalar(val);
        const char *why = text ? tb_param_str_check(val) : NULL;
        if (why) {
            snprintf(err, errlen, "--params: %s: '%.80s' is not a number, "
                     "true, false or text (%s)", tok, val, why);
            return TB_EINVAL;
        }
        char item[sizeof tok + sizeof val + 16];
        snprintf(item, sizeof item, "%s\"%s\":%s%s%s", i ? "," : "", tok,
                 text ? "\"" : "", val, text ? "\"" : "");
        ok = put(out, cap, &len, item);
    }
    if (!(ok && put(out, cap, &len, "}"))) {
        snprintf(err, errlen, "--params: too long");
        return TB_EINVAL;
    }
    return 0;
}

/* "f32,f64" -> "\"f32\",\"f64\"" (names checked by the parser) */
static int dtypes_json(const char *s, char *out, size_t cap, char *err,
                       size_t errlen)
{
    size_t len = 0;
    out[0] = 0;
    if (!*s || strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789,") !=
                   strlen(s)) {
        snprintf(err, errlen, "--dtype: '%.80s': expected names such as f32 "
                 "or f32,f64", s);
        return TB_EINVAL;
    }
    const char *p = s;
    for (int i = 0; *p; i++) {
        size_t n = strcspn(p, ",");
        char item[64];
        if (n == 0 || n > 16) {
            snprintf(err, errlen, "--dtype: '%.80s': bad name", s);
            return TB_EINVAL;
        }
        snprintf(item, sizeof item, "%s\"%.*s\"", i ? "," : "", (int)n, p);
        if (!put(out, cap, &len, item)) {
            snprintf(err, errlen, "--dtype: too long");
            return TB_EINVAL;
        }
        p += n;
        if (*p)
            p++;
    }
    return 0;
}

int tb_run_backend_split(const char *arg, char (*spec)[TB_RUN_SPEC_LEN],
                         char (*name)[TB_RUN_SPEC_LEN], int *n, int max,
                         char *err, size_t errlen)
{
    static const char namech[] = "abcdefghijklmnopqrstuvwxyz0123456789_-";
    const char *p = arg;
    do {
        size_t len = 0;
        int depth = 0;
        while (p[len] && (depth || p[len] != ',')) {
            depth += p[len] == '[' ? 1 : p[len] == ']' ? -1 : 0;
            len++;
        }
        size_t nl = strspn(p, namech);
        bool ok = len > 0 && nl > 0 && len < TB_RUN_SPEC_LEN &&
                  (nl == len || (p[nl] == '[' && p[len - 1] == ']' &&
                                 len > nl + 2));
        /* inside the brackets: AXIS=V[,V...] joined by ';' */
        for (size_t k = nl + 1; ok && nl < len && k < len - 1;) {
            size_t an = strspn(p + k, namech);
            ok = an > 0 && p[k + an] == '=';
            k += an + 1;
            for (bool more = true; ok && more;) {
                size_t vn = strspn(p + k, "abcdefghijklmnopqrstuvwxyzABCDEF"
                                          "GHIJKLMNOPQRSTUVWXYZ0123456789_.-");
                ok = vn > 0;
                k += vn;
                more = k < len - 1 && p[k] == ',';
                k += more;
            }
            if (ok && k < len - 1)
                ok = p[k] == ';' && k + 1 < len - 1;
            k += ok;
        }
        if (!ok) {
            snprintf(err, errlen, "--backend: '%.*s' is not NAME or "
                     "NAME[AXIS=V,V;AXIS=V] (e.g. cpu or "
                     "'cpu[threads=1,2;isa=avx2]')", (int)(len < 120 ? len
                                                                   : 120),
                     p);
            return TB_EINVAL;
        }
        if (*n == max) {
            snprintf(err, errlen, "--backend: at most %d backends", max);
            return TB_EINVAL;
        }
        snprintf(spec[*n], TB_RUN_SPEC_LEN, "%.*s", (int)len, p);
        snprintf(name[*n], TB_RUN_SPEC_LEN, "%.*s", (int)nl, p);
        (*n)++;
        p += len;
    } while (*p++ == ',');
    return 0;
}

/* A backend spec (checked by tb_run_backend_split) as a config's
 * backends entry: "cpu" -> "cpu"; "cpu[threads=1,2;isa=avx2]" ->
 * {"name": "cpu", "threads": ["1", "2"], "isa": ["avx2"]}. */
static bool backend_json(const char *spec, char *out, size_t cap,
                         size_t *len)
{
    size_t nl = strcspn(spec, "[");
    char item[TB_RUN_SPEC_LEN + 16];
    snprintf(item, sizeof item, spec[nl] ? "{\"name\": \"%.*s\"" : "\"%.*s\"",
             (int)nl, spec);
    bool ok = put(out, cap, len, item);
    for (const char *p = spec + nl; ok && (*p == '[' || *p == ';');) {
        p++;
        size_t an = strcspn(p, "=");
        snprintf(item, sizeof item, ", \"%.*s\": [", (int)an, p);
        ok = put(out, cap, len, item);
        p += an + 1;
        for (int i = 0; ok; i++) {
            size_t vn = strcspn(p, ",;]");
            snprintf(item, sizeof item, "%s\"%.*s\"", i ? ", " : "", (int)vn,
                     p);
            ok = put(out, cap, len, item);
            p += vn;
            if (*p != ',')
                break;
            p++;
        }
        ok = ok && put(out, cap, len, "]");
        if (*p == ']')
            ok = ok && put(out, cap, len, "}");
    }
    return ok;
}

int tb_run_quick_config(const tb_run_quick *q, tb_config *cfg, char *err,
                        size_t errlen)
{
    char shapes[32768], params[1024], dtypes[256], backends[4096];
    char cmd[4096], text[49152];
    if (strspn(q->op, "abcdefghijklmnopqrstuvwxyz0123456789_") !=
            strlen(q->op) || !*q->op) {
        snprintf(err, errlen, "--op: '%.80s' is not an op name (see 'tbench "
                 "list')", q->op);
        return TB_EINVAL;
    }
    if (!q->n_shapes) {
        snprintf(err, errlen, "--op %s: --shape is required (e.g. --shape "
                 "1024x1024)", q->op);
        return TB_EINVAL;
    }
    size_t sl = 0, bl = 0, cl = 0;
    bool ok = put(cmd, sizeof cmd, &cl, "tbench run --op ") &&
              put(cmd, sizeof cmd, &cl, q->op);
    shapes[0] = 0;
    static char plain[TB_CFG_MAX_SHAPES][256];
    int total = 0;
    for (int i = 0; i < q->n_shapes; i++) {
        int k = 0;
        if (shape_expand(q->shapes[i], plain, TB_CFG_MAX_SHAPES - total, &k,
                         err, errlen))
            return TB_EINVAL;
        for (int j = 0; j < k; j++) {
            char one[2048];
            if (shapes_json(plain[j], one, sizeof one, err, errlen))
                return TB_EINVAL;
            ok = ok && put(shapes, sizeof shapes, &sl, total++ ? ", " : "") &&
                 put(shapes, sizeof shapes, &sl, one);
        }
        ok = ok && put(cmd, sizeof cmd, &cl, " --shape ") &&
             put(cmd, sizeof cmd, &cl, q->shapes[i]);
    }
    backends[0] = 0;
    for (int i = 0; i < q->n_backends; i++)
        ok = ok && put(backends, sizeof backends, &bl, i ? ", " : "") &&
             backend_json(q->backends[i], backends, sizeof backends, &bl) &&
             put(cmd, sizeof cmd, &cl, " --backend '") &&
             put(cmd, sizeof cmd, &cl, q->backends[i]) &&
             put(cmd, sizeof cmd, &cl, "'");
    if (!q->n_backends)
        ok = ok && put(backends, sizeof backends, &bl, "\"cpu\"");
    if (q->params)
        ok = ok && put(cmd, sizeof cmd, &cl, " --params ") &&
             put(cmd, sizeof cmd, &cl, q->params);
    if (q->dtype)
        ok = ok && put(cmd, sizeof cmd, &cl, " --dtype ") &&
             put(cmd, sizeof cmd, &cl, q->dtype);
    if (!ok) {
        snprintf(err, errlen, "--op: the cases are too many to describe");
        return TB_EINVAL;
    }
    if (params_json(q->params ? q->params : "", params, sizeof params, err,
                    errlen) ||
        dtypes_json(q->dtype ? q->dtype : "f32", dtypes, sizeof dtypes, err,
                    errlen))
        return TB_EINVAL;
    int n = snprintf(text, sizeof text,
                     "// written by: %s\n"
                     "{\n  \"name\": \"%s\",\n  \"dtypes\": [%s],\n"
                     "  \"backends\": [%s],\n"
                     "  \"ops\": [{\"op\": \"%s\", \"shapes\": [%s], "
                     "\"params\": %s}]\n}\n",
                     cmd, q->op, dtypes, backends, q->op, shapes, params);
    if (n < 0 || (size_t)n >= sizeof text) {
        snprintf(err, errlen, "--op: the cases are too many to describe");
        return TB_EINVAL;
    }
    return tb_config_parse(text, (size_t)n, "command line (--op)", cfg, err,
                           errlen);
}

/* ---- measure overrides --------------------------------------------------- */

typedef struct ovr_spec {
    const char *opt;   /* long option name */
    const char *key;   /* config key it overrides (for messages) */
    bool integer;
    double lo, hi;     /* inclusive range, unless lo_open/hi_open */
    bool lo_open;
} ovr_spec;

/* Same ranges as the config keys (docs/CONFIG.md). */
static const ovr_spec specs[TB_OVR_COUNT] = {
    [TB_OVR_WARMUP_MS] = {"warmup-ms", "warmup.min_time_ms", false, 0, 3.6e6,
                          false},
    [TB_OVR_WARMUP_ITERS] = {"warmup-iters", "warmup.min_iters", true, 1, 1e9,
                             false},
    [TB_OVR_SAMPLE_MS] = {"sample-ms", "measure.sample_time_ms", false, 0,
                          60000, true},
    [TB_OVR_MIN_SAMPLES] = {"min-samples", "measure.min_samples", true, 3,
                            1e7, false},
    [TB_OVR_MAX_SAMPLES] = {"max-samples", "measure.max_samples", true, 3,
                            1e7, false},
    [TB_OVR_CI_TARGET] = {"ci-target", "measure.ci_target", false, 0, 1,
                          true},
    [TB_OVR_MAX_TIME] = {"max-time", "measure.max_time_s", false, 0, 86400,
                         true},
    [TB_OVR_ROUNDS] = {"rounds", "measure.rounds", true, 1, TB_CFG_MAX_ROUNDS,
                       false},
    [TB_OVR_TIMEOUT] = {"timeout", "measure.timeout_s", false, 0, 86400,
                        true},
};

int tb_run_override_set(tb_run_overrides *o, tb_override which,
                        const char *text, char *err, size_t errlen)
{
    const ovr_spec *s = &specs[which];
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    bool bad = end == text || *end || errno || !isfinite(v) ||
               (s->integer && v != floor(v));
    bool above = which == TB_OVR_CI_TARGET ? v >= s->hi : v > s->hi;
    if (bad || v < s->lo || (s->lo_open && v <= s->lo) || above) {
        snprintf(err, errlen, "--%s: '%.60s' is not %s %s %g %s %g "
                 "(as %s)", s->opt, text,
                 s->integer ? "an integer" : "a number",
                 s->lo_open ? "above" : "from", s->lo,
                 !s->lo_open ? "to"
                 : which == TB_OVR_CI_TARGET ? "and below" : "and at most",
                 s->hi, s->key);
        return TB_EINVAL;
    }
    o->set[which] = true;
    o->v[which] = v;
    return 0;
}

const char *tb_run_override_name(tb_override which)
{
    return specs[which].opt;
}

int tb_run_overrides_apply(const tb_run_overrides *o, tb_config *cfg,
                           char *err, size_t errlen)
{
    const double *v = o->v;
    if (o->set[TB_OVR_WARMUP_MS])
        cfg->warmup.min_time_s = v[TB_OVR_WARMUP_MS] / 1e3;
    if (o->set[TB_OVR_WARMUP_ITERS])
        cfg->warmup.min_iters = (int)v[TB_OVR_WARMUP_ITERS];
    if (o->set[TB_OVR_SAMPLE_MS])
        cfg->measure.sample_time_s = v[TB_OVR_SAMPLE_MS] / 1e3;
    if (o->set[TB_OVR_MIN_SAMPLES])
        cfg->measure.min_samples = (int)v[TB_OVR_MIN_SAMPLES];
    if (o->set[TB_OVR_MAX_SAMPLES])
        cfg->measure.max_samples = (int)v[TB_OVR_MAX_SAMPLES];
    if (o->set[TB_OVR_CI_TARGET])
        cfg->measure.ci_target = v[TB_OVR_CI_TARGET];
    if (o->set[TB_OVR_MAX_TIME])
        cfg->measure.max_time_s = v[TB_OVR_MAX_TIME];
    if (o->set[TB_OVR_ROUNDS])
        cfg->measure.rounds = (int)v[TB_OVR_ROUNDS];
    if (o->set[TB_OVR_TIMEOUT])
        cfg->measure.timeout_s = v[TB_OVR_TIMEOUT];
    if (cfg->measure.min_samples > cfg->measure.max_samples) {
        snprintf(err, errlen, "%s: measure.min_samples (%d) is above "
                 "measure.max_samples (%d) once the command-line settings "
                 "are applied", cfg->path, cfg->measure.min_samples,
                 cfg->measure.max_samples);
        return TB_EINVAL;
    }
    return 0;
}
