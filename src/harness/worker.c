/* Isolated workers: see worker.h for the design. */
#include "worker.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../base/error.h"
#include "../base/fdio.h"
#include "timer.h"

#define WIRE_MAGIC UINT32_C(0x31777462) /* "btw1" */
/* After a stop signal the worker gets this long to finish the sample it
 * is in and answer before it is killed. */
#define STOP_GRACE_S 5.0
/* The parent polls the worker's socket in slices this long, so a signal
 * that arrives just before poll() is seen within a slice. */
#define POLL_SLICE_MS 100

typedef struct {
    uint32_t magic;
    int32_t index, round, rounds;
    uint64_t n_samples; /* samples after the tb_result that follows */
    int32_t has_result; /* a tb_result follows (requests: round > 0) */
    int32_t has_device; /* n_samples device times follow the samples */
} wire_hdr;

/* The memory the parent shares with its workers (mmap). */
typedef struct shared {
    tb_runner_watch_area watch; /* what the worker is doing */
    /* The parent's word: end the case at its next sample.  The worker's
     * runner polls it as its stop flag; no signal carries it, so a
     * signal that reaches the worker alone is never taken for it. */
    volatile sig_atomic_t stop;
} shared;

struct tb_workers {
    const tb_plan *plan;
    bool isolate;
    volatile sig_atomic_t *stop;
    tb_runner *local; /* in-process mode */
    pid_t pid;        /* the live worker, or 0 */
    pid_t parent;
    int fd;      /* the parent's end of the socket */
    shared *shm; /* shared with the workers */
    /* A worker that died between cases, for tb_workers_note ("": none);
     * note_out: what the last call handed out. */
    char note[256], note_out[256];
};

/* ---- I/O ---------------------------------------------------------------- */

/* Send a header, a result by value (if res) and its samples.  0, or
 * TB_EIO (the peer is gone). */
static int send_msg(int fd, int index, int round, int rounds,
                    const tb_result *res)
{
    wire_hdr h = {
        .magic = WIRE_MAGIC,
        .index = index,
        .round = round,
        .rounds = rounds,
        .n_samples = res && res->samples_ns ? res->n_samples : 0,
        .has_result = res != NULL,
        .has_device = res && res->samples_ns && res->device_ns,
    };
    if (tb_fd_send_all(fd, &h, sizeof h))
        return TB_EIO;
    if (res && (tb_fd_send_all(fd, res, sizeof *res) ||
                tb_fd_send_all(fd, res->samples_ns,
                         (size_t)h.n_samples * sizeof(double))))
        return TB_EIO;
    if (h.has_device && tb_fd_send_all(fd, res->device_ns,
                                 (size_t)h.n_samples * sizeof(double)))
        return TB_EIO;
    return 0;
}

/* Receive the result part of a message whose header is h into *res:
 * the struct, then the samples into a fresh array of at least cap
 * entries (the runner fills up to max_samples).  1 ok; TB_EIO (the
 * message is cut or malformed) or TB_ENOMEM. */
static int recv_result(int fd, const wire_hdr *h, size_t cap,
                       tb_result *res)
{
    memset(res, 0, sizeof *res);
    if (!h->has_result)
        return 1;
    if (tb_fd_recv_all(fd, res, sizeof *res) != 1)
        return TB_EIO;
    res->samples_ns = NULL;
    res->device_ns = NULL;
    if (h->n_samples > SIZE_MAX / sizeof(double) / 2)
        return TB_EIO;
    size_t n = (size_t)h->n_samples;
    if (n > res->n_samples)
        return TB_EIO;
    if (n || res->n_samples) {
        size_t want = cap > n ? cap : n;
        res->samples_ns = malloc((want ? want : 1) * sizeof(double));
        if (!res->samples_ns)
            return TB_ENOMEM;
        if (tb_fd_recv_all(fd, res->samples_ns, n * sizeof(double)) != 1) {
            free(res->samples_ns);
            res->samples_ns = NULL;
            return TB_EIO;
        }
        if (h->has_device) {
            res->device_ns = malloc((want ? want : 1) * sizeof(double));
            if (!res->device_ns ||
                tb_fd_recv_all(fd, res->device_ns, n * sizeof(double)) != 1) {
                int rc = res->device_ns ? TB_EIO : TB_ENOMEM;
                free(res->device_ns);
                free(res->samples_ns);
                res->device_ns = res->samples_ns = NULL;
                return rc;
            }
        }
    }
    if (!res->device_ns)
        res->device_timed = false;
    /* The name was copied into impl_buf by the worker (worker.h). */
    if (res->impl)
        res->impl = res->impl_buf;
    return 1;
}

