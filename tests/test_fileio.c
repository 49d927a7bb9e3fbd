/* Tests for tb_write_atomic (src/base/fileio.c), issue 33 item 1: the
 * temporary file was "<target>.tmp.<pid>", opened with O_CREAT|O_TRUNC,
 * so a symlink planted at that predictable name was followed and its
 * target overwritten (or created, for a dangling link).
 *
 * Each test works in its own mkdtemp folder under $TMPDIR (or /tmp) with
 * a "victim" file outside it, plants symlinks at the old name for a span
 * of pids and at a spread of names of the new form, and checks that the
 * victim keeps its bytes, the links are left as they were, the target is
 * a regular file with the new bytes, its mode is 0644 & ~umask, and no
 * temporary file is left, after success and after each kind of failure.
 * The whole-file reader (tb_read_file_max) is checked at sizes around
 * its limit and its buffer's growth, with and without TB_READ_NO_NUL,
 * and on the failures whose reasons callers word themselves.
 * `--filter GLOB` runs only the matching tests. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/error.h"
#include "base/fileio.h"
#include "base/rng.h"

#define VICTIM "precious bytes of someone else\n"

typedef struct {
    char root[1024];       /* the mkdtemp folder */
    char dir[1100];        /* root/out: where the target is written */
    char victim[1100];     /* root/victim.txt */
    char target[1200];     /* dir/results.json */
} fx;

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* The whole file, NUL-terminated, in buf; the length, or -1. */
static long get(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    return (long)n;
}

static int setup(void **state)
{
    fx *x = calloc(1, sizeof *x);
    if (!x)
        return -1;
    const char *t = getenv("TMPDIR");
    if (snprintf(x->root, sizeof x->root, "%s/tbench-fileio-XXXXXX",
                 t && *t ? t : "/tmp") >= (int)sizeof x->root) {
        free(x);
        return -1;
    }
    if (!mkdtemp(x->root)) {
        free(x);
        return -1;
    }
    snprintf(x->dir, sizeof x->dir, "%s/out", x->root);
    snprintf(x->victim, sizeof x->victim, "%s/victim.txt", x->root);
    snprintf(x->target, sizeof x->target, "%s/results.json", x->dir);
    if (mkdir(x->dir, 0755) != 0) {
        free(x);
        return -1;
    }
    put(x->victim, VICTIM);
    *state = x;
    return 0;
}

/* rm -r of the fixture's two levels */
static void rm_dir(const char *d)
{
    DIR *dp = opendir(d);
    if (!dp)
        return;
    struct dirent *e;
    char p[PATH_MAX + 256];
    while ((e = readdir(dp))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", d, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            rm_dir(p);
        else
            unlink(p);
    }
    closedir(dp);
    rmdir(d);
}

static int teardown(void **state)
{
    fx *x = *state;
    rm_dir(x->root);
    free(x);
    return 0;
}

/* The names in dir other than the target and the planted links (the
 * links' names start with "results.json.tmp." and they are symlinks):
 * what a write left behind. */
static int leftovers(const fx *x, char *first, size_t len)
{
    DIR *dp = opendir(x->dir);
    assert_non_null(dp);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(dp))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
            !strcmp(e->d_name, "results.json"))
            continue;
        char p[PATH_MAX + 256];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", x->dir, e->d_name);
        if (lstat(p, &st) == 0 && S_ISLNK(st.st_mode))
            continue;
        if (n++ == 0)
            snprintf(first, len, "%s", e->d_name);
    }
    closedir(dp);
    return n;
}

static void assert_victim_untouched(const fx *x)
{
    char buf[256];
    assert_int_equal(get(x->victim, buf, sizeof buf), strlen(VICTIM));
    assert_string_equal(buf, VICTIM);
}

