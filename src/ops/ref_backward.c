/* Reference kernels of the backward ops (op_backward.h) and of
 * embedding's forward (a gather beside its gradient), in the contract
 * of ref.h: host inputs of any dtype and strides, contiguous f64 outputs
 * of the shapes the op's shape rule gives.
 *
 * Clarity over speed: every input is first copied to a contiguous double
 * array; every output element is a Neumaier-compensated sum of its terms
 * (one term for the element-wise gradients), in the order the forward
 * index space is walked, so a gradient that sums over a broadcast, a
 * batch or a convolution's positions is close to the correctly rounded
 * sum.  Functions in the stable forms of ref.c: sigmoid from exp(-|x|),
 * gelu's Phi from erfc. */
#include <math.h>
#include <string.h>

#include "../base/error.h"
#include "alloc.h"
#include "ksum.h"
#include "op_backward.h"
#include "ref.h"

/* The operands of one call: inputs as contiguous doubles, one
 * compensated accumulator per output element, the shapes and the
 * parameters with their defaults. */
typedef struct bw_io {
    const tb_op *op;
    tb_shape in[TB_MAX_INPUTS], out[TB_MAX_OUTPUTS];
    double *x[TB_MAX_INPUTS];
    tb_ksum *acc[TB_MAX_OUTPUTS];
    tb_params p;
} bw_io;

static void bw_free(bw_io *io)
{
    for (int i = 0; i < TB_MAX_INPUTS; i++)
        tb_free(io->x[i]);
    for (int i = 0; i < TB_MAX_OUTPUTS; i++)
        tb_free(io->acc[i]);
}

static int bw_begin(bw_io *io, tb_op_id id, const tb_tensor *in,
                    const tb_tensor *out, const tb_params *p)
{
    memset(io, 0, sizeof *io);
    io->op = tb_op_get(id);
    if (!in || !out)
        return TB_EINVAL;
    const tb_op *op = io->op;
    for (int i = 0; i < op->n_in; i++) {
        if ((unsigned)in[i].dtype >= TB_DTYPE_COUNT)
            return TB_EDTYPE;
        if (in[i].ndim < 0 || in[i].ndim > TB_MAX_DIMS)
            return TB_ESHAPE;
        io->in[i] = tb_tensor_shape(&in[i]);
        if (tb_shape_numel(&io->in[i]) > 0 && !in[i].data)
            return TB_EINVAL;
    }
    int rc = tb_op_infer(op, io->in, op->n_in, p, io->out, NULL, 0);
    if (rc)
        return rc;
    for (int i = 0; i < op->n_out; i++) {
        tb_shape got = tb_tensor_shape(&out[i]);
        if (out[i].dtype != TB_F64)
            return TB_EDTYPE;
        if (!tb_shape_equal(&got, &io->out[i]))
            return TB_ESHAPE;
        if (!tb_tensor_is_contiguous(&out[i]) || !out[i].data)
            return TB_EINVAL;
    }
    io->p = p ? *p : (tb_params){0};
    tb_params_defaults(op, &io->p);
    for (int i = 0; i < op->n_in; i++) {
        int64_t n = tb_shape_numel(&io->in[i]);
        io->x[i] = tb_alloc((size_t)n * sizeof(double));
        if (!io->x[i])
            return bw_free(io), TB_ENOMEM;
        for (int64_t k = 0; k < n; k++)
            io->x[i][k] = tb_tensor_get(&in[i], k);
    }
    for (int i = 0; i < op->n_out; i++) {
        int64_t n = tb_shape_numel(&io->out[i]);
        io->acc[i] = tb_alloc((size_t)n * sizeof(tb_ksum));
        if (!io->acc[i])
            return bw_free(io), TB_ENOMEM;
        memset(io->acc[i], 0, (size_t)n * sizeof(tb_ksum));
    }
    return 0;
}

/* Writes the sums to the outputs and frees the operands; returns rc. */
static int bw_end(bw_io *io, tb_tensor *out, int rc)
{
    for (int i = 0; rc == 0 && i < io->op->n_out; i++) {
        int64_t n = tb_shape_numel(&io->out[i]);
        double *d = out[i].data;
        for (int64_t k = 0; k < n; k++)
            d[k] = tb_ksum_get(&io->acc[i][k]);
    }
    bw_free(io);
    return rc;
}

