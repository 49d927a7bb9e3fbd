/* Plugins: shared objects built against include/tbench/plugin.h, each
 * adapted to a tb_backend (see plugin.h).
 *
 * Every plugin is a tb_backend with the same slot functions below and
 * its plugin record as `data`: probe, axes and create find the plugin
 * through `self`, the instance slots through the instance.  A kernel is
 * handed out as {pl_call, record}: the instance keeps one record per
 * plugin kernel it handed out (the plugin's function and the instance),
 * in a growable array freed at destroy, so any number of kernels stay
 * valid while the instance lives.  tb_tensor and tb_params are passed to
 * the plugin as they are: their layout is the ABI's (checked by the
 * static assertions). */
#include "plugin.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tbench/plugin.h>

#include "../base/error.h"
#include "../ops/op.h"
#include "hostmem.h"

/* The ABI's tensor and parameter layouts are tbench's own. */
_Static_assert(sizeof(tb_dtype) == sizeof(int32_t), "dtype size");
_Static_assert(TB_F32 == TBP_F32 && TB_F64 == TBP_F64 &&
                   TB_BF16 == TBP_BF16 && TB_F16 == TBP_F16,
               "dtype codes");
_Static_assert(TB_MAX_DIMS == TBP_MAX_DIMS, "max dims");
_Static_assert(sizeof(tb_tensor) == sizeof(tbp_tensor), "tensor size");
_Static_assert(offsetof(tb_tensor, ndim) == offsetof(tbp_tensor, ndim),
               "tensor ndim");
_Static_assert(offsetof(tb_tensor, shape) == offsetof(tbp_tensor, shape),
               "tensor shape");
_Static_assert(offsetof(tb_tensor, strides) ==
                   offsetof(tbp_tensor, strides),
               "tensor strides");
_Static_assert(offsetof(tb_tensor, data) == offsetof(tbp_tensor, data),
               "tensor data");
_Static_assert(offsetof(tb_tensor, owns) ==
                   offsetof(tbp_tensor, reserved2),
               "tensor owns");
_Static_assert(sizeof(tb_params) == sizeof(tbp_params), "params size");
_Static_assert(offsetof(tb_params, v) == offsetof(tbp_params, v),
               "params v");
_Static_assert(TB_MAX_PARAMS == TBP_MAX_PARAMS, "max params");
_Static_assert(TB_MAX_INPUTS == TBP_MAX_INPUTS &&
                   TB_MAX_OUTPUTS == TBP_MAX_OUTPUTS,
               "max operands");
_Static_assert(TB_MAX_AXES == TBP_MAX_AXES &&
                   TB_MAX_AXIS_VALUES == TBP_MAX_AXIS_VALUES,
               "max axes");

int tb_dl_entry(const char *path, const char *sym, void **handle,
                void **fn, char *why, size_t len)
{
    size_t used = strnlen(why, len);
    const char *sep = used ? "; " : "";
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why + used, len - used, "%s%s", sep,
                 e ? e : "dlopen failed");
        return TB_EUNAVAILABLE;
    }
    void *f = dlsym(h, sym);
    if (!f) {
        snprintf(why + used, len - used, "%s%.512s: no %s", sep, path,
                 sym);
        dlclose(h);
        return TB_EUNAVAILABLE;
    }
    *handle = h;
    *fn = f;
    return 0;
}

typedef struct plugin {
    char name[32];
    char path[PATH_MAX];
    char doc[512];
    char why[768]; /* non-empty: not usable, and why */
    void *handle;
    tbp_plugin tab; /* a copy; slots beyond the plugin's size are NULL */
    bool host_memory;
    int n_axes; /* from the last successful probe */
    tb_backend be;
} plugin;

struct instance;

/* A kernel handed out: the context pl_call gets. */
typedef struct kernel_rec {
    struct instance *in;
    tbp_kernel_fn fn;
} kernel_rec;

typedef struct instance {
    plugin *pl;
    void *pctx;
    tb_hostmem mem;             /* host memory (plugins without alloc) */
    _Atomic uint64_t launches;  /* kernel calls (plugins w/o counters) */
    kernel_rec **k;             /* one per plugin kernel handed out; each
                                   its own block, so that it stays put
                                   when the array grows */
    int n_k, cap_k;
} instance;

