/* CUPTI record counting (src/backends/cuda/cupti_tally.c) on activity
 * buffers built by hand: no GPU or driver needed, only libcupti, whose
 * cuptiActivityGetNextRecord walks them as it walks buffers it filled. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/cuda/cupti_pass.h"
#include "backends/cuda/cupti_tally.h"

/* A buffer under construction: records at 8-byte aligned offsets, as
 * CUPTI lays them out. */
typedef struct {
    _Alignas(8) uint8_t data[1 << 16];
    size_t used;
} buffer;

static void *put(buffer *b, CUpti_ActivityKind kind, size_t size)
{
    size_t at = (b->used + 7) & ~(size_t)7;
    assert_true(at + size <= sizeof b->data);
    void *p = b->data + at;
    memset(p, 0, size);
    ((CUpti_Activity *)p)->kind = kind;
    b->used = at + size;
    return p;
}

static void kernel(buffer *b, const char *name, uint64_t start,
                   uint64_t end)
{
    CUpti_ActivityKernel10 *k =
        put(b, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, sizeof *k);
    k->name = name;
    k->start = start;
    k->end = end;
}

static void memcpy_rec(buffer *b, uint8_t kind, uint64_t bytes)
{
    CUpti_ActivityMemcpy6 *m = put(b, CUPTI_ACTIVITY_KIND_MEMCPY, sizeof *m);
    m->copyKind = kind;
    m->bytes = bytes;
}

static void memory(buffer *b, CUpti_ActivityMemoryOperationType op,
                   uint64_t bytes)
{
    CUpti_ActivityMemory4 *m = put(b, CUPTI_ACTIVITY_KIND_MEMORY2, sizeof *m);
    m->memoryOperationType = op;
    m->bytes = bytes;
}

/* Walk a buffer with the linked libcupti's record iterator. */
static int walk(tb_cupti_tally *t, uint8_t *data, size_t used)
{
    return tb_cupti_tally_buffer(t, cuptiActivityGetNextRecord, data, used);
}

static void test_mixed_buffer(void **state)
{
    (void)state;
    static buffer b;
    b.used = 0;
    kernel(&b, "_Z3addPfS_S_i", 100, 300);
    memcpy_rec(&b, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 100);
    kernel(&b, "_Z6reducePfS_i", 0, 50);
    memcpy_rec(&b, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 200);
    kernel(&b, "_Z3addPfS_S_i", 1000, 1100);
    memcpy_rec(&b, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 64);
    memcpy_rec(&b, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, 32);
    memcpy_rec(&b, CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, 8);
    CUpti_ActivityMemset4 *ms =
        put(&b, CUPTI_ACTIVITY_KIND_MEMSET, sizeof *ms);
    ms->bytes = 4096;
    memory(&b, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 1024);
    memory(&b, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 2048);
    memory(&b, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, 1024);

    tb_cupti_tally t;
    tb_cupti_tally_reset(&t);
    assert_int_equal(walk(&t, b.data, b.used), 0);
    assert_int_equal(t.kernels, 3);
    assert_int_equal(t.n_kernels, 2);
    assert_string_equal(t.kernel[0].name, "_Z3addPfS_S_i");
    assert_int_equal(t.kernel[0].count, 2);
    assert_int_equal(t.kernel[0].ns, 300);
    assert_string_equal(t.kernel[1].name, "_Z6reducePfS_i");
    assert_int_equal(t.kernel[1].count, 1);
    assert_int_equal(t.kernel[1].ns, 50);
    assert_int_equal(t.memcpy_count[TB_CUPTI_H2D], 2);
    assert_int_equal(t.memcpy_bytes[TB_CUPTI_H2D], 300);
    assert_int_equal(t.memcpy_count[TB_CUPTI_D2H], 1);
    assert_int_equal(t.memcpy_bytes[TB_CUPTI_D2H], 64);
    assert_int_equal(t.memcpy_count[TB_CUPTI_D2D], 1);
    assert_int_equal(t.memcpy_bytes[TB_CUPTI_D2D], 32);
    assert_int_equal(t.memcpy_count[TB_CUPTI_OTHER], 1);
    assert_int_equal(t.memsets, 1);
    assert_int_equal(t.memset_bytes, 4096);
    assert_int_equal(t.allocs, 2);
    assert_int_equal(t.alloc_bytes, 3072);
    assert_int_equal(t.frees, 1);
    assert_int_equal(t.free_bytes, 1024);
    assert_int_equal(t.other_records, 0);

    /* two iterations' worth */
    tb_cupti_per_iter pi;
    tb_cupti_per_iteration(&t, 2, &pi);
    assert_true(pi.valid);
    assert_true(pi.kernel_launches == 1.5);
    assert_true(pi.memcpy_count == 2.5);
    assert_true(pi.memcpy_bytes == (300 + 64 + 32 + 8) / 2.0);
    assert_true(pi.memcpy_count_dir[TB_CUPTI_H2D] == 1.0);
    assert_true(pi.memsets == 0.5 && pi.memset_bytes == 2048);
    assert_true(pi.device_allocs == 1.0 && pi.device_alloc_bytes == 1536);
    assert_true(pi.device_frees == 0.5 && pi.device_free_bytes == 512);
}

