/* tb_tensor: a strided, row-major view of dtype-typed memory.
 *
 * A tensor either owns its buffer (created by tb_tensor_create, freed by
 * tb_tensor_destroy) or is a view that shares another tensor's buffer.
 * data may point to device memory: `backend` names who owns it (NULL means
 * host memory from the tracked allocator). */
#ifndef TB_OPS_TENSOR_H
#define TB_OPS_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "half.h"

#define TB_MAX_DIMS 8

/* The element types.  The codes are fixed (results and the plugin ABI
 * carry them): new ones are added at the end.  bf16 and f16 are storage
 * formats: ops read them, compute in f32 and round each result once
 * (PyTorch's numerics on the CPU; half.h). */
typedef enum {
    TB_F32 = 0,
    TB_F64 = 1,
    TB_BF16 = 2,
    TB_F16 = 3,
    TB_DTYPE_COUNT
} tb_dtype;
/* f32 and f64 (codes 0 and 1): the dtypes every op is defined in. */
#define TB_DTYPE_FULL_COUNT 2

struct tb_backend;

typedef struct tb_shape {
    int ndim;
    int64_t dim[TB_MAX_DIMS];
} tb_shape;

typedef struct tb_tensor {
    tb_dtype dtype;
    int ndim;
    int64_t shape[TB_MAX_DIMS];
    int64_t strides[TB_MAX_DIMS]; /* in elements */
    void *data;
    const struct tb_backend *backend; /* NULL: host memory */
    void *backend_ctx;                /* the backend instance owning data */
    bool owns;
} tb_tensor;

/* "f32", "f64", "bf16", "f16"; NULL for an invalid value. */
const char *tb_dtype_name(tb_dtype dt);
/* Parse a dtype name; returns 0 or TB_EDTYPE. */
int tb_dtype_parse(const char *name, tb_dtype *out);
/* Bytes per element (0 for an invalid value). */
size_t tb_dtype_size(tb_dtype dt);
/* Machine epsilon, the spacing of the dtype's values at 1: 2^-23, 2^-52,
 * 2^-7, 2^-10.  Tolerances of the 16-bit dtypes are stated in it. */
double tb_dtype_eps(tb_dtype dt);
/* The spacing of the dtype's subnormal numbers (its smallest positive
 * value): 2^-149, 2^-1074 (0 would do: it underflows nothing here), 2^-133,
 * 2^-24.  A result rounded into that range is off by up to this much. */
double tb_dtype_tiny(tb_dtype dt);
/* The dtype a kernel computes in: f32 for f32, bf16 and f16; f64 for
 * f64.  Constants (an op's scalar parameter) are held in it. */
tb_dtype tb_dtype_compute(tb_dtype dt);
/* bf16 or f16. */
static inline int tb_dtype_is_half(tb_dtype dt)
{
    return dt == TB_BF16 || dt == TB_F16;
}
/* v as an element of dtype dt holds it: rounded to f32 (f32), to f32 then
 * to the 16-bit format (bf16, f16), unchanged (f64). */
double tb_dtype_round(tb_dtype dt, double v);

/* Number of elements; 1 for ndim 0. */
int64_t tb_shape_numel(const tb_shape *s);
bool tb_shape_equal(const tb_shape *a, const tb_shape *b);
/* Writes "256x256" (or "scalar" for ndim 0) into buf; returns buf. */
char *tb_shape_format(const tb_shape *s, char *buf, size_t len);
/* Broadcast strides: st[0..nd) are the contiguous strides (in elements)
 * of s read as nd >= s->ndim dims (leading 1s), 0 along every dim of
 * size 1 (a broadcast dim). */
void tb_shape_bcast_strides(const tb_shape *s, int nd, int64_t *st);

/* Fill t's header for a contiguous tensor of the given shape, no data. */
void tb_tensor_init(tb_tensor *t, tb_dtype dt, const tb_shape *s);
/* t's shape, the dims past ndim 0.  Inline, each field written once:
 * the caller's copy goes straight into its destination (the out-of-line
 * form, a memset then the dims, was read back through a stalled store
 * forward, 2% of tfm_train_step 1x16x32 in perf). */
static inline tb_shape tb_tensor_shape(const tb_tensor *t)
{
    tb_shape s;
    s.ndim = t->ndim;
    for (int i = 0; i < TB_MAX_DIMS; i++)
        s.dim[i] = i < t->ndim ? t->shape[i] : 0;
    return s;
}
int64_t tb_tensor_numel(const tb_tensor *t);
size_t tb_tensor_nbytes(const tb_tensor *t);
bool tb_tensor_is_contiguous(const tb_tensor *t);
/* The one check of a kernel operand (every backend kernel uses it): t
 * not NULL, dtype dt, 0 <= ndim <= TB_MAX_DIMS, every dim >= min_dim
 * (0 or 1), data present, contiguous.  Returns 0; TB_ESHAPE for a dim
 * below min_dim when min_dim >= 1; TB_EINVAL for anything else (a
 * negative dim with min_dim 0 is a malformed header).  Reads nothing
 * beyond the header. */
