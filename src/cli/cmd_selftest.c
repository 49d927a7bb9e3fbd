/* tbench selftest: the harness's accuracy on this machine and the
 * smallest change it can detect here (src/harness/selftest.h has the
 * method, the formulas and the document); printed as a table or JSON
 * (docs/FORMAT.md). */
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../base/fileio.h"
#include "../harness/selftest.h"
#include "commands.h"

static void fmt_ns(char *buf, size_t len, double ns)
{
    double a = fabs(ns);
    if (a >= 1e6)
        snprintf(buf, len, "%.4g ms", ns / 1e6);
    else if (a >= 1e3)
        snprintf(buf, len, "%.4g us", ns / 1e3);
    else
        snprintf(buf, len, "%.4g ns", ns);
}

static void selftest_print(FILE *f, const tb_selftest *st)
{
    char a[32], b[32], c[32], d[32];
    fmt_ns(a, sizeof a, st->clock_res_ns);
    fmt_ns(b, sizeof b, st->clock_step_ns);
    fmt_ns(c, sizeof c, st->clock_cost_ns);
    fmt_ns(d, sizeof d, st->overhead_ns);
    fprintf(f, "clock CLOCK_MONOTONIC: resolution %s, smallest step seen "
               "%s, one reading costs %s; subtracted per sample %s\n\n",
            a, b, c, d);
    fmt_ns(a, sizeof a, st->spin0_ns);
    fprintf(f, "calib_spin at 0 ns (a call, its checks and readings): %s; "
               "net = measured - that\n", a);
    fprintf(f, "%-10s %12s %12s %12s %9s %12s %7s %10s\n", "spin",
            "measured", "net", "error", "error%", "clock bound", "within",
            "iters/smp");
    for (int i = 0; i < TB_SELFTEST_NSPIN; i++) {
        const tb_selftest_point *p = &st->spin[i];
        char e[32];
        fmt_ns(a, sizeof a, p->true_ns);
        fmt_ns(b, sizeof b, p->measured_ns);
        fmt_ns(e, sizeof e, p->net_ns);
        fmt_ns(c, sizeof c, p->err_ns);
        fmt_ns(d, sizeof d, p->bound_ns);
        fprintf(f, "%-10s %12s %12s %12s %8.2f%% %12s %7s %10llu\n", a, b,
                e, c, 100 * p->rel_err, d, p->within ? "yes" : "NO",
                (unsigned long long)p->iters_per_sample);
    }
    if (!st->runs)
        return;
    fmt_ns(a, sizeof a, st->work_median_ns);
    fprintf(f, "\nminimum detectable effect: calib_work [%lld] in %d "
               "rounds, median %s, CV of the round medians %.3f%%\n",
            (long long)st->work_n, st->runs, a, 100 * st->work_cv);
    fprintf(f, "noise sources: core clock %.2f GHz before each round, CV "
               "%.2f%%; ", st->clock_ghz_median, 100 * st->clock_cv);
    tb_noise_print(f, "the machine during the rounds", &st->noise);
    fprintf(f, "named: %s\n",
            st->named[0] ? st->named
                         : "none (no steal, other load or clock change "
                           "seen: what remains is the machine's own "
                           "variation, e.g. memory placement, the "
                           "hypervisor, caches)");
    fprintf(f, "MDE(m) = (z(1-alpha/2) + z(power)) * CV * sqrt(2/m), "
               "alpha %g, power %g:\n", st->alpha, st->power);
    for (int i = 0; i < TB_SELFTEST_NMDE; i++) {
        fmt_ns(a, sizeof a, st->mde_ns[i]);
        fprintf(f, "  %d run%s per side: %.2f%% (%s of %s)\n",
                st->mde_runs[i], st->mde_runs[i] > 1 ? "s" : "",
                100 * st->mde_rel[i], a, "calib_work's median");
    }
}

