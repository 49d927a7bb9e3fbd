/* A session: one plan run from start to finish, the engine behind
 * `tbench run` and behind anything that embeds tbench (a test, a
 * script's C driver).
 *
 * The session forks the workers (worker.h; or runs in process), builds
 * the result document (results.h: the environment, the configs, the
 * machine peaks), then measures the plan in rounds: round r of every
 * case that has that many (measure.rounds), case after case.  The
 * document goes to the sink after each case of the first and the last
 * round and after every round in between, paced so that writing takes at
 * most a fifth of the run (a run's time stays linear in its cases), and
 * once more at the end.  A case's record, once final, goes to a spool
 * (tb_results_spool) and is freed: what the session holds does not grow
 * with the cases but by the few bytes of tb_case_sum, as long as cases
 * settle in plan order (a case that runs more rounds, or waits for the
 * instruction pass, keeps its record and those after it in memory until
 * then).  Then a separate pass counts instructions for
 * the cases that ask (measure.instructions, instr.h), never inside the
 * timed samples.
 *
 * Stopping: when *stop becomes non-zero (the caller's signal handler
 * stores the signal there), the running case ends at its next sample
 * ("interrupted"; a worker deaf to it is killed), nothing new starts,
 * and the document is written with every finished case; a case cut short
 * before its last round says "interrupted".  A record written while a
 * case still has rounds to run says so too, so a file left by a run that
 * dies (SIGKILL, a power cut) never claims a case finished that did not.
 *
 * The session decides nothing about exit codes and prints nothing but
 * the peaks' notes (peak.h, unless quiet): what the user sees comes
 * through the sink. */
#ifndef TB_HARNESS_SESSION_H
#define TB_HARNESS_SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "plan.h"
#include "results.h"
#include "runner.h"

typedef struct tb_session_opts {
    bool isolate;       /* fork workers (worker.h); false: in process */
    bool measure_peaks; /* measure the machine peaks first; false: the
                         * cached ones (peak.h) */
    bool quiet;         /* the peaks print no notes */
    /* The caller's stop flag, set by its signal handler to the signal
     * (tb_workers_catch_stop); NULL: the run is never stopped. */
    volatile sig_atomic_t *stop;
    /* What the counting process of measure.instructions rebuilds the
     * plan from (instr.h): the config files (with the case's own backend
     * as its --backend). */
    const char *const *cfg_paths;
    int n_cfg_paths;
    /* tb_shard_select's object for a `run --shard I/N` (taken over, also
     * on failure), or NULL. */
    cJSON *shard;
    /* Where the spool's private folder is made (the output folder: the
     * same file system as the results), or NULL: $TMPDIR or /tmp. */
    const char *spool_dir;
} tb_session_opts;

/* What a progress report is about. */
typedef enum {
    TB_SESSION_CASE,  /* a round of a case is about to run */
    TB_SESSION_COUNT, /* a case's instructions are about to be counted */
    TB_SESSION_END,   /* no more progress reports (clear the line) */
} tb_session_step;

typedef struct tb_session_progress {
    tb_session_step step;
    int round, rounds;  /* CASE: the round (from 0), of the plan's most */
    int index, n;       /* CASE, COUNT: the case's plan index; plan.n */
    const char *id;     /* CASE, COUNT: the case's id */
    double elapsed_s;   /* CASE: since the first round began */
    int done, total;    /* CASE: case-rounds done so far, and in all */
} tb_session_progress;

/* Where the session's output goes.  ctx is passed back to each slot. */
typedef struct tb_session_sink {
    void *ctx;
    /* Write the result document (every record in it up to date; e.g.
     * tb_results_doc_write to a folder; tb_results_doc_text for its
     * text).  0, or a TB_E* code with a one-line message in err, which
     * ends the session.  Required. */
    int (*write)(void *ctx, const tb_results_doc *doc, char *err,
                 size_t errlen);
    /* Where the run is (optional). */
    void (*progress)(void *ctx, const tb_session_progress *p);
    /* A warning (optional): about the environment (id NULL; before the
     * peaks and the first case), about a worker that died between cases
     * and was replaced (id NULL; tb_workers_note), or about case id once
     * its last round has run (the GPU throttled during it). */
    void (*warning)(void *ctx, const char *id, const char *text);
} tb_session_sink;

/* What a session keeps of a case after its record is in the document:
 * the full tb_result (11 KB and the samples) is freed once the case's
 * last round ran and its record was built, and the record once it is
 * spooled, so a run's memory does not grow by a result per case. */
typedef struct tb_case_sum {
    tb_status status;
    int rounds; /* rounds measured */
} tb_case_sum;

/* A session's outcome.  tb_session_free frees it. */
typedef struct tb_session {
    tb_case_sum *sum; /* one per plan case, as its record says */
    int n;            /* plan cases */
    int started;      /* cases whose first round ran: sum[0..started) */
    bool failed;    /* a case failed its check, errored, crashed or timed
                     * out */
    int signal;     /* *stop when the run was stopped, else 0 */
} tb_session;

/* Run every case of plan (built from cfgs[0..ncfg), which the document
 * records; both must outlive the call) with options o, writing through
 * sink.  No backend instance may exist in this process yet (worker.h).
 * Returns 0 when the run went through, stopped by *stop or not (cases
 * that failed: s->failed); TB_ENOMEM (nothing measured), the spool's
 * error (no folder for it, a full disk: TB_EIO) or the sink's write
 * error, with a one-line message in err ("writing results: ...").
 * *s is filled in every case: free it with tb_session_free. */
int tb_session_run(const tb_plan *plan, const tb_config *cfgs, int ncfg,
                   const tb_session_opts *o, const tb_session_sink *sink,
                   tb_session *s, char *err, size_t errlen);

/* Free what s holds and empty it.  Accepts NULL. */
void tb_session_free(tb_session *s);

#endif
