#include "npy.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/fileio.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c writes the host byte order and labels it little-endian"
#endif

/* The header is "\x93NUMPY" 1 0, a little-endian uint16 length, then a
 * Python dict literal padded with spaces and ended by '\n' so that the
 * data starts at a multiple of 64 bytes. */
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
                      "{'descr': '<%s', 'fortran_order': False, "
                      "'shape': (%s), }",
                      t->dtype == TB_F64 ? "f8" : "f4", dims);
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

static const char *npy_key(const char *dict, const char *key)
{
    char q1[48], q2[48];
    snprintf(q1, sizeof q1, "'%s'", key);
    snprintf(q2, sizeof q2, "\"%s\"", key);
    const char *p = strstr(dict, q1);
    if (!p)
        p = strstr(dict, q2);
    if (!p)
        return NULL;
    p = strchr(p + strlen(q1), ':');
    if (!p)
        return NULL;
    p++;
    while (*p == ' ')
        p++;
    return p;
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
    const char *d = npy_key(dict, "descr");
    tb_dtype dt;
    if (d && (!strncmp(d + 1, "<f4", 3) || !strncmp(d + 1, "=f4", 3)))
        dt = TB_F32;
    else if (d && (!strncmp(d + 1, "<f8", 3) || !strncmp(d + 1, "=f8", 3)))
        dt = TB_F64;
    else {
        rc = npy_fail(err, errlen, path,
                      "dtype is not little-endian float32 or float64");
        goto out;
    }
    const char *fo = npy_key(dict, "fortran_order");
    if (!fo || strncmp(fo, "False", 5)) {
        rc = npy_fail(err, errlen, path,
                      "Fortran order (save numpy.ascontiguousarray(a))");
        goto out;
    }
    const char *s = npy_key(dict, "shape");
    if (!s || *s != '(') {
        rc = npy_fail(err, errlen, path, "no shape");
        goto out;
    }
    tb_shape sh = {0};
    s++;
    for (;;) {
        while (*s == ' ' || *s == ',')
            s++;
        if (*s == ')')
            break;
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (end == s || errno || v < 1 || v > (1LL << 40)) {
            rc = npy_fail(err, errlen, path,
                          "a dim is not a positive integer (empty arrays "
                          "are not accepted)");
            goto out;
        }
        if (sh.ndim == TB_MAX_DIMS) {
            rc = npy_fail(err, errlen, path, "more than 8 dims");
            goto out;
        }
        sh.dim[sh.ndim++] = v;
        s = end;
    }
    if (sh.ndim == 0) {
        rc = npy_fail(err, errlen, path, "0-dim array (give at least 1 dim)");
        goto out;
    }
    if (tb_shape_numel(&sh) > (INT64_C(1) << 40)) {
        rc = npy_fail(err, errlen, path, "too many elements");
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
