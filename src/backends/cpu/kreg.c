/* The cpu backend's kernel registry: the one table of entry points and
 * its lookup.  See kreg.h for the design; the rows are kreg.h's table,
 * by family, each pair's rows best first down to its C row. */
#include "kreg.h"

#define KROW(op_, dt_, sfx, c)                                            \
    {.op = TB_OP_##op_, .dtype = TB_CPU_DT_##dt_,                         \
     .min_isa = TB_CPU_LV_##sfx, .fn = TB_CPU_KFN(op_, dt_, sfx),         \
     .name = #op_ "_" #dt_ "_" #sfx},
#define KROW_N(op_, dt_, sfx, c, name_)                                   \
    {.op = TB_OP_##op_, .dtype = TB_CPU_DT_##dt_,                         \
     .min_isa = TB_CPU_LV_##sfx, .fn = TB_CPU_KFN(op_, dt_, sfx),         \
     .name = name_},

static const tb_cpu_krow cpu_krows[] = {TB_CPU_KROWS(KROW, KROW_N)};

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
