/* Tests of the workloads' block cache (backends/workload.c, ops/pool.h
 * TB_POOL_EXACT): on a host-memory backend the tape's tensors of a step
 * after the first come from the blocks earlier steps freed.
 *
 *  1. steady_state: every workload op (the MLP, CNN and transformer
 *     block, training and inference, api_add's tensor layers) on the cpu
 *     backend makes backend allocations (counters.device_allocs) in its
 *     first call only: calls 2-4 add none, and every request of theirs
 *     is a cache hit; the same workload on that backend marked as device
 *     memory (no cache) allocates the same count again every call.
 *  2. dirty_memory: the cache hands blocks back as they were left (not
 *     cleared), so no op may rely on zeroed memory.  Each training model
 *     in f32 and f64, 4 steps: the workload's losses (blocks reused dirty
 *     from the second step on) equal bit for bit those of the same model
 *     on an exec whose every allocation is fresh and zeroed and on one
 *     whose every allocation is filled with NaN bits.
 *  3. classes: the exact classes round to 64 bytes and a block serves its
 *     own class only.
 *  Every test checks that no tracked memory is left (leak fixtures). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

#include "ag_exec.h"

#include "backends/backend.h"
#include "backends/workload.h"
#include "base/error.h"
#include "ops/models.h"
#include "ops/op.h"
#include "ops/pool.h"
#include "ops/tensor.h"

static const tb_backend *const B = &tb_backend_cpu;

#define CS(nd, ...) {nd, {__VA_ARGS__}}

static void *cpu_new(void)
{
    const char *vals[2] = {"auto", "1"};
    void *ctx = NULL;
    char err[256];
    assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
    return ctx;
}

static uint64_t device_allocs(const tb_backend *be, void *ctx)
{
    tb_backend_counters c;
    tb_backend_counters_read(be, ctx, &c);
    return c.device_allocs;
}

/* Inputs: sin of the index, scaled into [-0.9, 0.9]. */
static void fill(tb_tensor *t)
{
    for (int64_t i = 0; i < tb_tensor_numel(t); i++)
        tb_tensor_set(t, i, 0.9 * sin(0.37 * (double)i + 0.1));
}

/* ---- 1. steady_state ------------------------------------------------------ */

typedef struct wl_case {
    tb_op_id op;
    tb_shape x[2];
    int layer; /* api_add */
} wl_case;

static const wl_case cases[] = {
    {TB_OP_mlp_train_step, {CS(2, 3, 20)}, 0},
    {TB_OP_mlp_infer_step, {CS(2, 4, 9)}, 0},
    {TB_OP_cnn_train_step, {CS(4, 2, 1, 12, 11)}, 0},
    {TB_OP_cnn_infer_step, {CS(4, 1, 1, 10, 10)}, 0},
    {TB_OP_tfm_train_step, {CS(3, 2, 4, 8)}, 0},
    {TB_OP_tfm_infer_step, {CS(3, 2, 4, 8)}, 0},
    {TB_OP_api_add, {CS(2, 3, 5), CS(1, 5)}, 2},
    {TB_OP_api_add, {CS(2, 3, 5), CS(1, 5)}, 3},
};

/* Runs case k on backend be (instance ctx) for 4 calls; *first: the
 * backend allocations of the first call, *later: of calls 2-4.  The
 * workload's impl is checked for "+cache" when cached. */
