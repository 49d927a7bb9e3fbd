/* The kernel tables of layout.cu, create.cu, fused.cu, optim.cu, pool.cu,
 * blas.cu, linalg.cu, lanes.cu, norm.cu, attn.cu, embed.cu, norm2.cu,
 * optim2.cu and attn_bw.cu, asked in turn by cu_kernel (module.cu). */
#include "kernels_ext.cuh"

tb_kernel_fn cu_ext_kernel(tb_op_id id, tb_dtype dt, const char **impl)
{
    tb_kernel_fn fn = cu_layout_kernel(id, dt, impl);
    if (!fn)
        fn = cu_create_kernel(id, dt, impl);
    if (!fn)
        fn = cu_fused_kernel(id, dt, impl);
    if (!fn)
        fn = cu_optim_kernel(id, dt, impl);
    if (!fn)
        fn = cu_pool_kernel(id, dt, impl);
    if (!fn)
        fn = cu_blas_kernel(id, dt, impl);
    if (!fn)
        fn = cu_linalg_kernel(id, dt, impl);
    if (!fn)
        fn = cu_lanes_kernel(id, dt, impl);
    if (!fn)
        fn = cu_norm_kernel(id, dt, impl);
    if (!fn)
        fn = cu_attn_kernel(id, dt, impl);
    if (!fn)
        fn = cu_embed_kernel(id, dt, impl);
    if (!fn)
        fn = cu_norm2_kernel(id, dt, impl);
    if (!fn)
        fn = cu_optim2_kernel(id, dt, impl);
    if (!fn)
        fn = cu_attn_bw_kernel(id, dt, impl);
    return fn;
}
