/* checkasm, part 2: the inner loops of the kernel tables (kernels.h)
 * called directly at every level: see test_checkasm.c. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../testutil.h"

#include "backends/backend.h"
#include "backends/cpu/isa.h"
#include "backends/cpu/kernels.h"
#include "backends/cpu/kreg.h"
#include "backends/cpu/ops_simd.h"
#include "backends/cpu/rand_simd.h"
#include "backends/cpu/transpose.h"
#include "backends/cpu/vmath.h"
#include "ops/alloc.h"
#include "base/error.h"
#include "ops/op.h"
#include "ops/rand.h"
#include "ops/tensor.h"

#include "checkasm.h"

/* ========================================================================= */
/* 2. Table kernels, called directly                                         */
/* ========================================================================= */

static const int64_t sizes[] = {0, 1, 7, 15, 17, 31, 33, 513, 1025, 4099};
#define N_SIZES ((int)(sizeof sizes / sizeof sizes[0]))

/* Tables: ref = portable C, k[l] = level l. */
static tb_cpu_kernels tab_c, tab[TB_ISA_COUNT];

static int tables(void)
{
    tb_cpu_kernels_init_c(&tab_c);
    int nl = n_levels();
    for (int l = 0; l < nl; l++)
        assert_int_equal(tb_cpu_kernels_fill(&tab[l], l), l);
    return nl;
}

static const char *const bin_names[TB_CPU_NBIN] = {"add", "sub", "mul",
                                                   "div", "add_relu"};

/* vv, sv, vs and vv_nt (streaming stores; its head, 64-byte-aligned body
 * and tail all run at these sizes and misalignments) forms of every
 * binary op, every dtype and level: bit-equal to the C version;
 * canaries intact; inputs unchanged. */
void test_kernel_binary(void **state)
{
    (void)state;
    const int nl = tables();
    for (int l = 0; l < nl; l++)
        for (int op = 0; op < TB_CPU_NBIN; op++)
            for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++)
                for (int si = 0; si < N_SIZES; si++)
                    for (int form = 0; form < 4; form++) {
                        const int64_t n = sizes[si];
                        const size_t es = tb_dtype_size((tb_dtype)dt);
                        const size_t off = form == 3
                                               ? nt_off((tb_dtype)dt, si)
                                               : misalign((tb_dtype)dt);
                        const int64_t na = form == 1 ? 1 : n;
                        const int64_t nb = form == 2 ? 1 : n;
                        if (n == 0 && form)
                            continue;
                        rng_seed((uint64_t)(op * 100 + dt * 10 + si));
                        gbuf ga, gb, go, gr;
                        void *a = gb_new(&ga, (size_t)na * es, off);
                        void *b = gb_new(&gb, (size_t)nb * es, off);
                        void *o = gb_new(&go, (size_t)n * es, off);
                        void *r = gb_new(&gr, (size_t)n * es, 0);
                        fill(a, (tb_dtype)dt, na, true);
                        fill(b, (tb_dtype)dt, nb, true);
                        const tb_cpu_bin_fn *fl =
                            form == 3 ? &tab[l].bin[op][dt].vv_nt
                                      : &tab[l].bin[op][dt].vv + form;
                        const tb_cpu_bin_fn *fr =
                            form == 3 ? &tab_c.bin[op][dt].vv
                                      : &tab_c.bin[op][dt].vv + form;
                        (*fl)(a, b, o, n);
                        (*fr)(a, b, r, n);
                        int64_t bad = -1;
                        for (int64_t i = 0; i < n && bad < 0; i++)
                            if (!same(get(o, (tb_dtype)dt, i),
                                      get(r, (tb_dtype)dt, i)))
                                bad = i;
                        if (bad >= 0 || !gb_intact(&go) ||
                            !gb_intact(&ga) || !gb_intact(&gb))
                            print_error(
                                "%s_%s form %d n=%lld level %s: [%lld] "
                                "got %g want %g, canaries %d%d%d\n",
                                bin_names[op], tb_dtype_name((tb_dtype)dt),
                                form, (long long)n, tb_cpu_isa_name(l),
                                (long long)bad,
                                bad >= 0 ? get(o, (tb_dtype)dt, bad) : 0,
                                bad >= 0 ? get(r, (tb_dtype)dt, bad) : 0,
                                gb_intact(&ga), gb_intact(&gb),
                                gb_intact(&go));
                        assert_true(bad < 0);
                        assert_true(gb_intact(&go) && gb_intact(&ga) &&
                                    gb_intact(&gb));
                        gb_free(&ga);
                        gb_free(&gb);
                        gb_free(&go);
                        gb_free(&gr);
                    }
}

/* vv_ip, the loop for an output that is one of the inputs, where a level
 * has one (and the AVX-512 level's 256-bit loops, installed on AMD CPUs
 * only, on any CPU with the level): a = a op b and b = a op b, in place,
 * bit-equal to the C version's vv into a buffer of its own; canaries
 * intact. */
