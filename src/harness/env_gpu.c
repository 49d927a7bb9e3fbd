/* env.gpu through NVML, loaded with dlopen: an absent NVML is not an
 * error, it is the reason recorded.  NVML's ABI is declared here (the
 * toolkit ships no nvml.h without the driver's development files); only
 * the stable entry points below are used, each looked up by name, and a
 * missing one leaves its field null. */
#include "env_gpu.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tb_config.h"

#ifndef TB_CUDA_RUNTIME_VERSION
#define TB_CUDA_RUNTIME_VERSION ""
#endif

typedef int nvml_ret; /* nvmlReturn_t: 0 = NVML_SUCCESS */
typedef void *nvml_dev; /* nvmlDevice_t */
typedef struct {
    unsigned long long total, free, used;
} nvml_memory; /* nvmlMemory_t (v1) */
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

typedef struct nvml_api {
    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    const char *(*error_string)(nvml_ret);
    nvml_ret (*driver_version)(char *, unsigned);
    nvml_ret (*cuda_driver_version)(int *);
    nvml_ret (*count)(unsigned *);
    nvml_ret (*handle)(unsigned, nvml_dev *);
    nvml_ret (*name)(nvml_dev, char *, unsigned);
    nvml_ret (*uuid)(nvml_dev, char *, unsigned);
    nvml_ret (*cc)(nvml_dev, int *, int *);
    nvml_ret (*memory)(nvml_dev, nvml_memory *);
    nvml_ret (*clock)(nvml_dev, int, unsigned *);
    nvml_ret (*max_clock)(nvml_dev, int, unsigned *);
    nvml_ret (*ecc)(nvml_dev, int *, int *);
    nvml_ret (*persistence)(nvml_dev, int *);
    nvml_ret (*cores)(nvml_dev, unsigned *);
} nvml_api;

/* dlsym into a function pointer of any type (POSIX guarantees the
 * conversion; memcpy keeps -Wpedantic quiet). */
static void load_sym(void *h, const char *name, void *fnp)
{
    void *p = dlsym(h, name);
    memcpy(fnp, &p, sizeof p);
}

static const char *nvml_err(const nvml_api *a, nvml_ret r)
{
    const char *s = a->error_string ? a->error_string(r) : NULL;
    return s ? s : "unknown error";
}

int tb_env_cores_per_sm(int major, int minor)
{
    if (major == 7)
        return 64; /* Volta, Turing */
    if (major == 8)
        return minor == 0 ? 64 : 128; /* A100: 64; GA10x, Ada: 128 */
    if (major >= 9)
        return 128; /* Hopper, Blackwell */
    return 0;
}

static void add_str(cJSON *o, const char *k, int ok, const char *v)
{
    if (ok)
        cJSON_AddStringToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}


static void add_bool(cJSON *o, const char *k, int ok, int v)
{
    if (ok)
        cJSON_AddBoolToObject(o, k, v != 0);
    else
        cJSON_AddNullToObject(o, k);
}

static cJSON *device_json(const nvml_api *a, unsigned i, nvml_dev d)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    char buf[128];
    cJSON_AddNumberToObject(o, "index", i);
    add_str(o, "name", a->name && a->name(d, buf, sizeof buf) == 0, buf);
    add_str(o, "uuid", a->uuid && a->uuid(d, buf, sizeof buf) == 0, buf);
    int maj = 0, min = 0;
    int have_cc = a->cc && a->cc(d, &maj, &min) == 0;
    snprintf(buf, sizeof buf, "%d.%d", maj, min);
    add_str(o, "compute_capability", have_cc, buf);
    unsigned cores = 0;
    int have_cores = a->cores && a->cores(d, &cores) == 0;
    tb_env_add_num(o, "cuda_cores", have_cores, cores);
    int per = have_cc ? tb_env_cores_per_sm(maj, min) : 0;
    tb_env_add_num(o, "sm_count",
            have_cores && per > 0 && cores % (unsigned)per == 0,
            per > 0 ? cores / (unsigned)per : 0);
    nvml_memory m = {0, 0, 0};
    int have_mem = a->memory && a->memory(d, &m) == 0;
    tb_env_add_num(o, "memory_total_bytes", have_mem, (double)m.total);
    /* each query before the add that reads its value (the order in
     * which a call's arguments are evaluated is unspecified) */
    cJSON *ck = cJSON_AddObjectToObject(o, "clocks_mhz");
    static const char *const clk_name[4] = {"sm", "mem", "sm_max",
                                            "mem_max"};
    for (int k = 0; k < 4; k++) {
        unsigned v = 0;
        int type = k % 2 ? NVML_CLOCK_MEM : NVML_CLOCK_SM;
        nvml_ret (*q)(nvml_dev, int, unsigned *) =
            k < 2 ? a->clock : a->max_clock;
        int ok = q && q(d, type, &v) == 0;
        tb_env_add_num(ck, clk_name[k], ok, v);
    }
    int cur = 0, pend = 0;
    int ok = a->ecc && a->ecc(d, &cur, &pend) == 0;
    add_bool(o, "ecc", ok, cur);
    ok = a->persistence && a->persistence(d, &cur) == 0;
    add_bool(o, "persistence", ok, cur);
    return o;
}