/* api_add computes add through an API layer: add's reference. */
int tb_ref_api_add(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    (void)p;
    return tb_ref_add(in, out, NULL);
}

/* ---- element-wise gradients ------------------------------------------- */

static double sigmoid_of(double x)
{
    double e = exp(-fabs(x));
    return x >= 0 ? 1 / (1 + e) : e / (1 + e);
}

static double act_grad(tb_op_id id, double g, double x)
{
    switch (id) {
    case TB_OP_relu_backward: return x > 0 ? g : 0;
    case TB_OP_sigmoid_backward: {
        double s = sigmoid_of(x);
        return g * s * (1 - s);
    }
    case TB_OP_tanh_backward: {
        double t = tanh(x);
        return g * (1 - t * t);
    }
    default: { /* gelu */
        double cdf = 0.5 * erfc(-x / sqrt(2.0));
        double pdf = exp(-0.5 * x * x) / 2.50662827463100050242;
        return g * (cdf + x * pdf);
    }
    }
}

static int act(tb_op_id id, const tb_tensor *in, tb_tensor *out,
               const tb_params *p)
{
    bw_io io;
    int rc = bw_begin(&io, id, in, out, p);
    if (rc)
        return rc;
    int64_t n = tb_shape_numel(&io.out[0]);
    for (int64_t i = 0; i < n; i++)
        tb_ksum_add(&io.acc[0][i], act_grad(id, io.x[0][i], io.x[1][i]));
    return bw_end(&io, out, 0);
}

int tb_ref_relu_backward(const tb_tensor *in, tb_tensor *out,
                         const tb_params *p)
{
    return act(TB_OP_relu_backward, in, out, p);
}

int tb_ref_sigmoid_backward(const tb_tensor *in, tb_tensor *out,
                            const tb_params *p)
{
    return act(TB_OP_sigmoid_backward, in, out, p);
}

int tb_ref_tanh_backward(const tb_tensor *in, tb_tensor *out,
                         const tb_params *p)
{
    return act(TB_OP_tanh_backward, in, out, p);
}

int tb_ref_gelu_backward(const tb_tensor *in, tb_tensor *out,
                         const tb_params *p)
{
    return act(TB_OP_gelu_backward, in, out, p);
}

/* ---- along an axis ------------------------------------------------------ */

/* outer x len x inner split of shape s around axis ax. */
static void split_axis(const tb_shape *s, int ax, int64_t *outer,
                       int64_t *len, int64_t *inner)
{
    *outer = 1, *inner = 1;
    for (int d = 0; d < ax; d++)
        *outer *= s->dim[d];
    *len = s->dim[ax];
    for (int d = ax + 1; d < s->ndim; d++)
        *inner *= s->dim[d];
}

int tb_ref_log_softmax_backward(const tb_tensor *in, tb_tensor *out,
                                const tb_params *p)
{
    bw_io io;
    int rc = bw_begin(&io, TB_OP_log_softmax_backward, in, out, p);
    if (rc)
        return rc;
    int ax = 0;
    tb_axis_norm((int64_t)io.p.v[0], io.in[0].ndim, &ax);
    int64_t outer, len, inner;
    split_axis(&io.in[0], ax, &outer, &len, &inner);
    const double *g = io.x[0], *y = io.x[1];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            tb_ksum s = {0, 0};
            int64_t base = o * len * inner + i;
            for (int64_t k = 0; k < len; k++)
                tb_ksum_add(&s, g[base + k * inner]);
            double sg = tb_ksum_get(&s);
            for (int64_t k = 0; k < len; k++) {
                int64_t j = base + k * inner;
                tb_ksum_add(&io.acc[0][j], g[j]);
                tb_ksum_add(&io.acc[0][j], -exp(y[j]) * sg);
            }
        }
    return bw_end(&io, out, 0);
}

