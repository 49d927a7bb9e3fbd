/* Workload ops on a backend instance.  See workload.h. */
#include "workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/clock.h"
#include "../base/error.h"
#include "../base/stats.h"
#include "../ops/models.h"
#include "../ops/pool.h"

struct tb_workload {
    const tb_backend *be;
    void *ctx;
    /* host-memory backends other than cpu: the cpu backend's kernels for
     * the ops they lack (named in impl) */
    const tb_backend *fb;
    void *fb_ctx;
    bool use_fb[TB_OP_COUNT];
    const tb_op *op;
    tb_dtype dt;
    tb_model *model;
    tb_model_phase phase;
    bool train;
    /* phase 2: the state window (state_window steps; 0: none), the steps
     * since the state was last set, and the restores so far */
    int64_t window, since, restores;
    tb_tensor loss; /* the inference steps' loss, in backend memory */
    /* api_add */
    tb_ag *api;
    int layer;
    bool filled;
    int64_t api_hook_calls;
    tb_kernel k[TB_OP_COUNT]; /* each called with its own ctx */
    /* parameter pool = 1: the power-of-two pool; pool = 0 on host
     * memory: the block cache (exact sizes); else NULL */
    tb_pool *pool;
    bool cache; /* pool is the block cache */
    char impl[1024];
    const char *kname[TB_OP_COUNT]; /* each kernel's name (or NULL) */
    /* the breakdown pass (timing): per op and phase, its calls since
     * tb_workload_breakdown_begin and its index in the order of first
     * calls (-1: none yet), whose op and phase first[i] holds; the time
     * of each part in the open step, and of the closed steps
     * (step_ns[s], part_ns[s * TB_WL_MAX_PARTS + i]) */
    bool timing;
    int64_t calls[TB_OP_COUNT][TB_WL_NPHASES];
    int idx[TB_OP_COUNT][TB_WL_NPHASES], n_first;
    struct {
        int op, phase;
    } first[TB_WL_MAX_PARTS];
    double cur[TB_WL_MAX_PARTS];
    double *step_ns, *part_ns;
    int cap, n_steps;
};

/* The phase of the kernel call the model makes now: the pass of
 * tb_model_run it runs in (models.h), so permute, the gradient of the
 * transformer's permutes, counts under bwd when the backward pass calls
 * it. */
static tb_wl_phase wl_phase_now(const tb_workload *w)
{
    switch (tb_model_pass_now(w->model)) {
    case TB_MODEL_PASS_BWD: return TB_WL_BWD;
    case TB_MODEL_PASS_OPT: return TB_WL_OPT;
    default: return TB_WL_FWD;
    }
}

/* A kernel call of the breakdown pass: clocked, and waited for on a
 * device backend (its sync) before the clock stops. */
static int wl_run_timed(tb_workload *w, const tb_op *op, const tb_kernel *k,
                        const tb_tensor *in, tb_tensor *out,
                        const tb_params *p)
{
    uint64_t t0 = tb_clock_ns();
    int rc = tb_kernel_call(k, in, out, p);
    if (rc == 0 && !w->use_fb[op->id])
        rc = tb_backend_sync(w->be, w->ctx);
    uint64_t t1 = tb_clock_ns();
    const int ph = wl_phase_now(w);
    int i = w->idx[op->id][ph];
    if (i < 0) { /* room for every part: wl_ops' assertion */
        i = w->idx[op->id][ph] = w->n_first++;
        w->first[i].op = op->id;
        w->first[i].phase = ph;
    }
    w->calls[op->id][ph]++;
    w->cur[i] += (double)(t1 - t0);
    return rc;
}

static int wl_run(void *user, const tb_op *op, const tb_tensor *in,
                  tb_tensor *out, const tb_params *p)
{
    tb_workload *w = user;
    const tb_kernel *k = &w->k[op->id];
    if (!k->fn)
        return TB_EUNSUPPORTED;
    if (w->timing) /* the breakdown pass only: no clock read otherwise */
        return wl_run_timed(w, op, k, in, out, p);
    return tb_kernel_call(k, in, out, p);
}

