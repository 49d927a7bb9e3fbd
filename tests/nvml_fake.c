/* A fake NVML (libnvidia-ml) for tests/test_env_gpu.py: the entry points
 * src/harness/env_gpu.c looks up, answering fixed values for one GPU.
 * FAKE_NVML_MODE=initfail makes nvmlInit_v2 fail as without a driver
 * (NVML_ERROR_DRIVER_NOT_LOADED = 9); FAKE_NVML_MODE=nodevice reports 0
 * devices.  Loaded through TBENCH_NVML_LIB.
 *
 * For src/harness/gpu_clock.c (tests/test_gpu_state.c): the one GPU is
 * at PCI bus id 00000000:01:00.0 (any other id is NVML_ERROR_NOT_FOUND);
 * with FAKE_NVML_MODE=throttle its first reading is 1980 MHz with no
 * reason, every later one 1755 MHz held down by the software power cap
 * and hardware thermal slowdown (0x4 | 0x40); otherwise the SM clock is
 * the idle 345 MHz with no reason. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct {
    unsigned long long total, free, used;
} fake_memory;

static const char *mode(void)
{
    const char *m = getenv("FAKE_NVML_MODE");
    return m ? m : "";
}

EXPORT int nvmlInit_v2(void);
EXPORT int nvmlShutdown(void);
EXPORT const char *nvmlErrorString(int r);
EXPORT int nvmlSystemGetDriverVersion(char *v, unsigned len);
EXPORT int nvmlSystemGetCudaDriverVersion_v2(int *v);
EXPORT int nvmlDeviceGetCount_v2(unsigned *n);
EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d);
EXPORT int nvmlDeviceGetName(void *d, char *s, unsigned len);
EXPORT int nvmlDeviceGetUUID(void *d, char *s, unsigned len);
EXPORT int nvmlDeviceGetCudaComputeCapability(void *d, int *maj, int *min);
EXPORT int nvmlDeviceGetMemoryInfo(void *d, fake_memory *m);
EXPORT int nvmlDeviceGetClockInfo(void *d, int type, unsigned *mhz);
EXPORT int nvmlDeviceGetMaxClockInfo(void *d, int type, unsigned *mhz);
EXPORT int nvmlDeviceGetEccMode(void *d, int *cur, int *pend);
EXPORT int nvmlDeviceGetPersistenceMode(void *d, int *on);
EXPORT int nvmlDeviceGetNumGpuCores(void *d, unsigned *n);
EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char *pci, void **d);
EXPORT int nvmlDeviceGetCurrentClocksEventReasons(void *d,
                                                  unsigned long long *r);

static int dev0;
static int clock_readings; /* reason readings so far (throttle mode) */

int nvmlInit_v2(void) { return strcmp(mode(), "initfail") ? 0 : 9; }
int nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(int r)
{
    return r == 9 ? "Driver Not Loaded" : r == 6 ? "Not Found"
                                          : "Unknown Error";
}
int nvmlSystemGetDriverVersion(char *v, unsigned len)
{
    snprintf(v, len, "580.65.06");
    return 0;
}
int nvmlSystemGetCudaDriverVersion_v2(int *v)
{
    *v = 13010;
    return 0;
}
int nvmlDeviceGetCount_v2(unsigned *n)
{
    *n = strcmp(mode(), "nodevice") ? 1 : 0;
    return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d)
{
    if (i != 0)
        return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    *d = &dev0;
    return 0;
}
int nvmlDeviceGetName(void *d, char *s, unsigned len)
{
    (void)d;
    snprintf(s, len, "Fake H100 80GB HBM3");
    return 0;
}
int nvmlDeviceGetUUID(void *d, char *s, unsigned len)
{
    (void)d;
    snprintf(s, len, "GPU-00000000-fake");
    return 0;
}
int nvmlDeviceGetCudaComputeCapability(void *d, int *maj, int *min)
{
    (void)d;
    *maj = 9;
    *min = 0;
    return 0;
}
int nvmlDeviceGetMemoryInfo(void *d, fake_memory *m)
{
    (void)d;
    m->total = 85520809984ULL;
    m->used = 1ULL << 20;
    m->free = m->total - m->used;
    return 0;
}
int nvmlDeviceGetClockInfo(void *d, int type, unsigned *mhz)
{
    (void)d;
    *mhz = type == 1 ? 345 : 2619; /* idle SM clock, memory clock */
    if (type == 1 && !strcmp(mode(), "throttle"))
        *mhz = clock_readings == 0 ? 1980 : 1755;
    return 0;
}
int nvmlDeviceGetMaxClockInfo(void *d, int type, unsigned *mhz)
{
    (void)d;
    *mhz = type == 1 ? 1980 : 2619;
    return 0;
}
int nvmlDeviceGetEccMode(void *d, int *cur, int *pend)
{
    (void)d;
    *cur = *pend = 1;
    return 0;
}
int nvmlDeviceGetPersistenceMode(void *d, int *on)
{
    (void)d;
    (void)on;
    return 3; /* NVML_ERROR_NOT_SUPPORTED: the field is null */
}
int nvmlDeviceGetNumGpuCores(void *d, unsigned *n)
{
    (void)d;
    *n = 16896; /* 132 SMs x 128 */
    return 0;
}
int nvmlDeviceGetHandleByPciBusId_v2(const char *pci, void **d)
{
    if (strcmp(pci, "00000000:01:00.0"))
        return 6; /* NVML_ERROR_NOT_FOUND */
    *d = &dev0;
    return 0;
}
int nvmlDeviceGetCurrentClocksEventReasons(void *d, unsigned long long *r)
{
    (void)d;
    bool thr = !strcmp(mode(), "throttle") && clock_readings > 0;
    *r = thr ? 0x44ull : 0;
    clock_readings++;
    return 0;
}
