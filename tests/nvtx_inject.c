/* A test NVTX tool: loaded by NVTX itself through NVTX_INJECTION64_PATH,
 * it records every range push and pop of domain-aware calls, one line
 * per event, to the file named by TB_NVTX_LOG:
 *     PID <tab> push <tab> DOMAIN <tab> PATH
 *     PID <tab> pop <tab> DOMAIN <tab> PATH-BEFORE-THE-POP
 * where PATH is the stack of range names of the process, outermost
 * first, joined by " > ".  A forked worker inherits its parent's stack,
 * as a tool following it would.  tests/test_cli_nvtx.py reads it. */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_DEPTH 32

static char *stack[MAX_DEPTH];
static int depth;

/* Append one line with a single write (O_APPEND: lines of several
 * processes do not interleave). */
static void log_event(const char *what, nvtxDomainHandle_t dom)
{
    const char *path = getenv("TB_NVTX_LOG");
    if (!path)
        return;
    char line[4096];
    int n = snprintf(line, sizeof line, "%d\t%s\t%s\t", (int)getpid(), what,
                     dom ? (const char *)dom : "");
    for (int i = 0; i < depth && n < (int)sizeof line; i++)
        n += snprintf(line + n, sizeof line - (size_t)n, "%s%s",
                      i ? " > " : "", stack[i]);
    if (n >= (int)sizeof line - 1)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0)
        return;
    if (write(fd, line, (size_t)n) != n)
        abort();
    close(fd);
}

static nvtxDomainHandle_t NVTX_API domain_create(const char *name)
{
    return (nvtxDomainHandle_t)strdup(name);
}

static nvtxStringHandle_t NVTX_API register_string(nvtxDomainHandle_t d,
                                                   const char *s)
{
    (void)d;
    return (nvtxStringHandle_t)strdup(s);
}

static int NVTX_API range_push(nvtxDomainHandle_t d,
                               const nvtxEventAttributes_t *a)
{
    const char *name = "?";
    if (a->messageType == NVTX_MESSAGE_TYPE_ASCII)
        name = a->message.ascii;
    else if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED)
        name = (const char *)a->message.registered;
    if (depth == MAX_DEPTH)
        abort();
    stack[depth++] = strdup(name);
    log_event("push", d);
    return depth - 1;
}

static int NVTX_API range_pop(nvtxDomainHandle_t d)
{
    log_event("pop", d);
    if (depth == 0) {
        log_event("pop-empty", d);
        return -1;
    }
    free((void *)stack[--depth]);
    return depth;
}

int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);

int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable t = NULL;
    unsigned int size = 0;
    if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &size) ||
        size < NVTX_CBID_CORE2_DomainCreateA)
        return 0;
    *t[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)domain_create;
    *t[NVTX_CBID_CORE2_DomainRegisterStringA] =
        (NvtxFunctionPointer)register_string;
    *t[NVTX_CBID_CORE2_DomainRangePushEx] = (NvtxFunctionPointer)range_push;
    *t[NVTX_CBID_CORE2_DomainRangePop] = (NvtxFunctionPointer)range_pop;
    return 1;
}
