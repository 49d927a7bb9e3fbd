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

#define KROW_V(op_, dt_, sfx, takes_)                                     \
    {.op = TB_OP_##op_, .dtype = TB_CPU_DT_##dt_,                         \
     .min_isa = TB_CPU_LV_##sfx, .fn = TB_CPU_KFN(op_, dt_, sfx),         \
     .name = #op_ "_" #dt_ "_" #sfx, .takes = TB_CPU_TAKES_##takes_},

static const tb_cpu_krow cpu_view_rows[] = {TB_CPU_VIEW_ROWS(KROW_V)};

const tb_cpu_krow *tb_cpu_view_rows(size_t *n)
{
    if (n)
        *n = sizeof cpu_view_rows / sizeof cpu_view_rows[0];
    return cpu_view_rows;
}

/* Does every input hold matrices the GEMM reads in place: of the last
 * two dims one has stride 1 and the other spans at least a row? */
static bool takes_matrix(const tb_tensor *in, int n_in)
{
    for (int i = 0; i < n_in; i++) {
        const int nd = in[i].ndim;
        if (nd < 2)
            return false;
        const int64_t r = in[i].shape[nd - 2], c = in[i].shape[nd - 1];
        const int64_t sr = in[i].strides[nd - 2], sc = in[i].strides[nd - 1];
        if (!((sc == 1 && sr >= c) || (sr == 1 && sc >= r)))
            return false;
    }
    return true;
}

const tb_cpu_krow *tb_cpu_view_find(const tb_op *op, tb_dtype dt, int isa,
                                    const tb_tensor *in, const char **why)
{
    *why = "kernel needs contiguous input (the cpu backend reads views "
           "in f32 and f64 for element-wise ops, sum, mean, softmax, "
           "log_softmax and matmul)";
    /* element-wise: inputs of one shape (no broadcasting) */
    for (int i = 1; i < op->n_in && op->id != TB_OP_matmul; i++) {
        tb_shape a = tb_tensor_shape(&in[0]), b = tb_tensor_shape(&in[i]);
        if (!tb_shape_equal(&a, &b)) {
            *why = "kernel needs contiguous input (the view rows of "
                   "element-wise ops take inputs of one shape: no "
                   "broadcasting)";
            return NULL;
        }
    }
    for (size_t r = 0; r < sizeof cpu_view_rows / sizeof cpu_view_rows[0];
         r++) {
        const tb_cpu_krow *k = &cpu_view_rows[r];
        if (k->op != op->id || k->dtype != dt || k->min_isa > isa)
            continue;
        if (k->takes == TB_CPU_TAKES_ANY ||
            (k->takes == TB_CPU_TAKES_MATRIX && takes_matrix(in, op->n_in)))
            return k;
    }
    return NULL;
}

const tb_cpu_krow *tb_cpu_krow_c(tb_op_id op, tb_dtype dt)
{
    return tb_cpu_krow_find(cpu_krows, sizeof cpu_krows / sizeof cpu_krows[0],
                            op, dt, TB_ISA_SCALAR);
}