int tb_tensor_check_operand(const tb_tensor *t, tb_dtype dt,
                            int64_t min_dim);
/* As tb_tensor_check_operand for a kernel that reads views (a layout's
 * strided C rows): any strides >= 0 instead of contiguous. */
int tb_tensor_check_view(const tb_tensor *t, tb_dtype dt, int64_t min_dim);

/* Create a host tensor of the given shape through the tracked allocator.
 * Contents are zeroed.  Returns 0, TB_ESHAPE or TB_ENOMEM. */
int tb_tensor_create(tb_tensor *t, tb_dtype dt, const tb_shape *s);
/* Free an owning host tensor's data; views and NULL are accepted. */
void tb_tensor_destroy(tb_tensor *t);

/* Make `view` a non-owning view of `t` with dims a and b swapped. */
int tb_tensor_transpose_view(const tb_tensor *t, int a, int b,
                             tb_tensor *view);

/* How a case's inputs lie in memory (the config's "layout"): each input
 * is a view of a buffer the harness allocates (its parent), of the
 * input's shape:
 *   contiguous  the buffer itself (the default);
 *   transposed  the last two dims swapped: a view of a contiguous buffer
 *               of the shape with its last two dims swapped (2-D+);
 *   strided     every 2nd element along the last dim: a view of a buffer
 *               twice as wide;
 *   sliced      an offset window of a larger buffer: the parent one
 *               larger along every dim, the view starting at index 1 of
 *               each (so its data points inside the parent).
 * The codes are fixed (results carry the names). */
typedef enum {
    TB_LAYOUT_CONTIGUOUS = 0,
    TB_LAYOUT_TRANSPOSED,
    TB_LAYOUT_STRIDED,
    TB_LAYOUT_SLICED,
    TB_LAYOUT_COUNT
} tb_layout;

/* "contiguous", "transposed", "strided", "sliced"; NULL when invalid. */
const char *tb_layout_name(tb_layout l);
/* Parse a layout name: 0 or TB_EINVAL. */
int tb_layout_parse(const char *name, tb_layout *out);
/* The shape of the buffer (the parent) that an input of shape s in
 * layout l is a view of.  0, or TB_ESHAPE with the reason in err (may
 * be NULL): transposed needs 2 or more dims. */
int tb_layout_parent(tb_layout l, const tb_shape *s, tb_shape *parent,
                     char *err, size_t errlen);
/* Make *view a non-owning view of shape s in layout l of parent (a
 * tensor of the shape tb_layout_parent gave; only its header is read:
 * dtype, strides, data, backend).  A sliced view's data points one
 * element row past the parent's start in every dim (parent data NULL:
 * NULL).  0, or TB_ESHAPE as tb_layout_parent. */
int tb_layout_view(tb_layout l, const tb_tensor *parent, const tb_shape *s,
                   tb_tensor *view);

/* Element access by flat row-major index (host tensors only, any strides).
 * Used by reference kernels and checks, never by timed code. */
double tb_tensor_get(const tb_tensor *t, int64_t flat);
void tb_tensor_set(tb_tensor *t, int64_t flat, double v);

/* Element at offset off (in elements, strides already applied) of a host
 * tensor of any dtype, widened exactly to double. */
static inline double tb_tensor_load(const tb_tensor *t, int64_t off)
{
    switch (t->dtype) {
    case TB_F32:
        return ((const float *)t->data)[off];
    case TB_BF16:
        return tb_bf16_to_f32(((const uint16_t *)t->data)[off]);
    case TB_F16:
        return tb_f16_to_f32(((const uint16_t *)t->data)[off]);
    default:
        return ((const double *)t->data)[off];
    }
}

/* Store v at offset off, rounded as tb_dtype_round does. */
static inline void tb_tensor_store(tb_tensor *t, int64_t off, double v)
{
    switch (t->dtype) {
    case TB_F32:
        ((float *)t->data)[off] = (float)v;
        break;
    case TB_BF16:
        ((uint16_t *)t->data)[off] = tb_f32_to_bf16((float)v);
        break;
    case TB_F16:
        ((uint16_t *)t->data)[off] = tb_f32_to_f16((float)v);
        break;
    default:
        ((double *)t->data)[off] = v;
    }
}

#endif