void test_kernel_binary_inplace(void **state)
{
    (void)state;
    const int nl = tables();
    for (int l = 0; l <= nl; l++) {
        tb_cpu_kernels ymm;
        const tb_cpu_kernels *k = &tab[l < nl ? l : 0];
        if (l == nl) { /* the 256-bit loops, whatever the vendor */
            if (nl <= TB_ISA_AVX512)
                continue;
            ymm = tab[TB_ISA_AVX512];
            tb_cpu_kernels_ip_ymm_avx512(&ymm);
            k = &ymm;
        }
        for (int op = 0; op < TB_CPU_NBIN; op++)
            for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
                const tb_cpu_bin_fn ip = k->bin[op][dt].vv_ip;
                if (!ip)
                    continue;
                for (int si = 0; si < N_SIZES + 1; si++)
                    for (int which = 0; which < 2; which++) {
                        /* and past the 512 KiB an array the 256-bit
                         * loops start at */
                        const int64_t n = si < N_SIZES ? sizes[si] : 131079;
                        const tb_dtype t = (tb_dtype)dt;
                        const size_t es = tb_dtype_size(t);
                        rng_seed((uint64_t)(op * 100 + dt * 10 + si));
                        gbuf ga, gb, gr;
                        void *a = gb_new(&ga, (size_t)n * es, misalign(t));
                        void *b = gb_new(&gb, (size_t)n * es, misalign(t));
                        void *r = gb_new(&gr, (size_t)n * es, 0);
                        fill(a, t, n, true);
                        fill(b, t, n, true);
                        tab_c.bin[op][dt].vv(a, b, r, n);
                        ip(a, b, which ? b : a, n);
                        const void *o = which ? b : a;
                        int64_t bad = -1;
                        for (int64_t i = 0; i < n && bad < 0; i++)
                            if (!same(get(o, t, i), get(r, t, i)))
                                bad = i;
                        if (bad >= 0)
                            print_error("%s_%s vv_ip into %s n=%lld %s: "
                                        "[%lld] got %g want %g\n",
                                        bin_names[op], tb_dtype_name(t),
                                        which ? "b" : "a", (long long)n,
                                        l < nl ? tb_cpu_isa_name(l)
                                               : "avx512 ymm",
                                        (long long)bad, get(o, t, bad),
                                        get(r, t, bad));
                        assert_true(bad < 0);
                        assert_true(gb_intact(&ga) && gb_intact(&gb));
                        gb_free(&ga);
                        gb_free(&gb);
                        gb_free(&gr);
                    }
            }
    }
}

/* add_relu's vv, sv, vs and vv_nt at every level (the portable one
 * included) against its definition written out here: a + b rounded to
 * the dtype (in double, exact for f32: a double sum of two floats rounds
 * to the float sum), then x > 0 or NaN ? x : +0.  Bitwise, with the
 * special values (-0, inf - inf, NaN, overflow to inf) in the inputs;
 * canaries intact. */
void test_kernel_add_relu(void **state)
{
    (void)state;
    const int nl = tables();
    for (int l = 0; l < nl; l++)
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++)
            for (int si = 0; si < N_SIZES; si++)
                for (int form = 0; form < 4; form++) {
                    const tb_dtype t = (tb_dtype)dt;
                    const int64_t n = sizes[si];
                    const size_t es = tb_dtype_size(t);
                    const size_t off =
                        form == 3 ? nt_off(t, si) : misalign(t);
                    const int64_t na = form == 1 ? 1 : n;
                    const int64_t nb = form == 2 ? 1 : n;
                    if (n == 0 && form)
                        continue;
                    rng_seed((uint64_t)(7000 + dt * 10 + si));
                    gbuf ga, gb, go;
                    void *a = gb_new(&ga, (size_t)na * es, off);
                    void *b = gb_new(&gb, (size_t)nb * es, off);
                    void *o = gb_new(&go, (size_t)n * es, off);
                    fill(a, t, na, true);
                    fill(b, t, nb, true);
                    const tb_cpu_bin_fn *fl =
                        form == 3 ? &tab[l].bin[TB_CPU_ADD_RELU][dt].vv_nt
                                  : &tab[l].bin[TB_CPU_ADD_RELU][dt].vv +
                                        form;
                    (*fl)(a, b, o, n);
                    int64_t bad = -1;
                    double want = 0;
                    for (int64_t i = 0; i < n && bad < 0; i++) {
                        double s = get(a, t, form == 1 ? 0 : i) +
                                   get(b, t, form == 2 ? 0 : i);
                        if (t == TB_F32)
                            s = (double)(float)s;
                        want = isnan(s) ? s : (s > 0 ? s : 0.0);
                        if (!same(get(o, t, i), want))
                            bad = i;
                    }
                    if (bad >= 0 || !gb_intact(&go) || !gb_intact(&ga) ||
                        !gb_intact(&gb))
                        print_error("add_relu_%s form %d n=%lld level %s: "
                                    "[%lld] got %g want %g, canaries "
                                    "%d%d%d\n",
                                    tb_dtype_name(t), form, (long long)n,
                                    tb_cpu_isa_name(l), (long long)bad,
                                    bad >= 0 ? get(o, t, bad) : 0, want,
                                    gb_intact(&ga), gb_intact(&gb),
                                    gb_intact(&go));
                    assert_true(bad < 0);
                    assert_true(gb_intact(&go) && gb_intact(&ga) &&
                                gb_intact(&gb));
                    gb_free(&ga);
                    gb_free(&gb);
                    gb_free(&go);
                }
}

/* relu and its streaming-store form: exact (x > 0 or NaN ? x : +0). */
void test_kernel_relu(void **state)
{
    (void)state;
    const int nl = tables();
    for (int l = 0; l < nl; l++)
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++)
            for (int si = 0; si < 2 * N_SIZES; si++) {
                const bool nt = si >= N_SIZES;
                const int64_t n = sizes[si % N_SIZES];
                const size_t es = tb_dtype_size((tb_dtype)dt);
                const size_t off = nt ? nt_off((tb_dtype)dt, si)
                                      : misalign((tb_dtype)dt);
                rng_seed((uint64_t)(dt * 10 + si));
                gbuf gx, go;
                void *x = gb_new(&gx, (size_t)n * es, off);
                void *o = gb_new(&go, (size_t)n * es, off);
                fill(x, (tb_dtype)dt, n, true);
                (nt ? tab[l].relu[dt].fn_nt : tab[l].relu[dt].fn)(x, o, n);
                for (int64_t i = 0; i < n; i++) {
                    double v = get(x, (tb_dtype)dt, i);
                    double want = isnan(v) ? v : v > 0 ? v : 0.0;
                    if (!same(get(o, (tb_dtype)dt, i), want))
                        print_error("relu_%s%s level %s n=%lld [%lld]: %g "
                                    "-> %g\n",
                                    tb_dtype_name((tb_dtype)dt), nt ? "_nt" : "",
                                    tb_cpu_isa_name(l), (long long)n,
                                    (long long)i, v,
                                    get(o, (tb_dtype)dt, i));
                    assert_true(same(get(o, (tb_dtype)dt, i), want));
                }
                assert_true(gb_intact(&gx) && gb_intact(&go));
                gb_free(&gx);
                gb_free(&go);
            }
}

/* Error bound of the blocked sums (kernels.h): no lane of the input type
 * adds more than 64 terms (plus a few to combine lanes) before the block
 * total goes to double, so |error| <= 70 u sum|x| + n 2^-53 sum|x| with
 * u the unit roundoff of the type (Higham, recursive summation). */
