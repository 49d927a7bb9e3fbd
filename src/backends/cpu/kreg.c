/* The cpu backend's kernel registry: the one table of entry points and
 * its lookup.  See kreg.h for the design; the rows are the lists there,
 * in this order: the avx512 rows, the avx2 rows (each level's with
 * ops_simd.h's, rand_simd.h's and bwd_simd_impl.h's), the portable rows of cpu.c and
 * optim.c, create.c and linalg.c, and last ops_ext.c's portable baseline (the reference
 * layer: an op there that cpu.c also implements is reached by the
 * backend only when cpu.c lacks the dtype), then calib.c's calibration
 * ops and backward.c's backward ops. */
#include "kreg.h"

#define KROW(op_, dt_, sfx)                                               \
    {.op = TB_OP_##op_, .dtype = TB_CPU_DT_##dt_,                         \
     .min_isa = TB_CPU_LV_##sfx, .fn = TB_CPU_KFN(op_, dt_, sfx),         \
     .name = #op_ "_" #dt_ "_" #sfx},
#define KROW_N(op_, dt_, sfx, name_)                                      \
    {.op = TB_OP_##op_, .dtype = TB_CPU_DT_##dt_,                         \
     .min_isa = TB_CPU_LV_##sfx, .fn = TB_CPU_KFN(op_, dt_, sfx),         \
     .name = name_},

static const tb_cpu_krow cpu_krows[] = {
    TB_CPU_ROWS_CPU_AVX512(KROW, KROW_N)
    TB_CPU_ROWS_OPTIM_AVX512(KROW)
    TB_CPU_ROWS_XS_AVX512(KROW)
    TB_CPU_ROWS_RAND_AVX512(KROW)
    TB_CPU_ROWS_BW_AVX512(KROW)
    TB_CPU_ROWS_CPU_AVX2(KROW, KROW_N)
    TB_CPU_ROWS_OPTIM_AVX2(KROW)
    TB_CPU_ROWS_XS_AVX2(KROW)
    TB_CPU_ROWS_RAND_AVX2(KROW)
    TB_CPU_ROWS_BW_AVX2(KROW)
    TB_CPU_ROWS_CPU_SCALAR(KROW, KROW_N)
    TB_CPU_ROWS_OPTIM_SCALAR(KROW)
    TB_CPU_ROWS_CREATE(KROW)
    TB_CPU_ROWS_LINALG(KROW)
    TB_CPU_ROWS_EXT(KROW)
    TB_CPU_ROWS_CALIB(KROW)
    TB_CPU_ROWS_BACKWARD(KROW)
};

const tb_cpu_krow *tb_cpu_krows(size_t *n)
{
    if (n)
        *n = sizeof cpu_krows / sizeof cpu_krows[0];
    return cpu_krows;
}

const tb_cpu_krow *tb_cpu_krow_find(const tb_cpu_krow *rows, size_t n,
                                    tb_op_id op, tb_dtype dt, int isa)
{
    for (size_t i = 0; rows && i < n; i++)
        if (rows[i].op == op && rows[i].dtype == dt &&
            rows[i].min_isa <= isa)
            return &rows[i];
    return NULL;
}

const tb_cpu_krow *tb_cpu_krow_c(tb_op_id op, tb_dtype dt)
{
    return tb_cpu_krow_find(cpu_krows, sizeof cpu_krows / sizeof cpu_krows[0],
                            op, dt, TB_ISA_SCALAR);
}
