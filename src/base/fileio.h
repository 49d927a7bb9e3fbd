/* File helpers for result writing: atomic replace and mkdir -p. */
#ifndef TB_BASE_FILEIO_H
#define TB_BASE_FILEIO_H

#include <stddef.h>
#include <stdio.h>

/* Write data to path atomically: a new file "<path>.tmp.XXXXXX" in the
 * same directory (XXXXXX random; created with O_EXCL|O_NOFOLLOW, so a
 * file or symlink planted at any name is never opened or followed), fsync,
 * rename over path.  A reader sees the old or the new file, never a
 * partial one.  When path itself is a symlink, the rename replaces the
 * link with the new file and leaves its target alone.  The file's mode is
 * that of a plain create: 0644 & ~umask.  On failure the temporary file is
 * removed.  Returns 0 or TB_EIO with "path: reason" in err. */
int tb_write_atomic(const char *path, const void *data, size_t len,
                    char *err, size_t errlen);

/* fopen(path, "w") that never follows a symlink at path (O_NOFOLLOW: it
 * fails with ELOOP) and is closed on exec.  For files written inside a
 * folder of our own (tb_outdir's), where a link could only be planted by
 * mistake; a file that replaces one in a shared folder goes through
 * tb_write_atomic.  NULL with errno set on failure. */
FILE *tb_fopen_write(const char *path);

/* Create dir and its parents (like mkdir -p).  0 or TB_EIO. */
int tb_mkdir_p(const char *dir, char *err, size_t errlen);

/* Read a whole file into a NUL-terminated heap buffer (caller frees).
 * 0, TB_EIO or TB_ENOMEM with the reason in err. */
int tb_read_file(const char *path, char **data, size_t *len, char *err,
                 size_t errlen);

#endif
