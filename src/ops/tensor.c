#include "tensor.h"

#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "../base/error.h"

/* Per dtype: name, bytes, epsilon (spacing at 1), subnormal spacing. */
static const struct {
    const char *name;
    size_t size;
    double eps, tiny;
} dtype_info[TB_DTYPE_COUNT] = {
    [TB_F32] = {"f32", sizeof(float), 0x1p-23, 0x1p-149},
    [TB_F64] = {"f64", sizeof(double), 0x1p-52, 0x1p-1074},
    [TB_BF16] = {"bf16", sizeof(uint16_t), 0x1p-7, 0x1p-133},
    [TB_F16] = {"f16", sizeof(uint16_t), 0x1p-10, 0x1p-24},
};

const char *tb_dtype_name(tb_dtype dt)
{
    return (unsigned)dt < TB_DTYPE_COUNT ? dtype_info[dt].name : NULL;
}

int tb_dtype_parse(const char *name, tb_dtype *out)
{
    for (int i = 0; i < TB_DTYPE_COUNT; i++) {
        if (name && strcmp(name, dtype_info[i].name) == 0) {
            *out = (tb_dtype)i;
            return 0;
        }
    }
    return TB_EDTYPE;
}

size_t tb_dtype_size(tb_dtype dt)
{
    return (unsigned)dt < TB_DTYPE_COUNT ? dtype_info[dt].size : 0;
}

double tb_dtype_eps(tb_dtype dt)
{
    return dtype_info[(unsigned)dt < TB_DTYPE_COUNT ? dt : TB_F32].eps;
}

double tb_dtype_tiny(tb_dtype dt)
{
    return dtype_info[(unsigned)dt < TB_DTYPE_COUNT ? dt : TB_F32].tiny;
}

tb_dtype tb_dtype_compute(tb_dtype dt)
{
    return dt == TB_F64 ? TB_F64 : TB_F32;
}

double tb_dtype_round(tb_dtype dt, double v)
{
    /* Through volatile: GCC 12 at -O2 may fold a (double)(float) round
     * trip away (see ref_optim.c). */
    if (dt == TB_F64 || (unsigned)dt >= TB_DTYPE_COUNT)
        return v;
    volatile float f = (float)v;
    if (dt == TB_BF16)
        return tb_bf16_to_f32(tb_f32_to_bf16(f));
    if (dt == TB_F16)
        return tb_f16_to_f32(tb_f32_to_f16(f));
    return f;
}

int64_t tb_shape_numel(const tb_shape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++)
        n *= s->dim[i];
    return n;
}

void tb_shape_bcast_strides(const tb_shape *s, int nd, int64_t *st)
{
    int64_t acc = 1;
    for (int d = nd - 1; d >= 0; d--) {
        int sd = s->ndim - nd + d;
        int64_t dim = sd >= 0 ? s->dim[sd] : 1;
        st[d] = dim == 1 ? 0 : acc;
        acc *= dim;
    }
}

bool tb_shape_equal(const tb_shape *a, const tb_shape *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->dim[i] != b->dim[i])
            return false;
    return true;
}

char *tb_shape_format(const tb_shape *s, char *buf, size_t len)
{
    size_t used = 0;
    if (len == 0)
        return buf;
    buf[0] = '\0';
    if (s->ndim == 0) {
        snprintf(buf, len, "scalar");
        return buf;
    }
    for (int i = 0; i < s->ndim && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%lld", i ? "x" : "",
                         (long long)s->dim[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return buf;
}

void tb_tensor_init(tb_tensor *t, tb_dtype dt, const tb_shape *s)
{
    memset(t, 0, sizeof *t);
    t->dtype = dt;
    t->ndim = s->ndim;
    int64_t stride = 1;
    for (int i = s->ndim - 1; i >= 0; i--) {
        t->shape[i] = s->dim[i];
        t->strides[i] = stride;
        stride *= s->dim[i];
    }
}

int64_t tb_tensor_numel(const tb_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->shape[i];
    return n;
}

size_t tb_tensor_nbytes(const tb_tensor *t)
{
    return (size_t)tb_tensor_numel(t) * tb_dtype_size(t->dtype);
}

bool tb_tensor_is_contiguous(const tb_tensor *t)
{
    int64_t stride = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] != 1 && t->strides[i] != stride)
            return false;
        stride *= t->shape[i];
    }
    return true;
}

int tb_tensor_check_operand(const tb_tensor *t, tb_dtype dt,
                            int64_t min_dim)
{
    if (!t || t->dtype != dt || (unsigned)dt >= TB_DTYPE_COUNT ||
        t->ndim < 0 || t->ndim > TB_MAX_DIMS)
        return TB_EINVAL;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] < min_dim)
            return min_dim > 0 ? TB_ESHAPE : TB_EINVAL;
    if (!t->data || !tb_tensor_is_contiguous(t))
        return TB_EINVAL;
    return 0;
}

int tb_tensor_check_view(const tb_tensor *t, tb_dtype dt, int64_t min_dim)
{
    if (!t || t->dtype != dt || (unsigned)dt >= TB_DTYPE_COUNT ||
        t->ndim < 0 || t->ndim > TB_MAX_DIMS || !t->data)
        return TB_EINVAL;
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] < min_dim)
            return min_dim > 0 ? TB_ESHAPE : TB_EINVAL;
        if (t->strides[d] < 0)
            return TB_EINVAL;
    }
    return 0;
}

