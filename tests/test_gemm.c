/* Tests for the native GEMM (src/backends/cpu/gemm/).
 *
 * Every ISA level this machine runs (scalar, avx2, avx512; TBENCH_ISA
 * lowers the ceiling) x f32 and f64 x 1 and 2 threads, against a
 * reference computed in long double (64-bit mantissa) by a naive
 * triple loop:
 *
 *  1. tails_exact: small-integer inputs in [-8, 8], so every product and
 *     partial sum (|sum| <= 64 K < 2^24) is exact in f32 and f64: C must
 *     equal the reference bit for bit.  Any missing, doubled or misplaced
 *     term fails.  Shapes: M, N, K drawn from {1, 2, 3, 7, 15, 16, 17, 31,
 *     33, 64, 65, 127, 129, 255, 257} so that each dimension takes every
 *     value (three Latin-square passes) plus the corners, with the work
 *     split forced on at 2 threads (tb_gemm_set_par_min_macs(0)) so that
 *     thread slices end in tails as well.
 *  2. tails_bound: uniform inputs in [-1, 1] (values of the f32 grid, so
 *     one reference serves both precisions); elementwise
 *         |C - ref| <= c * K * u * (|A| |B|)[i][j],   c = 2,
 *     u the unit roundoff of the dtype (2^-24, 2^-53): twice the classic
 *     gamma_K bound for any summation order, with or without FMA.
 *  3. large_strided: 512 x 384 x 700 with lda/ldb/ldc wider than the rows
 *     and A, B, C one element off 64-byte alignment; exact inputs at
 *     every level, the bound at the best level.
 *     row_blocks: row counts around the AVX-512 row block, exact.
 *  4. projection: BLIS-style O(n^2) check of a big product (1031 x 1029 x
 *     1027): y = C v against x = A (B v) in long double, with
 *     |y - x|_i <= c * K * u * (|A| (|B| |v|))_i, c = 2.
 *
 * Every C sits in a buffer whose bytes outside the M x N region (a guard
 * before, the row gaps when ldc > N, a guard after) hold a canary that
 * must survive; C's region starts as NaN (C is overwritten, never read);
 * A and B (canaries included) must come back unchanged.  Also: the
 * result is bitwise independent of the thread count and of a caller's
 * parallel-for, K = 0 zeroes C, empty shapes touch nothing, bad
 * arguments and ISA levels are refused with C untouched, one counted
 * allocation by the first call (the thread's cached scratch, kept) and
 * none by the next, TB_ENOMEM under fault injection.
 *  5. epilogue: tb_gemm_*_ep (bias, relu, both) bit for bit the plain
 *     GEMM followed by the epilogue written out here, special bias values
 *     (-0, NaN, inf) included; a bias overlapping C is refused.
 *     edge_kernels: the AVX-512 partial-tile kernels bit for bit the
 *     full kernel's corner, nothing outside it touched.
 *  6. scratch: GEMMs of growing then shrinking sizes reusing the
 *     thread's cached packing buffer, exact, with the guard after it
 *     intact, on three threads at once; a nested request gets a block of
 *     its own.
 *
 * Inputs come from a seeded generator (seed printed at start).
 * Run one area with: test_gemm --filter 'tails*'. */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

#include "backends/cpu/cpu_config.h"
#include "backends/cpu/gemm/gemm.h"
#include "backends/cpu/gemm/gemm_kernels.h"
#include "backends/cpu/isa.h"
#include "ops/alloc.h"
#include "base/error.h"

#define SEED UINT64_C(0x5eed0f9e11a2c3d4)
#define CANARY 0xA5
#define GUARD 64 /* bytes of canary before and after each matrix */
#define C_FACTOR 2.0

/* ---- fixtures ------------------------------------------------------------ */

static int max_isa; /* highest level to test: tb_cpu_isa_max() */

static int setup(void **state)
{
    (void)state;
    leak_mark();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tb_gemm_set_par_min_macs(TB_GEMM_PAR_MIN_MACS);
    tb_alloc_fail_after(-1);
    tb_gemm_scratch_release(); /* the main thread's cached block */
    return leak_check();
}

/* ---- helpers ------------------------------------------------------------- */

static uint64_t rng_state = SEED;

