/* Exec'd workers and their protocol: see xworker.h. */
#include "xworker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../base/error.h"
#include "../base/fdio.h"
#include "../base/fileio.h"
#include "config.h"
#include "env.h"
#include "plan.h"
#include "results.h"
#include "runner.h"
#include "timer.h"
#include "worker.h"
#include "tb_commit.h"
#include "tb_config.h"

#define XW_MAGIC UINT32_C(0x31777462) /* "btw1", as worker.c's protocol */
#define XW_MAX_PAYLOAD (1u << 20)
#define HELLO_TIMEOUT_S 15.0
#define LOAD_TIMEOUT_S 120.0
#define POLL_SLICE_MS 100

enum { K_HELLO = 1, K_LOAD, K_RUN, K_FINISH, K_OK, K_ERR, K_RES };

typedef struct {
    uint32_t magic, kind;
    int32_t a, b, c, d;
    uint64_t len; /* payload bytes that follow */
} xhdr;

/* RES payload: fixed-size fields only, the same in every build. */
typedef struct {
    int32_t status, pad;
    double median_ns, min_ns;
    uint64_t n_samples, iters_per_sample;
    char status_name[32];
    char message[512];
    char impl[256];
} xres;

/* ---- I/O ---------------------------------------------------------------- */

static int send_msg(int fd, uint32_t kind, int a, int b, int c,
                    const void *payload, size_t len)
{
    xhdr h = {.magic = XW_MAGIC, .kind = kind, .a = a, .b = b, .c = c,
              .len = len};
    if (tb_fd_send_all(fd, &h, sizeof h) ||
        (len && tb_fd_send_all(fd, payload, len)))
        return TB_EIO;
    return 0;
}

/* Receive a message; its payload (NUL-terminated, *payload freed by the
 * caller) when it has one.  1 ok, 0 end of file, TB_EIO (broken) or
 * TB_ENOMEM. */
static int recv_msg(int fd, xhdr *h, char **payload)
{
    *payload = NULL;
    int rc = tb_fd_recv_all(fd, h, sizeof *h);
    if (rc != 1)
        return rc;
    if (h->magic != XW_MAGIC || h->len > XW_MAX_PAYLOAD)
        return TB_EIO;
    char *p = malloc((size_t)h->len + 1);
    if (!p)
        return TB_ENOMEM;
    if (h->len && tb_fd_recv_all(fd, p, (size_t)h->len) != 1) {
        free(p);
        return TB_EIO;
    }
    p[h->len] = '\0';
    *payload = p;
    return 1;
}

static void build_name(char *buf, size_t len)
{
    snprintf(buf, len, "tbench %s (commit %s)", TB_VERSION, TB_GIT_COMMIT);
}

/* ---- the worker --------------------------------------------------------- */

int tb_xworker_hello(int fd)
{
    char b[256];
    build_name(b, sizeof b);
    return send_msg(fd, K_HELLO, TB_XW_PROTOCOL, 0, 0, b, strlen(b));
}

typedef struct {
    tb_config cfg;
    bool loaded;
    tb_plan plan;
    tb_result *res; /* one per plan case */
    int *done;      /* rounds run per case */
    tb_runner *runner;
} served;

static void served_free(served *s)
{
    for (int i = 0; s->res && i < s->plan.n; i++)
        tb_result_free(&s->res[i]);
    free(s->res);
    free(s->done);
    s->res = NULL;
    s->done = NULL;
    tb_plan_free(&s->plan);
    if (s->loaded)
        tb_config_free(&s->cfg);
    s->loaded = false;
}

static int reply_err(int fd, const char *msg)
{
    return send_msg(fd, K_ERR, 0, 0, 0, msg, strlen(msg));
}

