/* Runner: see runner.h.  Also the phase a case is in (published for the
 * parent of an isolated worker, worker.h) and the TBENCH_FAULT test
 * faults that prove the isolation. */
#include "runner.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ops/alloc.h"
#include "../backends/composite.h"
#include "../backends/plugin.h"
#include "../backends/workload.h"
#include "../base/error.h"
#include "../base/result_schema.h"
#include "timer.h"
#include "trace.h"

#define MAX_INSTANCES 32
/* The stopping rule uses the same resamples and seed as the reported
 * CI, so a case that stopped on "ci_target" reports a CI under target. */
#define STOP_RESAMPLES TB_STATS_BOOTSTRAP_DEFAULT
/* A case never stops on its time limit with fewer samples than this. */
#define MIN_SAMPLES_AT_LIMIT 3

typedef struct {
    const tb_backend *be;
    char key[256];
    void *ctx;
    int rc;
    char err[256];
} instance;

#define MAX_FAULTS 8

typedef enum { FAULT_SEGV, FAULT_ABORT, FAULT_HANG, FAULT_EXIT } fault_kind;

typedef struct {
    fault_kind kind;
    tb_phase phase; /* TB_PHASE_IDLE: "sent" (tb_runner_fault_sent) */
    char glob[256];
} fault;

struct tb_runner {
    volatile sig_atomic_t *stop;
    tb_runner_watch_area *watch; /* tb_runner_watch, or NULL */
    bool phase_open, round_open; /* NVTX ranges pushed (trace.h) */
    int n_faults;
    fault faults[MAX_FAULTS];
    double overhead_ns;
    int n_inst;
    instance inst[MAX_INSTANCES];
};

/* tb_status is the schema's status list, in its order. */
#define TB_STATUS_IS_SCHEMA(e, n, k)                                     \
    _Static_assert((int)TB_STATUS_##e == (int)TB_RES_STATUS_##e, n);
TB_RES_STATUSES(TB_STATUS_IS_SCHEMA)
#undef TB_STATUS_IS_SCHEMA

const char *tb_status_name(tb_status s)
{
    return tb_res_status_name((int)s);
}

const char *tb_phase_name(tb_phase p)
{
    static const char *const names[] = {
        "idle", "setup", "check", "warmup", "sampling", "count",
        "breakdown",
    };
    return (unsigned)p < sizeof names / sizeof names[0] ? names[p] : "?";
}

/* ---- TBENCH_FAULT --------------------------------------------------- */

static const char *const fault_names[] = {"segv", "abort", "hang", "exit"};

/* Parse spec into f[0..max); returns the count, or TB_EINVAL with err
 * set. */
static int faults_parse(const char *spec, fault *f, int max, char *err,
                        size_t errlen)
{
    int n = 0;
    const char *p = spec;
    while (*p) {
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char rule[320], kind[16], phase[16];
        int glob_at = 0;
        if (len >= sizeof rule) {
            snprintf(err, errlen, "TBENCH_FAULT: rule %d is too long", n + 1);
            return TB_EINVAL;
        }
        memcpy(rule, p, len);
        rule[len] = '\0';
        p += len + (end != NULL);
        if (!len)
            continue;
        if (n == max) {
            snprintf(err, errlen, "TBENCH_FAULT: more than %d rules", max);
            return TB_EINVAL;
        }
        if (sscanf(rule, "%15[a-z]:%15[a-z]:%n", kind, phase, &glob_at) != 2 ||
            !glob_at || !rule[glob_at]) {
            snprintf(err, errlen, "TBENCH_FAULT: '%.80s' is not "
                     "KIND:PHASE:GLOB", rule);
            return TB_EINVAL;
        }
        int k = -1;
        for (int i = 0; i < 4; i++)
            if (!strcmp(kind, fault_names[i]))
                k = i;
        /* TB_PHASE_IDLE stands for "sent", a phase no case enters */
        int ph = strcmp(phase, "sent") ? -1 : TB_PHASE_IDLE;
        for (int i = TB_PHASE_CHECK; i <= TB_PHASE_SAMPLING; i++)
            if (!strcmp(phase, tb_phase_name((tb_phase)i)))
                ph = i;
        if (k < 0 || ph < 0) {
            snprintf(err, errlen, "TBENCH_FAULT: '%.80s': %s", rule,
                     k < 0 ? "KIND is segv, abort, hang or exit"
                           : "PHASE is check, warmup, sampling or sent");
            return TB_EINVAL;
        }
        f[n].kind = (fault_kind)k;
        f[n].phase = (tb_phase)ph;
        snprintf(f[n].glob, sizeof f[n].glob, "%s", rule + glob_at);
        n++;
    }
    return n;
}

int tb_runner_fault_check(const char *spec, char *err, size_t errlen)
{
    fault f[MAX_FAULTS];
    int n = faults_parse(spec, f, MAX_FAULTS, err, errlen);
    return n < 0 ? n : 0;
}

/* Die (or hang) as a buggy kernel would. */
static void fault_fire(fault_kind k)
{
    fflush(NULL);
    switch (k) {
    case FAULT_SEGV: {
        /* The default action, not a sanitizer's handler: the parent must
         * see death by SIGSEGV in every build. */
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
        break;
    }
    case FAULT_ABORT:
        abort();
    case FAULT_HANG: {
        volatile unsigned long spin = 0;
        for (;;) /* deaf to the stop flag, like a kernel stuck in a loop */
            spin++;
    }
    case FAULT_EXIT:
        exit(3);
    }
}

/* The NVTX range of each phase but idle (trace.h). */
static const tb_trace_name phase_range[] = {
    [TB_PHASE_SETUP] = TB_TRACE_SETUP,
    [TB_PHASE_CHECK] = TB_TRACE_CHECK,
    [TB_PHASE_WARMUP] = TB_TRACE_WARMUP,
    [TB_PHASE_SAMPLING] = TB_TRACE_SAMPLING,
    [TB_PHASE_COUNT] = TB_TRACE_COUNT,
    [TB_PHASE_BREAKDOWN] = TB_TRACE_BREAKDOWN,
};

/* Enter phase p for case c: close the ranges of the phase before, open
 * p's, publish it, then fire a matching fault. */
static void set_phase(tb_runner *r, const tb_case *c, tb_phase p)
{
    if (r->round_open) {
        tb_trace_pop();
        r->round_open = false;
    }
    if (r->phase_open) {
        tb_trace_pop();
        r->phase_open = false;
    }
    if (p != TB_PHASE_IDLE) {
        tb_trace_push(phase_range[p]);
        r->phase_open = true;
    }
    if (r->watch) {
        r->watch->phase = (sig_atomic_t)p;
        if (p == TB_PHASE_SETUP || p == TB_PHASE_IDLE)
            r->watch->impl[0] = '\0';
    }
    for (int i = 0; c && p != TB_PHASE_IDLE && i < r->n_faults; i++)
        if (r->faults[i].phase == p &&
            tb_case_id_match(r->faults[i].glob, c->id))
            fault_fire(r->faults[i].kind);
}

void tb_runner_fault_sent(tb_runner *r, const tb_case *c)
{
    for (int i = 0; i < r->n_faults; i++)
        if (r->faults[i].phase == TB_PHASE_IDLE &&
            tb_case_id_match(r->faults[i].glob, c->id))
            fault_fire(r->faults[i].kind);
}

void tb_runner_watch(tb_runner *r, tb_runner_watch_area *w)
{
    r->watch = w;
}

int tb_runner_create(tb_runner **out, volatile sig_atomic_t *stop)
{
    tb_runner *r = calloc(1, sizeof *r);
    if (!r)
        return TB_ENOMEM;
    const char *spec = getenv("TBENCH_FAULT");
    if (spec) {
        char err[256];
        int n = faults_parse(spec, r->faults, MAX_FAULTS, err, sizeof err);
        if (n < 0) {
            free(r);
            return TB_EINVAL;
        }
        r->n_faults = n;
    }
    r->stop = stop;
    r->overhead_ns = tb_timer_overhead_ns(20001);
    *out = r;
    return 0;
}

void tb_runner_destroy(tb_runner *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n_inst; i++)
        if (r->inst[i].rc == 0)
            r->inst[i].be->destroy(r->inst[i].ctx);
    free(r);
}

