/* peak.cu: the `peak` slot (device bandwidth and FMA peaks beside the
 * vendor figures).  CUDA C++ only. */
#ifndef TB_BACKENDS_CUDA_PEAK_CUH
#define TB_BACKENDS_CUDA_PEAK_CUH

#include "cuda_internal.cuh"

int cu_peak(void *ctx, int reps, double rep_s, tb_dev_peaks *out);

#endif
