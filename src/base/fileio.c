#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "rng.h"

/* Six characters of [A-Za-z0-9] from the kernel's random source (or,
 * where that fails, from the clock, the pid and a counter): the tail of a
 * temporary name that nobody can know in advance. */
static void temp_suffix(char out[7])
{
    static const char abc[] = "abcdefghijklmnopqrstuvwxyz"
                              "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static atomic_uint_fast64_t calls;
    uint64_t r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r = tb_splitmix64_mix((uint64_t)ts.tv_sec * 1000000000u +
                              (uint64_t)ts.tv_nsec) ^
            tb_splitmix64_mix(((uint64_t)getpid() << 32) ^
                              atomic_fetch_add(&calls, 1));
    }
    for (int i = 0; i < 6; i++, r /= 62)
        out[i] = abc[r % 62];
    out[6] = '\0';
}

/* Create and open for writing a new file "<path>.tmp.XXXXXX" (XXXXXX
 * random), its name in tmp.  O_CREAT|O_EXCL|O_NOFOLLOW: a name that
 * exists, a symlink planted there included, is never opened; another
 * name is tried.  The mode is what a plain create gives (0644 & ~umask,
 * or the folder's default ACL); the process umask is not touched.
 * Returns the fd, or -1 with errno set and tmp empty. */
static int open_temp_beside(const char *path, char *tmp, size_t tmplen)
{
    for (int tries = 0; tries < 100; tries++) {
        char sfx[7];
        temp_suffix(sfx);
        if (snprintf(tmp, tmplen, "%s.tmp.%s", path, sfx) >= (int)tmplen) {
            errno = ENAMETOOLONG;
            break;
        }
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
                               O_CLOEXEC, 0644);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST)
            break;
    }
    tmp[0] = '\0';
    return -1;
}

/* "path: reason" (errno) in err; TB_EIO. */
static int io_fail(const char *path, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return TB_EIO;
}

int tb_atomic_begin(tb_atomic *a, const char *path, char *err,
                    size_t errlen)
{
    a->fd = -1;
    a->tmp[0] = '\0';
    if (snprintf(a->path, sizeof a->path, "%s", path) >=
            (int)sizeof a->path ||
        strlen(path) + sizeof ".tmp.XXXXXX" > sizeof a->tmp) {
        snprintf(err, errlen, "%s: path too long", path);
        return TB_EIO;
    }
    a->fd = open_temp_beside(path, a->tmp, sizeof a->tmp);
    return a->fd < 0 ? io_fail(path, err, errlen) : 0;
}

int tb_atomic_put(tb_atomic *a, const void *data, size_t len, char *err,
                  size_t errlen)
{
    const char *p = data;
    while (len) {
        ssize_t w = write(a->fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            int rc = io_fail(a->path, err, errlen);
            tb_atomic_discard(a);
            return rc;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int tb_fd_each(int fd, off_t len,
               int (*put)(void *ctx, const void *p, size_t n), void *ctx)
{
    char buf[1 << 16];
    for (off_t at = 0; at < len;) {
        size_t want = len - at < (off_t)sizeof buf ? (size_t)(len - at)
                                                    : sizeof buf;
        ssize_t got = pread(fd, buf, want, at);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            if (got == 0)
                errno = EIO; /* shorter than it was: not ours to trust */
            return TB_EIO;
        }
        int rc = put(ctx, buf, (size_t)got);
        if (rc)
            return rc;
        at += got;
    }
    return 0;
}

typedef struct put_into {
    tb_atomic *a;
    char *err;
    size_t errlen;
    bool failed; /* the write failed (else a read) */
} put_into;

static int put_atomic(void *ctx, const void *p, size_t n)
{
    put_into *t = ctx;
    int rc = tb_atomic_put(t->a, p, n, t->err, t->errlen);
    t->failed = rc != 0;
    return rc;
}

int tb_atomic_put_fd(tb_atomic *a, int fd, off_t len, char *err,
                     size_t errlen)
{
    put_into t = {a, err, errlen, false};
    int rc = tb_fd_each(fd, len, put_atomic, &t);
    if (rc && !t.failed) {
        snprintf(err, errlen, "%s: reading back: %s", a->path,
                 strerror(errno));
        tb_atomic_discard(a);
    }
    return rc;
}

int tb_atomic_commit(tb_atomic *a, char *err, size_t errlen)
{
    char dirbuf[PATH_MAX];
    snprintf(dirbuf, sizeof dirbuf, "%s", a->path);
    const char *dir = dirname(dirbuf);
    int fd = a->fd;
    a->fd = -1;
    if (fsync(fd) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        goto fail;
    }
    if (close(fd) != 0)
        goto fail;
    /* rename replaces a symlink at path itself, never what it points to */
    if (rename(a->tmp, a->path) != 0)
        goto fail;
    a->tmp[0] = '\0';
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd); /* best effort: make the rename durable */
        close(dfd);
    }
    return 0;
fail:;
    int rc = io_fail(a->path, err, errlen);
    tb_atomic_discard(a);
    return rc;
}

