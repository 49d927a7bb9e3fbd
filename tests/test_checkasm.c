/* checkasm-style tests of the cpu backend's SIMD dispatch (model: dav1d
 * tests/checkasm): every row of the kernel table at every ISA level this
 * machine has.  One program in parts (tests/checkasm/):
 *
 *  1. isa_* (here): detection, the mask that lowers the level (what
 *     TBENCH_ISA and the isa axis use), TBENCH_ISA itself (checked in a
 *     child process, since the level is read once per process), and that
 *     a table filled for a level really holds that level's code.
 *  2. kernel_* (kernels.c): the inner loops of each table (kernels.h)
 *     called directly at every level, on sizes 0, 1, 7, 15, 17, 513 and
 *     a few beyond the 1024-value blocks, with inputs and outputs offset
 *     from an aligned tracked buffer (4 bytes for f32, 8 for f64: a
 *     double must stay 8-byte aligned in C) and canary bytes before and
 *     after every buffer.  Element-wise ops must match the portable C
 *     version bit for bit (both are correctly rounded IEEE operations;
 *     add_relu, one rounded add then relu, is also checked at every
 *     level against its definition, special values included); sums and
 *     log_softmax are checked against a double-precision oracle with a
 *     stated bound.
 *  3. op_* (rows.c): the kernel table walked.  One test per op with
 *     rows in tb_cpu_krows(), made from the table at start-up (no list
 *     to keep): its family's cases (those the op's shape rule accepts),
 *     at every isa value (levels, and auto except under sanitizers,
 *     where it would run the best level's rows again) and every thread
 *     count, on
 *     misaligned canary-guarded tensors, the row the ladder gives for the
 *     level against the reference and against the pair's C row.
 *     Zero-size tensors are covered in 2 (the op table rejects 0-dims).
 *  4. vmath_* (vmath.c): the f32 math functions (vmath.h) against libm in double
 *     over a dense strided sweep of all 2^32 bit patterns (every 1031st,
 *     by default, plus 2^18 random inputs in [-30, 30]; --vmath-stride N
 *     changes the stride, --vmath-exhaustive checks every float), each
 *     level against its documented ULP bound; AVX2 and AVX-512 must agree
 *     bit for bit, and so must the exp core's fast and general paths;
 *     special values; sizes, misalignment, canaries and in-place calls.
 *  5. xs_* (simd_rows.c): ops_simd.h's rows (sqrt, rsqrt, leaky_relu,
 *     neg, abs, the scalar forms, maximum, minimum) on special values bit for
 *     bit the C row, softplus's ulp sweep, the reductions' NaN and
 *     signed-zero rules and argmax's lane blocks; xs_ew_f64: the ops
 *     written once (ew_defs.h) in f64 bit for bit their C row;
 *     xs_special_f64: neg, abs, sqrt, rsqrt, leaky_relu, the scalar
 *     forms, maximum and minimum f64 likewise (specials, broadcasts).
 *  6. rand_* (rand_pow.c): the random creation ops and arange at every isa value and
 *     thread count, odd sizes, misaligned canary-guarded outputs, bit
 *     for bit the reference (rand.h's stream); and the error bound of
 *     rand_normal f32's vector log/cos/sin against libm on all 2^24
 *     inputs of the f32 stream (rand_simd.h).
 *     half_arange (half_rows.c): arange's bf16/f16 rows at every level
 *     and 1 and 2 threads bit for bit the C row, and the C row the
 *     definition (exact case, its edges, zeros, overflow).
 *     dropout_rows: dropout's rows (dropout_simd.h) at every isa value
 *     and thread count, odd sizes, specials, misaligned canary-guarded
 *     operands, bit for bit x * (keep ? s : 0) with keep from a
 *     SplitMix64 written again in the test.
 *     pow_*: pow f32's SIMD rows, special values bit for bit powf's,
 *     and their ulp bound on six families of inputs (pow_simd_impl.h),
 *     and at every size to 300 with slow lanes along the loop.
 *     permute_tiled: permute's tiled path against the reference.
 *     tp_planes: the plane transposers of transpose and permute
 *     (transpose.h) at every level and element size, bit for bit an
 *     index loop, odd sides, pitches, streaming stores.
 *     f64_ulp: exp and log f64's SIMD rows against long double libm;
 *     f64_act_ulp: sigmoid, tanh, silu, softplus, gelu and gelu_tanh
 *     f64's likewise, f64_bwd_ulp: the backward activations' f64 rows
 *     (f64_simd_impl.h); op_exp and op_log run them in f64 too;
 *     rand_bm64_ulp: rand_normal f64's Box-Muller (rand.h, which its
 *     SIMD rows repeat bit for bit: rand_ops) against long double;
 *     pow64_ulp: pow f64's SIMD rows against powl on six families
 *     (large exponents, bases near 1, subnormal and near-overflow
 *     results, signs) and libm's special values;
 *     xs_reduce_special_f64: the f64 max/min/argmax rows' NaN and
 *     signed-zero rules against the portable row; xs_argmax_snaps_f64:
 *     argmax f64's rows on long lanes (ties across and around the
 *     scan's snaps, tails, zeros) against the portable row's index.
 *  7. bw_act_sweep (simd_rows.c): the SIMD rows of sigmoid/tanh/gelu_backward
 *     (bwd_simd_impl.h) over the same sweep with g = 1 against the
 *     derivative in double, each against its stated ulp bound, AVX2 and
 *     AVX-512 bit for bit.
 *     bw_pool_special: max_pool2d_backward's SIMD rows on ties, NaN and
 *     signed zeros, bit for bit the portable row.
 *     bw_binary_rows: add/sub/mul/div_backward's SIMD rows on each of
 *     their driver's cases, bit for bit the C row (div's db of a row
 *     vector b within its stated bound).
 *     lsm64_ulp (lsm64.c): log_softmax and softmax f64's rows at every
 *     level (row pipeline, short rows of 1 to 17, 1 to 40 rows, -inf,
 *     rows of -inf, logits past exp's range, results below DBL_MIN)
 *     against a long double oracle within their stated bounds.
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

#include "checkasm/checkasm.h"


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
        assert_int_equal(tb_cpu_kernels_fill(&k, TB_ISA_COUNT - 1), m);
        assert_int_equal(tb_vmath_fill(&vm, TB_ISA_COUNT - 1), m);
        /* nothing above the mask was installed */
        for (int d = 0; d < TB_DTYPE_FULL_COUNT; d++) {
            for (int b = 0; b < TB_CPU_NBIN; b++)
                assert_true(k.bin[b][d].isa <= m);
            assert_true(k.relu[d].isa <= m && k.sum[d].isa <= m &&
                        k.lsm[d].isa <= m && k.tr[d].isa <= m &&
                        k.mm[d].isa <= m);
        }
        /* add and the vector math have rows at every level to avx512
         * (the avx512bf16 level installs avx512's) */
        const int m5 = tb_cpu_isa_clamp(m, TB_ISA_AVX512);
        assert_int_equal(k.bin[TB_CPU_ADD][TB_F32].isa, m5);
        for (int f = 0; f < TB_VM_COUNT; f++)
            assert_int_equal(vm.isa[f], m5);
        /* The backend offers scalar..m and auto = m. */
        tb_axis ax[TB_MAX_AXES];
        assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
        assert_int_equal(ax[0].n_values, m + 2);
        assert_string_equal(ax[0].values[m], tb_cpu_isa_name(m));
        assert_string_equal(ax[0].values[m + 1], "auto");
        const char *vals[2] = {"auto", "1"};
        void *ctx = NULL;
        char err[256];
        assert_int_equal(B->create(B, vals, &ctx, err, sizeof err), 0);
        const char *impl = NULL;
        assert_non_null(
            B->kernel(ctx, tb_op_get(TB_OP_add), TB_F32, NULL, &impl).fn);
        char want[64];
        snprintf(want, sizeof want, "add_f32_%s", tb_cpu_isa_name(m5));
        assert_string_equal(impl, want);
        B->destroy(ctx);
        /* a level above the mask is refused with a message */
        if (m < top) {
            vals[0] = tb_cpu_isa_name(m + 1);
            ctx = (void *)&ctx;
            assert_int_equal(B->create(B, vals, &ctx, err, sizeof err),
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
        {"avx512", d < TB_ISA_AVX512 ? d : TB_ISA_AVX512, false},
        {"avx512bf16", d, false},
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


#define T(name) cmocka_unit_test_setup_teardown(test_##name, setup, teardown)
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

/* --part I/N (1-based): the whole program by default */
static uint64_t part_i = 1, part_n = 1;

static int usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--filter PATTERN] [--part I/N] [--seed N] "
            "[--vmath-stride N] [--vmath-exhaustive]\n",
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
    static const struct CMUnitTest fixed[] = {
        T(isa_detect),
        T(isa_mask),
        T(isa_env),
        T(kernel_binary),
        T(kernel_binary_inplace),
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
        T(kernel_pool_ties),
        T(kernel_zero),
        VMT(TB_VM_EXP, "exp"),
        VMT(TB_VM_LOG, "log"),
        VMT(TB_VM_TANH, "tanh"),
        VMT(TB_VM_SIGMOID, "sigmoid"),
        VMT(TB_VM_GELU_ERF, "gelu_erf"),
        VMT(TB_VM_GELU_TANH, "gelu_tanh"),
        VMT(TB_VM_SILU, "silu"),
        T(vmath_special),
        T(vmath_paths),
        T(vmath_log_lanes),
        T(vmath_edges),
        T(xs_special),
        T(xs_softplus_ulp),
        T(xs_ew_f64),
        T(xs_special_f64),
        T(xs_reduce_special),
        T(rand_ops),
        T(rand_vmath),
        T(dropout_rows),
        T(pow_special),
        T(pow_ulp),
        T(pow_sizes),
        T(permute_tiled),
        T(f64_ulp),
        T(f64_act_ulp),
        T(f64_bwd_ulp),
        T(pow64_ulp),
        T(rand_bm64_ulp),
        T(xs_reduce_special_f64),
        T(bw_act_sweep),
        T(rand_decide),
        T(rand_half),
        T(bw_pool_special),
        T(bw_binary_rows),
        T(xs_argmax_blocks),
        T(xs_argmax_snaps_f64),
        T(f64_fill_exact),
        T(f32_bcast_exact),
        T(half_rows_exact),
        T(half_arange),

        T(optim_half_exact),
        T(optim_ymm_exact),
        T(tp_planes),
        T(lsm64_ulp),
    };
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--isa-report") == 0) {
            return isa_report();
        } else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
            cmocka_set_test_filter(argv[++i]);
        } else if (strcmp(argv[i], "--part") == 0 && i + 1 < argc) {
            /* tests i with i % N == I - 1: meson runs the parts side by
             * side, each under its own timeout */
            unsigned long long pi, pn;
            char extra;
            if (sscanf(argv[++i], "%llu/%llu%c", &pi, &pn, &extra) != 2 ||
                pn < 1 || pi < 1 || pi > pn)
                return usage(argv[0]);
            part_i = pi;
            part_n = pn;
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
    /* the fixed tests, then one per op of the kernel table */
    enum { MAX_TESTS = 256 };
    static struct CMUnitTest tests[MAX_TESTS];
    const int nf = (int)(sizeof fixed / sizeof fixed[0]);
    memcpy(tests, fixed, sizeof fixed);
    int n = nf + checkasm_op_tests(tests + nf, MAX_TESTS - nf);
    int kept = 0;
    for (int t = 0; t < n; t++)
        if ((uint64_t)t % part_n == part_i - 1)
            tests[kept++] = tests[t];
    n = kept;
    return _cmocka_run_group_tests("test_checkasm", tests, (size_t)n, NULL,
                                   NULL);
}

