/* All-or-nothing output folders: see outdir.h. */
#include "outdir.h"

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "fileio.h"

int tb_outdir_begin(tb_outdir *d, const char *target, char *err,
                    size_t errlen)
{
    d->tmp[0] = '\0';
    size_t l = strlen(target);
    while (l > 1 && target[l - 1] == '/')
        l--;
    if (l == 0 || l + 16 >= sizeof d->target) {
        snprintf(err, errlen, "%s: not a usable folder name", target);
        return TB_EIO;
    }
    memcpy(d->target, target, l);
    d->target[l] = '\0';
    struct stat st;
    if (stat(d->target, &st) == 0 && !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: exists and is not a folder", d->target);
        return TB_EIO;
    }
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", d->target);
    int rc = tb_mkdir_p(dirname(parent), err, errlen);
    if (rc)
        return rc;
    memcpy(d->tmp, d->target, l); /* l + 16 < PATH_MAX: checked above */
    memcpy(d->tmp + l, ".tmp-XXXXXX", 12);
    if (!mkdtemp(d->tmp)) {
        snprintf(err, errlen, "%s: cannot create a temporary folder next "
                 "to it: %s", d->target, strerror(errno));
        d->tmp[0] = '\0';
        return TB_EIO;
    }
    /* mkdtemp makes it 0700: it stays private while it is written (no
     * one else can plant a file or a symlink in it); it gets mkdir's mode
     * at the commit */
    return 0;
}

void tb_outdir_discard(tb_outdir *d)
{
    if (!d->tmp[0])
        return;
    DIR *dir = opendir(d->tmp);
    if (dir) {
        struct dirent *e;
        char p[PATH_MAX + 256];
        while ((e = readdir(dir))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(p, sizeof p, "%s/%s", d->tmp, e->d_name);
            unlink(p);
        }
        closedir(dir);
    }
    rmdir(d->tmp);
    d->tmp[0] = '\0';
}

int tb_outdir_commit(tb_outdir *d, char *err, size_t errlen)
{
    /* the folder as mkdir makes it, 0777 & ~umask, once it is complete */
    mode_t um = umask(0);
    umask(um);
    if (chmod(d->tmp, 0777 & ~um) != 0) {
        snprintf(err, errlen, "%s: %s", d->tmp, strerror(errno));
        tb_outdir_discard(d);
        return TB_EIO;
    }
    if (rename(d->tmp, d->target) == 0) {
        d->tmp[0] = '\0';
        return 0;
    }
    /* ENOTDIR: the target is a symlink (to a folder, begin checked) */
    if (errno != ENOTEMPTY && errno != EEXIST && errno != ENOTDIR) {
        snprintf(err, errlen, "%s: cannot rename %s to it: %s", d->target,
                 d->tmp, strerror(errno));
        tb_outdir_discard(d);
        return TB_EIO;
    }
    /* the target folder has files: move the new ones in (rename
     * replaces a symlink planted at a name, never follows it) */
    DIR *dir = opendir(d->tmp);
    if (!dir) {
        snprintf(err, errlen, "%s: %s", d->tmp, strerror(errno));
        tb_outdir_discard(d);
        return TB_EIO;
    }
    struct dirent *e;
    char from[PATH_MAX + 256], to[PATH_MAX + 256];
    int rc = 0;
    while ((e = readdir(dir)) && !rc) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(from, sizeof from, "%s/%s", d->tmp, e->d_name);
        snprintf(to, sizeof to, "%s/%s", d->target, e->d_name);
        if (rename(from, to) != 0) {
            snprintf(err, errlen, "%s: %s", to, strerror(errno));
            rc = TB_EIO;
        }
    }
    closedir(dir);
    tb_outdir_discard(d);
    return rc;
}
