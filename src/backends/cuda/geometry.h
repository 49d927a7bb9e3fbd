/* Launch geometry and index arithmetic of the CUDA module, host-testable.
 *
 * Everything here is pure integer arithmetic on shapes: how many blocks a
 * launch gets, which input element feeds output element i under NumPy
 * broadcasting, how a reduction is tiled and which elements one tile
 * sums.  The kernels call these functions on the device; the launchers
 * call them on the host; tests/test_cuda_host.c compiles this header as
 * C11 and checks every function against brute force on the CPU (no GPU
 * needed).  So the header must stay valid C11 and CUDA C++: no
 * templates, no references, no C-only syntax.
 *
 * All sizes are int64_t element counts.  Shapes are row-major and
 * contiguous (the module only accepts contiguous tensors). */
#ifndef TB_BACKENDS_CUDA_GEOMETRY_H
#define TB_BACKENDS_CUDA_GEOMETRY_H

#include <stdint.h>

#ifdef __CUDACC__
#define TB_GEOM_FN static __host__ __device__ __forceinline__
#else
#define TB_GEOM_FN static inline
#endif

/* Same value as TB_MAX_DIMS (src/ops/tensor.h); the module asserts it. */
#define TB_GEOM_MAX_DIMS 8

/* Threads per block of the 1-D (element-wise) launches. */
#define TB_CU_BLOCK 256

/* ---- 1-D launches ----------------------------------------------------- */

/* Blocks for n elements at `block` threads each, for a grid-stride loop:
 * ceil(n / block), at most max_blocks, never 0 (a launch with 0 blocks is
 * an error; the launchers skip n == 0 themselves).  Preconditions:
 * block >= 1, max_blocks >= 1.  With the loop
 *     for (i = blockIdx.x*block + threadIdx.x; i < n; i += blocks*block)
 * every element in [0, n) is visited exactly once (test_cuda_host). */
TB_GEOM_FN int64_t tb_cu_blocks_1d(int64_t n, int64_t block,
                                   int64_t max_blocks)
{
    int64_t b = n > 0 ? (n - 1) / block + 1 : 1;
    if (b > max_blocks)
        b = max_blocks;
    return b < 1 ? 1 : b;
}

/* Vectorized element-wise launches: 16-byte loads and stores (4 floats
 * or 2 doubles, `width`) carry four times the bytes per memory operation
 * of a scalar loop, which a grid capped at a few waves needs to keep
 * device memory busy (add on 16M f32 ran at 70% of the copy peak of an
 * H200 with the scalar loop).  Vector v covers elements
 * [v*width, (v+1)*width) for v < tb_cu_vec_count(n, width); the tail
 * [count*width, n) goes element by element.  The launch's blocks come
 * from tb_cu_vec_work(n, width), the larger of the two loops' lengths,
 * never 0.  Every element is visited exactly once (test_cuda_host). */
TB_GEOM_FN int64_t tb_cu_vec_count(int64_t n, int64_t width)
{
    return n > 0 && width > 0 ? n / width : 0;
}

TB_GEOM_FN int64_t tb_cu_vec_work(int64_t n, int64_t width)
{
    int64_t v = tb_cu_vec_count(n, width);
    int64_t tail = n - v * width;
    return v > tail ? v : (tail > 0 ? tail : 1);
}

/* ---- broadcasting ------------------------------------------------------ */

/* Output element i of a binary op reads a[off_a] and b[off_b].  Dims are
 * aligned at the end (NumPy); an input dim of 1 (or a missing leading
 * dim) has stride 0.  Adjacent dims that both inputs step through alike
 * are merged and dims of size 1 dropped, so `ndim` is usually 1 or 2 and
 * 0 when the output has one element.  `same` is set when neither input
 * broadcasts (off_a = off_b = i). */
typedef struct tb_bcast {
    int ndim;
    int same;
    int64_t shape[TB_GEOM_MAX_DIMS];
    int64_t stride[2][TB_GEOM_MAX_DIMS];
} tb_bcast;

/* Broadcast contiguous a (an dims) with contiguous b (bn dims).  Writes
 * the output shape to oshape/ondim and fills bc.  Returns 0, or -1 when
 * the shapes do not broadcast or a rank is outside 0..TB_GEOM_MAX_DIMS. */