/* Option opt's value s, a number in [lo, hi], into *out.  0, or
 * TB_EXIT_USAGE after the message. */
static int num_arg(const char *opt, const char *s, double lo, double hi,
                   double *out)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, "tbench: selftest: %s: expected a number in "
                        "[%g, %g], got '%s'\n", opt, lo, hi, s);
        return TB_EXIT_USAGE;
    }
    *out = v;
    return 0;
}

/* num_arg for an integer. */
static int int_arg(const char *opt, const char *s, double lo, double hi,
                   double *out)
{
    int rc = num_arg(opt, s, lo, hi, out);
    if (!rc && *out != floor(*out)) {
        char msg[128];
        snprintf(msg, sizeof msg, "selftest: %s: expected an integer, got "
                 "'%%s'", opt);
        return tb_usage_error(msg, s);
    }
    return rc;
}

/* The options `selftest` parses (and `tbench __options` lists). */
static const struct option longopts[] = {
    {"json", no_argument, NULL, 'j'},
    {"output", required_argument, NULL, 'o'},
    {"quick", no_argument, NULL, 'Q'},
    {"runs", required_argument, NULL, 'r'},
    {"alpha", required_argument, NULL, 'a'},
    {"power", required_argument, NULL, 'p'},
    {"work", required_argument, NULL, 'w'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};
const tb_cmd_opts tb_opts_selftest = {longopts, ":o:h", NULL};

int tb_cmd_selftest(int argc, char **argv)
{
    bool json = false;
    const char *outfile = NULL;
    tb_selftest_opts opts;
    tb_selftest_opts_default(&opts);
    double v;
    int c;
    bool first = true;
    while ((c = tb_opt_next(argc, argv, &tb_opts_selftest, &first)) !=
           -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'o': outfile = optarg; break;
        case 'Q':
            opts.runs = 5;
            opts.max_time_s = 0.2;
            break;
        case 'r':
            if (int_arg("--runs", optarg, 3, TB_SELFTEST_MAX_RUNS, &v))
                return TB_EXIT_USAGE;
            opts.runs = (int)v;
            break;
        case 'a':
            if (num_arg("--alpha", optarg, 1e-12, 0.5, &opts.alpha))
                return TB_EXIT_USAGE;
            break;
        case 'p':
            if (num_arg("--power", optarg, 0.01, 0.999999, &opts.power))
                return TB_EXIT_USAGE;
            break;
        case 'w':
            if (int_arg("--work", optarg, 1, 1e9, &v))
                return TB_EXIT_USAGE;
            opts.work_n = (int64_t)v;
            break;
        case 'h': tb_cmd_usage(stdout, "selftest"); return TB_EXIT_OKAY;
        default: return tb_opt_error("selftest", c, argv, longopts);
        }
    }
    if (optind < argc)
        return tb_usage_error("selftest: unexpected argument '%s'",
                              argv[optind]);
    if (outfile && tb_out_check("selftest", outfile, false))
        return TB_EXIT_USAGE;
    int rc = tb_env_check();
    if (rc)
        return rc;

    char err[1024];
    tb_selftest st;
    if (tb_selftest_run(&opts, &st, err, sizeof err)) {
        fprintf(stderr, "tbench: %s\n", err);
        return TB_EXIT_CASES;
    }
    cJSON *doc = tb_selftest_json(&st);
    char *text = doc ? cJSON_Print(doc) : NULL;
    cJSON_Delete(doc);
    if (!text) {
        fprintf(stderr, "tbench: out of memory\n");
        return TB_EXIT_CASES;
    }
    rc = TB_EXIT_OKAY;
    if (outfile &&
        tb_write_atomic(outfile, text, strlen(text), err, sizeof err)) {
        fprintf(stderr, "tbench: -o: %s\n", err);
        rc = TB_EXIT_CASES;
    }
    if (json)
        puts(text);
    else
        selftest_print(stdout, &st);
    free(text);
    return rc;
}