static void assert_target_is(const fx *x, const char *text)
{
    struct stat st;
    assert_int_equal(lstat(x->target, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    char buf[4096];
    assert_int_equal(get(x->target, buf, sizeof buf), strlen(text));
    assert_string_equal(buf, text);
}

static void assert_no_leftovers(const fx *x)
{
    char first[300] = "";
    int n = leftovers(x, first, sizeof first);
    if (n)
        fail_msg("%d file(s) left in %s, the first %s", n, x->dir, first);
}

static int write_text(const char *path, const char *text, char *err,
                      size_t errlen)
{
    return tb_write_atomic(path, text, strlen(text), err, errlen);
}

/* A new file, then the same name replaced by a shorter one. */
static void test_write_and_replace(void **state)
{
    fx *x = *state;
    char err[512] = "";
    assert_int_equal(write_text(x->target, "{\"a\": 1234567}\n", err,
                                sizeof err), 0);
    assert_target_is(x, "{\"a\": 1234567}\n");
    assert_int_equal(write_text(x->target, "{}\n", err, sizeof err), 0);
    assert_target_is(x, "{}\n");
    assert_int_equal(tb_write_atomic(x->target, "", 0, err, sizeof err), 0);
    assert_target_is(x, "");
    assert_no_leftovers(x);
}

/* The mode is a plain create's, 0644 & ~umask, as before the fix (a
 * mkstemp file would be 0600). */
static void test_mode_follows_umask(void **state)
{
    fx *x = *state;
    static const mode_t masks[] = {022, 077, 002, 0};
    char err[512];
    mode_t saved = umask(022);
    for (size_t i = 0; i < sizeof masks / sizeof *masks; i++) {
        umask(masks[i]);
        assert_int_equal(write_text(x->target, "x\n", err, sizeof err), 0);
        struct stat st;
        assert_int_equal(stat(x->target, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0644 & ~masks[i]);
    }
    umask(saved);
    assert_no_leftovers(x);
}

/* Symlinks planted at "<target>.tmp.<pid>" for pids around ours (the old
 * name), dangling ones among them, and at 300 names of the new form:
 * nothing is followed, the links stay, the victim keeps its bytes. */
static void test_planted_symlinks(void **state)
{
    fx *x = *state;
    static const char abc[] = "abcdefghijklmnopqrstuvwxyz"
                              "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    char link[PATH_MAX + 64], ghost[PATH_MAX + 64];
    long pid = (long)getpid();
    int planted = 0;
    for (long p = pid - 40; p <= pid + 40; p++) {
        if (p <= 0)
            continue;
        snprintf(link, sizeof link, "%s.tmp.%ld", x->target, p);
        /* ours to the victim; every third other one dangles: O_CREAT
         * alone would create what it points to */
        bool dangle = p % 3 == 0 && p != pid;
        if (dangle)
            snprintf(ghost, sizeof ghost, "%s/ghost.%ld", x->root, p);
        assert_int_equal(symlink(dangle ? ghost : x->victim, link), 0);
        planted++;
    }
    uint64_t seed = UINT64_C(0x33);
    printf("# seed %llu\n", (unsigned long long)seed);
    for (int i = 0; i < 300; i++) {
        uint64_t r = tb_splitmix64_next(&seed);
        char sfx[7];
        for (int k = 0; k < 6; k++, r /= 62)
            sfx[k] = abc[r % 62];
        sfx[6] = '\0';
        snprintf(link, sizeof link, "%s.tmp.%s", x->target, sfx);
        assert_int_equal(symlink(x->victim, link), 0);
        planted++;
    }
    char text[64], err[512] = "";
    for (int i = 0; i < 20; i++) {
        snprintf(text, sizeof text, "{\"write\": %d}\n", i);
        if (write_text(x->target, text, err, sizeof err))
            fail_msg("write %d: %s", i, err);
        assert_victim_untouched(x);
        assert_target_is(x, text);
    }
    /* no dangling link was followed to create its target */
    for (long p = pid - 40; p <= pid + 40; p++) {
        snprintf(ghost, sizeof ghost, "%s/ghost.%ld", x->root, p);
        if (access(ghost, F_OK) == 0)
            fail_msg("%s was created through a planted link", ghost);
    }
    /* every planted link is still there, still a link */
    DIR *dp = opendir(x->dir);
    assert_non_null(dp);
    struct dirent *e;
    int links = 0;
    while ((e = readdir(dp))) {
        char p[PATH_MAX + 256];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", x->dir, e->d_name);
        links += lstat(p, &st) == 0 && S_ISLNK(st.st_mode);
    }
    closedir(dp);
    assert_int_equal(links, planted);
    assert_no_leftovers(x);
}

/* A target that is itself a symlink: rename replaces the link with the
 * new file; what it pointed to is left alone. */
static void test_target_is_symlink(void **state)
{
    fx *x = *state;
    assert_int_equal(symlink(x->victim, x->target), 0);
    char err[512] = "";
    assert_int_equal(write_text(x->target, "new\n", err, sizeof err), 0);
    assert_target_is(x, "new\n");
    assert_victim_untouched(x);
    assert_no_leftovers(x);
}

/* Failures: "PATH: reason", TB_EIO, no temporary file left, an existing
 * target unchanged. */
static void test_failures_leave_nothing(void **state)
{
    fx *x = *state;
    char err[PATH_MAX + 600] = "", path[PATH_MAX + 600];

    /* a missing folder */
    snprintf(path, sizeof path, "%s/missing/r.json", x->dir);
    assert_int_equal(write_text(path, "x", err, sizeof err), TB_EIO);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, strerror(ENOENT)));

    /* a path that leaves no room for the temporary name */
    memset(path, 'a', PATH_MAX - 4);
    path[PATH_MAX - 4] = '\0';
    assert_int_equal(write_text(path, "x", err, sizeof err), TB_EIO);
    assert_non_null(strstr(err, "path too long"));

    /* a name whose temporary name is longer than NAME_MAX */
    int n = snprintf(path, sizeof path, "%s/", x->dir);
    memset(path + n, 'b', NAME_MAX - 4);
    path[n + NAME_MAX - 4] = '\0';
    assert_int_equal(write_text(path, "x", err, sizeof err), TB_EIO);
    assert_non_null(strstr(err, strerror(ENAMETOOLONG)));

    /* a write error (a full disk: RLIMIT_FSIZE, SIGXFSZ ignored, EFBIG)
     * after the temporary file exists; the old target stays */
    assert_int_equal(write_text(x->target, "old\n", err, sizeof err), 0);
    struct rlimit saved, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
    lim = saved;
    lim.rlim_cur = 100;
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    char big[1000];
    memset(big, 'z', sizeof big);
    int rc = tb_write_atomic(x->target, big, sizeof big, err, sizeof err);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
    signal(SIGXFSZ, old_handler);
    assert_int_equal(rc, TB_EIO);
    assert_non_null(strstr(err, x->target));
    assert_target_is(x, "old\n");
    assert_no_leftovers(x);
}

/* n bytes of 'a', with a NUL at nul_at when nul_at < n. */
static void put_bytes(const char *path, size_t n, size_t nul_at)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(fputc(i == nul_at ? 0 : 'a', f) != EOF, 1);
    assert_int_equal(fclose(f), 0);
}