static plugin plugins[TB_MAX_PLUGINS];
static int n_plugins;

static int map_rc(int rc)
{
    switch (rc) {
    case TBP_OK: return 0;
    case TBP_ENOMEM: return TB_ENOMEM;
    case TBP_EINVAL: return TB_EINVAL;
    case TBP_ESHAPE: return TB_ESHAPE;
    case TBP_EUNSUPPORTED: return TB_EUNSUPPORTED;
    case TBP_EUNAVAILABLE: return TB_EUNAVAILABLE;
    case TBP_ENUMERIC: return TB_ENUMERIC;
    default: return TB_EFAIL; /* TBP_EFAIL and codes outside the ABI */
    }
}

/* ---- slots shared by every plugin (they receive the instance) ----- */

static int pl_probe(const tb_backend *self, char *reason, size_t len)
{
    plugin *pl = self->data;
    if (pl->why[0]) {
        snprintf(reason, len, "%s", pl->why);
        return TB_EUNAVAILABLE;
    }
    char r[256] = "";
    int rc = pl->tab.probe(r, sizeof r);
    if (rc) {
        r[sizeof r - 1] = '\0';
        snprintf(reason, len, "probe failed: %s",
                 r[0] ? r : "(the plugin gave no reason)");
        return TB_EUNAVAILABLE;
    }
    /* The axes must be usable before a config may name them. */
    tbp_axis ax[TBP_MAX_AXES];
    memset(ax, 0, sizeof ax);
    int n = pl->tab.axes ? pl->tab.axes(ax, TBP_MAX_AXES) : 0;
    if (n < 0 || n > TBP_MAX_AXES) {
        snprintf(reason, len, "axes() returned %d (0..%d expected)", n,
                 TBP_MAX_AXES);
        return TB_EUNAVAILABLE;
    }
    for (int i = 0; i < n; i++) {
        size_t nl = ax[i].name ? strlen(ax[i].name) : 0;
        bool ok = nl >= 1 && nl <= 31 && ax[i].n_values >= 1 &&
                  ax[i].n_values <= TBP_MAX_AXIS_VALUES && ax[i].def >= 0 &&
                  ax[i].def < ax[i].n_values;
        for (int v = 0; ok && v < ax[i].n_values; v++) {
            size_t vl = ax[i].values[v] ? strlen(ax[i].values[v]) : 0;
            ok = vl >= 1 && vl <= 31;
        }
        if (!ok) {
            snprintf(reason, len,
                     "axes(): axis %d is malformed (name and values: 1-31 "
                     "chars, 1-%d values, def an index of them)",
                     i, TBP_MAX_AXIS_VALUES);
            return TB_EUNAVAILABLE;
        }
    }
    pl->n_axes = n;
    return 0;
}

static int pl_axes(const tb_backend *self, tb_axis *out, int max)
{
    const plugin *pl = self->data;
    if (pl->why[0] || !pl->tab.axes)
        return 0;
    tbp_axis ax[TBP_MAX_AXES];
    memset(ax, 0, sizeof ax);
    int n = pl->tab.axes(ax, TBP_MAX_AXES);
    if (n < 0 || n > TBP_MAX_AXES)
        return 0;
    if (n > max)
        n = max;
    for (int i = 0; i < n; i++) {
        out[i].name = ax[i].name;
        out[i].n_values = ax[i].n_values;
        memcpy(out[i].values, ax[i].values, sizeof out[i].values);
        out[i].def = ax[i].def;
        out[i].doc = ax[i].doc;
    }
    return n;
}

