/* A plan run from start to finish: see session.h. */
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "env.h"
#include "gpu_clock.h"
#include "instr.h"
#include "peak.h"
#include "results.h"
#include "timer.h"
#include "trace.h"
#include "worker.h"

/* When to write the results during a run.  Writing the file costs time
 * in proportion to the cases recorded so far, so writing it after every
 * case would make a run of N tiny cases cost O(N^2).  A write is due
 * when the time since the previous write ended is at least WRITE_RATIO
 * times what that write took: writing then takes at most 1/(1 +
 * WRITE_RATIO) of the run, so a run's time stays linear in its cases.
 * Cases that take longer than WRITE_RATIO writes (all but tiny ones) are
 * still written one by one.  The file is always written at the end,
 * also when a signal stops the run. */
#define WRITE_RATIO 4

typedef struct write_pace {
    uint64_t last_end_ns;  /* when the previous write ended (0: none yet) */
    uint64_t last_cost_ns; /* what it took */
} write_pace;

/* One session's working state. */
typedef struct run {
    const tb_plan *plan;
    const tb_session_opts *o;
    const tb_session_sink *sink;
    tb_session *s;
    tb_workers *workers;
    cJSON *head;   /* the document but its records (tb_results_doc) */
    cJSON *flight; /* the records of cases [spooled, started) */
    tb_results_spool *spool; /* the records of cases [0, spooled) */
    int spooled;
    bool *dirty;   /* a case's record must be rebuilt before a write */
    cJSON **recs;  /* each case's record in flight, or NULL */
    tb_result **res; /* each started case's result until it settles */
    bool *last;    /* the case's last round ran */
    bool *settled; /* its record is final (settle) */
    bool counted;  /* the instruction pass is over */
    int prefix;    /* cases [0, prefix) have a record (record_now) */
    write_pace pace;
    volatile sig_atomic_t *stop;
    volatile sig_atomic_t never; /* *stop when the caller gave none */
    char *err;
    size_t errlen;
} run;

static void progress(const run *r, const tb_session_progress *p)
{
    if (r->sink->progress)
        r->sink->progress(r->sink->ctx, p);
}

static void progress_end(const run *r)
{
    tb_session_progress p = {.step = TB_SESSION_END};
    progress(r, &p);
}

static void drop_result(run *r, int i)
{
    if (r->res[i])
        tb_result_free(r->res[i]);
    free(r->res[i]);
    r->res[i] = NULL;
}

/* Case c asks for a counting pass (instructions or cache) after its
 * timing. */
static bool counts_due(const tb_case *c)
{
    return c->measure.instructions != TB_INSTR_NONE ||
           c->measure.cache != TB_INSTR_NONE;
}

/* Move the records of the settled cases at the head of those in flight
 * to the spool, in plan order: each is printed once and freed, so the
 * run's memory does not grow with its cases.  0, or an error in
 * r->err. */
static int spool_settled(run *r)
{
    for (; r->spooled < r->s->started && r->settled[r->spooled];
         r->spooled++) {
        cJSON *rec = r->recs[r->spooled];
        char why[1024];
        int rc = tb_results_spool_add(r->spool, rec, why, sizeof why);
        if (rc) {
            snprintf(r->err, r->errlen, "writing results: %s", why);
            return rc;
        }
        cJSON_Delete(cJSON_DetachItemViaPointer(r->flight, rec));
        r->recs[r->spooled] = NULL;
    }
    return 0;
}

/* Free case i's result once its record holds everything the run will
 * learn of it: its last round ran, its record is built (not dirty) and
 * no instruction count is still to come.  The record is then final: it
 * goes to the spool once every case before it is there.  0, or an error
 * in r->err. */
static int settle(run *r, int i)
{
    if (!r->last[i] || r->dirty[i] ||
        (counts_due(&r->plan->cases[i]) && !r->counted))
        return 0;
    drop_result(r, i);
    r->settled[i] = true;
    return spool_settled(r);
}

/* Build case i's record from its result (stop reason "interrupted" while
 * rounds remain: see write_results) and settle it.  0, or an error in
 * r->err. */
static int build_record(run *r, int i)
{
    const tb_case *cs = &r->plan->cases[i];
    tb_runner_summarize(cs, r->res[i]);
    tb_result res = *r->res[i]; /* shallow: the record is built from it */
    if (res.status == TB_STATUS_OK && res.rounds < cs->measure.rounds)
        res.stop_reason = "interrupted";
    if (tb_results_put_case(r->head, r->flight, &r->recs[i], cs, &res)) {
        snprintf(r->err, r->errlen, "writing results: out of memory");
        return TB_ENOMEM;
    }
    r->dirty[i] = false;
    return settle(r, i);
}

/* Case i's last round ran: build its record now rather than at the next
 * write, so that its result is freed now (the writes are paced further
 * apart as the document grows: results kept until then would add up to a
 * share of all cases).  The cases before it that have no record yet get
 * theirs first: records stay in plan order.  0, or an error in
 * r->err. */
