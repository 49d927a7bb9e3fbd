/* gnuplot chart files (gpscript.h). */
#include "gpscript.h"

#include <errno.h>
#include <string.h>

#include "../base/error.h"
#include "../base/fileio.h"

FILE *tb_gp_open(const char *dir, const char *name, const char *ext,
                 char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
    FILE *f = tb_fopen_write(path);
    if (!f)
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return f;
}

int tb_gp_close(FILE *f, const char *dir, const char *name, const char *ext,
                char *err, size_t errlen)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        snprintf(err, errlen, "%s/%s.%s: write error", dir, name, ext);
        return TB_EIO;
    }
    return 0;
}

void tb_gp_str(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        if (*s != '\n')
            fputc(*s, f);
    }
    fputc('\'', f);
}

void tb_gp_head(FILE *f, const char *name, const char *title)
{
    fprintf(f, "# tbench plot: %s\n# Render it again: cd to this folder, "
               "then: gnuplot %s.gp\n",
            title, name);
    fprintf(f, "set encoding utf8\nset title ");
    tb_gp_str(f, title);
    fprintf(f, " noenhanced\nset key below left horizontal maxcols 2 "
               "maxrows 40 noenhanced\nset grid\n");
}
