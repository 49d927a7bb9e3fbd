#include "npy.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../base/error.h"
#include "../base/fileio.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c writes the host byte order and labels it little-endian"
#endif

/* The header is "\x93NUMPY" 1 0, a little-endian uint16 length, then a
 * Python dict literal padded with spaces and ended by '\n' so that the
 * data starts at a multiple of 64 bytes. */
const char *tb_npy_descr(tb_dtype dt)
{
    switch (dt) {
    case TB_F64:
        return "'<f8'";
    case TB_F16:
        return "'<f2'";
    case TB_BF16:
        return TB_NPY_BF16_DESCR;
    default:
        return "'<f4'";
    }
}

int tb_npy_encode(const tb_tensor *t, char **buf, size_t *len)
{
    char dict[512], dims[400] = "";
    size_t u = 0;
    for (int i = 0; i < t->ndim && u < sizeof dims; i++)
        u += (size_t)snprintf(dims + u, sizeof dims - u, "%lld,%s",
                              (long long)t->shape[i],
                              i + 1 < t->ndim ? " " : "");
    if (t->ndim > 1 && u > 0 && u < sizeof dims)
        dims[u - 1] = '\0'; /* (2, 3) not (2, 3,) ; (4,) keeps its comma */
    int dl = snprintf(dict, sizeof dict,
                      "{'descr': %s, 'fortran_order': False, "
                      "'shape': (%s), }",
                      tb_npy_descr(t->dtype), dims);
    size_t pre = 10, hlen = (size_t)dl + 1;
    size_t total_hdr = (pre + hlen + 63) / 64 * 64;
    hlen = total_hdr - pre;
    size_t es = tb_dtype_size(t->dtype);
    int64_t n = tb_tensor_numel(t);
    char *b = malloc(total_hdr + (size_t)n * es);
    if (!b)
        return TB_ENOMEM;
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    b[8] = (char)(hlen & 0xff);
    b[9] = (char)(hlen >> 8);
    memset(b + pre, ' ', hlen);
    memcpy(b + pre, dict, (size_t)dl);
    b[total_hdr - 1] = '\n';
    char *d = b + total_hdr;
    if (tb_tensor_is_contiguous(t)) {
        memcpy(d, t->data, (size_t)n * es);
    } else {
        for (int64_t i = 0; i < n; i++) {
            double v = tb_tensor_get(t, i);
            if (t->dtype == TB_F32) {
                float f = (float)v;
                memcpy(d + i * 4, &f, 4);
            } else if (tb_dtype_is_half(t->dtype)) {
                /* exact: v is a value of the dtype */
                uint16_t h = t->dtype == TB_BF16 ? tb_f32_to_bf16((float)v)
                                                 : tb_f32_to_f16((float)v);
                memcpy(d + i * 2, &h, 2);
            } else {
                memcpy(d + i * 8, &v, 8);
            }
        }
    }
    *buf = b;
    *len = total_hdr + (size_t)n * es;
    return 0;
}

int tb_npy_write(const char *path, const tb_tensor *t, char *err,
                 size_t errlen)
{
    char *buf;
    size_t len;
    if (tb_npy_encode(t, &buf, &len)) {
        snprintf(err, errlen, "%s: out of memory", path);
        return TB_ENOMEM;
    }
    int rc = tb_write_atomic(path, buf, len, err, errlen);
    free(buf);
    return rc;
}

/* ---- reader ---------------------------------------------------------------
 * Accepts what numpy.save writes for a float32/float64 C-order array:
 * format versions 1.0 (uint16 header length) and 2.0/3.0 (uint32), a dict
 * with 'descr' '<f4', '<f8' (or '=' / '|' on this little-endian host),
 * 'fortran_order' False and a shape tuple of 1 to TB_MAX_DIMS positive
 * dims. */

/* A cursor over the header text. */
typedef struct {
    const char *s;
    size_t n, i;
} hcur;

static void h_ws(hcur *c)
{
    while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t'))
        c->i++;
}

/* A Python string literal ('...' or "...", backslash escapes kept as
 * written) copied into out (size len; longer strings are an error). */
static bool h_string(hcur *c, char *out, size_t len)
{
    if (c->i >= c->n || (c->s[c->i] != '\'' && c->s[c->i] != '"'))
        return false;
    char q = c->s[c->i++];
    size_t k = 0;
    while (c->i < c->n && c->s[c->i] != q) {
        char ch = c->s[c->i];
        if (ch == '\n' || ch == '\0')
            return false;
        if (ch == '\\') {
            if (c->i + 1 >= c->n)
                return false;
            if (k + 1 >= len)
                return false;
            out[k++] = ch;
            ch = c->s[++c->i];
        }
        if (k + 1 >= len)
            return false;
        out[k++] = ch;
        c->i++;
    }
    if (c->i >= c->n)
        return false;
    c->i++; /* closing quote */
    out[k] = '\0';
    return true;
}