/* The seed's "log_softmax: 3+ launches" vs one fused launch: the same
 * walk over a buffer of k iterations of each gives 1 and 6 per call. */
static void test_fused_vs_unfused(void **state)
{
    (void)state;
    static buffer b;
    const int k = 5;
    b.used = 0;
    for (int i = 0; i < k; i++)
        kernel(&b, "log_softmax_rows", 10 * i, 10 * i + 4);
    tb_cupti_tally t;
    tb_cupti_tally_reset(&t);
    assert_int_equal(walk(&t, b.data, b.used), 0);
    tb_cupti_per_iter pi;
    tb_cupti_per_iteration(&t, k, &pi);
    assert_true(pi.valid && pi.kernel_launches == 1.0);

    static const char *const steps[] = {"max_rows", "sub_bcast", "exp",
                                        "sum_rows", "log",       "sub_bcast"};
    b.used = 0;
    for (int i = 0; i < k; i++)
        for (int s = 0; s < 6; s++)
            kernel(&b, steps[s], 0, 1);
    tb_cupti_tally_reset(&t);
    assert_int_equal(walk(&t, b.data, b.used), 0);
    tb_cupti_per_iteration(&t, k, &pi);
    assert_true(pi.valid && pi.kernel_launches == 6.0);
    assert_int_equal(t.n_kernels, 5); /* sub_bcast twice per call */
    assert_int_equal(t.kernel[1].count, 2 * (uint64_t)k);
}

static void test_empty_and_dropped(void **state)
{
    (void)state;
    static buffer b;
    b.used = 0;
    tb_cupti_tally t;
    tb_cupti_tally_reset(&t);
    assert_int_equal(walk(&t, b.data, 0), 0);
    assert_int_equal(t.kernels, 0);

    kernel(&b, "k", 0, 1);
    assert_int_equal(walk(&t, b.data, b.used), 0);
    tb_cupti_per_iter pi;
    tb_cupti_per_iteration(&t, 0, &pi);
    assert_false(pi.valid);
    assert_non_null(strstr(pi.reason, "no iteration"));
    t.dropped = 3;
    tb_cupti_per_iteration(&t, 1, &pi);
    assert_false(pi.valid);
    assert_true(pi.kernel_launches == 0); /* not read when not valid */
    assert_non_null(strstr(pi.reason, "dropped 3"));
}

