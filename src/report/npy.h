/* NumPy .npy writer (format version 1.0, little-endian, C order), so any
 * tensor tbench computed can be checked with numpy.load(). */
#ifndef TB_REPORT_NPY_H
#define TB_REPORT_NPY_H

#include <stddef.h>

#include "../ops/tensor.h"

/* Serialize host tensor t (any strides; written in row-major order) as
 * a complete .npy file image.  Caller frees *buf.  0 or TB_ENOMEM. */
int tb_npy_encode(const tb_tensor *t, char **buf, size_t *len);

/* Write t to path atomically.  0, TB_ENOMEM or TB_EIO (message in err). */
int tb_npy_write(const char *path, const tb_tensor *t, char *err,
                 size_t errlen);

#endif
