/* The cpu backend's kernel registry: one table, one lookup.
 *
 * Model: PipeWire's best-first {fn, name, cpu_flags} tables and BLIS's
 * reference-first context.  Every entry point the backend can hand out is
 * one row {op, dtype, min_isa, fn, name}.  Rows come best first (all
 * avx512 rows, then avx2, then the portable ones); the lookup returns the
 * first row of (op, dtype) whose min_isa the instance's level allows.
 * The function and the name the harness records come from that same row,
 * so the recorded impl cannot drift from the code that runs.
 *
 * Each row's function runs its own level's code and nothing else: the
 * entry points are generated from the lists below (a function for every
 * row, no function without a row: -Wmissing-prototypes rejects an entry
 * point no list declares), and an entry point of level L uses only level
 * L's inner loops (cpu.c asserts that the slot it calls was installed by
 * level L).  A new SIMD kernel is thus reported only through a row of its
 * own level; without one the instance keeps running, and naming, the
 * lower level's code.
 *
 * The lists: X(op, dt, sfx) with op an op name (tb_op_id TB_OP_<op>), dt
 * f32 or f64 and sfx the name's level suffix: avx512, avx2, scalar, or c
 * for the portable kernels of create.c, linalg.c and ops_ext.c (both
 * level scalar).  The impl name is "<op>_<dt>_<sfx>", except the native
 * GEMM's matmul rows (XN: an explicit name, the GEMM's own, e.g.
 * "gemm_f32_avx512_12x32"). */
#ifndef TB_BACKENDS_CPU_KREG_H
#define TB_BACKENDS_CPU_KREG_H

#include <stddef.h>

#include "../backend.h"
#include "backends/cpu/cpu_config.h"
#include "isa.h"

typedef struct tb_cpu_krow {
    tb_op_id op;
    tb_dtype dtype;
    int min_isa;      /* TB_ISA_*: the level the code needs (and runs) */
    tb_kernel_fn fn;  /* called with the cpu instance as ctx */
    const char *name; /* the impl name recorded for it */
} tb_cpu_krow;

/* The first row of rows[0..n) for (op, dt) with min_isa <= isa, or
 * NULL.  The rows of one (op, dt) come best first. */
const tb_cpu_krow *tb_cpu_krow_find(const tb_cpu_krow *rows, size_t n,
                                    tb_op_id op, tb_dtype dt, int isa);

/* The backend's table (static storage) and its row count. */
const tb_cpu_krow *tb_cpu_krows(size_t *n);

/* The portable C row of (op, dt): the one row of level TB_ISA_SCALAR,
 * which every SIMD row of the pair is checked against; NULL when the
 * backend lacks the pair. */
const tb_cpu_krow *tb_cpu_krow_c(tb_op_id op, tb_dtype dt);

/* Level of a name suffix. */
#define TB_CPU_LV_avx512 TB_ISA_AVX512
#define TB_CPU_LV_avx2 TB_ISA_AVX2
#define TB_CPU_LV_scalar TB_ISA_SCALAR
#define TB_CPU_LV_c TB_ISA_SCALAR
#define TB_CPU_DT_f32 TB_F32
#define TB_CPU_DT_f64 TB_F64
/* The entry point of a row. */
#define TB_CPU_KFN(op, dt, sfx) tb_cpu_k_##op##_##dt##_##sfx

/* ---- cpu.c: per level ---- */
#define TB_CPU_ROWS_EW(X, sfx)                                            \
    X(add, f32, sfx) X(add, f64, sfx) X(sub, f32, sfx) X(sub, f64, sfx)   \
    X(mul, f32, sfx) X(mul, f64, sfx) X(div, f32, sfx) X(div, f64, sfx)   \
    X(add_relu, f32, sfx) X(add_relu, f64, sfx)                           \
    X(relu, f32, sfx) X(relu, f64, sfx)                                   \
    X(sum, f32, sfx) X(sum, f64, sfx) X(mean, f32, sfx) X(mean, f64, sfx) \
    X(log_softmax, f32, sfx) X(softmax, f32, sfx)                         \
    X(max_pool2d, f32, sfx) X(avg_pool2d, f32, sfx)                       \
    X(transpose, f32, sfx)                                                \
    X(exp, f32, sfx) X(log, f32, sfx) X(tanh, f32, sfx)                   \
    X(sigmoid, f32, sfx) X(gelu, f32, sfx) X(gelu_tanh, f32, sfx)         \
    X(silu, f32, sfx)