static int reduce_bw(tb_op_id id, const tb_tensor *in, tb_tensor *out,
                     const tb_params *p)
{
    bw_io io;
    int rc = bw_begin(&io, id, in, out, p);
    if (rc)
        return rc;
    const tb_shape *xs = &io.in[1];
    int64_t n = tb_shape_numel(xs);
    int64_t outer = 1, len = n, inner = 1;
    if (tb_params_has(&io.p, 0)) {
        int ax = 0;
        tb_axis_norm((int64_t)io.p.v[0], xs->ndim, &ax);
        split_axis(xs, ax, &outer, &len, &inner);
    }
    double scale = id == TB_OP_mean_backward ? 1.0 / (double)len : 1.0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < len; k++)
            for (int64_t i = 0; i < inner; i++)
                tb_ksum_add(&io.acc[0][(o * len + k) * inner + i],
                            io.x[0][o * inner + i] * scale);
    return bw_end(&io, out, 0);
}

int tb_ref_sum_backward(const tb_tensor *in, tb_tensor *out,
                        const tb_params *p)
{
    return reduce_bw(TB_OP_sum_backward, in, out, p);
}

int tb_ref_mean_backward(const tb_tensor *in, tb_tensor *out,
                         const tb_params *p)
{
    return reduce_bw(TB_OP_mean_backward, in, out, p);
}

/* ---- broadcasting binary ops -------------------------------------------- */

static int binary_bw(tb_op_id id, const tb_tensor *in, tb_tensor *out,
                     const tb_params *p)
{
    bw_io io;
    int rc = bw_begin(&io, id, in, out, p);
    if (rc)
        return rc;
    const tb_shape *gs = &io.in[0];
    int nd = gs->ndim;
    int64_t sa[TB_MAX_DIMS], sb[TB_MAX_DIMS], idx[TB_MAX_DIMS] = {0};
    tb_shape_bcast_strides(&io.in[1], nd, sa);
    tb_shape_bcast_strides(&io.in[2], nd, sb);
    int64_t n = tb_shape_numel(gs), oa = 0, ob = 0;
    const double *g = io.x[0], *a = io.x[1], *b = io.x[2];
    for (int64_t i = 0; i < n; i++) {
        double gv = g[i], av = a[oa], bv = b[ob];
        switch (id) {
        case TB_OP_add_backward:
            tb_ksum_add(&io.acc[0][oa], gv);
            tb_ksum_add(&io.acc[1][ob], gv);
            break;
        case TB_OP_sub_backward:
            tb_ksum_add(&io.acc[0][oa], gv);
            tb_ksum_add(&io.acc[1][ob], -gv);
            break;
        case TB_OP_mul_backward:
            tb_ksum_add(&io.acc[0][oa], gv * bv);
            tb_ksum_add(&io.acc[1][ob], gv * av);
            break;
        default: /* div */
            tb_ksum_add(&io.acc[0][oa], gv / bv);
            tb_ksum_add(&io.acc[1][ob], -gv * av / (bv * bv));
            break;
        }
        for (int d = nd - 1; d >= 0; d--) {
            oa += sa[d], ob += sb[d];
            if (++idx[d] < gs->dim[d])
                break;
            oa -= sa[d] * gs->dim[d], ob -= sb[d] * gs->dim[d];
            idx[d] = 0;
        }
    }
    return bw_end(&io, out, 0);
}

int tb_ref_add_backward(const tb_tensor *in, tb_tensor *out,
                        const tb_params *p)
{
    return binary_bw(TB_OP_add_backward, in, out, p);
}

int tb_ref_sub_backward(const tb_tensor *in, tb_tensor *out,
                        const tb_params *p)
{
    return binary_bw(TB_OP_sub_backward, in, out, p);
}

int tb_ref_mul_backward(const tb_tensor *in, tb_tensor *out,
                        const tb_params *p)
{
    return binary_bw(TB_OP_mul_backward, in, out, p);
}

int tb_ref_div_backward(const tb_tensor *in, tb_tensor *out,
                        const tb_params *p)
{
    return binary_bw(TB_OP_div_backward, in, out, p);
}

/* ---- products ------------------------------------------------------------ */

