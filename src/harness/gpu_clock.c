/* GPU clock state per case through NVML (gpu_clock.h).  NVML's ABI is
 * declared here as in env_gpu.c: each entry point looked up by name.
 * The library is loaded and initialised once per process, on the first
 * case that asks, and stays loaded (a worker times many cases). */
#include "gpu_clock.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timer.h"

typedef int nvml_ret;   /* nvmlReturn_t: 0 = NVML_SUCCESS */
typedef void *nvml_dev; /* nvmlDevice_t */
enum { NVML_CLOCK_SM = 1 };

static struct {
    bool tried;
    char why[192]; /* non-empty: NVML unusable, and why */
    nvml_ret (*by_pci)(const char *, nvml_dev *);
    nvml_ret (*clock)(nvml_dev, int, unsigned *);
    nvml_ret (*reasons)(nvml_dev, unsigned long long *);
    const char *(*error_string)(nvml_ret);
    char pci[32];   /* the device last looked up (readings repeat it) */
    nvml_dev dev;
} nv;

static void load_sym(void *h, const char *name, void *fnp)
{
    void *p = dlsym(h, name);
    memcpy(fnp, &p, sizeof p);
}

static const char *nv_err(nvml_ret r)
{
    const char *s = nv.error_string ? nv.error_string(r) : NULL;
    return s ? s : "unknown error";
}

/* Load and initialise NVML once; nv.why says why it cannot be used. */
static void nv_load(void)
{
    if (nv.tried)
        return;
    nv.tried = true;
    const char *lib = getenv("TBENCH_NVML_LIB");
    if (!lib || !*lib)
        lib = "libnvidia-ml.so.1";
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(nv.why, sizeof nv.why,
                 "NVML not loaded (no NVIDIA driver?): %s", e ? e : lib);
        return;
    }
    nvml_ret (*init)(void) = NULL;
    load_sym(h, "nvmlInit_v2", &init);
    load_sym(h, "nvmlErrorString", &nv.error_string);
    load_sym(h, "nvmlDeviceGetHandleByPciBusId_v2", &nv.by_pci);
    load_sym(h, "nvmlDeviceGetClockInfo", &nv.clock);
    /* renamed in NVML 12.2; the old name is kept by today's drivers */
    load_sym(h, "nvmlDeviceGetCurrentClocksEventReasons", &nv.reasons);
    if (!nv.reasons)
        load_sym(h, "nvmlDeviceGetCurrentClocksThrottleReasons",
                 &nv.reasons);
    nvml_ret r;
    if (!init || !nv.by_pci || !nv.clock || !nv.reasons) {
        snprintf(nv.why, sizeof nv.why,
                 "%s lacks nvmlInit_v2, nvmlDeviceGetHandleByPciBusId_v2, "
                 "nvmlDeviceGetClockInfo or "
                 "nvmlDeviceGetCurrentClocksEventReasons", lib);
        dlclose(h);
    } else if ((r = init()) != 0) {
        snprintf(nv.why, sizeof nv.why, "nvmlInit_v2: %s (error %d)",
                 nv_err(r), r);
        dlclose(h);
    }
    /* on success h stays open for the life of the process */
}

static bool reading(tb_gpu_clock *k)
{
    nvml_dev d = NULL;
    unsigned mhz = 0;
    unsigned long long bits = 0;
    nvml_ret r = 0;
    if (nv.pci[0] && !strcmp(nv.pci, k->pci)) {
        d = nv.dev;
    } else {
        nv.pci[0] = '\0';
        if ((r = nv.by_pci(k->pci, &d)) == 0) {
            snprintf(nv.pci, sizeof nv.pci, "%s", k->pci);
            nv.dev = d;
        }
    }
    const char *call = "nvmlDeviceGetHandleByPciBusId_v2";
    if (!r) {
        call = "nvmlDeviceGetClockInfo";
        r = nv.clock(d, NVML_CLOCK_SM, &mhz);
    }
    if (!r) {
        call = "nvmlDeviceGetCurrentClocksEventReasons";
        r = nv.reasons(d, &bits);
    }
    if (r) {
        snprintf(k->reason, sizeof k->reason, "%s(%s): %s (error %d)",
                 call, k->pci, nv_err(r), r);
        k->valid = false;
        return false;
    }
    if (k->readings == 0) {
        k->sm_start = k->sm_min = k->sm_max = mhz;
        k->reasons_start = bits;
    }
    k->sm_end = mhz;
    k->reasons_end = bits;
    if (mhz < k->sm_min)
        k->sm_min = mhz;
    if (mhz > k->sm_max)
        k->sm_max = mhz;
    k->reasons_seen |= bits;
    if (bits & TB_GPU_THROTTLE_MASK)
        k->throttled = true;
    k->readings++;
    k->last_ns = (double)tb_now_ns();
    return true;
}