static int serve_load(int fd, served *s, const char *path)
{
    char err[1024];
    served_free(s);
    memset(&s->plan, 0, sizeof s->plan);
    if (tb_config_load(path, &s->cfg, err, sizeof err))
        return reply_err(fd, err);
    s->loaded = true;
    tb_plan_opts o = {0};
    if (tb_plan_build(&s->cfg, 1, &o, &s->plan, err, sizeof err))
        return reply_err(fd, err);
    s->res = calloc((size_t)s->plan.n + 1, sizeof *s->res);
    s->done = calloc((size_t)s->plan.n + 1, sizeof *s->done);
    if (!s->res || !s->done)
        return reply_err(fd, "out of memory");
    return send_msg(fd, K_OK, s->plan.n, 0, 0, NULL, 0);
}

static void pin_to(int cpu)
{
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set); /* best effort */
}

static int serve_run(int fd, served *s, const xhdr *h, const char *id)
{
    xres out;
    memset(&out, 0, sizeof out);
    int i = 0;
    while (i < s->plan.n && strcmp(s->plan.cases[i].id, id))
        i++;
    if (i == s->plan.n || !s->res) {
        out.status = TB_STATUS_SKIPPED;
        snprintf(out.status_name, sizeof out.status_name, "skipped");
        snprintf(out.message, sizeof out.message,
                 "this build's plan of the config has no case '%.400s'", id);
        return send_msg(fd, K_RES, 0, 0, 0, &out, sizeof out);
    }
    int rc;
    if (!s->runner && (rc = tb_runner_create(&s->runner, NULL)))
        return rc;
    pin_to(h->c);
    const tb_case *c = &s->plan.cases[i];
    tb_result *r = &s->res[i];
    int blocks = h->b < 1 ? 1 : h->b > TB_CFG_MAX_ROUNDS ? TB_CFG_MAX_ROUNDS
                                                          : h->b;
    int round = s->done[i];
    size_t n0 = r->n_samples;
    if (round < blocks) {
        tb_runner_round(s->runner, c, round, blocks, r);
        s->done[i]++;
    } else if (r->status == TB_STATUS_OK) {
        r->status = TB_STATUS_ERROR;
        snprintf(r->message, sizeof r->message,
                 "more blocks asked than announced (%d)", blocks);
    }
    out.status = (int32_t)r->status;
    snprintf(out.status_name, sizeof out.status_name, "%s",
             tb_status_name(r->status));
    snprintf(out.message, sizeof out.message, "%s", r->message);
    snprintf(out.impl, sizeof out.impl, "%s", r->impl ? r->impl : "");
    if (r->status == TB_STATUS_OK && r->n_samples > n0 && round < blocks) {
        out.median_ns = r->round_medians_ns[round];
        out.min_ns = r->samples_ns[n0];
        for (size_t k = n0 + 1; k < r->n_samples; k++)
            if (r->samples_ns[k] < out.min_ns)
                out.min_ns = r->samples_ns[k];
        out.n_samples = r->n_samples - n0;
        out.iters_per_sample = r->iters_per_sample;
    }
    if ((rc = send_msg(fd, K_RES, 0, 0, 0, &out, sizeof out)))
        return rc;
    tb_runner_fault_sent(s->runner, c);
    return 0;
}

static int serve_finish(int fd, served *s, const char *dir)
{
    char err[1024];
    if (!s->loaded)
        return reply_err(fd, "FINISH before LOAD");
    cJSON *doc = tb_results_new(tb_env_capture(), &s->cfg, 1,
                                tb_timer_overhead_ns(20001));
    if (!doc || tb_results_set_isolation(doc, "process"))
        goto oom;
    for (int i = 0; i < s->plan.n; i++) {
        if (!s->done[i])
            continue;
        tb_runner_summarize(&s->plan.cases[i], &s->res[i]);
        if (tb_results_add_case(doc, &s->plan.cases[i], &s->res[i]))
            goto oom;
    }
    if (tb_results_finish(doc, true))
        goto oom;
    if (tb_mkdir_p(dir, err, sizeof err) ||
        tb_results_write(doc, dir, err, sizeof err)) {
        cJSON_Delete(doc);
        return reply_err(fd, err);
    }
    cJSON_Delete(doc);
    return send_msg(fd, K_OK, 0, 0, 0, NULL, 0);
oom:
    cJSON_Delete(doc);
    return reply_err(fd, "out of memory");
}