/* The ops that the native GEMM serves at the SIMD levels. */
#define TB_CPU_ROWS_MM(X, XN, sfx, f32name, f64name)                      \
    XN(matmul, f32, sfx, f32name) XN(matmul, f64, sfx, f64name)           \
    X(linear, f32, sfx) X(linear, f64, sfx)                               \
    X(conv2d, f32, sfx) X(conv2d, f64, sfx)                               \
    X(conv2d_nobias, f32, sfx) X(conv2d_nobias, f64, sfx)

#if TB_CPU_HAVE_AVX512
#define TB_CPU_ROWS_CPU_AVX512_(X, XN) TB_CPU_ROWS_EW(X, avx512)
#else
#define TB_CPU_ROWS_CPU_AVX512_(X, XN)
#endif
#if TB_CPU_HAVE_AVX512 && TB_CPU_HAVE_GEMM
#define TB_CPU_ROWS_CPU_AVX512(X, XN)                                     \
    TB_CPU_ROWS_CPU_AVX512_(X, XN)                                        \
    TB_CPU_ROWS_MM(X, XN, avx512, "gemm_f32_avx512_12x32",                \
                   "gemm_f64_avx512_12x16")
#else
#define TB_CPU_ROWS_CPU_AVX512(X, XN) TB_CPU_ROWS_CPU_AVX512_(X, XN)
#endif

#if TB_CPU_HAVE_AVX2
#define TB_CPU_ROWS_CPU_AVX2_(X, XN)                                      \
    TB_CPU_ROWS_EW(X, avx2) X(transpose, f64, avx2)
#else
#define TB_CPU_ROWS_CPU_AVX2_(X, XN)
#endif
#if TB_CPU_HAVE_AVX2 && TB_CPU_HAVE_GEMM
#define TB_CPU_ROWS_CPU_AVX2(X, XN)                                       \
    TB_CPU_ROWS_CPU_AVX2_(X, XN)                                          \
    TB_CPU_ROWS_MM(X, XN, avx2, "gemm_f32_avx2_6x16", "gemm_f64_avx2_6x8")
#else
#define TB_CPU_ROWS_CPU_AVX2(X, XN) TB_CPU_ROWS_CPU_AVX2_(X, XN)
#endif

#define TB_CPU_ROWS_CPU_SCALAR(X, XN)                                     \
    TB_CPU_ROWS_EW(X, scalar)                                             \
    X(log_softmax, f64, scalar) X(softmax, f64, scalar)                   \
    X(max_pool2d, f64, scalar) X(avg_pool2d, f64, scalar)                 \
    X(transpose, f64, scalar)                                             \
    X(matmul, f32, scalar) X(matmul, f64, scalar)                         \
    X(linear, f32, scalar) X(linear, f64, scalar)                         \
    X(conv2d, f32, scalar) X(conv2d, f64, scalar)                         \
    X(conv2d_nobias, f32, scalar) X(conv2d_nobias, f64, scalar)

/* ---- optim.c: every optimizer step, each level built ---- */
#define TB_CPU_ROWS_OPTIM_(X, sfx)                                        \
    X(sgd, f32, sfx) X(sgd, f64, sfx)                                     \
    X(sgd_momentum, f32, sfx) X(sgd_momentum, f64, sfx)                   \
    X(adam, f32, sfx) X(adam, f64, sfx) X(adamw, f32, sfx)                \
    X(adamw, f64, sfx) X(adagrad, f32, sfx) X(adagrad, f64, sfx)          \
    X(adamax, f32, sfx) X(adamax, f64, sfx) X(nadam, f32, sfx)            \
    X(nadam, f64, sfx) X(radam, f32, sfx) X(radam, f64, sfx)
#if TB_CPU_HAVE_AVX512
#define TB_CPU_ROWS_OPTIM_AVX512(X) TB_CPU_ROWS_OPTIM_(X, avx512)
#else
#define TB_CPU_ROWS_OPTIM_AVX512(X)
#endif
#if TB_CPU_HAVE_AVX2
#define TB_CPU_ROWS_OPTIM_AVX2(X) TB_CPU_ROWS_OPTIM_(X, avx2)
#else
#define TB_CPU_ROWS_OPTIM_AVX2(X)
#endif
#define TB_CPU_ROWS_OPTIM_SCALAR(X) TB_CPU_ROWS_OPTIM_(X, scalar)