static double sum_bound(tb_dtype dt, int64_t n, double sabs)
{
    const double u = dt == TB_F32 ? 0x1p-24 : 0x1p-53;
    const double terms = dt == TB_F32 ? 70 : (double)n + 4;
    return terms * u * sabs + (double)n * 0x1p-53 * sabs;
}

/* Row and column sums against a double oracle. */
void test_kernel_sum(void **state)
{
    (void)state;
    const int nl = tables();
    for (int l = 0; l < nl; l++)
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
            const tb_dtype t = (tb_dtype)dt;
            const size_t es = tb_dtype_size(t);
            for (int si = 0; si < N_SIZES; si++) {
                const int64_t n = sizes[si];
                rng_seed((uint64_t)(dt * 10 + si));
                gbuf gx;
                void *x = gb_new(&gx, (size_t)n * es, misalign(t));
                fill(x, t, n, false);
                double want = 0, sabs = 0;
                for (int64_t i = 0; i < n; i++) {
                    want += get(x, t, i);
                    sabs += fabs(get(x, t, i));
                }
                double got = tab[l].sum[dt].row(x, n);
                if (!(fabs(got - want) <= sum_bound(t, n, sabs)))
                    print_error("sum_%s row level %s n=%lld: got %.17g "
                                "want %.17g\n",
                                tb_dtype_name(t), tb_cpu_isa_name(l),
                                (long long)n, got, want);
                assert_true(fabs(got - want) <= sum_bound(t, n, sabs));
                assert_true(gb_intact(&gx));
                gb_free(&gx);
            }
            /* columns: R rows of w columns, row stride ld > w */
            /* f32: widths up to KS_SUM_STRIP_COLS (64 at avx512, 32 at
             * avx2) down strips, wider ones row by row;
             * widths beyond TB_CPU_COL_TILE up to TB_CPU_SUM_COL_TILE
             * (a whole row per tile) with a few row counts only */
            static const int64_t Rs[] = {1, 7, 64, 65, 200, 1031};
            static const int64_t ws[] = {0,    1,    7,    17,
                                         64,   65,   300,  1024,
                                         4099, TB_CPU_SUM_COL_TILE};
            /* al 1: widths 300 and 1024 again with rows 1024 values
             * apart (f32: 4 KiB, ks_sum_f32_rows's four-row passes) */
            for (int al = 0; al < 2; al++)
            for (size_t ri = 0; ri < sizeof Rs / sizeof Rs[0]; ri++)
                for (size_t wi = 0; wi < sizeof ws / sizeof ws[0]; wi++) {
                    const int64_t R = Rs[ri], w = ws[wi];
                    const int64_t ld = al ? 1024 : w + 3;
                    if (w > TB_CPU_COL_TILE && R != 7 && R != 65 &&
                        R != 1031)
                        continue;
                    if (al && w != 300 && w != 1024)
                        continue;
                    rng_seed((uint64_t)(dt * 1000 + ri * 10 + wi));
                    gbuf gx;
                    void *x = gb_new(&gx, (size_t)(R * ld) * es, misalign(t));
                    fill(x, t, R * ld, false);
                    double acc[TB_CPU_SUM_COL_TILE + 1];
                    for (int64_t j = 0; j <= w; j++)
                        acc[j] = 0.25; /* added to, not overwritten */
                    tab[l].sum[dt].cols(x, R, ld, w, acc);
                    if (t == TB_F64 || t == TB_F32) {
                        /* the C row's order (blocks of
                         * TB_CPU_SUM_COL_ROWS rows in row order, then
                         * added to acc), bit for bit */
                        static double acc_c[TB_CPU_SUM_COL_TILE + 1];
                        for (int64_t j = 0; j <= w; j++)
                            acc_c[j] = 0.25;
                        tab_c.sum[dt].cols(x, R, ld, w, acc_c);
                        if (memcmp(acc, acc_c, (size_t)(w + 1) *
                                                   sizeof *acc) != 0)
                            print_error("sum_%s cols level %s R=%lld "
                                        "w=%lld ld=%lld: not the C row's "
                                        "bits\n",
                                        tb_dtype_name(t), tb_cpu_isa_name(l),
                                        (long long)R, (long long)w,
                                        (long long)ld);
                        assert_memory_equal(acc, acc_c, (size_t)(w + 1) *
                                                            sizeof *acc);
                    }
                    for (int64_t j = 0; j < w; j++) {
                        double want = 0.25, sabs = 0;
                        for (int64_t r = 0; r < R; r++) {
                            want += get(x, t, r * ld + j);
                            sabs += fabs(get(x, t, r * ld + j));
                        }
                        assert_true(fabs(acc[j] - want) <=
                                    sum_bound(t, R, sabs));
                    }
                    assert_true(acc[w] == 0.25); /* nothing past w */
                    assert_true(gb_intact(&gx));
                    gb_free(&gx);
                }
            /* short rows, several a vector (kernels.h sum rows), where
             * the level has them: every n up to short_n, row counts
             * around whole blocks; each row against a double oracle,
             * nothing written past out[rows) */
            for (int64_t n = 1; tab[l].sum[dt].rows &&
                                n <= tab[l].sum[dt].short_n;
                 n++)
                for (int64_t rows = 0; rows <= 37; rows += 1 + rows / 4) {
                    rng_seed((uint64_t)(dt * 7919 + n * 64 + rows));
                    gbuf gx;
                    void *x = gb_new(&gx, (size_t)(rows * n) * es,
                                     misalign(t));
                    fill(x, t, rows * n, false);
                    double out[38 + 1];
                    for (int64_t r = 0; r <= rows; r++)
                        out[r] = 0.25;
                    tab[l].sum[dt].rows(x, rows, n, out);
                    for (int64_t r = 0; r < rows; r++) {
                        double want = 0, sabs = 0;
                        for (int64_t i = 0; i < n; i++) {
                            want += get(x, t, r * n + i);
                            sabs += fabs(get(x, t, r * n + i));
                        }
                        if (!(fabs(out[r] - want) <= sum_bound(t, n, sabs)))
                            print_error("sum_%s rows level %s n=%lld "
                                        "rows=%lld: [%lld] got %.17g want "
                                        "%.17g\n",
                                        tb_dtype_name(t), tb_cpu_isa_name(l),
                                        (long long)n, (long long)rows,
                                        (long long)r, out[r], want);
                        assert_true(fabs(out[r] - want) <=
                                    sum_bound(t, n, sabs));
                    }
                    assert_true(out[rows] == 0.25); /* nothing past */
                    assert_true(gb_intact(&gx));
                    gb_free(&gx);
                }
        }
}

