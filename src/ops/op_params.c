/* The op table's parameter helpers (params set, defaulted, formatted),
 * the axis, permute and window arithmetic the shape rules and the
 * kernels share, and the rules' error message.  See op.h. */
#include "op.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../base/error.h"
#include "op_rules.h"

int tb_op_fail(char *err, size_t len, int code, const char *fmt, ...)
{
    if (err && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, len, fmt, ap);
        va_end(ap);
    }
    return code;
}

int tb_axis_norm(int64_t axis, int ndim, int *ax)
{
    if (axis < -ndim || axis >= ndim)
        return TB_EPARAM;
    *ax = (int)(axis < 0 ? axis + ndim : axis);
    return 0;
}

int tb_permute_dims(const tb_params *p, int ndim, int perm[TB_MAX_DIMS],
                    char *err, size_t errlen)
{
    if (ndim < 1 || ndim > TB_MAX_DIMS)
        return tb_op_fail(err, errlen, TB_EPARAM,
                          "permute: %d dims (allowed 1..%d)", ndim,
                          TB_MAX_DIMS);
    int nset = 0;
    for (int i = 0; i < TB_MAX_DIMS; i++)
        nset += tb_params_has(p, i);
    if (nset == 0) {
        for (int i = 0; i < ndim; i++)
            perm[i] = ndim - 1 - i;
        return 0;
    }
    bool seen[TB_MAX_DIMS] = {false};
    for (int i = 0; i < TB_MAX_DIMS; i++) {
        if (i >= ndim) {
            if (tb_params_has(p, i))
                return tb_op_fail(
                    err, errlen, TB_EPARAM,
                    "permute: p%d is set but the input has only %d "
                    "dims (give p0..p%d)",
                    i, ndim, ndim - 1);
            continue;
        }
        if (!tb_params_has(p, i))
            return tb_op_fail(
                err, errlen, TB_EPARAM,
                "permute: p%d is missing (give all of p0..p%d, or "
                "none to reverse the dims)",
                i, ndim - 1);
        int ax;
        if (!(p->v[i] >= -ndim && p->v[i] < ndim) ||
            p->v[i] != floor(p->v[i]) ||
            tb_axis_norm((int64_t)p->v[i], ndim, &ax))
            return tb_op_fail(
                err, errlen, TB_EPARAM,
                "permute: p%d = %g is not a dim of a %d-dim input", i, p->v[i],
                ndim);
        if (seen[ax])
            return tb_op_fail(
                err, errlen, TB_EPARAM,
                "permute: dim %d is named twice (p0..p%d must be a "
                "permutation)",
                ax, ndim - 1);
        seen[ax] = true;
        perm[i] = ax;
    }
    return 0;
}

int64_t tb_window_out(int64_t in, int64_t k, int64_t stride, int64_t pad,
                      int64_t dil)
{
    if (in < 1 || k < 1 || stride < 1 || pad < 0 || dil < 1)
        return 0;
    int64_t span = in + 2 * pad; /* padded length, >= 1 */
    /* The window covers dil*(k-1)+1 elements; compare without overflow. */
    if (k - 1 > (span - 1) / dil)
        return 0;
    return (span - (dil * (k - 1) + 1)) / stride + 1;
}

bool tb_params_has(const tb_params *p, int idx)
{
    return p && idx >= 0 && idx < TB_MAX_PARAMS && (p->set >> idx) & 1u;
}

int tb_op_param_index(const tb_op *op, const char *name)
{
    for (int i = 0; i < op->n_params; i++)
        if (strcmp(op->params[i].name, name) == 0)
            return i;
    return -1;
}

/* The process's string table (see TB_PARAM_STRING): texts interned
 * once, never freed, handle = index + 1.  A run holds a few equations;
 * the bound keeps it a static array. */
#define STR_TABLE_MAX 256
#define STR_OF(x) #x
#define STR_OF_VALUE(x) STR_OF(x)
static char str_table[STR_TABLE_MAX][TB_PARAM_STR_MAX + 1];
static int str_table_n;
static pthread_mutex_t str_table_lock = PTHREAD_MUTEX_INITIALIZER;

const char *tb_param_str_check(const char *s)
{
    size_t n = strlen(s);
    if (n == 0)
        return "empty text";
    if (n > TB_PARAM_STR_MAX)
        return "longer than " STR_OF_VALUE(TB_PARAM_STR_MAX) " characters";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || strchr(TB_PARAM_STR_PUNCT, c)))
            return "a character other than a letter, a digit or one of "
                   "\"" TB_PARAM_STR_PUNCT "\"";
    }
    return NULL;
}

/* The handle of text s (checked), interned on first use; 0 when the
 * table is full. */
static int str_intern(const char *s)
{
    pthread_mutex_lock(&str_table_lock);
    int h = 0;
    for (int i = 0; i < str_table_n && !h; i++)
        if (!strcmp(str_table[i], s))
            h = i + 1;
    if (!h && str_table_n < STR_TABLE_MAX) {
        snprintf(str_table[str_table_n], sizeof str_table[0], "%s", s);
        h = ++str_table_n;
    }
    pthread_mutex_unlock(&str_table_lock);
    return h;
}

const char *tb_params_str(const tb_params *p, int idx)
{
    if (!tb_params_has(p, idx))
        return NULL;
    double v = p->v[idx];
    pthread_mutex_lock(&str_table_lock);
    const char *s = v >= 1 && v <= str_table_n && v == floor(v)
                        ? str_table[(int)v - 1]
                        : NULL;
    pthread_mutex_unlock(&str_table_lock);
    return s;
}