static uint64_t rng_next(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Input value: an integer in [-8, 8] (exact) or a float in [-1, 1]. */
static double rng_value(bool exact)
{
    if (exact)
        return (double)(int)(rng_next() % 17) - 8.0;
    double u = (double)(rng_next() >> 11) * 0x1.0p-53;
    return (double)(float)(2.0 * u - 1.0);
}

/* A rows x cols matrix with row stride ld inside a canary-filled buffer,
 * its first element `off` elements past a 64-byte boundary. */
typedef struct mat {
    unsigned char *mem;
    size_t bytes;
    void *p;
    int64_t rows, cols, ld;
    size_t esz;
} mat;

static void mat_make(mat *m, int64_t rows, int64_t cols, int64_t ld,
                     size_t esz, int off)
{
    m->rows = rows;
    m->cols = cols;
    m->ld = ld;
    m->esz = esz;
    size_t elems = (size_t)(rows > 0 ? (rows - 1) * ld + cols : 0);
    m->bytes = GUARD + (size_t)off * esz + elems * esz + GUARD;
    m->bytes = (m->bytes + 63) & ~(size_t)63;
    m->mem = aligned_alloc(64, m->bytes);
    assert_non_null(m->mem);
    memset(m->mem, CANARY, m->bytes);
    m->p = m->mem + GUARD + (size_t)off * esz;
}

static void mat_free(mat *m)
{
    free(m->mem);
    m->mem = NULL;
}

static void mat_set(mat *m, int64_t i, int64_t j, double v)
{
    size_t e = (size_t)(i * m->ld + j);
    if (m->esz == 4)
        ((float *)m->p)[e] = (float)v;
    else
        ((double *)m->p)[e] = v;
}

static double mat_get(const mat *m, int64_t i, int64_t j)
{
    size_t e = (size_t)(i * m->ld + j);
    return m->esz == 4 ? (double)((const float *)m->p)[e]
                       : ((const double *)m->p)[e];
}

/* Every byte outside the rows x cols region still holds the canary? */
static bool mat_canary_ok(const mat *m)
{
    const unsigned char *base = m->p;
    size_t pos = 0, lim = (size_t)(base - m->mem);
    for (; pos < lim; pos++)
        if (m->mem[pos] != CANARY)
            return false;
    for (int64_t i = 0; i < m->rows; i++) {
        size_t row = lim + (size_t)(i * m->ld) * m->esz;
        for (; pos < row; pos++)
            if (m->mem[pos] != CANARY)
                return false;
        pos = row + (size_t)m->cols * m->esz;
    }
    for (; pos < m->bytes; pos++)
        if (m->mem[pos] != CANARY)
            return false;
    return true;
}

/* Fill C's region with NaN (canaries stay). */
static void mat_poison(mat *m)
{
    for (int64_t i = 0; i < m->rows; i++)
        for (int64_t j = 0; j < m->cols; j++)
            mat_set(m, i, j, NAN);
}

/* A problem: values (exact doubles of the f32 grid), the long double
 * reference and the bound matrix |A| |B|. */
typedef struct problem {
    int64_t M, N, K;
    bool exact;
    double *a, *b;          /* M x K, K x N, dense */
    long double *ref;       /* M x N */
    double *absab;          /* M x N */
} problem;

static void problem_make(problem *p, int64_t M, int64_t N, int64_t K,
                         bool exact)
{
    p->M = M;
    p->N = N;
    p->K = K;
    p->exact = exact;
    p->a = malloc(sizeof(double) * (size_t)(M * K + 1));
    p->b = malloc(sizeof(double) * (size_t)(K * N + 1));
    p->ref = malloc(sizeof(long double) * (size_t)(M * N + 1));
    p->absab = malloc(sizeof(double) * (size_t)(M * N + 1));
    assert_true(p->a && p->b && p->ref && p->absab);
    for (int64_t i = 0; i < M * K; i++)
        p->a[i] = rng_value(exact);
    for (int64_t i = 0; i < K * N; i++)
        p->b[i] = rng_value(exact);
    /* i-k-j order: the rows of B stream through two row accumulators. */
    for (int64_t i = 0; i < M; i++) {
        long double *r = p->ref + i * N;
        double *s = p->absab + i * N;
        for (int64_t j = 0; j < N; j++) {
            r[j] = 0;
            s[j] = 0;
        }
        for (int64_t k = 0; k < K; k++) {
            const long double aik = p->a[i * K + k];
            const double aabs = fabs(p->a[i * K + k]);
            const double *bk = p->b + k * N;
            for (int64_t j = 0; j < N; j++) {
                r[j] += aik * (long double)bk[j];
                s[j] += aabs * fabs(bk[j]);
            }
        }
    }
}

static void problem_free(problem *p)
{
    free(p->a);
    free(p->b);
    free(p->ref);
    free(p->absab);
}

/* Layout of one run: extra columns of leading dimension and misalignment
 * in elements. */
typedef struct layout {
    int pad_a, pad_b, pad_c;
    int off_a, off_b, off_c;
} layout;

static int gemm_call(int isa, bool f64, const problem *p, const mat *A,
                     const mat *B, mat *C, int threads,
                     const tb_gemm_parallel *par)
{
    if (f64)
        return tb_gemm_f64_ex(isa, p->M, p->N, p->K, A->p, A->ld, B->p,
                              B->ld, C->p, C->ld, threads, par);
    return tb_gemm_f32_ex(isa, p->M, p->N, p->K, A->p, A->ld, B->p, B->ld,
                          C->p, C->ld, threads, par);
}

/* Check C against the problem's reference; prints the first bad element
 * with the run's description and returns false on any mismatch. */
static bool check_result(const problem *p, const mat *C, bool f64,
                         const char *what)
{
    const double u = f64 ? DBL_EPSILON / 2 : FLT_EPSILON / 2;
    for (int64_t i = 0; i < p->M; i++)
        for (int64_t j = 0; j < p->N; j++) {
            const double got = mat_get(C, i, j);
            const long double want = p->ref[i * p->N + j];
            const double bound =
                C_FACTOR * (double)p->K * u * p->absab[i * p->N + j];
            const bool ok = p->exact
                                ? (long double)got == want
                                : fabsl((long double)got - want) <= bound;
            if (!ok) {
                print_error("%s: C[%lld][%lld] = %.17g, reference %.17Lg, "
                            "allowed error %.3g\n",
                            what, (long long)i, (long long)j, got, want,
                            p->exact ? 0.0 : bound);
                return false;
            }
        }
    return true;
}

/* Run problem p at ISA levels [isa_lo, max_isa], both dtypes and threads
 * 1 and 2 with layout lo; fails the test on the first bad run. */
static void run_problem_from(const problem *p, const layout *lo,
                             int isa_lo)
{
    for (int f = 0; f < 2; f++) {
        const bool f64 = f == 1;
        const size_t esz = f64 ? 8 : 4;
        mat A, B, C;
        mat_make(&A, p->M, p->K, p->K + lo->pad_a, esz, lo->off_a);
        mat_make(&B, p->K, p->N, p->N + lo->pad_b, esz, lo->off_b);
        mat_make(&C, p->M, p->N, p->N + lo->pad_c, esz, lo->off_c);
        for (int64_t i = 0; i < p->M; i++)
            for (int64_t k = 0; k < p->K; k++)
                mat_set(&A, i, k, p->a[i * p->K + k]);
        for (int64_t k = 0; k < p->K; k++)
            for (int64_t j = 0; j < p->N; j++)
                mat_set(&B, k, j, p->b[k * p->N + j]);
        unsigned char *a0 = malloc(A.bytes), *b0 = malloc(B.bytes);
        assert_true(a0 && b0);
        memcpy(a0, A.mem, A.bytes);
        memcpy(b0, B.mem, B.bytes);

        for (int isa = isa_lo; isa <= max_isa; isa++)
            for (int threads = 1; threads <= 2; threads++) {
                char what[160];
                snprintf(what, sizeof what,
                         "%s M=%lld N=%lld K=%lld %s threads=%d lda=%lld "
                         "ldb=%lld ldc=%lld off=%d/%d/%d %s",
                         tb_gemm_impl_name(isa, f64), (long long)p->M,
                         (long long)p->N, (long long)p->K,
                         f64 ? "f64" : "f32", threads, (long long)A.ld,
                         (long long)B.ld, (long long)C.ld, lo->off_a,
                         lo->off_b, lo->off_c,
                         p->exact ? "exact" : "bound");
                mat_poison(&C);
                int rc = gemm_call(isa, f64, p, &A, &B, &C, threads, NULL);
                if (rc)
                    print_error("%s: rc %d (%s)\n", what, rc,
                                tb_strerror(rc));
                assert_int_equal(rc, 0);
                if (!mat_canary_ok(&C)) {
                    print_error("%s: write outside C's M x N region\n",
                                what);
                    fail();
                }
                if (memcmp(a0, A.mem, A.bytes) || memcmp(b0, B.mem, B.bytes)) {
                    print_error("%s: A or B modified\n", what);
                    fail();
                }
                if (!check_result(p, &C, f64, what))
                    fail();
            }
        free(a0);
        free(b0);
        mat_free(&A);
        mat_free(&B);
        mat_free(&C);
    }
}

static void run_problem(const problem *p, const layout *lo)
{
    run_problem_from(p, lo, 0);
}

static const int64_t dims[] = {1,  2,  3,  7,   15,  16,  17, 31,
                               33, 64, 65, 127, 129, 255, 257};
#define NDIMS (int)(sizeof dims / sizeof *dims)

/* The tail sweep: three Latin-square passes (each dimension takes every
 * value of dims once per pass) plus corners; layouts rotate through
 * padding and misalignment. */
static void tails(bool exact)
{
    static const int mult[3][2] = {{1, 2}, {4, 7}, {11, 13}};
    static const layout los[4] = {
        {0, 0, 0, 0, 0, 0},
        {3, 0, 5, 1, 0, 1},
        {0, 17, 0, 0, 1, 1},
        {1, 1, 1, 1, 1, 0},
    };
    /* Split every shape at 2 threads, so slices end in tails too. */
    tb_gemm_set_par_min_macs(0);
    int n = 0;
    for (int pass = 0; pass < 3; pass++)
        for (int t = 0; t < NDIMS; t++, n++) {
            problem p;
            problem_make(&p, dims[t], dims[(t * mult[pass][0] + 3) % NDIMS],
                         dims[(t * mult[pass][1] + 5) % NDIMS], exact);
            run_problem(&p, &los[n % 4]);
            problem_free(&p);
        }
    static const int64_t corners[][3] = {
        {1, 1, 1},     {1, 257, 1},  {257, 1, 1},  {1, 1, 257},
        {257, 257, 1}, {13, 33, 900}, {255, 257, 129}, {12, 32, 16},
        {24, 64, 5},   {96, 80, 3},
    };
    for (size_t c = 0; c < sizeof corners / sizeof *corners; c++, n++) {
        problem p;
        problem_make(&p, corners[c][0], corners[c][1], corners[c][2], exact);
        run_problem(&p, &los[n % 4]);
        problem_free(&p);
    }
}

/* ---- tests --------------------------------------------------------------- */

static void test_tails_exact(void **state)
{
    (void)state;
    tails(true);
}

static void test_tails_bound(void **state)
{
    (void)state;
    tails(false);
}

static void test_large_strided(void **state)
{
    (void)state;
    /* Exact inputs at every level; the error bound (also covered at
     * every level by tails_bound) at the best one, to keep the
     * sanitizer build's run short. */
    static const layout lo = {5, 3, 7, 1, 1, 1};
    for (int e = 0; e < 2; e++) {
        problem p;
        problem_make(&p, 512, 384, 700, e == 0);
        run_problem_from(&p, &lo, e == 0 ? 0 : max_isa);
        problem_free(&p);
    }
}

/* Row counts around the AVX-512 f32 row block (mc = 396; a part's rows
 * are cut into even blocks of whole micro-panels, gemm_block_), with
 * several depth passes (K = 400: kc = 134, two sub-blocks then one) and
 * an N tail, exact inputs at every level: catches a row block that skips
 * or repeats rows, and any C prefetch that went astray (a canary). */
static void test_row_blocks(void **state)
{
    (void)state;
    static const int64_t shapes[][3] = {
        {396, 33, 400}, {397, 33, 400}, {793, 47, 391}, {1189, 17, 200},
    };
    static const layout los[2] = {{0, 0, 0, 0, 0, 0}, {3, 0, 5, 1, 0, 1}};
    for (size_t c = 0; c < sizeof shapes / sizeof *shapes; c++) {
        problem p;
        problem_make(&p, shapes[c][0], shapes[c][1], shapes[c][2], true);
        run_problem(&p, &los[c % 2]);
        problem_free(&p);
    }
}

/* y = C v versus x = A (B v), all in long double, at the best level. */
static void test_projection(void **state)
{
    (void)state;
    const int64_t M = 1031, N = 1029, K = 1027;
    problem p = {.M = M, .N = N, .K = K};
    p.a = malloc(sizeof(double) * (size_t)(M * K));
    p.b = malloc(sizeof(double) * (size_t)(K * N));
    long double *v = malloc(sizeof(long double) * (size_t)N);
    long double *bv = malloc(sizeof(long double) * (size_t)K);
    double *babsv = malloc(sizeof(double) * (size_t)K);
    assert_true(p.a && p.b && v && bv && babsv);
    for (int64_t i = 0; i < M * K; i++)
        p.a[i] = rng_value(false);
    for (int64_t i = 0; i < K * N; i++)
        p.b[i] = rng_value(false);
    for (int64_t j = 0; j < N; j++)
        v[j] = rng_value(false);
    for (int64_t k = 0; k < K; k++) {
        long double s = 0;
        double sa = 0;
        for (int64_t j = 0; j < N; j++) {
            s += (long double)p.b[k * N + j] * v[j];
            sa += fabs(p.b[k * N + j]) * fabs((double)v[j]);
        }
        bv[k] = s;
        babsv[k] = sa;
    }
    for (int f = 0; f < 2; f++) {
        const bool f64 = f == 1;
        const size_t esz = f64 ? 8 : 4;
        const double u = f64 ? DBL_EPSILON / 2 : FLT_EPSILON / 2;
        mat A, B, C;
        mat_make(&A, M, K, K, esz, 1);
        mat_make(&B, K, N, N, esz, 0);
        mat_make(&C, M, N, N + 3, esz, 1);
        for (int64_t i = 0; i < M * K; i++)
            mat_set(&A, i / K, i % K, p.a[i]);
        for (int64_t i = 0; i < K * N; i++)
            mat_set(&B, i / N, i % N, p.b[i]);
        for (int threads = 1; threads <= 2; threads++) {
            mat_poison(&C);
            assert_int_equal(gemm_call(max_isa, f64, &p, &A, &B, &C,
                                       threads, NULL),
                             0);
            assert_true(mat_canary_ok(&C));
            for (int64_t i = 0; i < M; i++) {
                long double y = 0, x = 0;
                double bound = 0;
                for (int64_t j = 0; j < N; j++)
                    y += (long double)mat_get(&C, i, j) * v[j];
                for (int64_t k = 0; k < K; k++) {
                    x += (long double)p.a[i * K + k] * bv[k];
                    bound += fabs(p.a[i * K + k]) * babsv[k];
                }
                bound *= C_FACTOR * (double)K * u;
                if (!(fabsl(y - x) <= bound)) {
                    print_error("%s threads=%d: (C v)[%lld] = %.17Lg, "
                                "(A (B v))[%lld] = %.17Lg, allowed %.3g\n",
                                tb_gemm_impl_name(max_isa, f64), threads,
                                (long long)i, y, (long long)i, x, bound);
                    fail();
                }
            }
        }
        mat_free(&A);
        mat_free(&B);
        mat_free(&C);
    }
    free(p.a);
    free(p.b);
    free(v);
    free(bv);
    free(babsv);
}

/* A caller's parallel-for that runs `used` parts one after another on
 * the calling thread, recording what it was asked. */
typedef struct seq_pool {
    int used_max; /* parts it agrees to run (0: all n) */
    int calls, last_n;
} seq_pool;

static void seq_run(void *ctx, int n, tb_gemm_task_fn fn, void *arg)
{
    seq_pool *sp = ctx;
    sp->calls++;
    sp->last_n = n;
    int used = sp->used_max > 0 && sp->used_max < n ? sp->used_max : n;
    for (int part = used - 1; part >= 0; part--)
        fn(arg, part, used);
}

/* Bitwise equality of C across thread counts, splits over M and over N,
 * and a caller's parallel-for that runs fewer parts than asked. */
static void test_threads_invariant(void **state)
{
    (void)state;
    static const int64_t shapes[][3] = {
        {400, 100, 300}, /* split over M */
        {20, 1500, 300}, /* split over N */
        {97, 101, 1003}, /* several depth blocks */
    };
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        problem p;
        problem_make(&p, shapes[s][0], shapes[s][1], shapes[s][2], false);
        static const layout lo = {0, 0, 0, 0, 0, 0};
        for (int f = 0; f < 2; f++) {
            const bool f64 = f == 1;
            const size_t esz = f64 ? 8 : 4;
            mat A, B, C1, Cn;
            mat_make(&A, p.M, p.K, p.K + lo.pad_a, esz, 0);
            mat_make(&B, p.K, p.N, p.N, esz, 0);
            mat_make(&C1, p.M, p.N, p.N, esz, 0);
            mat_make(&Cn, p.M, p.N, p.N, esz, 0);
            for (int64_t i = 0; i < p.M * p.K; i++)
                mat_set(&A, i / p.K, i % p.K, p.a[i]);
            for (int64_t i = 0; i < p.K * p.N; i++)
                mat_set(&B, i / p.N, i % p.N, p.b[i]);
            for (int isa = 0; isa <= max_isa; isa++) {
                mat_poison(&C1);
                assert_int_equal(gemm_call(isa, f64, &p, &A, &B, &C1, 1,
                                           NULL),
                                 0);
                assert_true(check_result(&p, &C1, f64, "threads=1"));
                const size_t cb = C1.bytes;
                for (int t = 2; t <= 3; t++) {
                    mat_poison(&Cn);
                    assert_int_equal(gemm_call(isa, f64, &p, &A, &B, &Cn,
                                               t, NULL),
                                     0);
                    if (memcmp(C1.mem, Cn.mem, cb)) {
                        print_error("%s %lldx%lldx%lld: threads=%d differs "
                                    "from threads=1\n",
                                    tb_gemm_impl_name(isa, f64),
                                    (long long)p.M, (long long)p.N,
                                    (long long)p.K, t);
                        fail();
                    }
                }
                for (int used = 0; used <= 2; used++) {
                    seq_pool sp = {.used_max = used};
                    tb_gemm_parallel par = {seq_run, &sp};
                    mat_poison(&Cn);
                    assert_int_equal(gemm_call(isa, f64, &p, &A, &B, &Cn, 3,
                                               &par),
                                     0);
                    assert_int_equal(sp.calls, 1);
                    assert_int_equal(sp.last_n, 3);
                    if (memcmp(C1.mem, Cn.mem, cb)) {
                        print_error("%s: caller's parallel-for (%d of 3 "
                                    "parts) differs from threads=1\n",
                                    tb_gemm_impl_name(isa, f64), used);
                        fail();
                    }
                }
            }
            mat_free(&A);
            mat_free(&B);
            mat_free(&C1);
            mat_free(&Cn);
        }
        problem_free(&p);
    }
}