/* da[M,K] += g[M,N] @ b[K,N]^T and db[K,N] += a[M,K]^T @ g, g masked
 * where y (if given) is not positive. */
static void product_bw(const double *g, const double *y, const double *a,
                       const double *b, tb_ksum *da, tb_ksum *db, int64_t M,
                       int64_t K, int64_t N)
{
    for (int64_t i = 0; i < M; i++)
        for (int64_t k = 0; k < K; k++)
            for (int64_t j = 0; j < N; j++) {
                double gv = g[i * N + j];
                if (y && !(y[i * N + j] > 0))
                    gv = 0;
                tb_ksum_add(&da[i * K + k], gv * b[k * N + j]);
                tb_ksum_add(&db[k * N + j], a[i * K + k] * gv);
            }
}

int tb_ref_matmul_backward(const tb_tensor *in, tb_tensor *out,
                           const tb_params *p)
{
    bw_io io;
    int rc = bw_begin(&io, TB_OP_matmul_backward, in, out, p);
    if (rc)
        return rc;
    const tb_shape *as = &io.in[1], *bs = &io.in[2];
    int nd = as->ndim;
    int64_t M = as->dim[nd - 2], K = as->dim[nd - 1], N = bs->dim[nd - 1];
    int64_t batch = tb_shape_numel(as) / (M * K);
    for (int64_t t = 0; t < batch; t++)
        product_bw(io.x[0] + t * M * N, NULL, io.x[1] + t * M * K,
                   io.x[2] + t * K * N, io.acc[0] + t * M * K,
                   io.acc[1] + t * K * N, M, K, N);
    return bw_end(&io, out, 0);
}

int tb_ref_linear_backward(const tb_tensor *in, tb_tensor *out,
                           const tb_params *p)
{
    bw_io io;
    int rc = bw_begin(&io, TB_OP_linear_backward, in, out, p);
    if (rc)
        return rc;
    int64_t M = io.in[1].dim[0], K = io.in[1].dim[1], N = io.in[2].dim[1];
    product_bw(io.x[0], io.x[3], io.x[1], io.x[2], io.acc[0], io.acc[1], M,
               K, N);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++)
            if (io.x[3][i * N + j] > 0)
                tb_ksum_add(&io.acc[2][j], io.x[0][i * N + j]);
    return bw_end(&io, out, 0);
}

/* ---- loss ----------------------------------------------------------------- */

/* log(sum(exp(x[0..C)))) in double: the row's max m, then m + log of the
 * compensated sum of exp(x - m) (every term <= 1, one of them 1). */
static double ce_lse(const double *x, int64_t C)
{
    double m = x[0];
    for (int64_t j = 1; j < C; j++)
        m = x[j] > m || x[j] != x[j] ? x[j] : m;
    if (isinf(m))
        return m > 0 ? NAN : m; /* +inf: inf - inf; all -inf: -inf */
    tb_ksum s = {0, 0};
    for (int64_t j = 0; j < C; j++)
        tb_ksum_add(&s, exp(x[j] - m));
    return m + log(tb_ksum_get(&s));
}

/* nll_loss and cross_entropy (soft): the mean over the rows of lse_i -
 * x_i[t_i], lse_i = log(sum(exp(x_i))) for cross_entropy and 0 for
 * nll_loss (its x are log-probabilities already). */
static int loss_fwd(tb_op_id id, const tb_tensor *in, tb_tensor *out,
                    const tb_params *p)
{
    bw_io io;
    int rc = bw_begin(&io, id, in, out, p);
    if (rc)
        return rc;
    const bool soft = id == TB_OP_cross_entropy;
    int64_t N = io.in[0].dim[0], C = io.in[0].dim[1];
    tb_ksum s = {0, 0};
    for (int64_t i = 0; i < N && rc == 0; i++) {
        int64_t c = 0;
        rc = tb_bw_class(io.x[1][i], C, &c);
        const double *x = io.x[0] + i * C;
        if (rc == 0)
            tb_ksum_add(&s, (soft ? ce_lse(x, C) : 0) - x[c]);
    }
    tb_ksum_add(&io.acc[0][0], tb_ksum_get(&s) / (double)N);
    return bw_end(&io, out, rc);
}

