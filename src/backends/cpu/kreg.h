/* The cpu backend's kernel registry: one table, one lookup.
 *
 * Model: PipeWire's conversion table (spa/plugins/audioconvert/
 * fmt-ops.c: grouped by what a row computes, each SIMD row beside the C
 * row of the same pair, the first row the CPU can run wins) and BLIS's
 * reference-first context.  Every entry point the backend can hand out
 * is one row {op, dtype, min_isa, fn, name}.  The rows of one (op, dtype)
 * stand together, best first: AVX-512, AVX2, then the pair's one
 * portable C row; the lookup returns the first row of (op, dtype) whose
 * min_isa the instance's level allows.  The function and the name the
 * harness records come from that same row, so the recorded impl cannot
 * drift from the code that runs.
 *
 * The CPU tier ladder: every (op, dtype) the backend runs has exactly one
 * C row (its level TB_ISA_SCALAR, tb_cpu_krow_c), the reference its SIMD
 * rows are checked against at every level (tests/test_checkasm.c walks
 * this table, so a row without a test cannot exist; test_cpu.c checks
 * the one C row per pair); ops/ref.c's double-precision kernels stay the
 * oracle above them all.
 *
 * Each row's function runs its own level's code and nothing else: an
 * entry point of level L uses only level L's inner loops (the cpu
 * drivers assert that the slot they call was installed by level L).  The
 * prototypes below are generated from the table, and the files define
 * the entry points of their rows: a row without a definition fails to
 * link, a definition without a row fails -Werror=missing-prototypes.
 *
 * The table: X(op, dt, sfx, c) with op an op name (tb_op_id TB_OP_<op>),
 * dt f32, f64, bf16 or f16, sfx the name's level suffix (avx512bf16,
 * avx512, avx2, or for the C row scalar or c) and c the suffix of the
 * pair's C row: scalar for the pairs of the cpu drivers (drv_*.c over
 * the inner-loop tables of kernels.h and vmath.h) and of optim.c, c for
 * the other portable files.
 * A file that serves whole pairs defines its entry points from the table
 * (a driver: the rows whose c is scalar); the per-ISA files of the other
 * SIMD rows instantiate theirs (XS_ENTRIES...).  The impl name is
 * "<op>_<dt>_<sfx>", except the native GEMM's matmul rows (XN(op, dt,
 * sfx, c, name): the GEMM's own name, e.g. "gemm_f32_avx512_12x32"). */
#ifndef TB_BACKENDS_CPU_KREG_H
#define TB_BACKENDS_CPU_KREG_H

#include <stddef.h>

#include "../backend.h"
#include "backends/cpu/cpu_config.h"
#include "ew_defs.h"
#include "isa.h"

/* What strides a row's inputs may have (a case's layout, ops/tensor.h). */
typedef enum {
    TB_CPU_TAKES_CONTIGUOUS = 0, /* every row of the main table */
    /* each input a batch of matrices, the last two dims one of stride 1
     * (row-major with a leading dim, or transposed): the GEMM's */
    TB_CPU_TAKES_MATRIX,
    TB_CPU_TAKES_ANY, /* any strides >= 0: the view rows' general loops */
} tb_cpu_takes;