/* ---- fused epilogue (tb_gemm_*_ep) ------------------------------------ */

/* Bias values: uniform in [-1, 1], or (specials) a mix that exercises
 * the relu's edges: -0 and +0 (an exact zero sum plus -0 must come out
 * +0), NaN (kept), +-inf, tiny and the integers the exact inputs make. */
static double bias_value(bool specials)
{
    static const double sp[] = {-0.0, 0.0, NAN, INFINITY, -INFINITY,
                                1e-40, -1e-40, 3.0, -3.0, 0.5};
    if (specials && (rng_next() & 3) == 0)
        return sp[rng_next() % (sizeof sp / sizeof sp[0])];
    return rng_value(false);
}

/* The epilogue in the test's own words: the element rounded to the
 * dtype after the add, then x > 0 or NaN ? x : +0. */
static double epi_want(double c, double b, bool has_bias, bool relu,
                       bool f64)
{
    double v = c;
    if (has_bias)
        v = f64 ? c + b : (double)(float)(c + b);
    if (relu)
        v = isnan(v) ? v : (v > 0 ? v : 0.0);
    return v;
}

/* Bitwise equal, or both NaN. */
static bool same_bits(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return a == b && signbit(a) == signbit(b);
}

static int gemm_ep_call(int isa, bool f64, const problem *p, const mat *A,
                        const mat *B, mat *C, int threads, const void *bias,
                        int relu)
{
    if (f64)
        return tb_gemm_f64_ep(isa, p->M, p->N, p->K, A->p, A->ld, B->p,
                              B->ld, C->p, C->ld, threads, NULL, bias,
                              relu);
    return tb_gemm_f32_ep(isa, p->M, p->N, p->K, A->p, A->ld, B->p, B->ld,
                          C->p, C->ld, threads, NULL, bias, relu);
}