static int pl_create(const tb_backend *self, const char *const *values,
                     void **ctx, char *err, size_t len)
{
    plugin *pl = self->data;
    if (pl->why[0]) {
        snprintf(err, len, "%s: %s", pl->name, pl->why);
        return TB_EUNAVAILABLE;
    }
    instance *in = calloc(1, sizeof *in);
    if (!in) {
        snprintf(err, len, "%s: out of memory", pl->name);
        return TB_ENOMEM;
    }
    in->pl = pl;
    in->mem.owner = self;
    /* as many values as axes: probe counted them (in this process or
     * before the fork); ask again if create comes first */
    int n_axes = pl->n_axes;
    if (!n_axes && pl->tab.axes) {
        tbp_axis ax[TBP_MAX_AXES];
        memset(ax, 0, sizeof ax);
        n_axes = pl->tab.axes(ax, TBP_MAX_AXES);
        if (n_axes < 0 || n_axes > TBP_MAX_AXES)
            n_axes = 0;
    }
    char e[256] = "";
    int rc = pl->tab.create(values, n_axes, &in->pctx, e, sizeof e);
    if (rc) {
        e[sizeof e - 1] = '\0';
        snprintf(err, len, "%s: create failed: %s", pl->name,
                 e[0] ? e : tb_strerror(map_rc(rc)));
        free(in);
        return map_rc(rc) ? map_rc(rc) : TB_EINVAL;
    }
    *ctx = in;
    return 0;
}

static void pl_destroy(void *ctx)
{
    instance *in = ctx;
    if (!in)
        return;
    in->pl->tab.destroy(in->pctx);
    for (int i = 0; i < in->n_k; i++)
        free(in->k[i]);
    free(in->k);
    free(in);
}

static int pl_alloc(void *ctx, tb_tensor *t)
{
    instance *in = ctx;
    if (in->pl->host_memory)
        return tb_hostmem_alloc(&in->mem, ctx, t);
    if (!tb_hostmem_header_ok(t) || !tb_tensor_is_contiguous(t))
        return TB_EINVAL;
    t->data = NULL;
    int rc = map_rc(in->pl->tab.alloc(in->pctx, (tbp_tensor *)t));
    if (rc)
        return rc;
    if (!t->data && tb_tensor_nbytes(t))
        return TB_ENOMEM;
    t->owns = true;
    t->backend = &in->pl->be;
    t->backend_ctx = ctx;
    return 0;
}

static void pl_free(void *ctx, tb_tensor *t)
{
    instance *in = ctx;
    if (in->pl->host_memory) {
        tb_hostmem_free(&in->mem, t);
        return;
    }
    if (!t || t->backend != &in->pl->be)
        return;
    if (t->owns)
        in->pl->tab.free(in->pctx, (tbp_tensor *)t);
    t->data = NULL;
    t->owns = false;
}

/* pl_upload and pl_download: host memory's copy, or the plugin's. */
#define PL_COPY(DIR)                                                      \
    static int pl_##DIR(void *ctx, tb_tensor *dst, const tb_tensor *src)  \
    {                                                                     \
        instance *in = ctx;                                               \
        if (in->pl->host_memory)                                          \
            return tb_hostmem_##DIR(&in->mem, dst, src);                  \
        return map_rc(in->pl->tab.DIR(in->pctx, (tbp_tensor *)dst,        \
                                      (const tbp_tensor *)src));          \
    }
PL_COPY(upload)
PL_COPY(download)
#undef PL_COPY

static int pl_sync(void *ctx)
{
    instance *in = ctx;
    return in->pl->tab.sync ? map_rc(in->pl->tab.sync(in->pctx)) : 0;
}

static void pl_counters(void *ctx, tb_backend_counters *out)
{
    instance *in = ctx;
    if (in->pl->tab.counters) {
        tbp_counters c;
        memset(&c, 0, sizeof c);
        in->pl->tab.counters(in->pctx, &c);
        out->kernel_launches = c.kernel_launches;
        out->memcpy_count = c.memcpy_count;
        out->memcpy_bytes = c.memcpy_bytes;
        out->device_allocs = c.device_allocs;
        out->device_alloc_bytes = c.device_alloc_bytes;
        return;
    }
    out->kernel_launches =
        atomic_load_explicit(&in->launches, memory_order_relaxed);
    if (in->pl->host_memory)
        tb_hostmem_counters(&in->mem, out);
}

/* A plugin kernel as tbench calls it: the record's function with the
 * instance's context. */
static int pl_call(void *kctx, const tb_tensor *x, tb_tensor *y,
                   const tb_params *p)
{
    const kernel_rec *r = kctx;
    atomic_fetch_add_explicit(&r->in->launches, 1, memory_order_relaxed);
    int rc = r->fn(r->in->pctx, (const tbp_tensor *)x, (tbp_tensor *)y,
                   (const tbp_params *)p);
    return rc ? map_rc(rc) : 0;
}