/* "op 'x' has no parameter 'y' (parameters: ...)". */
static int no_such_param(const tb_op *op, const char *name, char *err,
                         size_t errlen)
{
    char names[256] = "";
    for (int k = 0; k < op->n_params; k++) {
        strncat(names, k ? ", " : "", sizeof names - strlen(names) - 1);
        strncat(names, op->params[k].name, sizeof names - strlen(names) - 1);
    }
    return tb_op_fail(err, errlen, TB_ENOTFOUND,
                      "op '%s' has no parameter '%s' (parameters: %s)",
                      op->name, name, op->n_params ? names : "none");
}

int tb_params_set_str(const tb_op *op, tb_params *p, const char *name,
                      const char *s, char *err, size_t errlen)
{
    int i = tb_op_param_index(op, name);
    if (i < 0)
        return no_such_param(op, name, err, errlen);
    if (op->params[i].kind != TB_PARAM_STRING)
        return tb_op_fail(err, errlen, TB_EPARAM,
                          "%s: expected a number, got text '%s'", name, s);
    const char *why = tb_param_str_check(s);
    if (why)
        return tb_op_fail(err, errlen, TB_EPARAM, "%s: '%.*s': %s", name,
                          TB_PARAM_STR_MAX + 8, s, why);
    int h = str_intern(s);
    if (!h)
        return tb_op_fail(err, errlen, TB_ENOMEM,
                          "%s: more than %d distinct texts in one run", name,
                          STR_TABLE_MAX);
    p->v[i] = h;
    p->set |= 1u << i;
    return 0;
}

int tb_params_set(const tb_op *op, tb_params *p, const char *name, double v,
                  char *err, size_t errlen)
{
    int i = tb_op_param_index(op, name);
    if (i < 0)
        return no_such_param(op, name, err, errlen);
    if (op->params[i].kind == TB_PARAM_STRING)
        return tb_op_fail(err, errlen, TB_EPARAM,
                          "%s: expected text (e.g. \"%s\"), got %g", name,
                          op->str_default ? op->str_default : "",
                          v);
    const tb_param_spec *s = &op->params[i];
    if (!isfinite(v))
        return tb_op_fail(err, errlen, TB_EPARAM, "%s: value must be finite",
                          name);
    if (s->kind != TB_PARAM_FLOAT && v != floor(v))
        return tb_op_fail(err, errlen, TB_EPARAM,
                          "%s: expected an integer, got %g", name, v);
    if (s->kind == TB_PARAM_BOOL && v != 0 && v != 1)
        return tb_op_fail(err, errlen, TB_EPARAM, "%s: expected true or false",
                          name);
    if (v < s->min || v > s->max)
        return tb_op_fail(err, errlen, TB_EPARAM,
                          "%s: %g is out of range [%g, %g]", name, v, s->min,
                          s->max);
    p->v[i] = v;
    p->set |= 1u << i;
    return 0;
}

int tb_params_next(const char **cur, char *name, size_t name_len,
                   char *value, size_t value_len)
{
    const char *s = *cur;
    if (!*s)
        return 0;
    size_t n = strcspn(s, ",");
    const char *eq = memchr(s, '=', n);
    if (!eq || eq == s || (size_t)(eq - s) >= name_len)
        return TB_EINVAL;
    memcpy(name, s, (size_t)(eq - s));
    name[eq - s] = '\0';
    /* the value runs to the first comma followed by a piece with '=' */
    const char *v = eq + 1, *e = s + n;
    while (*e == ',') {
        size_t m = strcspn(e + 1, ",");
        if (m == 0 || memchr(e + 1, '=', m))
            break;
        e += 1 + m;
    }
    if ((size_t)(e - v) >= value_len || (*e == ',' && !e[1]))
        return TB_EINVAL;
    memcpy(value, v, (size_t)(e - v));
    value[e - v] = '\0';
    *cur = *e ? e + 1 : e;
    return 1;
}

void tb_params_defaults(const tb_op *op, tb_params *p)
{
    for (int i = 0; i < op->n_params; i++) {
        if (tb_params_has(p, i) || op->params[i].optional)
            continue;
        if (op->params[i].kind == TB_PARAM_STRING) {
            /* the table's default text is valid and the table holds it
             * unless full (then the parameter stays unset and the
             * op's rule says it is missing) */
            if (op->str_default)
                tb_params_set_str(op, p, op->params[i].name,
                                  op->str_default, NULL, 0);
            continue;
        }
        p->v[i] = op->params[i].def;
        p->set |= 1u << i;
    }
}

char *tb_params_format(const tb_op *op, const tb_params *p, char *buf,
                       size_t len)
{
    size_t used = 0;
    if (len)
        buf[0] = '\0';
    for (int i = 0; i < op->n_params && used < len; i++) {
        if (!tb_params_has(p, i))
            continue;
        const char *t = op->params[i].kind == TB_PARAM_STRING
                            ? tb_params_str(p, i)
                            : NULL;
        int w = t ? snprintf(buf + used, len - used, "%s%s=%s",
                             used ? "," : "", op->params[i].name, t)
                  : snprintf(buf + used, len - used, "%s%s=%.10g",
                             used ? "," : "", op->params[i].name, p->v[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return buf;
}