/* The backend instance for the case's axis values, created on first use.
 * Instances live until the runner is destroyed (a CUDA context or a
 * thread pool is too costly to rebuild per case). */
static instance *get_instance(tb_runner *r, const tb_case *c)
{
    char key[256];
    size_t u = (size_t)snprintf(key, sizeof key, "%s", c->backend->name);
    for (int i = 0; i < c->n_axes && u < sizeof key; i++)
        u += (size_t)snprintf(key + u, sizeof key - u, ",%s",
                              c->axis_value[i]);
    for (int i = 0; i < r->n_inst; i++)
        if (r->inst[i].be == c->backend && !strcmp(r->inst[i].key, key))
            return &r->inst[i];
    if (r->n_inst == MAX_INSTANCES) { /* evict the oldest */
        if (r->inst[0].rc == 0)
            r->inst[0].be->destroy(r->inst[0].ctx);
        memmove(&r->inst[0], &r->inst[1],
                (MAX_INSTANCES - 1) * sizeof r->inst[0]);
        r->n_inst--;
    }
    instance *in = &r->inst[r->n_inst++];
    memset(in, 0, sizeof *in);
    in->be = c->backend;
    snprintf(in->key, sizeof in->key, "%s", key);
    const char *vals[TB_MAX_AXES];
    for (int i = 0; i < c->n_axes; i++)
        vals[i] = c->axis_value[i];
    in->rc = c->backend->create(c->backend, vals, &in->ctx, in->err,
                                sizeof in->err);
    return in;
}

/* Deterministic inputs: uniform in the op's domain for that input; an
 * input of indices (tb_op_index_bound > 0): integers uniform below the
 * bound. */
static void fill_input(tb_tensor *t, const tb_case *c, int idx, tb_rng *rng)
{
    const tb_op *op = c->op;
    double lo = -1, hi = 1;
    if (op->domain) {
        lo = op->domain[idx].lo;
        hi = op->domain[idx].hi;
    }
    int64_t n = tb_tensor_numel(t);
    const double ib = tb_op_index_bound(op, idx, c->in, &c->params);
    if (ib > 0) {
        for (int64_t i = 0; i < n; i++)
            tb_tensor_set(t, i, fmin(floor(ib * tb_rng_uniform(rng)),
                                     ib - 1));
        return;
    }
    const bool flat = tb_tensor_is_contiguous(t);
    if (t->dtype == TB_F32 && flat) {
        float *p = t->data;
        for (int64_t i = 0; i < n; i++)
            p[i] = (float)(lo + (hi - lo) * tb_rng_uniform(rng));
    } else if (t->dtype == TB_F64 && flat) {
        double *p = t->data;
        for (int64_t i = 0; i < n; i++)
            p[i] = lo + (hi - lo) * tb_rng_uniform(rng);
    } else {
        /* bf16, f16: the draw rounded once to the dtype (a draw at the
         * domain's edge may round onto it); a layout's view: the same
         * values as its contiguous twin, in the same order */
        for (int64_t i = 0; i < n; i++)
            tb_tensor_set(t, i, lo + (hi - lo) * tb_rng_uniform(rng));
    }
}

typedef struct {
    const tb_backend *be;
    void *ctx;
    void *kctx; /* what fn is called with: the tb_kernel's ctx, comp or wl */
    tb_composite *comp; /* unfused compositions */
    tb_workload *wl;    /* workload ops */
    tb_tensor host_in[TB_MAX_INPUTS], dev_in[TB_MAX_INPUTS];
    /* A layout other than contiguous: the parent buffers that host_in
     * and dev_in are views of (tensor.h, tb_layout_view) */
    tb_tensor host_par[TB_MAX_INPUTS], dev_par[TB_MAX_INPUTS];
    tb_tensor host_out[TB_MAX_OUTPUTS], dev_out[TB_MAX_OUTPUTS];
    tb_tensor ref_out[TB_MAX_OUTPUTS];
    bool dev_in_ok[TB_MAX_INPUTS], dev_out_ok[TB_MAX_OUTPUTS];
} buffers;