/* The instance's record of fn, made on first use; NULL when out of
 * memory. */
static kernel_rec *kernel_record(instance *in, tbp_kernel_fn fn)
{
    for (int i = 0; i < in->n_k; i++)
        if (in->k[i]->fn == fn)
            return in->k[i];
    if (in->n_k == in->cap_k) {
        int cap = in->cap_k ? 2 * in->cap_k : 8;
        kernel_rec **k = realloc(in->k, (size_t)cap * sizeof *k);
        if (!k)
            return NULL;
        in->k = k;
        in->cap_k = cap;
    }
    kernel_rec *r = malloc(sizeof *r);
    if (!r)
        return NULL;
    r->in = in;
    r->fn = fn;
    in->k[in->n_k++] = r;
    return r;
}

/* The plugin's kernel, as {pl_call, its record}; {NULL, NULL} when the
 * plugin has none (or no memory is left for the record). */
const char *tb_plugin_half_reason(const tb_backend *b)
{
    const plugin *pl = b ? b->data : NULL;
    if (!pl || (pl->tab.abi_version & 0xffff) >= 1)
        return NULL;
    return "plugin built for ABI 1.0: bf16 and f16 came in 1.1 (rebuild "
           "it against this tbench's tbench/plugin.h to offer them)";
}

static tb_kernel pl_kernel(void *ctx, const tb_op *op, tb_dtype dt,
                           const tb_params *p, const char **impl)
{
    instance *in = ctx;
    /* bf16/f16 came in ABI 1.1: a plugin built for 1.0 is never handed
     * 16-bit elements it might read as floats */
    if (tb_dtype_is_half(dt) && (in->pl->tab.abi_version & 0xffff) < 1)
        return (tb_kernel){NULL, NULL};
    /* the ABI's params are numbers: a string parameter's value is a
     * handle of tbench's string table (op.h), meaningless to a plugin */
    for (int i = 0; i < op->n_params; i++)
        if (op->params[i].kind == TB_PARAM_STRING)
            return (tb_kernel){NULL, NULL};
    tbp_op d;
    memset(&d, 0, sizeof d);
    d.name = op->name;
    d.n_in = op->n_in;
    d.n_out = op->n_out;
    d.n_params = op->n_params < TBP_MAX_PARAMS ? op->n_params
                                               : TBP_MAX_PARAMS;
    for (int i = 0; i < d.n_params; i++)
        d.params[i] = op->params[i].name;
    const char *name = NULL;
    tbp_kernel_fn fn = in->pl->tab.kernel(in->pctx, &d, tb_dtype_name(dt),
                                          (const tbp_params *)p, &name);
    kernel_rec *r = fn ? kernel_record(in, fn) : NULL;
    if (!r)
        return (tb_kernel){NULL, NULL};
    if (impl)
        *impl = name ? name : op->name;
    return (tb_kernel){pl_call, r};
}

/* ---- loading ------------------------------------------------------ */

static bool name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > 31)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
            return false;
    return true;
}

/* Check the table; on a problem write why and return false. */
static bool table_ok(const tbp_plugin *t, tbp_plugin *copy, char *why,
                     size_t len)
{
    uint32_t major = t->abi_version >> 16, minor = t->abi_version & 0xffff;
    if (major != TBP_ABI_MAJOR || minor > TBP_ABI_MINOR) {
        snprintf(why, len,
                 "built for plugin ABI %u.%u; this tbench has ABI %d.%d "
                 "(same major, minor <= %d needed: rebuild the plugin "
                 "against this tbench's tbench/plugin.h)",
                 major, minor, TBP_ABI_MAJOR, TBP_ABI_MINOR, TBP_ABI_MINOR);
        return false;
    }
    /* the smallest table is ABI 1.0's: it ends with timer_stop */
    if (t->size < offsetof(tbp_plugin, timer_stop) + sizeof t->timer_stop ||
        t->size > sizeof *t || t->tensor_size != sizeof(tbp_tensor) ||
        t->params_size != sizeof(tbp_params)) {
        snprintf(why, len,
                 "ABI %u.%u table sizes do not match (tbp_plugin %u, "
                 "tbp_tensor %u, tbp_params %u; expected %zu, %zu, %zu)",
                 major, minor, t->size, t->tensor_size, t->params_size,
                 sizeof(tbp_plugin), sizeof(tbp_tensor),
                 sizeof(tbp_params));
        return false;
    }
    memset(copy, 0, sizeof *copy);
    memcpy(copy, t, t->size);
    const char *missing = !copy->name     ? "name"
                          : !copy->probe  ? "probe"
                          : !copy->create ? "create"
                          : !copy->destroy ? "destroy"
                          : !copy->kernel ? "kernel"
                                          : NULL;
    if (missing) {
        snprintf(why, len, "required slot '%s' is NULL", missing);
        return false;
    }
    int mem = !!copy->alloc + !!copy->free + !!copy->upload +
              !!copy->download;
    if (mem != 0 && mem != 4) {
        snprintf(why, len, "alloc, free, upload and download: give all "
                           "four or none (host memory)");
        return false;
    }
    if (!copy->timer_start != !copy->timer_stop) {
        snprintf(why, len, "timer_start and timer_stop: give both or "
                           "neither");
        return false;
    }
    if (!name_ok(copy->name)) {
        snprintf(why, len, "name '%.40s' is not 1-31 of [A-Za-z0-9_-]",
                 copy->name);
        return false;
    }
    return true;
}

