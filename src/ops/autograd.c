/* The tape autograd.  See autograd.h. */
#include "autograd.h"

#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/grow.h"

#define AG_MAX_HOOKS 16

typedef struct ag_var {
    tb_tensor value, grad;
    bool live, leaf, requires_grad, has_grad;
    bool view; /* value is a view of another variable's memory */
} ag_var;

typedef struct ag_node {
    tb_op_id op;
    tb_params p;
    int in[TB_MAX_INPUTS], n_in;
    int out;
} ag_node;

typedef struct ag_hook {
    tb_ag_hook_kind kind;
    tb_op_id op;
    tb_ag_hook_fn fn;
    void *user;
    bool used;
} ag_hook;

struct tb_ag {
    tb_ag_exec ex;
    tb_dtype dt;
    ag_var *vars;
    int n_vars, cap_vars;
    ag_node *nodes;
    int n_nodes, cap_nodes;
    ag_hook hooks[AG_MAX_HOOKS];
    tb_ag_stats st;
};

tb_op_id tb_ag_backward_op(tb_op_id op)
{
    switch (op) {
    case TB_OP_relu: return TB_OP_relu_backward;
    case TB_OP_sigmoid: return TB_OP_sigmoid_backward;
    case TB_OP_tanh: return TB_OP_tanh_backward;
    case TB_OP_gelu: return TB_OP_gelu_backward;
    case TB_OP_log_softmax: return TB_OP_log_softmax_backward;
    case TB_OP_sum: return TB_OP_sum_backward;
    case TB_OP_mean: return TB_OP_mean_backward;
    case TB_OP_add: return TB_OP_add_backward;
    case TB_OP_sub: return TB_OP_sub_backward;
    case TB_OP_mul: return TB_OP_mul_backward;
    case TB_OP_div: return TB_OP_div_backward;
    case TB_OP_matmul: return TB_OP_matmul_backward;
    case TB_OP_linear: return TB_OP_linear_backward;
    case TB_OP_nll_loss: return TB_OP_nll_loss_backward;
    case TB_OP_max_pool2d: return TB_OP_max_pool2d_backward;
    case TB_OP_avg_pool2d: return TB_OP_avg_pool2d_backward;
    case TB_OP_conv2d:
    case TB_OP_conv2d_nobias: return TB_OP_conv2d_backward;
    case TB_OP_layer_norm: return TB_OP_layer_norm_backward;
    case TB_OP_rms_norm: return TB_OP_rms_norm_backward;
    case TB_OP_group_norm: return TB_OP_group_norm_backward;
    case TB_OP_sdpa: return TB_OP_sdpa_backward;
    case TB_OP_cross_entropy: return TB_OP_cross_entropy_backward;
    case TB_OP_embedding: return TB_OP_embedding_backward;
    case TB_OP_permute: return TB_OP_permute; /* the inverse permute */
    default: return TB_OP_COUNT;
    }
}

int tb_ag_create(const tb_ag_exec *ex, tb_dtype dt, tb_ag **out)
{
    if (!ex || !ex->run || !ex->alloc || !ex->free || !out ||
        (unsigned)dt >= TB_DTYPE_COUNT)
        return TB_EINVAL;
    tb_ag *ag = calloc(1, sizeof *ag);
    if (!ag)
        return TB_ENOMEM;
    ag->ex = *ex;
    ag->dt = dt;
    *out = ag;
    return 0;
}

static void ag_free_tensor(tb_ag *ag, tb_tensor *t)
{
    if (t->data)
        ag->ex.free(ag->ex.user, t);
    t->data = NULL;
}

static void ag_free_var(tb_ag *ag, ag_var *v)
{
    if (!v->view)
        ag_free_tensor(ag, &v->value);
    if (v->has_grad)
        ag_free_tensor(ag, &v->grad);
    memset(v, 0, sizeof *v);
}

void tb_ag_destroy(tb_ag *ag)
{
    if (!ag)
        return;
    for (int i = 0; i < ag->n_vars; i++)
        if (ag->vars[i].live)
            ag_free_var(ag, &ag->vars[i]);
    free(ag->vars);
    free(ag->nodes);
    free(ag);
}

