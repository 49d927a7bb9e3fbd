/* Writing gnuplot charts (plot.c and training.c's step-rate chart):
 * NAME.dat and NAME.gp in a folder, through the one file opener, with
 * the scripts' common head. */
#ifndef TB_REPORT_GPSCRIPT_H
#define TB_REPORT_GPSCRIPT_H

#include <stddef.h>
#include <stdio.h>

/* dir/name.ext opened for writing (base/fileio.h's tb_fopen_write), or
 * NULL with "PATH: reason" in err. */
FILE *tb_gp_open(const char *dir, const char *name, const char *ext,
                 char *err, size_t errlen);

/* Close a file of tb_gp_open: 0, or TB_EIO with "dir/name.ext: write
 * error" in err when a write or the close failed. */
int tb_gp_close(FILE *f, const char *dir, const char *name, const char *ext,
                char *err, size_t errlen);

/* s as a gnuplot single-quoted string ('' stands for one quote; line
 * breaks dropped). */
void tb_gp_str(FILE *f, const char *s);

/* The script's common head: how to render it again, the title, the key
 * below the plot in two columns (so the data keep the chart's full
 * width), a grid. */
void tb_gp_head(FILE *f, const char *name, const char *title);

#endif
