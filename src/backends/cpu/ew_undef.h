/* Undefines the vocabulary of ew_defs.h's expressions (ADD, SUB, MUL,
 * DIV, MAX, MIN, K) after a file has expanded TB_CPU_EW_OPS with its
 * own definitions of it.  No include guard: included once after every
 * such expansion. */
#undef ADD
#undef SUB
#undef MUL
#undef DIV
#undef MAX
#undef MIN
#undef K
