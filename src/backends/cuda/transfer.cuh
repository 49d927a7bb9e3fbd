/* transfer.cu: the copy ops (copy_h2d, copy_d2h, copy_d2d) and the
 * instance's host staging buffer.  CUDA C++ only. */
#ifndef TB_BACKENDS_CUDA_TRANSFER_CUH
#define TB_BACKENDS_CUDA_TRANSFER_CUH

#include "kernels_ext.cuh"

/* The kernel for a copy op, or NULL.  Looking up copy_h2d or copy_d2h
 * makes the next call refill the staging buffer or check the copy
 * (transfer.cu). */
tb_kernel_fn cu_transfer_kernel(cu_ctx *c, tb_op_id id, tb_dtype dt,
                                const char **impl);
/* Frees the staging buffer; cu_destroy calls it. */
void cu_transfer_release(cu_ctx *c);

#endif