typedef struct tb_cpu_krow {
    tb_op_id op;
    tb_dtype dtype;
    int min_isa;      /* TB_ISA_*: the level the code needs (and runs) */
    tb_kernel_fn fn;  /* called with the cpu instance as ctx */
    const char *name; /* the impl name recorded for it */
    tb_cpu_takes takes;
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
#define TB_CPU_LV_avx512bf16 TB_ISA_AVX512BF16
#define TB_CPU_LV_avx512 TB_ISA_AVX512
#define TB_CPU_LV_avx2 TB_ISA_AVX2
#define TB_CPU_LV_scalar TB_ISA_SCALAR
#define TB_CPU_LV_c TB_ISA_SCALAR
#define TB_CPU_DT_f32 TB_F32
#define TB_CPU_DT_f64 TB_F64
#define TB_CPU_DT_bf16 TB_BF16
#define TB_CPU_DT_f16 TB_F16
/* The entry point of a row. */
#define TB_CPU_KFN(op, dt, sfx) tb_cpu_k_##op##_##dt##_##sfx

/* ---- row sets: the SIMD rows of a pair that this build has, then its C
 * row `c` (scalar or c) ---- */
#if TB_CPU_HAVE_AVX512BF16
#define TB_CPU_AVX512BF16(X, op, dt, c) X(op, dt, avx512bf16, c)
#else
#define TB_CPU_AVX512BF16(X, op, dt, c)
#endif
#if TB_CPU_HAVE_AVX512
#define TB_CPU_AVX512(X, op, dt, c) X(op, dt, avx512, c)
#else
#define TB_CPU_AVX512(X, op, dt, c)
#endif
#if TB_CPU_HAVE_AVX2
#define TB_CPU_AVX2(X, op, dt, c) X(op, dt, avx2, c)
#else
#define TB_CPU_AVX2(X, op, dt, c)
#endif
#define TB_CPU_LADDER(X, op, dt, c)                                       \
    TB_CPU_AVX512(X, op, dt, c) TB_CPU_AVX2(X, op, dt, c) X(op, dt, c, c)
/* Both dtypes with the same rows. */
#define TB_CPU_LADDER2(X, op, c)                                          \
    TB_CPU_LADDER(X, op, f32, c) TB_CPU_LADDER(X, op, f64, c)
/* A pair with its C row only, both dtypes. */
#define TB_CPU_C2(X, op) X(op, f32, c, c) X(op, f64, c, c)
/* f32's C row only, f64's SIMD rows and C row. */
#define TB_CPU_C64(X, op) X(op, f32, c, c) TB_CPU_LADDER(X, op, f64, c)
/* The native GEMM's SIMD rows (gemm/), when the build has it; then the
 * C row (the driver's scalar loops). */
#if TB_CPU_HAVE_GEMM
#define TB_CPU_GEMM(X, op, dt)                                            \
    TB_CPU_AVX512(X, op, dt, scalar) TB_CPU_AVX2(X, op, dt, scalar)
#if TB_CPU_HAVE_AVX512
#define TB_CPU_GEMM_MM512(XN, dt, name)                                   \
    XN(matmul, dt, avx512, scalar, name)
#else
#define TB_CPU_GEMM_MM512(XN, dt, name)
#endif
#if TB_CPU_HAVE_AVX2
#define TB_CPU_GEMM_MM2(XN, dt, name) XN(matmul, dt, avx2, scalar, name)
#else
#define TB_CPU_GEMM_MM2(XN, dt, name)
#endif
#else
#define TB_CPU_GEMM(X, op, dt)
#define TB_CPU_GEMM_MM512(XN, dt, name)
#define TB_CPU_GEMM_MM2(XN, dt, name)
#endif
#define TB_CPU_GEMM_C(X, op, dt)                                          \
    TB_CPU_GEMM(X, op, dt) X(op, dt, scalar, scalar)

/* ---- the table, by family ----------------------------------------- */

/* Element-wise arithmetic: add..div and the fused add_relu (drv_ew.c
 * over kernels.h, broadcasting), the scalar forms (math_c.c; SIMD rows:
 * ops_simd.h for f32, f64_simd_impl.h for f64), maximum and minimum (ops_simd.h for
 * f32, f64_simd_impl.h for f64, over math_c.c), pow (pow_simd_impl.h
 * for f32, f64_simd_impl.h for f64, over math_c.c). */
#define TB_CPU_ROWS_ARITH(X)                                              \
    TB_CPU_LADDER2(X, add, scalar) TB_CPU_LADDER2(X, sub, scalar)         \
    TB_CPU_LADDER2(X, mul, scalar) TB_CPU_LADDER2(X, div, scalar)         \
    TB_CPU_LADDER2(X, add_relu, scalar)                                   \
    TB_CPU_LADDER2(X, add_scalar, c) TB_CPU_LADDER2(X, sub_scalar, c)     \
    TB_CPU_LADDER2(X, mul_scalar, c) TB_CPU_LADDER2(X, div_scalar, c)     \
    TB_CPU_LADDER2(X, maximum, c) TB_CPU_LADDER2(X, minimum, c)           \
    TB_CPU_LADDER2(X, pow, c)

/* The rows of an op written once (ew_defs.h): its SIMD rows and its C
 * row in both dtypes (f32's SIMD rows ops_simd_impl.h's, f64's
 * f64_simd_impl.h's). */
#define TB_CPU_EW_ROWS(op, w, expr, X) TB_CPU_LADDER2(X, op, c)

/* Element-wise math and activations: relu and the f32 exp, log, tanh,
 * sigmoid, gelu, gelu_tanh and silu (drv_ew.c over kernels.h and
 * vmath.h), exp, log, sigmoid, tanh, silu, softplus, gelu, gelu_tanh,
 * neg, abs, sqrt, rsqrt and leaky_relu f64 (f64_simd_impl.h), neg,
 * abs, sqrt, rsqrt, leaky_relu and softplus f32 (ops_simd.h), the ops written once (ew_defs.h); every other C row is
 * math_c.c's. */
#define TB_CPU_ROWS_MATH(X)                                               \
    TB_CPU_LADDER2(X, neg, c) TB_CPU_LADDER2(X, abs, c)                   \
    TB_CPU_LADDER(X, exp, f32, scalar) TB_CPU_LADDER(X, exp, f64, c)      \
    TB_CPU_LADDER(X, log, f32, scalar) TB_CPU_LADDER(X, log, f64, c)      \
    TB_CPU_LADDER2(X, sqrt, c) TB_CPU_LADDER2(X, rsqrt, c)                \
    TB_CPU_LADDER2(X, relu, scalar)                                       \
    TB_CPU_LADDER2(X, leaky_relu, c)                                      \
    TB_CPU_LADDER(X, sigmoid, f32, scalar) TB_CPU_LADDER(X, sigmoid, f64, c)\
    TB_CPU_LADDER(X, tanh, f32, scalar) TB_CPU_LADDER(X, tanh, f64, c)    \
    TB_CPU_LADDER(X, gelu, f32, scalar) TB_CPU_LADDER(X, gelu, f64, c)    \
    TB_CPU_LADDER(X, gelu_tanh, f32, scalar)                              \
    TB_CPU_LADDER(X, gelu_tanh, f64, c)                                   \
    TB_CPU_LADDER(X, silu, f32, scalar) TB_CPU_LADDER(X, silu, f64, c)    \
    TB_CPU_LADDER(X, softplus, f32, c) TB_CPU_LADDER(X, softplus, f64, c) \
    TB_CPU_EW_OPS(TB_CPU_EW_ROWS, X)

/* Reductions: sum and mean (drv_reduce.c over kernels.h); max, min,
 * argmax and var (ops_simd.h for f32, f64_simd_impl.h for f64, over
 * reduce_c.c; var's contiguous lanes: var_simd.h). */
#define TB_CPU_ROWS_REDUCE(X)                                             \
    TB_CPU_LADDER2(X, sum, scalar) TB_CPU_LADDER2(X, mean, scalar)        \
    TB_CPU_LADDER2(X, max, c) TB_CPU_LADDER2(X, min, c)                   \
    TB_CPU_LADDER2(X, argmax, c) TB_CPU_LADDER2(X, var, c)

/* log_softmax and softmax (drv_reduce.c over kernels.h; the f64 slots
 * of the SIMD levels: f64_simd_impl.h). */
#define TB_CPU_ROWS_SOFTMAX(X)                                            \
    TB_CPU_LADDER2(X, log_softmax, scalar)                                \
    TB_CPU_LADDER2(X, softmax, scalar)

/* Layout: transpose (drv_layout.c) and permute (permute_c.c), both over
 * the levels' plane transposers (transpose.h; bf16/f16: half.c's rows
 * route there). */
#define TB_CPU_ROWS_LAYOUT(X)                                             \
    TB_CPU_LADDER2(X, transpose, scalar)                                  \
    TB_CPU_LADDER2(X, permute, c)

/* Matrix products: matmul and linear, through the native GEMM at the
 * SIMD levels (drv_matmul.c); matmul_int8 (qgemm.c, its avx2 kernel
 * qgemm_avx2.c, its vpdpbusd packers and kernel qgemm_avx512bf16.c; f32
 * only: it quantizes f32 inputs). */
#define TB_CPU_ROWS_MATMUL(X, XN)                                         \
    TB_CPU_GEMM_MM512(XN, f32, "gemm_f32_avx512_12x32")                   \
    TB_CPU_GEMM_MM2(XN, f32, "gemm_f32_avx2_6x16")                        \
    X(matmul, f32, scalar, scalar)                                        \
    TB_CPU_GEMM_MM512(XN, f64, "gemm_f64_avx512_12x16")                   \
    TB_CPU_GEMM_MM2(XN, f64, "gemm_f64_avx2_6x8")                         \
    X(matmul, f64, scalar, scalar)                                        \
    TB_CPU_GEMM_C(X, linear, f32) TB_CPU_GEMM_C(X, linear, f64)           \
    TB_CPU_AVX512BF16(X, matmul_int8, f32, c)                             \
    TB_CPU_AVX2(X, matmul_int8, f32, c) X(matmul_int8, f32, c, c)

/* NCHW convolution (im2col and the native GEMM at the SIMD levels; f32
 * and f64 small stride-1 ones by conv_direct.h's loops at avx512) and
 * pooling (over kernels.h): drv_conv.c. */
#define TB_CPU_ROWS_CONV(X)                                               \
    TB_CPU_GEMM_C(X, conv2d, f32) TB_CPU_GEMM_C(X, conv2d, f64)           \
    TB_CPU_GEMM_C(X, conv2d_nobias, f32)                                  \
    TB_CPU_GEMM_C(X, conv2d_nobias, f64)                                  \
    TB_CPU_LADDER(X, max_pool2d, f32, scalar)                             \
    TB_CPU_LADDER(X, max_pool2d, f64, scalar)                             \
    TB_CPU_LADDER(X, avg_pool2d, f32, scalar)                             \
    TB_CPU_LADDER(X, avg_pool2d, f64, scalar)

/* Normalization over the last dim and its gradients (norm_c.c; f32 at
 * avx2: norm_avx2.c, the gradients' f32 at avx512: norm_avx512.c; f64's
 * SIMD rows norm64_simd_impl.h in f64_avx2.c and f64_avx512.c). */
#define TB_CPU_NORM_ROWS(X, op)                                           \
    TB_CPU_AVX2(X, op, f32, c) X(op, f32, c, c) TB_CPU_LADDER(X, op, f64, c)
#define TB_CPU_NORM_BW_ROWS(X, op)                                        \
    TB_CPU_AVX512(X, op, f32, c) TB_CPU_NORM_ROWS(X, op)
#define TB_CPU_ROWS_NORM(X)                                               \
    TB_CPU_NORM_ROWS(X, layer_norm) TB_CPU_NORM_ROWS(X, rms_norm)         \
    TB_CPU_NORM_BW_ROWS(X, layer_norm_backward)                           \
    TB_CPU_NORM_BW_ROWS(X, rms_norm_backward)

/* Per-channel and per-group normalization and their gradients
 * (bnorm_c.c; the SIMD rows of f32 and f64 bnorm_simd_impl.h in
 * bnorm_avx2.c and bnorm_avx512.c, on bnorm_c.c's driver). */
#define TB_CPU_ROWS_BNORM(X)                                              \
    TB_CPU_LADDER2(X, batch_norm, c) TB_CPU_LADDER2(X, group_norm, c)     \
    TB_CPU_LADDER2(X, batch_norm_backward, c)                             \
    TB_CPU_LADDER2(X, group_norm_backward, c)

/* Attention (attn_c.c, attn_avx2.c: sdpa's, sdpa_backward's and
 * causal_mask's f32 SIMD row; f64's SIMD rows attn64_simd_impl.h
 * in f64_avx2.c and f64_avx512.c). */
#define TB_CPU_ROWS_ATTN(X)                                               \
    TB_CPU_AVX2(X, sdpa, f32, c) TB_CPU_C64(X, sdpa)                      \
    TB_CPU_AVX2(X, sdpa_backward, f32, c) TB_CPU_C64(X, sdpa_backward)    \
    TB_CPU_AVX2(X, causal_mask, f32, c) TB_CPU_C2(X, causal_mask)

/* einsum (einsum_c.c: the plan of ops/einsum.h; its GEMMs at a row's
 * level, as matmul's); einsum1 has no GEMM, one C row per dtype. */
#define TB_CPU_EINSUM_LADDER(X, op)                                       \
    TB_CPU_GEMM(X, op, f32) X(op, f32, scalar, scalar)                    \
    TB_CPU_GEMM(X, op, f64) X(op, f64, scalar, scalar)
#define TB_CPU_ROWS_EINSUM(X)                                             \
    TB_CPU_C2(X, einsum1) TB_CPU_EINSUM_LADDER(X, einsum)                 \
    TB_CPU_EINSUM_LADDER(X, einsum3) TB_CPU_EINSUM_LADDER(X, einsum4)

/* Losses (xent_c.c; f32 at avx2 and avx512: xent_simd.h; f64:
 * xent_f64_simd.h). */
#define TB_CPU_ROWS_LOSS(X)                                               \
    TB_CPU_LADDER2(X, cross_entropy, c)                                   \
    TB_CPU_LADDER2(X, cross_entropy_backward, c)

/* Embeddings (embed_c.c). */
#define TB_CPU_ROWS_EMBED(X)                                              \
    TB_CPU_C2(X, embedding) TB_CPU_C2(X, embedding_backward)

/* Dropout on the random ops' stream (dropout_c.c; the SIMD rows:
 * dropout_simd.h). */
#define TB_CPU_ROWS_DROPOUT(X) TB_CPU_LADDER2(X, dropout, c)

/* Creation (create.c; the SIMD rows of arange and the random ops:
 * rand_simd.h; of ones and full: ops_simd_impl.h for f32,
 * fill_f64_simd.h for f64). */
#define TB_CPU_ROWS_CREATE(X)                                             \
    TB_CPU_C2(X, zeros) TB_CPU_LADDER2(X, ones, c)                        \
    TB_CPU_LADDER2(X, full, c)                                            \
    TB_CPU_LADDER2(X, arange, c) TB_CPU_LADDER2(X, rand_uniform, c)       \
    TB_CPU_LADDER2(X, rand_normal, c)                                     \
    TB_CPU_C2(X, copy)

/* Optimizer steps (optim.c, its loops per level: optim_simd.h). */
#define TB_CPU_ROWS_OPTIM(X)                                              \
    TB_CPU_LADDER2(X, sgd, scalar) TB_CPU_LADDER2(X, sgd_momentum, scalar)\
    TB_CPU_LADDER2(X, adam, scalar) TB_CPU_LADDER2(X, adamw, scalar)      \
    TB_CPU_LADDER2(X, adagrad, scalar) TB_CPU_LADDER2(X, adamax, scalar)  \
    TB_CPU_LADDER2(X, nadam, scalar) TB_CPU_LADDER2(X, radam, scalar)     \
    TB_CPU_LADDER2(X, adabound, scalar)

/* Optimizer steps that reduce over the whole tensor (optim.c over
 * optim_red.h's loops; their SIMD loops, f32 and f64, optim_red_simd.h
 * in optim_red_avx2.c and optim_red_avx512.c). */
#define TB_CPU_ROWS_OPTIM_RED(X)                                          \
    TB_CPU_LADDER2(X, lamb, c) TB_CPU_LADDER2(X, lbfgs, c)

/* Factorizations (linalg.c). */
#define TB_CPU_ROWS_LINALG(X)                                             \
    TB_CPU_C2(X, svd) TB_CPU_C2(X, qr) TB_CPU_C2(X, eigh)

/* Calibration ops (calib.c). */
#define TB_CPU_ROWS_CALIB(X)                                              \
    TB_CPU_C2(X, calib_work) TB_CPU_C2(X, calib_spin)

/* Backward ops (backward.c; the SIMD rows of the element-wise ones,
 * log_softmax_backward and max/avg_pool2d_backward: bwd_simd_impl.h in f32,
 * f64_simd_impl.h for the element-wise ones and log_softmax_backward in
 * f64; sum_backward and mean_backward f64: fill_f64_simd.h, f32:
 * bwd_simd_impl.h; add, sub,
 * mul and div_backward: bwd_bin_simd.h; linear_backward's narrow layers:
 * linbwd_avx512.c; conv2d_backward's avx512 rows: backward.c on
 * conv_direct.h's loops; nll_loss and nll_loss_backward: nll_avx512.h in
 * bwd_avx512.c). */
#define TB_CPU_ROWS_BACKWARD(X)                                           \
    TB_CPU_LADDER2(X, relu_backward, c)                                   \
    TB_CPU_LADDER2(X, sigmoid_backward, c)                                \
    TB_CPU_LADDER2(X, tanh_backward, c)                                   \
    TB_CPU_LADDER2(X, gelu_backward, c)                                   \
    TB_CPU_LADDER2(X, log_softmax_backward, c)                            \
    TB_CPU_LADDER2(X, sum_backward, c) TB_CPU_LADDER2(X, mean_backward, c) \
    TB_CPU_LADDER2(X, add_backward, c) TB_CPU_LADDER2(X, sub_backward, c) \
    TB_CPU_LADDER2(X, mul_backward, c) TB_CPU_LADDER2(X, div_backward, c) \
    TB_CPU_C2(X, matmul_backward)                                         \
    TB_CPU_AVX512(X, linear_backward, f32, c) X(linear_backward, f32, c, c) \
    TB_CPU_AVX512(X, linear_backward, f64, c) X(linear_backward, f64, c, c) \
    TB_CPU_AVX512(X, nll_loss, f32, c) X(nll_loss, f32, c, c)             \
    TB_CPU_AVX512(X, nll_loss, f64, c) X(nll_loss, f64, c, c)             \
    TB_CPU_AVX512(X, nll_loss_backward, f32, c)                           \
    X(nll_loss_backward, f32, c, c)                                       \
    TB_CPU_AVX512(X, nll_loss_backward, f64, c)                           \
    X(nll_loss_backward, f64, c, c)                                       \
    TB_CPU_LADDER2(X, max_pool2d_backward, c)                             \
    TB_CPU_LADDER2(X, avg_pool2d_backward, c)                             \
    TB_CPU_AVX512(X, conv2d_backward, f32, c)                             \
    X(conv2d_backward, f32, c, c)                                         \
    TB_CPU_AVX512(X, conv2d_backward, f64, c) X(conv2d_backward, f64, c, c)

/* bf16 and f16 (half.c): a row of level L widens its inputs to f32
 * with level L's conversions (half_simd.h at avx512 and avx2: F16C /
 * AVX-512 F and integer code; ops/half.h's portable C at c), runs the op's f32 row of level L (the
 * best one at or below it) and rounds each result once to the dtype:
 * PyTorch's CPU numerics (compute in f32, accumulate in f32, round
 * once).  Element-wise ops run block by block in L1-sized f32 scratch, so
 * memory sees only the 16-bit tensors; the others widen whole tensors,
 * but copy, zeros, ones, full, neg, abs, causal_mask, transpose and permute set or move the 16-bit bits
 * themselves.  (half.c: fused loops and reductions read the 16-bit tensors
 * directly where they can; half_bwd.h's rows too.)  Not here: argmax and nll_loss (integer
 * indices a 16-bit float cannot hold past 256 or 2048), the
 * factorizations (PyTorch has none in these dtypes), calibration.  The
 * optimizers take the mixed-precision form: 16-bit parameters and
 * gradients, f32 state (ops/op.h's tb_op_in_dtype), updated in place. */
#define TB_CPU_HALF(op, X)                                                \
    TB_CPU_AVX512(X, op, bf16, c) TB_CPU_AVX2(X, op, bf16, c)             \
    X(op, bf16, c, c) TB_CPU_AVX512(X, op, f16, c)                        \
    TB_CPU_AVX2(X, op, f16, c) X(op, f16, c, c)
/* the fused ops (half_simd.h; ew_defs.h's ops among them; layer_norm
 * and rms_norm: norm_avx512bf16.c) in bf16 at the avx512bf16 level too: bf16
 * narrowed by vcvtne2ps2bf16 (a pair with a subnormal lane by the
 * integer code: the same values as the other levels) */
#define TB_CPU_HALF_NE(op, X)                                             \
    TB_CPU_AVX512BF16(X, op, bf16, c) TB_CPU_HALF(op, X)
#define TB_CPU_HALF_EW(op, w, expr, X) TB_CPU_HALF_NE(op, X)
/* matmul, linear, conv2d, conv2d_nobias and matmul_backward in bf16 at
 * the avx512bf16 level, ahead of the others: the bf16 GEMM on vdpbf16ps
 * (drv_matmul.c, matmul_backward's on 16-bit copies of a^T and b^T,
 * and drv_conv.c's direct loop, conv_direct_avx512bf16.c, at stride 1
 * with few taps, else its im2col over gemm/gemm_bf16_avx512bf16.c), no
 * conversions: bf16 operands, f32 sums (a pair of k per step; bf16
 * denormal inputs read as zero, denormal partial sums flushed to zero),
 * bias (and linear's relu) fused, one rounding.
 * Rows of XN (their own definitions), so that half.c, which defines the
 * X rows of this family, leaves them out. */
#if TB_CPU_HAVE_GEMM && TB_CPU_HAVE_AVX512BF16
#define TB_CPU_HALF_MM(op, X, XN)                                         \
    XN(op, bf16, avx512bf16, c, #op "_bf16_avx512bf16") TB_CPU_HALF(op, X)
#else
#define TB_CPU_HALF_MM(op, X, XN) TB_CPU_HALF(op, X)
#endif
#define TB_CPU_NO_ROW_N(op, dt, sfx, c, name)
/* by family, as above */
#define TB_CPU_HALF_ARITH(X)                                              \
    TB_CPU_HALF_NE(add, X) TB_CPU_HALF_NE(sub, X) TB_CPU_HALF_NE(mul, X)  \
    TB_CPU_HALF_NE(div, X) TB_CPU_HALF_NE(add_relu, X)                    \
    TB_CPU_HALF_NE(add_scalar, X) TB_CPU_HALF_NE(sub_scalar, X)           \
    TB_CPU_HALF_NE(mul_scalar, X) TB_CPU_HALF_NE(div_scalar, X)           \
    TB_CPU_HALF_NE(maximum, X) TB_CPU_HALF_NE(minimum, X)                 \
    TB_CPU_HALF_NE(pow, X)
#define TB_CPU_HALF_MATH(X)                                               \
    TB_CPU_HALF(neg, X) TB_CPU_HALF(abs, X) TB_CPU_HALF_NE(exp, X)        \
    TB_CPU_HALF_NE(log, X) TB_CPU_HALF_NE(sqrt, X)                        \
    TB_CPU_HALF_NE(rsqrt, X) TB_CPU_HALF(relu, X)                         \
    TB_CPU_HALF_NE(leaky_relu, X)                                         \
    TB_CPU_HALF_NE(sigmoid, X) TB_CPU_HALF_NE(tanh, X)                    \
    TB_CPU_HALF_NE(gelu, X) TB_CPU_HALF_NE(gelu_tanh, X)                  \
    TB_CPU_HALF_NE(silu, X)                                               \
    TB_CPU_HALF_NE(softplus, X) TB_CPU_EW_OPS(TB_CPU_HALF_EW, X)
/* reductions, softmax, layout, matrix products, conv, creation */
#define TB_CPU_HALF_SHAPED(X, XN)                                           \
    TB_CPU_HALF(sum, X) TB_CPU_HALF(mean, X) TB_CPU_HALF(max, X)          \
    TB_CPU_HALF(min, X) TB_CPU_HALF(var, X) TB_CPU_HALF_NE(softmax, X)    \
    TB_CPU_HALF_NE(log_softmax, X) TB_CPU_HALF(transpose, X)              \
    TB_CPU_HALF(permute, X) TB_CPU_HALF_MM(matmul, X, XN)                \
    TB_CPU_HALF_MM(linear, X, XN) TB_CPU_HALF_MM(conv2d, X, XN)
#define TB_CPU_HALF_MAKE(X, XN)                                           \
    TB_CPU_HALF_MM(conv2d_nobias, X, XN) TB_CPU_HALF(max_pool2d, X)       \
    TB_CPU_HALF(avg_pool2d, X) TB_CPU_HALF(zeros, X) TB_CPU_HALF(ones, X) \
    TB_CPU_HALF(full, X) TB_CPU_HALF_NE(arange, X)                        \
    TB_CPU_HALF(rand_uniform, X) TB_CPU_HALF(rand_normal, X)              \
    TB_CPU_HALF(copy, X)
/* backward */
#define TB_CPU_HALF_BACKWARD(X)                                           \
    TB_CPU_HALF(relu_backward, X) TB_CPU_HALF_NE(sigmoid_backward, X)     \
    TB_CPU_HALF_NE(tanh_backward, X) TB_CPU_HALF(gelu_backward, X)        \
    TB_CPU_HALF_NE(log_softmax_backward, X) TB_CPU_HALF(sum_backward, X)  \
    TB_CPU_HALF(mean_backward, X) TB_CPU_HALF(add_backward, X)
/* linear_backward's avx512 rows (linbwd_avx512.c: XN, so that half.c
 * leaves them out), then half.c's avx2 and C rows */
#if TB_CPU_HAVE_AVX512
#define TB_CPU_HALF_LB512(XN, dt)                                         \
    XN(linear_backward, dt, avx512, c, "linear_backward_" #dt "_avx512")
#else
#define TB_CPU_HALF_LB512(XN, dt)
#endif
#define TB_CPU_HALF_LB(X, XN)                                             \
    TB_CPU_HALF_LB512(XN, bf16) TB_CPU_AVX2(X, linear_backward, bf16, c)  \
    X(linear_backward, bf16, c, c) TB_CPU_HALF_LB512(XN, f16)             \
    TB_CPU_AVX2(X, linear_backward, f16, c) X(linear_backward, f16, c, c)
#define TB_CPU_HALF_BACKWARD2(X, XN)                                      \
    TB_CPU_HALF(sub_backward, X) TB_CPU_HALF_NE(mul_backward, X)          \
    TB_CPU_HALF_NE(div_backward, X) TB_CPU_HALF_MM(matmul_backward, X, XN) \
    TB_CPU_HALF_LB(X, XN) TB_CPU_HALF(max_pool2d_backward, X)             \
    TB_CPU_HALF(avg_pool2d_backward, X) TB_CPU_HALF(conv2d_backward, X)
/* optimizer steps: 16-bit p and g, f32 state (tb_op_in_dtype); the
 * element-wise ones in bf16 at avx512bf16 too (p narrowed by
 * vcvtneps2bf16: optim_avx512bf16.c) */
#define TB_CPU_HALF_OPTIM(X)                                              \
    TB_CPU_HALF_NE(sgd, X) TB_CPU_HALF_NE(sgd_momentum, X)                \
    TB_CPU_HALF_NE(adam, X) TB_CPU_HALF_NE(adamw, X)                      \
    TB_CPU_HALF_NE(adagrad, X) TB_CPU_HALF_NE(adamax, X)                  \
    TB_CPU_HALF_NE(nadam, X) TB_CPU_HALF_NE(radam, X)                     \
    TB_CPU_HALF_NE(adabound, X) TB_CPU_HALF(lamb, X) TB_CPU_HALF(lbfgs, X)
/* every 16-bit row; TB_CPU_ROWS_HALF(X): those half.c defines */
#define TB_CPU_ROWS_HALF(X) TB_CPU_ROWS_HALF_XN(X, TB_CPU_NO_ROW_N)
#define TB_CPU_ROWS_HALF_XN(X, XN)                                        \
    TB_CPU_HALF_ARITH(X) TB_CPU_HALF_MATH(X) TB_CPU_HALF_SHAPED(X, XN)    \
    TB_CPU_HALF_MAKE(X, XN) TB_CPU_HALF_BACKWARD(X)                       \
    TB_CPU_HALF_BACKWARD2(X, XN)                                          \
    TB_CPU_HALF_OPTIM(X) TB_CPU_HALF_NE(layer_norm, X)                   \
    TB_CPU_HALF_NE(rms_norm, X)                                           \
    /* bf16 at avx512bf16: norm_avx512bf16.c, bnorm_avx512bf16.c */      \
    TB_CPU_HALF_NE(layer_norm_backward, X)                                \
    TB_CPU_HALF_NE(rms_norm_backward, X)                                  \
    TB_CPU_HALF_NE(group_norm, X) TB_CPU_HALF_NE(batch_norm_backward, X)  \
    TB_CPU_HALF_NE(group_norm_backward, X) TB_CPU_HALF(sdpa_backward, X)  \
    TB_CPU_HALF(sdpa, X) TB_CPU_HALF(causal_mask, X)

/* Every row: X for a row named "<op>_<dt>_<sfx>", XN for one with its
 * own name. */
#define TB_CPU_KROWS(X, XN)                                               \
    TB_CPU_ROWS_ARITH(X) TB_CPU_ROWS_MATH(X) TB_CPU_ROWS_REDUCE(X)        \
    TB_CPU_ROWS_SOFTMAX(X) TB_CPU_ROWS_LAYOUT(X)                          \
    TB_CPU_ROWS_MATMUL(X, XN) TB_CPU_ROWS_CONV(X)                         \
    TB_CPU_ROWS_CREATE(X) TB_CPU_ROWS_OPTIM(X) TB_CPU_ROWS_OPTIM_RED(X)   \
    TB_CPU_ROWS_LINALG(X)                                                 \
    TB_CPU_ROWS_CALIB(X) TB_CPU_ROWS_BACKWARD(X) TB_CPU_ROWS_NORM(X)      \
    TB_CPU_ROWS_BNORM(X)                                                  \
    TB_CPU_ROWS_ATTN(X) TB_CPU_ROWS_LOSS(X) TB_CPU_ROWS_EMBED(X)          \
    TB_CPU_ROWS_DROPOUT(X) TB_CPU_ROWS_EINSUM(X) TB_CPU_ROWS_HALF_XN(X, XN)

/* ---- the view rows (drv_view.c) ------------------------------------
 * Every row above takes contiguous inputs.  A case whose inputs are
 * views (a config's "layout": transposed, strided, sliced) is looked up
 * here instead (the backend's kernel_view slot, tb_cpu_view_find): the
 * first row of (op, dt), best first, whose level the instance allows
 * and that takes the inputs' strides.  Element-wise ops (inputs of one
 * shape), sum, mean, softmax and log_softmax have one portable row of
 * any strides (suffix view); matmul has the native GEMM's rows at avx2
 * and avx512 (suffix <level>_view: operands with a unit-stride dim, a
 * transposed one as the GEMM's transpose flag) above its portable row.
 * So a SIMD level runs the portable view row for what its GEMM cannot
 * read (a strided matmul: inner stride 2), never a contiguous row.
 * X(op, dt, sfx, takes). */
#define TB_CPU_LV_view TB_ISA_SCALAR
#define TB_CPU_LV_avx2_view TB_ISA_AVX2
#define TB_CPU_LV_avx512_view TB_ISA_AVX512
#define TB_CPU_VIEW2(X, op) X(op, f32, view, ANY) X(op, f64, view, ANY)
#if TB_CPU_HAVE_GEMM && TB_CPU_HAVE_AVX512
#define TB_CPU_VIEW_MM512(X, dt) X(matmul, dt, avx512_view, MATRIX)
#else
#define TB_CPU_VIEW_MM512(X, dt)
#endif
#if TB_CPU_HAVE_GEMM && TB_CPU_HAVE_AVX2
#define TB_CPU_VIEW_MM2(X, dt) X(matmul, dt, avx2_view, MATRIX)
#else
#define TB_CPU_VIEW_MM2(X, dt)
#endif
#define TB_CPU_VIEW_ROWS(X)                                               \
    TB_CPU_VIEW2(X, add) TB_CPU_VIEW2(X, sub) TB_CPU_VIEW2(X, mul)        \
    TB_CPU_VIEW2(X, div) TB_CPU_VIEW2(X, maximum)                         \
    TB_CPU_VIEW2(X, minimum) TB_CPU_VIEW2(X, relu) TB_CPU_VIEW2(X, neg)   \
    TB_CPU_VIEW2(X, abs) TB_CPU_VIEW2(X, exp) TB_CPU_VIEW2(X, log)        \
    TB_CPU_VIEW2(X, sqrt) TB_CPU_VIEW2(X, sigmoid) TB_CPU_VIEW2(X, tanh)  \
    TB_CPU_VIEW2(X, gelu) TB_CPU_VIEW2(X, silu)                           \
    TB_CPU_VIEW2(X, sum) TB_CPU_VIEW2(X, mean)                            \
    TB_CPU_VIEW2(X, softmax) TB_CPU_VIEW2(X, log_softmax)                 \
    TB_CPU_VIEW_MM512(X, f32) TB_CPU_VIEW_MM2(X, f32)                     \
    TB_CPU_VIEW_MM512(X, f64) TB_CPU_VIEW_MM2(X, f64)                     \
    TB_CPU_VIEW2(X, matmul)

/* The view rows (static storage) and their count. */
const tb_cpu_krow *tb_cpu_view_rows(size_t *n);
/* The view row for op at dt on an instance of level isa whose inputs
 * are in[0..op->n_in) (headers), or NULL with *why (one line). */
const tb_cpu_krow *tb_cpu_view_find(const tb_op *op, tb_dtype dt, int isa,
                                    const tb_tensor *in, const char **why);

/* Prototypes of every entry point. */
#define TB_CPU_KDECL(op, dt, sfx, c)                                      \
    int TB_CPU_KFN(op, dt, sfx)(void *ctx, const tb_tensor *in,           \
                                tb_tensor *out, const tb_params *p);
#define TB_CPU_KDECLN(op, dt, sfx, c, name) TB_CPU_KDECL(op, dt, sfx, c)
TB_CPU_KROWS(TB_CPU_KDECL, TB_CPU_KDECLN)
#define TB_CPU_KDECLV(op, dt, sfx, takes) TB_CPU_KDECL(op, dt, sfx, c)
TB_CPU_VIEW_ROWS(TB_CPU_KDECLV)

#endif /* TB_BACKENDS_CPU_KREG_H */