/* ---- the trial load: the plugin's first run, in a child -------------- */

/* How long a trial may take: its constructors, entry point, probe and
 * axes together (a probe that looks for a device may take a while). */
#define TRIAL_TIMEOUT_S 10.0

/* What the trial child is doing, one byte on the pipe as it starts. */
static const struct {
    char code;
    const char *what;
} trial_steps[] = {
    {'c', "the load (dlopen: its constructors)"},
    {'e', TBP_ENTRY_NAME "()"},
    {'p', "probe"},
    {'a', "axes"},
};

static void trial_step(int fd, char code)
{
    while (write(fd, &code, 1) < 0 && errno == EINTR)
        ;
}

/* The trial child: the steps tbench takes with the plugin in its own
 * process (load, entry point, table check, probe, axes), each announced
 * on fd, then 'd' (done: none of them crashed, hung or exited; whether
 * they succeeded is the real load's to say).  Never returns. */
static void trial_child(const char *open_path, int fd)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(STDERR_FILENO, STDOUT_FILENO); /* keep `list --json` clean */
    char why[768] = "";
    void *h = NULL, *entry = NULL;
    tbp_plugin tab;
    trial_step(fd, 'c');
    if (tb_dl_entry(open_path, TBP_ENTRY_NAME, &h, &entry, why,
                    sizeof why) == 0) {
        trial_step(fd, 'e');
        const tbp_plugin *t = ((tbp_entry_fn)(uintptr_t)entry)();
        if (t && table_ok(t, &tab, why, sizeof why)) {
            char r[256] = "";
            trial_step(fd, 'p');
            if (tab.probe(r, sizeof r) == 0 && tab.axes) {
                tbp_axis ax[TBP_MAX_AXES];
                memset(ax, 0, sizeof ax);
                trial_step(fd, 'a');
                tab.axes(ax, TBP_MAX_AXES);
            }
        }
    }
    trial_step(fd, 'd');
    _exit(0); /* no destructors, no atexit handlers of tbench's */
}

static double trial_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Wait for the trial child pid to say 'd' on fd, to die, or to pass
 * TRIAL_TIMEOUT_S; the last step it announced in *step.  1 done, 0 it
 * ended without 'd' (its wait status in *st), -1 time out.  The child's
 * exit is polled too: a process it forked may hold the pipe open. */
static int trial_wait(pid_t pid, int fd, char *step, int *st)
{
    double deadline = trial_now_s() + TRIAL_TIMEOUT_S;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int k = poll(&p, 1, 50);
        char c;
        ssize_t n = k > 0 ? read(fd, &c, 1) : 0;
        if (n == 1 && c == 'd')
            return 1;
        if (n == 1) {
            *step = c;
            continue;
        }
        pid_t w = waitpid(pid, st, WNOHANG);
        if (w == pid) {
            while (read(fd, &c, 1) == 1) /* what it said before dying */
                if (c == 'd')
                    return 1;
                else
                    *step = c;
            return 0;
        }
        if (w < 0 && errno != EINTR)
            return 0;
        if (trial_now_s() >= deadline)
            return -1;
    }
}

