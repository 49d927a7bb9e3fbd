/* Tracked allocator and tensor basics: counts, alignment, peak,
 * fault injection, views. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "ops/alloc.h"
#include "base/error.h"
#include "ops/tensor.h"

static void test_counts_and_alignment(void **state)
{
    (void)state;
    tb_alloc_stats a, b;
    tb_alloc_stats_read(&a);
    void *p = tb_alloc(100);
    void *q = tb_alloc(1);
    void *z = tb_alloc(0);
    assert_non_null(p);
    assert_non_null(q);
    assert_non_null(z);
    assert_true(p != z && q != z);
    assert_int_equal((uintptr_t)p % TB_ALIGN, 0);
    assert_int_equal((uintptr_t)q % TB_ALIGN, 0);
    memset(p, 0xab, 100); /* the whole requested size is usable */
    tb_alloc_stats_read(&b);
    assert_int_equal(b.allocs - a.allocs, 3);
    assert_int_equal(b.bytes - a.bytes, 101);
    assert_int_equal(b.live_bytes - a.live_bytes, 101);
    tb_free(p);
    tb_free(q);
    tb_free(z);
    tb_free(NULL);
    tb_alloc_stats_read(&b);
    assert_int_equal(b.frees - a.frees, 3);
    assert_int_equal(b.live_bytes, a.live_bytes);
}

/* Large blocks start on a huge-page boundary (+ the header) and are
 * usable and counted at their requested size. */
static void test_large_aligned(void **state)
{
    (void)state;
    tb_alloc_stats a, b;
    tb_alloc_stats_read(&a);
    const size_t n = TB_HUGE_MIN + 12345;
    unsigned char *p = tb_alloc(n);
    assert_non_null(p);
    assert_int_equal(((uintptr_t)p - TB_ALIGN) % TB_HUGE_ALIGN, 0);
    memset(p, 0x5a, n);
    assert_int_equal(p[n - 1], 0x5a);
    tb_alloc_stats_read(&b);
    assert_int_equal(b.bytes - a.bytes, n);
    assert_int_equal(b.live_bytes - a.live_bytes, n);
    tb_free(p);
    tb_alloc_stats_read(&b);
    assert_int_equal(b.live_bytes, a.live_bytes);
}

static long minor_faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

/* A large block freed is kept for the next request of its size: after
 * two rounds, ten allocate-touch-free rounds of 8 MiB fault nothing in
 * (measured: 0), where a fresh mapping per call (aligned_alloc of 2 MiB
 * alone) faulted 4-5 huge pages a round (70 in all), or 2048 small ones
 * without THP. */
static void test_large_reused(void **state)
{
    (void)state;
    const size_t n = (size_t)8 << 20;
    unsigned char *p;
    for (int i = 0; i < 2; i++) {
        p = tb_alloc(n);
        assert_non_null(p);
        memset(p, 1, n);
        tb_free(p);
    }
    long f0 = minor_faults();
    for (int i = 0; i < 10; i++) {
        p = tb_alloc(n);
        assert_non_null(p);
        memset(p, i, n);
        tb_free(p);
    }
    long f = minor_faults() - f0;
    print_message("# 10 rounds of 8 MiB after two: %ld minor faults\n",
                  f);
    assert_true(f < 10);
}

static void test_peak(void **state)
{
    (void)state;
    tb_alloc_stats s0, s1;
    tb_alloc_peak_reset();
    tb_alloc_stats_read(&s0);
    void *p = tb_alloc(1000);
    void *q = tb_alloc(3000);
    tb_free(p);
    void *r = tb_alloc(500);
    tb_alloc_stats_read(&s1);
    /* high-water mark was p + q live together */
    assert_int_equal(s1.peak_bytes - s0.live_bytes, 4000);
    tb_free(q);
    tb_free(r);
    tb_alloc_peak_reset();
    tb_alloc_stats_read(&s1);
    assert_int_equal(s1.peak_bytes, s1.live_bytes);
}

static void test_huge_fails(void **state)
{
    (void)state;
    assert_null(tb_alloc(SIZE_MAX - 10));
    assert_null(tb_alloc(SIZE_MAX / 2 + 1));
}

static void test_fault_injection(void **state)
{
    (void)state;
    tb_alloc_fail_after(2);
    void *a = tb_alloc(8), *b = tb_alloc(8), *c = tb_alloc(8);
    assert_non_null(a);
    assert_non_null(b);
    assert_null(c);
    tb_alloc_fail_after(-1);
    c = tb_alloc(8);
    assert_non_null(c);
    tb_free(a);
    tb_free(b);
    tb_free(c);

    /* tensor creation reports TB_ENOMEM, never crashes */
    tb_tensor t;
    tb_shape s = {2, {16, 16}};
    tb_alloc_fail_after(0);
    assert_int_equal(tb_tensor_create(&t, TB_F32, &s), TB_ENOMEM);
    tb_alloc_fail_after(-1);
}

