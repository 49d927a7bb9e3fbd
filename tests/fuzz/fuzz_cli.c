/* libFuzzer harness: the command-line parsers of the commands that read
 * files (compare, history, export, report, plot, list).  The input's
 * first byte picks the command; the rest, split at NUL bytes, is its
 * argv.  run and exec are left out: a well-formed command line makes
 * them benchmark (their options are checked by tests/test_cli*.py).
 * Arguments are kept to relative paths without '..' (the fuzzer runs as
 * whoever runs CI): they name nothing, or the files of the temporary
 * working folder tests/fuzz/run_fuzz.py gives it.  Seeds: tests/fuzz/corpus/cli.  Run
 * with -close_fd_mask=3: the commands print. */
#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("TBENCH_GNUPLOT", "/nonexistent/gnuplot", 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {
        {"compare", tb_cmd_compare}, {"history", tb_cmd_history},
        {"export", tb_cmd_export},   {"report", tb_cmd_report},
        {"plot", tb_cmd_plot},       {"list", tb_cmd_list},
    };
    if (size < 1 || size > 4096)
        return 0;
    int which = data[0] % (int)(sizeof cmds / sizeof cmds[0]);
    char *buf = malloc(size + 1);
    char *argv[66];
    int argc = 0;
    if (!buf)
        return 0;
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = '\0';
    argv[argc++] = (char *)cmds[which].name;
    for (size_t i = 0; i < size - 1 && argc < 64;) {
        /* stay in the working folder: no absolute paths, no '..' */
        if (buf[i] == '/' || strstr(buf + i, "..")) {
            free(buf);
            return 0;
        }
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    argv[argc] = NULL;
    optind = 0;
    (void)cmds[which].fn(argc, argv);
    free(buf);
    return 0;
}
