/* Shared command-line handling: option errors with a suggestion ("did
 * you mean"), and the closest of a set of names (commands.h). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"

/* Edit distance (insertions, deletions, substitutions, and swaps of two
 * neighbours) between a and b, both at most 63 bytes; 99 when longer. */
static int distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63)
        return 99;
    int d[64][64];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            int v = sub < del ? sub : del;
            v = v < ins ? v : ins;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
                a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

const char *tb_closest(const char *word, const char *const *names, int n)
{
    const char *best = NULL;
    int bd = 99;
    size_t wl = strlen(word);
    for (int i = 0; i < n; i++) {
        if (!names[i])
            continue;
        int d = distance(word, names[i]);
        if (d < bd) {
            bd = d;
            best = names[i];
        }
    }
    /* close enough to be a typo: 1 edit for short words, a third of the
     * word for longer ones */
    int limit = wl <= 4 ? 1 : (int)wl / 3;
    return bd <= limit ? best : NULL;
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
        return EXIT_USAGE;
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
    return EXIT_USAGE;
}
