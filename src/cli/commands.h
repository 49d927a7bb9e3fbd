/* The tbench commands.  Each takes (argc, argv) with argv[0] the command
 * name and returns the process exit status. */
#ifndef TB_CLI_COMMANDS_H
#define TB_CLI_COMMANDS_H

#include <stdbool.h>
#include <stdio.h>

enum {
    TB_EXIT_OKAY = 0,  /* success */
    TB_EXIT_CASES = 1, /* run: a case failed its check or errored */
    TB_EXIT_USAGE = 2, /* usage or input error; nothing written */
    TB_EXIT_BROKEN = 3, /* ab: stopped early by a worker or a write that
                           failed: the blocks so far are judged and
                           written, but it is no verdict of the change */
    TB_EXIT_INTR = 130 /* interrupted (SIGINT; run: 128 + the signal);
                        * finished cases are kept */
};

/* The words of the options whose values are words, each declared once
 * (tb_word_index picks; `tbench __options` offers them): */
#define TB_TEXT_FORMATS "text md json"     /* compare, history, ab --format:
                                              0, 1, 2 */
#define TB_TARGETS_FORMATS "text json"     /* targets --format */
#define TB_CHART_FORMATS "png svg"         /* plot --format: one or both,
                                              comma-joined */
#define TB_AB_ESTIMATORS "min median"      /* ab --estimator */

struct option;
/* The options a command's parser takes, as it declares them: its
 * getopt_long table and optstring, and for the commands that share one
 * table (compare/history/export, plot/report) which entries are theirs
 * (NULL: all).  `tbench __options` prints them, and the shell
 * completions are generated from that (scripts/gen_cli_docs.py). */
typedef struct tb_cmd_opts {
    const struct option *longopts;
    const char *shorts;
    bool (*takes)(const char *cmd, const char *name);
} tb_cmd_opts;

extern const tb_cmd_opts tb_opts_run, tb_opts_list, tb_opts_exec,
    tb_opts_peak, tb_opts_plot, tb_opts_report, tb_opts_compare,
    tb_opts_history, tb_opts_export, tb_opts_targets, tb_opts_show,
    tb_opts_selftest, tb_opts_merge, tb_opts_ab, tb_opts_profile;

typedef struct tb_command {
    const char *name;
    const char *synopsis;
    const char *help; /* lines indented by 4, each ending in \n */
    int (*fn)(int argc, char **argv);
    const tb_cmd_opts *opts; /* NULL: internal (worker), not completed */
} tb_command;

int tb_cmd_run(int argc, char **argv);
int tb_cmd_list(int argc, char **argv);
int tb_cmd_exec(int argc, char **argv);
int tb_cmd_peak(int argc, char **argv);
int tb_cmd_plot(int argc, char **argv);   /* cmd_report.c */
int tb_cmd_report(int argc, char **argv); /* cmd_report.c */
int tb_cmd_compare(int argc, char **argv); /* cmd_compare.c */
int tb_cmd_history(int argc, char **argv); /* cmd_compare.c */
int tb_cmd_export(int argc, char **argv);  /* cmd_compare.c */
int tb_cmd_show(int argc, char **argv);
int tb_cmd_ab(int argc, char **argv);      /* cmd_ab.c */
int tb_cmd_worker(int argc, char **argv);  /* cmd_ab.c */
int tb_cmd_selftest(int argc, char **argv);
/* `__instr-count`: the counting process of measure.instructions
 * (cmd_instr.c); dispatched by main, not in the command table. */
int tb_cmd_instr_count(int argc, char **argv);
int tb_cmd_merge(int argc, char **argv);
int tb_cmd_profile(int argc, char **argv);     /* cmd_profile.c */
/* `__profile-run`: the case run under the profiler (cmd_profile.c);
 * dispatched by main, not in the command table. */
int tb_cmd_profile_run(int argc, char **argv);
struct tb_config;
struct tb_plan;
struct tb_case;
/* The case id of the configs' plan (cmd_profile_run.c): 0 with *cs in
 * *plan (free it), or TB_EXIT_USAGE after one line naming the config or
 * the id.  cfgs: ncfg zeroed configs, freed before it returns. */
int tb_profile_find_case(char **cfg_paths, int ncfg, const char *backend,
                         const char *id, struct tb_config *cfgs,
                         struct tb_plan *plan, const struct tb_case **cs);
int tb_cmd_targets(int argc, char **argv);

/* Print the whole --help text (generated from the command table). */
void tb_usage(FILE *f);
/* Print the help of one command (its row of the table: what `tbench
 * help CMD` and `tbench CMD --help` show). */
void tb_cmd_usage(FILE *f, const char *cmd);

struct option;
/* After getopt_long returned ':' (a value is missing) or '?' (an unknown
 * option), with opterr = 0: print one line naming the option, with the
 * closest of longopts when it looks like a typo ("did you mean
 * '--filter'?"), and a hint; returns TB_EXIT_USAGE. */
int tb_opt_error(const char *cmd, int c, char **argv,
                 const struct option *longopts);
/* The next option of argv, as getopt_long gives it with o's table and
 * optstring.  *first (true before the first call of a parse) resets
 * getopt's state: optind 0, not 1, so glibc re-reads the option string
 * and a second parse in one process (the CLI fuzzer) does not resume
 * inside the previous argv (a use after free the fuzzer found); opterr
 * 0, so tb_opt_error words the messages.  opts.c. */
int tb_opt_next(int argc, char **argv, const tb_cmd_opts *o, bool *first);
/* The helpers below are cli_util.c's (tb_opt_error: opts.c). */

/* "tbench: <fmt with arg>" + a hint on stderr; returns TB_EXIT_USAGE. */
int tb_usage_error(const char *fmt, const char *arg);

/* s seconds as "1:05" or "1:02:03" (progress lines). */
void tb_fmt_clock(double s, char *buf, size_t len);

/* -o PATH of command cmd, checked before any work (peak and selftest
 * measure for seconds first; plot): with folder, PATH must be a folder
 * or not exist; else PATH's folder must exist.  0, or TB_EXIT_USAGE
 * after one line.  (opts.c) */
int tb_out_check(const char *cmd, const char *path, bool folder);

/* 0 when the environment variables that change a run are unset or well
 * formed: TBENCH_FAULT (src/harness/runner.h), TBENCH_ISA (scalar,
 * avx2, avx512 or auto) and TBENCH_CALIB_SCALE (src/ops/calib.h); otherwise prints one line naming the variable
 * and what is wrong and returns TB_EXIT_USAGE.  run and exec call it before
 * anything runs. */
int tb_env_check(void);

/* The --filter and --exclude patterns of a command (run, ab): the
 * arrays a tb_plan_opts points to. */
#define TB_PATTERNS_MAX 64
typedef struct tb_cli_patterns {
    const char *filters[TB_PATTERNS_MAX];
    const char *excludes[TB_PATTERNS_MAX];
} tb_cli_patterns;

struct tb_plan_opts;
/* Option c ('f' --filter, 'x' --exclude) of command cmd with value arg:
 * append arg to p's patterns and count it in o (whose arrays become
 * p's).  0, or TB_EXIT_USAGE after the message (more than
 * TB_PATTERNS_MAX of a kind). */
int tb_opt_pattern(const char *cmd, int c, const char *arg,
                   tb_cli_patterns *p, struct tb_plan_opts *o);

#endif
