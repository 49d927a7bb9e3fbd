/* File helpers: atomic replace, mkdir -p and the whole-file reader. */
#ifndef TB_BASE_FILEIO_H
#define TB_BASE_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <limits.h>
#include <sys/types.h>

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

/* tb_write_atomic in steps, for a file written piece by piece in
 * constant memory (`run`'s results.json): begin creates the temporary
 * file beside path as tb_write_atomic does, put appends bytes (put_fd:
 * the first len bytes of fd, read with pread), commit fsyncs it and
 * renames it over path, discard removes it.  After a failure of put,
 * put_fd or commit the temporary file is already removed (discard is
 * then harmless).  Each returns 0 or TB_EIO with "path: reason" in err
 * (EFBIG and ENOSPC included). */
typedef struct tb_atomic {
    int fd;              /* the temporary file, or -1 */
    char path[PATH_MAX]; /* the target */
    char tmp[PATH_MAX];  /* the temporary file's name, or "" */
} tb_atomic;
int tb_atomic_begin(tb_atomic *a, const char *path, char *err,
                    size_t errlen);
int tb_atomic_put(tb_atomic *a, const void *data, size_t len, char *err,
                  size_t errlen);
int tb_atomic_put_fd(tb_atomic *a, int fd, off_t len, char *err,
                     size_t errlen);
int tb_atomic_commit(tb_atomic *a, char *err, size_t errlen);
void tb_atomic_discard(tb_atomic *a);

/* Hand the first len bytes of fd (read with pread, 64 KB at a time; the
 * file offset is not moved) to put(ctx, piece, n), in order.  0;
 * TB_EIO with errno set when a read fails or the file is shorter; or
 * put's non-zero return, which stops it. */
int tb_fd_each(int fd, off_t len,
               int (*put)(void *ctx, const void *p, size_t n), void *ctx);

/* fopen(path, "w") that never follows a symlink at path (O_NOFOLLOW: it
 * fails with ELOOP) and is closed on exec.  For files written inside a
 * folder of our own (tb_outdir's), where a link could only be planted by
 * mistake; a file that replaces one in a shared folder goes through
 * tb_write_atomic.  NULL with errno set on failure. */
FILE *tb_fopen_write(const char *path);

/* Create dir and its parents (like mkdir -p).  0 or TB_EIO. */
int tb_mkdir_p(const char *dir, char *err, size_t errlen);

/* tb_read_file_max's flags. */
#define TB_READ_NO_NUL 1u /* a NUL byte in the file is an error */

/* Why tb_read_file_max failed, for the caller's own message. */
typedef struct tb_read_fail {
    int errnum;    /* TB_EIO: errno of the failed open or read */
    bool opening;  /* TB_EIO: the open failed (else a read) */
    size_t nul_at; /* TB_EPARSE: offset of the first NUL byte */
} tb_read_fail;

/* The one whole-file reader: path's bytes into a NUL-terminated heap
 * buffer *data (caller frees) of *len bytes (len may be NULL).  A file
 * of more than max_bytes bytes is refused as soon as that many have been
 * read.  Returns 0; TB_EIO (the open or a read failed), TB_ERANGE (too
 * large), TB_EPARSE (flags has TB_READ_NO_NUL and the file holds a NUL
 * byte) or TB_ENOMEM; then *data is untouched and *why (may be NULL)
 * says more.  Each caller words its own message (report/resultsio.c's
 * reader: TB_READ_NO_NUL and TB_RES_MAX_BYTES). */
int tb_read_file_max(const char *path, size_t max_bytes, unsigned flags,
                     char **data, size_t *len, tb_read_fail *why);

/* tb_read_file_max without a limit or flags, and with the message
 * ("PATH: reason") in err.  0, TB_EIO or TB_ENOMEM. */
int tb_read_file(const char *path, char **data, size_t *len, char *err,
                 size_t errlen);

#endif
