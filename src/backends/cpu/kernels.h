/*
 * Inner-loop kernels of the cpu backend and their per-ISA dispatch table.
 *
 * The backend (cpu.c) owns shapes, broadcasting, tiling and threads; the
 * functions here only run contiguous loops.  Each ISA level has its own
 * file compiled with only that ISA's -m flags (kernels_avx2.c,
 * kernels_avx512.c; the portable ones in kernels_c.c).  A table is
 * filled best-first by climbing the ladder (PipeWire/dav1d style): the C
 * versions are installed, then every level up to the requested one
 * overrides the slots it implements.  Each slot group records the level
 * of the code installed in it; the backend's entry point of a level
 * checks that the slots it calls are that level's own (cpu.c
 * CPU_SLOT_AT), which keeps the registry's names (kreg.h) true.
 *
 * Preconditions shared by every function: n, rows, R, w >= 0 (0 is a
 * no-op); outputs do not overlap inputs (except where noted); pointers
 * need only the natural alignment of their element type.
 */
#ifndef TB_BACKENDS_CPU_KERNELS_H
#define TB_BACKENDS_CPU_KERNELS_H

#include <stdint.h>

#include "../../ops/tensor.h"

/* Sums are blocked: TB_CPU_SUM_BLOCK consecutive values (per column, for
 * the column sums) are added in several independent accumulator lanes of
 * the input type, then each block's total is added to a double.  An f32
 * lane thus adds at most a few dozen terms (error bounded by that many
 * half-ulps of the partial sum's magnitude), while the long-range sum is
 * carried in double: the error does not grow with n the way a plain
 * f32 running sum's does.  The blocking is part of the numerics, so
 * every ISA uses the same block size. */
#define TB_CPU_SUM_BLOCK 1024
/* Rows folded per block by the column sums (per column). */
#define TB_CPU_SUM_COL_ROWS 64
/* Widest column tile the column kernels accept (their per-column state
 * lives on the stack). */
#define TB_CPU_COL_TILE 1024
/* Widest column tile the column sums accept (tb_cpu_sumcols_fn): wider
 * than TB_CPU_COL_TILE so that a row of up to this many columns is read
 * whole, from start to end, once (4096x4096 f32 over axis 0 in four
 * 1024-column tiles read each row as four 4 KiB pieces in four passes:
 * the hardware prefetchers stop at every 4 KiB page and restart on
 * each piece; 14% slower than one 4096-column pass).  The f32 partial
 * sums of a tile (32 KiB at this width) stay in L1 / L2.  The tile
 * does not change the values: each column is summed in row order. */
#define TB_CPU_SUM_COL_TILE 8192

/* o[i] = a[i] OP b[i] (vv), a[0] OP b[i] (sv), a[i] OP b[0] (vs).
 * OP is +, -, *, / or, for TB_CPU_ADD_RELU, relu(a + b): the sum rounded
 * once to the element type, then x > 0 or NaN ? x : +0 (the op
 * add_relu in one pass, bit for bit what add then relu give). */
typedef void (*tb_cpu_bin_fn)(const void *a, const void *b, void *o,
                              int64_t n);
/* The *_nt variants below (vv_nt, relu fn_nt) compute the same values
 * bit for bit but write the output's whole 64-byte lines with
 * non-temporal (streaming) stores where the level has them, and end
 * with a store fence, so the output is visible to other threads once
 * they return.  They are for outputs far beyond the last-level cache:
 * a streaming store skips the read-for-ownership of the output line
 * (a third of the DRAM traffic of an add), but evicts the output from
 * the caches, which costs a cache-resident caller more than it saves.
 * The backend picks them by working-set size; the C level installs the
 * plain functions. */
/* Row broadcasts: for r < rows, o[r * n + i] = a[r * n + i] OP b[r]
 * (sv 0) or a[r] OP b[r * n + i] (sv 1): the vs / sv forms over many
 * short rows in one call (x - max(x, -1, keepdim) of 1024 rows of 10:
 * a vs call a row cost 3.2 ns a row).  Values as vs / sv give them. */