static void test_breakdown_overflow(void **state)
{
    (void)state;
    static buffer b;
    static char names[TB_CUPTI_MAX_KERNELS + 8][16];
    b.used = 0;
    for (int i = 0; i < TB_CUPTI_MAX_KERNELS + 8; i++) {
        snprintf(names[i], sizeof names[i], "k%d", i);
        kernel(&b, names[i], 0, 1);
    }
    tb_cupti_tally t;
    tb_cupti_tally_reset(&t);
    assert_int_equal(walk(&t, b.data, b.used), 0);
    assert_int_equal(t.kernels, TB_CUPTI_MAX_KERNELS + 8);
    assert_int_equal(t.n_kernels, TB_CUPTI_MAX_KERNELS);
    assert_int_equal(t.kernels_unlisted, 8);
}

static void test_layout_version(void **state)
{
    (void)state;
    char why[256] = "";
    assert_true(tb_cupti_layout_ok(CUPTI_API_VERSION, why, sizeof why));
    /* same major.minor, another update: same layouts */
    assert_true(tb_cupti_layout_ok(CUPTI_API_VERSION / 100 * 100 + 99, why,
                                   sizeof why));
    uint32_t next = (CUPTI_API_VERSION / 100 + 1) * 100;
    assert_false(tb_cupti_layout_ok(next, why, sizeof why));
    assert_non_null(strstr(why, "rebuild"));
    /* 13.0 GA: same layouts, but its cuptiActivityDisable may deadlock */
    assert_false(tb_cupti_layout_ok(130000, why, sizeof why));
    assert_non_null(strstr(why, "deadlock"));
    assert_true(tb_cupti_layout_ok(130001, why, sizeof why));
    /* the libcupti this test runs with is the one it was built against
     * (CI uses the toolkit's): a mismatch here would be a packaging bug */
    uint32_t v = 0;
    assert_int_equal(cuptiGetVersion(&v), CUPTI_SUCCESS);
    assert_true(tb_cupti_layout_ok(v, why, sizeof why));
}

/* Per-call figures from a tally of 4 calls, names through a demangler. */
static void fake_demangle(const char *mangled, char *buf, size_t len)
{
    snprintf(buf, len, "demangled(%s)", mangled);
}

static void test_to_counts(void **state)
{
    (void)state;
    static buffer b;
    b.used = 0;
    const int k = 4;
    for (int i = 0; i < k; i++) {
        kernel(&b, "_Z1fv", 0, 100 + (uint64_t)i); /* 100..103 ns */
        kernel(&b, "_Z1gv", 0, 10);
        kernel(&b, "_Z1gv", 0, 10);
        memcpy_rec(&b, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 12);
        memory(&b, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 256);
        memory(&b, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, 256);
    }
    memcpy_rec(&b, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 8); /* once: 1/4 */
    tb_cupti_tally t;
    tb_cupti_tally_reset(&t);
    assert_int_equal(walk(&t, b.data, b.used), 0);
    tb_dev_counts d;
    tb_cupti_to_counts(&t, (uint64_t)k, fake_demangle, &d);
    assert_true(d.valid);
    assert_int_equal(d.iters, k);
    assert_true(d.kernel_launches == 3.0);
    assert_int_equal(d.n_kernels, 2);
    assert_string_equal(d.kernel[0].name, "demangled(_Z1fv)");
    assert_true(d.kernel[0].count == 1.0);
    assert_true(d.kernel[0].ns == (100 + 101 + 102 + 103) / 4.0);
    assert_string_equal(d.kernel[1].name, "demangled(_Z1gv)");
    assert_true(d.kernel[1].count == 2.0 && d.kernel[1].ns == 20.0);
    assert_true(d.memcpy_count[TB_DEV_D2H] == 1.0);
    assert_true(d.memcpy_bytes[TB_DEV_D2H] == 12.0);
    assert_true(d.memcpy_count[TB_DEV_H2D] == 0.25);
    assert_true(d.memcpy_bytes[TB_DEV_H2D] == 2.0);
    assert_true(d.memcpy_count[TB_DEV_D2D] == 0.0);
    assert_true(d.device_allocs == 1.0 && d.device_alloc_bytes == 256.0);
    assert_true(d.device_frees == 1.0 && d.device_free_bytes == 256.0);
    assert_true(d.memsets == 0.0 && d.kernels_unlisted == 0.0);

    /* no demangler: CUPTI's names; dropped records: not valid */
    tb_cupti_to_counts(&t, (uint64_t)k, NULL, &d);
    assert_string_equal(d.kernel[0].name, "_Z1fv");
    t.dropped = 1;
    tb_cupti_to_counts(&t, (uint64_t)k, fake_demangle, &d);
    assert_false(d.valid);
    assert_true(d.kernel_launches == 0.0 && d.n_kernels == 0);
    assert_non_null(strstr(d.reason, "dropped 1"));
}

