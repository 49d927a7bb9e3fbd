/* Terminal width and colour (term.h). */
#include "term.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int tb_term_width(int fd)
{
    struct winsize ws;
    int w = 0;
    if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0)
        w = ws.ws_col;
    if (w <= 0) {
        const char *c = getenv("COLUMNS");
        char *end;
        long v = c ? strtol(c, &end, 10) : 0;
        w = c && *c && !*end && v > 0 && v < 10000 ? (int)v : 80;
    }
    return w < 20 ? 20 : w;
}

bool tb_term_color(int fd)
{
    const char *nc = getenv("NO_COLOR");
    const char *term = getenv("TERM");
    return isatty(fd) && !(nc && *nc) && !(term && !strcmp(term, "dumb"));
}

const char *tb_term_status_color(const char *w)
{
    static const char *const red[] = {"failed-check", "error", "crashed",
                                      "timeout", "regressed", "failure",
                                      "counters", "removed", NULL};
    static const char *const yellow[] = {"unsupported", "unavailable",
                                         "skipped", "status-changed", NULL};
    static const char *const green[] = {"ok", "improved", "fixed", NULL};
    for (int i = 0; red[i]; i++)
        if (!strcmp(w, red[i]))
            return "\033[31m";
    for (int i = 0; yellow[i]; i++)
        if (!strcmp(w, yellow[i]))
            return TB_TERM_YELLOW;
    for (int i = 0; green[i]; i++)
        if (!strcmp(w, green[i]))
            return "\033[32m";
    return "";
}