typedef void (*tb_cpu_binrows_fn)(const void *a, const void *b, void *o,
                                  int64_t rows, int64_t n, int sv);
/* o[i] = f(x[i]). */
typedef void (*tb_cpu_unary_fn)(const void *x, void *o, int64_t n);
/* Sum of x[0..n), blocked (TB_CPU_SUM_BLOCK), returned in double. */
typedef double (*tb_cpu_sum_fn)(const void *x, int64_t n);
/* out[r] = the sum of row r < rows of x[rows][n], for short rows (n
 * <= the table's short_n): several rows per vector; same bound as a
 * row's sum. */
typedef void (*tb_cpu_sumrows_fn)(const void *x, int64_t rows, int64_t n,
                                  double *out);
/* acc[j] += sum over r < R of x[r * ld + j], for
 * j < w <= TB_CPU_SUM_COL_TILE;
 * rows are folded into acc every TB_CPU_SUM_COL_ROWS. */
typedef void (*tb_cpu_sumcols_fn)(const void *x, int64_t R, int64_t ld,
                                  int64_t w, double *acc);
/* log_softmax of `rows` contiguous rows of n elements each (n >= 1). */
typedef void (*tb_cpu_lsm_rows_fn)(const void *x, void *o, int64_t rows,
                                   int64_t n);
/* log_softmax down the R rows (R >= 1) of w <= TB_CPU_COL_TILE columns,
 * row stride ld elements (input and output alike).  The softmax slots
 * (sm) take the same arguments and give exp(x - max) / sum instead. */
typedef void (*tb_cpu_lsm_cols_fn)(const void *x, void *o, int64_t R,
                                   int64_t ld, int64_t w);
/* out[j * old + i] = in[i * ild + j] for i < ni, j < nj: bit copies
 * (NaN payloads survive).  ni is at most the table's tr tile. */
typedef void (*tb_cpu_tr_fn)(const void *in, int64_t ild, void *out,
                             int64_t old, int64_t ni, int64_t nj);
/* Geometry of a k x k pooling with stride s and padding pad over planes
 * of H x W giving OH x OW (the op's shape rule: k, s >= 1, 0 <= 2 pad
 * <= k, OH, OW >= 1, so every window holds an in-bounds element). */
typedef struct tb_cpu_pool_geom {
    int64_t H, W, OH, OW, k, s, pad;
} tb_cpu_pool_geom;
/* max_pool2d / avg_pool2d of `planes` consecutive H x W planes into
 * consecutive OH x OW planes.  max: NaN propagates (as a NaN, payload
 * not kept), padding never wins; avg: the in-bounds sum / k^2 (padding
 * counts as zeros).  The SIMD versions need W < 2^30 (int32 lane
 * offsets); the backend runs the portable one beyond. */
typedef void (*tb_cpu_pool_fn)(const void *x, void *o, int64_t planes,
                               const tb_cpu_pool_geom *g);
#define TB_CPU_POOL_SIMD_MAX_W (INT64_C(1) << 30)
/* The portable f64 pooling loop (kernels_c.c; is_max: max, else avg):
 * the f64 SIMD slots' geometries other than 2x2 windows of stride 2. */
void tb_cpu_pool_f64_c(const void *x, void *o, int64_t planes,
                       const tb_cpu_pool_geom *g, int is_max);
/* Rows [i0, i1) of C[M,N] = A[M,K] * B[K,N], all row-major contiguous. */
typedef void (*tb_cpu_mm_fn)(const void *a, const void *b, void *c,
                             int64_t i0, int64_t i1, int64_t K, int64_t N);

enum {
    TB_CPU_ADD,
    TB_CPU_SUB,
    TB_CPU_MUL,
    TB_CPU_DIV,
    TB_CPU_ADD_RELU,
    TB_CPU_NBIN
};

