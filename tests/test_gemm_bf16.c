/* Tests for the bf16 GEMM on AVX512_BF16 (gemm.h's tb_gemm_bf16_ep,
 * gemm/gemm_bf16_avx512bf16.c).  Skipped (each test passes with a note)
 * where the CPU, the OS, TBENCH_ISA or the build lacks the avx512bf16
 * level.
 *
 *  1. exact: small-integer inputs in [-16, 16] and integer biases, so
 *     every product and partial sum (|sum| <= 256 K < 2^24) is exact in
 *     f32 whatever the order: each output must be, bit for bit, the exact
 *     integer sum (+ bias, relu) rounded once to bf16 by ops/half.h's
 *     tb_f32_to_bf16 (round to nearest even: sums past 256 need it, and
 *     ties occur).  Shapes: tails of the 12 x 32 tile, K = 1, odd K
 *     (the pairs' zero half), K past one and two depth blocks (384 k,
 *     two at once), lda/ldb/ldc wider than the rows; 1 and 3 threads
 *     with the split forced on.  Any missing, doubled or misplaced term,
 *     or another rounding, fails.
 *  2. bound: uniform inputs in [-1, 1] rounded to bf16, against a long
 *     double reference: |C - ref| <= 2^-8 |ref| (the one rounding to
 *     bf16: half its epsilon 2^-7) + 2 (K + 1) 2^-24 (|A| |B|)[i][j]
 *     (f32 accumulation), plus 2^-8 of that for its own rounding.
 *  3. threads: bit for bit the same at 1, 2 and 5 threads.
 *  4. denormals: vdpbf16ps reads bf16 denormal inputs as zero (DAZ),
 *     the documented behaviour: a denormal times 2^100 gives 0, not
 *     2^-33.
 *     Each with the bias per column (linear's) and per row (a
 *     convolution's: TB_GEMM_EP_ROW_BIAS).
 *  5. edges: K = 0 (bias and relu of zero sums, the bias per row too),
 *     an unknown epilogue bit (TB_EINVAL), M or N = 0 (nothing
 *     written), another isa refused (TB_EUNSUPPORTED), bad arguments
 *     (TB_EINVAL), canaries around C intact. */
#include <math.h>
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
#include "backends/cpu/isa.h"
#include "base/error.h"
#include "ops/half.h"

#define LV TB_ISA_AVX512BF16

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static int irand(int lo, int hi)
{
    return lo + (int)(next() % (uint64_t)(hi - lo + 1));
}
static double urand(void) { return (double)(next() >> 11) * 0x1p-52 - 1; }

static bool have(void)
{
    if (!TB_CPU_HAVE_AVX512BF16 || tb_cpu_isa_max() < LV) {
        print_message("# skipped: no avx512bf16 level here\n");
        return false;
    }
    return true;
}

/* GEMM of shape (M, N, K) with row strides lda, ldb, ldc: inputs from
 * gen, the reference in long double, C checked by chk. */
typedef struct mm {
    int64_t M, N, K, lda, ldb, ldc;
    uint16_t *A, *B, *C, *bias;
    long double *ref, *absref;
} mm;

#define CANARY 0x7fc1u /* a NaN no result has */
#define GUARD 40

/* ep: gemm.h's TB_GEMM_EP_* bits (relu; the bias per row or per
 * column) */