static void buffers_free(buffers *b, const tb_op *op)
{
    tb_composite_destroy(b->comp);
    b->comp = NULL;
    tb_workload_destroy(b->wl);
    b->wl = NULL;
    for (int i = 0; i < op->n_in; i++) {
        if (b->dev_in_ok[i])
            b->be->free(b->ctx, b->dev_par[i].data ? &b->dev_par[i]
                                                   : &b->dev_in[i]);
        tb_tensor_destroy(&b->host_in[i]);
        tb_tensor_destroy(&b->host_par[i]);
    }
    for (int i = 0; i < op->n_out; i++) {
        if (b->dev_out_ok[i])
            b->be->free(b->ctx, &b->dev_out[i]);
        tb_tensor_destroy(&b->host_out[i]);
        tb_tensor_destroy(&b->ref_out[i]);
    }
}

static int buffers_make(buffers *b, const tb_case *c, char *err, size_t len)
{
    tb_rng rng;
    tb_rng_seed(&rng, c->seed);
    /* A creation op has no inputs; its reference learns the case dtype
     * from a header-only in[0] (ref_create.c). */
    if (c->op->n_in == 0)
        tb_tensor_init(&b->host_in[0], c->dtype, &c->out[0]);
    for (int i = 0; i < c->op->n_in; i++) {
        const tb_dtype dt = tb_op_in_dtype(c->op, i, c->dtype);
        const bool par = c->layout != TB_LAYOUT_CONTIGUOUS;
        tb_shape ps;
        if (tb_layout_parent(c->layout, &c->in[i], &ps, err, len))
            return TB_ESHAPE;
        if (par) {
            /* the parent, NaN where the view does not reach (a kernel
             * that reads outside its view fails the check), the view
             * filled through its strides, the parent uploaded whole */
            if (tb_tensor_create(&b->host_par[i], dt, &ps))
                goto nomem;
            for (int64_t k = 0; k < tb_shape_numel(&ps); k++)
                tb_tensor_store(&b->host_par[i], k, NAN);
            tb_layout_view(c->layout, &b->host_par[i], &c->in[i],
                           &b->host_in[i]);
        } else if (tb_tensor_create(&b->host_in[i], dt, &c->in[i])) {
            goto nomem;
        }
        if (c->given_in && !par) {
            memcpy(b->host_in[i].data, c->given_in[i].data,
                   tb_tensor_nbytes(&b->host_in[i]));
        } else if (c->given_in) { /* into the view, through its strides */
            for (int64_t k = 0; k < tb_tensor_numel(&b->host_in[i]); k++)
                tb_tensor_set(&b->host_in[i], k,
                              tb_tensor_get(&c->given_in[i], k));
        } else {
            fill_input(&b->host_in[i], c, i, &rng);
        }
        tb_tensor *dev = par ? &b->dev_par[i] : &b->dev_in[i];
        tb_tensor_init(dev, dt, &ps);
        if (b->be->alloc(b->ctx, dev))
            goto nomem;
        b->dev_in_ok[i] = true;
        int rc = b->be->upload(b->ctx, dev, par ? &b->host_par[i]
                                                : &b->host_in[i]);
        if (par)
            tb_layout_view(c->layout, dev, &c->in[i], &b->dev_in[i]);
        if (rc) {
            snprintf(err, len, "upload of input %d failed: %s", i,
                     tb_strerror(rc));
            return rc;
        }
    }
    for (int i = 0; i < c->op->n_out; i++) {
        if (tb_tensor_create(&b->host_out[i],
                             tb_op_out_dtype(c->op, i, c->dtype), &c->out[i]) ||
            tb_tensor_create(&b->ref_out[i], TB_F64, &c->out[i]))
            goto nomem;
        /* An output written into an input (in-place ops, optimizer
         * state) is that input's buffer. */
        if (c->op->alias && c->op->alias[i] >= 0) {
            b->dev_out[i] = b->dev_in[c->op->alias[i]];
            continue;
        }
        tb_tensor_init(&b->dev_out[i], tb_op_out_dtype(c->op, i, c->dtype),
                       &c->out[i]);
        if (c->alloc_outputs)
            continue; /* allocated by every call (run_batch) */
        if (b->be->alloc(b->ctx, &b->dev_out[i]))
            goto nomem;
        b->dev_out_ok[i] = true;
    }
    return 0;
nomem:
    snprintf(err, len, "out of memory allocating %.1f MiB for the case",
             (double)c->mem_bytes / (1 << 20));
    return TB_ENOMEM;
}

/* A "transfers" case: before a call, upload every input from its host
 * tensor (the data starts on the host); after it, download every output
 * (outs: the call's output tensors) into the host outputs.  Both are the
 * backend's own copies (upload/download); nothing runs on the CPU. */
static int transfers_in(const buffers *b, const tb_case *c)
{
    int rc = 0;
    for (int i = 0; !rc && i < c->op->n_in; i++)
        rc = b->be->upload(b->ctx, (tb_tensor *)&b->dev_in[i],
                           &b->host_in[i]);
    return rc;
}

static int transfers_out(const buffers *b, const tb_case *c,
                         const tb_tensor *outs)
{
    int rc = 0;
    for (int i = 0; !rc && i < c->op->n_out; i++)
        rc = b->be->download(b->ctx, (tb_tensor *)&b->host_out[i],
                             &outs[i]);
    return rc;
}

/* Run the kernel k times and wait for the backend; returns elapsed ns
 * (not yet corrected for timer overhead) or a negative error.  With
 * fresh_outputs (the case's "alloc" form) every call gets outputs newly
 * allocated from the backend and freed after it; otherwise b->dev_out.
 * dev_ns (may be NULL): the backend's device time of the batch, or -1
 * when it has no device timer; its marks are queued inside the host
 * clock (the end mark's wait is the batch's synchronisation). */
