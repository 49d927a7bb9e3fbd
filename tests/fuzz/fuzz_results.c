/* libFuzzer harness: the one result loader (src/report/resultsio.c) and
 * every command that reads result files, on any bytes.  The input is
 * loaded from memory; when the loader accepts it, it is also written to
 * a file and given to compare, history, export, report (--with and
 * --baseline) and plot, as the command line would, so that whatever the
 * loader lets through is exercised by each reader.  Seeds:
 * tests/fuzz/corpus/results, plus every corrupt fixture of
 * tests/data/corrupt and the report fixtures (tests/fuzz/meson.build).  Run with -close_fd_mask=3: the commands
 * print. */
#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "report/resultsio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char dir[64], file[96], md[96], plots[96];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(dir, sizeof dir, "/tmp/tbench-fuzz-results-%ld",
             (long)getpid());
    snprintf(file, sizeof file, "%s/r.json", dir);
    snprintf(md, sizeof md, "%s/r.md", dir);
    snprintf(plots, sizeof plots, "%s/p", dir);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    if (system(cmd) != 0)
        abort();
    setenv("TBENCH_GNUPLOT", "/nonexistent/gnuplot", 1);
    return 0;
}

static void cmd(int (*fn)(int, char **), int argc, const char **argv)
{
    char *v[16];
    for (int i = 0; i < argc; i++)
        v[i] = (char *)argv[i];
    v[argc] = NULL;
    optind = 0;
    (void)fn(argc, v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    tb_resfile *f;
    char err[512];
    int rc = tb_resfile_from_text("fuzz.json", text, size, &f, err,
                                  sizeof err);
    free(text);
    if (rc)
        return 0;
    tb_resfile_free(f);
    FILE *o = fopen(file, "wb");
    if (!o)
        abort();
    if (fwrite(data, 1, size, o) != size)
        abort();
    fclose(o);
    cmd(tb_cmd_compare, 3, (const char *[]){"compare", file, file});
    cmd(tb_cmd_history, 3, (const char *[]){"history", file, file});
    cmd(tb_cmd_export, 4, (const char *[]){"export", file, "--format",
                                           "gbench"});
    cmd(tb_cmd_export, 4, (const char *[]){"export", file, "--format",
                                           "bmf"});
    cmd(tb_cmd_report, 9, (const char *[]){"report", file, "--with", file,
                                           "--baseline", file, "-o", md,
                                           "--no-charts"});
    cmd(tb_cmd_plot, 8, (const char *[]){"plot", file, file, "--with", file,
                                         "-o", plots, "--no-render"});
    return 0;
}