/* tb_gemm_*_ep at every level, both dtypes, threads 1 and 2 (split
 * forced on), bias and relu each on and off: C must equal, bit for bit,
 * the plain GEMM of the same call (itself checked against the long
 * double reference here and in the tests above) followed by the
 * epilogue computed here; canaries around C (wider ldc, misaligned)
 * intact, bias unchanged.  Shapes: tails of every tile, several depth
 * blocks (the epilogue must follow the last one only), splits over M and
 * over N.  Exact inputs make many sums exactly 0 for the -0 / +0 cases;
 * K = 0 puts the epilogue on zeros. */
static void test_epilogue(void **state)
{
    (void)state;
    static const int64_t shapes[][3] = {
        {1, 1, 1},    {7, 13, 5},    {13, 37, 129}, {25, 65, 3},
        {97, 101, 1003}, {400, 100, 300}, {20, 1500, 300}, {5, 33, 0},
    };
    tb_gemm_set_par_min_macs(0);
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int ex = 0; ex < 2; ex++) {
            problem p;
            problem_make(&p, shapes[s][0], shapes[s][1], shapes[s][2],
                         ex == 1);
            for (int f = 0; f < 2; f++) {
                const bool f64 = f == 1;
                const size_t esz = f64 ? 8 : 4;
                mat A, B, C0, C, Bias;
                mat_make(&A, p.M, p.K > 0 ? p.K : 1, p.K > 0 ? p.K : 1,
                         esz, 1);
                mat_make(&B, p.K > 0 ? p.K : 1, p.N, p.N, esz, 0);
                mat_make(&C0, p.M, p.N, p.N + 3, esz, 1);
                mat_make(&C, p.M, p.N, p.N + 3, esz, 1);
                mat_make(&Bias, 1, p.N, p.N, esz, 1);
                for (int64_t i = 0; i < p.M * p.K; i++)
                    mat_set(&A, i / p.K, i % p.K, p.a[i]);
                for (int64_t i = 0; i < p.K * p.N; i++)
                    mat_set(&B, i / p.N, i % p.N, p.b[i]);
                for (int64_t j = 0; j < p.N; j++)
                    mat_set(&Bias, 0, j, bias_value(true));
                unsigned char *bias0 = malloc(Bias.bytes);
                assert_non_null(bias0);
                memcpy(bias0, Bias.mem, Bias.bytes);
                for (int isa = 0; isa <= max_isa; isa++)
                    for (int threads = 1; threads <= 2; threads++)
                        for (int mode = 1; mode < 4; mode++) {
                            const bool hb = mode & 1, relu = mode & 2;
                            char what[160];
                            snprintf(what, sizeof what,
                                     "%s %lldx%lldx%lld %s threads=%d "
                                     "bias=%d relu=%d",
                                     tb_gemm_impl_name(isa, f64),
                                     (long long)p.M, (long long)p.N,
                                     (long long)p.K, ex ? "exact" : "bound",
                                     threads, hb, relu);
                            mat_poison(&C0);
                            mat_poison(&C);
                            assert_int_equal(gemm_call(isa, f64, &p, &A, &B,
                                                       &C0, threads, NULL),
                                             0);
                            if (!check_result(&p, &C0, f64, what))
                                fail();
                            int rc = gemm_ep_call(isa, f64, &p, &A, &B, &C,
                                                  threads,
                                                  hb ? Bias.p : NULL, relu);
                            if (rc)
                                print_error("%s: rc %d\n", what, rc);
                            assert_int_equal(rc, 0);
                            for (int64_t i = 0; i < p.M; i++)
                                for (int64_t j = 0; j < p.N; j++) {
                                    double want = epi_want(
                                        mat_get(&C0, i, j),
                                        mat_get(&Bias, 0, j), hb, relu,
                                        f64);
                                    double got = mat_get(&C, i, j);
                                    if (!same_bits(got, want)) {
                                        print_error(
                                            "%s: C[%lld][%lld] = %.17g, "
                                            "want %.17g\n",
                                            what, (long long)i,
                                            (long long)j, got, want);
                                        fail();
                                    }
                                }
                            if (!mat_canary_ok(&C) ||
                                memcmp(bias0, Bias.mem, Bias.bytes)) {
                                print_error("%s: canary or bias changed\n",
                                            what);
                                fail();
                            }
                        }
                free(bias0);
                mat_free(&A);
                mat_free(&B);
                mat_free(&C0);
                mat_free(&C);
                mat_free(&Bias);
            }
            problem_free(&p);
        }
}

/* The SIMD epilogue functions called directly (a GEMM never hands them
 * -0, so through tb_gemm_*_ep the -0 -> +0 rule cannot be seen): every
 * bias / relu mode, widths 0..40 (full vectors and masked tails), C
 * values with -0, NaN, inf, tiny; bitwise against epi_want; the element
 * after each row (inside ldc) untouched. */
static void test_epilogue_kernels(void **state)
{
    (void)state;
    typedef void (*epi32)(float *, int64_t, int64_t, int64_t,
                          const float *, int);
    typedef void (*epi64)(double *, int64_t, int64_t, int64_t,
                          const double *, int);
    epi32 f32s[2] = {NULL, NULL};
    epi64 f64s[2] = {NULL, NULL};
#if TB_CPU_HAVE_AVX2
    if (max_isa >= TB_ISA_AVX2) {
        f32s[0] = tb_gemm_epi_f32_avx2;
        f64s[0] = tb_gemm_epi_f64_avx2;
    }
#endif
#if TB_CPU_HAVE_AVX512
    if (max_isa >= TB_ISA_AVX512) {
        f32s[1] = tb_gemm_epi_f32_avx512;
        f64s[1] = tb_gemm_epi_f64_avx512;
    }
#endif
    enum { ROWS = 3, LD = 48 };
    float c32[ROWS * LD], b32[LD];
    double c64[ROWS * LD], b64[LD], keep[ROWS * LD];
    for (int lv = 0; lv < 2; lv++)
        for (int64_t n = 0; n <= 40; n++)
            for (int mode = 1; mode < 4; mode++) {
                const bool hb = mode & 1, relu = mode & 2;
                for (int f = 0; f < 2; f++) {
                    if (f == 0 ? !f32s[lv] : !f64s[lv])
                        continue;
                    for (int i = 0; i < ROWS * LD; i++) {
                        keep[i] = bias_value(true);
                        if ((rng_next() & 7) == 0)
                            keep[i] = -0.0;
                        c32[i] = (float)keep[i];
                        c64[i] = keep[i];
                    }
                    for (int q = 0; q < LD; q++) {
                        b64[q] = bias_value(true);
                        b32[q] = (float)b64[q];
                    }
                    if (f == 0)
                        f32s[lv](c32, LD, ROWS, n, hb ? b32 : NULL, relu);
                    else
                        f64s[lv](c64, LD, ROWS, n, hb ? b64 : NULL, relu);
                    for (int i = 0; i < ROWS; i++)
                        for (int q = 0; q < LD; q++) {
                            const int e = i * LD + q;
                            double got = f == 0 ? (double)c32[e] : c64[e];
                            double in = f == 0 ? (double)(float)keep[e]
                                               : keep[e];
                            double b = f == 0 ? (double)b32[q] : b64[q];
                            double want = q < n ? epi_want(in, b, hb, relu,
                                                           f == 1)
                                                : in;
                            if (!same_bits(got, want)) {
                                print_error("epilogue %s f%d n=%lld "
                                            "bias=%d relu=%d [%d][%d]: "
                                            "got %g want %g\n",
                                            lv ? "avx512" : "avx2",
                                            f ? 64 : 32, (long long)n, hb,
                                            relu, i, q, got, want);
                                fail();
                            }
                        }
                }
            }
}

