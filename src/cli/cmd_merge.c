/* tbench merge: the result files of the shards of one `run --shard I/N`
 * in, one result file out (src/report/merge.h).  Exit 0, or 2 on a
 * usage or input error (one line on stderr; nothing written). */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../base/error.h"
#include "../base/fileio.h"
#include "../harness/config.h"
#include "../harness/plan.h"
#include "../harness/shard.h"
#include "../report/merge.h"
#include "../report/resultsio.h"
#include "commands.h"

/* Where -o OUT goes: OUT/results.json when OUT is a folder or ends in
 * '/', else OUT itself.  0 or TB_EXIT_USAGE (printed). */
static int out_path(const char *out, char *buf, size_t len)
{
    struct stat st;
    size_t l = strlen(out);
    bool dir = (l && out[l - 1] == '/') ||
               (stat(out, &st) == 0 && S_ISDIR(st.st_mode));
    if (snprintf(buf, len, dir ? "%s%sresults.json" : "%s%s", out,
                 dir ? (out[l - 1] == '/' ? "" : "/") : "") >= (int)len) {
        fprintf(stderr, "tbench: merge: -o: path too long\n");
        return TB_EXIT_USAGE;
    }
    return 0;
}

static int count_of(const char **v)
{
    int n = 0;
    while (v && v[n])
        n++;
    return n;
}

/* The plan the shards claim, built again here from shard f's recorded
 * config texts and selection (--filter, --exclude, --backend): its case
 * count and digest must be the shards' plan_cases and plan_digest, so a
 * shard whose records and digest were both edited, or that ran another
 * config than it records, is refused.  Files written before the
 * selection was recorded are not rebuilt.  0, or TB_EXIT_USAGE after
 * the message. */
static int rebuild_plan(const tb_resfile *f)
{
    if (!f->has_selection)
        return 0;
    char err[1024];
    int n = f->n_config, rc = 0;
    tb_config *cfgs = calloc((size_t)(n ? n : 1), sizeof *cfgs);
    if (!cfgs) {
        fprintf(stderr, "tbench: out of memory\n");
        return TB_EXIT_USAGE;
    }
    int parsed = 0;
    for (; parsed < n && !rc; parsed++) {
        const tb_res_config *c = &f->config[parsed];
        if (!c->text) {
            fprintf(stderr, "tbench: merge: %s: config[%d] records no text: "
                    "the plan cannot be built again\n", f->path, parsed);
            rc = TB_EXIT_USAGE;
            break;
        }
        if (tb_config_parse(c->text, strlen(c->text),
                            c->path ? c->path : "config", &cfgs[parsed], err,
                            sizeof err)) {
            fprintf(stderr, "tbench: merge: %s: config[%d] as recorded: "
                    "%s\n", f->path, parsed, err);
            rc = TB_EXIT_USAGE;
            break;
        }
    }
    tb_plan plan = {0};
    tb_plan_opts o = {
        .filters = f->sel_filters, .n_filters = count_of(f->sel_filters),
        .excludes = f->sel_excludes,
        .n_excludes = count_of(f->sel_excludes),
        .backends = f->sel_backends,
        .n_backends = count_of(f->sel_backends)};
    if (!rc && tb_plan_build(cfgs, n, &o, &plan, err, sizeof err)) {
        fprintf(stderr, "tbench: merge: the shards' plan cannot be built "
                "again here from %s's recorded configs: %s (a plugin's "
                "backend: give merge the shards' --plugin)\n", f->path, err);
        rc = TB_EXIT_USAGE;
    }
    char digest[32];
    if (!rc) {
        tb_plan_digest(&plan, digest, sizeof digest);
        if (plan.n != (int)f->shard_plan_cases ||
            strcmp(digest, f->shard_plan_digest)) {
            fprintf(stderr, "tbench: merge: %s: the plan built again from "
                    "its recorded configs and selection has %d cases, "
                    "digest %s; the shard claims %.0f, %s (a config or the "
                    "digest edited, or another run's shard)\n", f->path,
                    plan.n, digest, f->shard_plan_cases,
                    f->shard_plan_digest);
            rc = TB_EXIT_USAGE;
        }
    }
    tb_plan_free(&plan);
    for (int i = 0; i < parsed && i < n; i++)
        tb_config_free(&cfgs[i]);
    free(cfgs);
    return rc;
}

/* tb_merge_write's output: the temporary file of tb_atomic_begin,
 * through a buffer (its pieces are a line or less: a write each would
 * be millions of system calls). */
typedef struct {
    tb_atomic *a;
    char *err;
    size_t errlen;
    size_t n;
    char buf[1 << 16];
} atomic_out;

static int flush_atomic(atomic_out *o)
{
    int rc = o->n ? tb_atomic_put(o->a, o->buf, o->n, o->err, o->errlen)
                  : 0;
    o->n = 0;
    return rc;
}