static int record_now(run *r, int i)
{
    for (; r->prefix <= i; r->prefix++) {
        int rc = r->recs[r->prefix] || r->settled[r->prefix]
                     ? 0
                     : build_record(r, r->prefix);
        if (rc)
            return rc;
    }
    return r->dirty[i] ? build_record(r, i) : 0;
}

/* Bring the document's records of the first `started` cases up to date
 * (only those marked dirty are summarised and rebuilt, so a write costs
 * the same whatever the number of cases before it), then hand the
 * document to the sink.  *write_ns (when not NULL): how long the writing
 * took, records aside (their cost is per case; write_due paces only the
 * writing).  0, or an error in r->err.
 *
 * A case whose later rounds have not run yet is written with stop
 * reason "interrupted": if the run dies now (SIGKILL, a power cut), the
 * file it leaves never claims that such a case finished.  The record is
 * rebuilt, with its real reason, when its last round has run. */
static int write_results(run *r, bool complete, uint64_t *write_ns)
{
    tb_session *s = r->s;
    int rc;
    for (int i = 0; i < s->started; i++)
        if (r->dirty[i] && (rc = build_record(r, i)))
            return rc;
    uint64_t t0 = tb_now_ns();
    if (tb_results_finish_doc(r->head, r->spool, r->flight, complete)) {
        snprintf(r->err, r->errlen, "writing results: out of memory");
        return TB_ENOMEM;
    }
    char why[1024];
    tb_results_doc d = {.head = r->head, .spool = r->spool,
                        .flight = r->flight};
    rc = r->sink->write(r->sink->ctx, &d, why, sizeof why);
    if (rc)
        snprintf(r->err, r->errlen, "writing results: %s", why);
    if (write_ns)
        *write_ns = tb_now_ns() - t0;
    return rc;
}

static bool write_due(const write_pace *w)
{
    return tb_now_ns() - w->last_end_ns >= WRITE_RATIO * w->last_cost_ns;
}

/* write_results during the rounds, timed for write_due. */
static int paced_write(run *r)
{
    int rc = write_results(r, false, &r->pace.last_cost_ns);
    r->pace.last_end_ns = tb_now_ns();
    return rc;
}

/* The spool, the workers, the document (environment, configs,
 * isolation, NVTX, shard), the environment's warnings, the peaks, the
 * per-case arrays.  0, or an error in r->err. */
static int open_run(run *r, const tb_config *cfgs, int ncfg)
{
    tb_session *s = r->s;
    const tb_session_opts *o = r->o;
    cJSON *shard = o->shard;
    char why[1024];
    int rc = tb_results_spool_open(&r->spool, o->spool_dir, why,
                                   sizeof why);
    if (rc) {
        cJSON_Delete(shard);
        snprintf(r->err, r->errlen, "writing results: %s", why);
        return rc;
    }
    /* No backend instance exists in this process before the workers are
     * forked (worker.h): they create their own. */
    if (tb_workers_create(&r->workers, r->plan, o->isolate, r->stop) ||
        !(r->flight = cJSON_CreateArray()) ||
        !(r->head = tb_results_new(tb_env_capture(), cfgs, ncfg,
                                   tb_timer_overhead_ns(20001))) ||
        tb_results_set_isolation(r->head, tb_workers_mode(r->workers)) ||
        tb_results_set_nvtx(r->head, tb_trace_enabled()) ||
        (shard && tb_results_set_shard(r->head, shard))) {
        cJSON_Delete(shard);
        snprintf(r->err, r->errlen, "out of memory");
        return TB_ENOMEM;
    }
    const cJSON *warn;
    cJSON_ArrayForEach(warn, tb_results_warnings(r->head))
        if (r->sink->warning && cJSON_IsString(warn))
            r->sink->warning(r->sink->ctx, NULL, warn->valuestring);
    tb_results_set_peaks(r->head, tb_peaks_for_run(o->measure_peaks,
                                                   o->quiet));
    int n = r->plan->n;
    s->sum = calloc((size_t)n, sizeof *s->sum);
    r->dirty = calloc((size_t)n, sizeof *r->dirty);
    r->recs = calloc((size_t)n, sizeof *r->recs);
    r->res = calloc((size_t)n, sizeof *r->res);
    r->last = calloc((size_t)n, sizeof *r->last);
    r->settled = calloc((size_t)n, sizeof *r->settled);
    if (s->sum && r->dirty && r->recs && r->res && r->last && r->settled)
        return 0;
    snprintf(r->err, r->errlen, "out of memory");
    return TB_ENOMEM;
}

/* After case i's round: its flags, its warning, the run's failure. */
static void round_done(run *r, int i, int round)
{
    const tb_case *cs = &r->plan->cases[i];
    tb_result *res = r->res[i];
    r->dirty[i] = true;
    r->last[i] = round == cs->measure.rounds - 1;
    r->s->sum[i] = (tb_case_sum){res->status, res->rounds};
    if (round == 0)
        r->s->started = i + 1;
    char thr[512];
    if (r->sink->warning && round == cs->measure.rounds - 1 &&
        tb_gpu_clock_warning(&res->clock, thr, sizeof thr)[0])
        r->sink->warning(r->sink->ctx, cs->id, thr);
    if (res->status == TB_STATUS_FAILED_CHECK ||
        res->status == TB_STATUS_ERROR ||
        res->status == TB_STATUS_CRASHED ||
        res->status == TB_STATUS_TIMEOUT)
        r->s->failed = true;
}

