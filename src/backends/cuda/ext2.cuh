/* Shared by the CUDA module's second set of kernel files (norm2.cu,
 * optim2.cu, attn_bw.cu): their kernel tables' lookup functions and the
 * operand check of a kernel with several outputs.  CUDA C++ only. */
#ifndef TB_BACKENDS_CUDA_EXT2_CUH
#define TB_BACKENDS_CUDA_EXT2_CUH

#include "kernels_ext.cuh"

/* Defines tb_kernel_fn NAME(id, dt, impl): TABLE's row of op id (an
 * array of cu_ext_entry, CU_EXT_ROW's rows). */
#define CU_EXT_LOOKUP(name, table)                                        \
    tb_kernel_fn name(tb_op_id id, tb_dtype dt, const char **impl)        \
    {                                                                     \
        return cu_ext_find(table, sizeof table / sizeof table[0], id, dt, \
                           impl);                                         \
    }

/* An instance, both operand arrays, and in[0..n_in) and out[0..n_out)
 * well-formed contiguous tensors of dtype dt with data. */
static inline bool cu_operands_ok(const cu_ctx *c, const tb_tensor *in,
                                  int n_in, const tb_tensor *out, int n_out,
                                  tb_dtype dt)
{
    if (!cu_args_ok(c, in, n_in, out, dt))
        return false;
    for (int o = 1; o < n_out; o++)
        if (!cu_operand_ok(&out[o], dt))
            return false;
    return true;
}

#endif