static void mm_make(mm *p, int64_t M, int64_t N, int64_t K, int pad,
                    bool bias, int ep, bool exact)
{
    *p = (mm){M, N, K, K + pad, N + pad, N + pad, 0, 0, 0, 0, 0, 0};
    p->A = malloc(sizeof(uint16_t) * (size_t)(M * p->lda + 1));
    p->B = malloc(sizeof(uint16_t) * (size_t)(K * p->ldb + 1));
    p->C = malloc(sizeof(uint16_t) * (size_t)(M * p->ldc + 2 * GUARD));
    const int64_t nb = M > N ? M : N;
    p->bias = malloc(sizeof(uint16_t) * (size_t)(nb + 1));
    p->ref = malloc(sizeof(long double) * (size_t)(M * N + 1));
    p->absref = malloc(sizeof(long double) * (size_t)(M * N + 1));
    assert_non_null(p->A);
    assert_non_null(p->B);
    assert_non_null(p->C);
    for (int64_t i = 0; i < M * p->lda; i++)
        p->A[i] = tb_f32_to_bf16(exact ? (float)irand(-16, 16)
                                       : (float)urand());
    for (int64_t i = 0; i < K * p->ldb; i++)
        p->B[i] = tb_f32_to_bf16(exact ? (float)irand(-16, 16)
                                       : (float)urand());
    for (int64_t j = 0; j < nb; j++)
        p->bias[j] = tb_f32_to_bf16(exact ? (float)irand(-300, 300)
                                          : (float)urand());
    for (int64_t i = 0; i < M * p->ldc + 2 * GUARD; i++)
        p->C[i] = CANARY;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            long double s = 0, a = 0;
            for (int64_t k = 0; k < K; k++) {
                long double t =
                    (long double)tb_bf16_to_f32(p->A[i * p->lda + k]) *
                    (long double)tb_bf16_to_f32(p->B[k * p->ldb + j]);
                s += t;
                a += fabsl(t);
            }
            if (bias)
                s += (long double)tb_bf16_to_f32(
                    p->bias[ep & TB_GEMM_EP_ROW_BIAS ? i : j]);
            if ((ep & TB_GEMM_EP_RELU) && s <= 0)
                s = 0;
            p->ref[i * N + j] = s;
            p->absref[i * N + j] = a;
        }
    if (!bias) {
        free(p->bias);
        p->bias = NULL;
    }
}

static void mm_free(mm *p)
{
    free(p->A);
    free(p->B);
    free(p->C);
    free(p->bias);
    free(p->ref);
    free(p->absref);
}

static int mm_run(mm *p, int threads, int ep)
{
    return tb_gemm_bf16_ep(LV, p->M, p->N, p->K, p->A, p->lda, p->B, p->ldb,
                           p->C + GUARD, p->ldc, threads, NULL, p->bias,
                           ep);
}

/* Canaries before, between the rows and after C intact. */
static void mm_canaries(const mm *p)
{
    const uint16_t *c = p->C + GUARD;
    for (int64_t i = -GUARD; i < 0; i++)
        assert_int_equal(c[i], CANARY);
    for (int64_t i = 0; i < p->M; i++)
        for (int64_t j = p->N; j < p->ldc; j++)
            assert_int_equal(c[i * p->ldc + j], CANARY);
    for (int64_t i = 0; i < GUARD; i++)
        assert_int_equal(c[p->M * p->ldc + i], CANARY);
}

static const int64_t shapes[][3] = {
    {1, 1, 1},     {12, 32, 2},  {13, 33, 3},   {11, 31, 1},
    {25, 1, 37},   {7, 65, 5},   {37, 70, 384}, {24, 64, 385},
    {30, 40, 767}, {5, 97, 769}, {50, 47, 1601}, {131, 140, 300},
};
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))

static void test_exact(void **state)
{
    (void)state;
    if (!have())
        return;
    const int64_t old = tb_gemm_set_par_min_macs(0);
    int n = 0;
    for (int s = 0; s < NSHAPES; s++)
        for (int v = 0; v < 8; v++) {
            /* v: bias, relu, the bias per row (a convolution's) */
            const bool bias = v & 1;
            const int relu = v >> 1 & 1;
            const int ep = (relu ? TB_GEMM_EP_RELU : 0) |
                           (v & 4 ? TB_GEMM_EP_ROW_BIAS : 0);
            if ((v & 4) && !bias)
                continue;
            mm p;
            mm_make(&p, shapes[s][0], shapes[s][1], shapes[s][2], v ? 3 : 0,
                    bias, ep, true);
            for (int t = 1; t <= 3; t += 2) {
                assert_int_equal(mm_run(&p, t, ep), 0);
                for (int64_t i = 0; i < p.M; i++)
                    for (int64_t j = 0; j < p.N; j++) {
                        const uint16_t want =
                            tb_f32_to_bf16((float)p.ref[i * p.N + j]);
                        const uint16_t got = p.C[GUARD + i * p.ldc + j];
                        if (got != want)
                            fail_msg("%lldx%lldx%lld bias %d ep %d "
                                     "threads %d [%lld,%lld]: got 0x%04x "
                                     "want 0x%04x (exact %.1Lf)",
                                     (long long)p.M, (long long)p.N,
                                     (long long)p.K, bias, ep, t,
                                     (long long)i, (long long)j, got, want,
                                     p.ref[i * p.N + j]);
                        n++;
                    }
                mm_canaries(&p);
            }
            mm_free(&p);
        }
    tb_gemm_set_par_min_macs(old);
    print_message("# exact: %d outputs bit for bit\n", n);
}

