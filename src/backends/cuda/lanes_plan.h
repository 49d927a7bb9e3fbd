/* How lanes.cu splits a lane reduction (max, min, argmax, var) that has
 * too few lanes to fill the GPU - the global reduction is one lane -
 * into two stages, and the rules that combine the stages' partial
 * results.  Plain C that nvcc compiles as __host__ __device__ code;
 * tests/test_cuda_lanes.c runs both stages on the CPU against brute
 * force.
 *
 * Stage 1: each lane is cut into `chunks` pieces of chunk_len elements;
 * one block folds one (lane, chunk) item into a partial in the
 * instance's scratch buffer (max/min: the value; argmax: the value and
 * its index in the lane; var: Welford's (n, mean, M2) in double, one
 * read of the data).  Stage 2: one block per lane folds its `chunks`
 * partials with the same rules (tb_nan_minmax and tb_argmax_better of
 * layout.h; Chan, Golub and LeVeque's merge for var), and writes the
 * result.  Both stages are deterministic: no atomics, the same tree
 * every run.  With chunks == 1 the one-stage kernel runs as before. */
#ifndef TB_BACKENDS_CUDA_LANES_PLAN_H
#define TB_BACKENDS_CUDA_LANES_PLAN_H

#include <stdint.h>

#include "geometry.h"

/* Fewest elements per thread of a stage-1 block (below it the partials
 * cost more than the parallelism gains). */
#define TB_LANE_MIN_PER_THREAD 16

typedef struct tb_lane_plan {
    int64_t lanes, len;
    int64_t chunks;    /* per lane, >= 1; 1: one stage */
    int64_t chunk_len; /* >= 1; chunks * chunk_len >= len */
    int64_t items;     /* stage-1 blocks' work: lanes * chunks */
} tb_lane_plan;

/* Plan lanes x len (both >= 1) for blocks of `block` threads: enough
 * items for target_blocks (about twice the blocks the device holds at
 * once) when the lanes alone are fewer, chunks of at least
 * block x TB_LANE_MIN_PER_THREAD elements, and at most max_partials
 * partials in all (the scratch buffer's capacity in partials; 0: never
 * split). */
TB_GEOM_FN tb_lane_plan tb_lane_plan_make(int64_t lanes, int64_t len,
                                          int block, int64_t target_blocks,
                                          int64_t max_partials)
{
    tb_lane_plan p;
    p.lanes = lanes;
    p.len = len;
    int64_t want = lanes < target_blocks
                       ? (target_blocks + lanes - 1) / lanes
                       : 1;
    int64_t per = (int64_t)block * TB_LANE_MIN_PER_THREAD;
    int64_t most = (len + per - 1) / per;
    int64_t fit = lanes > 0 ? max_partials / lanes : 0;
    tb_chunks_split(len, want, most, fit, &p.chunk_len, &p.chunks);
    p.items = lanes * p.chunks;
    return p;
}

/* Item it (0 <= it < p->items) = lane * chunks + chunk: its lane and the
 * lane positions [*first, *first + *count) it folds (count >= 1). */
TB_GEOM_FN void tb_lane_chunk(const tb_lane_plan *p, int64_t it,
                              int64_t *lane, int64_t *first, int64_t *count)
{
    int64_t c = it % p->chunks;
    *lane = it / p->chunks;
    *first = c * p->chunk_len;
    int64_t left = p->len - *first;
    *count = left < p->chunk_len ? left : p->chunk_len;
}

/* Welford: fold x into the summary (n, mean, m2) of the values so far
 * (m2 = sum of squared deviations from the mean). */
TB_GEOM_FN void tb_var_push(double *n, double *mean, double *m2, double x)
{
    *n += 1;
    double d = x - *mean;
    *mean += d / *n;
    *m2 += d * (x - *mean);
}

/* Chan, Golub and LeVeque: fold the summary (n2, mean2, m22) of other
 * values into (n, mean, m2).  An empty summary (n 0) changes nothing. */
TB_GEOM_FN void tb_var_merge(double *n, double *mean, double *m2,
                             double n2, double mean2, double m22)
{
    if (n2 == 0)
        return;
    if (*n == 0) {
        *n = n2;
        *mean = mean2;
        *m2 = m22;
        return;
    }
    double nn = *n + n2, d = mean2 - *mean;
    *mean += d * (n2 / nn);
    *m2 += m22 + d * d * (*n * n2 / nn);
    *n = nn;
}

#endif