/* log_softmax (soft: softmax) of one row / column in double:
 * out[i * st]. */
static void lsm_oracle(const void *x, tb_dtype t, int64_t n, int64_t st,
                       double *out, bool soft)
{
    double m = -INFINITY;
    for (int64_t i = 0; i < n; i++)
        m = fmax(m, get(x, t, i * st));
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += exp(get(x, t, i * st) - m);
    for (int64_t i = 0; i < n; i++)
        out[i] = soft ? exp(get(x, t, i * st) - m) / s
                      : get(x, t, i * st) - m - log(s);
}

/* log_softmax (soft false) or softmax rows and columns against a double
 * oracle, with the op's own tolerance (f32: 2e-6 sqrt(n) + 1e-5
 * |want|); -inf entries must give -inf (softmax: exactly 0), and a row
 * of only -inf gives NaN everywhere.  Rows of 16 and more take the
 * short-row block path for n <= 32 (a lane per row; f64: n <= 16, 4 or
 * 8 rows a block); the 40-row cases put logits up to 4e4 (exp
 * overflows past 88.7 in f32), a row of -inf and a row of equal values
 * into those blocks. */
static void check_log_softmax(bool soft)
{
    const int nl = tables();
    const tb_op *op = tb_op_get(soft ? TB_OP_softmax : TB_OP_log_softmax);
    for (int l = 0; l < nl; l++)
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
            const tb_dtype t = (tb_dtype)dt;
            const size_t es = tb_dtype_size(t);
            const tb_tol tol = op->tol[t];
            /* every n of the short rows' instances (one each) */
            static const int64_t ns[] = {1,  2,  3,  4,  5,  6,   7,
                                         8,  9,  10, 11, 12, 13,  14,
                                         15, 16, 17, 513, 1025, 2500};
            static const int64_t rowss[] = {0, 1, 5, 17, 40};
            for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
                for (size_t ri = 0; ri < sizeof rowss / sizeof rowss[0];
                     ri++) {
                    const int64_t n = ns[ni], rows = rowss[ri];
                    if (n * rows > 20000)
                        continue;
                    rng_seed((uint64_t)(dt * 1000 + ni * 10 + ri));
                    gbuf gx, go;
                    void *x = gb_new(&gx, (size_t)(n * rows) * es, misalign(t));
                    void *o = gb_new(&go, (size_t)(n * rows) * es, misalign(t));
                    for (int64_t i = 0; i < n * rows; i++) {
                        double v = rng_uniform(-30, 30);
                        /* a few -inf entries: they give -inf */
                        if ((rng_next() & 63) == 0)
                            v = -INFINITY;
                        /* large logits in the 40-row blocks (a plain
                         * exp overflows); row 3 all -inf there (NaN);
                         * row 6 all of one large value (1 / n) */
                        if (rows == 40) {
                            const int64_t r = i / n;
                            v += 20000.0 * (double)(r % 3);
                            if (r == 3)
                                v = -INFINITY;
                            if (r == 6)
                                v = 88.5;
                        }
                        if (t == TB_F32)
                            ((float *)x)[i] = (float)v;
                        else
                            ((double *)x)[i] = v;
                    }
                    if (soft)
                        tab[l].sm[dt].rows(x, o, rows, n);
                    else
                        tab[l].lsm[dt].rows(x, o, rows, n);
                    double want[2500];
                    for (int64_t r = 0; r < rows; r++) {
                        lsm_oracle((const char *)x + (size_t)(r * n) * es, t,
                                   n, 1, want, soft);
                        for (int64_t i = 0; i < n; i++) {
                            double got = get(o, t, r * n + i);
                            bool ok =
                                isnan(want[i])   ? isnan(got)
                                : isinf(want[i]) ? got == want[i]
                                                 : fabs(got - want[i]) <=
                                                       tol.atol *
                                                               sqrt((double)n) +
                                                           tol.rtol *
                                                               fabs(want[i]);
                            if (!ok)
                                print_error("%s_%s rows level %s "
                                            "n=%lld row %lld [%lld]: got "
                                            "%.9g want %.9g\n",
                                            op->name, tb_dtype_name(t),
                                            tb_cpu_isa_name(l), (long long)n,
                                            (long long)r, (long long)i, got,
                                            want[i]);
                            assert_true(ok);
                        }
                    }
                    assert_true(gb_intact(&gx) && gb_intact(&go));
                    gb_free(&gx);
                    gb_free(&go);
                }
            /* columns */
            static const int64_t Rs[] = {1, 7, 64, 65, 150};
            static const int64_t ws[] = {0, 1, 7, 16, 17, 33, 100};
            for (size_t ri = 0; ri < sizeof Rs / sizeof Rs[0]; ri++)
                for (size_t wi = 0; wi < sizeof ws / sizeof ws[0]; wi++) {
                    const int64_t R = Rs[ri], w = ws[wi], ld = w + 5;
                    rng_seed((uint64_t)(dt * 7777 + ri * 10 + wi));
                    gbuf gx, go;
                    void *x = gb_new(&gx, (size_t)(R * ld) * es, misalign(t));
                    void *o = gb_new(&go, (size_t)(R * ld) * es, misalign(t));
                    fill(x, t, R * ld, false);
                    memcpy(o, x, (size_t)(R * ld) * es);
                    if (soft)
                        tab[l].sm[dt].cols(x, o, R, ld, w);
                    else
                        tab[l].lsm[dt].cols(x, o, R, ld, w);
                    double want[200];
                    for (int64_t j = 0; j < w; j++) {
                        lsm_oracle((const char *)x + (size_t)j * es, t, R,
                                   ld, want, soft);
                        for (int64_t r = 0; r < R; r++)
                            assert_true(fabs(get(o, t, r * ld + j) - want[r]) <=
                                        tol.atol * sqrt((double)R) +
                                            tol.rtol * fabs(want[r]));
                    }
                    /* the gaps between rows (j >= w) are not written */
                    for (int64_t r = 0; r < R; r++)
                        for (int64_t j = w; j < ld; j++)
                            assert_true(same(get(o, t, r * ld + j),
                                             get(x, t, r * ld + j)));
                    assert_true(gb_intact(&gx) && gb_intact(&go));
                    gb_free(&gx);
                    gb_free(&go);
                }
        }
}