/* A new variable of shape s with memory; its handle in *var. */
static int ag_new_var_(tb_ag *ag, const tb_shape *s, bool alloc, int *var)
{
    int i = 0;
    while (i < ag->n_vars && ag->vars[i].live)
        i++;
    if (i == ag->n_vars) {
        ag_var *v = tb_grow(ag->vars, &ag->cap_vars, ag->n_vars, sizeof *v,
                            32);
        if (!v)
            return TB_ENOMEM;
        ag->vars = v;
        ag->n_vars++;
    }
    ag_var *v = &ag->vars[i];
    memset(v, 0, sizeof *v);
    tb_tensor_init(&v->value, ag->dt, s);
    int rc = alloc ? ag->ex.alloc(ag->ex.user, &v->value) : 0;
    if (rc)
        return rc;
    v->live = true;
    v->view = !alloc;
    *var = i;
    return 0;
}

static int ag_new_var(tb_ag *ag, const tb_shape *s, int *var)
{
    return ag_new_var_(ag, s, true, var);
}

static ag_var *ag_var_get(tb_ag *ag, int var)
{
    if (!ag || var < 0 || var >= ag->n_vars || !ag->vars[var].live)
        return NULL;
    return &ag->vars[var];
}

int tb_ag_leaf(tb_ag *ag, const tb_shape *s, bool requires_grad, int *var)
{
    if (!ag || !s || !var)
        return TB_EINVAL;
    int rc = ag_new_var(ag, s, var);
    if (rc)
        return rc;
    ag->vars[*var].leaf = true;
    ag->vars[*var].requires_grad = requires_grad;
    return 0;
}

tb_tensor *tb_ag_value(tb_ag *ag, int var)
{
    ag_var *v = ag_var_get(ag, var);
    return v ? &v->value : NULL;
}

tb_tensor *tb_ag_grad(tb_ag *ag, int var)
{
    ag_var *v = ag_var_get(ag, var);
    return v && v->has_grad ? &v->grad : NULL;
}

static void ag_hooks(tb_ag *ag, tb_ag_hook_kind kind, const tb_op *op,
                     int node, const tb_tensor *in, int n_in,
                     const tb_tensor *out, int n_out)
{
    for (int h = 0; h < AG_MAX_HOOKS; h++) {
        const ag_hook *k = &ag->hooks[h];
        if (!k->used || k->kind != kind ||
            (k->op != TB_OP_COUNT && k->op != op->id))
            continue;
        k->fn(k->user, kind, op, node, in, n_in, out, n_out);
        if (kind == TB_AG_FORWARD)
            ag->st.fwd_hook_calls++;
        else
            ag->st.bwd_hook_calls++;
    }
}

static int ag_push_node(tb_ag *ag)
{
    ag_node *n = tb_grow(ag->nodes, &ag->cap_nodes, ag->n_nodes, sizeof *n,
                         32);
    if (!n)
        return -1;
    ag->nodes = n;
    memset(&ag->nodes[ag->n_nodes], 0, sizeof ag->nodes[0]);
    return ag->n_nodes++;
}