static void test_bound(void **state)
{
    (void)state;
    if (!have())
        return;
    double worst = 0; /* error / bound */
    for (int s = 0; s < NSHAPES; s++) {
        mm p;
        mm_make(&p, shapes[s][0], shapes[s][1], shapes[s][2], 1, s & 1,
                s >> 1 & 1, false);
        assert_int_equal(mm_run(&p, 2, s >> 1 & 1), 0);
        for (int64_t i = 0; i < p.M; i++)
            for (int64_t j = 0; j < p.N; j++) {
                const long double ref = p.ref[i * p.N + j];
                const long double acc = 2.0L * (long double)(p.K + 1) *
                                        0x1p-24L * p.absref[i * p.N + j];
                const long double bound =
                    0x1p-8L * (fabsl(ref) + acc) + acc;
                const long double got =
                    tb_bf16_to_f32(p.C[GUARD + i * p.ldc + j]);
                const long double err = fabsl(got - ref);
                if (!(err <= bound))
                    fail_msg("%lldx%lldx%lld [%lld,%lld]: got %.9Lg ref "
                             "%.9Lg err %.3Lg bound %.3Lg",
                             (long long)p.M, (long long)p.N, (long long)p.K,
                             (long long)i, (long long)j, got, ref, err,
                             bound);
                if (bound > 0 && (double)(err / bound) > worst)
                    worst = (double)(err / bound);
            }
        mm_canaries(&p);
        mm_free(&p);
    }
    print_message("# bound: worst error %.3f of the bound\n", worst);
}

static void test_threads(void **state)
{
    (void)state;
    if (!have())
        return;
    const int64_t old = tb_gemm_set_par_min_macs(0);
    mm p;
    mm_make(&p, 131, 140, 900, 0, true, 1, false);
    const size_t nb = sizeof(uint16_t) * (size_t)(p.M * p.ldc + 2 * GUARD);
    uint16_t *one = malloc(nb);
    assert_non_null(one);
    assert_int_equal(mm_run(&p, 1, 1), 0);
    memcpy(one, p.C, nb);
    for (int t = 2; t <= 5; t += 3) {
        for (size_t i = 0; i < nb / 2; i++)
            p.C[i] = CANARY;
        assert_int_equal(mm_run(&p, t, 1), 0);
        assert_memory_equal(one, p.C, nb);
    }
    free(one);
    mm_free(&p);
    tb_gemm_set_par_min_macs(old);
}

static void test_denormals(void **state)
{
    (void)state;
    if (!have())
        return;
    /* A: the smallest bf16 denormal (2^-133) and 1; B: 2^100 */
    const uint16_t A[2] = {0x0001, 0x3f80}, B[2] = {0x7180, 0x7180};
    uint16_t C[1] = {CANARY};
    assert_int_equal(tb_gemm_bf16_ep(LV, 1, 1, 1, A, 1, B, 1, C, 1, 1,
                                     NULL, NULL, 0),
                     0);
    assert_int_equal(C[0], 0x0000); /* DAZ: not 2^-33 (0x2f00) */
    assert_int_equal(tb_gemm_bf16_ep(LV, 1, 1, 1, A + 1, 1, B, 1, C, 1, 1,
                                     NULL, NULL, 0),
                     0);
    assert_int_equal(C[0], 0x7180);
}