/* ---- create.c, linalg.c: portable, both dtypes ---- */
#define TB_CPU_ROWS_2(X, op) X(op, f32, c) X(op, f64, c)
#define TB_CPU_ROWS_CREATE(X)                                             \
    TB_CPU_ROWS_2(X, zeros) TB_CPU_ROWS_2(X, ones) TB_CPU_ROWS_2(X, full) \
    TB_CPU_ROWS_2(X, arange) TB_CPU_ROWS_2(X, rand_uniform)               \
    TB_CPU_ROWS_2(X, rand_normal) TB_CPU_ROWS_2(X, copy)
#define TB_CPU_ROWS_LINALG(X)                                             \
    TB_CPU_ROWS_2(X, svd) TB_CPU_ROWS_2(X, qr) TB_CPU_ROWS_2(X, eigh)

/* ---- ops_ext.c: portable, both dtypes (f64 only where cpu.c has the
 * f32 row) ---- */
#define TB_CPU_ROWS_EXT(X)                                                \
    TB_CPU_ROWS_2(X, neg) TB_CPU_ROWS_2(X, abs) X(exp, f64, c)            \
    X(log, f64, c) TB_CPU_ROWS_2(X, sqrt) TB_CPU_ROWS_2(X, rsqrt)         \
    TB_CPU_ROWS_2(X, leaky_relu) X(sigmoid, f64, c) X(tanh, f64, c)       \
    X(gelu, f64, c) X(gelu_tanh, f64, c) X(silu, f64, c)                  \
    TB_CPU_ROWS_2(X, softplus) TB_CPU_ROWS_2(X, pow)                      \
    TB_CPU_ROWS_2(X, maximum) TB_CPU_ROWS_2(X, minimum)                   \
    TB_CPU_ROWS_2(X, add_scalar) TB_CPU_ROWS_2(X, sub_scalar)             \
    TB_CPU_ROWS_2(X, mul_scalar) TB_CPU_ROWS_2(X, div_scalar)             \
    TB_CPU_ROWS_2(X, max) TB_CPU_ROWS_2(X, min) TB_CPU_ROWS_2(X, argmax)  \
    TB_CPU_ROWS_2(X, var) TB_CPU_ROWS_2(X, permute)

/* ---- calib.c: the calibration ops, portable ---- */
#define TB_CPU_ROWS_CALIB(X)                                              \
    TB_CPU_ROWS_2(X, calib_work) TB_CPU_ROWS_2(X, calib_spin)
/* ---- backward.c: the backward ops (issue 14), portable, both dtypes */
#define TB_CPU_ROWS_BACKWARD(X)                                           \
    TB_CPU_ROWS_2(X, relu_backward) TB_CPU_ROWS_2(X, sigmoid_backward)    \
    TB_CPU_ROWS_2(X, tanh_backward) TB_CPU_ROWS_2(X, gelu_backward)       \
    TB_CPU_ROWS_2(X, log_softmax_backward)                                \
    TB_CPU_ROWS_2(X, sum_backward) TB_CPU_ROWS_2(X, mean_backward)        \
    TB_CPU_ROWS_2(X, add_backward) TB_CPU_ROWS_2(X, sub_backward)         \
    TB_CPU_ROWS_2(X, mul_backward) TB_CPU_ROWS_2(X, div_backward)         \
    TB_CPU_ROWS_2(X, matmul_backward) TB_CPU_ROWS_2(X, linear_backward)   \
    TB_CPU_ROWS_2(X, nll_loss) TB_CPU_ROWS_2(X, nll_loss_backward)        \
    TB_CPU_ROWS_2(X, max_pool2d_backward)                                 \
    TB_CPU_ROWS_2(X, avg_pool2d_backward)                                 \
    TB_CPU_ROWS_2(X, conv2d_backward)
/* ---- ops_avx2.c, ops_avx512.c: SIMD rows over ops_ext.c's baseline
 * (ops_simd.h), f32 ---- */
#define TB_CPU_ROWS_XS_(X, sfx)                                           \
    X(softplus, f32, sfx) X(sqrt, f32, sfx) X(rsqrt, f32, sfx)            \
    X(leaky_relu, f32, sfx) X(maximum, f32, sfx) X(minimum, f32, sfx)   \
    X(max, f32, sfx) X(min, f32, sfx) X(argmax, f32, sfx)               \
    X(var, f32, sfx)
#if TB_CPU_HAVE_AVX512
#define TB_CPU_ROWS_XS_AVX512(X) TB_CPU_ROWS_XS_(X, avx512)
#else
#define TB_CPU_ROWS_XS_AVX512(X)
#endif
#if TB_CPU_HAVE_AVX2
#define TB_CPU_ROWS_XS_AVX2(X) TB_CPU_ROWS_XS_(X, avx2)
#else
#define TB_CPU_ROWS_XS_AVX2(X)
#endif