int tb_ag_apply(tb_ag *ag, tb_op_id id, const int *in, const tb_params *p,
                int *out)
{
    const tb_op *op = tb_op_get(id);
    if (!ag || !op || !out || (op->n_in && !in) || op->n_in > TB_MAX_INPUTS)
        return TB_EINVAL;
    tb_tensor tin[TB_MAX_INPUTS];
    tb_shape ish[TB_MAX_INPUTS], osh[TB_MAX_OUTPUTS];
    bool rg = false;
    for (int i = 0; i < op->n_in; i++) {
        ag_var *v = ag_var_get(ag, in[i]);
        if (!v)
            return TB_EINVAL;
        tin[i] = v->value;
        ish[i] = tb_tensor_shape(&v->value);
        rg |= v->requires_grad;
    }
    bool record = rg && tb_ag_backward_op(id) != TB_OP_COUNT;
    if (rg && !record)
        return TB_EUNSUPPORTED;
    if (op->n_out != 1 || op->alias)
        return TB_EUNSUPPORTED; /* the tape holds single-output ops */
    /* kernels get every parameter, defaults filled (some read them
     * without a NULL check) */
    tb_params full = p ? *p : (tb_params){0};
    tb_params_defaults(op, &full);
    p = &full;
    int rc = tb_op_infer(op, ish, op->n_in, p, osh, NULL, 0);
    if (rc)
        return rc;
    int ov;
    if ((rc = ag_new_var(ag, &osh[0], &ov)))
        return rc;
    ag_var *o = &ag->vars[ov];
    if ((rc = ag->ex.run(ag->ex.user, op, tin, &o->value, p))) {
        ag_free_var(ag, o);
        return rc;
    }
    o->requires_grad = rg;
    ag->st.fwd_calls++;
    int node = -1;
    if (record) {
        node = ag_push_node(ag);
        if (node < 0) {
            ag_free_var(ag, o);
            return TB_ENOMEM;
        }
        ag_node *n = &ag->nodes[node];
        n->op = id;
        n->p = p ? *p : (tb_params){0};
        n->n_in = op->n_in;
        for (int i = 0; i < op->n_in; i++)
            n->in[i] = in[i];
        n->out = ov;
    }
    ag_hooks(ag, TB_AG_FORWARD, op, node, tin, op->n_in, &o->value, 1);
    *out = ov;
    return 0;
}

int tb_ag_input(tb_ag *ag, const tb_tensor *t, int *var)
{
    if (!ag || !t || !var || t->dtype != ag->dt)
        return TB_EINVAL;
    tb_shape s = tb_tensor_shape(t);
    int rc = ag_new_var_(ag, &s, false, var);
    if (rc)
        return rc;
    ag->vars[*var].value = *t;
    ag->vars[*var].value.owns = false;
    return 0;
}

int tb_ag_reshape(tb_ag *ag, int var, const tb_shape *s, int *out)
{
    ag_var *v = ag_var_get(ag, var);
    if (!v || !s || !out)
        return TB_EINVAL;
    tb_shape vs = tb_tensor_shape(&v->value);
    if (s->ndim < 0 || s->ndim > TB_MAX_DIMS ||
        tb_shape_numel(s) != tb_shape_numel(&vs) ||
        !tb_tensor_is_contiguous(&v->value))
        return TB_ESHAPE;
    bool rg = v->requires_grad;
    int ov, rc = ag_new_var_(ag, s, false, &ov);
    if (rc)
        return rc;
    v = &ag->vars[var]; /* the array may have moved */
    ag_var *o = &ag->vars[ov];
    o->value.data = v->value.data;
    o->value.backend = v->value.backend;
    o->value.backend_ctx = v->value.backend_ctx;
    o->value.owns = false;
    o->requires_grad = rg;
    if (rg) {
        int node = ag_push_node(ag);
        if (node < 0) {
            ag_free_var(ag, o);
            return TB_ENOMEM;
        }
        ag->nodes[node].op = TB_OP_COUNT; /* a reshape */
        ag->nodes[node].in[0] = var;
        ag->nodes[node].n_in = 1;
        ag->nodes[node].out = ov;
    }
    *out = ov;
    return 0;
}

/* Adds t (a gradient of v's shape, owned by the caller) into v's
 * gradient: taken over when v has none, else added with add_ and
 * freed. */
static int ag_accumulate(tb_ag *ag, ag_var *v, tb_tensor *t)
{
    if (!v->has_grad) {
        v->grad = *t;
        v->has_grad = true;
        t->data = NULL;
        return 0;
    }
    tb_tensor in[2] = {v->grad, *t};
    tb_params none = {0};
    int rc = ag->ex.run(ag->ex.user, tb_op_get(TB_OP_add_), in, &v->grad,
                        &none);
    ag_free_tensor(ag, t);
    return rc;
}