/* The default action for the stop signals (an ignored one stays ignored
 * across exec), so that one sent to a worker alone kills it: its block
 * is `crashed` with that signal, never a silent early end. */
void tb_xworker_default_signals(void)
{
    tb_workers_catch_stop(SIG_DFL);
}

int tb_xworker_serve(int fd)
{
    served s;
    memset(&s, 0, sizeof s);
    if (tb_xworker_hello(fd))
        return 1;
    int rc = 0;
    for (;;) {
        xhdr h;
        char *p;
        int k = recv_msg(fd, &h, &p);
        if (k != 1) {
            rc = k == 0 ? 0 : 1;
            break;
        }
        int sent;
        switch (h.kind) {
        case K_LOAD: sent = serve_load(fd, &s, p); break;
        case K_RUN: sent = serve_run(fd, &s, &h, p); break;
        case K_FINISH: sent = serve_finish(fd, &s, p); break;
        default: sent = TB_EINVAL; break;
        }
        free(p);
        if (sent) {
            rc = 1;
            break;
        }
    }
    tb_runner_destroy(s.runner);
    served_free(&s);
    return rc;
}

/* ---- the driver --------------------------------------------------------- */

struct tb_xw {
    pid_t pid;
    int fd;
    char build[256];
};

const char *tb_xw_build(const tb_xw *w)
{
    return w->build;
}

int tb_xw_alive(const tb_xw *w)
{
    return w && w->pid > 0;
}


static void reap(tb_xw *w, bool kill_it, int *st)
{
    *st = 0;
    if (w->pid <= 0)
        return;
    if (kill_it) { /* its group too: what the build forked (worker.c) */
        kill(-w->pid, SIGKILL);
        kill(w->pid, SIGKILL);
    }
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    while (waitpid(w->pid, st, 0) < 0 && errno == EINTR)
        ;
    kill(-w->pid, SIGKILL); /* what a worker that exited left behind */
    w->pid = 0;
}

/* Wait for a message to read: 1 ready (or the worker ended: the read
 * reports it), 0 timeout, -1 *stop was set
 * (stop may be NULL). */
static int wait_readable(const tb_xw *w, double timeout_s,
                         volatile sig_atomic_t *stop)
{
    double deadline = (double)tb_now_ns() * 1e-9 + timeout_s;
    for (;;) {
        if (stop && *stop)
            return -1;
        struct pollfd p = {.fd = w->fd, .events = POLLIN};
        int k = poll(&p, 1, POLL_SLICE_MS);
        if (k > 0 || (k < 0 && errno != EINTR))
            return 1;
        if (tb_child_ended(w->pid)) {
            /* a child it forked may hold the socket: its group goes, the
             * read then meets end of file, and reap() still finds the
             * worker's own status (worker.c) */
            kill(-w->pid, SIGKILL);
            return 1;
        }
        if ((double)tb_now_ns() * 1e-9 >= deadline)
            return 0;
    }
}

static void describe_exit(int st, char *buf, size_t len)
{
    if (WIFEXITED(st)) {
        snprintf(buf, len, "it exited with status %d", WEXITSTATUS(st));
    } else if (WIFSIGNALED(st)) {
        const char *abbr = sigabbrev_np(WTERMSIG(st));
        const char *what = sigdescr_np(WTERMSIG(st));
        if (abbr)
            snprintf(buf, len, "it was killed by SIG%s (%s)", abbr,
                     what ? what : "unknown signal");
        else
            snprintf(buf, len, "it was killed by signal %d", WTERMSIG(st));
    } else
        snprintf(buf, len, "it was lost");
}

