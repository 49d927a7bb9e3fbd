/* NumPy .npy writer and reader (format version 1.0, little-endian, C order), so any
 * tensor tbench computed can be checked with numpy.load(). */
#ifndef TB_OPS_NPY_H
#define TB_OPS_NPY_H

#include <stddef.h>

#include "tensor.h"

/* bf16 has no NumPy dtype: tbench writes its raw bits as a structured
 * dtype of one little-endian uint16 field named "bf16" (numpy.load reads
 * it; a['bf16'].astype('<u4') << 16, viewed as float32, is the value).
 * TB_NPY_BF16_DESCR is the descr as the header holds it,
 * TB_NPY_BF16_FIELDS the reader's name for it. */
#define TB_NPY_BF16_DESCR "[('bf16', '<u2')]"
#define TB_NPY_BF16_FIELDS "bf16-fields"
/* The header's descr value for dt, quotes included: '<f4', '<f8', '<f2'
 * or TB_NPY_BF16_DESCR. */
const char *tb_npy_descr(tb_dtype dt);

/* Serialize host tensor t (any strides; written in row-major order) as
 * a complete .npy file image.  Caller frees *buf.  0 or TB_ENOMEM. */
int tb_npy_encode(const tb_tensor *t, char **buf, size_t *len);

/* Write t to path atomically.  0, TB_ENOMEM or TB_EIO (message in err). */
int tb_npy_write(const char *path, const tb_tensor *t, char *err,
                 size_t errlen);

/* Parse the header dict of a .npy file: h[0..len) is the text after the
 * length field (a Python dict literal, padding, then '\n').  A real
 * parser of the literal numpy.save writes, not a text search: exactly
 * the keys 'descr', 'fortran_order' and 'shape' (quoted either way, in
 * any order, each once, an optional trailing comma), string values with
 * backslash escapes, True/False, and a tuple of integers.  On success
 * *dt is TB_F32, TB_F64, TB_F16 ('<f2') or TB_BF16 (TB_NPY_BF16_DESCR)
 * and *sh the shape (1 to TB_MAX_DIMS dims of
 * 1..2^40 elements in all).  Otherwise TB_EPARSE with *why a constant
 * sentence. */
int tb_npy_parse_header(const char *h, size_t len, tb_dtype *dt,
                        tb_shape *sh, const char **why);

/* Read a .npy file written by numpy.save (float32, float64, float16 or
 * tbench's bf16, C order,
 * little-endian, 1 to 8 positive dims) into a new tracked tensor.  0, or
 * TB_EIO/TB_EPARSE/TB_ENOMEM with "PATH: what" in err.  The caller
 * destroys *out. */
int tb_npy_read(const char *path, tb_tensor *out, char *err,
                size_t errlen);

#endif
