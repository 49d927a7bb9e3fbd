/* A stand-in for libcupti, loaded by the counting pass through
 * TBENCH_CUPTI_LIB in tests/test_cupti.c: the CUPTI functions the pass
 * calls, over records the test emits with fake_cupti_* while the run
 * callback runs.  FAKE_CUPTI_MODE picks a behaviour: unset (works),
 * "version" (the next minor release: other record layouts), "refuse"
 * (cuptiActivityEnable says another subscriber holds CUPTI), "drop"
 * (reports 2 dropped records per buffer).  Records are laid out with a
 * fixed stride that this file's cuptiActivityGetNextRecord walks; the
 * record structs are CUPTI's own. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#define EXPORT __attribute__((visibility("default")))
#define MAX_RECORDS 4096
#define STRIDE 256

_Static_assert(sizeof(CUpti_ActivityKernel10) <= STRIDE, "stride");
_Static_assert(sizeof(CUpti_ActivityMemcpy6) <= STRIDE, "stride");
_Static_assert(sizeof(CUpti_ActivityMemory4) <= STRIDE, "stride");
_Static_assert(sizeof(CUpti_ActivityMemset4) <= STRIDE, "stride");

/* What the test calls (through dlsym) while its run callback runs. */
EXPORT void fake_cupti_kernel(const char *name, uint64_t ns);
EXPORT void fake_cupti_memcpy(uint8_t copy_kind, uint64_t bytes);
EXPORT void fake_cupti_memory(int alloc, uint64_t bytes);
EXPORT void fake_cupti_memset(uint64_t bytes);
EXPORT uint64_t fake_cupti_enabled(void);
EXPORT int fake_cupti_finalized(void);

static CUpti_BuffersCallbackRequestFunc requested;
static CUpti_BuffersCallbackCompleteFunc completed;
static uint64_t enabled; /* bit per CUpti_ActivityKind (all < 64) */
static uint8_t pending[MAX_RECORDS][STRIDE];
static int n_pending;
static int finalized; /* cuptiFinalize calls */

static const char *mode(void)
{
    const char *m = getenv("FAKE_CUPTI_MODE");
    return m ? m : "";
}

static void *emit(CUpti_ActivityKind kind)
{
    if (!(enabled & (UINT64_C(1) << kind)) || n_pending == MAX_RECORDS)
        return NULL; /* a kind not enabled records nothing */
    void *p = pending[n_pending++];
    memset(p, 0, STRIDE);
    ((CUpti_Activity *)p)->kind = kind;
    return p;
}

/* ---- what the test's run callback calls -------------------------------- */

EXPORT void fake_cupti_kernel(const char *name, uint64_t ns)
{
    CUpti_ActivityKernel10 *k = emit(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (k) {
        k->name = name;
        k->start = 1000;
        k->end = 1000 + ns;
    }
}

EXPORT void fake_cupti_memcpy(uint8_t copy_kind, uint64_t bytes)
{
    CUpti_ActivityMemcpy6 *m = emit(CUPTI_ACTIVITY_KIND_MEMCPY);
    if (m) {
        m->copyKind = copy_kind;
        m->bytes = bytes;
    }
}

EXPORT void fake_cupti_memory(int alloc, uint64_t bytes)
{
    CUpti_ActivityMemory4 *m = emit(CUPTI_ACTIVITY_KIND_MEMORY2);
    if (m) {
        m->memoryOperationType =
            alloc ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
                  : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
        m->bytes = bytes;
    }
}

EXPORT void fake_cupti_memset(uint64_t bytes)
{
    CUpti_ActivityMemset4 *m = emit(CUPTI_ACTIVITY_KIND_MEMSET);
    if (m)
        m->bytes = bytes;
}

EXPORT uint64_t fake_cupti_enabled(void)
{
    return enabled;
}

EXPORT int fake_cupti_finalized(void)
{
    return finalized;
}

/* ---- CUPTI ------------------------------------------------------------- */

EXPORT CUptiResult cuptiGetVersion(uint32_t *version)
{
    *version = CUPTI_API_VERSION;
    if (!strcmp(mode(), "version"))
        *version = (CUPTI_API_VERSION / 100 + 1) * 100;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char **s)
{
    *s = result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
             ? "FAKE_MULTIPLE_SUBSCRIBERS"
             : "FAKE_ERROR";
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                               CUpti_BuffersCallbackCompleteFunc comp)
{
    requested = req;
    completed = comp;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    if (!strcmp(mode(), "refuse"))
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    if ((unsigned)kind >= 64)
        return CUPTI_ERROR_INVALID_KIND;
    enabled |= UINT64_C(1) << kind;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    if ((unsigned)kind < 64)
        enabled &= ~(UINT64_C(1) << kind);
    return CUPTI_SUCCESS;
}

/* Hand every pending record to the client in buffers it provides. */
EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    int at = 0;
    if (n_pending && !requested)
        return CUPTI_ERROR_INVALID_OPERATION; /* no callbacks registered */
    while (at < n_pending) {
        uint8_t *buf = NULL;
        size_t size = 0, max_records = 0;
        requested(&buf, &size, &max_records);
        if (!buf || size < STRIDE)
            return CUPTI_ERROR_OUT_OF_MEMORY;
        size_t used = 0;
        while (at < n_pending && used + STRIDE <= size) {
            memcpy(buf + used, pending[at++], STRIDE);
            used += STRIDE;
        }
        completed(NULL, 0, buf, size, used);
    }
    n_pending = 0;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx,
                                                     uint32_t stream,
                                                     size_t *dropped)
{
    (void)ctx;
    (void)stream;
    *dropped = !strcmp(mode(), "drop") ? 2 : 0;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid,
                                              CUpti_Activity **record)
{
    size_t next = *record ? (size_t)((uint8_t *)*record - buf) + STRIDE : 0;
    if (next + STRIDE > valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)(buf + next);
    return CUPTI_SUCCESS;
}

/* Detach: as the real one, everything is forgotten, the buffer
 * callbacks too (a client must register them again). */
EXPORT CUptiResult cuptiFinalize(void)
{
    finalized++;
    requested = NULL;
    completed = NULL;
    enabled = 0;
    n_pending = 0;
    return CUPTI_SUCCESS;
}