/* The whole counting pass in a child process (libcupti is loaded once
 * per process), with TBENCH_CUPTI_LIB set to lib (NULL: unset) and
 * FAKE_CUPTI_MODE to mode (tests/fake_cupti.c; NULL: unset). */
typedef struct {
    int rc, runs, syncs;
    uint64_t enabled_after; /* the fake's enabled kinds after the pass */
    int finalized;          /* the fake's cuptiFinalize calls */
    tb_dev_counts d;        /* of the last pass */
} pass_outcome;

static const char *fake_path; /* argv[1]: fake_cupti.so */
static int runs, syncs, run_rc;
static int passes = 1; /* passes the child makes, one after the other */

/* Each iteration, through the fake when it is the loaded "libcupti": a
 * kernel _Z1fv (100 + i ns), a kernel _Z1gv (10 ns), a 16-byte H2D
 * copy, a 64-byte allocation and its release, an 8-byte memset. */
static int count_run(void *arg, uint64_t iters)
{
    (void)arg;
    runs += (int)iters;
    void *h = fake_path ? dlopen(fake_path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    if (h) {
        void (*kern)(const char *, uint64_t);
        void (*copy)(uint8_t, uint64_t);
        void (*mem)(int, uint64_t);
        void (*set)(uint64_t);
        *(void **)&kern = dlsym(h, "fake_cupti_kernel");
        *(void **)&copy = dlsym(h, "fake_cupti_memcpy");
        *(void **)&mem = dlsym(h, "fake_cupti_memory");
        *(void **)&set = dlsym(h, "fake_cupti_memset");
        for (uint64_t i = 0; i < iters; i++) {
            kern("_Z1fv", 100 + i);
            kern("_Z1gv", 10);
            copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 16);
            mem(1, 64);
            mem(0, 64);
            set(8);
        }
        dlclose(h);
    }
    return run_rc;
}

static int count_sync(void *arg)
{
    (void)arg;
    syncs++;
    return 0;
}

static void pass_in_child(const char *lib, const char *mode, int rc_of_run,
                          pass_outcome *o)
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        if (lib)
            setenv("TBENCH_CUPTI_LIB", lib, 1);
        else
            unsetenv("TBENCH_CUPTI_LIB");
        if (mode)
            setenv("FAKE_CUPTI_MODE", mode, 1);
        else
            unsetenv("FAKE_CUPTI_MODE");
        run_rc = rc_of_run;
        tb_cupti_pass p = {count_sync, NULL, fake_demangle};
        pass_outcome r;
        memset(&r, 0, sizeof r);
        for (int k = 0; k < passes && r.rc == 0; k++)
            r.rc = tb_cupti_count(&p, count_run, NULL, 3, &r.d);
        r.runs = runs;
        r.syncs = syncs;
        void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
        if (h) {
            uint64_t (*en)(void);
            *(void **)&en = dlsym(h, "fake_cupti_enabled");
            r.enabled_after = en ? en() : 0;
            int (*fin)(void);
            *(void **)&fin = dlsym(h, "fake_cupti_finalized");
            r.finalized = fin ? fin() : 0;
            dlclose(h);
        }
        ssize_t w = write(fd[1], &r, sizeof r);
        _exit(w == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fd[1]);
    memset(o, 0, sizeof *o);
    char *p = (char *)o;
    size_t got = 0;
    while (got < sizeof *o) {
        ssize_t k = read(fd[0], p + got, sizeof *o - got);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd[0]);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(got, sizeof *o);
    printf("# %s%s%s: %s\n", lib ? lib : "libcupti", mode ? " " : "",
           mode ? mode : "", o->d.valid ? "valid" : o->d.reason);
}

