/* "Did you mean" (suggest.h). */
#include "suggest.h"

#include <string.h>

#define FAR 99 /* the distance of words too long to compare */

int tb_edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63)
        return FAR;
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

const char *tb_closest_within(const char *word, const char *const *names,
                              int n, int max_edits)
{
    const char *best = NULL;
    int bd = FAR;
    for (int i = 0; i < n; i++) {
        if (!names[i])
            continue;
        int d = tb_edit_distance(word, names[i]);
        if (d < bd) {
            bd = d;
            best = names[i];
        }
    }
    return bd <= max_edits ? best : NULL;
}

const char *tb_closest(const char *word, const char *const *names, int n)
{
    size_t wl = strlen(word);
    /* close enough to be a typo: 1 edit for short words, a third of the
     * word for longer ones */
    int limit = wl <= 4 ? 1 : (int)wl / 3;
    return tb_closest_within(word, names, n, limit);
}