static void test_edges(void **state)
{
    (void)state;
    if (!have())
        return;
    uint16_t A[4] = {0x3f80, 0x3f80, 0x3f80, 0x3f80}, B[4] = {0x3f80, 0, 0, 0};
    const uint16_t bias[3] = {tb_f32_to_bf16(-2.0f), tb_f32_to_bf16(3.0f),
                              0x8000};
    uint16_t C[6];
    /* K = 0: the sums are 0; then bias, relu */
    for (int i = 0; i < 6; i++)
        C[i] = CANARY;
    assert_int_equal(tb_gemm_bf16_ep(LV, 2, 3, 0, A, 0, B, 3, C, 3, 1,
                                     NULL, bias, 1),
                     0);
    const uint16_t want_relu[6] = {0, 0x4040, 0, 0, 0x4040, 0};
    assert_memory_equal(C, want_relu, sizeof C);
    assert_int_equal(tb_gemm_bf16_ep(LV, 2, 3, 0, A, 0, B, 3, C, 3, 1,
                                     NULL, bias, 0),
                     0);
    const uint16_t want[6] = {0xc000, 0x4040, 0, 0xc000, 0x4040, 0};
    assert_memory_equal(C, want, sizeof C);
    /* K = 0, the bias per row: row 0 gets -2, row 1 gets 3 */
    assert_int_equal(tb_gemm_bf16_ep(LV, 2, 3, 0, A, 0, B, 3, C, 3, 1,
                                     NULL, bias, TB_GEMM_EP_ROW_BIAS),
                     0);
    const uint16_t want_row[6] = {0xc000, 0xc000, 0xc000,
                                  0x4040, 0x4040, 0x4040};
    assert_memory_equal(C, want_row, sizeof C);
    /* an unknown epilogue bit */
    assert_int_equal(tb_gemm_bf16_ep(LV, 2, 3, 0, A, 0, B, 3, C, 3, 1,
                                     NULL, bias, 4),
                     TB_EINVAL);
    /* empty: nothing written */
    for (int i = 0; i < 6; i++)
        C[i] = CANARY;
    assert_int_equal(tb_gemm_bf16_ep(LV, 0, 3, 2, A, 2, B, 3, C, 3, 1,
                                     NULL, NULL, 0),
                     0);
    assert_int_equal(tb_gemm_bf16_ep(LV, 2, 0, 2, A, 2, B, 0, C, 0, 1,
                                     NULL, NULL, 0),
                     0);
    for (int i = 0; i < 6; i++)
        assert_int_equal(C[i], CANARY);
    /* refused: other levels, bad sizes, strides, threads, overlap */
    for (int isa = 0; isa < TB_ISA_COUNT; isa++)
        if (isa != LV)
            assert_int_equal(tb_gemm_bf16_ep(isa, 2, 2, 2, A, 2, B, 2, C,
                                             2, 1, NULL, NULL, 0),
                             TB_EUNSUPPORTED);
    assert_int_equal(tb_gemm_bf16_ep(LV, -1, 2, 2, A, 2, B, 2, C, 2, 1,
                                     NULL, NULL, 0),
                     TB_EINVAL);
    assert_int_equal(tb_gemm_bf16_ep(LV, 2, 2, 2, A, 1, B, 2, C, 2, 1,
                                     NULL, NULL, 0),
                     TB_EINVAL);
    assert_int_equal(tb_gemm_bf16_ep(LV, 2, 2, 2, A, 2, B, 2, C, 2, 0,
                                     NULL, NULL, 0),
                     TB_EINVAL);
    assert_int_equal(tb_gemm_bf16_ep(LV, 2, 2, 2, A, 2, B, 2, A, 2, 1,
                                     NULL, NULL, 0),
                     TB_EINVAL);
    assert_int_equal(tb_gemm_bf16_ep(LV, 2, 2, 2, A, 2, B, 2, C, 2, 1,
                                     NULL, C + 1, 0),
                     TB_EINVAL);
    for (int i = 0; i < 6; i++)
        assert_int_equal(C[i], CANARY);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact),     cmocka_unit_test(test_bound),
        cmocka_unit_test(test_threads),   cmocka_unit_test(test_denormals),
        cmocka_unit_test(test_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
