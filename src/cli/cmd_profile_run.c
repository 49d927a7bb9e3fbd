/* tbench __profile-run: the case `tbench profile` runs under the
 * profiler (cmd_profile.c), and the lookup of a case in the configs'
 * plan they share.  main dispatches it; --help does not list it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/error.h"
#include "../harness/config.h"
#include "../harness/plan.h"
#include "../harness/runner.h"
#include "commands.h"
#include "tb_config.h"

#if HAVE_CALLGRIND_H
#include <valgrind/callgrind.h>
#endif

/* The configs' plan and case id's case into *plan / *cs.  0, or the exit
 * status after the message (err names the config or the id). */
int tb_profile_find_case(char **cfg_paths, int ncfg, const char *backend,
                     const char *id, tb_config *cfgs, tb_plan *plan,
                     const tb_case **cs)
{
    char err[1024];
    for (int i = 0; i < ncfg; i++)
        if (tb_config_load(cfg_paths[i], &cfgs[i], err, sizeof err)) {
            fprintf(stderr, "tbench: %s\n", err);
            for (int k = 0; k < i; k++)
                tb_config_free(&cfgs[k]);
            return TB_EXIT_USAGE;
        }
    tb_plan_opts opts = {.backends = &backend, .n_backends = backend != NULL};
    int rc = tb_plan_build(cfgs, ncfg, &opts, plan, err, sizeof err);
    *cs = NULL;
    for (int i = 0; !rc && i < plan->n && !*cs; i++)
        if (!strcmp(plan->cases[i].id, id))
            *cs = &plan->cases[i];
    if (rc)
        fprintf(stderr, "tbench: %s\n", err);
    else if (!*cs)
        fprintf(stderr, "tbench: profile: no case '%s' in %s%s (the ids: "
                "tbench run CONFIG --list-cases)\n", id, cfg_paths[0],
                ncfg > 1 ? " and the other configs" : "");
    for (int i = 0; i < ncfg; i++)
        tb_config_free(&cfgs[i]);
    if (rc || !*cs) {
        tb_plan_free(plan);
        return TB_EXIT_USAGE;
    }
    return 0;
}

/* ---- the child: the case for about `seconds` ---------------------------- */

/* The counted region's clock, and callgrind's collection switched on
 * inside it (cg). */
typedef struct {
    double t0, t1;
    bool cg;
} region;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void region_on(void *arg)
{
    region *g = arg;
#if HAVE_CALLGRIND_H
    if (g->cg)
        CALLGRIND_TOGGLE_COLLECT;
#endif
    g->t0 = now_s();
}

static void region_off(void *arg)
{
    region *g = arg;
    g->t1 = now_s();
#if HAVE_CALLGRIND_H
    if (g->cg)
        CALLGRIND_TOGGLE_COLLECT;
#endif
}

/* k counted calls of cs into *g; 0, or TB_EXIT_CASES after the message. */
static int count_calls(tb_runner *r, const tb_case *cs, uint64_t k,
                       region *g)
{
    tb_result res;
    memset(&res, 0, sizeof res);
    int rc = 0;
    if (tb_runner_count(r, cs, k, region_on, region_off, g, &res)) {
        fprintf(stderr, "tbench: profile: %s: %s%s%s\n", cs->id,
                tb_status_name(res.status), res.message[0] ? ": " : "",
                res.message);
        rc = TB_EXIT_CASES;
    }
    tb_result_free(&res);
    return rc;
}

int tb_cmd_profile_run(int argc, char **argv)
{
    const char *id = NULL, *backend = NULL;
    double seconds = 0;
    int c;
    bool first = true;
    while ((c = tb_opt_next(argc, argv, &tb_opts_profile, &first)) != -1) {
        if (c == 'w' || c == 'o') /* the parent's: not passed */
            continue;
        if (c == 's')
            seconds = strtod(optarg, NULL);
        else if (c == 'b')
            backend = optarg;
        else
            return tb_usage_error("__profile-run: bad option '%s'",
                                  argv[optind - 1]);
    }
    if (optind + 1 >= argc || !(seconds > 0))
        return tb_usage_error("__profile-run: %s", "needs ID and configs");
    id = argv[optind];
    int ncfg = argc - optind - 1;
    tb_config *cfgs = calloc((size_t)ncfg, sizeof *cfgs);
    tb_plan plan = {0};
    const tb_case *cs;
    if (!cfgs)
        return TB_EXIT_CASES;
    int rc = tb_profile_find_case(argv + optind + 1, ncfg, backend, id,
                                  cfgs, &plan, &cs);
    free(cfgs);
    if (rc)
        return rc;
    tb_runner *r;
    if (tb_runner_create(&r, NULL)) {
        tb_plan_free(&plan);
        return TB_EXIT_CASES;
    }
    /* a probe of 16 calls for the time of one, then the calls that fill
     * the seconds in one count: the case's check (its reference) runs
     * twice, not once per round, and callgrind collects only inside the
     * second count's region */
    region g = {0, 0, false};
    rc = count_calls(r, cs, 16, &g);
    if (!rc) {
        double per = (g.t1 - g.t0) / 16;
        double k = per > 0 ? seconds / per : 1e9;
        g.cg = true;
        rc = count_calls(r, cs, (uint64_t)(k < 1 ? 1 : k > 1e9 ? 1e9 : k),
                         &g);
    }
    tb_runner_destroy(r);
    tb_plan_free(&plan);
    return rc;
}