static int wl_be_alloc(void *user, tb_tensor *t)
{
    tb_workload *w = user;
    return w->be->alloc(w->ctx, t);
}

static void wl_be_free(void *user, tb_tensor *t)
{
    tb_workload *w = user;
    w->be->free(w->ctx, t);
}

static int wl_alloc(void *user, tb_tensor *t)
{
    tb_workload *w = user;
    return w->pool ? tb_pool_alloc(w->pool, t) : wl_be_alloc(w, t);
}

static void wl_free(void *user, tb_tensor *t)
{
    tb_workload *w = user;
    if (w->pool)
        tb_pool_free(w->pool, t);
    else
        wl_be_free(w, t);
}

static int wl_upload(void *user, tb_tensor *dst, const tb_tensor *src)
{
    tb_workload *w = user;
    return w->be->upload(w->ctx, dst, src);
}

/* Every op a model step may run. */
static const tb_op_id wl_ops[] = {
    TB_OP_linear, TB_OP_matmul, TB_OP_add, TB_OP_log_softmax,
    TB_OP_nll_loss, TB_OP_copy, TB_OP_conv2d, TB_OP_relu, TB_OP_max_pool2d,
    TB_OP_ones, TB_OP_add_, TB_OP_sgd_momentum, TB_OP_linear_backward,
    TB_OP_matmul_backward, TB_OP_add_backward, TB_OP_log_softmax_backward,
    TB_OP_nll_loss_backward, TB_OP_conv2d_backward, TB_OP_relu_backward,
    TB_OP_max_pool2d_backward, TB_OP_rms_norm, TB_OP_permute, TB_OP_sdpa,
    TB_OP_gelu, TB_OP_mul, TB_OP_mean, TB_OP_rms_norm_backward,
    TB_OP_sdpa_backward, TB_OP_gelu_backward, TB_OP_mul_backward,
    TB_OP_mean_backward,
};
/* every op once, and permute twice: in the forward pass and as its own
 * gradient in the backward pass */
_Static_assert(sizeof wl_ops / sizeof wl_ops[0] + 1 <= TB_WL_MAX_PARTS,
               "a breakdown has room for every part a model step may run");

static bool wl_needs(tb_model_kind kind, bool train, tb_op_id id)
{
    static const tb_op_id tfm_ops[] = {
        TB_OP_rms_norm, TB_OP_permute, TB_OP_sdpa, TB_OP_gelu, TB_OP_mul,
        TB_OP_mean, TB_OP_matmul, TB_OP_add, TB_OP_copy, TB_OP_ones,
        TB_OP_add_, TB_OP_sgd_momentum,
    };
    if (kind == TB_MODEL_TFM) {
        /* its forward ops and, training, their gradients and the
         * tape's and optimizer's plumbing */
        bool plumbing = id == TB_OP_ones || id == TB_OP_add_ ||
                        id == TB_OP_sgd_momentum;
        for (size_t i = 0; i < sizeof tfm_ops / sizeof tfm_ops[0]; i++) {
            if (id == tfm_ops[i])
                return train || !plumbing;
            if (train && tb_ag_backward_op(tfm_ops[i]) == id)
                return true;
        }
        return false;
    }
    bool tfm_only = id == TB_OP_rms_norm || id == TB_OP_permute ||
                    id == TB_OP_sdpa || id == TB_OP_gelu || id == TB_OP_mul ||
                    id == TB_OP_mean || id == TB_OP_rms_norm_backward ||
                    id == TB_OP_sdpa_backward || id == TB_OP_gelu_backward ||
                    id == TB_OP_mul_backward || id == TB_OP_mean_backward;
    if (tfm_only)
        return false;
    bool cnn_only = id == TB_OP_conv2d || id == TB_OP_relu ||
                    id == TB_OP_max_pool2d || id == TB_OP_conv2d_backward ||
                    id == TB_OP_relu_backward ||
                    id == TB_OP_max_pool2d_backward;
    if (cnn_only && kind != TB_MODEL_CNN)
        return false;
    if (id == TB_OP_linear || id == TB_OP_linear_backward)
        return kind == TB_MODEL_MLP &&
               (train || id == TB_OP_linear);
    const tb_op *op = tb_op_get(id);
    if (!train && ((op->category == TB_CAT_BACKWARD &&
                    id != TB_OP_nll_loss) ||
                   id == TB_OP_ones ||
                   id == TB_OP_add_ || id == TB_OP_sgd_momentum))
        return false;
    return true;
}