/* The rounds.  Results are written after every case of the first and
 * the last round and after every round in between (as paced by
 * write_due), so an interrupted run keeps every case measured so far.
 * 0, or a write's error. */
static int run_rounds(run *r)
{
    const tb_plan *plan = r->plan;
    tb_session_progress p = {.step = TB_SESSION_CASE, .rounds = 1,
                             .n = plan->n};
    for (int i = 0; i < plan->n; i++) {
        if (plan->cases[i].measure.rounds > p.rounds)
            p.rounds = plan->cases[i].measure.rounds;
        p.total += plan->cases[i].measure.rounds;
    }
    double t_start = tb_now_ns() * 1e-9;
    int rc = 0;
    tb_trace_push(TB_TRACE_RUN);
    for (int round = 0; round < p.rounds && !*r->stop && !rc; round++) {
        for (int i = 0; i < plan->n && !*r->stop; i++) {
            const tb_case *cs = &plan->cases[i];
            if (round >= cs->measure.rounds)
                continue;
            p.round = round;
            p.index = i;
            p.id = cs->id;
            p.elapsed_s = tb_now_ns() * 1e-9 - t_start;
            progress(r, &p);
            if (!r->res[i] && !(r->res[i] = calloc(1, sizeof *r->res[i]))) {
                snprintf(r->err, r->errlen, "out of memory");
                rc = TB_ENOMEM;
                progress_end(r);
                break;
            }
            tb_work_outcome wo = tb_workers_round(
                r->workers, i, round, cs->measure.rounds, r->res[i]);
            const char *lost = tb_workers_note(r->workers);
            if (lost && r->sink->warning)
                r->sink->warning(r->sink->ctx, NULL, lost);
            if (wo == TB_WORK_INTERRUPTED)
                break; /* killed mid-case: res[i] as before the round */
            p.done++;
            round_done(r, i, round);
            if ((r->last[i] && !counts_due(cs) &&
                 (rc = record_now(r, i))) ||
                ((round == 0 || round == p.rounds - 1 ||
                  i == plan->n - 1) && write_due(&r->pace) &&
                 (rc = paced_write(r)))) {
                progress_end(r);
                break;
            }
        }
    }
    tb_trace_pop(); /* run */
    return rc;
}

/* Instruction counts and cache events (measure.instructions,
 * measure.cache, instr.h): a separate pass over the cases that ran, each
 * count in a counting process of its own. */
static void count_instructions(run *r)
{
    const tb_plan *plan = r->plan;
    tb_session *s = r->s;
    for (int i = 0; !*r->stop && i < s->started; i++) {
        const tb_case *cs = &plan->cases[i];
        if (!counts_due(cs) || !r->res[i] ||
            r->res[i]->status != TB_STATUS_OK)
            continue;
        tb_session_progress p = {.step = TB_SESSION_COUNT, .index = i,
                                 .n = plan->n, .id = cs->id};
        progress(r, &p);
        if (cs->measure.instructions != TB_INSTR_NONE)
            tb_instr_count(cs, r->o->cfg_paths, r->o->n_cfg_paths,
                           cs->backend->name, r->res[i]);
        if (cs->measure.cache != TB_INSTR_NONE && !*r->stop)
            tb_instr_cache(cs, r->o->cfg_paths, r->o->n_cfg_paths,
                           cs->backend->name, r->res[i]);
        r->dirty[i] = true;
    }
    r->counted = true;
    progress_end(r);
}

int tb_session_run(const tb_plan *plan, const tb_config *cfgs, int ncfg,
                   const tb_session_opts *o, const tb_session_sink *sink,
                   tb_session *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->n = plan->n;
    run r = {.plan = plan, .o = o, .sink = sink, .s = s, .err = err,
             .errlen = errlen};
    r.stop = o->stop ? o->stop : &r.never;
    int rc = open_run(&r, cfgs, ncfg);
    if (rc)
        goto out;
    if ((rc = run_rounds(&r)))
        goto out;
    count_instructions(&r);
    /* a case cut short before its last round says so */
    for (int i = 0; *r.stop && i < s->started; i++)
        if (r.res[i] && r.res[i]->status == TB_STATUS_OK &&
            r.res[i]->rounds < plan->cases[i].measure.rounds) {
            r.res[i]->stop_reason = "interrupted";
            r.dirty[i] = true;
        }
    rc = write_results(&r, !*r.stop, NULL);
    s->signal = *r.stop;
out:
    tb_workers_destroy(r.workers);
    for (int i = 0; r.res && i < plan->n; i++)
        drop_result(&r, i);
    free(r.res);
    free(r.last);
    free(r.settled);
    free(r.dirty);
    free(r.recs);
    cJSON_Delete(r.flight);
    cJSON_Delete(r.head);
    tb_results_spool_close(r.spool);
    return rc;
}

void tb_session_free(tb_session *s)
{
    if (!s)
        return;
    free(s->sum);
    memset(s, 0, sizeof *s);
}
