#include "npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ops/error.h"
#include "fileio.h"

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