/* A CUPTI that works: 3 iterations of the run above, per iteration. */
static void test_pass_counts(void **state)
{
    (void)state;
    if (!fake_path) {
        skip();
        return;
    }
    pass_outcome o;
    pass_in_child(fake_path, NULL, 0, &o);
    assert_int_equal(o.rc, 0);
    assert_true(o.d.valid);
    assert_int_equal(o.runs, 3);
    assert_int_equal(o.syncs, 2); /* before and after the calls */
    assert_int_equal(o.enabled_after, 0); /* every kind disabled again */
    assert_int_equal(o.d.iters, 3);
    assert_true(o.d.kernel_launches == 2.0);
    assert_int_equal(o.d.n_kernels, 2);
    assert_string_equal(o.d.kernel[0].name, "demangled(_Z1fv)");
    assert_true(o.d.kernel[0].count == 1.0);
    assert_true(o.d.kernel[0].ns == 101.0); /* (100 + 101 + 102) / 3 */
    assert_string_equal(o.d.kernel[1].name, "demangled(_Z1gv)");
    assert_true(o.d.kernel[1].ns == 10.0);
    assert_true(o.d.memcpy_count[TB_DEV_H2D] == 1.0);
    assert_true(o.d.memcpy_bytes[TB_DEV_H2D] == 16.0);
    assert_true(o.d.memcpy_count[TB_DEV_D2H] == 0.0);
    assert_true(o.d.device_allocs == 1.0 && o.d.device_alloc_bytes == 64);
    assert_true(o.d.device_frees == 1.0 && o.d.device_free_bytes == 64);
    assert_true(o.d.memsets == 1.0 && o.d.memset_bytes == 8.0);
}

/* CUPTI is detached after each pass (so later samples run without its
 * hooks) and the next pass attaches again: its counts are whole.  With
 * TBENCH_CUPTI_DETACH=0 it stays attached. */
static void test_pass_detaches(void **state)
{
    (void)state;
    if (!fake_path) {
        skip();
        return;
    }
    pass_outcome o;
    passes = 2;
    pass_in_child(fake_path, NULL, 0, &o);
    assert_int_equal(o.rc, 0);
    assert_int_equal(o.finalized, 2);
    assert_true(o.d.valid); /* the callbacks were registered again */
    assert_int_equal(o.runs, 6);
    assert_true(o.d.kernel_launches == 2.0);
    assert_true(o.d.memcpy_count[TB_DEV_H2D] == 1.0);
    setenv("TBENCH_CUPTI_DETACH", "0", 1);
    pass_in_child(fake_path, NULL, 0, &o);
    unsetenv("TBENCH_CUPTI_DETACH");
    passes = 1;
    assert_int_equal(o.finalized, 0);
    assert_true(o.d.valid);
    assert_true(o.d.kernel_launches == 2.0);
}

/* Another minor release's record layouts: refused before anything runs. */
static void test_pass_other_layouts(void **state)
{
    (void)state;
    if (!fake_path) {
        skip();
        return;
    }
    pass_outcome o;
    pass_in_child(fake_path, "version", 0, &o);
    assert_int_equal(o.rc, 0);
    assert_false(o.d.valid);
    assert_int_equal(o.runs, 0);
    assert_non_null(strstr(o.d.reason, "record layouts of"));
    assert_non_null(strstr(o.d.reason, "rebuild"));
    assert_true(o.d.kernel_launches == 0.0);
}

/* Another profiler holds CUPTI: refused, named, nothing run. */
static void test_pass_refused(void **state)
{
    (void)state;
    if (!fake_path) {
        skip();
        return;
    }
    pass_outcome o;
    pass_in_child(fake_path, "refuse", 0, &o);
    assert_int_equal(o.rc, 0);
    assert_false(o.d.valid);
    assert_int_equal(o.runs, 0);
    assert_string_equal(o.d.reason,
                        "CUPTI refused: cuptiActivityEnable("
                        "CONCURRENT_KERNEL): FAKE_MULTIPLE_SUBSCRIBERS "
                        "(error 39) (another profiler may be attached)");
}