int tb_xw_start(tb_xw **out, const char *exe, char *err, size_t errlen)
{
    *out = NULL;
    struct stat sb;
    if (stat(exe, &sb) || !S_ISREG(sb.st_mode) || access(exe, X_OK)) {
        snprintf(err, errlen, "%s: not an executable file", exe);
        return TB_EINVAL;
    }
    tb_xw *w = calloc(1, sizeof *w);
    if (!w)
        return TB_ENOMEM;
    w->fd = -1;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
        free(w);
        snprintf(err, errlen, "socketpair: %s", strerror(errno));
        return TB_EIO;
    }
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        free(w);
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return TB_EIO;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(0);
        /* A process group of its own, as run's workers (worker.h): a
         * terminal's Ctrl-C reaches the driver alone, which kills the
         * workers when it stops; a signal sent to the worker alone is
         * its block's crash.  SIGTTOU ignored: in a background group a
         * write to the terminal under `stty tostop` would stop it. */
        setpgid(0, 0);
        signal(SIGTTOU, SIG_IGN);
        signal(SIGTTIN, SIG_IGN);
        /* The child's end survives exec; its stdout is the driver's
         * stderr, so nothing it prints can mix into the driver's table. */
        int fl = fcntl(sv[1], F_GETFD);
        fcntl(sv[1], F_SETFD, fl & ~FD_CLOEXEC);
        dup2(STDERR_FILENO, STDOUT_FILENO);
        char fdarg[16], proto[16];
        snprintf(fdarg, sizeof fdarg, "%d", sv[1]);
        snprintf(proto, sizeof proto, "%d", TB_XW_PROTOCOL);
        char *argv[] = {(char *)exe, "worker", "--protocol", proto, "--fd",
                        fdarg, NULL};
        execv(exe, argv);
        _exit(127);
    }
    close(sv[1]);
    w->pid = pid;
    w->fd = sv[0];

    xhdr h;
    char *p = NULL;
    int st, k = 0;
    char why[160];
    if (wait_readable(w, HELLO_TIMEOUT_S, NULL) != 1) {
        reap(w, true, &st);
        snprintf(err, errlen,
                 "%s: refused: no worker hello within %g s (not a tbench "
                 "that speaks worker protocol %d)",
                 exe, HELLO_TIMEOUT_S, TB_XW_PROTOCOL);
        free(w);
        return TB_EINVAL;
    }
    k = recv_msg(w->fd, &h, &p);
    if (k != 1 || h.kind != K_HELLO) {
        reap(w, true, &st);
        describe_exit(st, why, sizeof why);
        snprintf(err, errlen,
                 "%s: refused: not a tbench that speaks worker protocol %d "
                 "(%s)",
                 exe, TB_XW_PROTOCOL,
                 k == 1 ? "its first message is not a hello"
                 : k == 0 ? why : "it wrote no valid hello");
        free(p);
        free(w);
        return TB_EINVAL;
    }
    snprintf(w->build, sizeof w->build, "%s", p);
    free(p);
    if (h.a != TB_XW_PROTOCOL) {
        reap(w, true, &st);
        snprintf(err, errlen,
                 "%s: refused: it speaks worker protocol %d, this tbench "
                 "speaks %d (%.100s)",
                 exe, (int)h.a, TB_XW_PROTOCOL, w->build);
        free(w);
        return TB_EINVAL;
    }
    *out = w;
    return 0;
}

/* Wait for an OK or ERR reply. */
static int wait_ok(tb_xw *w, double timeout_s, const char *what, char *err,
                   size_t errlen)
{
    xhdr h;
    char *p = NULL;
    int st;
    if (wait_readable(w, timeout_s, NULL) != 1) {
        reap(w, true, &st);
        snprintf(err, errlen, "%s: no answer within %g s", what, timeout_s);
        return TB_EIO;
    }
    int k = recv_msg(w->fd, &h, &p);
    if (k != 1 || (h.kind != K_OK && h.kind != K_ERR)) {
        free(p);
        reap(w, true, &st);
        char why[160];
        describe_exit(st, why, sizeof why);
        snprintf(err, errlen, "%s: the worker stopped answering (%s)", what,
                 why);
        return TB_EIO;
    }
    int rc = 0;
    if (h.kind == K_ERR) {
        snprintf(err, errlen, "%s", p);
        rc = TB_EINVAL;
    }
    free(p);
    return rc;
}