/* Sizes 0, 1, 7 and those around the 4096-byte first buffer and its
 * doublings, each read whole below the limit and refused above it. */
static void test_read_sizes_and_limit(void **state)
{
    fx *x = *state;
    static const size_t sizes[] = {0, 1, 7, 4094, 4095, 4096, 4097, 8191,
                                   8192, 16385, 70001};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        put_bytes(x->target, n, SIZE_MAX);
        char *data = NULL;
        size_t len = 99;
        tb_read_fail why;
        assert_int_equal(tb_read_file_max(x->target, n, 0, &data, &len,
                                          &why), 0);
        assert_int_equal(len, n);
        assert_int_equal(data[n], '\0');
        for (size_t i = 0; i < n; i++)
            assert_int_equal(data[i], 'a');
        free(data);
        if (n == 0)
            continue;
        data = NULL;
        assert_int_equal(tb_read_file_max(x->target, n - 1, 0, &data, &len,
                                          &why), TB_ERANGE);
        assert_null(data);
    }
}

static void test_read_nul_and_failures(void **state)
{
    fx *x = *state;
    char *data = NULL;
    size_t len = 0;
    tb_read_fail why;
    put_bytes(x->target, 5000, 4500);
    assert_int_equal(tb_read_file_max(x->target, SIZE_MAX - 1,
                                      TB_READ_NO_NUL, &data, &len, &why),
                     TB_EPARSE);
    assert_int_equal(why.nul_at, 4500);
    assert_null(data);
    assert_int_equal(tb_read_file_max(x->target, SIZE_MAX - 1, 0, &data,
                                      &len, NULL), 0);
    assert_int_equal(len, 5000);
    free(data);
    data = NULL;
    char missing[1300];
    snprintf(missing, sizeof missing, "%s/none", x->dir);
    assert_int_equal(tb_read_file_max(missing, 10, 0, &data, &len, &why),
                     TB_EIO);
    assert_true(why.opening);
    assert_int_equal(why.errnum, ENOENT);
    assert_int_equal(tb_read_file_max(x->dir, 10, 0, &data, &len, &why),
                     TB_EIO); /* a folder opens, then cannot be read */
    assert_false(why.opening);
    assert_int_equal(why.errnum, EISDIR);
    assert_null(data);
    char err[1400];
    assert_int_equal(tb_read_file(missing, &data, &len, err, sizeof err),
                     TB_EIO);
    assert_non_null(strstr(err, "No such file"));
    assert_int_equal(tb_read_file(x->dir, &data, &len, err, sizeof err),
                     TB_EIO);
    assert_non_null(strstr(err, ": read error"));
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_write_and_replace, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_mode_follows_umask, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_planted_symlinks, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_target_is_symlink, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_failures_leave_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_read_sizes_and_limit, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_read_nul_and_failures, setup,
                                        teardown),
    };
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--filter") == 0)
            cmocka_set_test_filter(argv[i + 1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