void test_kernel_log_softmax(void **state)
{
    (void)state;
    check_log_softmax(false);
}

void test_kernel_softmax(void **state)
{
    (void)state;
    check_log_softmax(true);
}

/* Rows that exercise the online merge: -inf blocks before and after
 * finite ones, a NaN hidden among -inf, all -inf, +inf; log_softmax
 * (soft false) or softmax, where -inf gives 0 and the lone finite
 * value of case 4 gives 1. */
static void check_log_softmax_special(bool soft)
{
    const int nl = tables();
    enum { N = 3000 }; /* three 1024-value blocks */
    static float x[N], o[N];
    for (int l = 0; l < nl; l++)
        for (int c = 0; c < 5; c++) {
            for (int i = 0; i < N; i++)
                x[i] = -INFINITY;
            if (c == 0 || c == 1)
                for (int i = 1100; i < 1200; i++)
                    x[i] = (float)(i % 7);
            if (c == 1)
                x[2500] = NAN; /* in an otherwise -inf block */
            if (c == 3)
                x[5] = INFINITY;
            if (c == 4)
                x[2999] = 1.0f;
            if (soft)
                tab[l].sm[TB_F32].rows(x, o, 1, N);
            else
                tab[l].lsm[TB_F32].rows(x, o, 1, N);
            const float lo = soft ? 0.0f : -INFINITY;
            for (int i = 0; i < N; i++) {
                bool ok;
                if (c == 0)
                    ok = i >= 1100 && i < 1200 ? isfinite(o[i]) && o[i] != lo
                                               : o[i] == lo;
                else if (c == 4)
                    ok = i == 2999 ? o[i] == (soft ? 1.0f : 0.0f)
                                   : o[i] == lo;
                else
                    ok = isnan(o[i]); /* NaN, all -inf, +inf */
                if (!ok)
                    print_error("level %s case %d [%d] = %g\n",
                                tb_cpu_isa_name(l), c, i, (double)o[i]);
                assert_true(ok);
            }
        }
}

void test_kernel_log_softmax_special(void **state)
{
    (void)state;
    check_log_softmax_special(false);
}

void test_kernel_softmax_special(void **state)
{
    (void)state;
    check_log_softmax_special(true);
}

/* Transpose blocks: exact bit copies. */
void test_kernel_transpose(void **state)
{
    (void)state;
    const int nl = tables();
    for (int l = 0; l < nl; l++)
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
            const tb_dtype t = (tb_dtype)dt;
            const size_t es = tb_dtype_size(t);
            const int tile = tab[l].tr[dt].tile;
            assert_true(tile >= 1);
            static const int64_t njs[] = {0, 1, 3, 4, 7, 8, 9, 17, 64, 513};
            for (int ni = 0; ni <= tile; ni++)
                for (size_t k = 0; k < sizeof njs / sizeof njs[0]; k++) {
                    const int64_t nj = njs[k], ild = nj + 3, old = tile + 2;
                    rng_seed((uint64_t)(dt * 1000 + ni * 20 + (int)k));
                    gbuf gi, go;
                    void *in = gb_new(&gi, (size_t)(ni * ild) * es, misalign(t));
                    void *out = gb_new(&go, (size_t)(nj * old) * es, misalign(t));
                    fill(in, t, ni * ild, true);
                    memset(out, 0x3c, (size_t)(nj * old) * es);
                    tab[l].tr[dt].block(in, ild, out, old, ni, nj);
                    for (int64_t j = 0; j < nj; j++) {
                        for (int64_t i = 0; i < ni; i++)
                            assert_memory_equal(
                                (char *)out + (size_t)(j * old + i) * es,
                                (char *)in + (size_t)(i * ild + j) * es, es);
                        /* columns ni.. of the output row untouched */
                        for (int64_t i = ni; i < old; i++)
                            assert_int_equal(
                                ((unsigned char *)out)[(size_t)(j * old + i) * es],
                                0x3c);
                    }
                    assert_true(gb_intact(&gi) && gb_intact(&go));
                    gb_free(&gi);
                    gb_free(&go);
                }
        }
}

/* The non-temporal transpose blocks (block_nt): the misaligned strips
 * above take their plain path; here 64-byte aligned rows and pitches,
 * where the streaming stores run, and odd tails beside them. */
void test_kernel_transpose_nt(void **state)
{
    (void)state;
    const int nl = tables();
    for (int l = 0; l < nl; l++)
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
            const tb_dtype t = (tb_dtype)dt;
            const size_t es = tb_dtype_size(t);
            const int tile = tab[l].tr[dt].tile;
            assert_non_null(tab[l].tr[dt].block_nt);
            static const int64_t njs[] = {16, 17, 48, 61};
            for (size_t k = 0; k < sizeof njs / sizeof njs[0]; k++)
                for (int ni = tile - 1; ni <= tile; ni++) {
                    const int64_t nj = njs[k], ild = nj + 5;
                    const int64_t old = 64 / (int64_t)es * 2; /* 128 B */
                    rng_seed((uint64_t)(l * 100 + dt * 10 + (int)k));
                    gbuf gi, go;
                    void *in = gb_new(&gi, (size_t)(ni * ild) * es, 0);
                    void *out = gb_new(&go, (size_t)(nj * old) * es, 0);
                    fill(in, t, ni * ild, true);
                    memset(out, 0x3c, (size_t)(nj * old) * es);
                    tab[l].tr[dt].block_nt(in, ild, out, old, ni, nj);
                    __atomic_thread_fence(__ATOMIC_SEQ_CST);
                    for (int64_t j = 0; j < nj; j++) {
                        for (int64_t i = 0; i < ni; i++)
                            assert_memory_equal(
                                (char *)out + (size_t)(j * old + i) * es,
                                (char *)in + (size_t)(i * ild + j) * es, es);
                        for (int64_t i = ni; i < old; i++)
                            assert_int_equal(
                                ((unsigned char *)out)[(size_t)(j * old + i) * es],
                                0x3c);
                    }
                    assert_true(gb_intact(&gi) && gb_intact(&go));
                    gb_free(&gi);
                    gb_free(&go);
                }
        }
}

