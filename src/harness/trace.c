/* NVTX ranges: see trace.h. */
#include "trace.h"

#include <stdio.h>

#include "tb_config.h"

#if HAVE_NVTX
#include <nvtx3/nvToolsExt.h>

#define MAX_ROUND_NAMES 64 /* TB_CFG_MAX_ROUNDS */

static bool enabled = true;
static nvtxDomainHandle_t domain;
static nvtxStringHandle_t fixed[TB_TRACE_NFIXED];
static nvtxStringHandle_t rounds[MAX_ROUND_NAMES];
static bool ready;

static const char *const fixed_names[TB_TRACE_NFIXED] = {
    "run", "setup", "check", "warmup", "sampling", "batch",
    "count", "breakdown",
};

/* Create the domain and register the fixed names, once per process (a
 * forked worker inherits them). */
static void init(void)
{
    if (ready)
        return;
    ready = true;
    domain = nvtxDomainCreateA("tbench");
    for (int i = 0; i < TB_TRACE_NFIXED; i++)
        fixed[i] = nvtxDomainRegisterStringA(domain, fixed_names[i]);
    for (int i = 0; i < MAX_ROUND_NAMES; i++) {
        char name[32];
        snprintf(name, sizeof name, "round %d", i + 1);
        rounds[i] = nvtxDomainRegisterStringA(domain, name);
    }
}

/* Push a range named by a registered string (h) or by text (name). */
static void push_named(nvtxStringHandle_t h, const char *name)
{
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    if (h) {
        a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        a.message.registered = h;
    } else {
        a.messageType = NVTX_MESSAGE_TYPE_ASCII;
        a.message.ascii = name;
    }
    nvtxDomainRangePushEx(domain, &a);
}

bool tb_trace_available(const char **why)
{
    if (why)
        *why = NULL;
    return true;
}

void tb_trace_enable(bool on)
{
    enabled = on;
}

bool tb_trace_enabled(void)
{
    return enabled;
}

void tb_trace_push(tb_trace_name n)
{
    if (!enabled || (unsigned)n >= TB_TRACE_NFIXED)
        return;
    init();
    push_named(fixed[n], fixed_names[n]);
}

void tb_trace_push_round(int round)
{
    if (!enabled || round < 0 || round >= MAX_ROUND_NAMES)
        return;
    init();
    push_named(rounds[round], "round");
}

void tb_trace_push_str(const char *name)
{
    if (!enabled)
        return;
    init();
    push_named(NULL, name);
}

void tb_trace_pop(void)
{
    if (!enabled)
        return;
    init();
    nvtxDomainRangePop(domain);
}

#else /* !HAVE_NVTX */

bool tb_trace_available(const char **why)
{
    if (why)
        *why = "not built: the NVTX v3 headers (CUDA toolkit) were not "
               "found";
    return false;
}

void tb_trace_enable(bool on)
{
    (void)on;
}

bool tb_trace_enabled(void)
{
    return false;
}

void tb_trace_push(tb_trace_name n)
{
    (void)n;
}

void tb_trace_push_round(int round)
{
    (void)round;
}

void tb_trace_push_str(const char *name)
{
    (void)name;
}

void tb_trace_pop(void)
{
}

#endif