/* The cpu backend at its default axes, for a host-memory backend (blas)
 * that lacks some of the model's ops: 0 when it is (now) there. */
static int wl_fallback(tb_workload *w)
{
    if (w->fb)
        return 0;
    if (strcmp(w->be->name, "blas") != 0)
        return TB_EUNSUPPORTED;
    const tb_backend *cpu = tb_backend_find("cpu");
    if (!cpu)
        return TB_EUNSUPPORTED;
    tb_axis ax[TB_MAX_AXES];
    int n = cpu->axes(cpu, ax, TB_MAX_AXES);
    const char *vals[TB_MAX_AXES];
    for (int i = 0; i < n; i++)
        vals[i] = ax[i].values[ax[i].def];
    char err[256];
    if (cpu->create(cpu, vals, &w->fb_ctx, err, sizeof err))
        return TB_EUNSUPPORTED;
    w->fb = cpu;
    return 0;
}

/* "+pool", "+cache" or "": where the tape's memory comes from. */
static const char *wl_mem_name(const tb_workload *w)
{
    return !w->pool ? "" : w->cache ? "+cache" : "+pool";
}

static void api_hook(void *user, tb_ag_hook_kind kind, const tb_op *op,
                     int node, const tb_tensor *in, int n_in,
                     const tb_tensor *out, int n_out)
{
    (void)kind, (void)op, (void)node, (void)in, (void)n_in, (void)out,
        (void)n_out;
    ((tb_workload *)user)->api_hook_calls++;
}

/* api_add: layer 0 calls the kernel looked up here; 1 looks it up every
 * call; 2 and 3 go through a tape without gradients (shape rule, an
 * allocated result, the kernel, the result freed), 3 with a forward
 * hook. */
static int api_create(tb_workload *w, const tb_params *full, char *err,
                      size_t errlen)
{
    const tb_op *add = tb_op_get(TB_OP_add);
    const char *impl = NULL;
    w->layer = (int)full->v[0];
    w->k[TB_OP_add] = w->be->kernel(w->ctx, add, w->dt, NULL, &impl);
    w->k[TB_OP_copy] =
        w->be->kernel(w->ctx, tb_op_get(TB_OP_copy), w->dt, NULL, NULL);
    if (!w->k[TB_OP_add].fn || !w->k[TB_OP_copy].fn) {
        if (err && errlen)
            snprintf(err, errlen, "api_add: the backend has no %s kernel "
                     "for add or copy", tb_dtype_name(w->dt));
        return TB_EUNSUPPORTED;
    }
    static const char *const names[] = {"raw", "dispatch", "tensor",
                                        "tensor+hook"};
    snprintf(w->impl, sizeof w->impl, "%s%s(%s)", names[w->layer],
             wl_mem_name(w), impl ? impl : "add");
    if (w->layer < 2)
        return 0;
    tb_ag_exec ex = {wl_run, wl_alloc, wl_free, wl_upload, w};
    int rc = tb_ag_create(&ex, w->dt, &w->api);
    if (rc == 0 && w->layer == 3)
        rc = tb_ag_hook_add(w->api, TB_AG_FORWARD, TB_OP_COUNT, api_hook, w,
                            NULL);
    return rc;
}

static int api_run(tb_workload *w, const tb_tensor *in, tb_tensor *out,
                   const tb_params *p)
{
    const tb_op *add = tb_op_get(TB_OP_add);
    switch (w->layer) {
    case 0:
        return tb_kernel_call(&w->k[TB_OP_add], in, out, p);
    case 1: {
        tb_kernel k = w->be->kernel(w->ctx, add, w->dt, p, NULL);
        return k.fn ? tb_kernel_call(&k, in, out, p) : TB_EUNSUPPORTED;
    }
    default: {
        int v[2], r = -1;
        int rc = tb_ag_input(w->api, &in[0], &v[0]);
        if (rc == 0)
            rc = tb_ag_input(w->api, &in[1], &v[1]);
        if (rc == 0)
            rc = tb_ag_apply(w->api, TB_OP_add, v, NULL, &r);
        /* the case's output buffer gets the result once, for the check;
         * every later call frees its result as a temporary */
        if (rc == 0 && !w->filled) {
            tb_params none = {0};
            rc = tb_kernel_call(&w->k[TB_OP_copy], tb_ag_value(w->api, r),
                                out, &none);
            w->filled = rc == 0;
        }
        tb_ag_clear(w->api);
        return rc;
    }
    }
}