/* ---- the worker process ------------------------------------------------- */

void tb_workers_catch_stop(void (*fn)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* The worker leaves tbench's process group, so that what a terminal
 * sends the whole foreground group (Ctrl-C: SIGINT; a hang-up) reaches
 * tbench alone, which passes the stop on through shared->stop (one that
 * lands between the fork and setpgid runs the handler inherited from
 * tbench, which only sets the child's copy of tbench's flag).  The stop
 * signals get their default action back: a signal sent to the worker
 * alone kills it, and its case is `crashed` with that signal.  It
 * ignores SIGTTOU and SIGTTIN: in a background group, a write to the
 * terminal under `stty tostop` would stop it. */
static void leave_group(void)
{
    setpgid(0, 0);
    tb_workers_catch_stop(SIG_DFL);
    signal(SIGTTOU, SIG_IGN);
    signal(SIGTTIN, SIG_IGN);
}

/* The worker's life: serve requests until the socket closes.  Never
 * returns; _exit() skips the parent's atexit handlers and stdio buffers,
 * which belong to the parent. */
static void worker_main(tb_workers *w, int fd)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != w->parent) /* the parent died before prctl */
        _exit(0);
    leave_group();

    tb_runner *r = NULL;
    if (tb_runner_create(&r, &w->shm->stop))
        _exit(125);
    tb_runner_watch(r, &w->shm->watch);
    for (;;) {
        wire_hdr h;
        tb_result res;
        int rc = tb_fd_recv_all(fd, &h, sizeof h);
        if (rc != 1 || h.magic != WIRE_MAGIC || h.index < 0 ||
            h.index >= w->plan->n)
            break;
        const tb_case *c = &w->plan->cases[h.index];
        if (recv_result(fd, &h, (size_t)c->measure.max_samples, &res) != 1)
            break;
        tb_runner_round(r, c, h.round, h.rounds, &res);
        if (res.impl && res.impl != res.impl_buf) {
            snprintf(res.impl_buf, sizeof res.impl_buf, "%s", res.impl);
            res.impl = res.impl_buf;
        }
        rc = send_msg(fd, h.index, h.round, h.rounds, &res);
        tb_result_free(&res);
        if (rc)
            break;
        tb_runner_fault_sent(r, c);
    }
    tb_runner_destroy(r);
    _exit(0);
}

/* ---- the parent --------------------------------------------------------- */

static int spawn(tb_workers *w)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
        return TB_EIO;
    w->shm->watch.phase = TB_PHASE_IDLE;
    w->shm->watch.impl[0] = '\0';
    w->shm->stop = 0;
    fflush(NULL); /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return TB_EIO;
    }
    if (pid == 0) {
        close(sv[0]);
        worker_main(w, sv[1]);
    }
    close(sv[1]);
    /* The worker's own group (leave_group), made here too so that a
     * kill of the group right after the fork reaches it. */
    setpgid(pid, pid);
    w->pid = pid;
    w->fd = sv[0];
    return 0;
}

/* Kill (if asked) and reap the worker; its wait status in *st.  Its
 * process group goes too: a child that a kernel forked (a library's
 * helper) dies with it instead of outliving tbench.  The group is
 * killed before the worker is reaped, while the worker (or its zombie)
 * keeps the group's id from being reused. */
static void reap(tb_workers *w, bool kill_it, int *st)
{
    if (kill_it) {
        kill(-w->pid, SIGKILL);
        kill(w->pid, SIGKILL); /* in case it is not its group's leader */
    }
    close(w->fd);
    w->fd = -1;
    *st = 0;
    while (waitpid(w->pid, st, 0) < 0 && errno == EINTR)
        ;
    kill(-w->pid, SIGKILL); /* what a worker that exited left behind */
    w->pid = 0;
}

static double now_s(void)
{
    return (double)tb_now_ns() * 1e-9;
}

typedef enum { WAIT_READY, WAIT_DIED, WAIT_TIMEOUT, WAIT_STOPPED } wait_result;