static int run_batch(const buffers *b, tb_kernel_fn fn, const tb_case *c,
                     uint64_t k, bool fresh_outputs, double *ns,
                     double *dev_ns)
{
    uint64_t t0 = tb_now_ns();
    bool dev = false;
    if (dev_ns) {
        *dev_ns = -1;
        dev = tb_backend_timer_start(b->be, b->ctx) == 0;
    }
    if (fresh_outputs) {
        /* As `c = a + b` does: new outputs every call, freed after it
         * (a caching allocator would hand the same block back). */
        int n = c->op->n_out;
        for (uint64_t i = 0; i < k; i++) {
            tb_tensor o[TB_MAX_OUTPUTS];
            int rc = 0, made = 0;
            while (made < n && !rc) {
                o[made] = b->dev_out[made];
                if ((rc = b->be->alloc(b->ctx, &o[made])) == 0)
                    made++;
            }
            if (!rc && c->transfers)
                rc = transfers_in(b, c);
            if (!rc)
                rc = fn(b->kctx, b->dev_in, o, &c->params);
            if (!rc && c->transfers)
                rc = transfers_out(b, c, o);
            for (int j = 0; j < made; j++)
                b->be->free(b->ctx, &o[j]);
            if (rc)
                return rc;
        }
    } else {
        for (uint64_t i = 0; i < k; i++) {
            int rc = c->transfers ? transfers_in(b, c) : 0;
            if (!rc)
                rc = fn(b->kctx, b->dev_in, (tb_tensor *)b->dev_out,
                        &c->params);
            if (!rc && c->transfers)
                rc = transfers_out(b, c, b->dev_out);
            if (rc)
                return rc;
        }
    }
    double d = -1;
    if (dev && tb_backend_timer_stop(b->be, b->ctx, &d) != 0)
        d = -1;
    int rc = tb_backend_sync(b->be, b->ctx);
    *ns = (double)(tb_now_ns() - t0);
    if (dev_ns)
        *dev_ns = d;
    return rc;
}

/* Before a batch of k calls, outside its clock: a training workload's
 * state set back to its initial values when the batch would take it past
 * its state window (workload.h, tb_workload_batch_begin).  0 or an
 * error. */
static int state_window(const buffers *b, uint64_t k)
{
    int rc = b->wl ? tb_workload_batch_begin(b->wl, k) : 0;
    return rc < 0 ? rc : 0;
}

static void set_error(tb_result *res, tb_status st, const char *fmt,
                      const char *what)
{
    res->status = st;
    snprintf(res->message, sizeof res->message, fmt, what);
}

/* Stopping rule: is the bootstrap 95% CI of the median narrower than
 * target x median? */
static bool ci_small_enough(const double *x, size_t n, uint64_t seed,
                            double target)
{
    double lo, hi;
    double *s = malloc(n * sizeof *s);
    if (!s)
        return false;
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, tb_cmp_double);
    double med = tb_quantile_sorted(s, n, 0.5);
    free(s);
    if (med <= 0 || tb_stats_median_ci(x, n, STOP_RESAMPLES, seed, &lo, &hi))
        return false;
    return (hi - lo) / med < target;
}

/* Calls per sample so that a sample lasts about target ns. */
static uint64_t batch_size(double target, double per_iter)
{
    double k = ceil(target / (per_iter > 0.1 ? per_iter : 0.1));
    return k < 1 ? 1 : k > 1e9 ? 1000000000u : (uint64_t)k;
}

/* Fold one round's per-iteration counters (over `iters`) into the
 * running per-iteration averages of res (over res->counted_iters). */
static void counters_merge(tb_result *res, const tb_counters *k,
                           uint64_t iters)
{
    double w0 = (double)res->counted_iters, w1 = (double)iters;
    double w = w0 + w1 > 0 ? w0 + w1 : 1;
    tb_counters *a = &res->counters;
    for (int i = 0; i < TB_RES_NCOUNTERS_ALL; i++) {
        if (tb_res_counter_of(i)->merge == TB_RES_MAX)
            a->v[i] = fmax(a->v[i], k->v[i]);
        else
            a->v[i] = (a->v[i] * w0 + k->v[i] * w1) / w;
    }
    res->counted_iters += iters;
}

/* The warm-up of a round (warmup.min_iters calls and min_time_s at
 * least); in round 0 also the batch size (iterations per sample) and the
 * sample arrays.  0 or an error. */
static int warm_up(tb_runner *r, const buffers *b, tb_kernel_fn fn,
                   const tb_case *c, tb_result *res, int round)
{
    const tb_cfg_warmup *w = &c->warmup;
    const tb_cfg_measure *m = &c->measure;
    double ns = 0;
    set_phase(r, c, TB_PHASE_WARMUP);
    uint64_t t0 = tb_now_ns();
    uint64_t iters = 0;
    while (iters < (uint64_t)w->min_iters ||
           (double)(tb_now_ns() - t0) < w->min_time_s * 1e9) {
        int rc = state_window(b, 1);
        if (!rc)
            rc = run_batch(b, fn, c, 1, c->alloc_outputs, &ns, NULL);
        if (rc)
            return rc;
        iters++;
    }
    uint64_t kk = res->iters_per_sample;
    if (round == 0) {
        /* A backend that prepares each sample (sample_prep returns 1,
         * e.g. cuda with l2=cold) makes the next call, and only that
         * one, what the sample measures: one call per sample. */
        int prep = tb_backend_sample_prep(b->be, b->ctx);
        if (prep < 0)
            return prep;
        res->prepped = prep == 1;
    }
    if (round == 0 && res->prepped) {
        res->iters_per_sample = kk = 1;
    } else if (round == 0) {
        /* Batch size: a sample lasts >= sample_time.  The warm-up rate
         * includes a clock pair and a sync per call, so it overestimates
         * fast ops; refine the guess with timed batches of the guessed
         * size (batch calls count as warm-up too). */
        double target = m->sample_time_s * 1e9;
        double per_iter = (double)(tb_now_ns() - t0) / (double)iters;
        kk = batch_size(target, per_iter);
        for (int refine = 0; refine < 3; refine++) {
            int rc = state_window(b, kk);
            if (!rc)
                rc = run_batch(b, fn, c, kk, c->alloc_outputs, &ns, NULL);
            if (rc)
                return rc;
            iters += kk;
            if (ns >= 0.9 * target && ns <= 2 * target)
                break;
            kk = batch_size(target, ns / (double)kk);
        }
        res->iters_per_sample = kk;
    }
    if (round == 0) {
        res->samples_ns = malloc((size_t)m->max_samples * sizeof(double));
        if (!res->samples_ns)
            return TB_ENOMEM;
        if (b->be->timer_start && b->be->timer_stop) {
            res->device_ns =
                malloc((size_t)m->max_samples * sizeof(double));
            if (!res->device_ns)
                return TB_ENOMEM;
            res->device_timed = true;
        }
    }
    res->warmup_iters += iters;
    res->warmup_ns += (double)(tb_now_ns() - t0);
    return 0;
}

