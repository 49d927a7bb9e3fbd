/* softmax, log_softmax and log_softmax_backward in bf16/f16 over the
 * last axis (half_lsm.h): blocks of whole rows widened into a
 * per-thread f32 scratch of at most HL_ELEMS values a tensor (L1), the
 * level's f32 row function on them, the block narrowed; softmax's and
 * log_softmax's rows longer than 32 at avx512 and avx512bf16 on the
 * 16-bit values themselves (half_lsm_fused.h), and their rows of n <=
 * 16 there in whole blocks of 16 rows (half_lsm_short.h), and
 * log_softmax_backward's too.  half_rows.c's chunks
 * (192 KiB of scratch in L2) ran the f32 row's tb_kernel_fn (operand
 * checks, the driver, a pool call) on each: at 256x1000 bf16
 * log_softmax 1.4x the f32 row's time, at 1024x10 1.3x (now 0.99x and
 * 1.2x; a software prefetch of the next block made both slower).
 * Blocks hold
 * 16-row multiples where they hold more than 16 rows (the f32 rows'
 * short-row paths group VS_LANES <= 16 rows from a block's first row),
 * so every row sees the groups of the whole tensor's f32 row from row
 * 0: the same bits. */
#include "half_lsm.h"

#include "../../base/error.h"
#include "../../ops/alloc.h"
#include "backends/cpu/cpu_config.h"
#include "cpu_internal.h"
#include "drv.h"
#include "isa.h"
#include "kernels.h"
#include "kreg.h"

/* f32 values of a tensor's block (8 KiB: g, y and dx of
 * log_softmax_backward 24 KiB, in a 32 KiB L1) */
#define HL_ELEMS 2048

typedef struct {
    tb_cpu_lsm_rows_fn rows; /* softmax, log_softmax */
    tb_cpu_half_lsm_fn fused; /* their long rows at avx512: no scratch */
    tb_cpu_half_short_lsm_fn shortf; /* their rows of n <= 16: blocks of
                                      * 16 rows, no scratch */
    tb_cpu_half_short_bw_fn bwshort; /* log_softmax_backward's */
    tb_cpu_bw_lsm_fn bw;     /* log_softmax_backward */
    tb_cpu_half_cvt cv;
    const uint16_t *x[2];
    uint16_t *o;
    int n_in;
    int64_t rows_n, n, bpc; /* rows, their length, rows a block */
    int rc[TB_MAX_AXIS_VALUES];
} hl_job;

static void hl_part(void *arg, int part, int nparts)
{
    hl_job *j = arg;
    const int64_t nb = (j->rows_n + j->bpc - 1) / j->bpc;
    int64_t b0, b1;
    tb_cpu_span(nb, 1, part, nparts, &b0, &b1);
    if (b1 <= b0)
        return;
    int64_t r0 = b0 * j->bpc;
    const int64_t r1 = b1 * j->bpc < j->rows_n ? b1 * j->bpc : j->rows_n;
    if (j->fused) {
        j->fused(j->x[0] + r0 * j->n, j->o + r0 * j->n, r1 - r0, j->n);
        return;
    }
    /* whole blocks of 16 rows; what is left (the tensor's last rows %
     * 16: parts start at 16-row multiples) through the scratch */
    if (j->shortf)
        r0 += j->shortf(j->x[0] + r0 * j->n, j->o + r0 * j->n, r1 - r0,
                        j->n);
    if (j->bwshort)
        r0 += j->bwshort(j->x[0] + r0 * j->n, j->x[1] + r0 * j->n,
                         j->o + r0 * j->n, r1 - r0, j->n);
    if (r0 == r1)
        return;
    const int64_t be = j->bpc * j->n; /* a block's values */
    float *buf = tb_alloc((size_t)((j->n_in + 1) * be) * sizeof *buf);
    if (!buf) {
        j->rc[part] = TB_ENOMEM;
        return;
    }
    float *ob = buf + j->n_in * be;
    for (; r0 < r1; r0 += j->bpc) {
        const int64_t k = r1 - r0 < j->bpc ? r1 - r0 : j->bpc;
        const int64_t off = r0 * j->n, m = k * j->n;
        for (int i = 0; i < j->n_in; i++)
            j->cv.widen(j->x[i] + off, buf + i * be, m);
        if (j->bw)
            j->bw(buf, buf + be, ob, 0, k, j->n, 1);
        else
            j->rows(buf, ob, k, j->n);
        j->cv.narrow(ob, j->o + off, m);
    }
    tb_free(buf);
}