/* Wait until the worker's answer (or end of file) can be read, the
 * worker dies, the case's time limit passes, or a stop signal's grace
 * period ends.  A dead worker is seen by itself: its end of file may
 * never come while a child it forked holds the socket open. */
static wait_result wait_reply(tb_workers *w, double timeout_s)
{
    double deadline = now_s() + timeout_s, stop_deadline = 0;
    for (;;) {
        if (w->stop && *w->stop && stop_deadline == 0) {
            w->shm->stop = 1;
            stop_deadline = now_s() + STOP_GRACE_S;
        }
        struct pollfd p = {.fd = w->fd, .events = POLLIN};
        int k = poll(&p, 1, POLL_SLICE_MS);
        if (k > 0)
            return WAIT_READY;
        if (k < 0 && errno != EINTR)
            return WAIT_READY; /* let the read report it */
        if (tb_child_ended(w->pid))
            return WAIT_DIED;
        double t = now_s();
        if (t >= deadline)
            return WAIT_TIMEOUT;
        if (stop_deadline != 0 && t >= stop_deadline)
            return WAIT_STOPPED;
    }
}

/* What the wait status st says became of a worker: "killed by SIGTERM
 * (Terminated)", "exited with status 3" or "lost". */
static void describe_death(int st, char *buf, size_t len)
{
    if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        const char *abbr = sigabbrev_np(sig), *what = sigdescr_np(sig);
        snprintf(buf, len, "killed by SIG%s (%s)", abbr ? abbr : "?",
                 what ? what : "unknown signal");
    } else if (WIFEXITED(st)) {
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
    } else {
        snprintf(buf, len, "lost");
    }
}

/* res becomes `crashed` with what the wait status st says. */
static void set_crashed(tb_result *res, int st, tb_phase ph)
{
    char how[128];
    describe_death(st, how, sizeof how);
    res->status = TB_STATUS_CRASHED;
    snprintf(res->message, sizeof res->message, "worker %s during %s", how,
             tb_phase_name(ph));
}

/* The worker died before it started a case (wait status st): no case
 * lost anything, a fresh worker takes the request; w->note says so. */
static void note_lost(tb_workers *w, int st)
{
    char how[128];
    describe_death(st, how, sizeof how);
    snprintf(w->note, sizeof w->note,
             "the worker process %s%s between cases; a fresh one took "
             "over and no case was affected",
             strncmp(how, "exited", 6) ? "was " : "", how);
}

/* Did the worker die of a stop signal that tbench got too (`pkill
 * tbench` signals both by pid)?  Then the run is being stopped, not the
 * case crashing: the case is left unfinished, as one whose worker is
 * killed after the grace period.  When tbench was signalled first, its
 * handler has run before it can see the worker gone; a worker killed
 * alone an instant before tbench is signalled is recorded `crashed`,
 * which it was. */
static bool stopped_too(const tb_workers *w, int st)
{
    if (!w->stop || !*w->stop || !WIFSIGNALED(st))
        return false;
    int sig = WTERMSIG(st);
    return sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
}

int tb_workers_create(tb_workers **out, const tb_plan *plan, bool isolate,
                      volatile sig_atomic_t *stop)
{
    tb_workers *w = calloc(1, sizeof *w);
    if (!w)
        return TB_ENOMEM;
    w->plan = plan;
    w->isolate = isolate;
    w->stop = stop;
    w->fd = -1;
    w->parent = getpid();
    if (!isolate) {
        int rc = tb_runner_create(&w->local, stop);
        if (rc) {
            free(w);
            return rc;
        }
        *out = w;
        return 0;
    }
    void *page = mmap(NULL, sizeof *w->shm, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
        free(w);
        return TB_ENOMEM;
    }
    w->shm = page;
    *out = w;
    return 0;
}

void tb_workers_destroy(tb_workers *w)
{
    if (!w)
        return;
    if (w->pid) { /* end of file on its socket: it exits */
        int st;
        reap(w, false, &st);
    }
    if (w->shm)
        munmap(w->shm, sizeof *w->shm);
    tb_runner_destroy(w->local);
    free(w);
}

const char *tb_workers_mode(const tb_workers *w)
{
    return w->isolate ? "process" : "none";
}

const char *tb_workers_note(tb_workers *w)
{
    if (!w->note[0])
        return NULL;
    memcpy(w->note_out, w->note, sizeof w->note_out);
    w->note[0] = '\0';
    return w->note_out;
}