cJSON *tb_env_gpu(void)
{
    cJSON *g = cJSON_CreateObject();
    if (!g)
        return NULL;
    const char *lib = getenv("TBENCH_NVML_LIB");
    if (!lib || !*lib)
        lib = "libnvidia-ml.so.1";
    cJSON_AddStringToObject(g, "nvml_library", lib);
    add_str(g, "cuda_runtime_version", TB_CUDA_RUNTIME_VERSION[0] != '\0',
            TB_CUDA_RUNTIME_VERSION);
    char reason[512] = "";
    char drv[96] = "";
    int have_drv = 0, cuda_drv = 0, have_cuda_drv = 0;
    cJSON *devs = cJSON_CreateArray();
    nvml_api a;
    memset(&a, 0, sizeof a);
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(reason, sizeof reason,
                 "NVML not loaded (no NVIDIA driver?): %s", e ? e : lib);
    } else {
        load_sym(h, "nvmlInit_v2", &a.init);
        load_sym(h, "nvmlShutdown", &a.shutdown);
        load_sym(h, "nvmlErrorString", &a.error_string);
        load_sym(h, "nvmlSystemGetDriverVersion", &a.driver_version);
        load_sym(h, "nvmlSystemGetCudaDriverVersion_v2",
                 &a.cuda_driver_version);
        load_sym(h, "nvmlDeviceGetCount_v2", &a.count);
        load_sym(h, "nvmlDeviceGetHandleByIndex_v2", &a.handle);
        load_sym(h, "nvmlDeviceGetName", &a.name);
        load_sym(h, "nvmlDeviceGetUUID", &a.uuid);
        load_sym(h, "nvmlDeviceGetCudaComputeCapability", &a.cc);
        load_sym(h, "nvmlDeviceGetMemoryInfo", &a.memory);
        load_sym(h, "nvmlDeviceGetClockInfo", &a.clock);
        load_sym(h, "nvmlDeviceGetMaxClockInfo", &a.max_clock);
        load_sym(h, "nvmlDeviceGetEccMode", &a.ecc);
        load_sym(h, "nvmlDeviceGetPersistenceMode", &a.persistence);
        load_sym(h, "nvmlDeviceGetNumGpuCores", &a.cores);
        nvml_ret r;
        unsigned n = 0;
        if (!a.init || !a.count || !a.handle) {
            snprintf(reason, sizeof reason,
                     "%s lacks nvmlInit_v2, nvmlDeviceGetCount_v2 or "
                     "nvmlDeviceGetHandleByIndex_v2", lib);
        } else if ((r = a.init()) != 0) {
            snprintf(reason, sizeof reason, "nvmlInit_v2: %s (error %d)",
                     nvml_err(&a, r), r);
        } else {
            have_drv = a.driver_version &&
                       a.driver_version(drv, sizeof drv) == 0;
            have_cuda_drv = a.cuda_driver_version &&
                            a.cuda_driver_version(&cuda_drv) == 0;
            if ((r = a.count(&n)) != 0)
                snprintf(reason, sizeof reason,
                         "nvmlDeviceGetCount_v2: %s (error %d)",
                         nvml_err(&a, r), r);
            else if (n == 0)
                snprintf(reason, sizeof reason,
                         "no NVIDIA GPU: NVML found 0 devices");
            for (unsigned i = 0; i < n; i++) {
                nvml_dev d = NULL;
                if (a.handle(i, &d) == 0)
                    cJSON_AddItemToArray(devs, device_json(&a, i, d));
            }
            if (a.shutdown)
                a.shutdown();
        }
        dlclose(h);
    }
    cJSON_AddBoolToObject(g, "available", reason[0] == '\0');
    add_str(g, "reason", reason[0] != '\0', reason);
    add_str(g, "driver_version", have_drv, drv);
    char cv[32];
    snprintf(cv, sizeof cv, "%d.%d", cuda_drv / 1000, cuda_drv % 1000 / 10);
    add_str(g, "cuda_driver_version", have_cuda_drv, cv);
    cJSON_AddItemToObject(g, "devices", devs);
    return g;
}