/* The backward op's inputs for node n with output gradient g. */
static int ag_bw_inputs(tb_ag *ag, const ag_node *n, const tb_tensor *g,
                        tb_tensor *bin)
{
    bin[0] = *g;
    const tb_tensor *x = &ag->vars[n->in[0]].value;
    const tb_tensor *y = &ag->vars[n->out].value;
    switch (n->op) {
    case TB_OP_log_softmax:
        bin[1] = *y;
        return 2;
    case TB_OP_linear:
        bin[1] = *x;
        bin[2] = ag->vars[n->in[1]].value;
        bin[3] = *y;
        return 4;
    case TB_OP_conv2d:
    case TB_OP_conv2d_nobias:
    case TB_OP_layer_norm: /* g, x, w: the bias's gradient is db */
    case TB_OP_group_norm:
        bin[1] = *x;
        bin[2] = ag->vars[n->in[1]].value;
        return 3;
    case TB_OP_embedding: /* g, idx */
        bin[1] = ag->vars[n->in[1]].value;
        return 2;
    case TB_OP_permute: /* g alone, permuted back */
        return 1;
    default:
        for (int i = 0; i < n->n_in; i++)
            bin[1 + i] = ag->vars[n->in[i]].value;
        return 1 + n->n_in;
    }
}

/* The backward op's parameters for node n: the forward op's (their
 * specs are the same), but embedding_backward's num_weights, the rows
 * of the weight, permute's inverse permutation (output dim perm[i] of
 * the gradient is its dim i) and conv2d_backward's input_grad=0 when
 * the input needs no gradient (a first layer's: its dx is not
 * computed). */
static tb_params ag_bw_params(tb_ag *ag, const ag_node *n)
{
    tb_params bp = n->p;
    if ((n->op == TB_OP_conv2d || n->op == TB_OP_conv2d_nobias) &&
        !ag->vars[n->in[0]].requires_grad)
        tb_params_set(tb_op_get(TB_OP_conv2d_backward), &bp, "input_grad",
                      0, NULL, 0);
    if (n->op == TB_OP_permute) {
        const tb_op *op = tb_op_get(TB_OP_permute);
        int nd = ag->vars[n->in[0]].value.ndim, perm[TB_MAX_DIMS];
        bp = (tb_params){0};
        /* the forward's rule accepted these parameters */
        if (tb_permute_dims(&n->p, nd, perm, NULL, 0) == 0)
            for (int i = 0; i < nd; i++) {
                char name[4] = {'p', (char)('0' + perm[i]), 0, 0};
                tb_params_set(op, &bp, name, i, NULL, 0);
            }
        return bp;
    }
    if (n->op == TB_OP_embedding) {
        const tb_op *bop = tb_op_get(TB_OP_embedding_backward);
        bp = (tb_params){0};
        tb_params_set(bop, &bp, "num_weights",
                      (double)ag->vars[n->in[0]].value.shape[0], NULL, 0);
        tb_params_defaults(bop, &bp);
    }
    return bp;
}