static void run_case(const tb_backend *be, void *ctx, const wl_case *c,
                     bool cached, uint64_t *first, uint64_t *later)
{
    const tb_op *op = tb_op_get(c->op);
    tb_params p;
    memset(&p, 0, sizeof p);
    if (c->op == TB_OP_api_add)
        assert_int_equal(tb_params_set(op, &p, "layer", c->layer, NULL, 0),
                         0);
    else if (c->op == TB_OP_tfm_train_step || c->op == TB_OP_tfm_infer_step)
        assert_int_equal(tb_params_set(op, &p, "heads", 2, NULL, 0), 0);
    tb_shape os[TB_MAX_OUTPUTS];
    assert_int_equal(tb_op_infer(op, c->x, op->n_in, &p, os, NULL, 0), 0);
    tb_workload *w = NULL;
    char err[256];
    assert_int_equal(tb_workload_create(be, ctx, op, TB_F32, c->x, &p, &w,
                                        err, sizeof err),
                     0);
    assert_int_equal(strstr(tb_workload_impl(w), "+cache") != NULL, cached);
    tb_tensor in[2], out;
    for (int i = 0; i < op->n_in; i++) {
        assert_int_equal(tb_tensor_create(&in[i], TB_F32, &c->x[i]), 0);
        fill(&in[i]);
    }
    assert_int_equal(tb_tensor_create(&out, TB_F32, &os[0]), 0);
    tb_pool_stats s0, s1, s2;
    tb_workload_pool_stats(w, &s0); /* the parameters' blocks */
    uint64_t a0 = device_allocs(be, ctx);
    assert_int_equal(tb_workload_run(w, in, &out, &p), 0);
    uint64_t a1 = device_allocs(be, ctx);
    tb_workload_pool_stats(w, &s1);
    for (int step = 1; step < 4; step++)
        assert_int_equal(tb_workload_run(w, in, &out, &p), 0);
    uint64_t a2 = device_allocs(be, ctx);
    tb_workload_pool_stats(w, &s2);
    if (cached) {
        /* every request of calls 2-4 a hit, no new block */
        assert_true(s2.requests > s1.requests);
        assert_int_equal(s2.hits - s1.hits, s2.requests - s1.requests);
        assert_int_equal(s2.sys_allocs, s1.sys_allocs);
        assert_int_equal(s1.sys_allocs - s0.sys_allocs, a1 - a0);
    } else {
        assert_int_equal(s2.requests, 0);
    }
    *first = a1 - a0;
    *later = a2 - a1;
    for (int i = 0; i < op->n_in; i++)
        tb_tensor_destroy(&in[i]);
    tb_tensor_destroy(&out);
    tb_workload_destroy(w);
}

static void test_steady_state(void **state)
{
    (void)state;
    void *ctx = cpu_new();
    /* the cpu backend as if its memory were a device's: no cache */
    tb_backend dev = *B;
    dev.device_memory = true;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint64_t first, later, dfirst, dlater;
        run_case(B, ctx, &cases[k], true, &first, &later);
        if (later != 0)
            fail_msg("%s: %llu backend allocations in calls 2-4",
                     tb_op_get(cases[k].op)->name, (unsigned long long)later);
        assert_true(first > 0);
        run_case(&dev, ctx, &cases[k], false, &dfirst, &dlater);
        /* without the cache each call allocates what the first did */
        assert_true(dfirst > 0);
        assert_int_equal(dlater, 3 * dfirst);
        /* the cache allocates no more blocks than one step's tensors */
        assert_true(first <= dfirst);
    }
    B->destroy(ctx);
}

/* ---- 2. dirty_memory -------------------------------------------------------- */

/* The cpu backend's memory filled with NaN bits (every byte 0xff) when
 * made: an op that reads an output before writing it gets NaN. */
static int nan_alloc(void *ctx, tb_tensor *t)
{
    int rc = tb_backend_cpu.alloc(ctx, t);
    if (rc == 0)
        memset(t->data, 0xff, tb_tensor_nbytes(t));
    return rc;
}

#define STEPS 4

/* The losses of STEPS training steps of workload op on a tape over exec
 * ex (run, alloc from the caller), in losses[]. */
static void model_losses(const tb_ag_exec *ex, const tb_op *op, tb_dtype dt,
                         const tb_shape *xs, const tb_tensor *x,
                         double *losses)
{
    tb_params full = {0};
    if (op->id == TB_OP_tfm_train_step)
        assert_int_equal(tb_params_set(op, &full, "heads", 2, NULL, 0), 0);
    tb_params_defaults(op, &full);
    tb_model_cfg cfg = {
        .kind = tb_model_of_op(op),
        .x = *xs,
        .heads = tb_model_op_heads(op, &full),
        .train = true,
        .lr = full.v[tb_op_param_index(op, "lr")],
        .momentum = full.v[tb_op_param_index(op, "momentum")],
    };
    tb_model *m = NULL;
    assert_int_equal(tb_model_create(ex, dt, &cfg, &m), 0);
    tb_shape one = CS(1, 1);
    tb_tensor loss;
    assert_int_equal(tb_tensor_create(&loss, dt, &one), 0);
    for (int s = 0; s < STEPS; s++) {
        assert_int_equal(tb_model_run(m, x, TB_MODEL_STEP, &loss, NULL), 0);
        losses[s] = tb_tensor_get(&loss, 0);
    }
    tb_tensor_destroy(&loss);
    tb_model_destroy(m);
}