/* True or False (a whole word). */
static int h_bool(hcur *c)
{
    static const char *const w[] = {"False", "True"};
    for (int b = 0; b < 2; b++) {
        size_t l = strlen(w[b]);
        if (c->n - c->i >= l && !memcmp(c->s + c->i, w[b], l) &&
            (c->i + l == c->n || !isalnum((unsigned char)c->s[c->i + l]) )) {
            c->i += l;
            return b;
        }
    }
    return -1;
}

/* (d0, d1, ...) with an optional trailing comma; () is 0-dim. */
static const char *h_shape(hcur *c, tb_shape *sh)
{
    memset(sh, 0, sizeof *sh);
    if (c->i >= c->n || c->s[c->i] != '(')
        return "the shape is not a tuple";
    c->i++;
    double numel = 1;
    for (;;) {
        h_ws(c);
        if (c->i < c->n && c->s[c->i] == ')') {
            c->i++;
            break;
        }
        if (c->i >= c->n || c->s[c->i] < '0' || c->s[c->i] > '9')
            return "a dim is not a positive integer (empty arrays are not "
                   "accepted)";
        long long v = 0;
        while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') {
            v = v * 10 + (c->s[c->i++] - '0');
            if (v > (1LL << 40))
                return "a dim is too large";
        }
        if (v < 1)
            return "a dim is not a positive integer (empty arrays are not "
                   "accepted)";
        if (sh->ndim == TB_MAX_DIMS)
            return "more than 8 dims";
        sh->dim[sh->ndim++] = v;
        numel *= (double)v;
        h_ws(c);
        if (c->i < c->n && c->s[c->i] == ',') {
            c->i++;
            continue;
        }
        if (c->i < c->n && c->s[c->i] == ')') {
            /* (4) is the integer 4 in Python, not a tuple */
            if (sh->ndim == 1)
                return "the shape is not a tuple";
            c->i++;
            break;
        }
        return "the shape is not a tuple of integers";
    }
    if (sh->ndim == 0)
        return "0-dim array (give at least 1 dim)";
    if (numel > (double)(INT64_C(1) << 40))
        return "too many elements";
    return NULL;
}

int tb_npy_parse_header(const char *h, size_t len, tb_dtype *dt,
                        tb_shape *sh, const char **why)
{
    hcur c = {h, len, 0};
    bool seen[3] = {false, false, false};
    int fortran = -1;
    char descr[64] = "";
    static const char *const keys[] = {"descr", "fortran_order", "shape"};
    *why = NULL;
    /* the dict ends the header: then spaces and exactly one '\n' */
    if (len == 0 || h[len - 1] != '\n') {
        *why = "the header does not end with a newline";
        return TB_EPARSE;
    }
    h_ws(&c);
    if (c.i >= c.n || h[c.i] != '{') {
        *why = "the header is not a dict";
        return TB_EPARSE;
    }
    c.i++;
    for (;;) {
        h_ws(&c);
        if (c.i < c.n && h[c.i] == '}') {
            c.i++;
            break;
        }
        char key[32];
        if (!h_string(&c, key, sizeof key)) {
            *why = "a key of the header dict is not a string";
            return TB_EPARSE;
        }
        int k = 0;
        while (k < 3 && strcmp(key, keys[k]))
            k++;
        if (k == 3) {
            *why = "the header has a key other than descr, fortran_order "
                   "and shape";
            return TB_EPARSE;
        }
        if (seen[k]) {
            *why = "the header has a key twice";
            return TB_EPARSE;
        }
        seen[k] = true;
        h_ws(&c);
        if (c.i >= c.n || h[c.i] != ':') {
            *why = "the header dict lacks a ':'";
            return TB_EPARSE;
        }
        c.i++;
        h_ws(&c);
        if (k == 0) {
            /* tbench's bf16: a structured dtype of one uint16 field named
             * bf16, the raw bits, exactly as numpy.save writes it */
            const size_t bl = strlen(TB_NPY_BF16_DESCR);
            if (c.i < c.n && h[c.i] == '[') {
                if (c.n - c.i < bl || memcmp(h + c.i, TB_NPY_BF16_DESCR, bl)) {
                    *why = "descr is a structured dtype other than "
                           "[('bf16', '<u2')]";
                    return TB_EPARSE;
                }
                c.i += bl;
                snprintf(descr, sizeof descr, "%s", TB_NPY_BF16_FIELDS);
            } else if (!h_string(&c, descr, sizeof descr)) {
                *why = "descr is not a string";
                return TB_EPARSE;
            }
        } else if (k == 1) {
            if ((fortran = h_bool(&c)) < 0) {
                *why = "fortran_order is not True or False";
                return TB_EPARSE;
            }
        } else {
            const char *w = h_shape(&c, sh);
            if (w) {
                *why = w;
                return TB_EPARSE;
            }
        }
        h_ws(&c);
        if (c.i < c.n && h[c.i] == ',') {
            c.i++;
            continue;
        }
        if (c.i < c.n && h[c.i] == '}') {
            c.i++;
            break;
        }
        *why = "the header dict lacks a ',' or '}'";
        return TB_EPARSE;
    }
    h_ws(&c);
    if (c.i + 1 != c.n) {
        *why = "text after the header dict";
        return TB_EPARSE;
    }
    if (!seen[0] || !seen[1] || !seen[2]) {
        *why = "the header lacks descr, fortran_order or shape";
        return TB_EPARSE;
    }
    if (!strcmp(descr, "<f4") || !strcmp(descr, "=f4")) {
        *dt = TB_F32;
    } else if (!strcmp(descr, "<f8") || !strcmp(descr, "=f8")) {
        *dt = TB_F64;
    } else if (!strcmp(descr, "<f2") || !strcmp(descr, "=f2")) {
        *dt = TB_F16;
    } else if (!strcmp(descr, TB_NPY_BF16_FIELDS)) {
        *dt = TB_BF16;
    } else {
        *why = "dtype is not little-endian float32, float64, float16 or "
               "tbench's bf16 ([('bf16', '<u2')])";
        return TB_EPARSE;
    }
    if (fortran) {
        *why = "Fortran order (save numpy.ascontiguousarray(a))";
        return TB_EPARSE;
    }
    return 0;
}