int tb_cpu_half_lsm(void *ctx, const tb_op *op, tb_dtype dt, int isa,
                    tb_kernel_fn f32, tb_cpu_half_cvt cv,
                    const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    tb_cpu_ctx *c = ctx;
    /* the f32 row's level: avx512bf16's f32 rows are avx512's */
    const int lv = isa > TB_ISA_AVX512 ? TB_ISA_AVX512 : isa;
    hl_job j = {.cv = cv, .n_in = op->n_in, .o = out[0].data};
    switch (op->id) {
    case TB_OP_softmax:
        j.rows = c->k[lv].sm[TB_F32].rows;
        break;
    case TB_OP_log_softmax:
        j.rows = c->k[lv].lsm[TB_F32].rows;
        break;
    case TB_OP_log_softmax_backward:
        /* the level's f32 row is bwd_simd_impl.h's */
#if TB_CPU_HAVE_AVX512
        if (lv == TB_ISA_AVX512 &&
            f32 == TB_CPU_KFN(log_softmax_backward, f32, avx512))
            j.bw = tb_cpu_half_lsm_bw_avx512();
#endif
#if TB_CPU_HAVE_AVX2
        if (lv == TB_ISA_AVX2 &&
            f32 == TB_CPU_KFN(log_softmax_backward, f32, avx2))
            j.bw = tb_cpu_half_lsm_bw_avx2();
#endif
        if (!j.bw)
            return 1;
        break;
    default:
        return 1;
    }
    (void)f32;
    if (!j.rows && !j.bw)
        return 1;
    int ax;
    const int nd = in[0].ndim;
    if (nd < 1 ||
        tb_axis_norm(p && tb_params_has(p, 0) ? (int64_t)p->v[0] : -1, nd,
                     &ax) ||
        ax != nd - 1)
        return 1; /* another axis: the next path */
    const int64_t numel = tb_tensor_numel(&out[0]);
    j.n = in[0].shape[nd - 1];
    if (numel == 0 || j.n == 0)
        return 1; /* (empty: the whole path's rules) */
    for (int i = 0; i < j.n_in; i++)
        j.x[i] = in[i].data;
    j.rows_n = numel / j.n;
#if TB_CPU_HAVE_AVX512
    /* rows past the f32 rows' short-row paths (KS_LSM_SHORT, 32) at
     * avx512, whose f32 rows half_lsm_fused.h repeats */
    if (j.rows && j.n > 32 && lv == TB_ISA_AVX512 &&
        f32 == (op->id == TB_OP_softmax ? TB_CPU_KFN(softmax, f32, avx512)
                                        : TB_CPU_KFN(log_softmax, f32,
                                                     avx512))) {
        const int soft = op->id == TB_OP_softmax;
#if TB_CPU_HAVE_AVX512BF16
        j.fused = isa == TB_ISA_AVX512BF16
                      ? tb_cpu_half_lsm_fused_avx512bf16(dt, soft)
                      : tb_cpu_half_lsm_fused_avx512(dt, soft);
#else
        j.fused = tb_cpu_half_lsm_fused_avx512(dt, soft);
#endif
    }
    /* rows of n <= 16 (the f32 rows' transposed blocks) likewise */
    if (j.rows && j.n <= 16 && lv == TB_ISA_AVX512 &&
        f32 == (op->id == TB_OP_softmax ? TB_CPU_KFN(softmax, f32, avx512)
                                        : TB_CPU_KFN(log_softmax, f32,
                                                     avx512))) {
        const int soft = op->id == TB_OP_softmax;
#if TB_CPU_HAVE_AVX512BF16
        j.shortf = isa == TB_ISA_AVX512BF16
                       ? tb_cpu_half_lsm_short_avx512bf16(dt, soft)
                       : tb_cpu_half_lsm_short_avx512(dt, soft);
#else
        j.shortf = tb_cpu_half_lsm_short_avx512(dt, soft);
#endif
    }
    if (j.bw && j.n <= 16 && lv == TB_ISA_AVX512)
#if TB_CPU_HAVE_AVX512BF16
        j.bwshort = isa == TB_ISA_AVX512BF16
                        ? tb_cpu_half_lsm_bw_short_avx512bf16(dt)
                        : tb_cpu_half_lsm_bw_short_avx512(dt);
#else
        j.bwshort = tb_cpu_half_lsm_bw_short_avx512(dt);
#endif
#else
    (void)dt;
#endif
    j.bpc = HL_ELEMS / j.n;
    if (j.bpc > 16)
        j.bpc -= j.bpc % 16;
    if (j.bpc < 1)
        j.bpc = 1;
    if (j.bpc > j.rows_n)
        j.bpc = j.rows_n;
    tb_cpu_count_launch(ctx);
    tb_cpu_parallel(ctx, numel * (j.n_in + 1) * 4,
                    (j.rows_n + j.bpc - 1) / j.bpc, hl_part, &j);
    for (int i = 0; i < TB_MAX_AXIS_VALUES; i++)
        if (j.rc[i])
            return j.rc[i];
    return 0;
}