/* Their gradients: (softmax(x_i) - onehot(t_i)) * g / N for
 * cross_entropy, -onehot(t_i) * g / N for nll_loss. */
static int loss_bwd(tb_op_id id, const tb_tensor *in, tb_tensor *out,
                    const tb_params *p)
{
    bw_io io;
    int rc = bw_begin(&io, id, in, out, p);
    if (rc)
        return rc;
    const bool soft = id == TB_OP_cross_entropy_backward;
    int64_t N = io.in[1].dim[0], C = io.in[1].dim[1];
    const double gn = io.x[0][0] / (double)N;
    for (int64_t i = 0; i < N && rc == 0; i++) {
        int64_t c = 0;
        rc = tb_bw_class(io.x[2][i], C, &c);
        const double *x = io.x[1] + i * C;
        const double lse = soft ? ce_lse(x, C) : 0;
        for (int64_t j = 0; rc == 0 && j < C; j++) {
            double v = (soft ? exp(x[j] - lse) : 0) - (j == c);
            if (v != 0)
                tb_ksum_add(&io.acc[0][i * C + j], v * gn);
        }
    }
    return bw_end(&io, out, rc);
}

int tb_ref_nll_loss(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    return loss_fwd(TB_OP_nll_loss, in, out, p);
}

int tb_ref_nll_loss_backward(const tb_tensor *in, tb_tensor *out,
                             const tb_params *p)
{
    return loss_bwd(TB_OP_nll_loss_backward, in, out, p);
}

int tb_ref_cross_entropy(const tb_tensor *in, tb_tensor *out,
                         const tb_params *p)
{
    return loss_fwd(TB_OP_cross_entropy, in, out, p);
}

int tb_ref_cross_entropy_backward(const tb_tensor *in, tb_tensor *out,
                                  const tb_params *p)
{
    return loss_bwd(TB_OP_cross_entropy_backward, in, out, p);
}

/* ---- embedding -------------------------------------------------------------
 * The forward (a gather) shares the operand helpers of the gradients. */

/* Row r of the indices idx (n values): its class in [0, V), else
 * TB_EINVAL. */
static int emb_rows(const double *idx, int64_t n, int64_t V, int64_t *cls)
{
    for (int64_t r = 0; r < n; r++)
        if (tb_bw_class(idx[r], V, &cls[r]))
            return TB_EINVAL;
    return 0;
}

/* embedding: out row r = weight row idx[r]; embedding_backward: dW row v
 * = the sum of the g rows r with idx[r] = v, in index order. */
static int embedding_ref(tb_op_id id, const tb_tensor *in, tb_tensor *out,
                         const tb_params *p)
{
    bw_io io;
    int rc = bw_begin(&io, id, in, out, p);
    if (rc)
        return rc;
    const bool bw = id == TB_OP_embedding_backward;
    const int64_t n = tb_shape_numel(&io.in[1]);
    const int64_t D = bw ? io.out[0].dim[1] : io.in[0].dim[1];
    const int64_t V = bw ? io.out[0].dim[0] : io.in[0].dim[0];
    int64_t *cls = tb_alloc((size_t)(n ? n : 1) * sizeof *cls);
    rc = cls ? emb_rows(io.x[1], n, V, cls) : TB_ENOMEM;
    for (int64_t r = 0; rc == 0 && r < n; r++)
        for (int64_t j = 0; j < D; j++) {
            if (bw)
                tb_ksum_add(&io.acc[0][cls[r] * D + j], io.x[0][r * D + j]);
            else
                tb_ksum_add(&io.acc[0][r * D + j], io.x[0][cls[r] * D + j]);
        }
    tb_free(cls);
    return bw_end(&io, out, rc);
}

int tb_ref_embedding(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    return embedding_ref(TB_OP_embedding, in, out, p);
}

int tb_ref_embedding_backward(const tb_tensor *in, tb_tensor *out,
                              const tb_params *p)
{
    return embedding_ref(TB_OP_embedding_backward, in, out, p);
}