int tb_xw_load(tb_xw *w, const char *config, char *err, size_t errlen)
{
    if (send_msg(w->fd, K_LOAD, 0, 0, 0, config, strlen(config))) {
        snprintf(err, errlen, "the worker is gone");
        return TB_EIO;
    }
    return wait_ok(w, LOAD_TIMEOUT_S, "loading the config", err, errlen);
}

int tb_xw_send_run(tb_xw *w, const char *id, int block, int blocks, int cpu)
{
    if (!w || w->pid <= 0 ||
        send_msg(w->fd, K_RUN, block, blocks, cpu, id, strlen(id)))
        return TB_EIO;
    return 0;
}

int tb_xw_recv_run(tb_xw *w, double timeout_s, volatile sig_atomic_t *stop,
                   tb_xw_block *out)
{
    memset(out, 0, sizeof *out);
    int st;
    if (!w || w->pid <= 0) {
        snprintf(out->status_name, sizeof out->status_name, "crashed");
        snprintf(out->message, sizeof out->message, "the worker is gone");
        return TB_EIO;
    }
    int k = wait_readable(w, timeout_s, stop);
    if (k < 0) {
        reap(w, true, &st);
        snprintf(out->message, sizeof out->message,
                 "stopped before the block ended; worker killed");
        return TB_EIO;
    }
    if (k == 0) {
        reap(w, true, &st);
        snprintf(out->status_name, sizeof out->status_name, "timeout");
        snprintf(out->message, sizeof out->message,
                 "no result after %g s (measure.timeout_s); worker killed",
                 timeout_s);
        return TB_EIO;
    }
    xhdr h;
    char *p = NULL;
    k = recv_msg(w->fd, &h, &p);
    if (k != 1 || h.kind != K_RES || h.len != sizeof(xres)) {
        free(p);
        reap(w, true, &st);
        char why[160];
        describe_exit(st, why, sizeof why);
        snprintf(out->status_name, sizeof out->status_name, "crashed");
        snprintf(out->message, sizeof out->message,
                 "the worker died during the block (%s)", why);
        return TB_EIO;
    }
    xres r;
    memcpy(&r, p, sizeof r);
    free(p);
    r.status_name[sizeof r.status_name - 1] = '\0';
    r.message[sizeof r.message - 1] = '\0';
    r.impl[sizeof r.impl - 1] = '\0';
    out->status = r.status;
    memcpy(out->status_name, r.status_name, sizeof out->status_name);
    memcpy(out->message, r.message, sizeof out->message);
    memcpy(out->impl, r.impl, sizeof out->impl);
    out->median_ns = r.median_ns;
    out->min_ns = r.min_ns;
    out->n_samples = r.n_samples;
    out->iters_per_sample = r.iters_per_sample;
    return 0;
}

int tb_xw_finish(tb_xw *w, const char *dir, char *err, size_t errlen)
{
    if (w->pid <= 0 || send_msg(w->fd, K_FINISH, 0, 0, 0, dir, strlen(dir))) {
        snprintf(err, errlen, "the worker is gone");
        return TB_EIO;
    }
    return wait_ok(w, LOAD_TIMEOUT_S, "writing results", err, errlen);
}

void tb_xw_stop(tb_xw *w)
{
    if (!w)
        return;
    if (w->pid > 0) {
        close(w->fd); /* end of file: the worker exits */
        w->fd = -1;
        int st;
        for (int i = 0; i < 50; i++) {
            pid_t k = waitpid(w->pid, &st, WNOHANG);
            if (k == w->pid || (k < 0 && errno != EINTR)) {
                if (k == w->pid) /* what it forked and left */
                    kill(-w->pid, SIGKILL);
                w->pid = 0;
                break;
            }
            usleep(100000);
        }
        if (w->pid > 0)
            reap(w, true, &st);
    }
    free(w);
}