/* The AVX-512 edge kernels (tb_gemm_edge_*) called directly: every m in
 * 1..MR and n in 1..NR, kc 1, 3 and 37, overwrite and accumulate, on
 * panels whose padding (A rows past m, B columns past n) holds NaN: the
 * m x n block must be bit for bit what the full kernel leaves there (its
 * tile computed into a scratch tile with the same starting C), every
 * other element of C (row stride ld > n, the rows below) untouched.
 * Twice: B as a packed panel (rows NR apart) and read in place (rows
 * LDB apart, NaN past column n: the small-M path of gemm_impl.inc). */
static void test_edge_kernels(void **state)
{
    (void)state;
#if TB_CPU_HAVE_AVX512
    if (max_isa < TB_ISA_AVX512) {
        skip();
        return;
    }
    enum { KMAX = 37, MR = 12, LD = 40, ROWS = 14, LDB = 37 };
    static const int64_t kcs[] = {1, 3, KMAX};
    for (int f = 0; f < 2; f++)
    for (int ip = 0; ip < 2; ip++) {
        const int nr = f ? TB_GEMM_AVX512_F64_NR : TB_GEMM_AVX512_F32_NR;
        for (int ki = 0; ki < 3; ki++)
            for (int m = 1; m <= MR; m++)
                for (int n = 1; n <= nr; n++)
                    for (int acc = 0; acc < 2; acc++) {
                        const int64_t kc = kcs[ki];
                        _Alignas(64) double a64[KMAX * MR], b64[KMAX * 32];
                        _Alignas(64) float a32[KMAX * MR], b32[KMAX * 32];
                        double s64[KMAX * LDB];
                        float s32[KMAX * LDB];
                        const int64_t ldb = ip ? LDB : nr;
                        double c0[ROWS * LD];
                        for (int64_t k = 0; k < kc; k++) {
                            for (int r = 0; r < MR; r++) {
                                double v = r < m ? rng_value(false) : NAN;
                                a64[k * MR + r] = v;
                                a32[k * MR + r] = (float)v;
                            }
                            for (int q = 0; q < nr; q++) {
                                double v = q < n ? rng_value(false) : NAN;
                                b64[k * nr + q] = v;
                                b32[k * nr + q] = (float)v;
                            }
                            for (int q = 0; q < LDB; q++) {
                                double v = q < n ? b64[k * nr + q] : NAN;
                                s64[k * LDB + q] = v;
                                s32[k * LDB + q] = (float)v;
                            }
                        }
                        for (int i = 0; i < ROWS * LD; i++)
                            c0[i] = rng_value(false);
                        double got[ROWS * LD], full[MR * 32];
                        if (f) {
                            double c[ROWS * LD], t[MR * 32];
                            memcpy(c, c0, sizeof c);
                            for (int r = 0; r < MR; r++)
                                for (int q = 0; q < nr; q++)
                                    t[r * nr + q] = c0[r * LD + q];
                            tb_gemm_ukr_f64_avx512_12x16(kc, a64, b64, t,
                                                         nr, acc);
                            tb_gemm_edge_f64_avx512_12x16(
                                m, n, kc, a64, ip ? s64 : b64, ldb, c, LD,
                                acc);
                            memcpy(got, c, sizeof c);
                            memcpy(full, t, sizeof t);
                        } else {
                            float c[ROWS * LD], t[MR * 32];
                            for (int i = 0; i < ROWS * LD; i++)
                                c[i] = (float)c0[i];
                            for (int r = 0; r < MR; r++)
                                for (int q = 0; q < nr; q++)
                                    t[r * nr + q] = (float)c0[r * LD + q];
                            tb_gemm_ukr_f32_avx512_12x32(kc, a32, b32, t,
                                                         nr, acc);
                            tb_gemm_edge_f32_avx512_12x32(
                                m, n, kc, a32, ip ? s32 : b32, ldb, c, LD,
                                acc);
                            for (int i = 0; i < ROWS * LD; i++)
                                got[i] = c[i];
                            for (int i = 0; i < MR * 32; i++)
                                full[i] = t[i];
                        }
                        for (int i = 0; i < ROWS; i++)
                            for (int q = 0; q < LD; q++) {
                                const bool in = i < m && q < n;
                                double want = in ? full[i * nr + q]
                                                 : f ? c0[i * LD + q]
                                                     : (double)(float)
                                                           c0[i * LD + q];
                                if (!same_bits(got[i * LD + q], want)) {
                                    print_error(
                                        "edge f%d %s m=%d n=%d kc=%lld "
                                        "acc=%d [%d][%d]: got %g want %g\n",
                                        f ? 64 : 32, ip ? "in place" : "packed",
                                        m, n, (long long)kc, acc, i, q,
                                        got[i * LD + q], want);
                                    fail();
                                }
                            }
                    }
    }
#else
    skip();
#endif
}

/* A bias that overlaps C is refused (TB_EINVAL), C untouched; a bias
 * that overlaps A or B (read-only both) is fine. */
static void test_epilogue_overlap(void **state)
{
    (void)state;
    float a[16], b[16], c[16];
    for (int isa = 0; isa <= max_isa; isa++) {
        for (int i = 0; i < 16; i++)
            a[i] = b[i] = 1, c[i] = -7;
        assert_int_equal(tb_gemm_f32_ep(isa, 4, 4, 4, a, 4, b, 4, c, 4, 1,
                                        NULL, c + 12, 1),
                         TB_EINVAL);
        for (int i = 0; i < 16; i++)
            assert_true(c[i] == -7);
        assert_int_equal(tb_gemm_f32_ep(isa, 4, 4, 4, a, 4, b, 4, c, 4, 1,
                                        NULL, a, 1),
                         0);
        for (int i = 0; i < 16; i++)
            assert_true(c[i] == 5); /* 4 products of 1, plus bias 1 */
    }
}

/* Small calls stay on one thread: the parallel-for is not called. */
static void test_small_single_part(void **state)
{
    (void)state;
    float a[4 * 8], b[8 * 4], c[4 * 4];
    for (int i = 0; i < 32; i++) {
        a[i] = (float)(i % 5) - 2;
        b[i] = (float)(i % 3) - 1;
    }
    seq_pool sp = {0};
    tb_gemm_parallel par = {seq_run, &sp};
    assert_int_equal(tb_gemm_f32_ex(max_isa, 4, 4, 8, a, 8, b, 4, c, 4, 2,
                                    &par),
                     0);
    assert_int_equal(sp.calls, 0);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            float want = 0;
            for (int k = 0; k < 8; k++)
                want += a[i * 8 + k] * b[k * 4 + j];
            assert_true(c[i * 4 + j] == want);
        }
}

/* K = 0 sets C to zero; M = 0 or N = 0 touch nothing (NULL pointers
 * allowed for empty matrices) and allocate nothing. */
static void test_empty(void **state)
{
    (void)state;
    for (int isa = 0; isa <= max_isa; isa++) {
        mat C;
        mat_make(&C, 5, 7, 9, 4, 1);
        mat_poison(&C);
        assert_int_equal(tb_gemm_f32(isa, 5, 7, 0, NULL, 0, NULL, 7, C.p, 9,
                                     2),
                         0);
        assert_true(mat_canary_ok(&C));
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 7; j++)
                assert_true(mat_get(&C, i, j) == 0.0 &&
                            !signbit(mat_get(&C, i, j)));
        mat_free(&C);

        mat_make(&C, 3, 4, 4, 8, 0);
        mat_poison(&C);
        double a[12] = {0}, b[12] = {0};
        tb_alloc_stats s0, s1;
        tb_alloc_stats_read(&s0);
        assert_int_equal(tb_gemm_f64(isa, 0, 4, 3, NULL, 3, b, 4, NULL, 4,
                                     1),
                         0);
        assert_int_equal(tb_gemm_f64(isa, 3, 0, 3, a, 3, NULL, 0, NULL, 0,
                                     1),
                         0);
        assert_int_equal(tb_gemm_f64(isa, 0, 0, 0, NULL, 0, NULL, 0, NULL,
                                     0, 1),
                         0);
        tb_alloc_stats_read(&s1);
        assert_int_equal(s1.allocs, s0.allocs);
        assert_true(mat_canary_ok(&C));
        assert_true(isnan(mat_get(&C, 0, 0)));
        mat_free(&C);
    }
}