static int put_atomic(void *ctx, const void *p, size_t n)
{
    atomic_out *o = ctx;
    if (o->n + n > sizeof o->buf) {
        int rc = flush_atomic(o);
        if (rc || n > sizeof o->buf)
            return rc ? rc
                      : tb_atomic_put(o->a, p, n, o->err, o->errlen);
    }
    memcpy(o->buf + o->n, p, n);
    o->n += n;
    return 0;
}

/* The options `merge` parses (and `tbench __options` lists). */
static const struct option longopts[] = {
    {"output", required_argument, NULL, 'o'},
    {"allow-mixed-hosts", no_argument, NULL, 'M'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};
const tb_cmd_opts tb_opts_merge = {longopts, ":o:h", NULL};

int tb_cmd_merge(int argc, char **argv)
{
    const char *out = NULL;
    tb_merge_opts mo = {0};
    int c;
    bool first = true;
    while ((c = tb_opt_next(argc, argv, &tb_opts_merge, &first)) !=
           -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'M': mo.allow_mixed_hosts = true; break;
        case 'h': tb_cmd_usage(stdout, "merge"); return TB_EXIT_OKAY;
        default:
            return tb_opt_error("merge", c, argv, longopts);
        }
    }
    int n = argc - optind;
    if (n <= 0)
        return tb_usage_error("merge: no shard result file given%s", "");
    if (!out)
        return tb_usage_error("merge: -o OUT is required%s", "");
    char path[4096 + 16];
    if (out_path(out, path, sizeof path))
        return TB_EXIT_USAGE;

    char err[2048];
    int rc = TB_EXIT_USAGE;
    tb_resfile **f = calloc((size_t)n, sizeof *f);
    tb_merged m = {0};
    tb_atomic a = {.fd = -1};
    tb_resfile *check = NULL;
    if (!f) {
        fprintf(stderr, "tbench: out of memory\n");
        return TB_EXIT_USAGE;
    }
    char real_out[PATH_MAX], real_in[PATH_MAX];
    bool out_exists = realpath(path, real_out) != NULL;
    for (int i = 0; i < n; i++) {
        if (tb_resfile_load(argv[optind + i], &f[i], err, sizeof err)) {
            fprintf(stderr, "tbench: merge: %s\n", err);
            goto out;
        }
        if (out_exists && realpath(f[i]->path, real_in) &&
            !strcmp(real_in, real_out)) {
            fprintf(stderr, "tbench: merge: -o %s is the shard file %s: "
                    "the merge would replace it\n", out, f[i]->path);
            goto out;
        }
    }
    if (tb_merge(f, n, &mo, &m, err, sizeof err)) {
        fprintf(stderr, "tbench: merge: %s\n", err);
        goto out;
    }
    /* tb_merge held every shard to one plan (the same config texts and
     * digest): build it once more from the first shard's record */
    if (rebuild_plan(f[0]))
        goto out;
    /* the folders of -o, created once the merge holds (as run and
     * report create theirs); a refused merge writes nothing */
    char dir[sizeof path];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (tb_mkdir_p(dir, err, sizeof err)) {
            fprintf(stderr, "tbench: merge: -o: %s\n", err);
            goto out;
        }
    }
    /* the text goes to the temporary file record by record (never held
     * whole), which is loaded as any result file before it replaces
     * path */
    static atomic_out o;
    o = (atomic_out){.a = &a, .err = err, .errlen = sizeof err};
    if (tb_atomic_begin(&a, path, err, sizeof err) ||
        tb_merge_write(&m, put_atomic, &o, err, sizeof err) ||
        flush_atomic(&o)) {
        fprintf(stderr, "tbench: merge: %s\n", err);
        goto out;
    }
    tb_merged_free(&m);
    for (int i = 0; i < n; i++) {
        tb_resfile_free(f[i]);
        f[i] = NULL;
    }
    /* What is written must load like any result file. */
    if (tb_resfile_load(a.tmp, &check, err, sizeof err)) {
        size_t k = strlen(a.tmp);
        fprintf(stderr, "tbench: merge: the merged document does not load: "
                "%s%s\n", strncmp(err, a.tmp, k) ? "" : path,
                strncmp(err, a.tmp, k) ? err : err + k);
        goto out;
    }
    if (tb_atomic_commit(&a, err, sizeof err)) {
        fprintf(stderr, "tbench: merge: %s\n", err);
        goto out;
    }
    printf("merged %d shards, %d cases: %s\n", n, check->n, path);
    rc = TB_EXIT_OKAY;
out:
    tb_atomic_discard(&a);
    tb_resfile_free(check);
    tb_merged_free(&m);
    for (int i = 0; i < n; i++)
        tb_resfile_free(f[i]);
    free(f);
    return rc;
}
