/* Shared command-line handling: option errors with a suggestion ("did
 * you mean", src/base/suggest.h), and the early check of -o paths. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../base/suggest.h"
#include "commands.h"

int tb_opt_next(int argc, char **argv, const tb_cmd_opts *o, bool *first)
{
    if (*first) {
        opterr = 0;
        optind = 0;
        *first = false;
    }
    return getopt_long(argc, argv, o->shorts, o->longopts, NULL);
}

int tb_opt_error(const char *cmd, int c, char **argv,
                 const struct option *longopts)
{
    const char *arg = argv[optind - 1];
    char shortopt[3] = {'-', (char)optopt, 0};
    /* glibc: an unknown long option leaves optopt 0; an unknown short
     * one sets it, and inside a bundle ("-qz") optind may still point at
     * that word, so name the letter itself */
    if (c == '?' && optopt > 0 && optopt < 256)
        arg = shortopt;
    else if (c == ':' && arg && strncmp(arg, "--", 2) != 0)
        arg = shortopt;
    if (c == ':') {
        fprintf(stderr, "tbench: %s: option '%s' needs a value\n"
                "Try 'tbench help %s'.\n", cmd, arg, cmd);
        return TB_EXIT_USAGE;
    }
    const char *suggest = NULL;
    if (arg && !strncmp(arg, "--", 2) && longopts) {
        char word[64];
        snprintf(word, sizeof word, "%s", arg + 2);
        word[strcspn(word, "=")] = 0;
        const char *names[128];
        int n = 0;
        for (const struct option *o = longopts; o->name && n < 128; o++)
            names[n++] = o->name;
        suggest = tb_closest(word, names, n);
    }
    if (suggest)
        fprintf(stderr, "tbench: %s: unknown option '%s'; did you mean "
                "'--%s'?\nTry 'tbench help %s'.\n", cmd, arg, suggest, cmd);
    else
        fprintf(stderr, "tbench: %s: unknown option '%s'\nTry 'tbench help "
                "%s'.\n", cmd, arg ? arg : "?", cmd);
    return TB_EXIT_USAGE;
}

int tb_out_check(const char *cmd, const char *path, bool folder)
{
    struct stat st;
    if (folder) {
        if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "tbench: %s: -o %s: exists and is not a "
                    "folder\n", cmd, path);
            return TB_EXIT_USAGE;
        }
        return 0;
    }
    char dir[4096];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1,
             slash ? (slash == path ? "/" : path) : ".");
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "tbench: %s: -o %s: no folder %s\n", cmd, path,
                dir);
        return TB_EXIT_USAGE;
    }
    return 0;
}
