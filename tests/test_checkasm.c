/* checkasm-style tests of the cpu backend's SIMD dispatch (model: dav1d
 * tests/checkasm): every kernel at every ISA level this machine has.
 *
 *  1. isa_*: detection, the mask that lowers the level (what TBENCH_ISA
 *     and the isa axis use), TBENCH_ISA itself (checked in a child
 *     process, since the level is read once per process), and that a
 *     table filled for a level really holds that level's code.
 *  2. kernel_*: the inner loops of each table (kernels.h) called
 *     directly at every level, on sizes 0, 1, 7, 15, 17, 513 and a few
 *     beyond the 1024-value blocks, with inputs and outputs offset from
 *     an aligned tracked buffer (4 bytes for f32, 8 for f64: a double
 *     must stay 8-byte aligned in C) and canary bytes before and after
 *     every buffer.  Element-wise ops must match the portable C version
 *     bit for bit (both are correctly rounded IEEE operations; add_relu,
 *     one rounded add then relu, is also checked at every level against
 *     its definition, special values included); sums and
 *     log_softmax are checked against a double-precision oracle with a
 *     stated bound.
 *  3. op_*: every op the cpu backend runs itself, through the backend
 *     interface, at every isa value (levels and auto) and every thread
 *     count, on misaligned canary-guarded tensors, against the reference
 *     kernel (op->ref) with the op's tolerance (exact where the op is
 *     exact or correctly rounded).  Zero-size tensors are covered in 2
 *     (the op table rejects 0-dims).
 *  4. vmath_*: the f32 math functions (vmath.h) against libm in double
 *     over a dense strided sweep of all 2^32 bit patterns (every 1031st,
 *     by default, plus 2^18 random inputs in [-30, 30]; --vmath-stride N
 *     changes the stride, --vmath-exhaustive checks every float), each
 *     level against its documented ULP bound; AVX2 and AVX-512 must agree
 *     bit for bit, and so must the exp core's fast and general paths;
 *     special values; sizes, misalignment, canaries and in-place calls.
 *  6. rand_*: the random creation ops and arange at every isa value and
 *     thread count, odd sizes, misaligned canary-guarded outputs, bit
 *     for bit the reference (rand.h's stream); and the error bound of
 *     rand_normal f32's vector log/cos/sin against libm on all 2^24
 *     inputs of the f32 stream (rand_simd.h).
 *     pow_*: pow f32's SIMD rows, special values bit for bit powf's,
 *     and their ulp bound on six families of inputs (pow_simd_impl.h),
 *     and at every size to 300 with slow lanes along the loop.
 *     permute_tiled: permute's tiled path against the reference.
 *     f64_ulp: exp and log f64's SIMD rows against long double libm
 *     (f64_simd_impl.h); op_exp and op_log run them in f64 too;
 *     xs_reduce_special_f64: the f64 max/min/argmax rows' NaN and
 *     signed-zero rules against the portable row.
 *  6. bw_act_sweep: the SIMD rows of sigmoid/tanh/gelu_backward
 *     (bwd_simd_impl.h) over the same sweep with g = 1 against the
 *     derivative in double, each against its stated ulp bound, AVX2 and
 *     AVX-512 bit for bit.
 *     bw_pool_special: max_pool2d_backward's SIMD rows on ties, NaN and
 *     signed zeros, bit for bit the portable row.
 *
 * Inputs come from a seeded generator; the seed is printed (--seed N to
 * repeat a run).  --filter PATTERN runs matching tests only, e.g.
 * test_checkasm --filter 'op_log_softmax*'. */
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

#include "testutil.h"

#include "backends/backend.h"
#include "backends/cpu/isa.h"
#include "backends/cpu/kernels.h"
#include "backends/cpu/kreg.h"
#include "backends/cpu/ops_simd.h"
#include "backends/cpu/rand_simd.h"
#include "backends/cpu/vmath.h"
#include "ops/alloc.h"
#include "base/error.h"
#include "ops/op.h"
#include "ops/rand.h"
#include "ops/tensor.h"

extern const tb_backend tb_backend_cpu;
static const tb_backend *const B = &tb_backend_cpu;

static uint64_t seed = UINT64_C(0x5eed0c4ec4a5a001);
static uint64_t vm_stride = 1031;

/* ---- random numbers ------------------------------------------------------ */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static double rng_uniform(double lo, double hi)
{
    return lo + (hi - lo) * ((double)(rng_next() >> 11) * 0x1.0p-53);
}

static void rng_seed(uint64_t salt)
{
    rng_state = seed ^ (salt * UINT64_C(0x2545f4914f6cdd1d));
}

/* ---- levels -------------------------------------------------------------- */

/* Levels usable here: scalar .. best (CPU, OS, TBENCH_ISA, build). */
static int n_levels(void)
{
    int max = tb_cpu_isa_max();
    while (max > 0 && !tb_cpu_isa_built(max))
        max--;
    return max + 1;
}

/* ---- canary-guarded buffers ---------------------------------------------- */

#define GUARD 64
#define CANARY 0xa5

typedef struct gbuf {
    unsigned char *base;
    size_t total;
    void *p; /* base + GUARD + off */
    size_t nbytes;
    size_t off;
} gbuf;

/* nbytes at GUARD + off bytes into a fresh tracked (64-byte aligned)
 * buffer whose every byte starts as CANARY. */
static void *gb_new(gbuf *g, size_t nbytes, size_t off)
{
    g->total = GUARD + off + nbytes + GUARD;
    g->base = tb_alloc(g->total);
    assert_non_null(g->base);
    memset(g->base, CANARY, g->total);
    g->off = off;
    g->nbytes = nbytes;
    g->p = g->base + GUARD + off;
    return g->p;
}

/* Every byte outside [p, p + nbytes) still CANARY. */
static bool gb_intact(const gbuf *g)
{
    const unsigned char *end = (const unsigned char *)g->p + g->nbytes;
    for (const unsigned char *q = g->base; q < (const unsigned char *)g->p;
         q++)
        if (*q != CANARY)
            return false;
    for (const unsigned char *q = end; q < g->base + g->total; q++)
        if (*q != CANARY)
            return false;
    return true;
}

static void gb_free(gbuf *g)
{
    tb_free(g->base);
    g->base = NULL;
}

/* Misalignment of operands of type dt: off the 64-byte boundary, but
 * still element-aligned. */
static size_t misalign(tb_dtype dt)
{
    return dt == TB_F32 ? 4 : 8;
}

/* Offsets for the streaming-store kernels, whose head runs up to the
 * output's first 64-byte boundary: every element offset in a line over
 * the size index i, 0 (aligned) included. */
static size_t nt_off(tb_dtype dt, int i)
{
    const size_t es = tb_dtype_size(dt);
    return ((size_t)i * 5 * es) % 64;
}

/* Values for element-wise tests: mostly uniform in [-2, 2], with a few
 * special values sprinkled in (-0, +-inf, NaN, subnormals, huge). */
static double test_value(bool specials)
{
    static const double sp[] = {-0.0, 0.0, INFINITY, -INFINITY, NAN,
                                1e-40, -1e-40, 3e38, -3e38, 1.0};
    if (specials && (rng_next() & 15) == 0)
        return sp[rng_next() % (sizeof sp / sizeof sp[0])];
    return rng_uniform(-2, 2);
}

static void fill(void *p, tb_dtype dt, int64_t n, bool specials)
{
    for (int64_t i = 0; i < n; i++) {
        double v = test_value(specials);
        if (dt == TB_F32)
            ((float *)p)[i] = (float)v;
        else
            ((double *)p)[i] = v;
    }
}

static double get(const void *p, tb_dtype dt, int64_t i)
{
    return dt == TB_F32 ? (double)((const float *)p)[i]
                        : ((const double *)p)[i];
}

/* Bitwise equal, or both NaN. */
static bool same(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return a == b && signbit(a) == signbit(b);
}

/* ---- fixtures ------------------------------------------------------------ */

static int setup(void **state)
{
    (void)state;
    leak_mark();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tb_cpu_isa_set_mask(TB_ISA_COUNT - 1);
    return leak_check();
}

/* ========================================================================= */
/* 1. ISA detection, mask, TBENCH_ISA                                        */
/* ========================================================================= */

static void test_isa_detect(void **state)
{
    (void)state;
    unsigned f = tb_cpu_isa_flags();
    int d = tb_cpu_isa_detect();
    assert_true(d >= TB_ISA_SCALAR && d < TB_ISA_COUNT);
    /* Levels imply each other and agree with the flags. */
    assert_int_equal(d >= TB_ISA_AVX2, (f & TB_CPU_FLAG_AVX2) != 0);
    assert_int_equal(d >= TB_ISA_AVX512, (f & TB_CPU_FLAG_AVX512) != 0);
    if (f & TB_CPU_FLAG_AVX512)
        assert_true(f & TB_CPU_FLAG_AVX2);
    assert_true(tb_cpu_isa_max() <= d);
    for (int i = 0; i < TB_ISA_COUNT; i++)
        assert_int_equal(tb_cpu_isa_parse(tb_cpu_isa_name(i)), i);
    assert_int_equal(tb_cpu_isa_parse("auto"), -1);
    assert_int_equal(tb_cpu_isa_parse("AVX2"), -1);
    assert_int_equal(tb_cpu_isa_parse(NULL), -1);
    assert_string_equal(tb_cpu_isa_name(-1), "?");
    assert_string_equal(tb_cpu_isa_name(TB_ISA_COUNT), "?");
    assert_int_equal(tb_cpu_isa_built(TB_ISA_SCALAR), 1);
    assert_int_equal(tb_cpu_isa_built(TB_ISA_COUNT), 0);
    printf("# cpu flags:%s%s%s; detected %s, usable %s\n",
           f & TB_CPU_FLAG_SSE41 ? " sse4.1" : "",
           f & TB_CPU_FLAG_AVX2 ? " avx2+fma" : "",
           f & TB_CPU_FLAG_AVX512 ? " avx512f/bw/dq/vl" : "",
           tb_cpu_isa_name(d), tb_cpu_isa_name(n_levels() - 1));
}

/* The mask lowers the level of new tables and of the backend's axis. */
static void test_isa_mask(void **state)
{
    (void)state;
    const int top = n_levels() - 1;
    for (int m = 0; m <= top; m++) {
        assert_int_equal(tb_cpu_isa_set_mask(m), m);
        assert_int_equal(tb_cpu_isa_max(), m);
        tb_cpu_kernels k;
        tb_vmath vm;
        assert_int_equal(tb_cpu_kernels_fill(&k, TB_ISA_AVX512), m);
        assert_int_equal(tb_vmath_fill(&vm, TB_ISA_AVX512), m);
        /* nothing above the mask was installed */
        for (int d = 0; d < TB_DTYPE_COUNT; d++) {
            for (int b = 0; b < TB_CPU_NBIN; b++)
                assert_true(k.bin[b][d].isa <= m);
            assert_true(k.relu[d].isa <= m && k.sum[d].isa <= m &&
                        k.lsm[d].isa <= m && k.tr[d].isa <= m &&
                        k.mm[d].isa <= m);
        }
        assert_int_equal(k.bin[TB_CPU_ADD][TB_F32].isa, m);
        for (int f = 0; f < TB_VM_COUNT; f++)
            assert_int_equal(vm.isa[f], m);
        /* The backend offers scalar..m and auto = m. */
        tb_axis ax[TB_MAX_AXES];
        assert_int_equal(B->axes(ax, TB_MAX_AXES), 2);
        assert_int_equal(ax[0].n_values, m + 2);
        assert_string_equal(ax[0].values[m], tb_cpu_isa_name(m));
        assert_string_equal(ax[0].values[m + 1], "auto");
        const char *vals[2] = {"auto", "1"};
        void *ctx = NULL;
        char err[256];
        assert_int_equal(B->create(vals, &ctx, err, sizeof err), 0);
        const char *impl = NULL;
        assert_non_null(
            B->kernel(ctx, tb_op_get(TB_OP_add), TB_F32, NULL, &impl));
        char want[64];
        snprintf(want, sizeof want, "add_f32_%s", tb_cpu_isa_name(m));
        assert_string_equal(impl, want);
        B->destroy(ctx);
        /* a level above the mask is refused with a message */
        if (m < top) {
            vals[0] = tb_cpu_isa_name(m + 1);
            ctx = (void *)&ctx;
            assert_int_equal(B->create(vals, &ctx, err, sizeof err),
                             TB_EPARAM);
            assert_null(ctx);
            assert_non_null(strstr(err, "not usable"));
        }
    }
    /* Out-of-range masks clamp; the default mask caps nothing. */
    assert_int_equal(tb_cpu_isa_set_mask(-5), 0);
    assert_int_equal(tb_cpu_isa_set_mask(99), top);
}

/* Runs this program with TBENCH_ISA=value and --isa-report; returns what
 * it printed (the level it uses, and the bad value if any). */