/* Warm up, then sample round `round` of `rounds`.  Each round gets
 * max_time_s / rounds and max_samples / rounds; round 0 also stops once
 * the CI of the median is under the target (after ceil(min_samples /
 * rounds) samples) and chooses the batch size; later rounds take as many
 * samples as round 0 did, time allowing, and the last one goes on until
 * the CI of all samples is under the target. */
static int measure(tb_runner *r, const buffers *b, tb_kernel_fn fn,
                   const tb_case *c, tb_result *res, int round, int rounds)
{
    const tb_cfg_measure *m = &c->measure;
    int wrc = warm_up(r, b, fn, c, res, round);
    if (wrc)
        return wrc;
    uint64_t kk = res->iters_per_sample;
    double ns = 0;

    /* Round 0 samples as a single-pass run would, within its share of
     * the limits; every later round then takes as many samples as round
     * 0 did (or what its time share allows), so each phase of the
     * machine weighs the same in the median and widens the CI. */
    set_phase(r, c, TB_PHASE_SAMPLING);
    tb_trace_push_round(round);
    r->round_open = true;
    size_t share = (size_t)m->max_samples / (size_t)rounds;
    size_t min_round = ((size_t)m->min_samples + (size_t)rounds - 1) /
                       (size_t)rounds;
    size_t min_at_limit = rounds > 1 ? 1 : MIN_SAMPLES_AT_LIMIT;
    double budget = m->max_time_s * 1e9 / rounds;
    if (round == 0) {
        char pci[32];
        if (tb_backend_device_pci(b->be, b->ctx, pci, sizeof pci) == 0)
            tb_gpu_clock_begin(&res->clock, pci);
    } else {
        tb_gpu_clock_poll(&res->clock, true);
    }
    tb_probe_snap before, after;
    tb_alloc_peak_reset();
    tb_probe_take(&before, b->be, b->ctx);
    uint64_t start = tb_now_ns();
    size_t n = res->n_samples, n0 = n;
    /* The last round also goes on past its share while the CI of all
     * the samples is above the target (time allowing), so a case stops
     * on "ci_target" only when its final CI is under the target. */
    bool last = round == rounds - 1;
    size_t want = round == 0 ? (share > min_round ? share : min_round)
                             : res->first_round_samples;
    size_t next_check = n0 + (round == 0 ? min_round : want);
    if (last && round > 0)
        want = (size_t)m->max_samples;
    const char *why = "max_samples";
    while (n - n0 < want && n < (size_t)m->max_samples) {
        int src = state_window(b, kk); /* outside run_batch's clocks */
        if (src)
            return src;
        if (res->prepped) { /* outside run_batch's clocks */
            int prc = tb_backend_sample_prep(b->be, b->ctx);
            if (prc < 0)
                return prc;
        }
        tb_trace_push(TB_TRACE_BATCH); /* outside run_batch's clock */
        double dns = -1;
        int rc = run_batch(b, fn, c, kk, c->alloc_outputs, &ns,
                           res->device_ns ? &dns : NULL);
        tb_trace_pop();
        if (rc)
            return rc;
        if (res->device_ns) {
            res->device_ns[n] = dns >= 0 ? dns / (double)kk : 0;
            if (dns < 0)
                res->device_timed = false;
        }
        double v = (ns - r->overhead_ns) / (double)kk;
        res->samples_ns[n++] = v > 0 ? v : 0;
        tb_gpu_clock_poll(&res->clock, false); /* outside the clocks */
        if (r->stop && *r->stop) {
            why = "interrupted";
            break;
        }
        double elapsed = (double)(tb_now_ns() - start);
        if ((round == 0 || last) && n >= next_check &&
            n >= (size_t)MIN_SAMPLES_AT_LIMIT) {
            next_check = n + (n / 8 > 5 ? n / 8 : 5);
            if (ci_small_enough(res->samples_ns, n, c->seed, m->ci_target)) {
                why = "ci_target";
                break;
            }
        }
        if (elapsed >= budget && n - n0 >= min_at_limit &&
            n >= (size_t)MIN_SAMPLES_AT_LIMIT) {
            why = "time_limit";
            break;
        }
    }
    res->stop_reason = why;
    tb_gpu_clock_poll(&res->clock, true);
    if (round == 0)
        res->first_round_samples = n - n0;
    res->sampling_ns += (double)(tb_now_ns() - start);
    tb_probe_take(&after, b->be, b->ctx);
    res->n_samples = n;
    tb_counters k;
    tb_probe_diff(&before, &after, (uint64_t)(n - n0) * kk, &k);
    counters_merge(res, &k, (uint64_t)(n - n0) * kk);
    if (n > n0) {
        double *s = malloc((n - n0) * sizeof *s);
        if (!s)
            return TB_ENOMEM;
        memcpy(s, res->samples_ns + n0, (n - n0) * sizeof *s);
        qsort(s, n - n0, sizeof *s, tb_cmp_double);
        res->round_medians_ns[round] = tb_quantile_sorted(s, n - n0, 0.5);
        free(s);
    }
    res->rounds = round + 1;
    return 0;
}

/* The counting pass: `iters` untimed calls, as the samples make them. */
typedef struct {
    const buffers *b;
    tb_kernel_fn fn;
    const tb_case *c;
} count_arg;

static int count_run(void *arg, uint64_t iters)
{
    const count_arg *a = arg;
    double ns;
    int rc = state_window(a->b, iters);
    return rc ? rc
              : run_batch(a->b, a->fn, a->c, iters, a->c->alloc_outputs,
                          &ns, NULL);
}

