/* Output folders written all or nothing (exec -o, plot -o, report's
 * charts): the files go to a temporary folder next to the target, which
 * replaces the target at the end; on failure (a full disk, a write error)
 * it is removed and the target is as it was.  The temporary folder comes
 * from mkdtemp and stays private (0700) until the commit, so nobody else
 * can plant a file or a symlink where its files are written. */
#ifndef TB_BASE_OUTDIR_H
#define TB_BASE_OUTDIR_H

#include <limits.h>
#include <stddef.h>

typedef struct tb_outdir {
    char target[PATH_MAX]; /* the folder asked for, without trailing '/' */
    char tmp[PATH_MAX];    /* TARGET.tmp-XXXXXX, where the files go */
} tb_outdir;

/* Create the temporary folder for target (and target's parent folders).
 * Refuses a target that exists and is not a folder.  0 or TB_EIO with
 * "PATH: reason" in err. */
int tb_outdir_begin(tb_outdir *d, const char *target, char *err,
                    size_t errlen);

/* Move the files into place: the temporary folder gets mkdir's mode
 * (0777 & ~umask) and is renamed to the target; when the target is a
 * folder that already has files, or a symlink to a folder, each new file
 * is renamed into it (replacing one of the same name, or a symlink there,
 * not what it points to; a rename needs no free space).  On failure the
 * temporary folder is removed.
 * 0 or TB_EIO with the reason in err. */
int tb_outdir_commit(tb_outdir *d, char *err, size_t errlen);

/* Remove the temporary folder and the files in it (one level: exec and
 * plot write no subfolders).  Safe to call after a failed begin. */
void tb_outdir_discard(tb_outdir *d);

#endif