/* The plane transposers of transpose and permute (transpose.h) at every
 * level and element size (2, 4, 8 bytes): sides around the tiles and
 * blocks (1, 15, 17, 1023, 1025 and their neighbours; non-square;
 * pitches of 4 KiB multiples with partial tiles),
 * pitches beyond the extents, misaligned canary-guarded buffers, and
 * 64-byte aligned rows with nt set (the streaming copy-out); batches of
 * nb planes, one after the other with gaps, or interleaved row by row as
 * permute's (inter: ild = nb * (nj + ipad), ibs = nj + ipad and the same
 * on the output side), small planes and planes beyond transpose_simd.h's
 * TP_BATCH_PLANE: bit for bit the index loop out[k * obs + j * old +
 * i] = in[k * ibs + i * ild + j], the rest of the output untouched. */
static int tp_plane_case(tb_cpu_tp_fn fn, size_t es, int64_t ni, int64_t nj,
                         int64_t ipad, int64_t opad, int nt, uint64_t salt,
                         int64_t nb, int inter)
{
    int64_t ild = nj + ipad, old = ni + opad, ibs = 0, obs = 0, isz, osz;
    if (inter) {
        ibs = ild;
        obs = old;
        ild *= nb;
        old *= nb;
        isz = ni * ild;
        osz = nj * old;
    } else {
        ibs = ni * ild + 3;
        obs = nj * old + 5;
        isz = (nb - 1) * ibs + ni * ild;
        osz = (nb - 1) * obs + nj * old;
    }
    rng_seed(salt);
    gbuf gi, go;
    /* misaligned by whole elements (an element's own alignment kept):
     * 4 bytes for 2- and 4-byte values, 8 for 8-byte ones */
    const size_t mis = misalign(es == 8 ? TB_F64 : TB_F32);
    unsigned char *in = gb_new(&gi, (size_t)isz * es, nt ? 0 : mis);
    unsigned char *out = gb_new(&go, (size_t)osz * es, nt ? 0 : 2 * mis);
    unsigned char *want = malloc((size_t)osz * es);
    assert_non_null(want);
    for (size_t k = 0; k < (size_t)isz * es; k++)
        in[k] = (unsigned char)rng_next();
    memset(out, 0x3c, (size_t)osz * es);
    memset(want, 0x3c, (size_t)osz * es);
    for (int64_t k = 0; k < nb; k++)
        for (int64_t j = 0; j < nj; j++)
            for (int64_t i = 0; i < ni; i++)
                memcpy(want + (size_t)(k * obs + j * old + i) * es,
                       in + (size_t)(k * ibs + i * ild + j) * es, es);
    fn(in, ild, out, old, ni, nj, nb, ibs, obs, nt);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    int64_t bad = 0;
    for (int64_t e = 0; e < osz; e++)
        if (memcmp(out + (size_t)e * es, want + (size_t)e * es, es) &&
            bad++ < 3)
            print_error("esz %zu %lldx%lld x %lld planes%s (pitches %lld, "
                        "%lld) nt %d: output element %lld wrong\n",
                        es, (long long)ni, (long long)nj, (long long)nb,
                        inter ? " interleaved" : "", (long long)ild,
                        (long long)old, nt, (long long)e);
    const bool intact = gb_intact(&gi) && gb_intact(&go);
    free(want);
    gb_free(&gi);
    gb_free(&go);
    return bad || !intact;
}

void test_tp_planes(void **state)
{
    (void)state;
    static const int64_t sides[] = {1,  2,  7,  8,   15,  16,  17,
                                    31, 33, 63, 64,  65,  127, 128,
                                    129, 255, 256, 257, 300};
    enum { NS = sizeof sides / sizeof sides[0] };
    static const int64_t big[][2] = {{1023, 1025}, {1025, 1023},
                                     {1024, 1024}, {1025, 17},
                                     {15, 1025},   {2, 1023},
                                     {1000, 1000}, {1, 1000},
                                     {1000, 1}};
    const int nl = n_levels();
    int bad = 0;
    for (int l = 0; l < nl; l++)
        for (size_t es = 2; es <= 8; es *= 2) {
            tb_cpu_tp_fn fn = tb_cpu_tp_get(l, es);
            assert_non_null(fn);
            for (int a = 0; a < NS; a++)
                for (int b = 0; b < NS; b++)
                    bad += tp_plane_case(fn, es, sides[a], sides[b],
                                         (a + b) % 3 == 0 ? 0 : 5,
                                         (a * b) % 2 ? 3 : 0, 0,
                                         (uint64_t)(l * 10000 + a * 100 + b),
                                         1, 0);
            for (size_t k = 0; k < sizeof big / sizeof big[0]; k++)
                bad += tp_plane_case(fn, es, big[k][0], big[k][1], 0, 0, 0,
                                     (uint64_t)k, 1, 0);
            /* pitches of 4 KiB multiples (transpose_simd.h's diagonal
             * order) with rows and columns beyond whole tiles, one
             * plane and two */
            bad += tp_plane_case(fn, es, 1000, 1000, 24, 24, 0, 11, 1, 0);
            bad += tp_plane_case(fn, es, 1017, 1009, 15, 7, 0, 12, 2, 0);
            bad += tp_plane_case(fn, es, 500, 1000, 24, 12, 0, 13, 1, 0);
            /* nt: 64-byte aligned output rows (pitch a multiple of 64 B) */
            const int64_t opad = 64 / (int64_t)es;
            bad += tp_plane_case(fn, es, 256 / (int64_t)es * 2, 128,
                                 0, opad, 1, 7, 1, 0);
            bad += tp_plane_case(fn, es, 1024, 300, 0, opad, 1, 8, 1, 0);
            bad += tp_plane_case(fn, es, 1023, 129, 0, opad + 1, 1, 9, 1, 0);
            /* batches: separate planes, and interleaved (permute's) */
            static const int64_t bs[][3] = {{16, 16, 2},  {17, 33, 3},
                                            {64, 128, 5}, {128, 64, 4},
                                            {1, 40, 3},   {40, 1, 3},
                                            {31, 15, 2},  {65, 48, 7},
                                            {1025, 260, 2}};
            for (size_t k = 0; k < sizeof bs / sizeof bs[0]; k++)
                for (int inter = 0; inter < 2; inter++)
                    bad += tp_plane_case(fn, es, bs[k][0], bs[k][1],
                                         (int64_t)k % 2, (int64_t)k % 3, 0,
                                         (uint64_t)(100 + k), bs[k][2],
                                         inter);
        }
    assert_int_equal(bad, 0);
}

