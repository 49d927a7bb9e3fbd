/* GPU peaks for `tbench peak` and the roofline of GPU cases.
 *
 * tb_gpu_peaks_measure() asks a backend with the `peak` slot (cuda) for
 * its device's measured memory bandwidth (copy, read, triad) and FMA
 * throughput (f32, f64) with the vendor figures beside them, in a child
 * process (a process that initialised CUDA cannot use it in the workers
 * it forks later), and returns the peaks' "gpu" object (docs/FORMAT.md):
 * available false with the reason when the backend is unavailable (no
 * driver, no device, module not built) or the measurement failed.  It is
 * part of the peaks object, so it is cached and copied into runs with
 * the CPU peaks.
 *
 * tb_gpu_roofline() is tb_roofline_compute for a case that ran on such a
 * backend: attainable time = max(FLOPs / the dtype's FMA peak, bytes /
 * the bandwidth of the kernel with the case's access pattern). */
#ifndef TB_HARNESS_GPU_PEAK_H
#define TB_HARNESS_GPU_PEAK_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "peak.h"
#include "../backends/backend.h"

/* The "gpu" object of peaks for backend be (device 0: the default of
 * each axis), measured with reps repetitions of >= rep_s seconds.
 * NULL only on allocation failure. */
cJSON *tb_gpu_peaks_measure(const tb_backend *be, int reps, double rep_s);

/* The "gpu" object from a slot's answer (rc: the slot's return) or, with
 * d NULL, an unavailable one with `reason`.  NULL on allocation failure. */
cJSON *tb_gpu_peaks_json(const char *backend, int rc, const tb_dev_peaks *d,
                         const char *reason);

/* Roofline of a GPU case against peaks' "gpu": 0, TB_ENOTFOUND (no
 * available GPU peaks, or no figure for the dtype or kernel) or
 * TB_EINVAL. */
int tb_gpu_roofline(const cJSON *peaks, const tb_roofline_in *in,
                    tb_roofline *out);

/* Print the "gpu" object as a table (nothing for NULL/non-object). */
void tb_gpu_peaks_print(FILE *f, const cJSON *gpu);

#endif