/* ---- rand_avx2.c, rand_avx512.c: SIMD rows of the random creation ops
 * over create.c's (rand_simd.h); pow_avx2.c, pow_avx512.c: pow f32 over
 * ops_ext.c's (pow_simd_impl.h); f64_avx2.c, f64_avx512.c: exp, log,
 * var, max, min and argmax f64 over ops_ext.c's (f64_simd_impl.h) ---- */
#define TB_CPU_ROWS_RAND_(X, sfx)                                         \
    X(rand_uniform, f32, sfx) X(rand_uniform, f64, sfx)                   \
    X(rand_normal, f32, sfx) X(pow, f32, sfx)                             \
    X(arange, f32, sfx) X(arange, f64, sfx)                               \
    X(exp, f64, sfx) X(log, f64, sfx) X(var, f64, sfx)                    \
    X(max, f64, sfx) X(min, f64, sfx) X(argmax, f64, sfx)
#if TB_CPU_HAVE_AVX512
#define TB_CPU_ROWS_RAND_AVX512(X) TB_CPU_ROWS_RAND_(X, avx512)
#else
#define TB_CPU_ROWS_RAND_AVX512(X)
#endif
#if TB_CPU_HAVE_AVX2
#define TB_CPU_ROWS_RAND_AVX2(X) TB_CPU_ROWS_RAND_(X, avx2)
#else
#define TB_CPU_ROWS_RAND_AVX2(X)
#endif

/* ---- bwd_avx2.c, bwd_avx512.c: SIMD rows of the element-wise backward
 * ops and max_pool2d_backward over backward.c's portable ones, and of
 * permute over ops_ext.c's (bwd_simd_impl.h), f32 ---- */
#define TB_CPU_ROWS_BW_(X, sfx)                                           \
    X(relu_backward, f32, sfx) X(sigmoid_backward, f32, sfx)              \
    X(tanh_backward, f32, sfx) X(gelu_backward, f32, sfx)              \
    X(log_softmax_backward, f32, sfx)                                     \
    X(max_pool2d_backward, f32, sfx) X(permute, f32, sfx)
#if TB_CPU_HAVE_AVX512
#define TB_CPU_ROWS_BW_AVX512(X) TB_CPU_ROWS_BW_(X, avx512)
#else
#define TB_CPU_ROWS_BW_AVX512(X)
#endif
#if TB_CPU_HAVE_AVX2
#define TB_CPU_ROWS_BW_AVX2(X) TB_CPU_ROWS_BW_(X, avx2)
#else
#define TB_CPU_ROWS_BW_AVX2(X)
#endif

/* Prototypes of every entry point. */
#define TB_CPU_KDECL(op, dt, sfx)                                         \
    int TB_CPU_KFN(op, dt, sfx)(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p);
#define TB_CPU_KDECLN(op, dt, sfx, name) TB_CPU_KDECL(op, dt, sfx)
TB_CPU_ROWS_CPU_AVX512(TB_CPU_KDECL, TB_CPU_KDECLN)
TB_CPU_ROWS_CPU_AVX2(TB_CPU_KDECL, TB_CPU_KDECLN)
TB_CPU_ROWS_CPU_SCALAR(TB_CPU_KDECL, TB_CPU_KDECLN)
TB_CPU_ROWS_OPTIM_AVX512(TB_CPU_KDECL)
TB_CPU_ROWS_OPTIM_AVX2(TB_CPU_KDECL)
TB_CPU_ROWS_OPTIM_SCALAR(TB_CPU_KDECL)
TB_CPU_ROWS_CREATE(TB_CPU_KDECL)
TB_CPU_ROWS_LINALG(TB_CPU_KDECL)
TB_CPU_ROWS_EXT(TB_CPU_KDECL)
TB_CPU_ROWS_CALIB(TB_CPU_KDECL)
TB_CPU_ROWS_BACKWARD(TB_CPU_KDECL)
TB_CPU_ROWS_XS_AVX512(TB_CPU_KDECL)
TB_CPU_ROWS_XS_AVX2(TB_CPU_KDECL)
TB_CPU_ROWS_RAND_AVX512(TB_CPU_KDECL)
TB_CPU_ROWS_RAND_AVX2(TB_CPU_KDECL)
TB_CPU_ROWS_BW_AVX512(TB_CPU_KDECL)
TB_CPU_ROWS_BW_AVX2(TB_CPU_KDECL)

#endif /* TB_BACKENDS_CPU_KREG_H */