/* Pooling, every geometry kind (2x2/2 fast path, gather path with
 * padding and strides below, equal to and above the kernel), 1-3 planes,
 * misaligned and canary-guarded.  max against the portable C version:
 * equal values or both NaN (the inputs hold NaN, +-inf, -0; which zero a
 * tie of -0 and +0 gives is not specified); avg against a double oracle
 * with the bound of a k^2-term float sum (the inputs are finite); f64
 * both bit for bit the C version (zero signs too). */
void test_kernel_pool(void **state)
{
    (void)state;
    const int nl = tables();
    static const int64_t geo[][5] = {
        /* H, W, k, s, pad */
        {24, 24, 2, 2, 0}, {7, 9, 2, 2, 0},   {2, 2, 2, 2, 0},
        {3, 66, 2, 2, 0},  {5, 33, 2, 2, 0},  {2, 513, 2, 2, 0},
        {1, 1, 1, 1, 0},   {9, 37, 3, 1, 1},  {17, 19, 3, 2, 1},
        {16, 40, 2, 2, 1}, {13, 11, 5, 3, 2}, {8, 45, 4, 1, 2},
        {2, 3, 4, 1, 2},   {33, 33, 3, 3, 0}, {12, 12, 2, 1, 0},
        {6, 70, 3, 5, 1},
    };
    for (int l = 0; l < nl; l++)
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++)
            for (size_t gi = 0; gi < sizeof geo / sizeof geo[0]; gi++)
                for (int64_t planes = 1; planes <= 3; planes++)
                    for (int is_max = 0; is_max < 2; is_max++) {
                        const tb_dtype t = (tb_dtype)dt;
                        const size_t es = tb_dtype_size(t);
                        tb_cpu_pool_geom g = {geo[gi][0], geo[gi][1], 0, 0,
                                              geo[gi][2], geo[gi][3],
                                              geo[gi][4]};
                        g.OH = tb_window_out(g.H, g.k, g.s, g.pad, 1);
                        g.OW = tb_window_out(g.W, g.k, g.s, g.pad, 1);
                        assert_true(g.OH >= 1 && g.OW >= 1);
                        const int64_t ni = planes * g.H * g.W;
                        const int64_t no = planes * g.OH * g.OW;
                        rng_seed((uint64_t)(l * 100000 + dt * 10000 +
                                            (int64_t)gi * 100 + planes * 10 +
                                            is_max));
                        gbuf gx, go, gr;
                        void *x = gb_new(&gx, (size_t)ni * es, misalign(t));
                        void *o = gb_new(&go, (size_t)no * es, misalign(t));
                        void *r = gb_new(&gr, (size_t)no * es, misalign(t));
                        fill(x, t, ni, is_max);
                        (is_max ? tab[l].pool[dt].max : tab[l].pool[dt].avg)(
                            x, o, planes, &g);
                        (is_max ? tab_c.pool[dt].max : tab_c.pool[dt].avg)(
                            x, r, planes, &g);
                        const double eps =
                            t == TB_F32 ? FLT_EPSILON : DBL_EPSILON;
                        for (int64_t i = 0; i < no; i++) {
                            const double got = get(o, t, i);
                            bool ok;
                            if (is_max) {
                                const double want = get(r, t, i);
                                /* f64: the C version's bits (its
                                 * rows keep a tie's first zero) */
                                ok = isnan(want) ? isnan(got)
                                                 : got == want &&
                                                       (t != TB_F64 ||
                                                        signbit(got) ==
                                                            signbit(want));
                            } else {
                                const int64_t pl = i / (g.OH * g.OW);
                                const int64_t oh = i / g.OW % g.OH;
                                const int64_t ow = i % g.OW;
                                double sum = 0, sabs = 0;
                                for (int64_t a = 0; a < g.k; a++)
                                    for (int64_t b = 0; b < g.k; b++) {
                                        const int64_t h = oh * g.s - g.pad + a;
                                        const int64_t w = ow * g.s - g.pad + b;
                                        if (h < 0 || h >= g.H || w < 0 ||
                                            w >= g.W)
                                            continue;
                                        const double v = get(
                                            x, t, (pl * g.H + h) * g.W + w);
                                        sum += v;
                                        sabs += fabs(v);
                                    }
                                const double kk = (double)(g.k * g.k);
                                ok = fabs(got - sum / kk) <=
                                     (kk + 2) * eps * sabs / kk;
                                /* f64: the C version's operations in
                                 * its order, so its bits */
                                if (t == TB_F64)
                                    ok = ok && got == get(r, t, i) &&
                                         signbit(got) ==
                                             signbit(get(r, t, i));
                            }
                            if (!ok)
                                print_error("%s_pool2d_%s level %s geometry "
                                            "%zu planes %lld [%lld]: got "
                                            "%.9g, C gives %.9g\n",
                                            is_max ? "max" : "avg",
                                            tb_dtype_name(t),
                                            tb_cpu_isa_name(l), gi,
                                            (long long)planes, (long long)i,
                                            got, get(r, t, i));
                            assert_true(ok);
                        }
                        assert_true(gb_intact(&gx) && gb_intact(&go) &&
                                    gb_intact(&gr));
                        gb_free(&gx);
                        gb_free(&go);
                        gb_free(&gr);
                    }
    /* NaN and -inf in every position of a 2x2 and a 3x3 window: the
     * output is NaN whenever its window holds a NaN, -inf never wins
     * over a finite value. */
    for (int l = 0; l < nl; l++)
        for (int kk = 2; kk <= 3; kk++)
            for (int pos = 0; pos < 2 * kk * 2 * kk; pos++) {
                float x[36], o[4];
                for (int i = 0; i < 36; i++)
                    x[i] = (float)i;
                const tb_cpu_pool_geom g = {2 * kk, 2 * kk, 2, 2, kk, kk, 0};
                x[pos] = NAN;
                x[(pos + 1) % (4 * kk * kk)] = -INFINITY;
                tab[l].pool[TB_F32].max(x, o, 1, &g);
                const int wh = (pos / (2 * kk)) / kk, ww = (pos % (2 * kk)) / kk;
                for (int q = 0; q < 4; q++) {
                    const bool nan_here = q == wh * 2 + ww;
                    assert_true(nan_here ? isnan(o[q]) : isfinite(o[q]));
                }
            }
}