/* After round 0's sampling, on a backend that has a counting pass: what
 * one iteration does on the device (res->dev).  A failing call makes the
 * case an error, as it would while timing. */
static int count_pass(tb_runner *r, const buffers *b, tb_kernel_fn fn,
                      const tb_case *c, tb_result *res)
{
    if (!b->be->count) {
        tb_backend_count(b->be, b->ctx, NULL, NULL, 0, &res->dev);
        return 0;
    }
    if (r->stop && *r->stop) {
        memset(&res->dev, 0, sizeof res->dev);
        snprintf(res->dev.reason, sizeof res->dev.reason,
                 "not counted: the run was interrupted");
        return 0;
    }
    set_phase(r, c, TB_PHASE_COUNT);
    count_arg a = {b, fn, c};
    return tb_backend_count(b->be, b->ctx, count_run, &a, TB_COUNT_ITERS,
                            &res->dev);
}

/* After the last round's sampling, for a model step (a workload on the
 * tape) with measure.breakdown: steps timed one by one as a sample times
 * a call, with every tape kernel call clocked (workload.h), into
 * res->breakdown (means over the steps no slower than the median one).
 * Steps: measure.breakdown_steps, or a tenth of the steps sampled (3 to
 * 1000).  A failing call makes the case an error, as it would while
 * timing. */
static int breakdown_pass(tb_runner *r, const buffers *b, tb_kernel_fn fn,
                          const tb_case *c, tb_result *res)
{
    tb_wl_breakdown *bd = &res->breakdown;
    memset(bd, 0, sizeof *bd);
    if (!b->wl)
        return 0;
    if (!c->measure.breakdown) {
        snprintf(bd->reason, sizeof bd->reason,
                 "not measured: measure.breakdown is false");
        return 0;
    }
    if (r->stop && *r->stop) {
        snprintf(bd->reason, sizeof bd->reason,
                 "not measured: the run was interrupted");
        return 0;
    }
    int steps = c->measure.breakdown_steps;
    if (steps <= 0) {
        double sampled = (double)res->n_samples *
                         (double)res->iters_per_sample;
        double k = floor(sampled / 10);
        steps = k < 3 ? 3 : k > 1000 ? 1000 : (int)k;
    }
    int rc = tb_workload_breakdown_begin(b->wl, steps);
    if (rc == TB_EUNSUPPORTED) {
        snprintf(bd->reason, sizeof bd->reason,
                 "not measured: %s is not a model on the tape",
                 c->op->name);
        return 0;
    }
    if (rc)
        return rc;
    set_phase(r, c, TB_PHASE_BREAKDOWN);
    for (int i = 0; i < steps && !rc; i++) {
        double ns = 0;
        if ((rc = state_window(b, 1)) != 0)
            break;
        rc = run_batch(b, fn, c, 1, c->alloc_outputs, &ns, NULL);
        double v = ns - r->overhead_ns;
        tb_workload_breakdown_step(b->wl, v > 0 ? v : 0);
    }
    tb_workload_breakdown_end(b->wl, bd);
    if (rc)
        memset(bd, 0, sizeof *bd);
    return rc;
}

typedef enum {
    CHECK_DEFAULT, /* full check; big matmuls by projection */
    CHECK_FULL,    /* always against the full reference (exec shows it) */
    CHECK_NONE,    /* a later round of a case already checked */
} check_mode;

/* Why backend b has no bf16/f16 kernel for an op the cpu backend runs in
 * them (one line), or NULL when b may have some (the cpu backend, a
 * plugin of ABI 1.1). */
static const char *half_reason(const tb_backend *b)
{
    if (!b || strcmp(b->name, "cpu") == 0)
        return NULL;
    if (strcmp(b->name, "blas") == 0)
        return "blas: OpenBLAS has no bf16/f16 routine for this op (0.3.21, "
               "Debian 12's, exports no sbgemm); the cpu backend runs it";
    if (strcmp(b->name, "cuda") == 0)
        return "cuda: the module has no bf16/f16 kernel for this op yet "
               "(it has them for element-wise ops, activations, sum, mean, "
               "softmaxes, norms, creation ops, copies, pooling, matmul, "
               "linear and conv2d); the cpu backend runs it";
    if (b->data) /* a plugin: 1.0 ones are never asked (plugin.c) */
        return tb_plugin_half_reason(b);
    return NULL;
}

/* The tolerance case c is checked at: its op's for the dtype, except
 * for an f32 kernel that ran on TF32 tensor cores (its impl ends in
 * "_tf32": the cuda backend's matmul, linear, conv2d and einsum of 2+
 * operands with axis
 * tf32=on).  TF32 keeps 10 significand bits of each input (epsilon
 * 2^-10, f16's), so the stated tolerance is tf32's, never f32's: rtol
 * 2^-9 (both factors of a product off by up to an epsilon: a tensor
 * core's conversion may truncate) and atol 2^-10 per sqrt(K) (those
 * errors' random walk over the K products of inputs in [-1, 1]). */
static tb_tol case_tol(const tb_case *c, const char *impl)
{
    size_t n = impl ? strlen(impl) : 0;
    if (c->dtype == TB_F32 && n > 5 && strcmp(impl + n - 5, "_tf32") == 0)
        return (tb_tol){0x1p-9, 0x1p-10};
    return c->op->tol[c->dtype];
}

/* A composition's or a model's case in a layout: unsupported (res
 * says so), its steps take contiguous tensors. */
static bool layout_refused(const tb_case *c, bool steps, tb_result *res)
{
    if (c->layout == TB_LAYOUT_CONTIGUOUS || !steps)
        return false;
    set_error(res, TB_STATUS_UNSUPPORTED, "layout %s: kernel needs "
              "contiguous input (the steps of a composition or model take "
              "contiguous tensors)", tb_layout_name(c->layout));
    return true;
}

/* The kernel of case c on instance ctx: the backend's kernel(), or for
 * a layout whose views are not all contiguous (a sliced 1-D input is),
 * its kernel_view() given the views' headers; {NULL, NULL} with "layout
 * L: why" in why (else "") when the backend has none for the layout. */