int tb_workload_create(const tb_backend *be, void *ctx, const tb_op *op,
                       tb_dtype dt, const tb_shape *in, const tb_params *p,
                       tb_workload **out, char *err, size_t errlen)
{
    if (!be || !op || !in || !out || op->category != TB_CAT_WORKLOAD)
        return TB_EINVAL;
    tb_workload *w = calloc(1, sizeof *w);
    if (!w)
        return TB_ENOMEM;
    w->be = be;
    w->ctx = ctx;
    w->op = op;
    w->dt = dt;
    w->train = tb_model_op_trains(op);
    tb_params full = p ? *p : (tb_params){0};
    tb_params_defaults(op, &full);
    /* the tape's memory: the pool when asked for; else, on host memory,
     * the block cache, so that a step after the first reuses the blocks
     * the steps before freed (as the host's malloc keeps freed chunks for
     * a framework's tensors) instead of faulting in fresh pages; on
     * device memory one backend allocation per tensor */
    int ip = tb_op_param_index(op, "pool");
    bool pool = ip >= 0 && full.v[ip] != 0;
    w->cache = !pool && !be->device_memory &&
               (op->id != TB_OP_api_add || full.v[0] >= 2);
    if ((pool || w->cache) &&
        tb_pool_create(w->cache ? TB_POOL_EXACT : TB_POOL_POW2, wl_be_alloc,
                       wl_be_free, w, &w->pool)) {
        free(w);
        return TB_ENOMEM;
    }
    if (op->id == TB_OP_api_add) {
        int rc = api_create(w, &full, err, errlen);
        if (rc) {
            tb_workload_destroy(w);
            return rc;
        }
        *out = w;
        return 0;
    }
    tb_model_cfg cfg = {
        .kind = tb_model_of_op(op),
        .x = in[0],
        .heads = tb_model_op_heads(op, &full),
        .hooks = (int)full.v[w->train ? 1 : 0],
        .train = w->train,
        .lr = w->train ? full.v[2] : 0,
        .momentum = w->train ? full.v[3] : 0,
    };
    w->phase = w->train ? (tb_model_phase)full.v[0] : TB_MODEL_FWD;
    int iw = tb_op_param_index(op, "state_window");
    w->window = w->phase == TB_MODEL_STEP && iw >= 0 ? (int64_t)full.v[iw]
                                                     : 0;
    size_t used = (size_t)snprintf(w->impl, sizeof w->impl, "tape(%s%s:",
                                   be->name, wl_mem_name(w));
    for (size_t i = 0; i < sizeof wl_ops / sizeof wl_ops[0]; i++) {
        if (!wl_needs(cfg.kind, w->train, wl_ops[i]))
            continue;
        const tb_op *k = tb_op_get(wl_ops[i]);
        const char *impl = NULL;
        w->k[k->id] = be->kernel(ctx, k, dt, NULL, &impl);
        if (!w->k[k->id].fn && wl_fallback(w) == 0) {
            w->k[k->id] = w->fb->kernel(w->fb_ctx, k, dt, NULL, &impl);
            w->use_fb[k->id] = w->k[k->id].fn != NULL;
        }
        w->kname[k->id] = impl ? impl : k->name;
        if (!w->k[k->id].fn) {
            if (err && errlen)
                snprintf(err, errlen,
                         "%s: the backend has no %s kernel for %s (the "
                         "model runs every op on one backend)",
                         op->name, tb_dtype_name(dt), k->name);
            tb_workload_destroy(w);
            return TB_EUNSUPPORTED;
        }
        if (used < sizeof w->impl)
            used += (size_t)snprintf(w->impl + used, sizeof w->impl - used,
                                     "%s%s%s", w->impl[used - 1] == ':' ? " " : ",",
                                     w->use_fb[k->id] ? "cpu:" : "",
                                     impl ? impl : k->name);
    }
    if (used < sizeof w->impl)
        snprintf(w->impl + used, sizeof w->impl - used, ")");
    tb_ag_exec ex = {wl_run, wl_alloc, wl_free, wl_upload, w};
    int rc = tb_model_create(&ex, dt, &cfg, &w->model);
    if (rc == 0 && !w->train) {
        tb_shape one = {1, {1}};
        tb_tensor_init(&w->loss, dt, &one);
        rc = wl_alloc(w, &w->loss);
    }
    if (rc) {
        if (err && errlen)
            snprintf(err, errlen, "%s: building the model: %s", op->name,
                     tb_strerror(rc));
        tb_workload_destroy(w);
        return rc;
    }
    *out = w;
    return 0;
}