/* Records dropped: the counts would be low, so there are none. */
static void test_pass_dropped(void **state)
{
    (void)state;
    if (!fake_path) {
        skip();
        return;
    }
    pass_outcome o;
    pass_in_child(fake_path, "drop", 0, &o);
    assert_int_equal(o.rc, 0);
    assert_false(o.d.valid);
    assert_int_equal(o.runs, 3);
    assert_non_null(strstr(o.d.reason, "CUPTI dropped 2 activity records"));
    assert_true(o.d.kernel_launches == 0.0 && o.d.n_kernels == 0);
}

/* The calls fail: their error comes back, the kinds are disabled. */
static void test_pass_run_fails(void **state)
{
    (void)state;
    if (!fake_path) {
        skip();
        return;
    }
    pass_outcome o;
    pass_in_child(fake_path, NULL, -5, &o);
    assert_int_equal(o.rc, -5);
    assert_false(o.d.valid);
    assert_int_equal(o.enabled_after, 0);
    assert_non_null(strstr(o.d.reason, "the counting pass failed"));
}

/* CUPTI absent: not valid, the reason names the library, nothing run. */
static void test_pass_cupti_absent(void **state)
{
    (void)state;
    pass_outcome o;
    pass_in_child("/nonexistent/libcupti.so", NULL, 0, &o);
    assert_int_equal(o.rc, 0);
    assert_false(o.d.valid);
    assert_int_equal(o.runs, 0);
    assert_non_null(strstr(o.d.reason, "CUPTI is not loadable"));
    assert_non_null(strstr(o.d.reason, "/nonexistent/libcupti.so"));
}

/* A library that is not CUPTI: not valid, names the missing function. */
static void test_pass_not_cupti(void **state)
{
    (void)state;
    pass_outcome o;
    pass_in_child("libc.so.6", NULL, 0, &o);
    assert_false(o.d.valid);
    assert_int_equal(o.runs, 0);
    assert_non_null(strstr(o.d.reason, "libcupti has no cuptiGetVersion"));
}

/* The real libcupti on this machine without a GPU driver: CUPTI refuses
 * (the call, its message and number), the pass runs nothing and says
 * why; never zero counts. */
static void test_pass_refused_without_driver(void **state)
{
    (void)state;
    if (access("/dev/nvidiactl", F_OK) == 0) {
        skip(); /* a machine with a driver: CUPTI may well count */
        return;
    }
    pass_outcome o;
    pass_in_child(NULL, NULL, 0, &o);
    assert_int_equal(o.rc, 0);
    assert_false(o.d.valid);
    assert_int_equal(o.runs, 0);
    assert_non_null(strstr(o.d.reason, "CUPTI refused: cupti"));
    assert_non_null(strstr(o.d.reason, "(error "));
}

int main(int argc, char **argv)
{
    fake_path = argc > 1 ? argv[1] : NULL; /* tests/fake_cupti.so */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mixed_buffer),
        cmocka_unit_test(test_fused_vs_unfused),
        cmocka_unit_test(test_empty_and_dropped),
        cmocka_unit_test(test_breakdown_overflow),
        cmocka_unit_test(test_layout_version),
        cmocka_unit_test(test_to_counts),
        cmocka_unit_test(test_pass_cupti_absent),
        cmocka_unit_test(test_pass_not_cupti),
        cmocka_unit_test(test_pass_refused_without_driver),
        cmocka_unit_test(test_pass_counts),
        cmocka_unit_test(test_pass_detaches),
        cmocka_unit_test(test_pass_other_layouts),
        cmocka_unit_test(test_pass_refused),
        cmocka_unit_test(test_pass_dropped),
        cmocka_unit_test(test_pass_run_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
