/* bf16/f16 rows of independent units in parts that stay in the caches
 * (half_bwd.h, called from half_part.c's tb_cpu_half_part).
 *
 * softmax, log_softmax and log_softmax_backward over the last axis
 * where half_lsm.c declines them (the scalar level's gradient)
 * (units: its rows) and max_pool2d, avg_pool2d and their backward
 * (units: the N*C planes): each thread widens a chunk of whole units of
 * every input into its own f32 scratch (about HR_ELEMS elements in
 * all, one allocation a part), runs the op's f32 row of the level on the chunk
 * through the instance's single-threaded twin and narrows the chunk's
 * output.  Memory sees the 16-bit tensors once; no whole-tensor
 * scratch, and the conversions run on the threads.  A unit's value in these f32 rows does not
 * depend on the units beside it (the f32 drivers split rows and planes
 * over the threads at any boundary), so the bits are those of half.c's
 * whole-tensor path (tests/test_half_paths.c).  A chunk holds 16-unit
 * multiples where it holds more than 16 (SIMD loops over several rows
 * see the same groups as on the whole tensor from row 0).
 * (softmax bf16 256x1000 widened the whole tensor into tracked
 * scratch: 1.5x the f32 row's own time; 1024x10: 1.3x.) */
#include <string.h>

#include "../../base/error.h"
#include "../../ops/alloc.h"
#include "cpu_internal.h"
#include "half_bwd.h"

/* f32 elements a chunk's scratch aims at, inputs and output together
 * (192 KiB, in L2; 48 KiB chunks took the pools' backward 10-15%
 * longer: the f32 row's per-call cost) */
#define HR_ELEMS 49152

typedef struct {
    int n_in;
    bool planes;         /* pools: chunks [1, k, h, w]; else [k, len] */
    tb_kernel_fn f32;    /* on serial, the single-threaded twin */
    void *serial;
    const tb_params *p;
    const tb_tensor *in;
    tb_tensor *out;
    tb_cpu_half_cvt cv;
    int64_t units, upc;  /* units, units per chunk */
    int64_t len[4];      /* a unit's elements: inputs, then the output */
    int64_t h[4], w[4];  /* pools: a plane's dims */
    int64_t ulen;        /* sum of len[] */
    int rc[TB_MAX_AXIS_VALUES];
} hr_job;

static void hr_shape(const hr_job *j, int t, int64_t k, tb_shape *s)
{
    if (j->planes) {
        *s = (tb_shape){4, {1, k, j->h[t], j->w[t]}};
    } else {
        *s = (tb_shape){2, {k, j->len[t]}};
    }
}

static void hr_part(void *arg, int part, int nparts)
{
    hr_job *j = arg;
    const int64_t nc = (j->units + j->upc - 1) / j->upc;
    int64_t c0, c1;
    tb_cpu_span(nc, 1, part, nparts, &c0, &c1);
    if (c1 <= c0)
        return;
    float *buf = tb_alloc((size_t)(j->upc * j->ulen) * sizeof *buf);
    if (!buf) {
        j->rc[part] = TB_ENOMEM;
        return;
    }
    const int nt = j->n_in + 1;
    for (int64_t c = c0; c < c1; c++) {
        const int64_t u0 = c * j->upc;
        const int64_t k = j->units - u0 < j->upc ? j->units - u0 : j->upc;
        tb_tensor t[4];
        float *at = buf;
        for (int i = 0; i < nt; i++) {
            tb_shape s;
            hr_shape(j, i, k, &s);
            tb_tensor_init(&t[i], TB_F32, &s);
            t[i].data = at;
            if (i < j->n_in)
                j->cv.widen((const uint16_t *)j->in[i].data + u0 * j->len[i],
                            at, k * j->len[i]);
            at += k * j->len[i];
        }
        int rc = j->f32(j->serial, t, &t[j->n_in], j->p);
        if (rc) {
            j->rc[part] = rc;
            break;
        }
        j->cv.narrow(t[j->n_in].data,
                     (uint16_t *)j->out[0].data + u0 * j->len[j->n_in],
                     k * j->len[j->n_in]);
    }
    tb_free(buf);
}

int tb_cpu_half_units(void *ctx, const tb_op *op, tb_kernel_fn f32,
                      tb_cpu_half_cvt cv, const tb_tensor *in,
                      tb_tensor *out, const tb_params *p)
{
    hr_job j = {.serial = tb_cpu_serial(ctx), .f32 = f32, .cv = cv,
                .in = in, .out = out, .n_in = op->n_in};
    tb_params q = p ? *p : (tb_params){0};
    switch (op->id) {
    case TB_OP_softmax:
    case TB_OP_log_softmax:
    case TB_OP_log_softmax_backward: {
        int ax;
        const int nd = in[0].ndim;
        if (tb_axis_norm(tb_params_has(&q, 0) ? (int64_t)q.v[0] : -1, nd,
                         &ax) ||
            ax != nd - 1)
            return 1; /* another axis: the whole path */
        q.v[0] = -1; /* the chunks are [k, len] */
        q.set |= 1u;
        for (int t = 0; t <= j.n_in; t++)
            j.len[t] = in[0].shape[nd - 1];
        break;
    }
    case TB_OP_max_pool2d:
    case TB_OP_avg_pool2d:
    case TB_OP_max_pool2d_backward:
    case TB_OP_avg_pool2d_backward:
        j.planes = true;
        for (int t = 0; t <= j.n_in; t++) {
            const tb_tensor *x = t < j.n_in ? &in[t] : &out[0];
            if (x->ndim != 4)
                return 1;
            j.h[t] = x->shape[2];
            j.w[t] = x->shape[3];
            j.len[t] = j.h[t] * j.w[t];
        }
        break;
    default:
        return 1;
    }
    j.p = &q;
    const int64_t n = tb_tensor_numel(&out[0]);
    if (!j.serial || n == 0 || j.len[j.n_in] == 0)
        return 1; /* (empty: the whole path's rules) */
    j.units = n / j.len[j.n_in];
    for (int t = 0; t <= j.n_in; t++)
        j.ulen += j.len[t];
    j.upc = HR_ELEMS / j.ulen;
    if (j.upc > 16)
        j.upc -= j.upc % 16;
    if (j.upc < 1)
        j.upc = 1;
    if (j.upc > j.units)
        j.upc = j.units;
    tb_cpu_count_launch(ctx);
    tb_cpu_parallel(ctx, j.units * j.ulen * 4, (j.units + j.upc - 1) / j.upc,
                    hr_part, &j);
    for (int i = 0; i < TB_MAX_AXIS_VALUES; i++)
        if (j.rc[i])
            return j.rc[i];
    return 0;
}