/* The breakdown pass's step arrays freed (none: harmless). */
static void bd_free(tb_workload *w)
{
    free(w->step_ns);
    free(w->part_ns);
    w->step_ns = w->part_ns = NULL;
    w->cap = w->n_steps = 0;
}

void tb_workload_destroy(tb_workload *w)
{
    if (!w)
        return;
    tb_model_destroy(w->model);
    tb_ag_destroy(w->api);
    if (w->loss.data)
        wl_free(w, &w->loss);
    tb_pool_destroy(w->pool);
    bd_free(w);
    if (w->fb)
        w->fb->destroy(w->fb_ctx);
    free(w);
}

const char *tb_workload_impl(const tb_workload *w)
{
    return w ? w->impl : "";
}

void tb_workload_pool_stats(const tb_workload *w, tb_pool_stats *out)
{
    tb_pool_stats_read(w ? w->pool : NULL, out);
}

int64_t tb_workload_hook_calls(const tb_workload *w)
{
    return w ? tb_model_hook_calls(w->model) + w->api_hook_calls : 0;
}

int tb_workload_run(void *wp, const tb_tensor *in, tb_tensor *out,
                    const tb_params *p)
{
    (void)p; /* fixed at create */
    tb_workload *w = wp;
    if (!w || !in || !out)
        return TB_EINVAL;
    if (w->op->id == TB_OP_api_add)
        return api_run(w, in, out, p);
    if (w->train) {
        w->since += w->phase == TB_MODEL_STEP;
        return tb_model_run(w->model, &in[0], w->phase, &out[0], NULL);
    }
    return tb_model_run(w->model, &in[0], TB_MODEL_FWD, &w->loss, &out[0]);
}

/* ---- the state window -------------------------------------------------------- */

int tb_workload_batch_begin(tb_workload *w, uint64_t calls)
{
    if (!w || !w->model || w->window <= 0 || w->since == 0 ||
        (uint64_t)w->since + calls <= (uint64_t)w->window)
        return 0;
    int rc = tb_model_restore(w->model);
    if (rc == 0)
        rc = tb_backend_sync(w->be, w->ctx);
    if (rc)
        return rc;
    w->since = 0;
    w->restores++;
    return 1;
}

int64_t tb_workload_restores(const tb_workload *w)
{
    return w ? w->restores : 0;
}

int64_t tb_workload_steps_since_restore(const tb_workload *w)
{
    return w ? w->since : 0;
}

/* Is v (a value of dtype dt, as a double) a subnormal of dt? */
static bool wl_subnormal(tb_dtype dt, double v)
{
    double a = fabs(v);
    double min_normal = dt == TB_F64   ? 0x1p-1022
                        : dt == TB_F16 ? 0x1p-14
                                       : 0x1p-126; /* f32, bf16 */
    return a > 0 && a < min_normal;
}