static int npy_fail(char *err, size_t len, const char *path, const char *why)
{
    snprintf(err, len, "%s: not a float32/float64 .npy array: %s", path,
             why);
    return TB_EPARSE;
}

int tb_npy_read(const char *path, tb_tensor *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return TB_EIO;
    }
    unsigned char pre[12];
    int rc = 0;
    char *dict = NULL;
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6)) {
        rc = npy_fail(err, errlen, path, "no NumPy magic");
        goto out;
    }
    size_t hlen;
    if (pre[6] == 1) {
        hlen = pre[8] | (size_t)pre[9] << 8;
    } else if (pre[6] == 2 || pre[6] == 3) {
        if (fread(pre + 10, 1, 2, f) != 2) {
            rc = npy_fail(err, errlen, path, "truncated header");
            goto out;
        }
        hlen = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 |
               (size_t)pre[11] << 24;
    } else {
        rc = npy_fail(err, errlen, path, "unknown format version");
        goto out;
    }
    if (hlen == 0 || hlen > (1u << 20)) {
        rc = npy_fail(err, errlen, path, "header length out of range");
        goto out;
    }
    dict = malloc(hlen + 1);
    if (!dict) {
        rc = TB_ENOMEM;
        snprintf(err, errlen, "%s: out of memory", path);
        goto out;
    }
    if (fread(dict, 1, hlen, f) != hlen) {
        rc = npy_fail(err, errlen, path, "truncated header");
        goto out;
    }
    dict[hlen] = '\0';
    tb_dtype dt;
    tb_shape sh;
    const char *why;
    if (tb_npy_parse_header(dict, hlen, &dt, &sh, &why)) {
        rc = npy_fail(err, errlen, path, why);
        goto out;
    }
    /* The data the shape needs must be in the file before it is
     * allocated: a 128-byte file whose header claims 3.5 GB is refused
     * here, not by the allocator (a pipe or other unseekable input keeps
     * the check after the read). */
    long at = ftell(f);
    struct stat st;
    if (at >= 0 && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
        (double)tb_shape_numel(&sh) * (double)tb_dtype_size(dt) >
            (double)(st.st_size - at)) {
        rc = npy_fail(err, errlen, path, "fewer data bytes than the shape "
                                         "needs");
        goto out;
    }
    if ((rc = tb_tensor_create(out, dt, &sh))) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto out;
    }
    size_t n = tb_tensor_nbytes(out);
    if (fread(out->data, 1, n, f) != n) {
        tb_tensor_destroy(out);
        rc = npy_fail(err, errlen, path, "fewer data bytes than the shape "
                                         "needs");
        goto out;
    }
    if (fgetc(f) != EOF) {
        tb_tensor_destroy(out);
        rc = npy_fail(err, errlen, path, "more data bytes than the shape "
                                         "needs");
        goto out;
    }
out:
    free(dict);
    fclose(f);
    return rc;
}