/* Load the plugin at open_path first in a child process and run what
 * tbench would run of it in its own process (constructors, entry point,
 * probe, axes).  0 when none of it crashed, hung or exited: tbench then
 * loads it itself.  Otherwise TB_EUNAVAILABLE with the reason in why
 * (the signal or exit status, or the time limit, and the step), and
 * tbench never loads the plugin: its crash cannot kill tbench. */
static int trial_load(const char *open_path, char *why, size_t len)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC))
        return 0; /* no trial possible: load as before */
    /* never blocks on a pipe that a process the plugin forked holds */
    fcntl(pfd[0], F_SETFL, O_NONBLOCK);
    fflush(NULL); /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return 0;
    }
    if (pid == 0) {
        close(pfd[0]);
        trial_child(open_path, pfd[1]);
    }
    close(pfd[1]);
    char step = 'c';
    int st = 0;
    int r = trial_wait(pid, pfd[0], &step, &st);
    close(pfd[0]);
    if (r != 0) {
        kill(pid, SIGKILL);
        while (waitpid(pid, r < 0 ? &st : NULL, 0) < 0 && errno == EINTR)
            ;
    }
    if (r == 1)
        return 0;
    const char *what = "loading";
    for (size_t i = 0; i < sizeof trial_steps / sizeof trial_steps[0]; i++)
        if (trial_steps[i].code == step)
            what = trial_steps[i].what;
    char how[160];
    if (r < 0)
        snprintf(how, sizeof how, "did not finish within %g s (killed)",
                 TRIAL_TIMEOUT_S);
    else if (WIFSIGNALED(st) && sigabbrev_np(WTERMSIG(st)))
        snprintf(how, sizeof how, "was killed by SIG%s (%s)",
                 sigabbrev_np(WTERMSIG(st)), sigdescr_np(WTERMSIG(st)));
    else if (WIFEXITED(st))
        snprintf(how, sizeof how, "exited with status %d",
                 WEXITSTATUS(st));
    else
        snprintf(how, sizeof how, "was lost");
    snprintf(why, len,
             "its trial load in a child process %s during %s; not loaded",
             how, what);
    return TB_EUNAVAILABLE;
}

/* ---- who may change the code tbench loads ---------------------------- */

/* why = "WHATNAME is writable by every userHOW (mode M)TAIL"; true. */
static bool refused(char *why, size_t len, const char *what,
                    const char *name, const char *how, mode_t mode,
                    const char *tail)
{
    char msg[768]; /* why may share an object with name: write here */
    snprintf(msg, sizeof msg, "%s%.512s is writable by every user%s (mode "
             "%04o)%s", what, name, how, (unsigned)(mode & 07777), tail);
    snprintf(why, len, "%s", msg);
    return true;
}

/* Is path a plugin file anyone could change?  A file writable by every
 * user, or one in a folder writable by every user without the sticky
 * bit (anyone may replace it there): why says so and true.  A file that
 * does not exist passes (dlopen says what is wrong). */
static bool open_to_all(const char *path, char *why, size_t len)
{
    struct stat st;
    if (stat(path, &st))
        return false;
    if (st.st_mode & S_IWOTH)
        return refused(why, len, "", path, "", st.st_mode,
                       ": anyone could change the code tbench would run; "
                       "not loaded (chmod o-w it)");
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 1;
    if (slash && n == 0)
        n = 1; /* "/x.so": the root */
    if (n >= sizeof dir)
        return false;
    memcpy(dir, slash ? path : ".", n);
    dir[n] = '\0';
    if (stat(dir, &st) == 0 && (st.st_mode & S_IWOTH) &&
        !(st.st_mode & S_ISVTX))
        return refused(why, len, "its folder ", dir,
                       " without the sticky bit", st.st_mode,
                       ": anyone could replace the file; not loaded");
    return false;
}

/* A name for a plugin that did not load: its file name without
 * directories and ".so", cut to 31 of [A-Za-z0-9_-] ('_' for others). */
static void stem_name(const char *path, char *out, size_t len)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n > 3 && !strcmp(base + n - 3, ".so"))
        n -= 3;
    size_t j = 0;
    for (size_t i = 0; i < n && j + 1 < len && j < 31; i++) {
        char c = base[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '_' || c == '-';
        out[j++] = ok ? c : '_';
    }
    out[j] = '\0';
    if (!j)
        snprintf(out, len, "plugin");
}

