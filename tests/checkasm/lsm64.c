/* checkasm: log_softmax and softmax f64's rows (kernels.h's lsm and sm
 * slots: f64_simd_impl.h's row pipeline, f64_lsm_short.h's short rows,
 * the portable rows) at every level against a long double oracle, in
 * ulp: see test_checkasm.c. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "../testutil.h"

#include "backends/cpu/isa.h"
#include "backends/cpu/kernels.h"

#include "checkasm.h"

/* The stated bounds, in units u = 2^-53 (half an ulp of 1), for a row
 * of n: softmax |got - want| <= (6 + LSM64_SM_N sqrt n) u want (1 +
 * |x - m|) (x - m rounds once: e^(x - m) moves by |x - m| times that;
 * the exp within 1 ulp, 1 / s and the product round once each; the
 * sum's roundings grow with n, most in the portable row's one running
 * sum); log_softmax |got - want| <= (6
 * + LSM64_LSM_N sqrt n) u (|x - m| + log s + 1) (x - m and its
 * subtraction of log s round once each, log s within 1 ulp of the
 * rounded sum, whose rounding moves it by up to its relative error in
 * absolute terms: where one element dominates, log s is tiny and that
 * is the whole).  These seeded rows' worst on this Zen 4: 0.30 of the
 * softmax bound and 0.46 of log_softmax's at avx2 and avx512, 0.35 and
 * 0.50 in the portable rows. */
#define LSM64_SM_N 2.0
#define LSM64_LSM_N 0.5

/* Row r of `rows` rows of n: uniform in [-30, 30] with a few -inf;
 * rows % 5 == 1 offset by 1e4 (a plain exp overflows), rows % 5 == 2
 * spread over [-800, 0] (e^(x - m) below 2^-1022: the full exp path),
 * row 3 all -inf (NaN), row 4 all one large value (1 / n). */
static double lsm64_value(int64_t r, int64_t i)
{
    double v = rng_uniform(-30, 30);
    if ((rng_next() & 31) == 0)
        v = -INFINITY;
    if (r % 5 == 1)
        v += 1e4;
    if (r % 5 == 2)
        v = rng_uniform(-800, 0);
    if (r == 3)
        v = -INFINITY;
    if (r == 4)
        v = 1e300;
    (void)i;
    return v;
}

/* The worst error of one row in the units above; INFINITY for a wrong
 * special value (-inf entries give -inf, softmax 0; a row of -inf NaN). */
static double lsm64_row_err(const double *x, const double *o, int64_t n,
                            bool soft)
{
    long double m = -INFINITY, s = 0;
    for (int64_t i = 0; i < n; i++)
        m = x[i] > m ? x[i] : m;
    if (m == -INFINITY) {
        for (int64_t i = 0; i < n; i++)
            if (!isnan(o[i]))
                return INFINITY;
        return 0;
    }
    for (int64_t i = 0; i < n; i++)
        s += expl((long double)x[i] - m);
    const long double ls = logl(s);
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        const long double d = (long double)x[i] - m;
        double e;
        if (x[i] == -INFINITY) {
            e = (soft ? o[i] == 0.0 : o[i] == -INFINITY) ? 0 : INFINITY;
        } else if (soft) {
            const long double w = expl(d) / s;
            /* below DBL_MIN: within an ulp of the subnormals */
            const long double unit =
                (w < 0x1p-1022L ? 0x1p-1022L : w) * (1 + fabsl(d)) *
                0x1p-53L;
            e = (double)(fabsl((long double)o[i] - w) / unit);
        } else {
            const long double w = d - ls;
            e = (double)(fabsl((long double)o[i] - w) /
                         ((fabsl(d) + ls + 1) * 0x1p-53L));
        }
        if (!(e <= worst))
            worst = e;
    }
    return worst;
}

void test_lsm64_ulp(void **state)
{
    (void)state;
    static const int64_t ns[] = {1,  2,  3,  4,  5,  6,   7,    8,   9,
                                 10, 11, 12, 13, 14, 15,  16,   17,  31,
                                 33, 100, 513, 1000, 1001, 2500};
    static const int64_t rowss[] = {1, 5, 7, 8, 9, 17, 40};
    const int nl = n_levels();
    for (int l = 0; l < nl; l++) {
        tb_cpu_kernels k;
        assert_int_equal(tb_cpu_kernels_fill(&k, l), l);
        for (int soft = 0; soft < 2; soft++) {
            double worst = 0;
            int64_t wn = 0, wr = 0;
            for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
                for (size_t ri = 0; ri < sizeof rowss / sizeof rowss[0];
                     ri++) {
                    const int64_t n = ns[ni], rows = rowss[ri];
                    if (n * rows > 40000)
                        continue;
                    rng_seed(0x15f + (uint64_t)(ni * 16 + ri));
                    gbuf gx, go;
                    double *x = gb_new(&gx, (size_t)(n * rows) * 8,
                                       misalign(TB_F64));
                    double *o = gb_new(&go, (size_t)(n * rows) * 8,
                                       misalign(TB_F64));
                    for (int64_t r = 0; r < rows; r++)
                        for (int64_t i = 0; i < n; i++)
                            x[r * n + i] = lsm64_value(r, i);
                    if (soft)
                        k.sm[TB_F64].rows(x, o, rows, n);
                    else
                        k.lsm[TB_F64].rows(x, o, rows, n);
                    const double bound =
                        6.0 + (soft ? LSM64_SM_N : LSM64_LSM_N) *
                                  sqrt((double)n);
                    for (int64_t r = 0; r < rows; r++) {
                        const double e =
                            lsm64_row_err(x + r * n, o + r * n, n, soft) /
                            bound;
                        if (!(e <= worst)) {
                            worst = e;
                            wn = n;
                            wr = r;
                        }
                    }
                    assert_true(gb_intact(&gx) && gb_intact(&go));
                    gb_free(&gx);
                    gb_free(&go);
                }
            printf("# %s f64 rows level %s: worst %.3g of the bound (n "
                   "%lld row %lld)\n",
                   soft ? "softmax" : "log_softmax", tb_cpu_isa_name(l),
                   worst, (long long)wn, (long long)wr);
            assert_true(worst <= 1.0);
        }
    }
}