static void isa_report_child(const char *value, char *out, size_t len)
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 1);
        if (value)
            setenv("TBENCH_ISA", value, 1);
        else
            unsetenv("TBENCH_ISA");
        execl("/proc/self/exe", "test_checkasm", "--isa-report",
              (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < len && (r = read(fd[0], out + got, len - 1 - got)) > 0)
        got += (size_t)r;
    out[got] = '\0';
    close(fd[0]);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void test_isa_env(void **state)
{
    (void)state;
    if (access("/proc/self/exe", X_OK) != 0) {
        printf("# no /proc/self/exe: TBENCH_ISA not checked\n");
        return;
    }
    const int d = tb_cpu_isa_detect();
    const struct {
        const char *value;
        int want;
        bool bad;
    } cases[] = {
        {NULL, d, false},
        {"", d, false},
        {"auto", d, false},
        {"scalar", TB_ISA_SCALAR, false},
        {"avx2", d < TB_ISA_AVX2 ? d : TB_ISA_AVX2, false},
        {"avx512", d, false},
        {"avx-512", d, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[256], want[256];
        isa_report_child(cases[i].value, out, sizeof out);
        snprintf(want, sizeof want, "max=%s bad=%s\n",
                 tb_cpu_isa_name(cases[i].want),
                 cases[i].bad ? cases[i].value : "-");
        if (strcmp(out, want) != 0)
            print_error("TBENCH_ISA=%s: got '%s', want '%s'\n",
                        cases[i].value ? cases[i].value : "(unset)", out,
                        want);
        assert_string_equal(out, want);
    }
}

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
static void test_kernel_binary(void **state)
{
    (void)state;
    const int nl = tables();
    for (int l = 0; l < nl; l++)
        for (int op = 0; op < TB_CPU_NBIN; op++)
            for (int dt = 0; dt < TB_DTYPE_COUNT; dt++)
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

/* add_relu's vv, sv, vs and vv_nt at every level (the portable one
 * included) against its definition written out here: a + b rounded to
 * the dtype (in double, exact for f32: a double sum of two floats rounds
 * to the float sum), then x > 0 or NaN ? x : +0.  Bitwise, with the
 * special values (-0, inf - inf, NaN, overflow to inf) in the inputs;
 * canaries intact. */
static void test_kernel_add_relu(void **state)
{
    (void)state;
    const int nl = tables();
    for (int l = 0; l < nl; l++)
        for (int dt = 0; dt < TB_DTYPE_COUNT; dt++)
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
static void test_kernel_relu(void **state)
{
    (void)state;
    const int nl = tables();
    for (int l = 0; l < nl; l++)
        for (int dt = 0; dt < TB_DTYPE_COUNT; dt++)
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
static void test_kernel_sum(void **state)
{
    (void)state;
    const int nl = tables();
    for (int l = 0; l < nl; l++)
        for (int dt = 0; dt < TB_DTYPE_COUNT; dt++) {
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
            /* 1031: above KS_SUM_STRIP_ROWS, the row-by-row form;
             * widths beyond TB_CPU_COL_TILE up to TB_CPU_SUM_COL_TILE
             * (a whole row per tile) with a few row counts only */
            static const int64_t Rs[] = {1, 7, 64, 65, 200, 1031};
            static const int64_t ws[] = {0,    1,    7,    17,
                                         64,   65,   300,  1024,
                                         4099, TB_CPU_SUM_COL_TILE};
            for (size_t ri = 0; ri < sizeof Rs / sizeof Rs[0]; ri++)
                for (size_t wi = 0; wi < sizeof ws / sizeof ws[0]; wi++) {
                    const int64_t R = Rs[ri], w = ws[wi], ld = w + 3;
                    if (w > TB_CPU_COL_TILE && R != 7 && R != 65 &&
                        R != 1031)
                        continue;
                    rng_seed((uint64_t)(dt * 1000 + ri * 10 + wi));
                    gbuf gx;
                    void *x = gb_new(&gx, (size_t)(R * ld) * es, misalign(t));
                    fill(x, t, R * ld, false);
                    double acc[TB_CPU_SUM_COL_TILE + 1];
                    for (int64_t j = 0; j <= w; j++)
                        acc[j] = 0.25; /* added to, not overwritten */
                    tab[l].sum[dt].cols(x, R, ld, w, acc);
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
 * short-row block path for n <= 32 (a lane per row). */
static void check_log_softmax(bool soft)
{
    const int nl = tables();
    const tb_op *op = tb_op_get(soft ? TB_OP_softmax : TB_OP_log_softmax);
    for (int l = 0; l < nl; l++)
        for (int dt = 0; dt < TB_DTYPE_COUNT; dt++) {
            const tb_dtype t = (tb_dtype)dt;
            const size_t es = tb_dtype_size(t);
            const tb_tol tol = op->tol[t];
            static const int64_t ns[] = {1, 7, 8, 10, 15, 16, 17, 513, 1025, 2500};
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

static void test_kernel_log_softmax(void **state)
{
    (void)state;
    check_log_softmax(false);
}

static void test_kernel_softmax(void **state)
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

static void test_kernel_log_softmax_special(void **state)
{
    (void)state;
    check_log_softmax_special(false);
}

static void test_kernel_softmax_special(void **state)
{
    (void)state;
    check_log_softmax_special(true);
}

/* Transpose blocks: exact bit copies. */
static void test_kernel_transpose(void **state)
{
    (void)state;
    const int nl = tables();
    for (int l = 0; l < nl; l++)
        for (int dt = 0; dt < TB_DTYPE_COUNT; dt++) {
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
static void test_kernel_transpose_nt(void **state)
{
    (void)state;
    const int nl = tables();
    for (int l = 0; l < nl; l++)
        for (int dt = 0; dt < TB_DTYPE_COUNT; dt++) {
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

/* Pooling, every geometry kind (2x2/2 fast path, gather path with
 * padding and strides below, equal to and above the kernel), 1-3 planes,
 * misaligned and canary-guarded.  max against the portable C version:
 * equal values or both NaN (the inputs hold NaN, +-inf, -0; which zero a
 * tie of -0 and +0 gives is not specified); avg against a double oracle
 * with the bound of a k^2-term float sum (the inputs are finite). */
static void test_kernel_pool(void **state)
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
        for (int dt = 0; dt < TB_DTYPE_COUNT; dt++)
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
                                ok = isnan(want) ? isnan(got) : got == want;
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

/* Zero sizes: nothing is read or written (canaries), sums are 0, and
 * matmul rows with K = 0 are zeroed. */
static void test_kernel_zero(void **state)
{
    (void)state;
    const int nl = tables();
    for (int l = 0; l < nl; l++)
        for (int dt = 0; dt < TB_DTYPE_COUNT; dt++) {
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

/* ========================================================================= */
/* 3. Ops through the backend: every isa value, every thread count           */
/* ========================================================================= */

typedef struct ocase {
    int n_in;
    tb_shape in[3];
    const char *pn[3];
    double pv[3];
} ocase;

static tb_shape S(int nd, ...)
{
    tb_shape s = {.ndim = nd};
    va_list ap;
    va_start(ap, nd);
    for (int i = 0; i < nd; i++)
        s.dim[i] = va_arg(ap, int);
    va_end(ap);
    return s;
}

#define MAXC 32

static int op_cases(tb_op_id id, ocase *c)
{
    int n = 0;
#define ADD1(a) c[n++] = (ocase){1, {a}, {NULL}, {0}}
#define ADD2(a, b) c[n++] = (ocase){2, {a, b}, {NULL}, {0}}
#define ADD3(a, b, d) c[n++] = (ocase){3, {a, b, d}, {NULL}, {0}}
    /* conv2d(_nobias): x, w (+ b [O]) with stride, padding, dilation */
#define CONV(x, w, o, s, p, d)                                            \
    c[n++] = (ocase){id == TB_OP_conv2d ? 3 : 2,                          \
                     {x, w, S(1, o)},                                     \
                     {"stride", "padding", "dilation"},                   \
                     {s, p, d}}
#define ADDP(a, n0, v0) c[n++] = (ocase){1, {a}, {n0}, {v0}}
#define ADDPP(a, n0, v0, n1, v1) c[n++] = (ocase){1, {a}, {n0, n1}, {v0, v1}}
#define POOL(a, k, s, p)                                                  \
    c[n++] = (ocase){1, {a}, {"kernel", s ? "stride" : "padding",         \
                              s ? "padding" : NULL},                      \
                     {k, s ? s : p, p}}
    static const int lens[] = {1, 7, 15, 17, 513, 70001};
    switch (id) {
    case TB_OP_add:
    case TB_OP_sub:
    case TB_OP_mul:
    case TB_OP_div:
    case TB_OP_add_relu:
        for (int i = 0; i < 6; i++)
            ADD2(S(1, lens[i]), S(1, lens[i]));
        ADD2(S(3, 3, 5, 7), S(3, 3, 5, 7));
        ADD2(S(2, 17, 513), S(1, 513));
        ADD2(S(2, 17, 513), S(2, 17, 1));
        ADD2(S(1, 1), S(1, 513));
        ADD2(S(1, 513), S(1, 1));
        ADD2(S(3, 5, 1, 7), S(3, 1, 3, 7));
        ADD2(S(2, 300, 301), S(1, 301));
        /* Working set (3 x 4 x 5.6M bytes, 64.1 MiB at f32) above the
         * cpu backend's streaming-store threshold (CPU_EW_NT_BYTES),
         * misaligned like every case here: the _nt kernels end to
         * end. */
        if (id == TB_OP_add || id == TB_OP_add_relu)
            ADD2(S(1, 5600000), S(1, 5600000));
        break;
    case TB_OP_relu:
    case TB_OP_exp:
    case TB_OP_log:
    case TB_OP_tanh:
    case TB_OP_sigmoid:
    case TB_OP_gelu:
    case TB_OP_gelu_tanh:
    case TB_OP_silu:
        for (int i = 0; i < 6; i++)
            ADD1(S(1, lens[i]));
        ADD1(S(3, 3, 5, 7));
        /* 2 x 4 x 8.4M bytes, above the streaming-store threshold */
        if (id == TB_OP_relu || id == TB_OP_exp)
            ADD1(S(1, 8400000));
        break;
    case TB_OP_sum:
    case TB_OP_mean:
        for (int i = 0; i < 6; i++)
            ADD1(S(1, lens[i]));
        ADD1(S(1, 200003));
        ADDP(S(2, 17, 513), "axis", 0);
        ADDP(S(2, 17, 513), "axis", 1);
        ADDP(S(2, 513, 17), "axis", 0);
        ADDP(S(2, 513, 17), "axis", -1);
        ADDPP(S(3, 3, 5, 7), "axis", 1, "keepdim", 1);
        ADDP(S(3, 2, 1030, 3), "axis", 1);
        ADDP(S(2, 4, 2100), "axis", 1);
        ADDP(S(2, 300, 301), "axis", 0);
        break;
    case TB_OP_log_softmax:
    case TB_OP_softmax:
        for (int i = 0; i < 5; i++)
            ADD1(S(1, lens[i]));
        ADD1(S(1, 2500));
        ADD1(S(2, 4096, 10));
        ADD1(S(2, 33, 17));
        ADDP(S(2, 17, 513), "axis", 0);
        ADDP(S(3, 3, 70, 5), "axis", 1);
        ADDP(S(2, 200, 300), "axis", 0);
        break;
    case TB_OP_transpose:
        ADD1(S(2, 7, 13));
        ADD1(S(2, 17, 513));
        ADD1(S(2, 513, 17));
        ADD1(S(2, 64, 64));
        ADD1(S(2, 301, 300));
        ADDPP(S(3, 3, 5, 7), "dim0", 0, "dim1", 2);
        ADDPP(S(4, 4, 5, 6, 3), "dim0", 1, "dim1", 2);
        ADDPP(S(3, 3, 1, 7), "dim0", 0, "dim1", 1);
        break;
    case TB_OP_max_pool2d:
    case TB_OP_avg_pool2d:
        /* 2x2/2 (the fast path) on even, odd and lane-tail widths, then
         * windows that take the gather path: stride 1, 3 > kernel,
         * padding, 1x1 */
        POOL(S(4, 2, 3, 24, 24), 2, 0, 0);
        POOL(S(4, 1, 2, 7, 9), 2, 0, 0);
        POOL(S(4, 2, 1, 5, 66), 2, 0, 0);
        POOL(S(4, 1, 3, 70, 35), 2, 0, 0);
        POOL(S(4, 3, 2, 3, 2), 2, 0, 0);
        POOL(S(4, 1, 1, 1, 1), 1, 0, 0);
        POOL(S(4, 2, 3, 9, 37), 3, 1, 1);
        POOL(S(4, 1, 2, 17, 19), 3, 2, 1);
        POOL(S(4, 1, 2, 16, 40), 2, 0, 1);
        POOL(S(4, 2, 2, 13, 11), 5, 3, 2);
        POOL(S(4, 1, 1, 8, 45), 4, 1, 2);
        POOL(S(4, 1, 1, 2, 3), 4, 1, 2);
        POOL(S(4, 2, 2, 33, 33), 3, 0, 0);
        POOL(S(4, 4, 5, 12, 12), 2, 1, 0);
        break;
    case TB_OP_matmul:
        ADD2(S(2, 1, 1), S(2, 1, 1));
        ADD2(S(2, 7, 13), S(2, 13, 5));
        ADD2(S(2, 17, 15), S(2, 15, 33));
        ADD2(S(2, 1, 513), S(2, 513, 1));
        ADD2(S(2, 65, 33), S(2, 33, 17));
        ADD2(S(3, 3, 7, 5), S(3, 3, 5, 4));
        ADD2(S(2, 130, 300), S(2, 300, 70));
        ADD2(S(3, 4, 40, 50), S(3, 4, 50, 30));
        break;
    case TB_OP_linear:
        /* x [M, K] @ W [K, N] + b [N]: tails of every micro-tile; K
         * beyond one and two depth blocks (the GEMM's epilogue must
         * follow the last); 130x300x70 and 50x900x47 are above the
         * GEMM's threading threshold (2^21 multiply-adds), so threads=2
         * splits them. */
        ADD3(S(2, 1, 1), S(2, 1, 1), S(1, 1));
        ADD3(S(2, 7, 13), S(2, 13, 5), S(1, 5));
        ADD3(S(2, 17, 15), S(2, 15, 33), S(1, 33));
        ADD3(S(2, 1, 513), S(2, 513, 1), S(1, 1));
        ADD3(S(2, 65, 33), S(2, 33, 17), S(1, 17));
        ADD3(S(2, 13, 1000), S(2, 1000, 50), S(1, 50));
        ADD3(S(2, 130, 300), S(2, 300, 70), S(1, 70));
        ADD3(S(2, 50, 900), S(2, 900, 47), S(1, 47));
        break;
    case TB_OP_conv2d:
    case TB_OP_conv2d_nobias:
        /* im2col + GEMM: 1x1 and 1x1 images, stride beyond the kernel,
         * padding wider than half the kernel (rows and columns wholly
         * in the padding), dilation, non-square kernels; 32 images
         * (split over the threads), one big image (GEMM split over the
         * threads: 32 x 1600 x 144 multiply-adds) */
        CONV(S(4, 2, 1, 7, 9), S(4, 3, 1, 3, 3), 3, 1, 0, 1);
        CONV(S(4, 1, 1, 1, 1), S(4, 2, 1, 1, 1), 2, 1, 0, 1);
        CONV(S(4, 3, 4, 9, 10), S(4, 6, 4, 1, 1), 6, 1, 0, 1);
        CONV(S(4, 1, 3, 17, 19), S(4, 4, 3, 3, 3), 4, 2, 1, 1);
        CONV(S(4, 2, 2, 13, 11), S(4, 5, 2, 3, 2), 5, 3, 2, 2);
        CONV(S(4, 1, 2, 8, 8), S(4, 3, 2, 5, 5), 3, 1, 2, 1);
        CONV(S(4, 2, 1, 5, 5), S(4, 1, 1, 3, 3), 1, 1, 3, 2);
        CONV(S(4, 1, 2, 11, 11), S(4, 2, 2, 2, 2), 2, 3, 0, 1);
        CONV(S(4, 32, 1, 28, 28), S(4, 16, 1, 3, 3), 16, 1, 0, 1);
        CONV(S(4, 1, 16, 40, 40), S(4, 32, 16, 3, 3), 32, 1, 1, 1);
        break;
    case TB_OP_softplus:
    case TB_OP_sqrt:
    case TB_OP_rsqrt:
    case TB_OP_leaky_relu:
        /* the SIMD rows of ops_simd.h (f32) and the portable f64 */
        for (int i = 0; i < 6; i++)
            ADD1(S(1, lens[i]));
        ADD1(S(3, 3, 5, 7));
        if (id == TB_OP_softplus) {
            ADDPP(S(1, 513), "beta", 2, "threshold", 3);
            ADDPP(S(1, 1025), "beta", 0.5, "threshold", -0.25);
        }
        if (id == TB_OP_leaky_relu)
            ADDP(S(1, 513), "alpha", -2);
        break;
    case TB_OP_maximum:
    case TB_OP_minimum:
    case TB_OP_pow:
        for (int i = 0; i < 6; i++)
            ADD2(S(1, lens[i]), S(1, lens[i]));
        ADD2(S(3, 3, 5, 7), S(3, 3, 5, 7));
        ADD2(S(2, 17, 513), S(1, 513));
        ADD2(S(2, 17, 513), S(2, 17, 1));
        ADD2(S(1, 1), S(1, 513));
        ADD2(S(1, 513), S(1, 1));
        ADD2(S(3, 5, 1, 7), S(3, 1, 3, 7));
        /* maximum, minimum: their streaming-store loops (the same
         * threshold, ops_simd.c): 3 x 4 x 5.6M bytes,
         * misaligned */
        if (id == TB_OP_maximum || id == TB_OP_minimum)
            ADD2(S(1, 5600000), S(1, 5600000));
        break;
    case TB_OP_max:
    case TB_OP_min:
    case TB_OP_argmax:
    case TB_OP_var:
        /* var's default correction 1 needs 2 elements */
        for (int i = id == TB_OP_var; i < 6; i++)
            ADD1(S(1, lens[i]));
        ADD1(S(1, 200003));
        ADDP(S(2, 17, 513), "axis", 0);
        ADDP(S(2, 17, 513), "axis", 1);
        ADDP(S(2, 513, 17), "axis", 0);
        ADDPP(S(3, 3, 5, 7), "axis", 1, "keepdim", 1);
        ADDP(S(3, 2, 1030, 3), "axis", 1);
        ADDP(S(2, 4, 2100), "axis", 1);
        ADDP(S(2, 300, 301), "axis", 0);
        ADDP(S(2, 3, 70), "axis", -1);
        /* more lanes than one cols call takes (TB_CPU_SIMD_COLS32),
         * an odd row count; argmax's lane blocks (XS_ARG_BLOCK) */
        ADDP(S(2, 5, 4100), "axis", 0);
        ADDP(S(2, 2, 140000), "axis", 1);
        if (id == TB_OP_var) {
            ADDPP(S(2, 17, 513), "axis", 0, "correction", 0);
            ADDPP(S(1, 1031), "axis", 0, "correction", 0);
        }
        break;
    case TB_OP_relu_backward:
    case TB_OP_sigmoid_backward:
    case TB_OP_tanh_backward:
    case TB_OP_gelu_backward:
        /* g, x: bwd_simd_impl.h's rows (f32) and backward.c's portable
         * ones; sizes around both vector widths and the 2-vector step */
        for (int i = 0; i < 6; i++)
            ADD2(S(1, lens[i]), S(1, lens[i]));
        ADD2(S(1, 31), S(1, 31));
        ADD2(S(1, 33), S(1, 33));
        ADD2(S(3, 3, 5, 7), S(3, 3, 5, 7));
        break;
    case TB_OP_log_softmax_backward:
        /* g, y: contiguous lanes (tails of both vector widths and of the
         * 2-vector sum step) and lanes of non-last axes (inner 1 to 33:
         * the masked last group) */
#define ADD2P(a, v0) c[n++] = (ocase){2, {a, a}, {"axis"}, {v0}}
        for (int i = 0; i < 6; i++)
            ADD2(S(1, lens[i]), S(1, lens[i]));
        ADD2(S(2, 33, 31), S(2, 33, 31));
        ADD2(S(2, 4096, 10), S(2, 4096, 10));
        ADD2P(S(2, 17, 513), 0);
        ADD2P(S(3, 3, 70, 5), 1);
        ADD2P(S(3, 2, 9, 33), 1);
        ADD2P(S(2, 200, 300), 0);
        ADD2P(S(3, 3, 5, 7), 0);
#undef ADD2P
        break;
    case TB_OP_max_pool2d_backward:
    case TB_OP_avg_pool2d_backward: {
        /* g, x [N, C, H, W] with kernel, stride, padding: 2x2 windows
         * (max: bwd_simd_impl.h's rows) with odd H and W and window rows
         * of 1 to 33 windows (both vector widths' tails, one window past
         * and short of a whole vector), and the other geometries */
        static const int pc[][7] = {
            {1, 2, 4, 4, 2, 2, 0},   {2, 3, 24, 24, 2, 2, 0},
            {1, 2, 7, 9, 2, 2, 0},   {2, 1, 5, 66, 2, 2, 0},
            {1, 3, 6, 35, 2, 2, 0},  {1, 1, 3, 62, 2, 2, 0},
            {1, 1, 2, 18, 2, 2, 0},  {1, 2, 3, 2, 2, 2, 0},
            {1, 1, 2, 34, 2, 2, 0},  {2, 2, 10, 11, 3, 3, 0},
            {1, 2, 9, 37, 3, 2, 1},  {1, 2, 8, 8, 2, 1, 0},
            {1, 2, 7, 6, 2, 2, 1},   {1, 1, 1, 1, 1, 1, 0},
        };
        for (size_t q = 0; q < sizeof pc / sizeof pc[0]; q++) {
            const int *v = pc[q];
            const int oh = (v[2] + 2 * v[6] - v[4]) / v[5] + 1;
            const int ow = (v[3] + 2 * v[6] - v[4]) / v[5] + 1;
            c[n++] = (ocase){2,
                             {S(4, v[0], v[1], oh, ow),
                              S(4, v[0], v[1], v[2], v[3])},
                             {"kernel", "stride", "padding"},
                             {v[4], v[5], v[6]}};
        }
        break;
    }
    default:
        break;
    }
    assert_true(n <= MAXC);
    return n;
#undef ADD1
#undef ADD2
#undef ADD3
#undef CONV
#undef ADDP
#undef ADDPP
#undef POOL
}

/* Ops whose f32 results are one correctly rounded operation of the
 * inputs: they must equal the reference rounded to the dtype. */
static bool op_rounded(tb_op_id id)
{
    return id == TB_OP_add || id == TB_OP_sub || id == TB_OP_mul ||
           id == TB_OP_div || id == TB_OP_relu || id == TB_OP_transpose ||
           id == TB_OP_add_relu;
}

static bool op_is_vmath(tb_op_id id)
{
    return id == TB_OP_exp || id == TB_OP_log || id == TB_OP_tanh ||
           id == TB_OP_sigmoid || id == TB_OP_gelu ||
           id == TB_OP_gelu_tanh || id == TB_OP_silu;
}

/* The element-wise backward ops (g, x -> dx) with SIMD rows
 * (bwd_simd_impl.h). */
static bool op_is_act_backward(tb_op_id id)
{
    return id == TB_OP_relu_backward || id == TB_OP_sigmoid_backward ||
           id == TB_OP_tanh_backward || id == TB_OP_gelu_backward;
}

/* One case on instance ctx: misaligned, canary-guarded tensors; the
 * result against op->ref. */
static void run_op_case(void *ctx, const char *isa, int threads,
                        const tb_op *op, tb_dtype dt, const ocase *oc,
                        int ci)
{
    char err[256] = "";
    tb_params p = {0};
    for (int i = 0; i < 3; i++)
        if (oc->pn[i])
            assert_int_equal(
                tb_params_set(op, &p, oc->pn[i], oc->pv[i], err, sizeof err),
                0);
    tb_params_defaults(op, &p);
    tb_shape os;
    int rc = tb_op_infer(op, oc->in, op->n_in, &p, &os, err, sizeof err);
    if (rc)
        print_error("%s case %d: %s\n", op->name, ci, err);
    assert_int_equal(rc, 0);
    const size_t off = misalign(dt);
    gbuf gi[3], go;
    tb_tensor in[3], out, ref;
    for (int i = 0; i < op->n_in; i++) {
        tb_tensor_init(&in[i], dt, &oc->in[i]);
        in[i].data = gb_new(&gi[i], tb_tensor_nbytes(&in[i]), off);
        double lo = op->domain ? op->domain[i].lo : -1;
        double hi = op->domain ? op->domain[i].hi : 1;
        if (op->id == TB_OP_softplus) {
            lo = -60; /* both branches, and exp's tails */
            hi = 30;
        }
        if (op_is_vmath(op->id) && op->id != TB_OP_log) {
            lo = -12; /* beyond the domain: tails of exp, sigmoid, gelu */
            hi = 12;
        }
        if (op_is_act_backward(op->id) && i == 1) {
            lo = -25; /* x: the exp tails, gelu's clamp at 15, its */
            hi = 25;  /* G's pieces at |x| = 3 and 7 */
        }
        for (int64_t k = 0; k < tb_tensor_numel(&in[i]); k++)
            tb_tensor_set(&in[i], k, rng_uniform(lo, hi));
    }
    tb_tensor_init(&out, dt, &os);
    out.data = gb_new(&go, tb_tensor_nbytes(&out), off);
    assert_int_equal(tb_tensor_create(&ref, TB_F64, &os), 0);

    const char *impl = NULL;
    tb_kernel_fn fn = B->kernel(ctx, op, dt, &p, &impl);
    assert_non_null(fn);
    assert_non_null(impl);
    assert_int_equal(fn(ctx, in, &out, &p), 0);
    assert_int_equal(op->ref(in, &ref, &p), 0);

    tb_shape outs[1] = {os};
    const double rlen =
        op->reduce_len ? op->reduce_len(op, oc->in, outs, &p, dt) : 1.0;
    const tb_tol tol = op->tol[dt];
    const bool rounded = op_rounded(op->id);
    int64_t bad = 0;
    for (int64_t k = 0; k < tb_tensor_numel(&ref); k++) {
        double got = tb_tensor_get(&out, k), want = tb_tensor_get(&ref, k);
        double want_dt = dt == TB_F32 ? (double)(float)want : want;
        bool ok = rounded ? got == want_dt
                          : fabs(got - want) <= tol.atol * sqrt(rlen) +
                                                    tol.rtol * fabs(want);
        if (isnan(want))
            ok = isnan(got);
        if (!ok && bad++ < 3)
            print_error("%s_%s isa=%s threads=%d case %d impl %s: [%lld] "
                        "got %.9g want %.9g\n",
                        op->name, tb_dtype_name(dt), isa, threads, ci, impl,
                        (long long)k, got, want);
    }
    bool intact = gb_intact(&go);
    for (int i = 0; i < op->n_in; i++)
        intact = intact && gb_intact(&gi[i]);
    if (!intact)
        print_error("%s_%s isa=%s threads=%d case %d impl %s: canary "
                    "overwritten\n",
                    op->name, tb_dtype_name(dt), isa, threads, ci, impl);
    for (int i = 0; i < op->n_in; i++)
        gb_free(&gi[i]);
    gb_free(&go);
    tb_tensor_destroy(&ref);
    assert_true(intact);
    assert_int_equal(bad, 0);
}

static void test_op(void **state)
{
    const tb_op_id id = (tb_op_id)(intptr_t)*state;
    const tb_op *op = tb_op_get(id);
    assert_non_null(op);
    ocase c[MAXC];
    const int nc = op_cases(id, c);
    assert_true(nc > 0);
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(ax, TB_MAX_AXES), 2);
    for (int dt = 0; dt < TB_DTYPE_COUNT; dt++) {
        if (op_is_vmath(id) && dt != TB_F32 && id != TB_OP_exp &&
            id != TB_OP_log)
            continue; /* f64 runs the portable math_c.c rows (exp
                         and log: f64_simd_impl.h's rows) */
        for (int iv = 0; iv < ax[0].n_values; iv++)
            for (int tv = 0; tv < ax[1].n_values; tv++) {
                const char *vals[2] = {ax[0].values[iv], ax[1].values[tv]};
                void *ctx = NULL;
                char err[256];
                assert_int_equal(B->create(vals, &ctx, err, sizeof err), 0);
                rng_seed((uint64_t)id * 31 + (uint64_t)dt);
                for (int i = 0; i < nc; i++)
                    run_op_case(ctx, vals[0], tv + 1, op, (tb_dtype)dt, &c[i],
                                i);
                B->destroy(ctx);
            }
    }
}

/* ========================================================================= */
/* 4. vmath: ULP bounds, agreement, special values, edges                    */
/* ========================================================================= */

static double mul_sigmoid_ref(double x, double v)
{
    if (v >= 0)
        return x / (1 + exp(-v));
    double e = exp(v);
    return x * e / (1 + e);
}

/* The definitions of vmath.h, in double. */
static double vm_ref(int f, float xf)
{
    const double x = xf;
    switch (f) {
    case TB_VM_EXP:
        return exp(x);
    case TB_VM_LOG:
        return log(x);
    case TB_VM_TANH:
        return tanh(x);
    case TB_VM_SIGMOID:
        return isnan(x) ? x : mul_sigmoid_ref(1.0, x);
    case TB_VM_GELU_ERF:
        if (isinf(x))
            return x > 0 ? x : -0.0;
        return 0.5 * x * erfc(-x * M_SQRT1_2);
    case TB_VM_GELU_TANH:
        if (isinf(x))
            return x > 0 ? x : -0.0;
        return mul_sigmoid_ref(
            x, 2 * 0.7978845608028654 * (x + 0.044715 * x * x * x));
    case TB_VM_SILU:
        if (isinf(x))
            return x > 0 ? x : -0.0;
        return mul_sigmoid_ref(x, x);
    default:
        return NAN;
    }
}

/* Error of got in ulps of the exact result want: the ulp of want's
 * binade (2^-149 below FLT_MIN); an overflow counts as exact when the
 * rounded result is infinite too.  NaN must match NaN. */
static double ulp_error(float got, double want)
{
    if (isnan(want))
        return isnan(got) ? 0 : INFINITY;
    if (isnan(got))
        return INFINITY;
    const float wf = (float)want;
    if (isinf(got) || isinf(wf))
        return got == wf ? 0 : INFINITY;
    if (isinf(want))
        return INFINITY;
    int e;
    double a = fabs(want);
    if (a < 0x1p-126) {
        e = -149;
    } else {
        frexp(a, &e);
        e -= 24;
    }
    return fabs((double)got - want) / ldexp(1.0, e);
}

typedef struct vm_worst {
    double ulp;
    float x;
    uint64_t n;
} vm_worst;

enum { VM_CHUNK = 4096 };

/* Inputs of the sweep, chunk by chunk: every vm_stride-th bit pattern,
 * then 2^18 random floats in [-30, 30] (seeded). *pos is the cursor. */
static int vm_inputs(uint64_t *pos, float *x)
{
    const uint64_t n_strided = (UINT64_C(0xffffffff) / vm_stride) + 1;
    const uint64_t n_total = n_strided + (UINT64_C(1) << 18);
    int k = 0;
    for (; k < VM_CHUNK && *pos < n_total; k++, (*pos)++) {
        if (*pos < n_strided) {
            uint32_t b = (uint32_t)(*pos * vm_stride);
            memcpy(&x[k], &b, sizeof b);
        } else {
            x[k] = (float)rng_uniform(-30, 30);
        }
    }
    return k;
}

static void test_vmath_ulp(void **state)
{
    const int f = (int)(intptr_t)*state;
    const int nl = n_levels();
    tb_vmath vm[TB_ISA_COUNT];
    for (int l = 0; l < nl; l++)
        assert_int_equal(tb_vmath_fill(&vm[l], l), l);
    static float x[VM_CHUNK], y[TB_ISA_COUNT][VM_CHUNK];
    vm_worst w[TB_ISA_COUNT] = {{0}};
    uint64_t pos = 0, mismatch = 0;
    rng_seed(1000 + (uint64_t)f);
    int k;
    while ((k = vm_inputs(&pos, x)) > 0) {
        for (int l = 0; l < nl; l++)
            vm[l].fn[f](x, y[l], k);
        for (int i = 0; i < k; i++) {
            const double want = vm_ref(f, x[i]);
            for (int l = 0; l < nl; l++) {
                double e = ulp_error(y[l][i], want);
                w[l].n++;
                if (e > w[l].ulp || (isnan(e) && !isnan(w[l].ulp))) {
                    w[l].ulp = e;
                    w[l].x = x[i];
                }
            }
            /* the SIMD levels agree bit for bit */
            for (int l = TB_ISA_AVX2 + 1; l < nl; l++)
                if (memcmp(&y[l][i], &y[TB_ISA_AVX2][i], sizeof(float)) &&
                    !(isnan(y[l][i]) && isnan(y[TB_ISA_AVX2][i])) &&
                    mismatch++ < 3)
                    print_error("%s: avx2 %a != %s %a at x=%a\n",
                                tb_vmath_name(f),
                                (double)y[TB_ISA_AVX2][i],
                                tb_cpu_isa_name(l), (double)y[l][i],
                                (double)x[i]);
        }
    }
    bool ok = mismatch == 0;
    for (int l = 0; l < nl; l++) {
        const double bound = tb_vmath_ulp_bound(f, l);
        printf("# vmath %-9s %-6s max %.3f ulp at x=%a (%.9g), bound "
               "%.3f, %llu inputs\n",
               tb_vmath_name(f), tb_cpu_isa_name(l), w[l].ulp,
               (double)w[l].x, (double)w[l].x, bound,
               (unsigned long long)w[l].n);
        if (!(w[l].ulp <= bound)) {
            print_error("vmath %s %s: %.3f ulp at x=%a exceeds the "
                        "documented bound %.2f\n",
                        tb_vmath_name(f), tb_cpu_isa_name(l), w[l].ulp,
                        (double)w[l].x, bound);
            ok = false;
        }
    }
    assert_true(ok);
}

/* Special values, at every level. */
static void test_vmath_special(void **state)
{
    (void)state;
    const float inf = INFINITY, nan = NAN;
    const struct {
        int f;
        float x, want;
    } c[] = {
        {TB_VM_EXP, -inf, 0.0f},         {TB_VM_EXP, inf, inf},
        {TB_VM_EXP, 0.0f, 1.0f},         {TB_VM_EXP, -0.0f, 1.0f},
        {TB_VM_EXP, 89.0f, inf},         {TB_VM_EXP, -104.0f, 0.0f},
        {TB_VM_EXP, nan, nan},           {TB_VM_LOG, 0.0f, -inf},
        {TB_VM_LOG, -0.0f, -inf},        {TB_VM_LOG, -1.0f, nan},
        {TB_VM_LOG, -inf, nan},          {TB_VM_LOG, inf, inf},
        {TB_VM_LOG, 1.0f, 0.0f},         {TB_VM_LOG, nan, nan},
        {TB_VM_TANH, inf, 1.0f},         {TB_VM_TANH, -inf, -1.0f},
        {TB_VM_TANH, 0.0f, 0.0f},        {TB_VM_TANH, -0.0f, -0.0f},
        {TB_VM_TANH, nan, nan},          {TB_VM_SIGMOID, -inf, 0.0f},
        {TB_VM_SIGMOID, inf, 1.0f},      {TB_VM_SIGMOID, 0.0f, 0.5f},
        {TB_VM_SIGMOID, nan, nan},       {TB_VM_SILU, -inf, -0.0f},
        {TB_VM_SILU, inf, inf},          {TB_VM_SILU, 0.0f, 0.0f},
        {TB_VM_SILU, nan, nan},          {TB_VM_GELU_ERF, -inf, -0.0f},
        {TB_VM_GELU_ERF, inf, inf},      {TB_VM_GELU_ERF, 0.0f, 0.0f},
        {TB_VM_GELU_ERF, nan, nan},      {TB_VM_GELU_ERF, -30.0f, -0.0f},
        {TB_VM_GELU_ERF, FLT_MAX, FLT_MAX},
        {TB_VM_GELU_TANH, -inf, -0.0f},  {TB_VM_GELU_TANH, inf, inf},
        {TB_VM_GELU_TANH, 0.0f, 0.0f},   {TB_VM_GELU_TANH, nan, nan},
        {TB_VM_GELU_TANH, -FLT_MAX, -0.0f},
        {TB_VM_GELU_TANH, FLT_MAX, FLT_MAX},
        /* gelu_erf: -0 by the sign bit, the clamped tails exact */
        {TB_VM_GELU_ERF, -0.0f, -0.0f},  {TB_VM_GELU_ERF, 8.0f, 8.0f},
        {TB_VM_GELU_ERF, -15.0f, -0.0f}, {TB_VM_GELU_ERF, -FLT_MAX, -0.0f},
        /* tanh: the exp branch saturates exactly */
        {TB_VM_TANH, 9.5f, 1.0f},        {TB_VM_TANH, -20.0f, -1.0f},
        {TB_VM_TANH, FLT_MAX, 1.0f},     {TB_VM_TANH, 0x1p-140f, 0x1p-140f},
    };
    const int nl = n_levels();
    for (int l = 0; l < nl; l++) {
        tb_vmath vm;
        tb_vmath_fill(&vm, l);
        for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
            float y;
            vm.fn[c[i].f](&c[i].x, &y, 1);
            bool ok = same(y, c[i].want);
            if (!ok)
                print_error("%s %s(%g) = %g, want %g\n", tb_cpu_isa_name(l),
                            tb_vmath_name(c[i].f), (double)c[i].x, (double)y,
                            (double)c[i].want);
            assert_true(ok);
        }
    }
}

/*
 * The SIMD exp core has a fast path (every lane of a vector inside
 * |argument| <= 86: exponent-field scaling) and a general one (clamp,
 * vscalefps): a vector takes the general path when any lane needs it,
 * and AVX2 and AVX-512 group lanes differently, so both paths must give
 * the same bits wherever both apply; so must the gelus' small forms
 * and their lane-by-lane mixes with the wide ones.  One far-out lane
 * (200, -200 or
 * NaN) in every other 16-lane group sends those vectors down the
 * general path: every other lane must keep its fast-path bits, and the
 * far-out lanes must still meet the bound (NaN: NaN).
 */
static void test_vmath_paths(void **state)
{
    (void)state;
    enum { N = 512 };
    static const float far[] = {200.0f, -200.0f, NAN};
    const int nl = n_levels();
    for (int l = TB_ISA_AVX2; l < nl; l++) {
        tb_vmath vm;
        tb_vmath_fill(&vm, l);
        for (int fr = 0; fr < 2 * TB_VM_COUNT; fr++) {
            const int f = fr % TB_VM_COUNT;
            if (f == TB_VM_LOG)
                continue;
            static float x[N], y[N], x2[N], y2[N];
            rng_seed((uint64_t)(7000 + fr));
            /* exp: arguments up to the fast bound; the others: the range
             * where their exp argument stays on the fast path too; then
             * (second round) [-1, 1], where whole vectors take the
             * narrowest paths (the gelus' small forms, tanh's rational)
             * until a far-out lane joins them */
            const double r = fr >= TB_VM_COUNT ? 1 : f == TB_VM_EXP ? 86 : 9;
            for (int i = 0; i < N; i++)
                x[i] = (float)rng_uniform(-r, r);
            vm.fn[f](x, y, N);
            for (size_t c = 0; c < sizeof far / sizeof far[0]; c++) {
                memcpy(x2, x, sizeof x);
                for (int i = 5; i < N; i += 32)
                    x2[i] = far[c];
                vm.fn[f](x2, y2, N);
                for (int i = 0; i < N; i++) {
                    if (x2[i] == x[i]) {
                        if (memcmp(&y2[i], &y[i], sizeof(float)) != 0)
                            print_error("%s %s: x=%a gives %a next to a "
                                        "far-out lane, %a without\n",
                                        tb_cpu_isa_name(l),
                                        tb_vmath_name(f), (double)x[i],
                                        (double)y2[i], (double)y[i]);
                        assert_memory_equal(&y2[i], &y[i], sizeof(float));
                    } else {
                        assert_true(ulp_error(y2[i], vm_ref(f, x2[i])) <=
                                    tb_vmath_ulp_bound(f, l));
                    }
                }
            }
        }
    }
}

/* Every length 0..70 and a few more, misaligned, canaries, in place. */
static void test_vmath_edges(void **state)
{
    (void)state;
    const int nl = n_levels();
    for (int l = 0; l < nl; l++) {
        tb_vmath vm;
        tb_vmath_fill(&vm, l);
        for (int f = 0; f < TB_VM_COUNT; f++)
            for (int64_t n = 0; n <= 600; n += n < 70 ? 1 : 131) {
                rng_seed((uint64_t)(f * 1000 + n));
                gbuf gx, gy;
                float *x = gb_new(&gx, (size_t)n * 4, 4);
                float *y = gb_new(&gy, (size_t)n * 4, 4);
                for (int64_t i = 0; i < n; i++)
                    x[i] = (float)rng_uniform(f == TB_VM_LOG ? 0 : -20, 20);
                vm.fn[f](x, y, n);
                for (int64_t i = 0; i < n; i++)
                    assert_true(ulp_error(y[i], vm_ref(f, x[i])) <=
                                tb_vmath_ulp_bound(f, l));
                /* the streaming form: the same bits, at every offset of
                 * y in a line (its head / body / tail split) */
                gbuf gz;
                float *z = gb_new(&gz, (size_t)n * 4, nt_off(TB_F32, (int)n));
                vm.fn_nt[f](x, z, n);
                assert_memory_equal(z, y, (size_t)n * 4);
                assert_true(gb_intact(&gz));
                gb_free(&gz);
                vm.fn[f](x, x, n); /* in place */
                assert_memory_equal(x, y, (size_t)n * 4);
                assert_true(gb_intact(&gx) && gb_intact(&gy));
                gb_free(&gx);
                gb_free(&gy);
            }
    }
    for (int f = 0; f < TB_VM_COUNT; f++)
        assert_true(tb_vmath_ulp_bound(f, 0) > 0);
    assert_true(tb_vmath_ulp_bound(-1, 0) < 0);
    assert_true(tb_vmath_ulp_bound(0, TB_ISA_COUNT) < 0);
    assert_string_equal(tb_vmath_name(TB_VM_COUNT), "?");
}

/* ========================================================================= */
/* 5. ops_simd.h's rows: special values, softplus's ulp sweep                */
/* ========================================================================= */

/* Specials and edges: NaN, infinities, signed zeros, subnormals, the
 * extremes, softplus's threshold (20) and the exp tails where exp(-|z|)
 * underflows (z ~ -87.3 to the subnormals, ~ -103.97 to 0), e < 2^-24
 * (z < -16.6, 1 + e rounds to 1). */
static const float xs_spec[] = {
    NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, FLT_MIN, -FLT_MIN,
    0x1p-149f, -0x1p-149f, 0x1.8p-130f, FLT_MAX, -FLT_MAX, 1.0f, -1.0f,
    20.0f, 0x1.400002p+4f, 0x1.3ffffep+4f, -16.5f, -16.7f, -17.0f, -87.0f,
    -87.5f, -90.0f, -103.0f, -103.9f, -104.0f, -110.0f, 88.8f, 1e-8f,
    -1e-8f, 0.5f, -0.5f, 3.0f, 1e30f, -1e30f,
};
#define XS_NSPEC ((int)(sizeof xs_spec / sizeof xs_spec[0]))

/* The documented bound of softplus's SIMD rows (ops_simd.h) in ulp, for
 * results of at least FLT_MIN in magnitude; below, within FLT_MIN. */
#define XS_SOFTPLUS_ULP 4.0

static double xs_softplus_ref(float xf, float beta, float thr)
{
    const double z = (double)beta * xf;
    return z > thr ? (double)xf : log1p(exp(z)) / beta;
}

/* got vs the portable row's value: the same bits, or both NaN. */
static bool xs_same_bits(float got, float want)
{
    if (isnan(got) || isnan(want))
        return isnan(got) && isnan(want);
    return memcmp(&got, &want, sizeof got) == 0;
}

/* Softplus got vs the double reference: XS_SOFTPLUS_ULP for normal
 * results, FLT_MIN absolute below, NaN for NaN, infinities exact. */
static bool xs_softplus_ok(float got, double want)
{
    if (fabs(want) < FLT_MIN && !isnan(want))
        return fabs(got - want) <= FLT_MIN;
    return ulp_error(got, want) <= XS_SOFTPLUS_ULP;
}

typedef struct xs_case {
    tb_op_id id;
    const char *pn[2];
    double pv[2];
} xs_case;

static const xs_case xs_cases[] = {
    {TB_OP_softplus, {NULL, NULL}, {0, 0}},
    {TB_OP_softplus, {"beta", "threshold"}, {2, 3}},
    {TB_OP_softplus, {"beta", "threshold"}, {0.5, -1}},
    {TB_OP_sqrt, {NULL, NULL}, {0, 0}},
    {TB_OP_rsqrt, {NULL, NULL}, {0, 0}},
    {TB_OP_leaky_relu, {NULL, NULL}, {0, 0}},
    {TB_OP_leaky_relu, {"alpha", NULL}, {-2, 0}},
    {TB_OP_maximum, {NULL, NULL}, {0, 0}},
    {TB_OP_minimum, {NULL, NULL}, {0, 0}},
};

/* Every isa value, 1 thread: every special (all pairs of them for the
 * binary ops) then 29 random values (an odd tail), f32.  The exact ops
 * against the portable row (math_c.c) bit for bit, softplus against
 * its double definition. */
static void test_xs_special(void **state)
{
    (void)state;
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(ax, TB_MAX_AXES), 2);
    for (int iv = 0; iv < ax[0].n_values; iv++) {
        const char *vals[2] = {ax[0].values[iv], ax[1].values[0]};
        void *ctx = NULL;
        char err[256];
        assert_int_equal(B->create(vals, &ctx, err, sizeof err), 0);
        for (size_t ci = 0; ci < sizeof xs_cases / sizeof xs_cases[0];
             ci++) {
            const xs_case *xc = &xs_cases[ci];
            const tb_op *op = tb_op_get(xc->id);
            tb_params p = {0};
            for (int i = 0; i < 2; i++)
                if (xc->pn[i])
                    assert_int_equal(tb_params_set(op, &p, xc->pn[i],
                                                   xc->pv[i], err,
                                                   sizeof err),
                                     0);
            tb_params_defaults(op, &p);
            const bool bin = op->n_in == 2;
            const int64_t n =
                bin ? XS_NSPEC * XS_NSPEC + 29 : XS_NSPEC + 29;
            tb_shape sh = S(1, (int)n);
            tb_tensor in[2], got, base;
            for (int i = 0; i < op->n_in; i++)
                assert_int_equal(tb_tensor_create(&in[i], TB_F32, &sh), 0);
            assert_int_equal(tb_tensor_create(&got, TB_F32, &sh), 0);
            assert_int_equal(tb_tensor_create(&base, TB_F32, &sh), 0);
            rng_seed(77 + ci);
            for (int64_t k = 0; k < n; k++)
                for (int i = 0; i < op->n_in; i++) {
                    float *d = in[i].data;
                    if (k >= n - 29)
                        d[k] = (float)rng_uniform(-3, 3);
                    else if (!bin)
                        d[k] = xs_spec[k];
                    else
                        d[k] = xs_spec[i == 0 ? k / XS_NSPEC : k % XS_NSPEC];
                }
            const char *impl = NULL;
            tb_kernel_fn fn = B->kernel(ctx, op, TB_F32, &p, &impl);
            assert_non_null(fn);
            assert_int_equal(fn(ctx, in, &got, &p), 0);
            tb_kernel_fn pf = tb_cpu_krow_c(op->id, TB_F32)->fn;
            assert_non_null(pf);
            assert_int_equal(pf(NULL, in, &base, &p), 0);
            const float *g = got.data, *w = base.data, *x = in[0].data;
            const float beta = (float)p.v[0], thr = (float)p.v[1];
            int bad = 0;
            for (int64_t k = 0; k < n; k++) {
                bool ok = xc->id == TB_OP_softplus
                              ? xs_softplus_ok(
                                    g[k], xs_softplus_ref(x[k], beta, thr))
                              : xs_same_bits(g[k], w[k]);
                if (!ok && bad++ < 3)
                    print_error("%s case %zu isa=%s impl %s: [%lld] x=%a "
                                "got %a portable %a\n",
                                op->name, ci, vals[0], impl, (long long)k,
                                (double)x[k], (double)g[k], (double)w[k]);
            }
            for (int i = 0; i < op->n_in; i++)
                tb_tensor_destroy(&in[i]);
            tb_tensor_destroy(&got);
            tb_tensor_destroy(&base);
            assert_int_equal(bad, 0);
        }
        B->destroy(ctx);
    }
}

/* softplus (beta 1, threshold 20; then beta 2, threshold 3) at every
 * isa value over vmath's sweep (every vm_stride-th float, 2^18 random
 * ones in [-30, 30]): the worst error printed, XS_SOFTPLUS_ULP held. */
static void test_xs_softplus_ulp(void **state)
{
    (void)state;
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(ax, TB_MAX_AXES), 2);
    const tb_op *op = tb_op_get(TB_OP_softplus);
    static const double pv[2][2] = {{1, 20}, {2, 3}};
    for (int iv = 0; iv < ax[0].n_values; iv++)
        for (int pc = 0; pc < 2; pc++) {
            const char *vals[2] = {ax[0].values[iv], ax[1].values[0]};
            void *ctx = NULL;
            char err[256];
            assert_int_equal(B->create(vals, &ctx, err, sizeof err), 0);
            tb_params p = {0};
            assert_int_equal(tb_params_set(op, &p, "beta", pv[pc][0], err,
                                           sizeof err),
                             0);
            assert_int_equal(tb_params_set(op, &p, "threshold", pv[pc][1],
                                           err, sizeof err),
                             0);
            const char *impl = NULL;
            tb_kernel_fn fn = B->kernel(ctx, op, TB_F32, &p, &impl);
            assert_non_null(fn);
            tb_shape sh = S(1, VM_CHUNK);
            tb_tensor in, out;
            assert_int_equal(tb_tensor_create(&in, TB_F32, &sh), 0);
            assert_int_equal(tb_tensor_create(&out, TB_F32, &sh), 0);
            rng_seed(2000 + (uint64_t)pc);
            uint64_t pos = 0, bad = 0;
            double worst = 0;
            float wx = 0;
            int k;
            while ((k = vm_inputs(&pos, in.data)) > 0) {
                if (k < VM_CHUNK)
                    for (int i = k; i < VM_CHUNK; i++)
                        ((float *)in.data)[i] = 0;
                assert_int_equal(fn(ctx, &in, &out, &p), 0);
                const float *x = in.data, *y = out.data;
                for (int i = 0; i < k; i++) {
                    double want =
                        xs_softplus_ref(x[i], (float)pv[pc][0],
                                        (float)pv[pc][1]);
                    if (!xs_softplus_ok(y[i], want) && bad++ < 3)
                        print_error("softplus isa=%s beta=%g: x=%a got %a "
                                    "want %a\n",
                                    vals[0], pv[pc][0], (double)x[i],
                                    (double)y[i], want);
                    if (fabs(want) >= FLT_MIN) {
                        double e = ulp_error(y[i], want);
                        if (e > worst) {
                            worst = e;
                            wx = x[i];
                        }
                    }
                }
            }
            printf("# softplus %-6s (%s) beta=%g: max %.3f ulp at x=%a, "
                   "bound %.1f\n",
                   vals[0], impl, pv[pc][0], worst, (double)wx,
                   XS_SOFTPLUS_ULP);
            tb_tensor_destroy(&in);
            tb_tensor_destroy(&out);
            B->destroy(ctx);
            assert_int_equal(bad, 0);
        }
}

/* max, min, argmax (ops_simd.h's reduction rows) at every isa value and
 * thread count on lanes with NaNs (none, first, middle, last, two,
 * several in one lane), infinities and signed-zero ties (either sign
 * first, or random signs as the maximum), contiguous (no axis, the last axis)
 * and strided (axis 0): the portable row's values exactly (== for
 * values, so -0 and +0 tie: the portable rows themselves do not keep the
 * first zero's sign; NaN for NaN), argmax's index exactly; dt f32 (the
 * rows of ops_simd.h) or f64 (f64_simd_impl.h's). */
static void xs_reduce_special(tb_dtype dt)
{
    static const int lens[] = {1, 5, 63, 64, 65, 200, 1031};
    static const tb_op_id ids[] = {TB_OP_max, TB_OP_min, TB_OP_argmax};
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(ax, TB_MAX_AXES), 2);
    for (int iv = 0; iv < ax[0].n_values; iv++)
        for (int tv = 0; tv < ax[1].n_values && tv < 2; tv++) {
            const char *vals[2] = {ax[0].values[iv], ax[1].values[tv]};
            void *ctx = NULL;
            char err[256];
            assert_int_equal(B->create(vals, &ctx, err, sizeof err), 0);
            for (int li = 0; li < 7; li++)
                for (int pat = 0; pat < 10; pat++)
                    for (int ai = 0; ai < 3; ai++)
                        for (int oi = 0; oi < 3; oi++) {
                            const tb_op *op = tb_op_get(ids[oi]);
                            const int len = lens[li];
                            /* ai 0: [len]; 1: [3, len] axis 1; 2: [len, 19]
                             * axis 0 (19 lanes: whole vectors and a
                             * tail) */
                            tb_shape sh = ai == 0   ? S(1, len)
                                          : ai == 1 ? S(2, 3, len)
                                                    : S(2, len, 19);
                            tb_params p = {0};
                            if (ai)
                                assert_int_equal(
                                    tb_params_set(op, &p, "axis",
                                                  ai == 1 ? 1 : 0, err,
                                                  sizeof err),
                                    0);
                            tb_params_defaults(op, &p);
                            tb_shape os;
                            assert_int_equal(
                                tb_op_infer(op, &sh, 1, &p, &os, err,
                                            sizeof err),
                                0);
                            tb_tensor in, got, base;
                            assert_int_equal(
                                tb_tensor_create(&in, dt, &sh), 0);
                            assert_int_equal(
                                tb_tensor_create(&got, dt, &os), 0);
                            assert_int_equal(
                                tb_tensor_create(&base, dt, &os), 0);
                            const int64_t n = tb_tensor_numel(&in);
                            rng_seed((uint64_t)(li * 64 + pat));
                            for (int64_t k = 0; k < n; k++) {
                                /* few distinct values: ties */
                                double r = rng_uniform(0, 8);
                                tb_tensor_set(
                                    &in, k,
                                    r < 1     ? -0.0
                                    : r < 2   ? 0.0
                                    : r < 2.2 ? INFINITY
                                    : r < 2.4 ? -INFINITY
                                              : (double)(int)(r * 2) - 9);
                            }
                            if (pat == 1 || pat == 5)
                                tb_tensor_set(&in, 0, NAN);
                            if (pat == 2 || pat == 5)
                                tb_tensor_set(&in, n / 2, -NAN);
                            if (pat == 3)
                                tb_tensor_set(&in, n - 1, NAN);
                            if (pat == 4)
                                for (int64_t k = 0; k < n; k++)
                                    tb_tensor_set(&in, k,
                                                  k % 2 ? 0.0 : -0.0);
                            if (pat == 6)
                                for (int64_t k = 0; k < n; k++)
                                    tb_tensor_set(&in, k, -INFINITY);
                            if (pat == 7) /* NaNs sharing a lane */
                                for (int64_t k = 0; k < n;
                                     k += 19 * (len / 2 + 1))
                                    tb_tensor_set(&in, k, k ? -NAN : NAN);
                            if (pat == 8)
                                for (int64_t k = 0; k < n; k++)
                                    tb_tensor_set(&in, k,
                                                  k % 2 ? -0.0 : 0.0);
                            if (pat == 9) /* maxima: zeros of both signs */
                                for (int64_t k = 0; k < n; k++) {
                                    uint64_t r = rng_next() % 3;
                                    tb_tensor_set(&in, k,
                                                  r == 0   ? -1.0
                                                  : r == 1 ? -0.0
                                                           : 0.0);
                                }
                            const char *impl = NULL;
                            tb_kernel_fn fn =
                                B->kernel(ctx, op, dt, &p, &impl);
                            assert_non_null(fn);
                            assert_int_equal(fn(ctx, &in, &got, &p), 0);
                            tb_kernel_fn pf =
                                tb_cpu_krow_c(op->id, dt)->fn;
                            assert_int_equal(pf(NULL, &in, &base, &p), 0);
                            int bad = 0;
                            for (int64_t k = 0; k < tb_tensor_numel(&got);
                                 k++) {
                                const double gk = tb_tensor_get(&got, k);
                                const double wk = tb_tensor_get(&base, k);
                                bool ok = isnan(wk) ? isnan(gk) : gk == wk;
                                if (!ok && bad++ < 3)
                                    print_error(
                                        "%s_%s isa=%s threads=%s len %d "
                                        "pattern %d shape %d impl %s: "
                                        "[%lld] got %a portable %a\n",
                                        op->name, tb_dtype_name(dt), vals[0],
                                        vals[1], len,
                                        pat, ai, impl, (long long)k,
                                        gk, wk);
                            }
                            tb_tensor_destroy(&in);
                            tb_tensor_destroy(&got);
                            tb_tensor_destroy(&base);
                            assert_int_equal(bad, 0);
                        }
            B->destroy(ctx);
        }
}

static void test_xs_reduce_special(void **state)
{
    (void)state;
    xs_reduce_special(TB_F32);
}

/* argmax f32 over lanes longer than one block of the SIMD rows'
 * one-pass scan (XS_ARG_BLOCK, 2^16 elements, ops_simd_impl.h), at every
 * isa value and thread count: the maximum tied in a later block (the
 * first wins), a larger one in the short last block, a NaN in a later
 * block after the maximum, zeros of both signs as the maximum in several
 * blocks, every value equal; contiguous (no axis, and axis 1 of 2
 * lanes): the portable row's index exactly. */
static void test_xs_argmax_blocks(void **state)
{
    (void)state;
    const int64_t len = 3 * 65536 + 37;
    const tb_op *op = tb_op_get(TB_OP_argmax);
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(ax, TB_MAX_AXES), 2);
    for (int iv = 0; iv < ax[0].n_values; iv++)
        for (int tv = 0; tv < ax[1].n_values && tv < 2; tv++) {
            const char *vals[2] = {ax[0].values[iv], ax[1].values[tv]};
            void *ctx = NULL;
            char err[256];
            assert_int_equal(B->create(vals, &ctx, err, sizeof err), 0);
            for (int pat = 0; pat < 6; pat++)
                for (int ai = 0; ai < 2; ai++) {
                    tb_shape sh = ai ? S(2, 2, len) : S(1, len);
                    tb_params p = {0};
                    if (ai)
                        assert_int_equal(tb_params_set(op, &p, "axis", 1,
                                                       err, sizeof err),
                                         0);
                    tb_params_defaults(op, &p);
                    tb_shape os;
                    assert_int_equal(
                        tb_op_infer(op, &sh, 1, &p, &os, err, sizeof err), 0);
                    tb_tensor in, got, base;
                    assert_int_equal(tb_tensor_create(&in, TB_F32, &sh), 0);
                    assert_int_equal(tb_tensor_create(&got, TB_F32, &os), 0);
                    assert_int_equal(tb_tensor_create(&base, TB_F32, &os),
                                     0);
                    const int64_t n = tb_tensor_numel(&in);
                    float *x = in.data;
                    rng_seed((uint64_t)(100 + pat));
                    for (int64_t k = 0; k < n; k++)
                        x[k] = (float)rng_uniform(-1, 1);
                    for (int64_t l = 0; l < n; l += len) {
                        float *y = x + l;
                        switch (pat) {
                        case 0: /* tie: blocks 0 and 2 */
                            y[70000 - 65536] = 5.0f;
                            y[2 * 65536 + 11] = 5.0f;
                            break;
                        case 1: /* larger in the short last block */
                            y[1000] = 5.0f;
                            y[3 * 65536 + 20] = 6.0f;
                            break;
                        case 2: /* NaN in a later block */
                            y[10] = 7.0f;
                            y[65536 + 3] = NAN;
                            y[2 * 65536 + 5] = -NAN;
                            break;
                        case 3: /* zeros as the maximum */
                            for (int64_t k = 0; k < len; k++)
                                y[k] = -fabsf(y[k]) - 1.0f;
                            y[65536 + 40] = -0.0f;
                            y[2 * 65536 + 7] = 0.0f;
                            y[5] = -1.0f;
                            break;
                        case 4: /* all equal */
                            for (int64_t k = 0; k < len; k++)
                                y[k] = 2.0f;
                            break;
                        default: /* increasing: every block improves */
                            for (int64_t k = 0; k < len; k++)
                                y[k] = (float)k;
                            break;
                        }
                    }
                    const char *impl = NULL;
                    tb_kernel_fn fn = B->kernel(ctx, op, TB_F32, &p, &impl);
                    assert_non_null(fn);
                    assert_int_equal(fn(ctx, &in, &got, &p), 0);
                    tb_kernel_fn pf = tb_cpu_krow_c(op->id, TB_F32)->fn;
                    assert_int_equal(pf(NULL, &in, &base, &p), 0);
                    int bad = 0;
                    for (int64_t k = 0; k < tb_tensor_numel(&got); k++) {
                        const double gk = tb_tensor_get(&got, k);
                        const double wk = tb_tensor_get(&base, k);
                        if (gk != wk && bad++ < 3)
                            print_error("argmax isa=%s threads=%s pattern "
                                        "%d shape %d impl %s: [%lld] got "
                                        "%.0f portable %.0f\n",
                                        vals[0], vals[1], pat, ai, impl,
                                        (long long)k, gk, wk);
                    }
                    tb_tensor_destroy(&in);
                    tb_tensor_destroy(&got);
                    tb_tensor_destroy(&base);
                    assert_int_equal(bad, 0);
                }
            B->destroy(ctx);
        }
}

/* The same for f64 (f64_simd_impl.h's rows). */
static void test_xs_reduce_special_f64(void **state)
{
    (void)state;
    xs_reduce_special(TB_F64);
}

/* ========================================================================= */
/* 6. random creation ops (rand_simd.h)                                      */
/* ========================================================================= */

typedef struct rs_case {
    tb_op_id op;
    double a, b, seed;
} rs_case;

/* Ordinary and extreme parameters: rand_normal's tiny and zero std
 * (every lane through the scalar fallback: values near 0), the largest
 * std and mean, and a large mean next to a small std; rand_uniform's
 * float path (low 0) at and past its ends. */
static const rs_case rs_cases[] = {
    {TB_OP_rand_uniform, 0, 1, 0},
    {TB_OP_rand_uniform, -2.5, 7, 42},
    {TB_OP_rand_uniform, -1e3, 1e-3, 9007199254740992.0},
    {TB_OP_rand_uniform, -1e30, 1e30, 5},
    {TB_OP_rand_normal, 0, 1, 0},
    {TB_OP_rand_normal, 3, 0.5, 7},
    {TB_OP_rand_normal, -1e3, 1e2, 123456789},
    {TB_OP_rand_normal, 1e6, 1e-3, 11},
    {TB_OP_rand_normal, 0, 1e-40, 12},
    {TB_OP_rand_normal, 0, 0, 13},
    {TB_OP_rand_normal, 1e30, 1e30, 14},
    {TB_OP_rand_normal, -1, 2, 15},
    {TB_OP_arange, 0, 1, 0},
    {TB_OP_arange, -3.5, 0.1, 0},
    {TB_OP_arange, 1e6, -7.25, 0},
    {TB_OP_arange, 0.1, 1e-3, 0},
    /* rand_uniform f32's float path (low 0, 2^-102 <= high <= FLT_MAX)
     * and its edges */
    {TB_OP_rand_uniform, 0, 3.7, 16},
    {TB_OP_rand_uniform, -0.0, 1e30, 17},
    {TB_OP_rand_uniform, 0, 0x1.0p-102, 18},
    {TB_OP_rand_uniform, 0, 0x1.fffffep-103, 19},
    {TB_OP_rand_uniform, 0, 1e-44, 21},
    /* rand_normal with mean -0: with std 0 every value is -0 + (+-0),
     * whose sign the scalar sum decides (the decision must refuse or
     * agree); with std 1 the values near 0 */
    {TB_OP_rand_normal, -0.0, 0, 22},
    {TB_OP_rand_normal, -0.0, 1, 23},
    {TB_OP_rand_normal, 0, 1e-30, 24},
};

static const int64_t rs_sizes[] = {1, 2, 3, 7, 15, 16, 17, 31, 33, 513,
                                   4099, 70001};

/* Every random op and arange at every isa value and thread count, odd
 * sizes, misaligned canary-guarded outputs: bit for bit the reference
 * rounded to the dtype (rand.h's stream), and at a SIMD level the row
 * of that level ran (its impl name) for every (op, dtype) it serves. */
static void test_rand_ops(void **state)
{
    (void)state;
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(ax, TB_MAX_AXES), 2);
    for (int iv = 0; iv < ax[0].n_values; iv++)
        for (int tv = 0; tv < ax[1].n_values; tv++) {
            const char *vals[2] = {ax[0].values[iv], ax[1].values[tv]};
            void *ctx = NULL;
            char err[256];
            assert_int_equal(B->create(vals, &ctx, err, sizeof err), 0);
            const bool simd = strcmp(vals[0], "avx2") == 0 ||
                              strcmp(vals[0], "avx512") == 0;
            for (size_t k = 0; k < sizeof rs_cases / sizeof rs_cases[0];
                 k++) {
                const rs_case *rc = &rs_cases[k];
                const tb_op *op = tb_op_get(rc->op);
                const bool u = rc->op == TB_OP_rand_uniform;
                const bool ar = rc->op == TB_OP_arange;
                tb_params p = {0};
                assert_int_equal(
                    tb_params_set(op, &p, ar ? "start" : u ? "low" : "mean",
                                  rc->a, err, sizeof err),
                    0);
                assert_int_equal(
                    tb_params_set(op, &p, ar ? "step" : u ? "high" : "std",
                                  rc->b, err, sizeof err),
                    0);
                if (!ar)
                    assert_int_equal(tb_params_set(op, &p, "seed", rc->seed,
                                                   err, sizeof err),
                                     0);
                tb_params_defaults(op, &p);
                for (int dt = 0; dt < TB_DTYPE_COUNT; dt++)
                    for (size_t si = 0;
                         si < sizeof rs_sizes / sizeof rs_sizes[0]; si++) {
                        const tb_dtype d = (tb_dtype)dt;
                        tb_shape os = S(1, (int)rs_sizes[si]);
                        tb_tensor out, ref, hdr;
                        gbuf go;
                        tb_tensor_init(&out, d, &os);
                        out.data = gb_new(&go, tb_tensor_nbytes(&out),
                                          misalign(d));
                        assert_int_equal(tb_tensor_create(&ref, TB_F64, &os),
                                         0);
                        tb_tensor_init(&hdr, d, &os);
                        const char *impl = NULL;
                        tb_kernel_fn fn = B->kernel(ctx, op, d, &p, &impl);
                        assert_non_null(fn);
                        assert_non_null(impl);
                        assert_int_equal(fn(ctx, NULL, &out, &p), 0);
                        assert_int_equal(op->ref(&hdr, &ref, &p), 0);
                        if (simd && (u || ar || d == TB_F32)) {
                            const char *sfx = strrchr(impl, '_');
                            assert_non_null(sfx);
                            assert_string_equal(sfx + 1, vals[0]);
                        }
                        int64_t bad = 0;
                        for (int64_t i = 0; i < rs_sizes[si]; i++) {
                            double w = tb_tensor_get(&ref, i);
                            double want = d == TB_F32 ? (double)(float)w : w;
                            double got = tb_tensor_get(&out, i);
                            if (!same(got, want) && bad++ < 3)
                                print_error("%s_%s isa=%s threads=%s case "
                                            "%zu n %lld impl %s: [%lld] "
                                            "got %a want %a\n",
                                            op->name, tb_dtype_name(d),
                                            vals[0], vals[1], k,
                                            (long long)rs_sizes[si], impl,
                                            (long long)i, got, want);
                        }
                        bool intact = gb_intact(&go);
                        if (!intact)
                            print_error("%s_%s isa=%s threads=%s case %zu: "
                                        "canary overwritten\n",
                                        op->name, tb_dtype_name(d), vals[0],
                                        vals[1], k);
                        gb_free(&go);
                        tb_tensor_destroy(&ref);
                        assert_true(intact);
                        assert_int_equal(bad, 0);
                    }
            }
            B->destroy(ctx);
        }
}

/* The bound rand_normal f32's SIMD rows rest on (rand_simd.h), checked
 * on every input the f32 stream can give them: for all 2^24 uniforms
 * u = k 2^-24, with t = 1 - u, the vector -2 log t within 2^-49 of
 * -2 log(t) by libm (relative), its vector square root within 2^-49 of
 * sqrt(-2 log(t)) by libm (relative: the scalar kernel's r), and the
 * vector cos and sin of 2 pi u within 2^-49 of libm's cos and sin of
 * a = TB_RAND_2PI u (absolute: the scalar kernel's), at every SIMD level
 * this machine runs (a NaN anywhere fails it: t = 1, r = 0 included).
 * The largest differences are printed. */
static void test_rand_vmath(void **state)
{
    (void)state;
    enum { BLK = 1 << 16 };
    double *t = malloc(6 * BLK * sizeof *t);
    assert_non_null(t);
    double *u = t + BLK, *lg = u + BLK, *r = lg + BLK, *c = r + BLK,
           *s = c + BLK;
    for (int lv = TB_ISA_AVX2; lv < n_levels(); lv++) {
        double el = 0, er = 0, ec = 0, es = 0;
        for (int64_t k0 = 0; k0 < (INT64_C(1) << 24); k0 += BLK) {
            for (int i = 0; i < BLK; i++) {
                u[i] = (double)(k0 + i) * 0x1.0p-24;
                t[i] = 1.0 - u[i];
            }
#if TB_CPU_HAVE_AVX512
            if (lv == TB_ISA_AVX512)
                tb_cpu_rand_vmath_avx512(t, u, lg, r, c, s, BLK);
#endif
#if TB_CPU_HAVE_AVX2
            if (lv == TB_ISA_AVX2)
                tb_cpu_rand_vmath_avx2(t, u, lg, r, c, s, BLK);
#endif
            for (int i = 0; i < BLK; i++) {
                double l = -2.0 * log(t[i]), q = sqrt(l);
                double e = l == 0 ? fabs(lg[i]) * 0x1.0p60
                                  : fabs(lg[i] - l) / l;
                el = e > el || isnan(e) ? e : el;
                e = q == 0 ? fabs(r[i]) * 0x1.0p60 : fabs(r[i] - q) / q;
                er = e > er || isnan(e) ? e : er;
                double a = TB_RAND_2PI * u[i];
                e = fabs(c[i] - cos(a));
                ec = e > ec || isnan(e) ? e : ec;
                e = fabs(s[i] - sin(a));
                es = e > es || isnan(e) ? e : es;
            }
        }
        print_message("rand vmath %s: -2 log 2^%.2f, sqrt 2^%.2f "
                      "(relative), cos 2^%.2f, sin 2^%.2f (absolute)\n",
                      tb_cpu_isa_name(lv), log2(el > 0 || isnan(el) ? el : 1e-300),
                      log2(er > 0 || isnan(er) ? er : 1e-300),
                      log2(ec > 0 || isnan(ec) ? ec : 1e-300),
                      log2(es > 0 || isnan(es) ? es : 1e-300));
        assert_true(el <= 0x1.0p-49);
        assert_true(er <= 0x1.0p-49);
        assert_true(ec <= 0x1.0p-49);
        assert_true(es <= 0x1.0p-49);
    }
    free(t);
}

/* rand_normal f32's decision (rand_simd.h: both ends of [v - err,
 * v + err] round to the same float), at every SIMD level: sound (when a
 * lane is accepted, v and every double within err/8 of it, the kernels'
 * margin, round to the float stored, bit for bit) and not idle (a value
 * on a float, or a quarter gap from the nearest midpoint, with the
 * kernels' err = 2^-44 |v|, is accepted).  Inputs: floats of every
 * binade (subnormal to FLT_MAX), the midpoints between neighbours and
 * points near them, the overflow threshold, +-0, values straddling 0,
 * NaN and infinity; a dropped bit-for-bit compare (-0 against +0), a
 * dropped float compare (NaN) or a check that ignored err fails it. */
typedef void (*rd_fn)(const double *, const double *, float *,
                      unsigned char *, int64_t);

static bool rd_same(float a, float b)
{
    uint32_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    return x == y;
}

static void test_rand_decide(void **state)
{
    (void)state;
    enum { N = 1 << 16 };
    double *v = malloc(2 * N * sizeof *v);
    float *f = malloc(N * sizeof *f);
    unsigned char *ok = malloc(N);
    unsigned char *live = malloc(N);
    assert_non_null(v);
    assert_non_null(f);
    assert_non_null(ok);
    assert_non_null(live);
    double *err = v + N;
    for (int lv = TB_ISA_AVX2; lv < n_levels(); lv++) {
        rd_fn fn = NULL;
#if TB_CPU_HAVE_AVX512
        if (lv == TB_ISA_AVX512)
            fn = tb_cpu_rand_decide_avx512;
#endif
#if TB_CPU_HAVE_AVX2
        if (lv == TB_ISA_AVX2)
            fn = tb_cpu_rand_decide_avx2;
#endif
        if (!fn)
            continue;
        rng_seed(0x7264);
        int64_t n = 0;
        /* the fixed cases: value, err, must accept (1), must refuse (0),
         * either (2) */
        static const struct {
            double v, e;
            int want;
        } fx[] = {
            {0.0, 0.0, 1},
            {-0.0, 0.0, 2}, /* -0 - 0 is -0, -0 + 0 is +0 */
            {1e-50, 2e-50, 0},       /* straddles 0: -0 and +0 */
            {-1e-50, 2e-50, 0},
            {1e-50, 1e-60, 1},       /* +0 */
            {1.0, 0x1.0p-44, 1},
            {1.0 + 0x1.0p-24, 0x1.0p-44, 0}, /* a midpoint */
            {(double)FLT_MAX + 0x1.0p103, 0x1.0p84, 0}, /* overflow edge */
            {(double)FLT_MAX, 0x1.0p84, 1},
            {0x1.0p200, 0x1.0p156, 1},       /* +inf for sure */
            {0x1.0p-149 * 1.5, 0x1.0p-200, 0}, /* subnormal midpoint */
            {0x1.0p-149 * 3, 0x1.0p-200, 1},
            {NAN, 0.0, 0},
            {INFINITY, INFINITY, 0},
            {1.0, INFINITY, 0},
        };
        const int nfx = (int)(sizeof fx / sizeof fx[0]);
        for (int k = 0; k < nfx; k++) {
            v[n] = fx[k].v;
            err[n] = fx[k].e;
            live[n++] = (unsigned char)fx[k].want;
        }
        while (n < N) {
            /* a float of a random binade and its upper midpoint */
            int ex = (int)(rng_next() % 280) - 150;
            float x = (float)ldexp(rng_uniform(1.0, 2.0), ex);
            if (rng_next() & 1)
                x = -x;
            float y = nextafterf(x, x > 0 ? INFINITY : -INFINITY);
            double mid = ((double)x + (double)y) / 2;
            double gap = fabs((double)y - (double)x);
            uint64_t kind = rng_next() % 4;
            if (kind == 0) { /* on the float */
                v[n] = x;
                live[n] = x != 0 && isfinite(y);
            } else if (kind == 1) { /* a quarter gap from the midpoint */
                v[n] = mid + ((rng_next() & 1) ? 0.25 : -0.25) * gap;
                live[n] = isfinite(y) && 0x1.0p-44 * fabs(v[n]) < gap / 8;
            } else { /* near the midpoint: within a few err */
                v[n] = mid + rng_uniform(-4, 4) * 0x1.0p-44 * fabs(mid);
                live[n] = 2;
            }
            err[n] = 0x1.0p-44 * fabs(v[n]);
            if (live[n] == 0)
                live[n] = 2;
            n++;
        }
        fn(v, err, f, ok, N);
        int64_t bad = 0, acc = 0;
        for (int64_t i = 0; i < N; i++) {
            if (live[i] != 2 && ok[i] != live[i]) {
                if (bad++ < 5)
                    print_error("rand decide %s: v %a err %a: ok %d, want "
                                "%d\n",
                                tb_cpu_isa_name(lv), v[i], err[i], ok[i],
                                live[i]);
                continue;
            }
            if (!ok[i])
                continue;
            acc++;
            const double pts[3] = {v[i] - err[i] / 8, v[i],
                                   v[i] + err[i] / 8};
            for (int k = 0; k < 3; k++)
                if (!rd_same((float)pts[k], f[i]) && bad++ < 5)
                    print_error("rand decide %s: v %a err %a accepted as "
                                "%a, but %a rounds to %a\n",
                                tb_cpu_isa_name(lv), v[i], err[i],
                                (double)f[i], pts[k], (double)(float)pts[k]);
        }
        print_message("rand decide %s: %lld of %d accepted\n",
                      tb_cpu_isa_name(lv), (long long)acc, N);
        assert_int_equal(bad, 0);
    }
    free(live);
    free(ok);
    free(f);
    free(v);
}

/* ---- pow f32's SIMD rows (pow_simd_impl.h) ---- */

typedef void (*pw_fn)(const float *, const float *, float *, int64_t);

static pw_fn pw_level(int lv)
{
#if TB_CPU_HAVE_AVX512
    if (lv == TB_ISA_AVX512)
        return tb_cpu_pow_f32_avx512;
#endif
#if TB_CPU_HAVE_AVX2
    if (lv == TB_ISA_AVX2)
        return tb_cpu_pow_f32_avx2;
#endif
    (void)lv;
    return NULL;
}

static float pw_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The stated bound of each row (pow_simd_impl.h): 1 ulp at AVX2 and
 * AVX-512 alike (float lanes where every lane is ordinary, their analysis
 * about 0.8 ulp; the double path's 0.5 + 2^-9 elsewhere). */
static double pw_bound(int lv)
{
    (void)lv;
    return 1.0;
}

/* Every pair of a table of special and ordinary values, both orders of
 * sign: bit for bit powf's result (C99 Annex F), NaN for NaN.  Twice:
 * the pairs one after another, and each pair alone among ordinary ones
 * (1.5^0.75) in a block of 16, at lane (pair mod 16), so a special lane
 * a float path (AVX2's 8 lanes, AVX-512's 16) took for ordinary would
 * show. */
static void test_pow_special(void **state)
{
    (void)state;
    static const float v[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY,
                              NAN, 0.5f, -0.5f, 2.0f, -2.0f, 3.0f, -3.0f,
                              2.5f, -2.5f, 0x1p-149f, -0x1p-149f, FLT_MAX,
                              -FLT_MAX, 0x1p24f, -0x1p24f, 0x1.000002p24f,
                              127.0f, -127.0f, 1e-3f, 1.0000001f, 0.9999999f,
                              10.0f, -10.0f, 1e10f, 0x1p-126f};
    enum { NV = sizeof v / sizeof v[0], NP = NV * NV, NA = NP * 16 };
    float *a = malloc(3 * NA * sizeof *a);
    assert_non_null(a);
    float *b = a + NA, *o = b + NA;
    for (int lay = 0; lay < 2; lay++) {
        const int n = lay ? NA : NP;
        for (int k = 0; k < n; k++) {
            a[k] = 1.5f;
            b[k] = 0.75f;
        }
        for (int i = 0; i < NV; i++)
            for (int j = 0; j < NV; j++) {
                const int q = i * NV + j, k = lay ? q * 16 + q % 16 : q;
                a[k] = v[i];
                b[k] = v[j];
            }
        for (int lv = TB_ISA_AVX2; lv < n_levels(); lv++) {
            pw_fn fn = pw_level(lv);
            assert_non_null(fn);
            memset(o, 0, (size_t)n * sizeof *o);
            fn(a, b, o, n);
            int bad = 0;
            for (int k = 0; k < n; k++) {
                float w = powf(a[k], b[k]);
                bool ok = same((double)o[k], (double)w);
                /* ordinary pairs: not bit for bit, within the stated
                 * bound */
                if (!ok && isfinite(w) && w != 0 && isfinite(o[k]))
                    ok = ulp_error(o[k], pow((double)a[k], (double)b[k])) <=
                         pw_bound(lv);
                if (!ok && bad++ < 5)
                    print_error("pow %s: %a ^ %a = %a, powf %a\n",
                                tb_cpu_isa_name(lv), (double)a[k],
                                (double)b[k], (double)o[k], (double)w);
            }
            assert_int_equal(bad, 0);
        }
    }
    free(a);
}

/* Runs fn on the n pairs of a, b and keeps the worst ulp error against
 * libm's double pow (NaN, zeros and infinities must match). */
static void pw_worst(pw_fn fn, const float *a, const float *b, float *o,
                     int n, double *worst, float *wa, float *wb)
{
    fn(a, b, o, n);
    for (int i = 0; i < n; i++) {
        double e = ulp_error(o[i], pow((double)a[i], (double)b[i]));
        if (e > *worst || isnan(e)) {
            *worst = e;
            *wa = a[i];
            *wb = b[i];
        }
    }
}

/* The bound of each row (pw_bound) against libm's double pow on 6
 * families of 2^18 random pairs each: the op's domain, any positive
 * float to small powers (overflow and underflow included), integer
 * powers of [0.5, 2] and of negative bases, bases next to 1 to huge
 * powers, and any float to any float; then two dense sweeps of the
 * float paths' parts (AVX2 and AVX-512): every float base in [0.75, 1.5) (every
 * z of every interval of its log2), the even ones scaled by 2^e with e
 * cycling through -126..127 to a power b making y = b log2 a near one of
 * +-124 .. 8.5 (the full log2; its error counts |y| times), the odd ones
 * with e in -3..3 to y near one of +-8 .. 2^-10 (the short log2,
 * |y| <= 8), and the exact 2^b (a = 2) for every 1031st float b in
 * [-126, 126] (every k and f of its exp2 and both scaling limits).  The
 * worst case of each row is printed. */
static void test_pow_ulp(void **state)
{
    (void)state;
    enum { N = 1 << 18 };
    /* |y| targets, large (the full log2) and small (the short one) */
    static const double ty[2][8] = {
        {124, -124, 123.5, -123.5, 100, -64, 17, -8.5},
        {8, -8, 7.95, -7.5, 5, -2.5, 0.3, -0x1p-10}};
    float *a = malloc(3 * N * sizeof *a);
    assert_non_null(a);
    float *b = a + N, *o = b + N;
    for (int lv = TB_ISA_AVX2; lv < n_levels(); lv++) {
        pw_fn fn = pw_level(lv);
        assert_non_null(fn);
        double worst = 0;
        float wa = 0, wb = 0;
        for (int fam = 0; fam < 6; fam++) {
            rng_seed(0x90e + (uint64_t)fam);
            for (int i = 0; i < N; i++) {
                uint32_t r = (uint32_t)rng_next();
                switch (fam) {
                case 0:
                    a[i] = (float)rng_uniform(0.1, 2);
                    b[i] = (float)rng_uniform(-2, 2);
                    break;
                case 1:
                    a[i] = pw_bits(r % 0x7f800000u);
                    b[i] = (float)rng_uniform(-4, 4);
                    break;
                case 2:
                    a[i] = (float)rng_uniform(0.5, 2);
                    b[i] = (float)(int)(rng_next() % 401) - 200;
                    break;
                case 3:
                    a[i] = -(float)rng_uniform(0.01, 10);
                    b[i] = (float)(int)(rng_next() % 81) - 40;
                    break;
                case 4:
                    a[i] = pw_bits(0x3f800000u + (r % 2001u) - 1000u);
                    b[i] = (float)rng_uniform(-1e7, 1e7);
                    break;
                default:
                    a[i] = pw_bits(r);
                    b[i] = pw_bits((uint32_t)rng_next());
                    break;
                }
            }
            pw_worst(fn, a, b, o, N, &worst, &wa, &wb);
        }
        /* every other float in [0.75, 1) and [1, 1.5) (the even bit
         * patterns for one set of targets, the odd for the other), scaled
         * by 2^e */
        int n = 0;
        for (int t = 0; t < 2; t++) {
            int c = 0;
            for (uint32_t u = 0x3f400000u + (uint32_t)t; u < 0x3fc00000u;
                 u += 2, c++) {
                if (u == 0x3f800000u)
                    continue; /* log2 1 = 0 */
                int e = t ? c % 7 - 3 : c % 254 - 126;
                float z = pw_bits(u);
                a[n] = ldexpf(z, e);
                b[n] = (float)(ty[t][c % 8] / log2((double)a[n]));
                if (++n == N) {
                    pw_worst(fn, a, b, o, n, &worst, &wa, &wb);
                    n = 0;
                }
            }
        }
        /* 2^b: |b| <= 126, every 1031st float */
        for (uint32_t u = 0; u <= 0x42fc0000u; u += 1031) {
            for (int sg = 0; sg < 2; sg++) {
                a[n] = 2.0f;
                b[n] = sg ? -pw_bits(u) : pw_bits(u);
                if (++n == N) {
                    pw_worst(fn, a, b, o, n, &worst, &wa, &wb);
                    n = 0;
                }
            }
        }
        pw_worst(fn, a, b, o, n, &worst, &wa, &wb);
        print_message("pow %s: worst %.6f ulp at %a ^ %a (bound %g)\n",
                      tb_cpu_isa_name(lv), worst, (double)wa, (double)wb,
                      pw_bound(lv));
        assert_true(worst <= pw_bound(lv));
    }
    free(a);
}

/* The rows' loops at every size 0..300 (software-pipelined steps of 2
 * vectors, the single vectors and the masked tail after them), one float
 * off alignment, canary-guarded: every element within the bound (or the
 * special value) of libm's double pow, nothing written outside the
 * output.  Inputs in the op's domain, with a lane every 29th element that
 * sends its vector off the short log2's path (a negative base to an
 * integer power, |y| > 8, a subnormal result, a zero base), so the slow
 * step comes at every position of the pipeline. */
static void test_pow_sizes(void **state)
{
    (void)state;
    enum { NMAX = 300 };
    static const float sp[4][2] = {
        {-1.5f, 3.0f}, {0.9f, 60.0f}, {1e-20f, 7.0f}, {0.0f, 2.0f}};
    for (int lv = TB_ISA_AVX2; lv < n_levels(); lv++) {
        pw_fn fn = pw_level(lv);
        assert_non_null(fn);
        int bad = 0;
        for (int n = 0; n <= NMAX; n++) {
            gbuf ga, gb, go;
            const size_t nb = (size_t)n * sizeof(float);
            float *a = gb_new(&ga, nb, sizeof(float));
            float *b = gb_new(&gb, nb, sizeof(float));
            float *o = gb_new(&go, nb, sizeof(float));
            rng_seed(0x9051 + (uint64_t)n);
            for (int k = 0; k < n; k++) {
                a[k] = (float)rng_uniform(0.1, 2);
                b[k] = (float)rng_uniform(-2, 2);
                if ((k + 3 * n) % 29 == 0) {
                    a[k] = sp[(k + n) % 4][0];
                    b[k] = sp[(k + n) % 4][1];
                }
            }
            fn(a, b, o, n);
            for (int k = 0; k < n; k++) {
                double e = ulp_error(o[k], pow((double)a[k], (double)b[k]));
                if (!(e <= pw_bound(lv)) && bad++ < 5)
                    print_error("pow %s n=%d: %a ^ %a = %a (%g ulp)\n",
                                tb_cpu_isa_name(lv), n, (double)a[k],
                                (double)b[k], (double)o[k], e);
            }
            if (!gb_intact(&go) && bad++ < 5)
                print_error("pow %s n=%d: wrote outside the output\n",
                            tb_cpu_isa_name(lv), n);
            gb_free(&ga);
            gb_free(&gb);
            gb_free(&go);
        }
        assert_int_equal(bad, 0);
    }
}

/* ---- permute's tiled path (permute_c.c) ---- */

/* Every permutation of 3-D shapes and the common ones of 4-D (NCHW <->
 * NHWC, the (1, 2) and (0, 1) swaps, the reversal, and the (2, 3)
 * swap), shapes from 1 to beyond two tiles per dim with odd extents, on
 * misaligned canary-guarded tensors in both dtypes, on an instance of
 * isa vals[0] and threads vals[1]: bit for bit the reference (values are
 * copies). */
static void permute_tiled_on(const char *const vals[2])
{
    static const int p3[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                 {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    static const int s3[][3] = {{1, 1, 1}, {3, 4, 5}, {37, 45, 3},
                                {70, 33, 65}, {1, 97, 33}, {2, 1, 130}};
    static const int p4[][4] = {{0, 2, 3, 1}, {0, 3, 1, 2}, {0, 2, 1, 3},
                                {1, 0, 2, 3}, {3, 2, 1, 0}, {0, 1, 3, 2}};
    static const int s4[][4] = {{2, 3, 35, 33}, {3, 65, 7, 40},
                                {1, 16, 1, 5}};
    static const char *const pn[4] = {"p0", "p1", "p2", "p3"};
    const tb_op *op = tb_op_get(TB_OP_permute);
    void *ctx = NULL;
    char err[256];
    assert_int_equal(B->create(vals, &ctx, err, sizeof err), 0);
    const int n3 = (int)(sizeof s3 / sizeof s3[0]) * 6;
    const int n4 = (int)(sizeof p4 / sizeof p4[0]) *
                   (int)(sizeof s4 / sizeof s4[0]);
    for (int dt = 0; dt < TB_DTYPE_COUNT; dt++)
        for (int c = 0; c < n3 + n4; c++) {
            const bool four = c >= n3;
            const int nd = four ? 4 : 3;
            const int *perm = four ? p4[(c - n3) % 6] : p3[c % 6];
            const int *dims = four ? s4[(c - n3) / 6] : s3[c / 6];
            tb_shape is = {.ndim = nd}, os;
            for (int d = 0; d < nd; d++)
                is.dim[d] = dims[d];
            tb_params p = {0};
            for (int d = 0; d < nd; d++)
                assert_int_equal(
                    tb_params_set(op, &p, pn[d], perm[d], err, sizeof err),
                    0);
            assert_int_equal(tb_op_infer(op, &is, 1, &p, &os, err, sizeof err),
                             0);
            const tb_dtype d = (tb_dtype)dt;
            gbuf gi, go;
            tb_tensor in, out, ref;
            tb_tensor_init(&in, d, &is);
            in.data = gb_new(&gi, tb_tensor_nbytes(&in), misalign(d));
            fill(in.data, d, tb_tensor_numel(&in), false);
            tb_tensor_init(&out, d, &os);
            out.data = gb_new(&go, tb_tensor_nbytes(&out), misalign(d));
            assert_int_equal(tb_tensor_create(&ref, TB_F64, &os), 0);
            const char *impl = NULL;
            tb_kernel_fn fn = B->kernel(ctx, op, d, &p, &impl);
            assert_non_null(fn);
            assert_int_equal(fn(ctx, &in, &out, &p), 0);
            assert_int_equal(op->ref(&in, &ref, &p), 0);
            int64_t bad = 0;
            for (int64_t k = 0; k < tb_tensor_numel(&ref); k++)
                if (!same(tb_tensor_get(&out, k), tb_tensor_get(&ref, k)) &&
                    bad++ < 3)
                    print_error("%s isa=%s threads=%s case %d: [%lld] got "
                                "%g want %g\n",
                                impl, vals[0], vals[1], c, (long long)k,
                                tb_tensor_get(&out, k),
                                tb_tensor_get(&ref, k));
            const bool intact = gb_intact(&gi) && gb_intact(&go);
            gb_free(&gi);
            gb_free(&go);
            tb_tensor_destroy(&ref);
            assert_true(intact);
            assert_int_equal(bad, 0);
        }
    B->destroy(ctx);
}

/* permute_tiled_on at every isa value (f32's SIMD rows:
 * bwd_simd_impl.h's register-transposed tiles, full and partial) and
 * thread count. */
static void test_permute_tiled(void **state)
{
    (void)state;
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(ax, TB_MAX_AXES), 2);
    for (int iv = 0; iv < ax[0].n_values; iv++)
        for (int tv = 0; tv < ax[1].n_values; tv++) {
            const char *vals[2] = {ax[0].values[iv], ax[1].values[tv]};
            permute_tiled_on(vals);
        }
}

/* ---- exp and log f64's SIMD rows (f64_simd_impl.h) ---- */

typedef void (*dx_fn)(const double *, double *, int64_t);

/* Error of got in ulps of want (long double, libm's expl/logl): the ulp
 * of want's binade (2^-1074 below DBL_MIN); infinities and NaN must
 * match exactly. */
static double dx_ulp(double got, long double want)
{
    if (isnan(want))
        return isnan(got) ? 0 : INFINITY;
    const double wd = (double)want;
    if (isnan(got) || isinf(got) || isinf(wd))
        return got == wd ? 0 : INFINITY;
    long double a = fabsl(want);
    int e;
    if (a < 0x1p-1022L) {
        e = -1074;
    } else {
        frexpl(a, &e);
        e -= 53;
    }
    return (double)(fabsl((long double)got - want) / ldexpl(1.0L, e));
}

/* exp within 2 ulp and log within 3 ulp of the long double results on:
 * 2^20 uniform x in [-750, 750] and 2^18 in the subnormal-result range
 * [-745.2, -708] (exp); 2^20 random positive bit patterns (subnormals
 * included) and 2^18 values within 2^-20 of 1 (log); and special
 * values (results 0, 1, infinite or NaN exactly libm's). */
static void test_f64_ulp(void **state)
{
    (void)state;
    enum { N = 1 << 20 };
    double *x = malloc(2 * N * sizeof *x);
    assert_non_null(x);
    double *o = x + N;
    static const double sp[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0,
                                -1.0, 709.782712893384, 709.79, -745.13,
                                -745.14, 0x1p-1074, DBL_MAX, -DBL_MIN};
    for (int lv = TB_ISA_AVX2; lv < n_levels(); lv++)
        for (int f = 0; f < 2; f++) {
            dx_fn fn = NULL;
#if TB_CPU_HAVE_AVX512
            if (lv == TB_ISA_AVX512)
                fn = f ? tb_cpu_log_f64_avx512 : tb_cpu_exp_f64_avx512;
#endif
#if TB_CPU_HAVE_AVX2
            if (lv == TB_ISA_AVX2)
                fn = f ? tb_cpu_log_f64_avx2 : tb_cpu_exp_f64_avx2;
#endif
            assert_non_null(fn);
            double worst = 0, wx = 0;
            for (int fam = 0; fam < 3; fam++) {
                rng_seed(0xf64 + (uint64_t)(f * 4 + fam));
                int64_t n = fam == 0 ? N : fam == 1 ? N / 4 : 14;
                for (int64_t i = 0; i < n; i++) {
                    if (fam == 2) {
                        x[i] = sp[i];
                    } else if (f == 0) {
                        x[i] = fam == 0 ? rng_uniform(-750, 750)
                                        : rng_uniform(-745.2, -708);
                    } else if (fam == 0) {
                        uint64_t u = rng_next() % UINT64_C(0x7ff0000000000000);
                        memcpy(&x[i], &u, sizeof u);
                    } else {
                        x[i] = 1.0 + rng_uniform(-0x1p-20, 0x1p-20);
                    }
                }
                fn(x, o, n);
                for (int64_t i = 0; i < n; i++) {
                    long double w = f ? logl((long double)x[i])
                                      : expl((long double)x[i]);
                    double e = dx_ulp(o[i], w);
                    const double lm = f ? log(x[i]) : exp(x[i]);
                    if (fam == 2 && (!isfinite(lm) || lm == 0 || lm == 1) &&
                        !same(o[i], lm))
                        e = INFINITY; /* special results: libm's exactly */
                    if (!(e <= worst)) {
                        worst = e;
                        wx = x[i];
                    }
                }
            }
            print_message("%s f64 %s: worst %.3f ulp at %a\n",
                          f ? "log" : "exp", tb_cpu_isa_name(lv), worst, wx);
            assert_true(worst <= (f ? 3.0 : 2.0));
        }
    free(x);
}

/* ========================================================================= */
/* 6. The SIMD rows of the element-wise backward ops: accuracy, agreement    */
/* ========================================================================= */

/* The bounds of bwd_simd_impl.h's rows with g = 1 (the derivative
 * itself), in ulp of the result for sigmoid and tanh (normal results;
 * below FLT_MIN the error must stay under FLT_MIN) and for gelu in ulp of
 * |Phi(x)| + |x phi(x)| (its result crosses 0 at x ~ -0.75, where a
 * relative bound means nothing).  Measured maxima are printed: with
 * --vmath-stride 97 5.53, 5.32 ulp, the default stride 4.88, 4.93; with
 * --vmath-exhaustive (every float) 5.53, 5.53.  gelu (table polynomials
 * for |x| <= 3, vmath_simd.h's vs_gelu_dpc; the exp form beyond): the
 * default stride 2.107 (x = -3.22), --vmath-exhaustive 2.431
 * (x = -3.224; |x| <= 3 alone: 1.262 at -2.978).
 * AVX2 and AVX-512 must agree bit for bit (vmath's exp and gelu do). */
#define BW_SIGMOID_ULP 8.0
#define BW_TANH_ULP 8.0
#define BW_GELU_ULP 4.0

static double ulp_of(double a)
{
    int e;
    a = fabs(a);
    if (a < 0x1p-126)
        return 0x1p-149;
    frexp(a, &e);
    return ldexp(1.0, e - 24);
}

/* Derivative of op (sigmoid, tanh or gelu _backward) at x in double;
 * *scale: the magnitude its error is measured against. */
static double bw_ref(tb_op_id id, float xf, double *scale)
{
    const double x = xf, a = fabs(x);
    double r;
    if (isnan(x)) {
        r = NAN;
    } else if (id == TB_OP_sigmoid_backward) {
        double e = exp(-a);
        r = e / ((1 + e) * (1 + e));
    } else if (id == TB_OP_tanh_backward) {
        double e = exp(-2 * a);
        r = 4 * e / ((1 + e) * (1 + e));
    } else if (isinf(x)) {
        r = x > 0 ? 1 : 0;
    } else {
        double cdf = 0.5 * erfc(-x / sqrt(2.0));
        double xpdf = x * exp(-0.5 * x * x) / sqrt(2 * M_PI);
        *scale = fabs(cdf) + fabs(xpdf);
        return cdf + xpdf;
    }
    *scale = fabs(r);
    return r;
}

static void test_bw_act_sweep(void **state)
{
    (void)state;
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(ax, TB_MAX_AXES), 2);
    static const tb_op_id ids[3] = {TB_OP_sigmoid_backward,
                                    TB_OP_tanh_backward,
                                    TB_OP_gelu_backward};
    static const double bound[3] = {BW_SIGMOID_ULP, BW_TANH_ULP,
                                    BW_GELU_ULP};
    tb_shape sh = S(1, VM_CHUNK);
    tb_tensor in[2], out[TB_ISA_COUNT];
    assert_int_equal(tb_tensor_create(&in[0], TB_F32, &sh), 0);
    assert_int_equal(tb_tensor_create(&in[1], TB_F32, &sh), 0);
    for (int i = 0; i < VM_CHUNK; i++)
        ((float *)in[0].data)[i] = 1.0f;
    for (int oi = 0; oi < 3; oi++) {
        const tb_op *op = tb_op_get(ids[oi]);
        /* the SIMD levels: every isa value but scalar and auto */
        void *ctx[TB_ISA_COUNT];
        tb_kernel_fn fn[TB_ISA_COUNT];
        const char *name[TB_ISA_COUNT], *impl[TB_ISA_COUNT];
        int nl = 0;
        for (int iv = 0; iv < ax[0].n_values && nl < TB_ISA_COUNT; iv++) {
            const char *v = ax[0].values[iv];
            if (strcmp(v, "scalar") == 0 || strcmp(v, "auto") == 0)
                continue;
            const char *vals[2] = {v, ax[1].values[0]};
            char err[256];
            assert_int_equal(B->create(vals, &ctx[nl], err, sizeof err), 0);
            fn[nl] = B->kernel(ctx[nl], op, TB_F32, NULL, &impl[nl]);
            assert_non_null(fn[nl]);
            assert_null(strstr(impl[nl], "_c")); /* a SIMD row */
            name[nl] = v;
            assert_int_equal(tb_tensor_create(&out[nl], TB_F32, &sh), 0);
            nl++;
        }
        rng_seed(3000 + (uint64_t)oi);
        uint64_t pos = 0, bad = 0;
        double worst[TB_ISA_COUNT] = {0};
        float wx[TB_ISA_COUNT] = {0};
        int k;
        while ((k = vm_inputs(&pos, in[1].data)) > 0) {
            for (int i = k; i < VM_CHUNK; i++)
                ((float *)in[1].data)[i] = 0;
            for (int l = 0; l < nl; l++)
                assert_int_equal(fn[l](ctx[l], in, &out[l], NULL), 0);
            const float *x = in[1].data;
            for (int l = 0; l < nl; l++) {
                const float *y = out[l].data, *y0 = out[0].data;
                for (int i = 0; i < k; i++) {
                    double sc = 0, want = bw_ref(ids[oi], x[i], &sc);
                    bool ok;
                    double e = 0;
                    if (isnan(want)) {
                        ok = isnan(y[i]);
                    } else if (sc < FLT_MIN) {
                        ok = fabs(y[i] - want) <= FLT_MIN;
                    } else {
                        e = fabs(y[i] - want) / ulp_of(sc);
                        ok = e <= bound[oi];
                    }
                    /* the levels agree bit for bit */
                    ok = ok && memcmp(&y[i], &y0[i], sizeof(float)) == 0;
                    if (e > worst[l]) {
                        worst[l] = e;
                        wx[l] = x[i];
                    }
                    if (!ok && bad++ < 3)
                        print_error("%s isa=%s: x=%a got %a (%s: %a) want "
                                    "%a\n",
                                    op->name, name[l], (double)x[i],
                                    (double)y[i], name[0], (double)y0[i],
                                    want);
                }
            }
        }
        for (int l = 0; l < nl; l++) {
            printf("# %s %-6s (%s): max %.3f ulp at x=%a, bound %.1f\n",
                   op->name, name[l], impl[l], worst[l], (double)wx[l],
                   bound[oi]);
            tb_tensor_destroy(&out[l]);
            B->destroy(ctx[l]);
        }
        assert_int_equal(bad, 0);
    }
    tb_tensor_destroy(&in[0]);
    tb_tensor_destroy(&in[1]);
}

/* ========================================================================= */
/* main                                                                      */
/* ========================================================================= */

/* ---- max_pool2d_backward's SIMD rows: ties, NaN, signed zeros ---- */

/* max_pool2d_backward f32 with 2x2 windows (bwd_simd_impl.h's rows) on x
 * drawn from {-inf, -1, -0, +0, 1, +inf, NaN} (windows of equal maxima,
 * NaN winners, +-0 ties) and g with -0 among uniform values, at every
 * SIMD level and thread count: bit for bit the portable row's output (the
 * level scalar), which test_backward checks against the reference;
 * misaligned canary-guarded operands. */
static void test_bw_pool_special(void **state)
{
    (void)state;
    static const float xs[] = {-INFINITY, -1.0f, -0.0f, 0.0f,
                               1.0f,      INFINITY, NAN};
    static const int sh[][4] = {{2, 3, 9, 37}, {1, 2, 6, 64},
                                {1, 1, 4, 34}, {3, 1, 5, 5}};
    const tb_op *op = tb_op_get(TB_OP_max_pool2d_backward);
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(ax, TB_MAX_AXES), 2);
    char err[256];
    tb_params p = {0};
    assert_int_equal(tb_params_set(op, &p, "kernel", 2, err, sizeof err), 0);
    tb_params_defaults(op, &p);
    rng_seed(4100);
    for (size_t q = 0; q < sizeof sh / sizeof sh[0]; q++) {
        tb_shape is[2] = {S(4, sh[q][0], sh[q][1], sh[q][2] / 2,
                            sh[q][3] / 2),
                          S(4, sh[q][0], sh[q][1], sh[q][2], sh[q][3])};
        gbuf gi[2], gr;
        tb_tensor in[2], ref;
        for (int i = 0; i < 2; i++) {
            tb_tensor_init(&in[i], TB_F32, &is[i]);
            in[i].data = gb_new(&gi[i], tb_tensor_nbytes(&in[i]), 4);
        }
        float *g = in[0].data, *x = in[1].data;
        for (int64_t k = 0; k < tb_tensor_numel(&in[0]); k++)
            g[k] = (rng_next() & 7) == 0 ? -0.0f
                                         : (float)rng_uniform(-2, 2);
        for (int64_t k = 0; k < tb_tensor_numel(&in[1]); k++)
            x[k] = xs[rng_next() % (sizeof xs / sizeof xs[0])];
        tb_tensor_init(&ref, TB_F32, &is[1]);
        ref.data = gb_new(&gr, tb_tensor_nbytes(&ref), 4);
        const char *sv[2] = {"scalar", "1"};
        void *sctx = NULL;
        assert_int_equal(B->create(sv, &sctx, err, sizeof err), 0);
        const char *impl = NULL;
        tb_kernel_fn fn = B->kernel(sctx, op, TB_F32, &p, &impl);
        assert_non_null(fn);
        assert_non_null(strstr(impl, "_c"));
        assert_int_equal(fn(sctx, in, &ref, &p), 0);
        B->destroy(sctx);
        for (int iv = 0; iv < ax[0].n_values; iv++)
            for (int tv = 0; tv < ax[1].n_values; tv++) {
                const char *vals[2] = {ax[0].values[iv], ax[1].values[tv]};
                if (strcmp(vals[0], "scalar") == 0)
                    continue;
                void *ctx = NULL;
                assert_int_equal(B->create(vals, &ctx, err, sizeof err), 0);
                fn = B->kernel(ctx, op, TB_F32, &p, &impl);
                assert_non_null(fn);
                assert_null(strstr(impl, "_c")); /* a SIMD row */
                gbuf go;
                tb_tensor out;
                tb_tensor_init(&out, TB_F32, &is[1]);
                out.data = gb_new(&go, tb_tensor_nbytes(&out), 4);
                assert_int_equal(fn(ctx, in, &out, &p), 0);
                int64_t bad = 0;
                for (int64_t k = 0; k < tb_tensor_numel(&out); k++)
                    if (memcmp((float *)out.data + k, (float *)ref.data + k,
                               sizeof(float)) != 0 &&
                        bad++ < 3)
                        print_error("%s isa=%s threads=%s shape %zu [%lld]: "
                                    "got %a want %a\n",
                                    impl, vals[0], vals[1], q, (long long)k,
                                    (double)((float *)out.data)[k],
                                    (double)((float *)ref.data)[k]);
                const bool intact = gb_intact(&go);
                gb_free(&go);
                B->destroy(ctx);
                assert_true(intact);
                assert_int_equal(bad, 0);
            }
        const bool intact =
            gb_intact(&gi[0]) && gb_intact(&gi[1]) && gb_intact(&gr);
        gb_free(&gi[0]);
        gb_free(&gi[1]);
        gb_free(&gr);
        assert_true(intact);
    }
}

#define T(name) cmocka_unit_test_setup_teardown(test_##name, setup, teardown)
#define OPT(name)                                                         \
    {"op_" #name, test_op, setup, teardown, (void *)(intptr_t)TB_OP_##name}
#define VMT(F, name)                                                      \
    {"vmath_ulp_" name, test_vmath_ulp, setup, teardown,                  \
     (void *)(intptr_t)(F)}

/* Run by test_isa_env in a child: print the level in use and the bad
 * TBENCH_ISA value, if any. */
static int isa_report(void)
{
    const char *bad = tb_cpu_isa_env_error();
    printf("max=%s bad=%s\n", tb_cpu_isa_name(tb_cpu_isa_max()),
           bad ? bad : "-");
    return 0;
}

static int usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--filter PATTERN] [--seed N] [--vmath-stride N] "
            "[--vmath-exhaustive]\n",
            argv0);
    return 2;
}

static bool parse_u64(const char *s, uint64_t *v)
{
    char *end = NULL;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno || !end || *end || s[0] == '-' || end == s)
        return false;
    *v = x;
    return true;
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        T(isa_detect),
        T(isa_mask),
        T(isa_env),
        T(kernel_binary),
        T(kernel_add_relu),
        T(kernel_relu),
        T(kernel_sum),
        T(kernel_log_softmax),
        T(kernel_log_softmax_special),
        T(kernel_softmax),
        T(kernel_softmax_special),
        T(kernel_transpose),
        T(kernel_transpose_nt),
        T(kernel_pool),
        T(kernel_zero),
        OPT(add), OPT(sub), OPT(mul), OPT(div), OPT(relu), OPT(sum),
        OPT(mean), OPT(log_softmax), OPT(softmax), OPT(transpose),
        OPT(matmul), OPT(add_relu), OPT(linear), OPT(conv2d),
        OPT(conv2d_nobias),
        OPT(max_pool2d), OPT(avg_pool2d),
        OPT(exp), OPT(log), OPT(tanh), OPT(sigmoid), OPT(gelu),
        OPT(gelu_tanh), OPT(silu),
        VMT(TB_VM_EXP, "exp"),
        VMT(TB_VM_LOG, "log"),
        VMT(TB_VM_TANH, "tanh"),
        VMT(TB_VM_SIGMOID, "sigmoid"),
        VMT(TB_VM_GELU_ERF, "gelu_erf"),
        VMT(TB_VM_GELU_TANH, "gelu_tanh"),
        VMT(TB_VM_SILU, "silu"),
        T(vmath_special),
        T(vmath_paths),
        T(vmath_edges),
        OPT(softplus), OPT(sqrt), OPT(rsqrt), OPT(leaky_relu),
        OPT(maximum), OPT(minimum),
        T(xs_special),
        T(xs_softplus_ulp),
        OPT(max), OPT(min), OPT(argmax), OPT(var),
        T(xs_reduce_special),
        T(rand_ops),
        T(rand_vmath),
        OPT(pow),
        T(pow_special),
        T(pow_ulp),
        T(pow_sizes),
        T(permute_tiled),
        T(f64_ulp),
        T(xs_reduce_special_f64),
        OPT(relu_backward), OPT(sigmoid_backward), OPT(tanh_backward),
        OPT(gelu_backward), OPT(log_softmax_backward),
        T(bw_act_sweep),
        T(rand_decide),
        OPT(max_pool2d_backward), OPT(avg_pool2d_backward),
        T(bw_pool_special),
        T(xs_argmax_blocks),
    };
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--isa-report") == 0) {
            return isa_report();
        } else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
            cmocka_set_test_filter(argv[++i]);
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            if (!parse_u64(argv[++i], &seed))
                return usage(argv[0]);
        } else if (strcmp(argv[i], "--vmath-stride") == 0 && i + 1 < argc) {
            if (!parse_u64(argv[++i], &vm_stride) || vm_stride == 0 ||
                vm_stride > UINT32_MAX)
                return usage(argv[0]);
        } else if (strcmp(argv[i], "--vmath-exhaustive") == 0) {
            vm_stride = 1;
        } else {
            return usage(argv[0]);
        }
    }
    printf("# test_checkasm: seed 0x%016llx, levels scalar..%s, vmath "
           "sweep stride %llu\n",
           (unsigned long long)seed, tb_cpu_isa_name(n_levels() - 1),
           (unsigned long long)vm_stride);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