/* f64 max pooling on x from {-1, -0, +0, 1} (every other plane with NaN
 * too): ties of zeros in NaN-free and NaN vectors, 2x2/2 (a lane tail)
 * and 3x3/1 padded windows, at every level bit for bit the C version
 * (NaN as NaN). */
void test_kernel_pool_ties(void **state)
{
    (void)state;
    const int nl = tables();
    static const double xs[] = {-1.0, -0.0, 0.0, 1.0, NAN};
    static const int64_t geo[][5] = {{6, 38, 2, 2, 0}, {7, 9, 3, 1, 1}};
    enum { PL = 4 };
    double x[PL * 7 * 38], o[PL * 7 * 38], r[PL * 7 * 38];
    rng_seed(777);
    for (int l = 0; l < nl; l++)
        for (int gi = 0; gi < 2; gi++) {
            tb_cpu_pool_geom g = {geo[gi][0], geo[gi][1], 0, 0,
                                  geo[gi][2], geo[gi][3], geo[gi][4]};
            g.OH = tb_window_out(g.H, g.k, g.s, g.pad, 1);
            g.OW = tb_window_out(g.W, g.k, g.s, g.pad, 1);
            for (int64_t i = 0; i < PL * g.H * g.W; i++)
                x[i] = xs[rng_next() % (i / (g.H * g.W) % 2 ? 5 : 4)];
            tab[l].pool[TB_F64].max(x, o, PL, &g);
            tab_c.pool[TB_F64].max(x, r, PL, &g);
            for (int64_t i = 0; i < PL * g.OH * g.OW; i++) {
                if (!same(o[i], r[i]))
                    print_error("max_pool2d_f64 level %s geometry %d [%lld]: "
                                "got %g, C gives %g\n",
                                tb_cpu_isa_name(l), gi, (long long)i, o[i],
                                r[i]);
                assert_true(same(o[i], r[i]));
            }
        }
}

/* Zero sizes: nothing is read or written (canaries), sums are 0, and
 * matmul rows with K = 0 are zeroed. */
void test_kernel_zero(void **state)
{
    (void)state;
    const int nl = tables();
    for (int l = 0; l < nl; l++)
        for (int dt = 0; dt < TB_DTYPE_FULL_COUNT; dt++) {
            const tb_dtype t = (tb_dtype)dt;
            gbuf ga, gb, go;
            void *a = gb_new(&ga, 0, misalign(t));
            void *b = gb_new(&gb, 0, misalign(t));
            void *o = gb_new(&go, 0, misalign(t));
            for (int op = 0; op < TB_CPU_NBIN; op++) {
                tab[l].bin[op][dt].vv(a, b, o, 0);
                tab[l].bin[op][dt].sv(a, b, o, 0);
                tab[l].bin[op][dt].vs(a, b, o, 0);
                tab[l].bin[op][dt].vv_nt(a, b, o, 0);
            }
            tab[l].relu[dt].fn(a, o, 0);
            tab[l].relu[dt].fn_nt(a, o, 0);
            tab[l].sm[dt].rows(a, o, 0, 9);
            tab[l].sm[dt].cols(a, o, 9, 3, 0);
            assert_true(tab[l].sum[dt].row(a, 0) == 0.0);
            double acc[4] = {1, 2, 3, 4};
            tab[l].sum[dt].cols(a, 0, 5, 4, acc);
            tab[l].sum[dt].cols(a, 5, 5, 0, acc);
            assert_true(acc[0] == 1 && acc[3] == 4);
            tab[l].lsm[dt].rows(a, o, 0, 9);
            tab[l].lsm[dt].cols(a, o, 9, 3, 0);
            tab[l].tr[dt].block(a, 4, o, 4, 0, 9);
            tab[l].tr[dt].block(a, 4, o, 4, 3, 0);
            tab[l].mm[dt].rows(a, b, o, 3, 3, 4, 5);
            assert_true(gb_intact(&ga) && gb_intact(&gb) && gb_intact(&go));
            gb_free(&go);
            /* K = 0: C = 0 */
            const size_t es = tb_dtype_size(t);
            void *c = gb_new(&go, 6 * es, misalign(t));
            memset(c, 0x7f, 6 * es);
            tab[l].mm[dt].rows(a, b, c, 0, 2, 0, 3);
            for (int i = 0; i < 6; i++)
                assert_true(get(c, t, i) == 0.0);
            assert_true(gb_intact(&go));
            gb_free(&ga);
            gb_free(&gb);
            gb_free(&go);
        }
    tb_vmath vm;
    for (int l = 0; l < nl; l++) {
        assert_int_equal(tb_vmath_fill(&vm, l), l);
        for (int f = 0; f < TB_VM_COUNT; f++) {
            gbuf gx, gy;
            float *x = gb_new(&gx, 0, 4), *y = gb_new(&gy, 0, 4);
            vm.fn[f](x, y, 0);
            vm.fn_nt[f](x, y, 0);
            assert_true(gb_intact(&gx) && gb_intact(&gy));
            gb_free(&gx);
            gb_free(&gy);
        }
    }
}