static tb_kernel lookup(const tb_case *c, void *ctx, const char **impl,
                        char *why, size_t len)
{
    why[0] = '\0';
    tb_tensor views[TB_MAX_INPUTS];
    bool contiguous = true;
    for (int i = 0; i < c->op->n_in; i++) {
        tb_tensor par;
        tb_shape ps;
        tb_layout_parent(c->layout, &c->in[i], &ps, NULL, 0);
        tb_tensor_init(&par, tb_op_in_dtype(c->op, i, c->dtype), &ps);
        tb_layout_view(c->layout, &par, &c->in[i], &views[i]);
        contiguous &= tb_tensor_is_contiguous(&views[i]);
    }
    if (contiguous)
        return c->backend->kernel(ctx, c->op, c->dtype, &c->params, impl);
    const char *no = NULL;
    tb_kernel k = {NULL, NULL};
    if (c->backend->kernel_view)
        k = c->backend->kernel_view(ctx, c->op, c->dtype, &c->params, views,
                                    impl, &no);
    if (!k.fn)
        snprintf(why, len, "layout %s: %s", tb_layout_name(c->layout),
                 no ? no : "kernel needs contiguous input");
    return k;
}

/* Everything before timing: instance, kernel, buffers, one checked call
 * (big matmuls by projection unless CHECK_FULL; none for CHECK_NONE,
 * which also keeps res).
 * Returns true when the case may be timed; otherwise res has the status.
 * b is always safe to pass to buffers_free afterwards. */
static bool prepare(tb_runner *r, const tb_case *c, tb_result *res,
                    buffers *b, tb_kernel_fn *fnp, check_mode mode)
{
    memset(b, 0, sizeof *b);
    if (mode != CHECK_NONE) {
        memset(res, 0, sizeof *res);
        res->timer_overhead_ns = r->overhead_ns;
    }
    if (!c->available) {
        set_error(res, TB_STATUS_UNAVAILABLE, "%s", c->unavailable_reason);
        return false;
    }
    const char *undefined = tb_op_dtype_reason(c->op, c->dtype);
    if (undefined) {
        char why[sizeof res->message];
        snprintf(why, sizeof why, "%s in %s: %s", c->op->name,
                 tb_dtype_name(c->dtype), undefined);
        set_error(res, TB_STATUS_UNSUPPORTED, "%s", why);
        return false;
    }
    set_phase(r, c, TB_PHASE_SETUP);
    instance *in = get_instance(r, c);
    if (in->rc) {
        set_error(res, TB_STATUS_ERROR, "backend instance: %s", in->err);
        return false;
    }
    b->be = c->backend;
    b->ctx = in->ctx;
    char err[256];
    tb_kernel_fn fn;
    /* an unfused composition, or a model step (a workload) */
    bool comp = c->op->n_steps, wl = c->op->category == TB_CAT_WORKLOAD;
    if (layout_refused(c, comp || wl, res))
        return false;
    if (comp || wl) {
        int rc = comp ? tb_composite_create(c->backend, in->ctx, c->op,
                                            c->dtype, c->in, &c->params,
                                            &b->comp, err, sizeof err)
                      : tb_workload_create(c->backend, in->ctx, c->op,
                                           c->dtype, c->in, &c->params,
                                           &b->wl, err, sizeof err);
        if (rc) {
            set_error(res,
                      rc == TB_EUNSUPPORTED ? TB_STATUS_UNSUPPORTED
                                            : TB_STATUS_ERROR,
                      "%s", err);
            return false;
        }
        fn = comp ? tb_composite_run : tb_workload_run;
        b->kctx = comp ? (void *)b->comp : (void *)b->wl;
        snprintf(res->impl_buf, sizeof res->impl_buf, "%s",
                 comp ? tb_composite_impl(b->comp)
                      : tb_workload_impl(b->wl));
        res->impl = res->impl_buf;
    } else {
        tb_kernel k = lookup(c, in->ctx, &res->impl, err, sizeof err);
        fn = k.fn;
        b->kctx = k.ctx;
    }
    if (r->watch && res->impl)
        snprintf(r->watch->impl, sizeof r->watch->impl, "%s", res->impl);
    if (!fn) {
        const char *half = tb_dtype_is_half(c->dtype)
                               ? half_reason(c->backend)
                               : NULL;
        if (c->layout != TB_LAYOUT_CONTIGUOUS && err[0])
            set_error(res, TB_STATUS_UNSUPPORTED, "%s", err);
        else if (half)
            set_error(res, TB_STATUS_UNSUPPORTED, "%s", half);
        else
            set_error(res, TB_STATUS_UNSUPPORTED, "%s",
                      "the backend has no kernel for this op, dtype and "
                      "parameters");
        return false;
    }
    *fnp = fn;
    int rc = buffers_make(b, c, err, sizeof err);
    if (rc) {
        set_error(res, TB_STATUS_ERROR, "%s", err);
        return false;
    }
    if (mode == CHECK_NONE) /* a later round: checked in round 0 */
        return true;

    /* Check before timing: one call, download, compare. */
    set_phase(r, c, TB_PHASE_CHECK);
    double ns;
    if (c->alloc_outputs) /* the check needs outputs that stay */
        for (int i = 0; !rc && i < c->op->n_out; i++)
            if ((rc = b->be->alloc(b->ctx, &b->dev_out[i])) == 0)
                b->dev_out_ok[i] = true;
    if (!rc)
        rc = run_batch(b, fn, c, 1, false, &ns, NULL);
    for (int i = 0; !rc && i < c->op->n_out; i++)
        rc = b->be->download(b->ctx, &b->host_out[i], &b->dev_out[i]);
    if (c->alloc_outputs) /* timing allocates its own */
        for (int i = 0; i < c->op->n_out; i++)
            if (b->dev_out_ok[i]) {
                b->be->free(b->ctx, &b->dev_out[i]);
                b->dev_out_ok[i] = false;
            }
    if (rc) {
        set_error(res, TB_STATUS_ERROR, "kernel failed: %s",
                  tb_strerror(rc));
        return false;
    }
    if (mode == CHECK_DEFAULT && c->op->check == TB_CHECK_PRODUCT &&
        c->flops > TB_CHECK_PROJECTION_FLOPS) {
        tb_check_matmul_projection(&b->host_in[0], &b->host_in[1],
                                   &b->host_out[0], case_tol(c, res->impl),
                                   c->seed, &res->check);
    } else {
        rc = c->op->ref(b->host_in, b->ref_out, &c->params);
        if (rc) {
            set_error(res, TB_STATUS_ERROR, "reference kernel failed: %s",
                      tb_strerror(rc));
            return false;
        }
        if (c->op->canon) { /* one sign convention for exec's files */
            c->op->canon(b->host_out, c->op->n_out);
            c->op->canon(b->ref_out, c->op->n_out);
        }
        if (c->op->check == TB_CHECK_FACTORIZATION)
            tb_check_factorization(c->op, &b->host_in[0], b->host_out,
                                   b->ref_out, case_tol(c, res->impl),
                                   &res->check);
        else
            tb_check_outputs(b->host_out, b->ref_out, c->op->n_out,
                             case_tol(c, res->impl),
                             tb_check_terms(c->op, c->reduce_len),
                             &res->check);
    }
    res->checked = true;
    if (!res->check.passed) {
        res->status = TB_STATUS_FAILED_CHECK;
        snprintf(res->message, sizeof res->message,
                 "%lld %s out of tolerance (%s check); first at output %d "
                 "index %lld: got %.9g, expected %.9g",
                 (long long)res->check.n_bad,
                 !strcmp(res->check.method, "projection") ? "row(s)"
                                                          : "element(s)",
                 res->check.method, res->check.first_bad_output,
                 (long long)res->check.first_bad, res->check.first_bad_got,
                 res->check.first_bad_ref);
        return false;
    }
    res->status = TB_STATUS_OK;
    return true;
}

