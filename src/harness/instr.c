/* Instruction counts per iteration: see instr.h. */
#include "instr.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../base/error.h"
#include "../base/fileio.h"
#include "tb_config.h"

#if HAVE_CALLGRIND_H
#include <valgrind/callgrind.h>
#endif

#define PROTO "tbench-instr/1"

const char *tb_instr_source_name(int source)
{
    static const char *const names[] = {"none", "perf", "callgrind", "auto"};
    return (unsigned)source < 4 ? names[source] : "?";
}

/* ---- callgrind output ---------------------------------------------- */

/* The first number after the line prefix `key` ("summary:"), or -1. */
static int line_value(const char *text, const char *key, double *v)
{
    size_t kl = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
        if (!strncmp(p, key, kl)) {
            char *end;
            double d = strtod(p + kl, &end);
            if (end == p + kl || !(d >= 0))
                return -1;
            *v = d;
            return 0;
        }
    return -1;
}

/* The line starting with key, or NULL. */
static const char *find_line(const char *text, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
        if (!strncmp(p, key, kl))
            return p;
    return NULL;
}

int tb_instr_callgrind_events(const char *text, const char *const *names,
                              int n, double *v)
{
    const char *ev = find_line(text, "events:");
    const char *tot = find_line(text, "totals:");
    if (!tot)
        tot = find_line(text, "summary:");
    if (!ev || !tot)
        return TB_EPARSE;
    ev += 7;
    tot = strchr(tot, ':') + 1;
    for (int i = 0; i < n; i++)
        v[i] = NAN;
    /* each event name in turn, and the number in its column (callgrind
     * leaves out trailing zeros: a missing column is 0) */
    bool more = true;
    for (;;) {
        while (*ev == ' ' || *ev == '\t')
            ev++;
        size_t len = strcspn(ev, " \t\r\n");
        if (!len)
            break;
        double d = 0;
        if (more) {
            char *end;
            while (*tot == ' ' || *tot == '\t')
                tot++;
            if (*tot == '\n' || *tot == '\r' || !*tot) {
                more = false;
            } else {
                d = strtod(tot, &end);
                if (end == tot || !(d >= 0) ||
                    !strchr(" \t\r\n", *end))
                    return TB_EPARSE;
                tot = end;
            }
        }
        for (int i = 0; i < n; i++)
            if (strlen(names[i]) == len && !strncmp(names[i], ev, len))
                v[i] = d;
        ev += len;
    }
    for (int i = 0; i < n; i++)
        if (isnan(v[i]))
            return TB_EPARSE;
    return 0;
}

int tb_instr_callgrind_geometry(const char *text, const char *level,
                                char *out, size_t len)
{
    char key[32];
    snprintf(key, sizeof key, "desc: %.8s cache:", level);
    const char *p = find_line(text, key);
    if (!p)
        return TB_EPARSE;
    p += strlen(key);
    while (*p == ' ')
        p++;
    size_t n = strcspn(p, "\r\n");
    /* "32768 B, 64 B, 8-way associative": the last word is noise */
    const char *assoc = strstr(p, " associative");
    if (assoc && (size_t)(assoc - p) < n)
        n = (size_t)(assoc - p);
    if (!n || n >= len)
        return TB_EPARSE;
    memcpy(out, p, n);
    out[n] = '\0';
    return 0;
}

int tb_instr_callgrind_total(const char *text, double *total)
{
    const char *ev = NULL;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
        if (!strncmp(p, "events:", 7)) {
            ev = p + 7;
            break;
        }
    if (!ev)
        return TB_EPARSE;
    while (*ev == ' ' || *ev == '\t')
        ev++;
    if (strncmp(ev, "Ir", 2) || (ev[2] != ' ' && ev[2] != '\n' &&
                                 ev[2] != '\r' && ev[2] != '\0'))
        return TB_EPARSE;
    /* With collection toggled by client requests, callgrind 3.19 writes
     * "summary: 0" and the real sum on "totals:". */
    if (line_value(text, "totals:", total) &&
        line_value(text, "summary:", total))
        return TB_EPARSE;
    return 0;
}

/* ---- child side ---------------------------------------------------- */

static void perf_on(void *arg)
{
    int fd = *(int *)arg;
    ioctl(fd, PERF_EVENT_IOC_RESET, 0);
    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}