/* Invalid arguments: TB_EINVAL and C untouched. */
static void test_bad_args(void **state)
{
    (void)state;
    float a[64], b[64], c[64];
    for (int i = 0; i < 64; i++)
        a[i] = b[i] = 1, c[i] = -7;
    const int isa = max_isa;
    /* M, N, K, lda, ldb, ldc, threads, null a/b/c */
    static const struct {
        int64_t M, N, K, lda, ldb, ldc;
        int threads, null_a, null_b, null_c;
    } bad[] = {
        {-1, 4, 4, 4, 4, 4, 1, 0, 0, 0}, /* negative sizes */
        {4, -1, 4, 4, 4, 4, 1, 0, 0, 0},
        {4, 4, -1, 4, 4, 4, 1, 0, 0, 0},
        {4, 4, 4, 3, 4, 4, 1, 0, 0, 0},  /* lda < K */
        {4, 4, 4, 4, 3, 4, 1, 0, 0, 0},  /* ldb < N */
        {4, 4, 4, 4, 4, 3, 1, 0, 0, 0},  /* ldc < N */
        {4, 4, 4, 4, 4, 4, 0, 0, 0, 0},  /* threads < 1 */
        {4, 4, 4, 4, 4, 4, 1, 1, 0, 0},  /* NULL A */
        {4, 4, 4, 4, 4, 4, 1, 0, 1, 0},  /* NULL B */
        {4, 4, 4, 4, 4, 4, 1, 0, 0, 1},  /* NULL C */
        {INT64_MAX / 2, 4, 4, INT64_MAX / 2, 4, 4, 1, 0, 0, 0}, /* span */
    };
    for (size_t t = 0; t < sizeof bad / sizeof *bad; t++) {
        int rc = tb_gemm_f32(isa, bad[t].M, bad[t].N, bad[t].K,
                             bad[t].null_a ? NULL : a, bad[t].lda,
                             bad[t].null_b ? NULL : b, bad[t].ldb,
                             bad[t].null_c ? NULL : c, bad[t].ldc,
                             bad[t].threads);
        if (rc != TB_EINVAL)
            print_error("bad-argument case %zu: rc %d\n", t, rc);
        assert_int_equal(rc, TB_EINVAL);
        for (int i = 0; i < 64; i++)
            assert_true(c[i] == -7);
    }
    /* C overlapping A or B. */
    assert_int_equal(tb_gemm_f32(isa, 4, 4, 4, a, 4, b, 4, a + 8, 4, 1),
                     TB_EINVAL);
    assert_int_equal(tb_gemm_f32(isa, 4, 4, 4, a, 4, b, 4, b + 15, 4, 1),
                     TB_EINVAL);
    double da[16] = {0}, db[16] = {0}, dc[16];
    assert_int_equal(tb_gemm_f64(isa, 4, 4, 4, da, 4, db, 4, da, 4, 1),
                     TB_EINVAL);
    assert_int_equal(tb_gemm_f64(isa, 4, 4, 4, da, 4, db, 2, dc, 4, 1),
                     TB_EINVAL);
}

/* Unknown levels and levels above the CPU's are refused. */
static void test_isa_levels(void **state)
{
    (void)state;
    float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4] = {9, 9, 9, 9};
    static const int bad[] = {-1, TB_ISA_COUNT, 99};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(tb_gemm_f32(bad[i], 2, 2, 2, a, 2, b, 2, c, 2, 1),
                         TB_EUNSUPPORTED);
        assert_null(tb_gemm_impl_name(bad[i], 0));
        assert_null(tb_gemm_impl_name(bad[i], 1));
    }
    for (int isa = tb_cpu_isa_detect() + 1; isa < TB_ISA_COUNT; isa++)
        assert_int_equal(tb_gemm_f32(isa, 2, 2, 2, a, 2, b, 2, c, 2, 1),
                         TB_EUNSUPPORTED);
    for (int i = 0; i < 4; i++)
        assert_true(c[i] == 9);
    for (int isa = 0; isa <= max_isa; isa++) {
        assert_int_equal(tb_gemm_f32(isa, 2, 2, 2, a, 2, b, 2, c, 2, 1), 0);
        assert_true(c[0] == 1 && c[1] == 2 && c[2] == 3 && c[3] == 4);
    }
}

/* Names carry the dtype, the level and the register tile; the
 * avx512bf16 level multiplies f32 and f64 with avx512's kernels. */
static void test_impl_names(void **state)
{
    (void)state;
    static const char *const want[2][TB_ISA_COUNT] = {
        {"gemm_f32_scalar_4x8", "gemm_f32_avx2_6x16",
         "gemm_f32_avx512_12x32", "gemm_f32_avx512_12x32"},
        {"gemm_f64_scalar_4x4", "gemm_f64_avx2_6x8",
         "gemm_f64_avx512_12x16", "gemm_f64_avx512_12x16"},
    };
    for (int f = 0; f < 2; f++)
        for (int isa = 0; isa <= max_isa; isa++) {
            const char *n = tb_gemm_impl_name(isa, f);
            assert_non_null(n);
            assert_string_equal(n, want[f][isa]);
        }
}

/* The packing buffer is the thread's cached scratch: one tracked
 * allocation by the first call, kept (live), none by the next call of
 * the size, freed by tb_gemm_scratch_release; TB_ENOMEM when it cannot
 * be allocated, with C untouched. */
static void test_allocations(void **state)
{
    (void)state;
    problem p;
    problem_make(&p, 300, 200, 100, true);
    mat A, B, C;
    mat_make(&A, p.M, p.K, p.K, 4, 0);
    mat_make(&B, p.K, p.N, p.N, 4, 0);
    mat_make(&C, p.M, p.N, p.N, 4, 0);
    for (int64_t i = 0; i < p.M * p.K; i++)
        mat_set(&A, i / p.K, i % p.K, p.a[i]);
    for (int64_t i = 0; i < p.K * p.N; i++)
        mat_set(&B, i / p.N, i % p.N, p.b[i]);
    for (int threads = 1; threads <= 2; threads++) {
        tb_alloc_stats s0, s1, s2;
        tb_gemm_scratch_release();
        tb_alloc_stats_read(&s0);
        mat_poison(&C);
        assert_int_equal(gemm_call(max_isa, false, &p, &A, &B, &C, threads,
                                   NULL),
                         0);
        tb_alloc_stats_read(&s1);
        assert_int_equal(s1.allocs - s0.allocs, 1);
        assert_int_equal(s1.frees - s0.frees, 0);
        assert_true(s1.live_bytes > s0.live_bytes);
        assert_true(check_result(&p, &C, false, "allocations"));
        mat_poison(&C);
        assert_int_equal(gemm_call(max_isa, false, &p, &A, &B, &C, threads,
                                   NULL),
                         0);
        tb_alloc_stats_read(&s2);
        assert_int_equal(s2.allocs, s1.allocs);
        assert_int_equal(s2.live_bytes, s1.live_bytes);
        assert_true(check_result(&p, &C, false, "allocations, again"));
        tb_gemm_scratch_release();
        tb_alloc_stats_read(&s2);
        assert_int_equal(s2.frees - s0.frees, 1);
        assert_int_equal(s2.live_bytes, s0.live_bytes);

        mat_poison(&C);
        tb_alloc_fail_after(0);
        int rc = gemm_call(max_isa, false, &p, &A, &B, &C, threads, NULL);
        tb_alloc_fail_after(-1);
        assert_int_equal(rc, TB_ENOMEM);
        assert_true(mat_canary_ok(&C));
        for (int64_t i = 0; i < p.M; i++)
            for (int64_t j = 0; j < p.N; j++)
                assert_true(isnan(mat_get(&C, i, j)));
    }
    mat_free(&A);
    mat_free(&B);
    mat_free(&C);
    problem_free(&p);
}