/* ---- pooling and convolution -------------------------------------------- */

static int pool_bw(tb_op_id id, const tb_tensor *in, tb_tensor *out,
                   const tb_params *p)
{
    bw_io io;
    int rc = bw_begin(&io, id, in, out, p);
    if (rc)
        return rc;
    int64_t k = (int64_t)io.p.v[0];
    int64_t st = tb_params_has(&io.p, 1) ? (int64_t)io.p.v[1] : k;
    int64_t pad = (int64_t)io.p.v[2];
    const tb_shape *xs = &io.in[1], *gs = &io.in[0];
    int64_t NC = xs->dim[0] * xs->dim[1], H = xs->dim[2], W = xs->dim[3];
    int64_t OH = gs->dim[2], OW = gs->dim[3];
    for (int64_t nc = 0; nc < NC; nc++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                double gv = io.x[0][(nc * OH + oh) * OW + ow];
                int64_t best = -1;
                double bv = 0;
                for (int64_t kh = 0; kh < k; kh++)
                    for (int64_t kw = 0; kw < k; kw++) {
                        int64_t ih = oh * st - pad + kh;
                        int64_t iw = ow * st - pad + kw;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                            continue;
                        int64_t j = (nc * H + ih) * W + iw;
                        if (id == TB_OP_avg_pool2d_backward) {
                            tb_ksum_add(&io.acc[0][j], gv / (double)(k * k));
                            continue;
                        }
                        double v = io.x[1][j];
                        if (best < 0 ||
                            (!isnan(bv) && (v > bv || isnan(v))))
                            best = j, bv = v;
                    }
                if (id == TB_OP_max_pool2d_backward && best >= 0)
                    tb_ksum_add(&io.acc[0][best], gv);
            }
    return bw_end(&io, out, 0);
}

int tb_ref_max_pool2d_backward(const tb_tensor *in, tb_tensor *out,
                               const tb_params *p)
{
    return pool_bw(TB_OP_max_pool2d_backward, in, out, p);
}

int tb_ref_avg_pool2d_backward(const tb_tensor *in, tb_tensor *out,
                               const tb_params *p)
{
    return pool_bw(TB_OP_avg_pool2d_backward, in, out, p);
}

int tb_ref_conv2d_backward(const tb_tensor *in, tb_tensor *out,
                           const tb_params *p)
{
    bw_io io;
    int rc = bw_begin(&io, TB_OP_conv2d_backward, in, out, p);
    if (rc)
        return rc;
    int64_t st = (int64_t)io.p.v[0], pad = (int64_t)io.p.v[1];
    int64_t dil = (int64_t)io.p.v[2];
    const tb_shape *xs = &io.in[1], *ws = &io.in[2], *gs = &io.in[0];
    int64_t N = xs->dim[0], C = xs->dim[1], H = xs->dim[2], W = xs->dim[3];
    int64_t O = ws->dim[0], KH = ws->dim[2], KW = ws->dim[3];
    int64_t OH = gs->dim[2], OW = gs->dim[3];
    const double *g = io.x[0], *x = io.x[1], *w = io.x[2];
    /* input_grad=0: dx stays zeros */
    const bool want_dx = !tb_params_has(&io.p, 3) || io.p.v[3] != 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < O; o++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double gv = g[((n * O + o) * OH + oh) * OW + ow];
                    tb_ksum_add(&io.acc[2][o], gv);
                    for (int64_t c = 0; c < C; c++)
                        for (int64_t kh = 0; kh < KH; kh++)
                            for (int64_t kw = 0; kw < KW; kw++) {
                                int64_t ih = oh * st - pad + kh * dil;
                                int64_t iw = ow * st - pad + kw * dil;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                    continue;
                                int64_t xi = ((n * C + c) * H + ih) * W + iw;
                                int64_t wi = ((o * C + c) * KH + kh) * KW + kw;
                                if (want_dx)
                                    tb_ksum_add(&io.acc[0][xi], gv * w[wi]);
                                tb_ksum_add(&io.acc[1][wi], gv * x[xi]);
                            }
                }
    return bw_end(&io, out, 0);
}
