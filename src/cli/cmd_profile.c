/* tbench profile CASE CONFIG... --with TOOL: one case under a profiler
 * (issue 31 item 4), and its hidden child `__profile-run`.
 *
 * The parent checks the case is in the configs' plan, makes the output
 * folder, then runs this same executable as `tbench __profile-run` under
 * the tool: perf record (call graphs; a flamegraph SVG when the
 * FlameGraph scripts or inferno are on PATH, else perf report's text),
 * valgrind's callgrind (collection switched on only around the calls,
 * as measure.instructions does) or massif (the heap over the whole
 * process), nsys or ncu (a GPU case: the NVTX range of the case).  The
 * child builds the same plan, finds the case and runs it for about the
 * seconds asked (tb_runner_count: 16 calls timed, then one count that
 * fills the seconds), in process: no
 * worker, so the profile holds the kernel and not the harness's
 * isolation.  A tool that is missing, or refuses (perf_event_paranoid),
 * is one line and exit 2. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../base/error.h"
#include "../base/fileio.h"
#include "../harness/config.h"
#include "../harness/plan.h"
#include "../harness/runner.h"
#include "commands.h"
#include "tb_config.h"


enum { T_PERF, T_CALLGRIND, T_MASSIF, T_NSYS, T_NCU, T_COUNT };
static const char *const tool_name[T_COUNT] = {"perf", "callgrind",
                                               "massif", "nsys", "ncu"};
/* The program each tool runs as. */
static const char *const tool_exe[T_COUNT] = {"perf", "valgrind",
                                              "valgrind", "nsys", "ncu"};

