/* Element-wise ops written once, as expressions of a few exact
 * operations: each line of TB_CPU_EW_OPS makes the op's portable C rows
 * (math_c.c: f32 and f64, in the case dtype), its SIMD rows
 * (ops_simd_impl.h: f32, f64_simd_impl.h: f64, every level), which give
 * the C row's values bit for bit, and their rows in kreg.h's math
 * family.  A new op of this
 * kind costs one line here, its row of the op table (ops/op.h, op.c) and
 * its double-precision reference (ops/ref.c).
 *
 * X(name, weight, expr, ...): name an op of the table (TB_OP_<name>,
 * one input, no parameter), weight its element operations for the
 * thread split, expr its value in terms of the input x and:
 *   ADD(a, b), SUB(a, b), MUL(a, b), DIV(a, b)  IEEE, each rounded once;
 *   MAX(a, b), MIN(a, b)  a < b ? b : a and b < a ? b : a (C++'s
 *                         std::max and std::min, which PyTorch's kernels
 *                         use: a NaN in a is kept, one in b is not);
 *   K(c)                  the constant c in the dtype.
 * A MUL must not feed an ADD or SUB directly: the SIMD levels' compiler
 * may fuse the two (one rounding), the C row's never does.  The extra
 * arguments (...) are passed on to X. */
#ifndef TB_BACKENDS_CPU_EW_DEFS_H
#define TB_BACKENDS_CPU_EW_DEFS_H

#define TB_CPU_EW_OPS(X, ...)                                             \
    X(hardswish, 1, DIV(MUL(x, MIN(MAX(ADD(x, K(3)), K(0)), K(6))), K(6)), \
      __VA_ARGS__)

#endif
