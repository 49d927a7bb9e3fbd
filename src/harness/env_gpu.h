/* env.gpu: the NVIDIA GPUs of this machine, read through NVML loaded at
 * run time (dlopen), so tbench neither links nor needs it. */
#ifndef TB_HARNESS_ENV_GPU_H
#define TB_HARNESS_ENV_GPU_H

#include <cjson/cJSON.h>

/* A new "gpu" object (docs/FORMAT.md, env.gpu): always an object; with
 * no NVML, no driver or no device, "available" is false and "reason"
 * says which (the dlopen or NVML error).  The library is
 * libnvidia-ml.so.1, or $TBENCH_NVML_LIB when set (tests point it at a
 * fake).  NULL only when out of memory. */
cJSON *tb_env_gpu(void);

/* CUDA cores (FP32 lanes) per SM of compute capability major.minor, as
 * NVIDIA's CUDA C++ Programming Guide tabulates them; 0 when not known.
 * env.gpu's sm_count is NVML's core count divided by it (NVML reports
 * no SM count for a whole GPU). */
int tb_env_cores_per_sm(int major, int minor);

/* o[k] = v, or null when !ok: env's and env.gpu's one rule for a
 * figure that could not be read. */
static inline void tb_env_add_num(cJSON *o, const char *k, int ok, double v)
{
    if (ok)
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

#endif