static int ag_run_node(tb_ag *ag, int node)
{
    const ag_node *n = &ag->nodes[node];
    ag_var *ov = &ag->vars[n->out];
    if (!ov->has_grad)
        return 0;
    if (n->op == TB_OP_COUNT) {
        /* a reshape: the output's gradient, complete now (the tape is in
         * forward order), moves to the input with its shape */
        ag_var *iv = &ag->vars[n->in[0]];
        tb_tensor g = ov->grad, hdr;
        tb_shape is = tb_tensor_shape(&iv->value);
        tb_tensor_init(&hdr, ag->dt, &is);
        g.ndim = hdr.ndim;
        memcpy(g.shape, hdr.shape, sizeof g.shape);
        memcpy(g.strides, hdr.strides, sizeof g.strides);
        ov->has_grad = false;
        ov->grad.data = NULL;
        return ag_accumulate(ag, iv, &g);
    }
    const tb_op *bop = tb_op_get(tb_ag_backward_op(n->op));
    tb_tensor bin[TB_MAX_INPUTS], bout[TB_MAX_OUTPUTS];
    tb_shape ish[TB_MAX_INPUTS], osh[TB_MAX_OUTPUTS];
    int nb = ag_bw_inputs(ag, n, &ov->grad, bin);
    const tb_params bp = ag_bw_params(ag, n);
    for (int i = 0; i < nb; i++)
        ish[i] = tb_tensor_shape(&bin[i]);
    int rc = tb_op_infer(bop, ish, nb, &bp, osh, NULL, 0);
    if (rc)
        return rc;
    memset(bout, 0, sizeof bout);
    for (int o = 0; o < bop->n_out && rc == 0; o++) {
        tb_tensor_init(&bout[o], ag->dt, &osh[o]);
        rc = ag->ex.alloc(ag->ex.user, &bout[o]);
    }
    if (rc == 0)
        rc = ag->ex.run(ag->ex.user, bop, bin, bout, &bp);
    if (rc == 0) {
        ag->st.bwd_ops++;
        ag_hooks(ag, TB_AG_BACKWARD, tb_op_get(n->op), node, &ov->grad, 1,
                 bout, bop->n_out);
    }
    /* output o is the gradient of forward input o (nll_loss,
     * cross_entropy: of the logits only, embedding: of the weight only;
     * conv2d_nobias: no bias) */
    for (int o = 0; o < bop->n_out; o++) {
        ag_var *iv = o < n->n_in ? &ag->vars[n->in[o]] : NULL;
        if (n->op == TB_OP_nll_loss && o > 0)
            iv = NULL;
        if (rc == 0 && iv && iv->requires_grad)
            rc = ag_accumulate(ag, iv, &bout[o]);
        ag_free_tensor(ag, &bout[o]);
    }
    return rc;
}

int tb_ag_backward(tb_ag *ag, int var)
{
    ag_var *v = ag_var_get(ag, var);
    if (!v)
        return TB_EINVAL;
    if (!v->requires_grad)
        return TB_EINVAL;
    tb_shape s = tb_tensor_shape(&v->value);
    if (s.ndim == 0)
        s = (tb_shape){1, {1}};
    tb_tensor seed;
    tb_tensor_init(&seed, ag->dt, &s);
    int rc = ag->ex.alloc(ag->ex.user, &seed);
    if (rc)
        return rc;
    tb_params none = {0};
    if ((rc = ag->ex.run(ag->ex.user, tb_op_get(TB_OP_ones), NULL, &seed,
                         &none)) ||
        (rc = ag_accumulate(ag, v, &seed))) {
        ag_free_tensor(ag, &seed);
        return rc;
    }
    for (int i = ag->n_nodes - 1; i >= 0 && rc == 0; i--)
        rc = ag_run_node(ag, i);
    return rc;
}

void tb_ag_clear(tb_ag *ag)
{
    if (!ag)
        return;
    for (int i = 0; i < ag->n_vars; i++)
        if (ag->vars[i].live && !ag->vars[i].leaf)
            ag_free_var(ag, &ag->vars[i]);
    ag->n_nodes = 0;
}

void tb_ag_zero_grad(tb_ag *ag)
{
    for (int i = 0; ag && i < ag->n_vars; i++) {
        ag_var *v = &ag->vars[i];
        if (v->live && v->has_grad) {
            ag_free_tensor(ag, &v->grad);
            v->has_grad = false;
        }
    }
}

int tb_ag_hook_add(tb_ag *ag, tb_ag_hook_kind kind, tb_op_id op,
                   tb_ag_hook_fn fn, void *user, int *handle)
{
    if (!ag || !fn || (unsigned)op > TB_OP_COUNT)
        return TB_EINVAL;
    for (int h = 0; h < AG_MAX_HOOKS; h++)
        if (!ag->hooks[h].used) {
            ag->hooks[h] = (ag_hook){kind, op, fn, user, true};
            if (handle)
                *handle = h;
            return 0;
        }
    return TB_ENOMEM;
}

void tb_ag_hook_remove(tb_ag *ag, int handle)
{
    if (ag && handle >= 0 && handle < AG_MAX_HOOKS)
        ag->hooks[handle].used = false;
}

void tb_ag_stats_read(const tb_ag *ag, tb_ag_stats *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    if (ag) {
        *out = ag->st;
        out->nodes = ag->n_nodes;
    }
}
