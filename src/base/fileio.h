/* File helpers for result writing: atomic replace and mkdir -p. */
#ifndef TB_BASE_FILEIO_H
#define TB_BASE_FILEIO_H

#include <stddef.h>

/* Write data to path atomically: a temporary file in the same directory,
 * fsync, rename over path.  A reader sees the old or the new file, never
 * a partial one.  Returns 0 or TB_EIO with "path: reason" in err. */
int tb_write_atomic(const char *path, const void *data, size_t len,
                    char *err, size_t errlen);

/* Create dir and its parents (like mkdir -p).  0 or TB_EIO. */
int tb_mkdir_p(const char *dir, char *err, size_t errlen);

/* Read a whole file into a NUL-terminated heap buffer (caller frees).
 * 0, TB_EIO or TB_ENOMEM with the reason in err. */
int tb_read_file(const char *path, char **data, size_t *len, char *err,
                 size_t errlen);

#endif