void tb_atomic_discard(tb_atomic *a)
{
    if (a->fd >= 0)
        close(a->fd);
    a->fd = -1;
    if (a->tmp[0])
        unlink(a->tmp);
    a->tmp[0] = '\0';
}

int tb_write_atomic(const char *path, const void *data, size_t len,
                    char *err, size_t errlen)
{
    tb_atomic a;
    int rc = tb_atomic_begin(&a, path, err, errlen);
    if (!rc)
        rc = tb_atomic_put(&a, data, len, err, errlen);
    return rc ? rc : tb_atomic_commit(&a, err, errlen);
}

FILE *tb_fopen_write(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
                            O_CLOEXEC, 0644);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}

int tb_mkdir_p(const char *dir, char *err, size_t errlen)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) {
        snprintf(err, errlen, "%s: path too long", dir);
        return TB_EIO;
    }
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
                snprintf(err, errlen, "%s: %s", buf, strerror(errno));
                return TB_EIO;
            }
            *p = c;
            if (!c)
                break;
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: not a directory", dir);
        return TB_EIO;
    }
    return 0;
}

int tb_read_file_max(const char *path, size_t max_bytes, unsigned flags,
                     char **data, size_t *len, tb_read_fail *why)
{
    tb_read_fail w = {0};
    int rc = 0;
    size_t cap = 4096, n = 0;
    char *buf = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        w.errnum = errno;
        w.opening = true;
        rc = TB_EIO;
        goto out;
    }
    buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        const char *z = flags & TB_READ_NO_NUL ? memchr(buf + n, '\0', got)
                                               : NULL;
        if (z) {
            w.nul_at = (size_t)(z - buf);
            rc = TB_EPARSE;
            break;
        }
        n += got;
        if (ferror(f)) {
            w.errnum = errno;
            rc = TB_EIO;
            break;
        }
        if (n > max_bytes) {
            rc = TB_ERANGE;
            break;
        }
        if (feof(f))
            break;
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf)
        rc = TB_ENOMEM;
out:
    if (why)
        *why = w;
    if (rc) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *data = buf;
    if (len)
        *len = n;
    return 0;
}

int tb_read_file(const char *path, char **data, size_t *len, char *err,
                 size_t errlen)
{
    tb_read_fail why;
    int rc = tb_read_file_max(path, SIZE_MAX - 1, 0, data, len, &why);
    if (rc == TB_EIO && why.opening)
        snprintf(err, errlen, "%s: %s", path, strerror(why.errnum));
    else if (rc == TB_EIO)
        snprintf(err, errlen, "%s: read error", path);
    else if (rc)
        snprintf(err, errlen, "%s: out of memory", path);
    return rc;
}