/* A table of kernels for one ISA level.  Indexed by tb_dtype. */
typedef struct tb_cpu_kernels {
    struct {
        tb_cpu_bin_fn vv, sv, vs; /* in this order (tests index them) */
        tb_cpu_bin_fn vv_nt;
        /* vv where the output is one of the inputs (add_ and the other
         * in-place forms): the level's own loop tuned for updating in
         * place, or vv; NULL: vv */
        tb_cpu_bin_fn vv_ip;
        tb_cpu_binrows_fn rows; /* NULL: a vs / sv call per row */
        int isa;
    } bin[TB_CPU_NBIN][TB_DTYPE_COUNT];
    struct {
        tb_cpu_unary_fn fn, fn_nt;
        int isa;
    } relu[TB_DTYPE_COUNT];
    struct {
        tb_cpu_sum_fn row;
        tb_cpu_sumcols_fn cols;
        tb_cpu_sumrows_fn rows; /* NULL: a row call per row */
        int64_t short_n;        /* rows takes n <= short_n */
        int isa;
    } sum[TB_DTYPE_COUNT];
    struct {
        tb_cpu_lsm_rows_fn rows;
        tb_cpu_lsm_cols_fn cols;
        int isa;
    } lsm[TB_DTYPE_COUNT];
    struct {
        tb_cpu_lsm_rows_fn rows;
        tb_cpu_lsm_cols_fn cols;
        int isa;
    } sm[TB_DTYPE_COUNT]; /* softmax */
    struct {
        tb_cpu_tr_fn block;
        /* The same, but full output cache lines may be written with
         * non-temporal stores (for transposes far beyond the caches,
         * where they save the read-for-ownership of every output line);
         * the caller fences before the output is read. */
        tb_cpu_tr_fn block_nt;
        int tile; /* input rows per call (ni <= tile); a power of two */
        int isa;
    } tr[TB_DTYPE_COUNT];
    struct {
        tb_cpu_mm_fn rows;
        int isa;
    } mm[TB_DTYPE_COUNT];
    struct {
        tb_cpu_pool_fn max, avg;
        int isa;
    } pool[TB_DTYPE_COUNT];
} tb_cpu_kernels;

/*
 * Fill *k for ISA level `isa`: portable C first, then each level up to
 * min(isa, tb_cpu_isa_max()) that is built into this binary.  Returns
 * the highest level installed (which may be lower than asked).
 */
int tb_cpu_kernels_fill(tb_cpu_kernels *k, int isa);

/* Per-level installers (each overrides only the slots it implements).
 * Call only when tb_cpu_isa_max() says the level is usable. */
void tb_cpu_kernels_init_c(tb_cpu_kernels *k);
void tb_cpu_kernels_init_avx2(tb_cpu_kernels *k);
void tb_cpu_kernels_init_avx512(tb_cpu_kernels *k);
/* The AVX-512 level's in-place binary loops of 256-bit vectors (add,
 * sub, mul, div; f32, f64) into k's vv_ip slots: what
 * tb_cpu_kernels_init_avx512 installs on AMD CPUs (kernels_avx512.c),
 * and what checkasm tests on any CPU with the level. */
void tb_cpu_kernels_ip_ymm_avx512(tb_cpu_kernels *k);
/* log_softmax and softmax f64's slots (lsm, sm) of a SIMD level: their
 * double exp is f64_simd_impl.h's, so they live in the level's library
 * of double-lane rows (f64_avx2.c, f64_avx512.c), whose installers the
 * level's init calls. */
void tb_cpu_lsm_f64_install_avx2(tb_cpu_kernels *k);
void tb_cpu_lsm_f64_install_avx512(tb_cpu_kernels *k);

/* Which levels this binary was built with (0/1 each). */
int tb_cpu_isa_built(int isa);

#endif /* TB_BACKENDS_CPU_KERNELS_H */