void tb_runner_round(tb_runner *r, const tb_case *c, int round, int rounds,
                     tb_result *res)
{
    buffers b;
    tb_kernel_fn fn = NULL;
    if (round > 0 && res->status != TB_STATUS_OK)
        return; /* not timed in round 0: nothing to add */
    tb_trace_push_str(c->id);
    if (!prepare(r, c, res, &b, &fn, round ? CHECK_NONE : CHECK_DEFAULT))
        goto out;
    int rc = measure(r, &b, fn, c, res, round, rounds);
    if (rc)
        set_error(res, TB_STATUS_ERROR, "while timing: %s", tb_strerror(rc));
    else if (round == 0 && (rc = count_pass(r, &b, fn, c, res)) != 0)
        set_error(res, TB_STATUS_ERROR, "while counting: %s",
                  tb_strerror(rc));
    else if (round == rounds - 1 &&
             (rc = breakdown_pass(r, &b, fn, c, res)) != 0)
        set_error(res, TB_STATUS_ERROR, "in the breakdown pass: %s",
                  tb_strerror(rc));
    res->state_restores += (uint64_t)tb_workload_restores(b.wl);
out:
    buffers_free(&b, c->op);
    set_phase(r, NULL, TB_PHASE_IDLE);
    tb_trace_pop(); /* the case */
}

void tb_runner_summarize(const tb_case *c, tb_result *res)
{
    if (res->status != TB_STATUS_OK || res->n_samples == 0)
        return;
    int rc = tb_stats_compute(res->samples_ns, res->n_samples,
                              TB_STATS_BOOTSTRAP_DEFAULT, c->seed,
                              &res->stats);
    if (rc) {
        set_error(res, TB_STATUS_ERROR, "statistics: %s", tb_strerror(rc));
        return;
    }
    double med = res->stats.median;
    if (med > 0) {
        res->gb_s = c->bytes / med;
        res->gflop_s = c->flops / med;
        res->items_s = c->items / med * 1e9;
    }
}

void tb_runner_run(tb_runner *r, const tb_case *c, tb_result *res)
{
    memset(res, 0, sizeof *res);
    tb_runner_round(r, c, 0, 1, res);
    tb_runner_summarize(c, res);
}

int tb_runner_exec(tb_runner *r, const tb_case *c, tb_result *res,
                   tb_exec_fn fn_out, void *arg)
{
    buffers b;
    tb_kernel_fn fn = NULL;
    int rc = 0;
    tb_trace_push_str(c->id);
    prepare(r, c, res, &b, &fn, CHECK_FULL); /* exec writes the reference */
    set_phase(r, NULL, TB_PHASE_IDLE);
    if (res->checked) /* outputs exist, passed or not */
        rc = fn_out(arg, b.host_in, b.host_out, b.ref_out);
    buffers_free(&b, c->op);
    tb_trace_pop();
    return rc;
}

void tb_result_free(tb_result *res)
{
    free(res->samples_ns);
    res->samples_ns = NULL;
    free(res->device_ns);
    res->device_ns = NULL;
}

int tb_runner_count(tb_runner *r, const tb_case *c, uint64_t k,
                    void (*start)(void *), void (*stop)(void *), void *arg,
                    tb_result *res)
{
    buffers b;
    tb_kernel_fn fn = NULL;
    double ns;
    int rc = TB_EINVAL;
    tb_trace_push_str(c->id);
    if (!prepare(r, c, res, &b, &fn, CHECK_DEFAULT))
        goto out;
    set_phase(r, c, TB_PHASE_SAMPLING);
    rc = run_batch(&b, fn, c, 1, c->alloc_outputs, &ns, NULL); /* uncounted */
    if (!rc)
        rc = state_window(&b, k); /* uncounted too */
    if (!rc) {
        start(arg);
        if (c->alloc_outputs || c->transfers) {
            rc = run_batch(&b, fn, c, k, c->alloc_outputs, &ns, NULL);
        } else { /* run_batch's loop, without its clock readings */
            for (uint64_t i = 0; i < k && !rc; i++)
                rc = fn(b.kctx, b.dev_in, (tb_tensor *)b.dev_out,
                        &c->params);
            if (!rc)
                rc = tb_backend_sync(b.be, b.ctx);
        }
        stop(arg);
    }
    if (rc)
        set_error(res, TB_STATUS_ERROR, "while counting: %s",
                  tb_strerror(rc));
out:
    buffers_free(&b, c->op);
    set_phase(r, NULL, TB_PHASE_IDLE);
    tb_trace_pop();
    return rc;
}
