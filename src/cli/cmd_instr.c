/* tbench __instr-count: the counting process of measure.instructions
 * and measure.cache (src/harness/instr.h).  `run` starts it (under valgrind for callgrind)
 * with the run's config files and case id; it is not a user command and
 * --help does not list it.
 *
 *   tbench __instr-count --id ID --source perf|callgrind --iters K
 *                        [--what instructions|cache] [--backend NAME]
 *                        CONFIG...
 *
 * Prints one line (instr.h) and exits 0 when the case was counted, 1
 * when not, 2 on bad arguments. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/config.h"
#include "../harness/instr.h"
#include "../harness/plan.h"
#include "commands.h"

int tb_cmd_instr_count(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"id", required_argument, NULL, 'i'},
        {"source", required_argument, NULL, 's'},
        {"iters", required_argument, NULL, 'k'},
        {"backend", required_argument, NULL, 'b'},
        {"what", required_argument, NULL, 'w'},
        {NULL, 0, NULL, 0},
    };
    const char *id = NULL, *backend = NULL;
    int source = -1;
    long k = 0;
    bool cache = false, bad_what = false;
    int c;
    opterr = 0;
    optind = 0; /* 0: glibc re-reads the option string (a fresh parse) */
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'i': id = optarg; break;
        case 'b': backend = optarg; break;
        case 's':
            source = !strcmp(optarg, "perf")        ? TB_INSTR_PERF
                     : !strcmp(optarg, "callgrind") ? TB_INSTR_CALLGRIND
                                                    : -1;
            break;
        case 'k': k = strtol(optarg, NULL, 10); break;
        case 'w':
            cache = !strcmp(optarg, "cache");
            bad_what = !cache && strcmp(optarg, "instructions") != 0;
            break;
        default:
            return tb_usage_error("__instr-count: bad option '%s'",
                                  argv[optind - 1]);
        }
    }
    if (!id || source < 0 || k < 1 || bad_what || optind >= argc)
        return tb_usage_error("__instr-count: %s",
                              "needs --id, --source, --iters and configs");
    int rc = tb_env_check();
    if (rc)
        return rc;
    int ncfg = argc - optind;
    tb_config *cfgs = calloc((size_t)ncfg, sizeof *cfgs);
    char err[1024];
    tb_plan plan = {0};
    if (!cfgs) {
        printf("tbench-instr/1 error out of memory\n");
        return TB_EXIT_CASES;
    }
    int loaded = 0;
    rc = TB_EXIT_CASES;
    for (; loaded < ncfg; loaded++)
        if (tb_config_load(argv[optind + loaded], &cfgs[loaded], err,
                           sizeof err)) {
            printf("tbench-instr/1 error %s\n", err);
            goto out;
        }
    tb_plan_opts opts = {.backends = &backend, .n_backends = backend != NULL};
    if (tb_plan_build(cfgs, ncfg, &opts, &plan, err, sizeof err)) {
        printf("tbench-instr/1 error %s\n", err);
        goto out;
    }
    const tb_case *cs = NULL;
    for (int i = 0; i < plan.n && !cs; i++)
        if (!strcmp(plan.cases[i].id, id))
            cs = &plan.cases[i];
    if (!cs) {
        printf("tbench-instr/1 error no case '%s' in the plan here%s\n", id,
               source == TB_INSTR_CALLGRIND
                   ? " (under valgrind the ISA is capped at avx2)" : "");
        goto out;
    }
    if (tb_instr_child(cs, source, cache, (uint64_t)k, stdout) == 0)
        rc = TB_EXIT_OKAY;
out:
    fflush(stdout);
    tb_plan_free(&plan);
    for (int i = 0; i < loaded; i++)
        tb_config_free(&cfgs[i]);
    free(cfgs);
    return rc;
}
