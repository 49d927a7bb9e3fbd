/* Terminal width and colour (term.h). */
#include "term.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../base/result_schema.h"

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
    switch (tb_res_word_tone(w)) {
    case TB_RES_BAD: return "\033[31m";
    case TB_RES_WARN: return TB_TERM_YELLOW;
    case TB_RES_GOOD: return "\033[32m";
    case TB_RES_PLAIN: break;
    }
    return "";
}