static void perf_off(void *arg)
{
    ioctl(*(int *)arg, PERF_EVENT_IOC_DISABLE, 0);
}

static void cg_on(void *arg)
{
    (void)arg;
#if HAVE_CALLGRIND_H
    CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_TOGGLE_COLLECT;
#endif
}

static void cg_off(void *arg)
{
    (void)arg;
#if HAVE_CALLGRIND_H
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_STOP_INSTRUMENTATION;
#endif
}

/* The SIMD level a case runs at, as its backend reports it (the cpu
 * backend: its isa axis, "auto" resolved, within the cap in force); "-"
 * for a backend that reports none. */
static const char *case_isa(const tb_case *c)
{
    const char *values[TB_MAX_AXES];
    for (int i = 0; i < c->n_axes && i < TB_MAX_AXES; i++)
        values[i] = c->axis_value[i];
    tb_backend_host h;
    if (tb_backend_host_info(c->backend, values, &h) || !h.isa)
        return "-";
    return h.isa;
}

/* ---- measure.cache with perf: one group of counters ---------------- */

typedef struct perf_group {
    int fd[TB_CACHE_NEV]; /* -1: not open (the leader, cycles, first) */
    int n;                /* counters open */
} perf_group;

static void group_on(void *arg)
{
    perf_group *g = arg;
    ioctl(g->fd[0], PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
    ioctl(g->fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
}

static void group_off(void *arg)
{
    perf_group *g = arg;
    ioctl(g->fd[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
}

static void group_close(perf_group *g)
{
    for (int i = 0; i < TB_CACHE_NEV; i++)
        if (g->fd[i] >= 0)
            close(g->fd[i]);
}

/* The perf event of each tb_cache_event. */
static void cache_attr(int ev, struct perf_event_attr *a)
{
    static const uint64_t hwc[TB_CACHE_NEV] = {
        [TB_CACHE_L1D_MISSES] = PERF_COUNT_HW_CACHE_L1D,
        [TB_CACHE_LLC_MISSES] = PERF_COUNT_HW_CACHE_LL,
        [TB_CACHE_DTLB_MISSES] = PERF_COUNT_HW_CACHE_DTLB,
    };
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    if (ev == TB_CACHE_CYCLES || ev == TB_CACHE_INSTRUCTIONS) {
        a->type = PERF_TYPE_HARDWARE;
        a->config = ev == TB_CACHE_CYCLES ? PERF_COUNT_HW_CPU_CYCLES
                                          : PERF_COUNT_HW_INSTRUCTIONS;
    } else {
        a->type = PERF_TYPE_HW_CACHE;
        a->config = hwc[ev] | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
                    (PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
    }
    a->disabled = ev == TB_CACHE_CYCLES;
    a->exclude_kernel = 1;
    a->exclude_hv = 1;
    a->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                     PERF_FORMAT_TOTAL_TIME_RUNNING;
}

/* Open the group: the leader (cycles) must open; a member the PMU lacks
 * stays closed (its figure "-").  0, or the errno of the leader. */
static int group_open(perf_group *g)
{
    g->n = 0;
    for (int i = 0; i < TB_CACHE_NEV; i++)
        g->fd[i] = -1;
    for (int i = 0; i < TB_CACHE_NEV; i++) {
        struct perf_event_attr a;
        cache_attr(i, &a);
        g->fd[i] = (int)syscall(SYS_perf_event_open, &a, 0, -1,
                                i ? g->fd[0] : -1, 0);
        if (g->fd[i] < 0 && i == 0)
            return errno;
        g->n += g->fd[i] >= 0;
    }
    return 0;
}

/* Read the group into "c,i,l1d,llc,dtlb" totals ("-" for a counter not
 * open).  0, or -1 with the reason in msg. */
static int group_read(const perf_group *g, char *line, size_t len,
                      char *msg, size_t mlen)
{
    uint64_t buf[3 + TB_CACHE_NEV];
    ssize_t want = (ssize_t)((3 + (size_t)g->n) * sizeof buf[0]);
    if (read(g->fd[0], buf, sizeof buf) != want) {
        snprintf(msg, mlen, "reading the perf counter group: %s",
                 strerror(errno));
        return -1;
    }
    /* nr, time_enabled, time_running, then the values in open order */
    if (buf[0] != (uint64_t)g->n || buf[2] == 0 || buf[2] < buf[1]) {
        snprintf(msg, mlen, "the perf counter group ran %llu of %llu ns "
                            "(shared with other counters?): no exact "
                            "count", (unsigned long long)buf[2],
                 (unsigned long long)buf[1]);
        return -1;
    }
    size_t o = 0;
    for (int i = 0, j = 3; i < TB_CACHE_NEV; i++) {
        int w = g->fd[i] >= 0
                    ? snprintf(line + o, len - o, "%s%llu", i ? "," : "",
                               (unsigned long long)buf[j++])
                    : snprintf(line + o, len - o, "%s-", i ? "," : "");
        o += (size_t)w < len - o ? (size_t)w : len - o - 1;
    }
    return 0;
}

static int paranoid(void)
{
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    int v = -99;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -99;
        fclose(f);
    }
    return v;
}

/* The answer when perf_event_open(PERF_COUNT_HW_event) failed with
 * errno e: -1. */
static int perf_refused(FILE *out, const char *event, int e)
{
    fprintf(out, PROTO " error perf_event_open(PERF_COUNT_HW_%s, user "
                   "only): %s (kernel.perf_event_paranoid = %d)%s\n",
            event, strerror(e), paranoid(),
            e == ENOENT ? "; no hardware counter here (a VM without a "
                          "virtual PMU?)" : "");
    return -1;
}

int tb_instr_child(const tb_case *c, int source, bool cache, uint64_t k,
                   FILE *out)
{
    int fd = -1;
    perf_group g;
    if (source == TB_INSTR_PERF && cache) {
        int e = group_open(&g);
        if (e)
            return perf_refused(out, "CPU_CYCLES", e);
    } else if (source == TB_INSTR_PERF) {
        struct perf_event_attr a;
        memset(&a, 0, sizeof a);
        a.size = sizeof a;
        a.type = PERF_TYPE_HARDWARE;
        a.config = PERF_COUNT_HW_INSTRUCTIONS;
        a.disabled = 1;
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
        fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
        if (fd < 0)
            return perf_refused(out, "INSTRUCTIONS", errno);
    } else {
#if HAVE_CALLGRIND_H
        if (!RUNNING_ON_VALGRIND) {
            fprintf(out, PROTO " error not running under valgrind\n");
            return -1;
        }
#else
        fprintf(out, PROTO " error tbench was built without valgrind's "
                       "headers (valgrind/callgrind.h)\n");
        return -1;
#endif
    }
    tb_runner *r;
    int rc = tb_runner_create(&r, NULL);
    if (rc) {
        fprintf(out, PROTO " error runner: %s\n", tb_strerror(rc));
        if (fd >= 0)
            close(fd);
        if (source == TB_INSTR_PERF && cache)
            group_close(&g);
        return -1;
    }
    tb_result res;
    memset(&res, 0, sizeof res);
    const bool grp = source == TB_INSTR_PERF && cache;
#if HAVE_CALLGRIND_H
    /* the simulated caches see the uncounted call too (instrumented, not
     * collected): the counted calls start warm, as perf's do */
    if (source == TB_INSTR_CALLGRIND && cache)
        CALLGRIND_START_INSTRUMENTATION;
#endif
    rc = grp ? tb_runner_count(r, c, k, group_on, group_off, &g, &res)
         : source == TB_INSTR_PERF
             ? tb_runner_count(r, c, k, perf_on, perf_off, &fd, &res)
             : tb_runner_count(r, c, k, cg_on, cg_off, NULL, &res);
    char line[200], msg[200];
    if (rc) {
        fprintf(out, PROTO " error %s%s%s\n", tb_status_name(res.status),
                res.message[0] ? ": " : "", res.message);
    } else if (grp) {
        if ((rc = group_read(&g, line, sizeof line, msg, sizeof msg)))
            fprintf(out, PROTO " error %s\n", msg);
        else
            fprintf(out, PROTO " ok %s %s %s\n", line,
                    res.impl ? res.impl : "-", case_isa(c));
    } else if (source == TB_INSTR_PERF) {
        uint64_t n = 0;
        if (read(fd, &n, sizeof n) != (ssize_t)sizeof n) {
            fprintf(out, PROTO " error reading the perf counter: %s\n",
                    strerror(errno));
            rc = -1;
        } else {
            fprintf(out, PROTO " ok %llu %s %s\n", (unsigned long long)n,
                    res.impl ? res.impl : "-", case_isa(c));
        }
    } else {
        fprintf(out, PROTO " ok - %s %s\n", res.impl ? res.impl : "-",
                case_isa(c));
    }
    tb_result_free(&res);
    tb_runner_destroy(r);
    if (fd >= 0)
        close(fd);
    if (grp)
        group_close(&g);
    return rc;
}

/* ---- parent side --------------------------------------------------- */

/* The counting process's scratch folder and files. */
typedef struct child_files {
    char dir[4096];
    char out[4200], err[4200], cg[4200], cgopt[4300], iters[32];
    char d1[64], ll[64]; /* --D1=, --LL= from sysfs ("" valgrind's own) */
} child_files;

/* One cache of cpu0 in sysfs (index0..index9) at `level` of `type`
 * ("Data", "Unified"; level -1: the highest unified) as valgrind's
 * "--D1=size,assoc,line" into out; "" when sysfs has none or its sets
 * are not a power of two (valgrind then detects its own). */
static void sysfs_cache(int level, const char *type, const char *opt,
                        char *out, size_t len)
{
    int best = -1;
    long size = 0, ways = 0, line = 0;
    out[0] = '\0';
    for (int i = 0; i < 10; i++) {
        char p[128], t[32] = "", unit = 0;
        int lv = 0;
        long sz = 0, w = 0, ln = 0;
        FILE *f;
#define SYSFS_READ(name, fmt, ...)                                         \
    snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu0/cache/index%d/"   \
             name, i);                                                    \
    if (!(f = fopen(p, "r")))                                             \
        continue;                                                         \
    if (fscanf(f, fmt, __VA_ARGS__) < 1) {                                \
        fclose(f);                                                        \
        continue;                                                         \
    }                                                                     \
    fclose(f);
        SYSFS_READ("level", "%d", &lv)
        SYSFS_READ("type", "%31s", t)
        SYSFS_READ("size", "%ld%c", &sz, &unit)
        SYSFS_READ("ways_of_associativity", "%ld", &w)
        SYSFS_READ("coherency_line_size", "%ld", &ln)
#undef SYSFS_READ
        sz *= unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1;
        if (strcmp(t, type) || (level > 0 && lv != level) || lv <= best)
            continue;
        best = lv;
        size = sz;
        ways = w;
        line = ln;
    }
    if (best < 0 || size <= 0 || ways <= 0 || line <= 0 ||
        size % (ways * line))
        return;
    long sets = size / (ways * line);
    if (sets & (sets - 1))
        return;
    snprintf(out, len, "--%s=%ld,%ld,%ld", opt, size, ways, line);
}

/* A new mkdtemp folder under $TMPDIR (else /tmp) and the names of the
 * files in it.  0, or -1 with the reason. */
static int child_files_make(const tb_case *c, bool cache, child_files *f,
                            char *reason, size_t rlen)
{
    f->d1[0] = f->ll[0] = '\0';
    if (cache) {
        sysfs_cache(1, "Data", "D1", f->d1, sizeof f->d1);
        sysfs_cache(-1, "Unified", "LL", f->ll, sizeof f->ll);
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(f->dir, sizeof f->dir, "%s/tbench-instr-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(f->dir)) {
        snprintf(reason, rlen, "scratch folder %.160s: %s", f->dir,
                 strerror(errno));
        return -1;
    }
    snprintf(f->out, sizeof f->out, "%s/out.txt", f->dir);
    snprintf(f->err, sizeof f->err, "%s/err.txt", f->dir);
    snprintf(f->cg, sizeof f->cg, "%s/callgrind.out", f->dir);
    snprintf(f->cgopt, sizeof f->cgopt, "--callgrind-out-file=%s", f->cg);
    snprintf(f->iters, sizeof f->iters, "%d", c->measure.instructions_iters);
    return 0;
}

static void child_files_remove(const child_files *f)
{
    unlink(f->out);
    unlink(f->err);
    unlink(f->cg);
    rmdir(f->dir);
}

/* argv of `tbench __instr-count` for c (under valgrind for callgrind);
 * argv must hold 32 + 64 pointers. */
static void child_argv(const tb_case *c, int source, bool cache,
                       const char *self, const child_files *f,
                       const char *const *cfg_paths, int ncfg,
                       const char *backend, const char **argv)
{
    int n = 0;
    if (source == TB_INSTR_CALLGRIND) {
        argv[n++] = "valgrind";
        argv[n++] = "--tool=callgrind";
        if (cache) {
            argv[n++] = "--cache-sim=yes";
            if (f->d1[0])
                argv[n++] = f->d1;
            if (f->ll[0])
                argv[n++] = f->ll;
        }
        argv[n++] = "--collect-atstart=no";
        argv[n++] = "--instr-atstart=no";
        argv[n++] = "-q";
        argv[n++] = f->cgopt;
    }
    argv[n++] = self;
    argv[n++] = "__instr-count";
    argv[n++] = "--id";
    argv[n++] = c->id;
    argv[n++] = "--source";
    argv[n++] = tb_instr_source_name(source);
    argv[n++] = "--iters";
    argv[n++] = f->iters;
    if (cache) {
        argv[n++] = "--what";
        argv[n++] = "cache";
    }
    if (backend) {
        argv[n++] = "--backend";
        argv[n++] = backend;
    }
    for (int i = 0; i < ncfg && i < 64; i++)
        argv[n++] = cfg_paths[i];
    argv[n] = NULL;
}

/* Fork and exec argv with stdout and stderr into f's files; under
 * valgrind with the cpu backend capped at AVX2 (valgrind cannot run
 * AVX-512: a cap of avx512 or avx512bf16 is lowered; a lower cap the
 * user asked for stays).  Waits within the
 * case's timeout.  0 with the wait status in *status, or -1 with the
 * reason. */
static int child_run(const tb_case *c, int source, const char **argv,
                     const child_files *f, int *status, char *reason,
                     size_t rlen)
{
    tb_backend_host h;
    tb_backend_host_info(tb_backend_host_cpu(), NULL, &h);
    const bool cap = source == TB_INSTR_CALLGRIND &&
                     (!h.isa_cap || (!h.isa_cap_error &&
                                     strncmp(h.isa_cap, "avx512", 6) == 0));
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(reason, rlen, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        /* new files in our own mkdtemp folder: O_EXCL|O_NOFOLLOW, as
         * nothing can be there already */
        int o = open(f->out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
        int e = open(f->err, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
        int in = open("/dev/null", O_RDONLY);
        if (o < 0 || e < 0 || in < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 ||
            dup2(in, 0) < 0)
            _exit(126);
        if (cap)
            setenv("TBENCH_ISA", "avx2", 1);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    double limit = c->measure.timeout_s;
    struct timespec t0, now, nap = {0, 5000000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid)
            return 0;
        if (w < 0 && errno != EINTR) {
            snprintf(reason, rlen, "waitpid: %s", strerror(errno));
            return -1;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - t0.tv_sec) +
                1e-9 * (double)(now.tv_nsec - t0.tv_nsec) > limit) {
            kill(pid, SIGKILL);
            waitpid(pid, status, 0);
            snprintf(reason, rlen, "%s: no count within measure.timeout_s "
                                   "(%g s); killed",
                     tb_instr_source_name(source), limit);
            return -1;
        }
        nanosleep(&nap, NULL);
    }
}

/* The child's answer "ok COUNT IMPL ISA" from its stdout (its stderr's
 * first line in the reason when it said nothing).  0, or -1 with the
 * reason. */
static int child_answer(int source, const char *argv0, int status,
                        const child_files *f, char *count, char *isa,
                        char *reason, size_t rlen)
{
    const bool cg = source == TB_INSTR_CALLGRIND;
    char *text = NULL, ferr[256];
    size_t len = 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        snprintf(reason, rlen, "%s: cannot run %s%s",
                 tb_instr_source_name(source), argv0,
                 cg ? " (install valgrind: apt-get install valgrind)" : "");
        return -1;
    }
    if (tb_read_file(f->out, &text, &len, ferr, sizeof ferr) || !len) {
        free(text);
        text = NULL;
        if (!tb_read_file(f->err, &text, &len, ferr, sizeof ferr) && len) {
            char *nl = strchr(text, '\n');
            if (nl)
                *nl = '\0';
        }
        snprintf(reason, rlen, "%s: the counting process %s %d and said "
                               "nothing%s%.160s",
                 tb_instr_source_name(source),
                 WIFSIGNALED(status) ? "died of signal" : "exited with",
                 WIFSIGNALED(status) ? WTERMSIG(status)
                                     : WEXITSTATUS(status),
                 text && *text ? "; stderr: " : "", text ? text : "");
        free(text);
        return -1;
    }
    char *nl = strchr(text, '\n');
    if (nl)
        *nl = '\0';
    const bool ours = !strncmp(text, PROTO " ", sizeof PROTO);
    const char *body = ours ? text + sizeof PROTO : text;
    char impl[160];
    int rc = -1;
    if (ours && !strncmp(body, "error ", 6))
        snprintf(reason, rlen, "%s: %.200s", tb_instr_source_name(source),
                 body + 6);
    else if (!ours ||
             sscanf(body, "ok %127s %159s %15s", count, impl, isa) != 3)
        snprintf(reason, rlen, "%s: unexpected answer '%.120s'",
                 tb_instr_source_name(source), body);
    else
        rc = 0;
    free(text);
    return rc;
}

/* The callgrind output file's counts as instructions (Ir) or, with the
 * cache simulation, res->cache's events and geometry.  0, or -1 with
 * the reason. */
static int read_callgrind(const child_files *f, bool cache, double k,
                          tb_result *res, char *reason, size_t rlen)
{
    static const char *const ev[] = {"Ir", "D1mr", "D1mw", "DLmr", "DLmw"};
    char *text = NULL, ferr[256];
    size_t len = 0;
    double v[5];
    if (tb_read_file(f->cg, &text, &len, ferr, sizeof ferr)) {
        snprintf(reason, rlen, "callgrind: no output file: %.200s", ferr);
        return -1;
    }
    int prc = cache ? tb_instr_callgrind_events(text, ev, 5, v)
                    : tb_instr_callgrind_total(text, &v[0]);
    tb_cache_counts *cc = &res->cache;
    if (!prc && cache &&
        (tb_instr_callgrind_geometry(text, "D1", cc->d1, sizeof cc->d1) ||
         tb_instr_callgrind_geometry(text, "LL", cc->ll, sizeof cc->ll)))
        prc = TB_EPARSE;
    free(text);
    if (prc) {
        snprintf(reason, rlen, "callgrind: no %s in its output file",
                 cache ? "totals of Ir, D1mr, D1mw, DLmr, DLmw and the D1 "
                         "and LL geometry"
                       : "Ir total");
        return -1;
    }
    if (!cache) {
        res->instructions = v[0] / k;
        return 0;
    }
    cc->v[TB_CACHE_INSTRUCTIONS] = v[0] / k;
    cc->v[TB_CACHE_L1D_MISSES] = (v[1] + v[2]) / k;
    cc->v[TB_CACHE_LLC_MISSES] = (v[3] + v[4]) / k;
    cc->simulated = true;
    snprintf(reason, rlen, "simulated by valgrind (callgrind --cache-sim="
                           "yes: D1 and LL, no L2): cycles, IPC and dTLB "
                           "misses are not simulated");
    return 0;
}

/* The perf child's "c,i,l1d,llc,dtlb" totals into res->cache ("-": a
 * counter the PMU lacks, named in the reason).  0, or -1. */
static int read_perf_group(const char *count, double k, tb_result *res,
                           char *reason, size_t rlen)
{
    static const char *const names[] = {"cycles", "instructions",
                                        "L1D read misses", "LL read misses",
                                        "dTLB read misses"};
    tb_cache_counts *cc = &res->cache;
    const char *p = count;
    size_t o = 0;
    reason[0] = '\0';
    for (int i = 0; i < TB_CACHE_NEV; i++) {
        char *end = (char *)p;
        if (*p == '-') {
            end++;
            int w = snprintf(reason + o, rlen - o, "%s%s",
                             o ? ", " : "perf: no counter here for ",
                             names[i]);
            o += (size_t)w < rlen - o ? (size_t)w : rlen - o - 1;
        } else {
            double d = strtod(p, &end);
            if (end == p || !(d >= 0))
                break;
            cc->v[i] = d / k;
        }
        if (*end != (i + 1 < TB_CACHE_NEV ? ',' : '\0')) {
            snprintf(reason, rlen, "perf: unexpected counts '%.60s'",
                     count);
            return -1;
        }
        p = end + 1;
    }
    return 0;
}

/* Run `tbench __instr-count` for c with `source` (under valgrind for
 * callgrind) in a scratch folder, counting instructions or (cache) the
 * cache events; fill res on success, else reason. */
static int run_child(const tb_case *c, int source, bool cache,
                     const char *const *cfg_paths, int ncfg,
                     const char *backend, tb_result *res, char *reason,
                     size_t rlen)
{
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) {
        snprintf(reason, rlen, "cannot find the tbench executable "
                               "(/proc/self/exe): %s", strerror(errno));
        return -1;
    }
    self[sl] = '\0';
    child_files f;
    if (child_files_make(c, cache, &f, reason, rlen))
        return -1;
    const char *argv[32 + 64];
    child_argv(c, source, cache, self, &f, cfg_paths, ncfg, backend, argv);
    int status = 0, rc = -1;
    char count[128], isa[16];
    const double k = (double)c->measure.instructions_iters;
    if (child_run(c, source, argv, &f, &status, reason, rlen) ||
        child_answer(source, argv[0], status, &f, count, isa, reason, rlen))
        goto out;
    if (source == TB_INSTR_CALLGRIND) {
        if (read_callgrind(&f, cache, k, res, reason, rlen))
            goto out;
    } else if (cache) {
        if (read_perf_group(count, k, res, reason, rlen))
            goto out;
    } else {
        res->instructions = strtod(count, NULL) / k;
    }
    char *src = cache ? res->cache.source : res->instr_source;
    char *isa_to = cache ? res->cache.isa : res->instr_isa;
    snprintf(src, 16, "%s", tb_instr_source_name(source));
    snprintf(isa_to, 16, "%s", strcmp(isa, "-") ? isa : "");
    if (cache) {
        res->cache.ok = true;
        res->cache.iters = (uint64_t)k;
    } else {
        res->instr_ok = true;
        res->instr_iters = (uint64_t)k;
    }
    rc = 0;
out:
    child_files_remove(&f);
    return rc;
}

/* Count with measure source src (auto: perf, then callgrind), the
 * reason (why not, or a note) into reason. */
static void count_auto(const tb_case *c, int src, bool cache,
                       const char *const *cfg_paths, int ncfg,
                       const char *backend, tb_result *res, char *reason,
                       size_t rlen)
{
    char why[384] = "";
    reason[0] = '\0';
    if (src == TB_INSTR_PERF || src == TB_INSTR_AUTO) {
        if (run_child(c, TB_INSTR_PERF, cache, cfg_paths, ncfg, backend, res,
                      reason, rlen) == 0)
            return;
        snprintf(why, sizeof why, "%s", reason);
    }
    if ((src == TB_INSTR_CALLGRIND || src == TB_INSTR_AUTO) &&
        TB_SANITIZED) {
        snprintf(reason, rlen,
                 "%.190s%scallgrind: tbench was built with sanitizers "
                 "(%.40s), which valgrind cannot run", why,
                 why[0] ? "; " : "",
                 TB_SANITIZE);
        return;
    }
    if (src == TB_INSTR_CALLGRIND || src == TB_INSTR_AUTO) {
        char got[384];
        int rc = run_child(c, TB_INSTR_CALLGRIND, cache, cfg_paths, ncfg,
                           backend, res, got, sizeof got);
        /* counted: its note (the cache simulation's), after why perf
         * was not used (auto) */
        const char *tail = rc == 0 && !cache ? "" : got;
        snprintf(reason, rlen, "%.190s%s%.190s", why,
                 why[0] && tail[0] ? "; " : "", tail);
    }
}

void tb_instr_count(const tb_case *c, const char *const *cfg_paths,
                    int ncfg, const char *backend, tb_result *res)
{
    res->instr_requested = true;
    res->instr_ok = false;
    res->instructions = 0;
    res->instr_iters = 0;
    res->instr_source[0] = res->instr_isa[0] = '\0';
    count_auto(c, c->measure.instructions, false, cfg_paths, ncfg, backend,
               res, res->instr_reason, sizeof res->instr_reason);
}

void tb_instr_cache(const tb_case *c, const char *const *cfg_paths,
                    int ncfg, const char *backend, tb_result *res)
{
    tb_cache_counts *cc = &res->cache;
    memset(cc, 0, sizeof *cc);
    cc->requested = true;
    for (int i = 0; i < TB_CACHE_NEV; i++)
        cc->v[i] = NAN;
    count_auto(c, c->measure.cache, true, cfg_paths, ncfg, backend, res,
               cc->reason, sizeof cc->reason);
    if (!cc->ok)
        for (int i = 0; i < TB_CACHE_NEV; i++)
            cc->v[i] = NAN;
}