void tb_gpu_clock_begin(tb_gpu_clock *k, const char *pci)
{
    memset(k, 0, sizeof *k);
    k->requested = true;
    snprintf(k->pci, sizeof k->pci, "%s", pci ? pci : "");
    nv_load();
    if (nv.why[0]) {
        snprintf(k->reason, sizeof k->reason, "%s", nv.why);
        return;
    }
    k->valid = true;
    reading(k);
}

void tb_gpu_clock_poll(tb_gpu_clock *k, bool force)
{
    if (!k->requested || !k->valid)
        return;
    if (!force && (double)tb_now_ns() - k->last_ns < TB_GPU_CLOCK_PERIOD_NS)
        return;
    reading(k);
}

static const char *const reason_word[] = {
    "idle",                       /* 0x1 */
    "application clock setting",  /* 0x2 */
    "software power cap",         /* 0x4 */
    "hardware slowdown",          /* 0x8 */
    "sync boost",                 /* 0x10 */
    "software thermal slowdown",  /* 0x20 */
    "hardware thermal slowdown",  /* 0x40 */
    "hardware power brake",       /* 0x80 */
    "display clock setting",      /* 0x100 */
};
#define N_WORDS (sizeof reason_word / sizeof reason_word[0])

const char *tb_gpu_clock_reason_words(uint64_t bits, char *buf,
                                      size_t len)
{
    if (!len)
        return buf;
    buf[0] = '\0';
    if (!bits) {
        snprintf(buf, len, "none");
        return buf;
    }
    size_t u = 0;
    for (size_t i = 0; i < N_WORDS; i++)
        if (bits >> i & 1u && u < len)
            u += (size_t)snprintf(buf + u, len - u, "%s%s", u ? ", " : "",
                                  reason_word[i]);
    uint64_t rest = bits & ~(((uint64_t)1 << N_WORDS) - 1);
    if (rest && u < len)
        snprintf(buf + u, len - u, "%sunknown reason bits 0x%llx",
                 u ? ", " : "", (unsigned long long)rest);
    return buf;
}

const char *tb_gpu_clock_warning(const tb_gpu_clock *k, char *buf,
                                 size_t len)
{
    if (!len)
        return buf;
    buf[0] = '\0';
    if (!k->requested || !k->valid || !k->throttled)
        return buf;
    char w[256];
    tb_gpu_clock_reason_words(k->reasons_seen & TB_GPU_THROTTLE_MASK, w,
                              sizeof w);
    snprintf(buf, len,
             "the GPU (%s) throttled during the case: SM clock %u-%u MHz; "
             "%s",
             k->pci, k->sm_min, k->sm_max, w);
    return buf;
}

/* An array of the words of bits. */
static cJSON *words_json(uint64_t bits)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < N_WORDS; i++)
        if (bits >> i & 1u)
            cJSON_AddItemToArray(a, cJSON_CreateString(reason_word[i]));
    uint64_t rest = bits & ~(((uint64_t)1 << N_WORDS) - 1);
    if (a && rest) {
        char b[48];
        snprintf(b, sizeof b, "unknown reason bits 0x%llx",
                 (unsigned long long)rest);
        cJSON_AddItemToArray(a, cJSON_CreateString(b));
    }
    return a;
}

cJSON *tb_gpu_clock_json(const tb_gpu_clock *k)
{
    if (!k->requested)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    bool ok = k->valid && k->readings > 0;
    cJSON_AddStringToObject(o, "pci_bus_id", k->pci);
    cJSON_AddStringToObject(o, "source", "NVML");
    cJSON_AddBoolToObject(o, "available", ok);
    cJSON_AddItemToObject(o, "reason", !ok && k->reason[0]
                                           ? cJSON_CreateString(k->reason)
                                           : cJSON_CreateNull());
    cJSON_AddNumberToObject(o, "readings", ok ? k->readings : 0);
    const char *names[4] = {"sm_mhz_start", "sm_mhz_end", "sm_mhz_min",
                            "sm_mhz_max"};
    unsigned v[4] = {k->sm_start, k->sm_end, k->sm_min, k->sm_max};
    for (int i = 0; i < 4; i++)
        cJSON_AddItemToObject(o, names[i], ok ? cJSON_CreateNumber(v[i])
                                              : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "reasons_start",
                          ok ? words_json(k->reasons_start)
                             : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "reasons_end", ok ? words_json(k->reasons_end)
                                               : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "reasons_seen",
                          ok ? words_json(k->reasons_seen)
                             : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "throttled", ok ? cJSON_CreateBool(k->throttled)
                                             : cJSON_CreateNull());
    cJSON_AddItemToObject(
        o, "throttle_reasons",
        ok ? words_json(k->reasons_seen & TB_GPU_THROTTLE_MASK)
           : cJSON_CreateNull());
    return o;
}