int64_t tb_workload_subnormals(tb_workload *w)
{
    if (!w || !w->model || !w->train)
        return 0;
    int64_t n = 0;
    for (int i = 0; i < tb_model_n_params(w->model); i++) {
        const tb_tensor *t[2] = {tb_model_param(w->model, i),
                                 tb_model_momentum(w->model, i)};
        for (int j = 0; j < 2; j++) {
            tb_shape s = tb_tensor_shape(t[j]);
            tb_tensor h;
            if (tb_tensor_create(&h, t[j]->dtype, &s))
                return TB_ENOMEM;
            int rc = w->be->download(w->ctx, &h, t[j]);
            for (int64_t k = 0; rc == 0 && k < tb_tensor_numel(&h); k++)
                n += wl_subnormal(h.dtype, tb_tensor_get(&h, k));
            tb_tensor_destroy(&h);
            if (rc)
                return rc;
        }
    }
    return n;
}

/* ---- the breakdown pass ---------------------------------------------------- */

const char *tb_wl_phase_name(int p)
{
    static const char *const names[] = {"fwd", "bwd", "optimizer"};
    return p >= 0 && p < TB_WL_NPHASES ? names[p] : "?";
}

int tb_workload_breakdown_begin(tb_workload *w, int steps)
{
    if (!w || !w->model)
        return TB_EUNSUPPORTED;
    bd_free(w);
    if (steps < 1)
        return TB_EINVAL;
    w->step_ns = malloc((size_t)steps * sizeof *w->step_ns);
    w->part_ns = calloc((size_t)steps * TB_WL_MAX_PARTS,
                        sizeof *w->part_ns);
    if (!w->step_ns || !w->part_ns) {
        bd_free(w);
        return TB_ENOMEM;
    }
    w->cap = steps;
    memset(w->calls, 0, sizeof w->calls);
    memset(w->cur, 0, sizeof w->cur);
    for (int i = 0; i < TB_OP_COUNT; i++)
        for (int ph = 0; ph < TB_WL_NPHASES; ph++)
            w->idx[i][ph] = -1;
    w->n_first = 0;
    w->timing = true;
    return 0;
}

void tb_workload_breakdown_step(tb_workload *w, double step_ns)
{
    if (!w || !w->timing)
        return;
    if (w->n_steps < w->cap) {
        w->step_ns[w->n_steps] = step_ns;
        memcpy(&w->part_ns[(size_t)w->n_steps * TB_WL_MAX_PARTS], w->cur,
               sizeof w->cur);
        w->n_steps++;
    }
    memset(w->cur, 0, sizeof w->cur);
}

void tb_workload_breakdown_end(tb_workload *w, tb_wl_breakdown *out)
{
    memset(out, 0, sizeof *out);
    int n = w ? w->n_steps : 0;
    double *s = n ? malloc((size_t)n * sizeof *s) : NULL;
    if (!s) {
        snprintf(out->reason, sizeof out->reason,
                 n ? "not measured: out of memory" : "no step was timed");
        if (w) {
            w->timing = false;
            bd_free(w);
        }
        return;
    }
    w->timing = false;
    memcpy(s, w->step_ns, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, tb_cmp_double);
    double med = tb_quantile_sorted(s, (size_t)n, 0.5);
    free(s);
    double part[TB_WL_MAX_PARTS] = {0};
    for (int k = 0; k < n; k++) {
        if (w->step_ns[k] > med)
            continue;
        out->kept++;
        out->step_ns += w->step_ns[k];
        for (int i = 0; i < w->n_first; i++)
            part[i] += w->part_ns[(size_t)k * TB_WL_MAX_PARTS + i];
    }
    out->valid = true;
    out->steps = n;
    out->step_ns /= out->kept;
    for (int i = 0; i < w->n_first; i++) {
        int id = w->first[i].op, ph = w->first[i].phase;
        const tb_op *op = tb_op_get((tb_op_id)id);
        tb_wl_part *q = &out->part[out->n_parts++];
        q->op = id;
        q->phase = ph;
        snprintf(q->kernel, sizeof q->kernel, "%s%s",
                 w->use_fb[id] ? "cpu:" : "",
                 w->kname[id] ? w->kname[id] : op->name);
        q->calls = (double)w->calls[id][ph] / n;
        q->ns = part[i] / out->kept;
        out->parts_ns += q->ns;
    }
    bd_free(w);
}