int tb_tensor_create(tb_tensor *t, tb_dtype dt, const tb_shape *s)
{
    if ((unsigned)dt >= TB_DTYPE_COUNT)
        return TB_EDTYPE;
    if (s->ndim < 0 || s->ndim > TB_MAX_DIMS)
        return TB_ESHAPE;
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++) {
        if (s->dim[i] <= 0 || n > INT64_MAX / 8 / s->dim[i])
            return TB_ESHAPE;
        n *= s->dim[i];
    }
    tb_tensor_init(t, dt, s);
    size_t bytes = tb_tensor_nbytes(t);
    t->data = tb_alloc(bytes);
    if (!t->data)
        return TB_ENOMEM;
    memset(t->data, 0, bytes);
    t->owns = true;
    return 0;
}

void tb_tensor_destroy(tb_tensor *t)
{
    if (!t)
        return;
    if (t->owns && !t->backend)
        tb_free(t->data);
    t->data = NULL;
    t->owns = false;
}

int tb_tensor_transpose_view(const tb_tensor *t, int a, int b,
                             tb_tensor *view)
{
    if (a < 0 || b < 0 || a >= t->ndim || b >= t->ndim)
        return TB_EPARAM;
    *view = *t;
    view->owns = false;
    view->shape[a] = t->shape[b];
    view->shape[b] = t->shape[a];
    view->strides[a] = t->strides[b];
    view->strides[b] = t->strides[a];
    return 0;
}

static const char *const layout_names[TB_LAYOUT_COUNT] = {
    "contiguous", "transposed", "strided", "sliced"};

const char *tb_layout_name(tb_layout l)
{
    return (unsigned)l < TB_LAYOUT_COUNT ? layout_names[l] : NULL;
}

int tb_layout_parse(const char *name, tb_layout *out)
{
    for (int l = 0; name && l < TB_LAYOUT_COUNT; l++)
        if (strcmp(name, layout_names[l]) == 0) {
            *out = (tb_layout)l;
            return 0;
        }
    return TB_EINVAL;
}

int tb_layout_parent(tb_layout l, const tb_shape *s, tb_shape *parent,
                     char *err, size_t errlen)
{
    *parent = *s;
    const int nd = s->ndim;
    switch (l) {
    case TB_LAYOUT_CONTIGUOUS:
        return 0;
    case TB_LAYOUT_TRANSPOSED:
        if (nd < 2) {
            if (err)
                snprintf(err, errlen, "layout transposed swaps the last "
                         "two dims: an input of %d dim(s) has no two", nd);
            return TB_ESHAPE;
        }
        parent->dim[nd - 1] = s->dim[nd - 2];
        parent->dim[nd - 2] = s->dim[nd - 1];
        return 0;
    case TB_LAYOUT_STRIDED:
        if (nd > 0)
            parent->dim[nd - 1] = 2 * s->dim[nd - 1];
        return 0;
    case TB_LAYOUT_SLICED:
        for (int d = 0; d < nd; d++)
            parent->dim[d] = s->dim[d] + 1;
        return 0;
    default:
        if (err)
            snprintf(err, errlen, "unknown layout %d", (int)l);
        return TB_EINVAL;
    }
}

int tb_layout_view(tb_layout l, const tb_tensor *parent, const tb_shape *s,
                   tb_tensor *view)
{
    tb_shape ps;
    int rc = tb_layout_parent(l, s, &ps, NULL, 0);
    if (rc)
        return rc;
    *view = *parent;
    view->owns = false;
    view->ndim = s->ndim;
    for (int d = 0; d < s->ndim; d++)
        view->shape[d] = s->dim[d];
    const int nd = s->ndim;
    if (l == TB_LAYOUT_TRANSPOSED) {
        view->strides[nd - 1] = parent->strides[nd - 2];
        view->strides[nd - 2] = parent->strides[nd - 1];
    } else if (l == TB_LAYOUT_STRIDED && nd > 0) {
        view->strides[nd - 1] = 2 * parent->strides[nd - 1];
    } else if (l == TB_LAYOUT_SLICED && parent->data) {
        int64_t off = 0;
        for (int d = 0; d < nd; d++)
            off += parent->strides[d];
        view->data = (char *)parent->data +
                     (size_t)off * tb_dtype_size(parent->dtype);
    }
    return 0;
}

/* Element offset (in elements) of row-major flat index `flat`. */
static int64_t flat_offset(const tb_tensor *t, int64_t flat)
{
    int64_t off = 0;
    for (int i = t->ndim - 1; i >= 0; i--) {
        int64_t idx = flat % t->shape[i];
        flat /= t->shape[i];
        off += idx * t->strides[i];
    }
    return off;
}

double tb_tensor_get(const tb_tensor *t, int64_t flat)
{
    return tb_tensor_load(t, flat_offset(t, flat));
}

void tb_tensor_set(tb_tensor *t, int64_t flat, double v)
{
    tb_tensor_store(t, flat_offset(t, flat), v);
}
