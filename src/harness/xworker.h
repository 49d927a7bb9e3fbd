/* Exec'd workers: the versioned protocol between `tbench ab` and a
 * tbench executable that may be another build (docs/ARCHITECTURE.md).
 *
 * The fork-based workers of worker.h share the parent's program, so
 * they may send a tb_result by value.  A worker of another build cannot:
 * its structs may differ.  So the driver execs
 *
 *     EXE worker --protocol 1 --fd N
 *
 * and the two speak protocol 1 over the socket N, every message a
 * fixed header (magic "btw1", a kind, four int32 fields, a payload
 * length) and a payload of plain bytes:
 *
 *   worker -> driver  HELLO  a = the protocol it speaks; payload: the
 *                     build ("tbench VERSION (COMMIT)").  A build asked
 *                     for a version it does not speak still says hello
 *                     with its own, then exits 2.
 *   driver -> worker  LOAD   payload: a config path.  The worker builds
 *                     the config's whole plan.  Answer OK (a = cases) or
 *                     ERR (payload: the one-line error).
 *   driver -> worker  RUN    a = block, b = blocks, c = CPU to pin the
 *                     worker to (-1: none); payload: a case id.  The
 *                     worker measures the next round of that case (its
 *                     k-th RUN of the id is round k of `blocks`, as
 *                     measure.rounds would: round 0 checks the result)
 *                     and answers RES (payload: tb_xw_block's fields;
 *                     status "skipped" when its plan has no such id).
 *   driver -> worker  FINISH payload: a folder.  The worker writes
 *                     FOLDER/results.json and .csv of every case it ran
 *                     (its own build's format); answer OK or ERR.
 *
 * The worker exits when the socket closes, and dies with the driver
 * (PR_SET_PDEATHSIG).  It runs in a process group of its own, so a
 * terminal's Ctrl-C reaches the driver alone; a stopped driver kills its
 * workers, and a signal that kills a worker alone makes the block it was
 * running `crashed`, naming the signal. */
#ifndef TB_HARNESS_XWORKER_H
#define TB_HARNESS_XWORKER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#define TB_XW_PROTOCOL 1

/* The worker side: serve the driver on fd until it closes.  Returns 0,
 * or 1 when the connection broke.  The worker heeds no stop signal: the
 * driver kills it when it stops, and a signal that reaches the worker
 * alone kills it, so its block is `crashed` (see
 * tb_xworker_default_signals), never cut short in silence. */
int tb_xworker_serve(int fd);

/* Give SIGINT, SIGTERM and SIGHUP their default action in the worker
 * (one ignored where the driver was started stays ignored across exec).
 * Call before tb_xworker_serve. */
void tb_xworker_default_signals(void);

/* Send the HELLO of this build (protocol TB_XW_PROTOCOL) on fd; 0 or
 * TB_EIO.
 * For `worker --protocol V` with a V this build does not speak. */
int tb_xworker_hello(int fd);

typedef struct tb_xw tb_xw;

/* One block of one case from one build. */
typedef struct tb_xw_block {
    int status;       /* a tb_status of the worker's build */
    char status_name[32];
    char message[512];
    char impl[256];
    double median_ns; /* median per-iteration time of the block */
    double min_ns;    /* its fastest sample */
    uint64_t n_samples, iters_per_sample;
} tb_xw_block;

/* Exec `exe worker --protocol 1 --fd N` and wait (at most 15 s) for its
 * HELLO.  0, or TB_EINVAL with the one-line reason in err when exe is
 * not an executable tbench that speaks protocol 1 (the child is killed
 * and reaped), or TB_EIO / TB_ENOMEM. */
int tb_xw_start(tb_xw **w, const char *exe, char *err, size_t errlen);

/* The build the worker named in its HELLO. */
const char *tb_xw_build(const tb_xw *w);

/* LOAD config; 0, or TB_EINVAL with the worker's error in err. */
int tb_xw_load(tb_xw *w, const char *config, char *err, size_t errlen);

/* Send RUN; 0 or TB_EIO (the worker is gone; also when w is NULL). */
int tb_xw_send_run(tb_xw *w, const char *id, int block, int blocks, int cpu);

/* Wait at most timeout_s for the RES of the RUN sent.  0 with *out
 * filled; or TB_EIO with out->status_name "crashed" or "timeout" and a
 * message: the worker died (the signal that killed it named), or was
 * killed for the timeout, and is gone (tb_xw_alive is false; start and
 * load a new one).  stop (may be NULL): once *stop is set the worker is
 * killed at once, TB_EIO with status_name "" (the block is not over). */
int tb_xw_recv_run(tb_xw *w, double timeout_s, volatile sig_atomic_t *stop,
                   tb_xw_block *out);

/* FINISH into dir; 0, or TB_EIO/TB_EINVAL with the reason in err. */
int tb_xw_finish(tb_xw *w, const char *dir, char *err, size_t errlen);

/* Is the worker process still there? */
int tb_xw_alive(const tb_xw *w);

/* Close the socket, wait for the worker (killed if it lingers 5 s), free.
 * Accepts NULL. */
void tb_xw_stop(tb_xw *w);

#endif