static const struct option longopts[] = {
    {"with", required_argument, NULL, 'w'},
    {"seconds", required_argument, NULL, 's'},
    {"output", required_argument, NULL, 'o'},
    {"backend", required_argument, NULL, 'b'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};
const tb_cmd_opts tb_opts_profile = {longopts, ":w:s:o:b:h", NULL};

/* Is name an executable on PATH (or a path to one)? */
static bool on_path(const char *name)
{
    if (strchr(name, '/'))
        return access(name, X_OK) == 0;
    const char *path = getenv("PATH");
    char dir[4096];
    while (path && *path) {
        size_t n = strcspn(path, ":");
        if (n && n + strlen(name) + 2 < sizeof dir) {
            snprintf(dir, sizeof dir, "%.*s/%s", (int)n, path, name);
            if (access(dir, X_OK) == 0)
                return true;
        }
        path += n + (path[n] == ':');
    }
    return false;
}

/* ---- the parent ---------------------------------------------------------- */

/* Run argv (NULL-terminated) with stdout and stderr to log; its exit
 * status, or -1 when it could not start or died by a signal. */
static int run_logged(const char *const *argv, const char *log, bool isa)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        FILE *f = fopen(log, "w");
        if (f) {
            dup2(fileno(f), 1);
            dup2(fileno(f), 2);
        }
        if (isa) /* valgrind cannot run AVX-512 code */
            setenv("TBENCH_ISA", "avx2", 1);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The last non-empty line of file path into buf ("" when none). */
static void last_line(const char *path, char *buf, size_t len)
{
    char *data = NULL, err[256];
    size_t n = 0;
    buf[0] = '\0';
    if (tb_read_file(path, &data, &n, err, sizeof err))
        return;
    while (n && (data[n - 1] == '\n' || data[n - 1] == ' '))
        data[--n] = '\0';
    char *nl = strrchr(data, '\n');
    snprintf(buf, len, "%s", nl ? nl + 1 : data);
    free(data);
}

/* After perf record: a flamegraph.svg in dir when FlameGraph's scripts
 * or inferno are on PATH, else perf report's text; says where. */
static void perf_report(const char *dir, const char *data, const char *log)
{
    char txt[3300], cmd[7000];
    bool fg = on_path("stackcollapse-perf.pl") && on_path("flamegraph.pl");
    bool inf = on_path("inferno-collapse-perf") &&
               on_path("inferno-flamegraph");
    if (fg || inf) {
        snprintf(txt, sizeof txt, "%s/flamegraph.svg", dir);
        snprintf(cmd, sizeof cmd, "perf script -i '%s' 2>/dev/null | %s | "
                 "%s > '%s'", data,
                 fg ? "stackcollapse-perf.pl" : "inferno-collapse-perf",
                 fg ? "flamegraph.pl" : "inferno-flamegraph", txt);
    } else {
        snprintf(txt, sizeof txt, "%s/perf-report.txt", dir);
        snprintf(cmd, sizeof cmd, "perf report --stdio -i '%s' > '%s' "
                 "2>/dev/null", data, txt);
    }
    const char *sh[] = {"/bin/sh", "-c", cmd, NULL};
    if (run_logged(sh, log, false) != 0)
        fprintf(stderr, "tbench: profile: could not write %s (log: %s)\n",
                txt, log);
    else
        printf("%s: %s\n", fg || inf ? "flamegraph" : "report", txt);
    printf("open: perf report -i %s\n", data);
}

int tb_cmd_profile(int argc, char **argv)
{
    const char *with = "perf", *out = NULL, *backend = NULL;
    double seconds = 5;
    char *sec_s = NULL;
    int c;
    bool first = true;
    while ((c = tb_opt_next(argc, argv, &tb_opts_profile, &first)) != -1) {
        switch (c) {
        case 'w': with = optarg; break;
        case 'o': out = optarg; break;
        case 'b': backend = optarg; break;
        case 's':
            seconds = strtod(optarg, &sec_s);
            if (sec_s == optarg || *sec_s || !(seconds > 0 &&
                                               seconds <= 3600))
                return tb_usage_error("profile: --seconds: expected a "
                                      "number above 0, up to 3600, not "
                                      "'%s'", optarg);
            break;
        case 'h': tb_cmd_usage(stdout, "profile"); return TB_EXIT_OKAY;
        default: return tb_opt_error("profile", c, argv, longopts);
        }
    }
    int tool = -1;
    for (int t = 0; t < T_COUNT; t++)
        if (!strcmp(with, tool_name[t]))
            tool = t;
    if (tool < 0)
        return tb_usage_error("profile: --with is perf, callgrind, massif, "
                              "nsys or ncu, not '%s'", with);
    if (optind + 1 >= argc)
        return tb_usage_error("profile: %s", "give CASE-ID and the "
                              "config(s) it comes from");
    const char *id = argv[optind];
    int ncfg = argc - optind - 1;
    tb_config *cfgs = calloc((size_t)ncfg, sizeof *cfgs);
    tb_plan plan = {0};
    const tb_case *cs;
    if (!cfgs)
        return TB_EXIT_USAGE;
    int rc = tb_profile_find_case(argv + optind + 1, ncfg, backend, id,
                                  cfgs, &plan, &cs);
    free(cfgs);
    if (rc)
        return rc;
    tb_plan_free(&plan);
    if ((tool == T_CALLGRIND || tool == T_MASSIF) &&
        TB_SANITIZED) {
        fprintf(stderr, "tbench: profile: --with %s: tbench was built with "
                "sanitizers (%s), which valgrind cannot run\n", with,
                TB_SANITIZE);
        return TB_EXIT_USAGE;
    }
    if (!on_path(tool_exe[tool])) {
        fprintf(stderr, "tbench: profile: --with %s: '%s' is not installed "
                "(not on PATH)\n", with, tool_exe[tool]);
        return TB_EXIT_USAGE;
    }
    char dir[3000], err[1024];
    snprintf(dir, sizeof dir, "%s", out ? out : "profile");
    if (tb_mkdir_p(dir, err, sizeof err))
        return tb_usage_error("profile: -o: %s", err);
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0)
        return tb_usage_error("profile: %s", "cannot find this executable "
                              "(/proc/self/exe)");
    self[sl] = '\0';
    char secs[32], data[3200], log[3200], opt[3300];
    snprintf(secs, sizeof secs, "%g", seconds);
    snprintf(log, sizeof log, "%s/%s.log", dir, with);
    static const char *const data_name[T_COUNT] = {
        "perf.data", "callgrind.out", "massif.out", "report", "report"};
    snprintf(data, sizeof data, "%s/%s", dir, data_name[tool]);
    const char *av[32];
    int n = 0;
    switch (tool) {
    case T_PERF:
        av[n++] = "perf"; av[n++] = "record"; av[n++] = "-g";
        av[n++] = "-o"; av[n++] = data; av[n++] = "--";
        break;
    case T_CALLGRIND:
    case T_MASSIF:
        snprintf(opt, sizeof opt, "--%s-out-file=%s", with, data);
        av[n++] = "valgrind";
        av[n++] = tool == T_CALLGRIND ? "--tool=callgrind" : "--tool=massif";
        av[n++] = opt;
        if (tool == T_CALLGRIND) {
            av[n++] = "--collect-atstart=no";
            av[n++] = "--instr-atstart=yes";
        }
        break;
    case T_NSYS:
        av[n++] = "nsys"; av[n++] = "profile"; av[n++] = "-o";
        av[n++] = data; av[n++] = "--trace=cuda,nvtx";
        break;
    default:
        av[n++] = "ncu"; av[n++] = "-o"; av[n++] = data;
        av[n++] = "--nvtx";
        break;
    }
    av[n++] = self; av[n++] = "__profile-run"; av[n++] = "--seconds";
    av[n++] = secs;
    if (backend) {
        av[n++] = "--backend";
        av[n++] = backend;
    }
    av[n++] = id;
    for (int i = 0; i < ncfg && n < 31; i++)
        av[n++] = argv[optind + 1 + i];
    av[n] = NULL;
    fprintf(stderr, "tbench: profile: %s under %s for about %s s...\n", id,
            with, secs);
    int st = run_logged(av, log, tool == T_CALLGRIND || tool == T_MASSIF);
    struct stat sb;
    if (st != 0 || (tool <= T_MASSIF && stat(data, &sb) != 0)) {
        char last[512];
        last_line(log, last, sizeof last);
        fprintf(stderr, "tbench: profile: %s failed (exit %d): %s (log: "
                "%s)\n", with, st, last[0] ? last : "no output", log);
        return TB_EXIT_USAGE;
    }
    printf("profile: %s\n", data);
    if (tool == T_PERF) {
        perf_report(dir, data, log);
    } else if (tool == T_CALLGRIND) {
        printf("open: kcachegrind %s   (text: callgrind_annotate %s)\n",
               data, data);
    } else if (tool == T_MASSIF) {
        printf("open: ms_print %s   (or massif-visualizer)\n", data);
    } else {
        printf("open: %s %s\n", tool == T_NSYS ? "nsys-ui" : "ncu-ui",
               data);
    }
    return TB_EXIT_OKAY;
}