#define NTHREADS 4
#define PER_THREAD 1000

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < PER_THREAD; i++)
        tb_free(tb_alloc(16));
    return NULL;
}

/* Per-thread slots summed on read must give exact totals. */
static void test_threads_sum(void **state)
{
    (void)state;
    tb_alloc_stats a, b;
    pthread_t th[NTHREADS];
    tb_alloc_stats_read(&a);
    for (int i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, worker, NULL), 0);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    tb_alloc_stats_read(&b);
    assert_int_equal(b.allocs - a.allocs, NTHREADS * PER_THREAD);
    assert_int_equal(b.frees - a.frees, NTHREADS * PER_THREAD);
    assert_int_equal(b.bytes - a.bytes, NTHREADS * PER_THREAD * 16);
    assert_int_equal(b.live_bytes, a.live_bytes);
}

static void test_tensor_create_and_view(void **state)
{
    (void)state;
    tb_tensor t, v;
    tb_shape s = {3, {2, 3, 4}};
    assert_int_equal(tb_tensor_create(&t, TB_F64, &s), 0);
    assert_int_equal(t.strides[0], 12);
    assert_int_equal(t.strides[1], 4);
    assert_int_equal(t.strides[2], 1);
    assert_int_equal(tb_tensor_numel(&t), 24);
    assert_int_equal(tb_tensor_nbytes(&t), 24 * 8);
    assert_true(tb_tensor_is_contiguous(&t));
    for (int i = 0; i < 24; i++)
        tb_tensor_set(&t, i, i);
    assert_int_equal(tb_tensor_transpose_view(&t, 1, 2, &v), 0);
    assert_false(v.owns);
    assert_false(tb_tensor_is_contiguous(&v));
    assert_int_equal(v.shape[1], 4);
    assert_int_equal(v.shape[2], 3);
    /* v[0][1][2] == t[0][2][1] == 2*4 + 1 */
    assert_true(tb_tensor_get(&v, 0 * 12 + 1 * 3 + 2) == 9.0);
    tb_tensor_destroy(&v); /* a view frees nothing */
    assert_true(tb_tensor_get(&t, 23) == 23.0);
    assert_int_equal(tb_tensor_transpose_view(&t, 0, 3, &v), TB_EPARAM);
    tb_tensor_destroy(&t);
    tb_tensor_destroy(NULL);

    tb_shape bad = {2, {4, 0}};
    assert_int_equal(tb_tensor_create(&t, TB_F32, &bad), TB_ESHAPE);
    tb_shape neg = {1, {-3}};
    assert_int_equal(tb_tensor_create(&t, TB_F32, &neg), TB_ESHAPE);
    tb_shape huge = {2, {INT64_C(1) << 40, INT64_C(1) << 40}};
    assert_int_equal(tb_tensor_create(&t, TB_F32, &huge), TB_ESHAPE);
}

static void test_dtype_and_shape_text(void **state)
{
    (void)state;
    tb_dtype d;
    char buf[64];
    assert_int_equal(tb_dtype_parse("f64", &d), 0);
    assert_int_equal(d, TB_F64);
    assert_int_equal(tb_dtype_parse("float", &d), TB_EDTYPE);
    assert_string_equal(tb_dtype_name(TB_F32), "f32");
    assert_null(tb_dtype_name(TB_DTYPE_COUNT));
    tb_shape s = {3, {256, 1, 7}};
    assert_string_equal(tb_shape_format(&s, buf, sizeof buf), "256x1x7");
    tb_shape sc = {0, {0}};
    assert_string_equal(tb_shape_format(&sc, buf, sizeof buf), "scalar");
    assert_string_equal(tb_strerror(TB_ESHAPE), "invalid shape");
    assert_string_equal(tb_strerror(12345), "unknown error");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_and_alignment),
        cmocka_unit_test(test_large_aligned),
        cmocka_unit_test(test_large_reused),
        cmocka_unit_test(test_peak),
        cmocka_unit_test(test_huge_fails),
        cmocka_unit_test(test_fault_injection),
        cmocka_unit_test(test_threads_sum),
        cmocka_unit_test(test_tensor_create_and_view),
        cmocka_unit_test(test_dtype_and_shape_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