int tb_plugin_add(const char *spec, char *err, size_t len)
{
    if (!spec || !spec[0]) {
        snprintf(err, len, "--plugin: empty path");
        return TB_EINVAL;
    }
    if (n_plugins == TB_MAX_PLUGINS) {
        snprintf(err, len, "--plugin %.512s: at most %d plugins", spec,
                 TB_MAX_PLUGINS);
        return TB_EINVAL;
    }
    plugin *pl = &plugins[n_plugins];
    memset(pl, 0, sizeof *pl);
    /* PATH:LABEL when what follows the last ':' has no '/'. */
    const char *colon = strrchr(spec, ':');
    const char *label = NULL;
    size_t plen = strlen(spec);
    if (colon && !strchr(colon, '/')) {
        label = colon + 1;
        plen = (size_t)(colon - spec);
        if (!name_ok(label) || !plen) {
            snprintf(err, len,
                     "--plugin %.512s: expected PATH or PATH:LABEL with "
                     "LABEL 1-31 of [A-Za-z0-9_-]", spec);
            return TB_EINVAL;
        }
    }
    if (plen >= sizeof pl->path) {
        snprintf(err, len, "--plugin: path too long");
        return TB_EINVAL;
    }
    memcpy(pl->path, spec, plen);
    pl->path[plen] = '\0';
    /* A mistyped path is the user's error, as a missing
     * TBENCH_PLUGIN_PATH entry is; a file that exists but does not load
     * is the plugin's (unavailable, below). */
    struct stat st;
    if (stat(pl->path, &st)) {
        snprintf(err, len, "--plugin %.512s: %s", pl->path,
                 errno == ENOENT ? "no such file" : strerror(errno));
        return TB_EINVAL;
    }

    /* dlopen takes a name without '/' from the library path: keep what
     * the user named a file. */
    char open_path[PATH_MAX + 2];
    snprintf(open_path, sizeof open_path, "%s%s",
             strchr(pl->path, '/') ? "" : "./", pl->path);
    void *entry = NULL;
    const tbp_plugin *t = NULL;
    if (!open_to_all(pl->path, pl->why, sizeof pl->why) &&
        trial_load(open_path, pl->why, sizeof pl->why) == 0 &&
        tb_dl_entry(open_path, TBP_ENTRY_NAME, &pl->handle, &entry,
                    pl->why, sizeof pl->why) == 0) {
        t = ((tbp_entry_fn)(uintptr_t)entry)();
        if (!t)
            snprintf(pl->why, sizeof pl->why, "%s() returned NULL",
                     TBP_ENTRY_NAME);
        else if (table_ok(t, &pl->tab, pl->why, sizeof pl->why))
            pl->host_memory = !pl->tab.alloc;
        if (pl->why[0]) {
            dlclose(pl->handle);
            pl->handle = NULL;
        }
    }
    if (label)
        snprintf(pl->name, sizeof pl->name, "%s", label);
    else if (!pl->why[0])
        snprintf(pl->name, sizeof pl->name, "%s", pl->tab.name);
    else
        stem_name(pl->path, pl->name, sizeof pl->name);

    int n;
    const tb_backend *const *all = tb_backend_list(&n);
    for (int i = 0; i < n; i++)
        if (!strcmp(all[i]->name, pl->name)) {
            const char *other = tb_plugin_path(all[i]);
            snprintf(err, len,
                     "--plugin %.512s: backend name '%s' is taken by %s%.512s;"
                     " give a label: --plugin PATH:LABEL", spec, pl->name,
                     other ? "plugin " : "the built-in backend ",
                     other ? other : pl->name);
            if (pl->handle)
                dlclose(pl->handle);
            memset(pl, 0, sizeof *pl);
            return TB_EINVAL;
        }

    char doc[sizeof pl->doc];
    if (pl->why[0])
        snprintf(doc, sizeof doc, "plugin %.400s (not loaded)", pl->path);
    else
        snprintf(doc, sizeof doc, "%.200s (plugin %.200s%s%.40s)",
                 pl->tab.doc ? pl->tab.doc : pl->tab.name, pl->path,
                 pl->tab.version ? ", version " : "",
                 pl->tab.version ? pl->tab.version : "");
    memcpy(pl->doc, doc, sizeof doc);
    pl->be = (tb_backend){
        .name = pl->name,
        .doc = pl->doc,
        .data = pl,
        .probe = pl_probe,
        .axes = pl_axes,
        .create = pl_create,
        .destroy = pl_destroy,
        .alloc = pl_alloc,
        .free = pl_free,
        .upload = pl_upload,
        .download = pl_download,
        .sync = pl_sync,
        .kernel = pl_kernel,
        .counters = pl_counters,
    };
    if (tb_backend_register(&pl->be)) {
        snprintf(err, len, "--plugin %.512s: the registry is full", spec);
        if (pl->handle)
            dlclose(pl->handle);
        memset(pl, 0, sizeof *pl);
        return TB_EINVAL;
    }
    n_plugins++;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Load every *.so of dir in name order. */
static int add_dir(const char *dir, char *err, size_t len)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, len, "TBENCH_PLUGIN_PATH: cannot read %.512s", dir);
        return TB_EINVAL;
    }
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256) {
        size_t l = strlen(e->d_name);
        if (l > 3 && !strcmp(e->d_name + l - 3, ".so") &&
            e->d_name[0] != '.' && (names[n] = strdup(e->d_name)))
            n++;
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], by_name);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        if (!rc && (size_t)snprintf(path, sizeof path, "%s/%s", dir,
                                    names[i]) < sizeof path)
            rc = tb_plugin_add(path, err, len);
        free(names[i]);
    }
    return rc;
}