/* ---- the scratch kept between calls (gemm.h, tb_gemm_scratch_get) ------- */

/* Shapes whose packing buffers grow call after call (K past one, then
 * several depth blocks), then shrink. */
#define SCRATCH_N 7
static const int64_t scratch_shapes[SCRATCH_N][3] = {
    {7, 9, 5},     {40, 70, 130}, {130, 200, 420}, {200, 260, 800},
    {130, 200, 420}, {33, 17, 65}, {1, 1, 1},
};

typedef struct scratch_job {
    const problem *ps;
    int isa, threads;
    mat A[2][SCRATCH_N], B[2][SCRATCH_N], C[2][SCRATCH_N];
    char why[200]; /* the first failure, or "" */
} scratch_job;

static void scratch_job_make(scratch_job *j, const problem *ps, int isa,
                             int threads)
{
    j->ps = ps;
    j->isa = isa;
    j->threads = threads;
    for (int f = 0; f < 2; f++)
        for (int s = 0; s < SCRATCH_N; s++) {
            const problem *p = &ps[s];
            const size_t esz = f ? 8 : 4;
            mat_make(&j->A[f][s], p->M, p->K, p->K, esz, 0);
            mat_make(&j->B[f][s], p->K, p->N, p->N, esz, 0);
            mat_make(&j->C[f][s], p->M, p->N, p->N, esz, 0);
            for (int64_t i = 0; i < p->M * p->K; i++)
                mat_set(&j->A[f][s], i / p->K, i % p->K, p->a[i]);
            for (int64_t i = 0; i < p->K * p->N; i++)
                mat_set(&j->B[f][s], i / p->N, i % p->N, p->b[i]);
        }
}

static void scratch_job_free(scratch_job *j)
{
    for (int f = 0; f < 2; f++)
        for (int s = 0; s < SCRATCH_N; s++) {
            mat_free(&j->A[f][s]);
            mat_free(&j->B[f][s]);
            mat_free(&j->C[f][s]);
        }
}

/* The shapes in order, f32 then f64 each, on the calling thread; every
 * result exact (bit for bit the reference), C's canaries kept and the
 * guard after the thread's cached block intact.  No cmocka asserts (it
 * runs on threads of its own): the first failure goes to j->why. */
static void *scratch_job_run(void *arg)
{
    scratch_job *j = arg;
    j->why[0] = '\0';
    for (int s = 0; s < SCRATCH_N; s++)
        for (int f = 0; f < 2; f++) {
            const problem *p = &j->ps[s];
            mat *C = &j->C[f][s];
            char what[120];
            snprintf(what, sizeof what, "%s M=%lld N=%lld K=%lld threads=%d",
                     tb_gemm_impl_name(j->isa, f), (long long)p->M,
                     (long long)p->N, (long long)p->K, j->threads);
            mat_poison(C);
            const int rc = gemm_call(j->isa, f == 1, p, &j->A[f][s],
                                     &j->B[f][s], C, j->threads, NULL);
            const char *bad =
                rc                        ? "an error"
                : !tb_gemm_scratch_check() ? "a write past its scratch"
                : !mat_canary_ok(C)        ? "a write outside C"
                : !check_result(p, C, f == 1, what) ? "a wrong result"
                                                    : NULL;
            if (bad) {
                snprintf(j->why, sizeof j->why, "%s: %s", what, bad);
                return NULL;
            }
        }
    return NULL;
}

/* GEMMs of growing then shrinking sizes on one thread (the cached block
 * grows to the largest need, then serves the smaller ones: no
 * allocation on a second pass), then on two threads at once (each its
 * own block; one of them splits each call over 2 threads of its own) and
 * the main thread at the same time; tb_gemm_scratch_release frees the
 * block. */
static void test_scratch_reuse(void **state)
{
    (void)state;
    problem ps[SCRATCH_N];
    for (int s = 0; s < SCRATCH_N; s++)
        problem_make(&ps[s], scratch_shapes[s][0], scratch_shapes[s][1],
                     scratch_shapes[s][2], true);
    tb_gemm_set_par_min_macs(0); /* split even the small shapes */
    static scratch_job job[3];
    for (int t = 0; t < 3; t++)
        scratch_job_make(&job[t], ps, max_isa, t == 1 ? 2 : 1);

    tb_gemm_scratch_release();
    tb_alloc_stats s0, s1, s2;
    tb_alloc_stats_read(&s0);
    scratch_job_run(&job[0]);
    if (job[0].why[0])
        fail_msg("%s", job[0].why);
    const size_t cached = tb_gemm_scratch_cached();
    assert_true(cached > 0);
    tb_alloc_stats_read(&s1);
    assert_int_equal(s1.live_bytes - s0.live_bytes, (int64_t)cached + 64);
    scratch_job_run(&job[0]);
    if (job[0].why[0])
        fail_msg("%s", job[0].why);
    tb_alloc_stats_read(&s2);
    assert_int_equal(s2.allocs, s1.allocs);
    assert_int_equal(s2.live_bytes, s1.live_bytes);
    assert_int_equal(tb_gemm_scratch_cached(), cached);

    for (int round = 0; round < 2; round++) {
        pthread_t tid[2];
        for (int t = 0; t < 2; t++)
            assert_int_equal(pthread_create(&tid[t], NULL, scratch_job_run,
                                            &job[t + 1]),
                             0);
        scratch_job_run(&job[0]);
        for (int t = 0; t < 2; t++)
            pthread_join(tid[t], NULL);
        for (int t = 0; t < 3; t++)
            if (job[t].why[0])
                fail_msg("round %d, thread %d: %s", round, t, job[t].why);
    }
    /* the threads' blocks died with them */
    tb_alloc_stats_read(&s2);
    assert_int_equal(s2.live_bytes, s1.live_bytes);
    tb_gemm_scratch_release();
    assert_int_equal(tb_gemm_scratch_cached(), 0);
    tb_alloc_stats_read(&s2);
    assert_int_equal(s2.live_bytes, s0.live_bytes);
    for (int t = 0; t < 3; t++)
        scratch_job_free(&job[t]);
    for (int s = 0; s < SCRATCH_N; s++)
        problem_free(&ps[s]);
}

/* The cached block is lent to one caller at a time: a request while it
 * is lent (a nested call) gets a block of its own, which does not touch
 * the lent one; given back, the cached block serves the next request
 * that fits; a release while it is lent keeps it. */
static void test_scratch_nested(void **state)
{
    (void)state;
    tb_gemm_scratch_release();
    int own1, own2;
    unsigned char *p = tb_gemm_scratch_get(1000, &own1);
    assert_non_null(p);
    assert_int_equal(own1, 0);
    assert_true(tb_gemm_scratch_cached() >= 1000);
    memset(p, 1, 1000);
    unsigned char *q = tb_gemm_scratch_get(500, &own2);
    assert_non_null(q);
    assert_int_equal(own2, 1);
    assert_true(q + 500 <= p || p + 1000 <= q);
    memset(q, 2, 500);
    tb_gemm_scratch_release(); /* lent: kept */
    assert_true(tb_gemm_scratch_cached() >= 1000);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(p[i], 1);
    tb_gemm_scratch_put(q, own2);
    tb_gemm_scratch_put(p, own1);
    q = tb_gemm_scratch_get(800, &own2);
    assert_ptr_equal(q, p);
    assert_int_equal(own2, 0);
    assert_int_equal(q[799], 1); /* as it was: not cleared */
    tb_gemm_scratch_put(q, own2);
    assert_true(tb_gemm_scratch_check());
    tb_gemm_scratch_release();
    assert_int_equal(tb_gemm_scratch_cached(), 0);
}

/* Scratch kinds: a HALF block is lent while the GEMM's is (both
 * cached, apart), a second HALF request while it is lent gets its own,
 * a HALF block is reused as it was, release frees both kinds (the leak
 * teardown sees no block left). */