static void test_dirty_memory(void **state)
{
    (void)state;
    static const struct {
        tb_op_id op;
        tb_shape x;
    } models[] = {
        {TB_OP_mlp_train_step, CS(2, 3, 20)},
        {TB_OP_cnn_train_step, CS(4, 3, 1, 12, 11)},
        {TB_OP_tfm_train_step, CS(3, 2, 4, 8)},
    };
    void *ctx = cpu_new();
    const tb_ag_exec zero_ex = {ag_cpu_run, ag_cpu_alloc, ag_cpu_free,
                                ag_host_upload, ctx};
    const tb_ag_exec nan_ex = {ag_cpu_run, nan_alloc, ag_cpu_free,
                               ag_host_upload, ctx};
    for (size_t k = 0; k < sizeof models / sizeof models[0]; k++)
        for (int d = 0; d < 2; d++) {
            const tb_dtype dt = d ? TB_F64 : TB_F32;
            const tb_op *op = tb_op_get(models[k].op);
            tb_tensor x, out;
            tb_shape one = CS(1, 1);
            assert_int_equal(tb_tensor_create(&x, dt, &models[k].x), 0);
            fill(&x);
            assert_int_equal(tb_tensor_create(&out, dt, &one), 0);
            tb_params p;
            memset(&p, 0, sizeof p);
            if (models[k].op == TB_OP_tfm_train_step)
                assert_int_equal(tb_params_set(op, &p, "heads", 2, NULL, 0),
                                 0);
            tb_workload *w = NULL;
            assert_int_equal(tb_workload_create(B, ctx, op, dt, &models[k].x,
                                                &p, &w, NULL, 0),
                             0);
            double got[STEPS], zero[STEPS], nan[STEPS];
            for (int s = 0; s < STEPS; s++) {
                assert_int_equal(tb_workload_run(w, &x, &out, &p), 0);
                got[s] = tb_tensor_get(&out, 0);
            }
            tb_pool_stats st;
            tb_workload_pool_stats(w, &st);
            assert_true(st.hits > 0); /* blocks were reused */
            tb_workload_destroy(w);
            model_losses(&zero_ex, op, dt, &models[k].x, &x, zero);
            model_losses(&nan_ex, op, dt, &models[k].x, &x, nan);
            for (int s = 0; s < STEPS; s++)
                if (memcmp(&got[s], &zero[s], sizeof got[s]) ||
                    memcmp(&nan[s], &zero[s], sizeof nan[s]))
                    fail_msg("%s %s step %d: cache %.17g, zeroed %.17g, "
                             "NaN-filled %.17g",
                             op->name, tb_dtype_name(dt), s + 1, got[s],
                             zero[s], nan[s]);
            /* the steps train: the loss moves */
            assert_true(got[STEPS - 1] != got[0]);
            tb_tensor_destroy(&x);
            tb_tensor_destroy(&out);
        }
    B->destroy(ctx);
}

/* ---- 3. classes ---------------------------------------------------------- */

static int n_sys_alloc, n_sys_free;

static int count_alloc(void *user, tb_tensor *t)
{
    (void)user;
    n_sys_alloc++;
    t->data = tb_alloc(tb_tensor_nbytes(t));
    return t->data ? 0 : TB_ENOMEM;
}

static void count_free(void *user, tb_tensor *t)
{
    (void)user;
    n_sys_free++;
    tb_free(t->data);
    t->data = NULL;
}

static void test_classes(void **state)
{
    (void)state;
    assert_int_equal(tb_pool_class_exact(0), 64);
    assert_int_equal(tb_pool_class_exact(1), 64);
    assert_int_equal(tb_pool_class_exact(64), 64);
    assert_int_equal(tb_pool_class_exact(65), 128);
    assert_int_equal(tb_pool_class_exact(100000), 100032);
    assert_int_equal(tb_pool_class_exact(SIZE_MAX), 0);
    tb_pool *p = NULL;
    assert_int_equal(tb_pool_create((tb_pool_classes)7, count_alloc,
                                    count_free, NULL, &p),
                     TB_EINVAL);
    assert_int_equal(
        tb_pool_create(TB_POOL_EXACT, count_alloc, count_free, NULL, &p), 0);
    n_sys_alloc = n_sys_free = 0;
    tb_shape s10 = CS(1, 10), s16 = CS(1, 16), s17 = CS(1, 17);
    tb_tensor a, b, c;
    tb_tensor_init(&a, TB_F32, &s10); /* 40 B: class 64 */
    tb_tensor_init(&b, TB_F32, &s17); /* 68 B: class 128 */
    assert_int_equal(tb_pool_alloc(p, &a), 0);
    assert_int_equal(tb_pool_alloc(p, &b), 0);
    void *pa = a.data, *pb = b.data;
    tb_pool_free(p, &a);
    tb_pool_free(p, &b);
    /* 64 B (class 64): a's block, not b's larger one */
    tb_tensor_init(&c, TB_F32, &s16);
    assert_int_equal(tb_pool_alloc(p, &c), 0);
    assert_ptr_equal(c.data, pa);
    /* 17 elements again: b's block */
    tb_tensor_init(&a, TB_F32, &s17);
    assert_int_equal(tb_pool_alloc(p, &a), 0);
    assert_ptr_equal(a.data, pb);
    /* a third class-64 request while c holds the block: a new one */
    tb_tensor_init(&b, TB_F32, &s10);
    assert_int_equal(tb_pool_alloc(p, &b), 0);
    assert_int_equal(n_sys_alloc, 3);
    tb_pool_stats st;
    tb_pool_stats_read(p, &st);
    assert_int_equal(st.requests, 5);
    assert_int_equal(st.hits, 2);
    assert_int_equal(st.sys_bytes, 64 + 128 + 64);
    tb_pool_destroy(p);
    assert_int_equal(n_sys_free, 3);
}