/* Send case i's request, starting a worker if there is none; one found
 * dead (it died between cases) is replaced once.  0, or TB_EIO with the
 * case an error in res. */
static int send_request(tb_workers *w, int i, int round, int rounds,
                        tb_result *res)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!w->pid && spawn(w)) {
            res->status = TB_STATUS_ERROR;
            snprintf(res->message, sizeof res->message,
                     "cannot start a worker process: %s", strerror(errno));
            return TB_EIO;
        }
        if (!send_msg(w->fd, i, round, rounds, round ? res : NULL))
            return 0;
        int st;
        reap(w, true, &st);
        note_lost(w, st);
    }
    res->status = TB_STATUS_ERROR;
    snprintf(res->message, sizeof res->message,
             "cannot send the case to a worker process");
    return TB_EIO;
}

typedef enum {
    REPLY_OK,      /* res holds the round's result */
    REPLY_TIMEOUT, /* res is `timeout`; the worker was killed */
    REPLY_STOPPED, /* killed after the stop's grace period */
    REPLY_DIED,    /* the worker died (or spoke nonsense): reaped, its
                    * wait status in *st, its phase in *ph */
} reply_result;

/* Wait for the worker's reply to case i and read it into res. */
static reply_result get_reply(tb_workers *w, const tb_case *c, int i,
                              tb_result *res, int *st, tb_phase *ph)
{
    wait_result wr = wait_reply(w, c->measure.timeout_s);
    *ph = (tb_phase)w->shm->watch.phase;
    /* The kernel that was running, for a crash or a timeout. */
    if (w->shm->watch.impl[0]) {
        memcpy(res->impl_buf, w->shm->watch.impl, sizeof res->impl_buf);
        res->impl_buf[sizeof res->impl_buf - 1] = '\0';
        res->impl = res->impl_buf;
    }
    if (wr == WAIT_TIMEOUT) {
        reap(w, true, st);
        res->status = TB_STATUS_TIMEOUT;
        snprintf(res->message, sizeof res->message,
                 "no result after %g s (measure.timeout_s) during %s; worker "
                 "killed",
                 c->measure.timeout_s, tb_phase_name(*ph));
        return REPLY_TIMEOUT;
    }
    if (wr == WAIT_STOPPED) {
        reap(w, true, st);
        return REPLY_STOPPED;
    }
    if (wr == WAIT_DIED) {
        reap(w, true, st);
        return REPLY_DIED;
    }
    wire_hdr h;
    tb_result got;
    int rc = tb_fd_recv_all(w->fd, &h, sizeof h);
    if (rc == 1 && (h.magic != WIRE_MAGIC || h.index != i))
        rc = TB_EIO;
    if (rc == 1)
        rc = recv_result(w->fd, &h, (size_t)c->measure.max_samples, &got);
    if (rc != 1) {
        reap(w, true, st);
        return REPLY_DIED;
    }
    tb_result_free(res);
    *res = got;
    if (res->impl) /* got.impl points into got */
        res->impl = res->impl_buf;
    return REPLY_OK;
}

tb_work_outcome tb_workers_round(tb_workers *w, int i, int round,
                                 int rounds, tb_result *res)
{
    const tb_case *c = &w->plan->cases[i];
    if (round > 0 && res->status != TB_STATUS_OK)
        return TB_WORK_DONE; /* as tb_runner_round: nothing to add */
    if (!w->isolate) {
        tb_runner_round(w->local, c, round, rounds, res);
        return TB_WORK_DONE;
    }
    /* A worker that dies before it starts the case (idle: killed between
     * cases by an out-of-memory killer or an admin) is replaced once and
     * the request sent again; a second death is the case's. */
    for (int attempt = 0;; attempt++) {
        if (send_request(w, i, round, rounds, res))
            return TB_WORK_DONE;
        int st;
        tb_phase ph;
        switch (get_reply(w, c, i, res, &st, &ph)) {
        case REPLY_OK:
        case REPLY_TIMEOUT:
            return TB_WORK_DONE;
        case REPLY_STOPPED:
            return TB_WORK_INTERRUPTED;
        case REPLY_DIED:
            break;
        }
        if (stopped_too(w, st))
            return TB_WORK_INTERRUPTED;
        if (ph == TB_PHASE_IDLE && attempt == 0) {
            note_lost(w, st);
            continue;
        }
        set_crashed(res, st, ph);
        return TB_WORK_DONE;
    }
}