static void test_scratch_kinds(void **state)
{
    (void)state;
    tb_gemm_scratch_release();
    int og, oh, oh2;
    unsigned char *g = tb_gemm_scratch_get(4096, &og);
    unsigned char *h = tb_scratch_get(TB_SCRATCH_HALF, 3000, &oh);
    assert_non_null(g);
    assert_non_null(h);
    assert_int_equal(og, 0);
    assert_int_equal(oh, 0);
    assert_true(h + 3000 <= g || g + 4096 <= h);
    memset(h, 7, 3000);
    unsigned char *h2 = tb_scratch_get(TB_SCRATCH_HALF, 100, &oh2);
    assert_non_null(h2);
    assert_int_equal(oh2, 1);
    tb_scratch_put(TB_SCRATCH_HALF, h2, oh2);
    tb_scratch_put(TB_SCRATCH_HALF, h, oh);
    tb_gemm_scratch_put(g, og);
    h2 = tb_scratch_get(TB_SCRATCH_HALF, 2000, &oh2);
    assert_ptr_equal(h2, h);
    assert_int_equal(oh2, 0);
    assert_int_equal(h2[1999], 7);
    tb_scratch_put(TB_SCRATCH_HALF, h2, oh2);
    assert_null(tb_scratch_get(TB_SCRATCH_KINDS, 10, &oh2));
    tb_gemm_scratch_release();
    assert_int_equal(tb_gemm_scratch_cached(), 0);
}

/* ---- main ---------------------------------------------------------------- */

#define T(name) cmocka_unit_test_setup_teardown(test_##name, setup, teardown)

/* tb_gemm_nt_small (C = A B^T, few rows, unpacked), f32 and f64:
 * against a double reference within K eps sum|a b| + tiny (its own sum
 * order), every row count 1..16 (the 8-row tiles and their last partial
 * one), odd and even column counts (a last single column), K with and
 * without a masked last vector, padded strides (NaN in the padding: a
 * read past K shows), C's padding untouched; bit for bit the same with
 * a caller's parallel-for of 1, 2 or 3 parts; refused
 * (TB_EUNSUPPORTED) outside its range and below AVX-512. */
static double nt_get(const void *p, int f64, int64_t i)
{
    return f64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}
static void nt_set(void *p, int f64, int64_t i, double v)
{
    if (f64)
        ((double *)p)[i] = v;
    else
        ((float *)p)[i] = (float)v;
}
static void test_nt_small(void **state)
{
    (void)state;
    static const int64_t Ns[] = {1, 2, 7, 33};
    static const int64_t Ks[] = {64, 77, 256};
    uint64_t r = 0x9e3779b97f4a7c15u;
    const int ok = max_isa >= TB_ISA_AVX512;
    for (int f64 = 0; f64 <= 1; f64++)
    for (int64_t M = 1; M <= TB_GEMM_NT_MMAX; M++)
        for (size_t ni = 0; ni < sizeof Ns / sizeof *Ns; ni++)
            for (size_t ki = 0; ki < sizeof Ks / sizeof *Ks; ki++) {
                const int64_t N = Ns[ni], K = Ks[ki];
                const int64_t lda = K + 3, ldb = K + 5, ldc = N + 2;
                const size_t es = f64 ? sizeof(double) : sizeof(float);
                const double eps = f64 ? DBL_EPSILON : FLT_EPSILON;
                void *A = malloc((size_t)(M * lda) * es);
                void *B = malloc((size_t)(N * ldb) * es);
                void *C = malloc((size_t)(M * ldc) * es);
                void *C2 = malloc((size_t)(M * ldc) * es);
                assert_non_null(A);
                assert_non_null(B);
                assert_non_null(C);
                assert_non_null(C2);
                for (int64_t i = 0; i < M * lda; i++) {
                    r = r * 6364136223846793005u + 1442695040888963407u;
                    nt_set(A, f64, i,
                           i % lda < K ? (double)((int64_t)(r >> 40) % 2001 - 1000) / 1000.0
                                       : NAN);
                }
                for (int64_t i = 0; i < N * ldb; i++) {
                    r = r * 6364136223846793005u + 1442695040888963407u;
                    nt_set(B, f64, i,
                           i % ldb < K ? (double)((int64_t)(r >> 40) % 2001 - 1000) / 1000.0
                                       : NAN);
                }
                for (int64_t i = 0; i < M * ldc; i++) {
                    nt_set(C, f64, i, -7.0);
                    nt_set(C2, f64, i, -7.0);
                }
                int rc = tb_gemm_nt_small(max_isa, f64, M, N, K, A, lda, B,
                                          ldb, C, ldc, 1, NULL);
                if (!ok) {
                    assert_int_equal(rc, TB_EUNSUPPORTED);
                    free(A), free(B), free(C), free(C2);
                    continue;
                }
                assert_int_equal(rc, 0);
                for (int64_t i = 0; i < M; i++)
                    for (int64_t j = 0; j < ldc; j++) {
                        const double got = nt_get(C, f64, i * ldc + j);
                        if (j >= N) {
                            assert_true(got == -7.0);
                            continue;
                        }
                        long double ref = 0;
                        double mag = 0;
                        for (int64_t k = 0; k < K; k++) {
                            const long double t =
                                (long double)nt_get(A, f64, i * lda + k) *
                                nt_get(B, f64, j * ldb + k);
                            ref += t;
                            mag += fabs((double)t);
                        }
                        const double tol = (double)K * eps * mag + 1e-300;
                        if (!(fabs(got - (double)ref) <= tol)) {
                            print_error("nt %s %lldx%lldx%lld [%lld][%lld]: "
                                        "%.17g vs %.17g (tol %.3g)\n",
                                        f64 ? "f64" : "f32", (long long)M,
                                        (long long)N, (long long)K,
                                        (long long)i, (long long)j, got,
                                        (double)ref, tol);
                            fail();
                        }
                    }
                for (int used = 1; used <= 3; used++) {
                    seq_pool sp = {.used_max = used};
                    tb_gemm_parallel par = {seq_run, &sp};
                    for (int64_t i = 0; i < M * ldc; i++)
                        nt_set(C2, f64, i, -7.0);
                    tb_gemm_set_par_min_macs(0);
                    rc = tb_gemm_nt_small(max_isa, f64, M, N, K, A, lda, B,
                                          ldb, C2, ldc, 3, &par);
                    tb_gemm_set_par_min_macs(TB_GEMM_PAR_MIN_MACS);
                    assert_int_equal(rc, 0);
                    assert_memory_equal(C, C2, (size_t)(M * ldc) * es);
                }
                free(A), free(B), free(C), free(C2);
            }
    float x[64] = {0}, y[64] = {0};
    assert_int_equal(tb_gemm_nt_small(max_isa, 0, TB_GEMM_NT_MMAX + 1, 1,
                                      64, x, 64, x, 64, y, 1, 1, NULL),
                     TB_EUNSUPPORTED);
    assert_int_equal(tb_gemm_nt_small(max_isa, 0, 1, 1, TB_GEMM_NT_KMIN - 1,
                                      x, 64, x, 64, y, 1, 1, NULL),
                     TB_EUNSUPPORTED);
    assert_int_equal(tb_gemm_nt_small(TB_ISA_AVX2, 0, 1, 1, 64, x, 64, x,
                                      64, y, 1, 1, NULL),
                     TB_EUNSUPPORTED);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        T(tails_exact),   T(tails_bound),         T(large_strided),
        T(row_blocks),    T(projection),    T(threads_invariant),   T(small_single_part),
        T(empty),         T(bad_args),            T(isa_levels),
        T(impl_names),    T(allocations),         T(epilogue),
        T(epilogue_overlap), T(epilogue_kernels), T(edge_kernels),
        T(scratch_reuse),    T(scratch_nested),    T(nt_small),      T(scratch_kinds),
    };
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
            cmocka_set_test_filter(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--filter PATTERN]\n", argv[0]);
            return 2;
        }
    }
    max_isa = tb_cpu_isa_max();
    printf("# test_gemm: levels scalar..%s (cpu %s), threads 1 and 2, "
           "seed 0x%016llx\n",
           tb_cpu_isa_name(max_isa), tb_cpu_isa_name(tb_cpu_isa_detect()),
           (unsigned long long)SEED);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