TB_GEOM_FN int tb_bcast_init(tb_bcast *bc, const int64_t *ash, int an,
                             const int64_t *bsh, int bn, int64_t *oshape,
                             int *ondim)
{
    if (an < 0 || bn < 0 || an > TB_GEOM_MAX_DIMS || bn > TB_GEOM_MAX_DIMS)
        return -1;
    int nd = an > bn ? an : bn;
    int64_t sa[TB_GEOM_MAX_DIMS], sb[TB_GEOM_MAX_DIMS];
    int64_t ca = 1, cb = 1; /* contiguous strides, innermost first */
    for (int d = nd - 1; d >= 0; d--) {
        int ia = d - (nd - an), ib = d - (nd - bn);
        int64_t da = ia >= 0 ? ash[ia] : 1, db = ib >= 0 ? bsh[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return -1;
        oshape[d] = da == 1 ? db : da;
        sa[d] = da == 1 ? 0 : ca;
        sb[d] = db == 1 ? 0 : cb;
        ca *= da;
        cb *= db;
    }
    *ondim = nd;
    /* Merge: keep dims of size > 1; fold dim d into the kept dim after
     * it when both inputs step through d exactly as through the whole
     * kept dim (stride[d] == stride[next] * shape[next]). */
    int k = 0;
    int64_t shp[TB_GEOM_MAX_DIMS], ta[TB_GEOM_MAX_DIMS], tb[TB_GEOM_MAX_DIMS];
    for (int d = nd - 1; d >= 0; d--) {
        if (oshape[d] == 1)
            continue;
        if (k > 0 && sa[d] == ta[k - 1] * shp[k - 1] &&
            sb[d] == tb[k - 1] * shp[k - 1]) {
            shp[k - 1] *= oshape[d];
            continue;
        }
        shp[k] = oshape[d];
        ta[k] = sa[d];
        tb[k] = sb[d];
        k++;
    }
    /* Stored outermost first. */
    bc->ndim = k;
    bc->same = k == 0 || (k == 1 && ta[0] == 1 && tb[0] == 1);
    for (int d = 0; d < TB_GEOM_MAX_DIMS; d++) {
        int src = k - 1 - d;
        bc->shape[d] = d < k ? shp[src] : 1;
        bc->stride[0][d] = d < k ? ta[src] : 0;
        bc->stride[1][d] = d < k ? tb[src] : 0;
    }
    return 0;
}

/* Offsets into a and b of output element i (0 <= i < numel). */
TB_GEOM_FN void tb_bcast_offsets(const tb_bcast *bc, int64_t i,
                                 int64_t *off_a, int64_t *off_b)
{
    int64_t oa = 0, ob = 0;
    for (int d = bc->ndim - 1; d > 0; d--) {
        int64_t q = i / bc->shape[d];
        int64_t r = i - q * bc->shape[d];
        oa += r * bc->stride[0][d];
        ob += r * bc->stride[1][d];
        i = q;
    }
    if (bc->ndim > 0) { /* the outermost dim needs no division */
        oa += i * bc->stride[0][0];
        ob += i * bc->stride[1][0];
    }
    *off_a = oa;
    *off_b = ob;
}

/* ---- reductions and softmax ------------------------------------------ */

/* A reduction (or softmax) of a contiguous tensor along one axis views
 * it as [outer, len, inner]: outer = product of the dims before the
 * axis, inner = after it.  Reducing every element is outer = inner = 1,
 * len = numel.  axis: 0..ndim-1, or -1 for all elements. */
TB_GEOM_FN void tb_reduce_view(const int64_t *shape, int ndim, int axis,
                               int64_t *outer, int64_t *len, int64_t *inner)
{
    int64_t o = 1, l = 1, n = 1;
    for (int d = 0; d < ndim; d++) {
        if (axis < 0 || d == axis)
            l *= shape[d];
        else if (d < axis)
            o *= shape[d];
        else
            n *= shape[d];
    }
    *outer = o;
    *len = l;
    *inner = n;
}

/* Smallest number of elements one thread sums in a chunk before the
 * reduced axis is split further (below it the partials cost more than
 * the parallelism gains). */
#define TB_REDUCE_MIN_ITEMS 16

/* How one pass of a reduction is tiled (see reduce.cu for why).
 *
 * rows mode (inner == 1, the axis is contiguous): a group of `group`
 * threads (32 = one warp, or 256 = the block) sums one chunk of one row
 * with unit stride, lanes interleaved so that loads coalesce.
 * cols mode (inner > 1): one thread sums one chunk of one column, stride
 * inner; neighbouring threads take neighbouring columns, so loads
 * coalesce across the warp.
 * The reduced axis is cut into `chunks` pieces of chunk_len when there
 * are too few rows/columns to fill the GPU; each (row or column, chunk)
 * item then writes a partial, and a second pass (tb_reduce_next) sums
 * the partials.  With chunks == 1 the pass writes the result. */
typedef struct tb_reduce_plan {
    int64_t outer, len, inner;
    int cols;          /* 1: cols mode; 0: rows mode */
    int group;         /* rows mode: threads per item (32 or 256) */
    int block;         /* threads per block */
    int64_t chunks;    /* >= 1 */
    int64_t chunk_len; /* >= 1; chunks * chunk_len >= len */
    int64_t items;     /* (row or column, chunk) pairs */
    int64_t blocks;    /* grid size, >= 1 */
} tb_reduce_plan;

/* One item of a plan: its `count` input elements start at `start` and
 * are `stride` apart; its result goes to out[out_index] (the final
 * output when chunks == 1, else partial out_index).  Partials are laid
 * out [outer][chunks] in rows mode and [chunks][outer*inner] in cols
 * mode: exactly the [outer', len', inner'] view of the next pass. */
typedef struct tb_reduce_item {
    int64_t start, count, stride, out_index;
} tb_reduce_item;

/* Cut an axis of len elements into about `want` chunks, at most `most`
 * (so each is long enough) and `fit` (so the partials fit), at least 1:
 * *chunk_len >= 1 and the *chunks (>= 1) of it that cover len, none
 * empty; an empty axis is one empty chunk (sum 0).  The split of
 * tb_reduce_plan_make and of lanes_plan.h's tb_lane_plan_make. */
TB_GEOM_FN void tb_chunks_split(int64_t len, int64_t want, int64_t most,
                                int64_t fit, int64_t *chunk_len,
                                int64_t *chunks)
{
    int64_t c = want;
    if (c > most)
        c = most;
    if (c > fit)
        c = fit;
    if (c < 1)
        c = 1;
    *chunk_len = len > 0 ? (len + c - 1) / c : 1;
    *chunks = len > 0 ? (len + *chunk_len - 1) / *chunk_len : 1;
}

/* Plan one pass over [outer, len, inner] (all >= 1).  target_threads:
 * threads that fill the device (SMs x resident threads per SM);
 * max_partials: scratch elements for partials (0: never split, as
 * softmax and a second pass need); max_blocks: grid cap (>= 1). */
TB_GEOM_FN tb_reduce_plan tb_reduce_plan_make(int64_t outer, int64_t len,
                                              int64_t inner,
                                              int64_t target_threads,
                                              int64_t max_partials,
                                              int64_t max_blocks)
{
    tb_reduce_plan p;
    p.outer = outer;
    p.len = len;
    p.inner = inner;
    p.cols = inner > 1;
    p.block = TB_CU_BLOCK;
    p.group = p.cols ? 1 : (len >= 1024 ? TB_CU_BLOCK : 32);
    int64_t lines = outer * inner; /* rows or columns */
    int64_t busy = lines * p.group; /* threads busy without splitting */
    int64_t want = busy < target_threads
                       ? (target_threads + busy - 1) / busy
                       : 1;
    int64_t per = (int64_t)p.group * TB_REDUCE_MIN_ITEMS;
    int64_t most = (len + per - 1) / per; /* chunks of >= MIN per thread */
    int64_t fit = max_partials / lines;   /* partials that fit */
    tb_chunks_split(len, want, most, fit, &p.chunk_len, &p.chunks);
    p.items = lines * p.chunks;
    int64_t per_block = p.cols ? p.block : p.block / p.group;
    p.blocks = tb_cu_blocks_1d(p.items, per_block, max_blocks);
    return p;
}

/* Item `it` (0 <= it < p->items) of plan p. */
TB_GEOM_FN tb_reduce_item tb_reduce_item_at(const tb_reduce_plan *p,
                                            int64_t it)
{
    tb_reduce_item r;
    int64_t c, o, i;
    if (p->cols) { /* it = (c * outer + o) * inner + i */
        i = it % p->inner;
        o = it / p->inner % p->outer;
        c = it / (p->inner * p->outer);
        r.stride = p->inner;
    } else { /* it = o * chunks + c */
        i = 0;
        o = it / p->chunks;
        c = it % p->chunks;
        r.stride = 1;
    }
    int64_t first = c * p->chunk_len;
    int64_t left = p->len - first;
    r.count = left < p->chunk_len ? left : p->chunk_len;
    r.start = (o * p->len + first) * p->inner + i;
    r.out_index = p->chunks > 1 ? it : o * p->inner + i;
    return r;
}

/* The pass that sums plan p's partials (p->chunks > 1): the partials as
 * [outer', len' = chunks, inner'], never split again. */
TB_GEOM_FN tb_reduce_plan tb_reduce_next(const tb_reduce_plan *p,
                                         int64_t target_threads,
                                         int64_t max_blocks)
{
    if (p->cols)
        return tb_reduce_plan_make(1, p->chunks, p->outer * p->inner,
                                   target_threads, 0, max_blocks);
    return tb_reduce_plan_make(p->outer, p->chunks, 1, target_threads, 0,
                               max_blocks);
}

#endif
