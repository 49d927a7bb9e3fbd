/* Helpers every command shares: usage errors, the environment check made
 * before anything runs, and the --filter/--exclude patterns of run and
 * ab (declared in commands.h).  Kept out of main.c so that no command
 * file and main.c call each other. */
#include <stdio.h>
#include <stdlib.h>

#include "../backends/backend.h"
#include "../harness/plan.h"
#include "../harness/runner.h"
#include "../ops/calib.h"
#include "commands.h"

int tb_env_check(void)
{
    const char *spec = getenv("TBENCH_FAULT");
    char err[512];
    if (spec && tb_runner_fault_check(spec, err, sizeof err)) {
        fprintf(stderr, "tbench: %s\n", err);
        return TB_EXIT_USAGE;
    }
    tb_backend_host host;
    tb_backend_host_info(tb_backend_host_cpu(), NULL, &host);
    const char *isa = host.isa_cap_error;
    if (isa) {
        fprintf(stderr, "tbench: TBENCH_ISA: expected scalar, avx2, avx512, "
                        "avx512bf16 or auto, got '%s'\n", isa);
        return TB_EXIT_USAGE;
    }
    const char *scale = tb_calib_scale_env_error();
    if (scale) {
        fprintf(stderr, "tbench: TBENCH_CALIB_SCALE: expected a number in "
                        "(0, 1000] (calib_work's work factor), got '%s'\n",
                scale);
        return TB_EXIT_USAGE;
    }
    return 0;
}

int tb_usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "tbench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'tbench --help'.\n");
    return TB_EXIT_USAGE;
}

int tb_opt_pattern(const char *cmd, int c, const char *arg,
                   tb_cli_patterns *p, tb_plan_opts *o)
{
    bool filter = c == 'f';
    const char **v = filter ? p->filters : p->excludes;
    int *n = filter ? &o->n_filters : &o->n_excludes;
    o->filters = p->filters;
    o->excludes = p->excludes;
    if (*n == TB_PATTERNS_MAX) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s: at most %d --%s options", cmd,
                 TB_PATTERNS_MAX, filter ? "filter" : "exclude");
        return tb_usage_error("%s", msg);
    }
    v[(*n)++] = arg;
    return 0;
}

void tb_fmt_clock(double s, char *buf, size_t len)
{
    long t = s > 0 && s < 1e7 ? (long)(s + 0.5) : 0;
    if (t >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}
