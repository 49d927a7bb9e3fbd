/* ew_defs.h's vocabulary (ADD, SUB, MUL, DIV, MAX, MIN, K) on
 * vmath_simd.h's float vectors, for the files that expand
 * TB_CPU_EW_OPS on them (ops_simd_impl.h's f32 rows, half_simd.h's
 * fused bf16/f16 loops: the same operations, so the same bits).  x86's
 * max and min give their second operand when either is NaN, so MAX(a,
 * b) (a < b ? b : a) is v_max(b, a), and MIN alike.  No include guard:
 * included before each such expansion, ew_undef.h after it. */
#define ADD(a, b) v_add(a, b)
#define SUB(a, b) v_sub(a, b)
#define MUL(a, b) v_mul(a, b)
#define DIV(a, b) v_div(a, b)
#undef MAX
#undef MIN
#define MAX(a, b) v_max(b, a)
#define MIN(a, b) v_min(b, a)
#define K(c) v_set1((float)(c))
