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

int tb_instr_child(const tb_case *c, int source, uint64_t k, FILE *out)
{
    int fd = -1;
    if (source == TB_INSTR_PERF) {
        struct perf_event_attr a;
        memset(&a, 0, sizeof a);
        a.size = sizeof a;
        a.type = PERF_TYPE_HARDWARE;
        a.config = PERF_COUNT_HW_INSTRUCTIONS;
        a.disabled = 1;
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
        fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
        if (fd < 0) {
            int e = errno;
            fprintf(out, PROTO " error perf_event_open(PERF_COUNT_HW_"
                           "INSTRUCTIONS, user only): %s (kernel.perf_event_"
                           "paranoid = %d)%s\n",
                    strerror(e), paranoid(),
                    e == ENOENT ? "; no hardware counter here (a VM "
                                  "without a virtual PMU?)" : "");
            return -1;
        }
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
        return -1;
    }
    tb_result res;
    memset(&res, 0, sizeof res);
    rc = source == TB_INSTR_PERF
             ? tb_runner_count(r, c, k, perf_on, perf_off, &fd, &res)
             : tb_runner_count(r, c, k, cg_on, cg_off, NULL, &res);
    if (rc) {
        fprintf(out, PROTO " error %s%s%s\n", tb_status_name(res.status),
                res.message[0] ? ": " : "", res.message);
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
    return rc;
}

/* ---- parent side --------------------------------------------------- */

/* The counting process's scratch folder and files. */
typedef struct child_files {
    char dir[4096];
    char out[4200], err[4200], cg[4200], cgopt[4300], iters[32];
} child_files;

/* A new mkdtemp folder under $TMPDIR (else /tmp) and the names of the
 * files in it.  0, or -1 with the reason. */
static int child_files_make(const tb_case *c, child_files *f, char *reason,
                            size_t rlen)
{
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
static void child_argv(const tb_case *c, int source, const char *self,
                       const child_files *f, const char *const *cfg_paths,
                       int ncfg, const char *backend, const char **argv)
{
    int n = 0;
    if (source == TB_INSTR_CALLGRIND) {
        argv[n++] = "valgrind";
        argv[n++] = "--tool=callgrind";
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
 * AVX-512; a lower cap the user asked for stays).  Waits within the
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
                                     strcmp(h.isa_cap, "avx512") == 0));
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
             sscanf(body, "ok %31s %159s %15s", count, impl, isa) != 3)
        snprintf(reason, rlen, "%s: unexpected answer '%.120s'",
                 tb_instr_source_name(source), body);
    else
        rc = 0;
    free(text);
    return rc;
}

/* Run `tbench __instr-count` for c with `source` (under valgrind for
 * callgrind) in a scratch folder; fill res on success, else reason. */
static int run_child(const tb_case *c, int source,
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
    if (child_files_make(c, &f, reason, rlen))
        return -1;
    const char *argv[32 + 64];
    child_argv(c, source, self, &f, cfg_paths, ncfg, backend, argv);
    int status = 0, rc = -1;
    char count[32], isa[16];
    if (child_run(c, source, argv, &f, &status, reason, rlen) ||
        child_answer(source, argv[0], status, &f, count, isa, reason, rlen))
        goto out;
    double total;
    if (source == TB_INSTR_CALLGRIND) {
        char *text = NULL, ferr[256];
        size_t len = 0;
        if (tb_read_file(f.cg, &text, &len, ferr, sizeof ferr)) {
            snprintf(reason, rlen, "callgrind: no output file: %.200s", ferr);
            goto out;
        }
        int prc = tb_instr_callgrind_total(text, &total);
        free(text);
        if (prc) {
            snprintf(reason, rlen, "callgrind: no Ir total in its output "
                                   "file");
            goto out;
        }
    } else {
        total = strtod(count, NULL);
    }
    res->instr_ok = true;
    res->instructions = total / (double)c->measure.instructions_iters;
    res->instr_iters = (uint64_t)c->measure.instructions_iters;
    snprintf(res->instr_source, sizeof res->instr_source, "%s",
             tb_instr_source_name(source));
    snprintf(res->instr_isa, sizeof res->instr_isa, "%s",
             strcmp(isa, "-") ? isa : "");
    rc = 0;
out:
    child_files_remove(&f);
    return rc;
}

void tb_instr_count(const tb_case *c, const char *const *cfg_paths,
                    int ncfg, const char *backend, tb_result *res)
{
    res->instr_requested = true;
    res->instr_ok = false;
    res->instructions = 0;
    res->instr_iters = 0;
    res->instr_source[0] = res->instr_isa[0] = res->instr_reason[0] = '\0';
    int src = c->measure.instructions;
    char why[256] = "";
    if (src == TB_INSTR_PERF || src == TB_INSTR_AUTO) {
        if (run_child(c, TB_INSTR_PERF, cfg_paths, ncfg, backend, res,
                      res->instr_reason, sizeof res->instr_reason) == 0)
            return;
        snprintf(why, sizeof why, "%s", res->instr_reason);
    }
    if ((src == TB_INSTR_CALLGRIND || src == TB_INSTR_AUTO) &&
        strcmp(TB_SANITIZE, "none") != 0 && TB_SANITIZE[0] != '\0') {
        snprintf(res->instr_reason, sizeof res->instr_reason,
                 "%.120s%scallgrind: tbench was built with sanitizers "
                 "(%.40s), which valgrind cannot run", why,
                 why[0] ? "; " : "",
                 TB_SANITIZE);
        return;
    }
    if (src == TB_INSTR_CALLGRIND || src == TB_INSTR_AUTO) {
        if (run_child(c, TB_INSTR_CALLGRIND, cfg_paths, ncfg, backend, res,
                      res->instr_reason, sizeof res->instr_reason) == 0) {
            /* auto: say why perf was not used */
            snprintf(res->instr_reason, sizeof res->instr_reason, "%s", why);
            return;
        }
        if (why[0]) {
            char both[256];
            snprintf(both, sizeof both, "%.120s; %.120s", why,
                     res->instr_reason);
            snprintf(res->instr_reason, sizeof res->instr_reason, "%s",
                     both);
        }
    }
}