/* Hundreds of blocks over several classes (a transformer step's count):
 * freed in a scrambled order, each class's blocks come back most
 * recently freed first (LIFO), from the pool only; a second free of a
 * block and a stranger's free are left alone; destroy returns every
 * block.  A lookup that loses a block, mixes classes or is not LIFO
 * fails it. */
#define MB_N 300
#define MB_CLASSES 7
static void test_many_blocks(void **state)
{
    (void)state;
    tb_pool *p = NULL;
    assert_int_equal(
        tb_pool_create(TB_POOL_EXACT, count_alloc, count_free, NULL, &p), 0);
    n_sys_alloc = n_sys_free = 0;
    static tb_tensor t[MB_N];
    static void *data[MB_N];
    static int order[MB_N];
    for (int i = 0; i < MB_N; i++) {
        tb_shape s = CS(1, 16 * (1 + i % MB_CLASSES)); /* 64 B a step */
        tb_tensor_init(&t[i], TB_F32, &s);
        assert_int_equal(tb_pool_alloc(p, &t[i]), 0);
        data[i] = t[i].data;
        for (int j = 0; j < i; j++)
            assert_ptr_not_equal(data[j], data[i]);
        order[i] = i;
    }
    uint64_t r = 12345;
    for (int i = MB_N - 1; i > 0; i--) { /* Fisher-Yates by an LCG */
        r = r * UINT64_C(6364136223846793005) + 1442695040888963407u;
        int j = (int)((r >> 33) % (uint64_t)(i + 1));
        int x = order[i];
        order[i] = order[j];
        order[j] = x;
    }
    for (int k = 0; k < MB_N; k++) {
        tb_pool_free(p, &t[order[k]]);
        assert_null(t[order[k]].data);
    }
    tb_tensor again = t[order[0]]; /* a block freed twice: left alone */
    again.data = data[order[0]];
    tb_pool_free(p, &again);
    assert_ptr_equal(again.data, data[order[0]]);
    int x = 0;
    tb_tensor stranger = t[0];
    stranger.data = &x;
    tb_pool_free(p, &stranger);
    assert_ptr_equal(stranger.data, &x);
    for (int c = 0; c < MB_CLASSES; c++) {
        /* class c's blocks in reverse free order */
        for (int k = MB_N - 1; k >= 0; k--) {
            if (order[k] % MB_CLASSES != c)
                continue;
            tb_tensor u;
            tb_shape s = CS(1, 16 * (1 + c));
            tb_tensor_init(&u, TB_F32, &s);
            assert_int_equal(tb_pool_alloc(p, &u), 0);
            assert_ptr_equal(u.data, data[order[k]]);
        }
    }
    tb_pool_stats st;
    tb_pool_stats_read(p, &st);
    assert_int_equal(n_sys_alloc, MB_N);
    assert_int_equal(st.sys_allocs, MB_N);
    assert_int_equal(st.hits, MB_N);
    assert_int_equal(st.requests, 2 * MB_N);
    assert_int_equal(st.cached_bytes, 0);
    tb_pool_destroy(p);
    assert_int_equal(n_sys_free, MB_N);
}

#define T(f) {#f, test_##f, leak_setup, leak_teardown, NULL}

int main(void)
{
    static const struct CMUnitTest tests[] = {
        T(steady_state),
        T(dirty_memory),
        T(classes),
        T(many_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