int tb_plugin_add_path(const char *list, char *err, size_t len)
{
    if (!list)
        return 0;
    const char *s = list;
    while (*s) {
        const char *end = strchr(s, ':');
        size_t n = end ? (size_t)(end - s) : strlen(s);
        if (n) {
            char path[PATH_MAX];
            if (n >= sizeof path) {
                snprintf(err, len, "TBENCH_PLUGIN_PATH: entry too long");
                return TB_EINVAL;
            }
            memcpy(path, s, n);
            path[n] = '\0';
            struct stat st;
            int rc;
            if (path[0] != '/') {
                /* it would load the *.so of whatever folder tbench
                 * happens to run in */
                snprintf(err, len,
                         "TBENCH_PLUGIN_PATH: %.512s is a relative path, "
                         "resolved against the current folder; give an "
                         "absolute one", path);
                return TB_EINVAL;
            }
            if (stat(path, &st)) {
                snprintf(err, len, "TBENCH_PLUGIN_PATH: no such file or "
                                   "directory: %.512s", path);
                return TB_EINVAL;
            }
            if (S_ISDIR(st.st_mode) && (st.st_mode & S_IWOTH)) {
                snprintf(err, len,
                         "TBENCH_PLUGIN_PATH: %.512s is writable by every "
                         "user (mode %04o): anyone could add a plugin that "
                         "tbench would load; refused (chmod o-w it)",
                         path, (unsigned)(st.st_mode & 07777));
                return TB_EINVAL;
            }
            if (S_ISDIR(st.st_mode))
                rc = add_dir(path, err, len);
            else
                rc = tb_plugin_add(path, err, len);
            if (rc)
                return rc;
        }
        s += n;
        if (*s == ':')
            s++;
    }
    return 0;
}

int tb_plugin_count(void) { return n_plugins; }

const tb_backend *tb_plugin_backend(int i)
{
    return i >= 0 && i < n_plugins ? &plugins[i].be : NULL;
}

/* b's plugin record, or NULL when b is no plugin. */
static const plugin *find(const tb_backend *b)
{
    return b && b->probe == pl_probe ? b->data : NULL;
}

const char *tb_plugin_path(const tb_backend *b)
{
    const plugin *pl = find(b);
    return pl ? pl->path : NULL;
}

const char *tb_plugin_version(const tb_backend *b)
{
    const plugin *pl = find(b);
    return pl && !pl->why[0] ? pl->tab.version : NULL;
}

bool tb_plugin_loaded(const tb_backend *b)
{
    const plugin *pl = find(b);
    return pl && !pl->why[0];
}
