/* Tests for src/harness/config.c: the config file parser.
 *
 * Valid configs are parsed from strings and every field is checked; each
 * class of error has its own test that asserts the return code and that
 * the one-line message names the file, the line:column and the key path.
 * The shipped configs/ files must load.  A light fuzz pass (truncations,
 * byte flips, random bytes, deep nesting) runs under the sanitizers in CI;
 * its seed is printed and can be set with TB_TEST_SEED.
 *
 * Run from the repository root (meson sets workdir).  `--filter GLOB`
 * runs only the matching tests. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness/config.h"
#include "harness/plan.h"
#include "base/error.h"

#define ERRLEN 512
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int parse(const char *text, tb_config *cfg, char *err)
{
    return tb_config_parse(text, strlen(text), "t.json", cfg, err, ERRLEN);
}

#define assert_has(s, needle) check_has((s), (needle), __FILE__, __LINE__)

static void check_has(const char *s, const char *needle, const char *file,
                      int line)
{
    if (!strstr(s, needle)) {
        print_error("%s:%d: message \"%s\" lacks \"%s\"\n", file, line, s,
                    needle);
        fail();
    }
}

/* Every error message: starts with the path, one line, no trailing
 * white space. */
static void check_msg_shape(const char *err, const char *path,
                            const char *file, int line)
{
    size_t n = strlen(err);
    if (strncmp(err, path, strlen(path)) != 0 || n == 0 ||
        strchr(err, '\n') || strchr(err, '\r') || err[n - 1] == ' ') {
        print_error("%s:%d: malformed message \"%s\"\n", file, line, err);
        fail();
    }
}

/* Parses text, expects return code rc and every needle in the message. */
#define expect_fail(text, rc, ...)                                        \
    expect_fail_((text), (rc), (const char *const[]){__VA_ARGS__, NULL},  \
                 __FILE__, __LINE__)

static void expect_fail_(const char *text, int rc, const char *const *needles,
                         const char *file, int line)
{
    tb_config cfg;
    char err[ERRLEN];
    int got = parse(text, &cfg, err);
    if (got != rc) {
        print_error("%s:%d: rc %d (%s), expected %d; message \"%s\"\n", file,
                    line, got, tb_strerror(got), rc, err);
        tb_config_free(&cfg);
        fail();
    }
    check_msg_shape(err, "t.json", file, line);
    for (; *needles; needles++)
        check_has(err, *needles, file, line);
    /* A failed parse leaves nothing to free, and freeing is harmless. */
    assert_null(cfg.ops);
    assert_null(cfg.text);
    tb_config_free(&cfg);
}

/* Parses text that must be valid. */
static void parse_ok(const char *text, tb_config *cfg)
{
    char err[ERRLEN];
    int rc = parse(text, cfg, err);
    if (rc != 0) {
        print_error("unexpected error %d: %s\n", rc, err);
        fail();
    }
}

/* Wraps one op entry in a minimal valid config. */
static char *with_op(const char *op_json)
{
    static char buf[8192];
    int n = snprintf(buf, sizeof(buf), "{\"name\": \"t\", \"ops\": [%s]}",
                     op_json);
    assert_true(n > 0 && (size_t)n < sizeof(buf));
    return buf;
}

/* Wraps top-level members before a valid op list. */
static char *with_top(const char *members)
{
    static char buf[65536];
    int n = snprintf(buf, sizeof(buf),
                     "{\"name\": \"t\", %s, \"ops\": [{\"op\": \"relu\", "
                     "\"shapes\": [[4]]}]}",
                     members);
    assert_true(n > 0 && (size_t)n < sizeof(buf));
    return buf;
}

static void assert_shape(const tb_shape *s, int ndim, const int64_t *dims)
{
    assert_int_equal(s->ndim, ndim);
    for (int i = 0; i < ndim; i++)
        assert_int_equal(s->dim[i], dims[i]);
}

/* Number of cases the config expands to (before the planner drops any):
 * shapes x paramsets x dtypes x backend instances. */
static int count_cases(const tb_config *cfg)
{
    int inst = 0;
    for (int b = 0; b < cfg->n_backends; b++) {
        int k = 1;
        for (int a = 0; a < cfg->backends[b].n_axes; a++)
            k *= cfg->backends[b].axes[a].n_values;
        inst += k;
    }
    int cases = 0;
    for (int i = 0; i < cfg->n_ops; i++) {
        const tb_cfg_op *o = &cfg->ops[i];
        const bool *dt = o->has_dtypes ? o->dtypes : cfg->dtypes;
        int ndt = 0;
        for (int d = 0; d < TB_DTYPE_FULL_COUNT; d++)
            ndt += dt[d];
        int nl = 0; /* layouts (none set: contiguous only) */
        for (int l = 0; l < TB_LAYOUT_COUNT; l++)
            nl += o->layouts[l];
        cases += o->n_shapes * o->n_paramsets * ndt * (nl ? nl : 1);
    }
    return cases * inst;
}

/* ------------------------------------------------------------------ */

static void test_defaults(void **state)
{
    (void)state;
    tb_config cfg;
    memset(&cfg, 0xA5, sizeof(cfg));
    tb_config_defaults(&cfg);
    assert_int_equal(cfg.seed, 42);
    assert_true(cfg.warmup.min_time_s == 0.05);
    assert_int_equal(cfg.warmup.min_iters, 3);
    assert_true(cfg.measure.sample_time_s == 0.001);
    assert_int_equal(cfg.measure.min_samples, 10);
    assert_int_equal(cfg.measure.max_samples, 2000);
    assert_true(cfg.measure.ci_target == 0.02);
    assert_true(cfg.measure.max_time_s == 1.0);
    assert_true(cfg.dtypes[TB_F32]);
    assert_false(cfg.dtypes[TB_F64]);
    assert_int_equal(cfg.n_backends, 1);
    assert_string_equal(cfg.backends[0].name, "cpu");
    assert_int_equal(cfg.backends[0].n_axes, 0);
    assert_int_equal(cfg.n_ops, 0);
    assert_null(cfg.ops);
    assert_null(cfg.text);
    assert_string_equal(cfg.name, "");
    tb_config_free(&cfg);
}

static void test_minimal_uses_defaults(void **state)
{
    (void)state;
    const char *t = "{\"name\": \"m\", \"ops\": [{\"op\": \"relu\", "
                    "\"shapes\": [[7]]}]}";
    tb_config cfg, def;
    parse_ok(t, &cfg);
    tb_config_defaults(&def);
    assert_string_equal(cfg.path, "t.json");
    assert_string_equal(cfg.name, "m");
    assert_int_equal(cfg.seed, def.seed);
    assert_memory_equal(&cfg.warmup, &def.warmup, sizeof(def.warmup));
    assert_memory_equal(&cfg.measure, &def.measure, sizeof(def.measure));
    assert_memory_equal(cfg.dtypes, def.dtypes, sizeof(def.dtypes));
    assert_int_equal(cfg.n_backends, 1);
    assert_string_equal(cfg.backends[0].name, "cpu");
    assert_int_equal(cfg.n_ops, 1);
    const tb_cfg_op *o = &cfg.ops[0];
    assert_ptr_equal(o->op, tb_op_find("relu"));
    assert_int_equal(o->n_shapes, 1);
    assert_int_equal(o->shapes[0].n_in, 1);
    assert_shape(&o->shapes[0].in[0], 1, (const int64_t[]){7});
    assert_int_equal(o->n_paramsets, 1);
    assert_int_equal(o->paramsets[0].set, 0);
    assert_false(o->has_dtypes);
    assert_int_equal(o->line, 1);
    assert_int_equal(o->col, 23);
    assert_string_equal(cfg.text, t);
    tb_config_free(&cfg);
    assert_null(cfg.ops);
    assert_null(cfg.text);
    assert_int_equal(cfg.n_ops, 0);
}

static const char FULL[] =
    "{\n"
    "  // name of the matrix\n"
    "  \"name\": \"quick\",\n"
    "  \"seed\": 7,\n"
    "  \"warmup\": {\"min_time_ms\": 20, \"min_iters\": 5},\n"
    "  \"measure\": {\"sample_time_ms\": 2, \"min_samples\": 12,\n"
    "              \"max_samples\": 500, \"ci_target\": 0.05,\n"
    "              \"max_time_s\": 0.5},\n"
    "  \"dtypes\": [\"f32\", \"f64\"],\n"
    "  \"backends\": [\"cpu\", {\"name\": \"cpu\", \"threads\": [1, \"2\"]},\n"
    "               {\"name\": \"blas\", \"threads\": 4, \"isa\": [\"avx2\", 0.5]}],\n"
    "  \"ops\": [\n"
    "    {\"op\": \"add\", \"shapes\": [[256, 256], [1024, 1024]]},\n"
    "    {\"op\": \"matmul\", \"shapes\": [[[64, 128], [128, 32]]]},\n"
    "    {\"op\": \"sum\", \"shapes\": [[1024, 1024]], \"params\": {\"axis\": 0}},\n"
    "    {\"op\": \"mean\", \"shapes\": [[64, 64]],\n"
    "     \"params\": [{}, {\"axis\": 1, \"keepdim\": true}]},\n"
    "    {\"op\": \"relu\", \"shapes\": [[1000]], \"dtypes\": [\"f64\"]},\n"
    "    {\"op\": \"transpose\", \"shapes\": [[3, 5, 7]]}\n"
    "  ]\n"
    "}\n";

static void test_full(void **state)
{
    (void)state;
    tb_config cfg;
    parse_ok(FULL, &cfg);
    assert_string_equal(cfg.name, "quick");
    assert_int_equal(cfg.seed, 7);
    assert_true(cfg.warmup.min_time_s == 0.02);
    assert_int_equal(cfg.warmup.min_iters, 5);
    assert_true(cfg.measure.sample_time_s == 0.002);
    assert_int_equal(cfg.measure.min_samples, 12);
    assert_int_equal(cfg.measure.max_samples, 500);
    assert_true(cfg.measure.ci_target == 0.05);
    assert_true(cfg.measure.max_time_s == 0.5);
    assert_int_equal(cfg.measure.rounds, 1); /* the default */
    assert_true(cfg.dtypes[TB_F32] && cfg.dtypes[TB_F64]);

    assert_int_equal(cfg.n_backends, 3);
    assert_string_equal(cfg.backends[0].name, "cpu");
    assert_int_equal(cfg.backends[0].n_axes, 0);
    assert_int_equal(cfg.backends[0].line, 10);
    assert_int_equal(cfg.backends[0].col, 16);
    const tb_cfg_backend *b = &cfg.backends[1];
    assert_string_equal(b->name, "cpu");
    assert_int_equal(b->n_axes, 1);
    assert_string_equal(b->axes[0].name, "threads");
    assert_int_equal(b->axes[0].n_values, 2);
    assert_string_equal(b->axes[0].values[0], "1");
    assert_string_equal(b->axes[0].values[1], "2");
    b = &cfg.backends[2];
    assert_string_equal(b->name, "blas");
    assert_int_equal(b->n_axes, 2);
    assert_string_equal(b->axes[0].name, "threads");
    assert_int_equal(b->axes[0].n_values, 1);
    assert_string_equal(b->axes[0].values[0], "4");
    assert_string_equal(b->axes[1].name, "isa");
    assert_int_equal(b->axes[1].n_values, 2);
    assert_string_equal(b->axes[1].values[0], "avx2");
    assert_string_equal(b->axes[1].values[1], "0.5");
    assert_int_equal(b->line, 11);
    assert_int_equal(b->col, 16);

    assert_int_equal(cfg.n_ops, 6);
    const tb_cfg_op *o = &cfg.ops[0];
    assert_ptr_equal(o->op, tb_op_find("add"));
    assert_int_equal(o->line, 13);
    assert_int_equal(o->col, 5);
    assert_int_equal(o->n_shapes, 2);
    assert_int_equal(o->shapes[0].n_in, 1);
    assert_shape(&o->shapes[0].in[0], 2, (const int64_t[]){256, 256});
    /* a shape for all inputs is also copied to every input */
    assert_shape(&o->shapes[0].in[1], 2, (const int64_t[]){256, 256});
    assert_shape(&o->shapes[1].in[0], 2, (const int64_t[]){1024, 1024});
    assert_int_equal(o->shapes[1].line, 13);
    assert_int_equal(o->shapes[1].col, 42);
    assert_int_equal(o->n_paramsets, 1);
    assert_false(o->has_dtypes);

    o = &cfg.ops[1];
    assert_ptr_equal(o->op, tb_op_find("matmul"));
    assert_int_equal(o->n_shapes, 1);
    assert_int_equal(o->shapes[0].n_in, 2);
    assert_shape(&o->shapes[0].in[0], 2, (const int64_t[]){64, 128});
    assert_shape(&o->shapes[0].in[1], 2, (const int64_t[]){128, 32});
    assert_int_equal(o->shapes[0].line, 14);
    assert_int_equal(o->shapes[0].col, 33);

    o = &cfg.ops[2];
    const tb_op *sum = tb_op_find("sum");
    assert_ptr_equal(o->op, sum);
    int axis = tb_op_param_index(sum, "axis");
    int keep = tb_op_param_index(sum, "keepdim");
    assert_true(axis >= 0 && keep >= 0);
    assert_int_equal(o->n_paramsets, 1);
    assert_true(tb_params_has(&o->paramsets[0], axis));
    assert_true(o->paramsets[0].v[axis] == 0);
    /* tb_params_defaults ran: keepdim is set to its default */
    assert_true(tb_params_has(&o->paramsets[0], keep));
    assert_true(o->paramsets[0].v[keep] == 0);

    o = &cfg.ops[3];
    assert_ptr_equal(o->op, tb_op_find("mean"));
    assert_int_equal(o->n_paramsets, 2);
    assert_false(tb_params_has(&o->paramsets[0], axis));
    assert_true(tb_params_has(&o->paramsets[0], keep));
    assert_true(o->paramsets[0].v[keep] == 0);
    assert_true(tb_params_has(&o->paramsets[1], axis));
    assert_true(o->paramsets[1].v[axis] == 1);
    assert_true(o->paramsets[1].v[keep] == 1);

    o = &cfg.ops[4];
    assert_ptr_equal(o->op, tb_op_find("relu"));
    assert_true(o->has_dtypes);
    assert_false(o->dtypes[TB_F32]);
    assert_true(o->dtypes[TB_F64]);

    o = &cfg.ops[5];
    const tb_op *tr = tb_op_find("transpose");
    assert_ptr_equal(o->op, tr);
    assert_shape(&o->shapes[0].in[0], 3, (const int64_t[]){3, 5, 7});
    int d0 = tb_op_param_index(tr, "dim0"), d1 = tb_op_param_index(tr, "dim1");
    assert_true(tb_params_has(&o->paramsets[0], d0));
    assert_true(o->paramsets[0].v[d0] == -2);
    assert_true(o->paramsets[0].v[d1] == -1);

    assert_string_equal(cfg.text, FULL);
    tb_config_free(&cfg);
}

static void test_comments(void **state)
{
    (void)state;
    const char *t =
        "/* leading\n"
        "   block */ {\n"
        "  \"name\": \"c\", // trailing\n"
        "  // \"seed\": \"not parsed\",\n"
        "  \"seed\": /* inline */ 5,\n"
        "  \"backends\": [{\"name\": \"cpu\", \"tag\": \"x//y\\\"//z\",\n"
        "                \"note\": \"a//b /* not a comment */\"}],\n"
        "  \"ops\": [{\"op\": \"relu\", /* \u00e9 */ \"shapes\": [[3]]}] /**/\n"
        "} // end without newline";
    tb_config cfg;
    parse_ok(t, &cfg);
    assert_string_equal(cfg.name, "c");
    assert_int_equal(cfg.seed, 5);
    assert_string_equal(cfg.backends[0].axes[0].values[0], "x//y\"//z");
    assert_string_equal(cfg.backends[0].axes[1].values[0],
                        "a//b /* not a comment */");
    assert_int_equal(cfg.n_ops, 1);
    /* positions are those of the original text, comments included */
    assert_int_equal(cfg.ops[0].line, 8);
    assert_int_equal(cfg.ops[0].col, 11);
    assert_int_equal(cfg.ops[0].shapes[0].line, 8);
    assert_int_equal(cfg.ops[0].shapes[0].col, 45);
    /* the stored text keeps the comments */
    assert_string_equal(cfg.text, t);
    tb_config_free(&cfg);
}

static void test_syntax_missing_comma(void **state)
{
    (void)state;
    tb_config cfg;
    char err[ERRLEN];
    const char *t = "{\n"
                    "  \"name\": \"x\"\n"
                    "  \"ops\": []\n"
                    "}\n";
    assert_int_equal(parse(t, &cfg, err), TB_EPARSE);
    assert_string_equal(err, "t.json:3:3: syntax error near '\"ops\": []'");
    /* a comment (with a 2-byte character) before the error on the same
     * line: columns count characters of the original text */
    t = "{\n"
        "  \"name\": \"x\" /* \u00e9 comment */ \"ops\": []\n"
        "}\n";
    assert_int_equal(parse(t, &cfg, err), TB_EPARSE);
    assert_string_equal(err, "t.json:2:31: syntax error near '\"ops\": []'");
}

static void test_syntax_truncated(void **state)
{
    (void)state;
    tb_config cfg;
    char err[ERRLEN];
    const char *t = "{\n  \"name\": \"x\",\n  \"ops\": [\n";
    assert_int_equal(parse(t, &cfg, err), TB_EPARSE);
    assert_string_equal(err,
                        "t.json:4:1: syntax error: unexpected end of input");
    t = "{\"name\": \"x\", \"ops\": [{\"op\": \"relu\"";
    assert_int_equal(parse(t, &cfg, err), TB_EPARSE);
    assert_string_equal(err,
                        "t.json:1:36: syntax error: unexpected end of input");
}

static void test_syntax_other(void **state)
{
    (void)state;
    /* trailing content after the object */
    expect_fail("{\"name\": \"x\", \"ops\": [{\"op\": \"relu\", "
                "\"shapes\": [[1]]}]}\n  }",
                TB_EPARSE, "t.json:2:3: syntax error near '}'");
    /* bad literal */
    expect_fail("{\n  \"name\": nul\n}", TB_EPARSE,
                "t.json:2:11: syntax error near 'nul'");
    /* NaN is not JSON */
    expect_fail("{\"seed\": NaN}", TB_EPARSE, "t.json:1:10: syntax error");
    /* unterminated block comment: reported where it starts */
    expect_fail("{\n  \"name\": \"x\", /* never closed\n}\n", TB_EPARSE,
                "t.json:2:16: syntax error: unterminated /* comment");
    /* a '/' that starts no comment */
    expect_fail("{\"name\": \"x\" / }", TB_EPARSE,
                "t.json:1:14: syntax error near '/ }'");
    /* empty or blank text */
    expect_fail("", TB_EPARSE, "t.json: empty config");
    expect_fail("  // only a comment\n", TB_EPARSE, "t.json: empty config");
    /* the top level must be an object */
    expect_fail("[1, 2]", TB_EINVAL,
                "t.json:1:1: expected a JSON object at the top level, "
                "got a list");
}

static void test_encoding(void **state)
{
    (void)state;
    /* invalid UTF-8 (a lone continuation byte), even inside a string */
    expect_fail("{\n  \"name\": \"a\x80\"}", TB_EPARSE,
                "t.json:2:13: invalid UTF-8 (byte 0x80)");
    /* overlong encoding of '/' */
    expect_fail("{\"name\": \"\xC0\xAF\"}", TB_EPARSE, "t.json:1:11:",
                "invalid UTF-8");
    /* NUL byte */
    tb_config cfg;
    char err[ERRLEN];
    const char t[] = "{\"name\": \"x\"\0}";
    assert_int_equal(tb_config_parse(t, sizeof(t) - 1, "t.json", &cfg, err,
                                     sizeof(err)),
                     TB_EPARSE);
    assert_has(err, "t.json:1:13: NUL byte");
    /* a byte order mark is skipped and takes no column; CRLF works */
    const char *bom = "\xEF\xBB\xBF{\"name\": \"x\",\r\n"
                      "\"ops\": [{\"op\": \"relu\", \"shapes\": [[1]]}]}\r\n";
    parse_ok(bom, &cfg);
    assert_int_equal(cfg.ops[0].line, 2);
    assert_int_equal(cfg.ops[0].col, 9);
    tb_config_free(&cfg);
    expect_fail("\xEF\xBB\xBF{\"name\": \"x\",\r\n\"bad\": 1}", TB_EINVAL,
                "t.json:2:1: unknown top-level key 'bad'");
    expect_fail("\xEF\xBB\xBF{\"name\" \"x\"}", TB_EPARSE,
                "t.json:1:9: syntax error near '\"x\"}'");
}

static void test_unknown_keys(void **state)
{
    (void)state;
    tb_config cfg;
    char err[ERRLEN];
    const char *t = "{\n"
                    "  \"name\": \"x\",\n"
                    "  \"ops\": [\n"
                    "    {\"op\": \"add\", \"shapes\": [[2]]},\n"
                    "    {\"op\": \"add\", \"shapes\": [[2]]},\n"
                    "    {\"op\": \"add\",\n"
                    "     \"shape\": [[2]]}\n"
                    "  ]\n"
                    "}\n";
    assert_int_equal(parse(t, &cfg, err), TB_EINVAL);
    assert_string_equal(err, "t.json:7:6: ops[2]: unknown key 'shape' "
                             "(expected one of: op, shapes, params, dtypes, "
                             "alloc, transfers, layout)");
    expect_fail("{\"name\": \"x\",\n \"nmae\": 1}", TB_EINVAL,
                "t.json:2:2: unknown top-level key 'nmae' (expected one "
                "of: name, seed, warmup, measure, dtypes, backends, ops)");
    expect_fail(with_top("\"warmup\": {\"min_time\": 1}"), TB_EINVAL,
                "t.json:1:26: warmup: unknown key 'min_time' (expected "
                "one of: min_time_ms, min_iters)");
    expect_fail(with_top("\"measure\": {\"samples\": 1}"), TB_EINVAL,
                "t.json:1:27: measure: unknown key 'samples'");
    /* keys are case-sensitive */
    expect_fail("{\"Name\": \"x\"}", TB_EINVAL, "t.json:1:2:",
                "unknown top-level key 'Name'");
}

static void test_duplicate_keys(void **state)
{
    (void)state;
    expect_fail("{\"name\": \"x\", \"name\": \"y\"}", TB_EINVAL,
                "t.json:1:15: duplicate top-level key 'name'");
    expect_fail(with_op("{\"op\": \"sum\", \"shapes\": [[2]], \"params\": "
                        "{\"axis\": 0, \"axis\": 1}}"),
                TB_EINVAL, "t.json:1:76: ops[0].params: duplicate key "
                           "'axis'");
    expect_fail(with_top("\"backends\": [{\"name\": \"cpu\", \"threads\": 1, "
                         "\"threads\": 2}]"),
                TB_EINVAL, "backends[0]: duplicate key 'threads'");
}

static void test_missing_keys(void **state)
{
    (void)state;
    expect_fail("{\"ops\": [{\"op\": \"relu\", \"shapes\": [[1]]}]}",
                TB_EINVAL, "t.json:1:1: missing required key 'name'");
    expect_fail("{\n  \"name\": \"x\"\n}", TB_EINVAL,
                "t.json:1:1: missing required key 'ops'");
    expect_fail("{\"name\": \"x\", \"ops\": []}", TB_EINVAL,
                "t.json:1:22: ops: expected at least one op");
    expect_fail("{\"name\": \"x\", \"ops\": {}}", TB_EINVAL,
                "t.json:1:22: ops: expected a list of ops, got an object");
    expect_fail(with_op("{\"shapes\": [[1]]}"), TB_EINVAL,
                "t.json:1:23: ops[0]: missing required key 'op'");
    expect_fail(with_op("{\"op\": \"relu\"}"), TB_EINVAL,
                "t.json:1:23: ops[0]: missing required key 'shapes'");
    expect_fail(with_op("{\"op\": \"relu\", \"shapes\": []}"), TB_EINVAL,
                "t.json:1:48: ops[0].shapes: expected at least one shape");
    expect_fail(with_op("7"), TB_EINVAL,
                "t.json:1:23: ops[0]: expected an object, got 7");
    expect_fail("{\"name\": \"\", \"ops\": []}", TB_EINVAL,
                "t.json:1:10: name: a name must not be empty");
    expect_fail("{\"name\": 3}", TB_EINVAL,
                "t.json:1:10: name: expected a name (a string), got 3");
    expect_fail(with_top("\"backends\": [{\"threads\": 1}]"), TB_EINVAL,
                "t.json:1:28: backends[0]: missing required key 'name'");
}

static void test_bad_dims(void **state)
{
    (void)state;
    static const struct {
        const char *dim, *got;
    } bad[] = {
        {"-3", "got -3"},      {"0", "got 0"},
        {"1.5", "got 1.5"},    {"1e300", "got 1e+300"},
        {"\"8\"", "got \"8\""}, {"true", "got true"},
        {"null", "got null"},  {"[2]", "got a list"},
        {"1e999", "got inf"},  {"1e17", "got 1e+17"},
    };
    char op[256], want[128];
    for (size_t i = 0; i < NELEM(bad); i++) {
        snprintf(op, sizeof(op),
                 "{\"op\": \"add\", \"shapes\": [[4, 4], [4, %s]]}",
                 bad[i].dim);
        snprintf(want, sizeof(want),
                 "t.json:1:60: ops[0].shapes[1][1]: expected a positive "
                 "integer, %s",
                 bad[i].got);
        expect_fail(with_op(op), TB_EINVAL, want);
    }
    /* per-input shapes: the key path has both indices */
    expect_fail(with_op("{\"op\": \"matmul\", \"shapes\": [[[2, 3], "
                        "[3, -1]]]}"),
                TB_EINVAL, "t.json:1:64: ops[0].shapes[0][1][1]: expected a "
                           "positive integer, got -1");
}

static void test_bad_shapes(void **state)
{
    (void)state;
    expect_fail(with_op("{\"op\": \"relu\", \"shapes\": [[4], []]}"),
                TB_EINVAL, "t.json:1:54: ops[0].shapes[1]: empty shape");
    expect_fail(with_op("{\"op\": \"relu\", \"shapes\": "
                        "[[1, 2, 3, 4, 5, 6, 7, 8, 9]]}"),
                TB_EINVAL,
                "t.json:1:49: ops[0].shapes[0]: too many dims (9, at "
                "most 8)");
    /* eight dims is the limit and is accepted */
    tb_config cfg;
    parse_ok(with_op("{\"op\": \"relu\", \"shapes\": "
                     "[[1, 2, 3, 4, 5, 6, 7, 8]]}"),
             &cfg);
    assert_int_equal(cfg.ops[0].shapes[0].in[0].ndim, 8);
    tb_config_free(&cfg);
    /* a flat list instead of a list of shapes gets a hint */
    expect_fail(with_op("{\"op\": \"relu\", \"shapes\": [256, 256]}"),
                TB_EINVAL, "t.json:1:49: ops[0].shapes[0]: expected a shape",
                "write [[256, 256]]");
    expect_fail(with_op("{\"op\": \"relu\", \"shapes\": \"4x4\"}"),
                TB_EINVAL,
                "ops[0].shapes: expected a list of shapes, got \"4x4\"");
    /* a mix of dims and shapes */
    expect_fail(with_op("{\"op\": \"add\", \"shapes\": [[[2], 3]]}"),
                TB_EINVAL, "t.json:1:54: ops[0].shapes[0][1]: expected a "
                           "shape (a list of dims), got 3");
    expect_fail(with_op("{\"op\": \"add\", \"shapes\": [[4, [3]]]}"),
                TB_EINVAL, "ops[0].shapes[0][1]: expected a positive "
                           "integer, got a list");
    /* more elements than 2^53 */
    expect_fail(with_op("{\"op\": \"relu\", \"shapes\": [[4294967296, "
                        "4294967296]]}"),
                TB_EINVAL, "ops[0].shapes[0]: shape has too many elements");
}

static void test_shapes_per_input(void **state)
{
    (void)state;
    expect_fail(with_op("{\"op\": \"matmul\", \"shapes\": [[[2, 3], [3, 4], "
                        "[4, 5]]]}"),
                TB_EINVAL,
                "t.json:1:51: ops[0].shapes[0]: matmul takes 2 inputs, got "
                "3 shapes");
    expect_fail(with_op("{\"op\": \"add\", \"shapes\": [[[2, 3]]]}"),
                TB_EINVAL, "ops[0].shapes[0]: add takes 2 inputs, got 1 "
                           "shapes");
    expect_fail(with_op("{\"op\": \"relu\", \"shapes\": [[[2], [2]]]}"),
                TB_EINVAL, "ops[0].shapes[0]: relu takes 1 input, got 2");
    /* one shape per input for a unary op is the same as a plain shape */
    tb_config cfg;
    parse_ok(with_op("{\"op\": \"relu\", \"shapes\": [[[5, 6]], [5, 6]]}"),
             &cfg);
    assert_int_equal(cfg.ops[0].shapes[0].n_in, 1);
    assert_int_equal(cfg.ops[0].shapes[1].n_in, 1);
    assert_true(tb_shape_equal(&cfg.ops[0].shapes[0].in[0],
                               &cfg.ops[0].shapes[1].in[0]));
    tb_config_free(&cfg);
}

static void test_unknown_op(void **state)
{
    (void)state;
    expect_fail(with_op("{\"op\": \"conv3d\", \"shapes\": [[1]]}"),
                TB_EINVAL,
                "t.json:1:30: ops[0].op: unknown op \"conv3d\" (did you "
                "mean 'conv2d'? 'tbench list' shows all");
    expect_fail(with_op("{\"op\": \"frobnicate\", \"shapes\": [[1]]}"),
                TB_EINVAL,
                "ops[0].op: unknown op \"frobnicate\" ('tbench list' shows");
    expect_fail(with_op("{\"op\": 1, \"shapes\": [[1]]}"), TB_EINVAL,
                "t.json:1:30: ops[0].op: expected an op name, got 1");
    expect_fail(with_op("{\"op\": \"Add\", \"shapes\": [[1]]}"), TB_EINVAL,
                "ops[0].op: unknown op \"Add\"");
}

static void test_dtypes(void **state)
{
    (void)state;
    expect_fail(with_top("\"dtypes\": [\"f32\", \"f8\"]"), TB_EINVAL,
                "t.json:1:33: dtypes[1]: unknown dtype \"f8\" (known: f32, "
                "f64, bf16, f16)");
    expect_fail(with_top("\"dtypes\": []"), TB_EINVAL,
                "t.json:1:25: dtypes: expected at least one dtype");
    expect_fail(with_top("\"dtypes\": [32]"), TB_EINVAL,
                "dtypes[0]: expected a dtype name, got 32");
    expect_fail(with_op("{\"op\": \"relu\", \"shapes\": [[1]], \"dtypes\": "
                        "[\"double\"]}"),
                TB_EINVAL,
                "t.json:1:66: ops[0].dtypes[0]: unknown dtype \"double\"");
    /* a single name instead of a list; duplicates are harmless */
    tb_config cfg;
    parse_ok(with_top("\"dtypes\": \"f64\""), &cfg);
    assert_false(cfg.dtypes[TB_F32]);
    assert_true(cfg.dtypes[TB_F64]);
    tb_config_free(&cfg);
    parse_ok(with_top("\"dtypes\": [\"f64\", \"f32\", \"f64\"]"), &cfg);
    assert_true(cfg.dtypes[TB_F32] && cfg.dtypes[TB_F64]);
    tb_config_free(&cfg);
}

static void test_params(void **state)
{
    (void)state;
    tb_config cfg;
    /* sweeps; bools; negative axes; explicit values override defaults */
    parse_ok(with_op("{\"op\": \"transpose\", \"shapes\": [[2, 3, 4]], "
                     "\"params\": [{\"dim0\": 0}, {\"dim0\": 0, "
                     "\"dim1\": -3}]}, "
                     "{\"op\": \"sum\", \"shapes\": [[4]], \"params\": "
                     "[{\"keepdim\": false}, {\"keepdim\": true, "
                     "\"axis\": -1}]}, "
                     "{\"op\": \"log_softmax\", \"shapes\": [[4, 4]]}"),
             &cfg);
    const tb_op *tr = tb_op_find("transpose");
    int d0 = tb_op_param_index(tr, "dim0"), d1 = tb_op_param_index(tr, "dim1");
    assert_int_equal(cfg.ops[0].n_paramsets, 2);
    assert_true(cfg.ops[0].paramsets[0].v[d0] == 0);
    assert_true(cfg.ops[0].paramsets[0].v[d1] == -1);
    assert_true(cfg.ops[0].paramsets[1].v[d1] == -3);
    const tb_op *sum = tb_op_find("sum");
    int ax = tb_op_param_index(sum, "axis"), kd = tb_op_param_index(sum, "keepdim");
    assert_false(tb_params_has(&cfg.ops[1].paramsets[0], ax));
    assert_true(cfg.ops[1].paramsets[0].v[kd] == 0);
    assert_true(cfg.ops[1].paramsets[1].v[kd] == 1);
    assert_true(cfg.ops[1].paramsets[1].v[ax] == -1);
    /* log_softmax: axis defaults to -1 */
    const tb_op *ls = tb_op_find("log_softmax");
    int lax = tb_op_param_index(ls, "axis");
    assert_int_equal(cfg.ops[2].n_paramsets, 1);
    assert_true(tb_params_has(&cfg.ops[2].paramsets[0], lax));
    assert_true(cfg.ops[2].paramsets[0].v[lax] == -1);
    tb_config_free(&cfg);

    /* unknown parameter: reported at the key, the op table's text kept */
    expect_fail(with_op("{\"op\": \"sum\", \"shapes\": [[4]], \"params\": "
                        "{\"dim\": 0}}"),
                TB_EINVAL, "t.json:1:65: ops[0].params.dim: ", "'dim'");
    expect_fail(with_op("{\"op\": \"relu\", \"shapes\": [[4]], \"params\": "
                        "[{}, {\"axis\": 0}]}"),
                TB_EINVAL, "t.json:1:71: ops[0].params[1].axis: ", "'axis'");
    /* bad values: reported at the value */
    expect_fail(with_op("{\"op\": \"sum\", \"shapes\": [[4]], \"params\": "
                        "{\"axis\": 1.5}}"),
                TB_EINVAL, "t.json:1:73: ops[0].params.axis: ", "1.5");
    expect_fail(with_op("{\"op\": \"sum\", \"shapes\": [[4]], \"params\": "
                        "{\"axis\": 99}}"),
                TB_EINVAL, "t.json:1:73: ops[0].params.axis: ", "99");
    expect_fail(with_op("{\"op\": \"sum\", \"shapes\": [[4]], \"params\": "
                        "{\"keepdim\": 2}}"),
                TB_EINVAL, "t.json:1:76: ops[0].params.keepdim: ");
    expect_fail(with_op("{\"op\": \"sum\", \"shapes\": [[4]], \"params\": "
                        "{\"axis\": true}}"),
                TB_EINVAL, "t.json:1:73: ops[0].params.axis: expected a "
                           "number, got true");
    expect_fail(with_op("{\"op\": \"sum\", \"shapes\": [[4]], \"params\": "
                        "{\"keepdim\": \"yes\"}}"),
                TB_EINVAL, "ops[0].params.keepdim: expected true or false, "
                           "got \"yes\"");
    expect_fail(with_op("{\"op\": \"sum\", \"shapes\": [[4]], \"params\": "
                        "[]}"),
                TB_EINVAL, "t.json:1:64: ops[0].params: expected at least "
                           "one parameter set");
    expect_fail(with_op("{\"op\": \"sum\", \"shapes\": [[4]], \"params\": "
                        "[{}, 0]}"),
                TB_EINVAL, "ops[0].params[1]: expected an object, got 0");
    expect_fail(with_op("{\"op\": \"sum\", \"shapes\": [[4]], \"params\": "
                        "\"axis=0\"}"),
                TB_EINVAL, "ops[0].params: expected a parameter object or "
                           "a list of them");
}

/* Builds "[v, v, ..., v]" with n copies of a JSON value. */
static char *repeat_list(const char *v, int n, char *buf, size_t len)
{
    size_t k = 0;
    buf[k++] = '[';
    for (int i = 0; i < n; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? ", " : "", v);
    snprintf(buf + k, len - k, "]");
    return buf;
}

static void test_limits(void **state)
{
    (void)state;
    static char list[32768], op[40000];
    tb_config cfg;
    /* shapes: 64 is fine, 65 is not */
    snprintf(op, sizeof(op), "{\"op\": \"relu\", \"shapes\": %s}",
             repeat_list("[3]", TB_CFG_MAX_SHAPES, list, sizeof(list)));
    parse_ok(with_op(op), &cfg);
    assert_int_equal(cfg.ops[0].n_shapes, TB_CFG_MAX_SHAPES);
    tb_config_free(&cfg);
    snprintf(op, sizeof(op), "{\"op\": \"relu\", \"shapes\": %s}",
             repeat_list("[3]", TB_CFG_MAX_SHAPES + 1, list, sizeof(list)));
    expect_fail(with_op(op), TB_EINVAL, "t.json:1:48: ops[0].shapes: too "
                                        "many shapes (65, at most 64)");
    /* parameter sets */
    snprintf(op, sizeof(op),
             "{\"op\": \"sum\", \"shapes\": [[3]], \"params\": %s}",
             repeat_list("{}", TB_CFG_MAX_PARAMSETS + 1, list, sizeof(list)));
    expect_fail(with_op(op), TB_EINVAL,
                "ops[0].params: too many parameter sets (17, at most 16)");
    /* backends */
    char top[40000];
    snprintf(top, sizeof(top), "\"backends\": %s",
             repeat_list("\"cpu\"", TB_CFG_MAX_BACKENDS + 1, list,
                         sizeof(list)));
    expect_fail(with_top(top), TB_EINVAL, "t.json:1:27: backends: too many "
                                          "backends (9, at most 8)");
    /* axis values */
    char vals[4096];
    size_t k = 0;
    for (int i = 0; i <= TB_CFG_MAX_AXISVALS; i++)
        k += (size_t)snprintf(vals + k, sizeof(vals) - k, "%s%d",
                              i ? ", " : "", i + 1);
    snprintf(top, sizeof(top),
             "\"backends\": [{\"name\": \"cpu\", \"threads\": [%s]}]", vals);
    expect_fail(with_top(top), TB_EINVAL,
                "t.json:1:55: backends[0].threads: too many values (33, at "
                "most 32)");
    /* axes per backend */
    expect_fail(with_top("\"backends\": [{\"name\": \"cpu\", \"a\": 1, "
                         "\"b\": 1, \"c\": 1, \"d\": 1, \"e\": 1}]"),
                TB_EINVAL, "backends[0]: too many axes (at most 4)");
    /* free-form objects are bounded before their keys are compared */
    k = (size_t)snprintf(op, sizeof(op), "{\"op\": \"sum\", \"shapes\": "
                         "[[3]], \"params\": {");
    for (int i = 0; i < 65; i++)
        k += (size_t)snprintf(op + k, sizeof(op) - k, "%s\"p%d\": 0",
                              i ? ", " : "", i);
    snprintf(op + k, sizeof(op) - k, "}}");
    expect_fail(with_op(op), TB_EINVAL,
                "t.json:1:64: ops[0].params: too many keys (65, at most 64)");
    /* string lengths */
    char name[200];
    memset(name, 'n', 128);
    name[128] = '\0';
    snprintf(top, sizeof(top), "{\"name\": \"%s\"}", name);
    expect_fail(top, TB_EINVAL, "t.json:1:10: name: a name is too long "
                                "(128 bytes, at most 127)");
    name[127] = '\0';
    snprintf(top, sizeof(top), "{\"name\": \"%s\", \"ops\": [{\"op\": "
                               "\"relu\", \"shapes\": [[1]]}]}", name);
    parse_ok(top, &cfg);
    assert_string_equal(cfg.name, name);
    tb_config_free(&cfg);
    expect_fail(with_top("\"backends\": "
                         "[\"0123456789abcdef0123456789abcdef\"]"),
                TB_EINVAL, "backends[0]: a backend name is too long");
    expect_fail(with_top("\"backends\": [{\"name\": \"cpu\", \"isa\": "
                         "\"0123456789abcdef0123456789abcdef\"}]"),
                TB_EINVAL, "backends[0].isa: an axis value is too long");
    /* ops: at most 1024 entries */
    static char ops[40000];
    k = (size_t)snprintf(ops, sizeof(ops), "{\"name\": \"t\", \"ops\": [");
    for (int i = 0; i < 1025; i++)
        k += (size_t)snprintf(ops + k, sizeof(ops) - k, "%s{}", i ? "," : "");
    snprintf(ops + k, sizeof(ops) - k, "]}");
    expect_fail(ops, TB_EINVAL, "t.json:1:22: ops: too many ops (1025, at "
                                "most 1024)");
}

static void test_measure_ranges(void **state)
{
    (void)state;
    static const struct {
        const char *members, *want;
    } bad[] = {
        {"\"measure\": {\"min_samples\": 2}",
         "t.json:1:42: measure.min_samples: expected an integer in [3, "
         "10000000], got 2"},
        {"\"measure\": {\"min_samples\": 10.5}",
         "measure.min_samples: expected an integer"},
        {"\"measure\": {\"max_samples\": 5}",
         "t.json:1:42: measure.max_samples: max_samples (5) must be >= "
         "min_samples (10)"},
        {"\"measure\": {\"min_samples\": 3000}",
         "t.json:1:42: measure.min_samples: max_samples (2000) must be >= "
         "min_samples (3000)"},
        {"\"measure\": {\"ci_target\": 0}",
         "t.json:1:40: measure.ci_target: expected a number > 0 and < 1"},
        {"\"measure\": {\"ci_target\": 1}", "measure.ci_target: expected"},
        {"\"measure\": {\"ci_target\": \"2%\"}",
         "measure.ci_target: expected a number > 0 and < 1 (e.g. 0.02 for "
         "2%), got \"2%\""},
        {"\"measure\": {\"sample_time_ms\": 0}",
         "measure.sample_time_ms: expected a number of milliseconds > 0"},
        {"\"measure\": {\"max_time_s\": -1}",
         "measure.max_time_s: expected a number of seconds > 0 and <= "
         "86400, got -1"},
        {"\"measure\": {\"max_time_s\": 1e9}", "measure.max_time_s:"},
        {"\"measure\": {\"rounds\": 0}",
         "measure.rounds: expected an integer in [1, 64], got 0"},
        {"\"measure\": {\"rounds\": 65}",
         "measure.rounds: expected an integer in [1, 64], got 65"},
        {"\"measure\": 5", "t.json:1:26: measure: expected an object, got 5"},
        {"\"warmup\": {\"min_time_ms\": -1}",
         "t.json:1:41: warmup.min_time_ms: expected a number of "
         "milliseconds in [0, 3600000], got -1"},
        {"\"warmup\": {\"min_iters\": 2.5}",
         "warmup.min_iters: expected an integer in [1, 1000000000], got "
         "2.5"},
        /* the runner derives the per-call time from the warmup calls */
        {"\"warmup\": {\"min_iters\": 0}",
         "t.json:1:39: warmup.min_iters: expected an integer in [1, "
         "1000000000], got 0"},
        {"\"warmup\": []", "warmup: expected an object, got a list"},
    };
    for (size_t i = 0; i < NELEM(bad); i++)
        expect_fail(with_top(bad[i].members), TB_EINVAL, bad[i].want);

    /* boundaries that are accepted; units converted to seconds */
    tb_config cfg;
    parse_ok(with_top("\"warmup\": {\"min_time_ms\": 0, \"min_iters\": 1}, "
                      "\"measure\": {\"min_samples\": 3, \"max_samples\": 3, "
                      "\"ci_target\": 0.999, \"sample_time_ms\": 0.5, "
                      "\"rounds\": 64, "
                      "\"max_time_s\": 86400}"),
             &cfg);
    assert_true(cfg.warmup.min_time_s == 0);
    assert_int_equal(cfg.warmup.min_iters, 1);
    assert_int_equal(cfg.measure.min_samples, 3);
    assert_int_equal(cfg.measure.max_samples, 3);
    assert_true(cfg.measure.ci_target == 0.999);
    assert_true(cfg.measure.sample_time_s == 0.0005);
    assert_true(cfg.measure.max_time_s == 86400);
    assert_int_equal(cfg.measure.rounds, 64);
    tb_config_free(&cfg);
    /* a partial object keeps the other defaults */
    parse_ok(with_top("\"measure\": {\"max_time_s\": 3}"), &cfg);
    assert_true(cfg.measure.max_time_s == 3);
    assert_int_equal(cfg.measure.min_samples, 10);
    assert_int_equal(cfg.measure.max_samples, 2000);
    tb_config_free(&cfg);
}

static void test_seed(void **state)
{
    (void)state;
    tb_config cfg;
    parse_ok(with_top("\"seed\": 0"), &cfg);
    assert_int_equal(cfg.seed, 0);
    tb_config_free(&cfg);
    /* above 2^53 the digits are read exactly */
    parse_ok(with_top("\"seed\": 18446744073709551615"), &cfg);
    assert_true(cfg.seed == UINT64_MAX);
    tb_config_free(&cfg);
    parse_ok(with_top("\"seed\": 9007199254740993"), &cfg);
    assert_true(cfg.seed == UINT64_C(9007199254740993));
    tb_config_free(&cfg);
    expect_fail(with_top("\"seed\": -1"), TB_EINVAL,
                "t.json:1:23: seed: expected an unsigned 64-bit integer, "
                "got -1");
    expect_fail(with_top("\"seed\": 1.5"), TB_EINVAL, "seed: expected",
                "got 1.5");
    expect_fail(with_top("\"seed\": \"42\""), TB_EINVAL,
                "seed: expected an unsigned 64-bit integer, got \"42\"");
    expect_fail(with_top("\"seed\": 18446744073709551616"), TB_EINVAL,
                "seed: expected an unsigned 64-bit integer");
    expect_fail(with_top("\"seed\": 1e19"), TB_EINVAL,
                "seed: expected an unsigned 64-bit integer written as plain "
                "digits");
}

static void test_backends(void **state)
{
    (void)state;
    tb_config cfg;
    /* a single backend instead of a list; numbers stored as strings */
    parse_ok(with_top("\"backends\": {\"name\": \"cpu\", \"threads\": 8, "
                      "\"alpha\": [0.1, 1e20, -2, \"x y\"]}"),
             &cfg);
    assert_int_equal(cfg.n_backends, 1);
    assert_string_equal(cfg.backends[0].name, "cpu");
    assert_int_equal(cfg.backends[0].n_axes, 2);
    assert_string_equal(cfg.backends[0].axes[0].values[0], "8");
    const tb_cfg_axis *a = &cfg.backends[0].axes[1];
    assert_string_equal(a->name, "alpha");
    assert_int_equal(a->n_values, 4);
    assert_string_equal(a->values[0], "0.1");
    assert_string_equal(a->values[1], "1e+20");
    assert_string_equal(a->values[2], "-2");
    assert_string_equal(a->values[3], "x y");
    tb_config_free(&cfg);
    /* names are not checked against the registry here */
    parse_ok(with_top("\"backends\": \"no-such-backend\""), &cfg);
    assert_string_equal(cfg.backends[0].name, "no-such-backend");
    tb_config_free(&cfg);

    expect_fail(with_top("\"backends\": []"), TB_EINVAL,
                "t.json:1:27: backends: expected at least one backend");
    expect_fail(with_top("\"backends\": [\"\"]"), TB_EINVAL,
                "t.json:1:28: backends[0]: a backend name must not be empty");
    expect_fail(with_top("\"backends\": [true]"), TB_EINVAL,
                "t.json:1:28: backends[0]: expected a backend name or an "
                "object");
    expect_fail(with_top("\"backends\": [{\"name\": 5}]"), TB_EINVAL,
                "t.json:1:37: backends[0].name: expected a backend name (a "
                "string), got 5");
    expect_fail(with_top("\"backends\": [{\"name\": \"cpu\", \"threads\": "
                         "[]}]"),
                TB_EINVAL, "t.json:1:55: backends[0].threads: expected at "
                           "least one value");
    expect_fail(with_top("\"backends\": [{\"name\": \"cpu\", \"threads\": "
                         "[1, null]}]"),
                TB_EINVAL, "t.json:1:59: backends[0].threads[1]: expected an "
                           "axis value (a number, a string, true or false), "
                           "got null");
    expect_fail(with_top("\"backends\": [{\"name\": \"cpu\", \"threads\": "
                         "[1, \"1\"]}]"),
                TB_EINVAL, "backends[0].threads[1]: duplicate value '1'");
    expect_fail(with_top("\"backends\": [{\"name\": \"cpu\", \"\": 1}]"),
                TB_EINVAL, "t.json:1:44: backends[0]: empty axis name");
}

static void test_message_sanitized(void **state)
{
    (void)state;
    /* control characters from keys never break the one-line rule */
    expect_fail("{\"name\": \"x\", \"a\\nb\": 1}", TB_EINVAL,
                "unknown top-level key 'a?b'");
    expect_fail("{\"name\": \"a\\tb\"}", TB_EINVAL,
                "name: a name contains a control character");
    /* the name is used in a directory name */
    expect_fail("{\"name\": \"../x\"}", TB_EINVAL,
                "t.json:1:10: name: '../x' may contain only letters, digits, "
                "'.', '_' and '-', and may not start with '.'");
    expect_fail("{\"name\": \"my run\"}", TB_EINVAL, "name: 'my run' may");
    /* long keys are shortened */
    char t[512], key[300];
    memset(key, 'k', 299);
    key[299] = '\0';
    snprintf(t, sizeof(t), "{\"%s\": 1}", key);
    tb_config cfg;
    char err[ERRLEN];
    assert_int_equal(parse(t, &cfg, err), TB_EINVAL);
    assert_has(err, "kkk...'");
    assert_true(strlen(err) < 200);
    /* small or missing error buffers are fine */
    char small[8];
    assert_int_equal(tb_config_parse("{", 1, "t.json", &cfg, small,
                                     sizeof(small)),
                     TB_EPARSE);
    assert_string_equal(small, "t.json:");
    assert_int_equal(tb_config_parse("{", 1, "t.json", &cfg, small, 1),
                     TB_EPARSE);
    assert_string_equal(small, "");
    assert_int_equal(tb_config_parse("{", 1, "t.json", &cfg, NULL, 0),
                     TB_EPARSE);
    /* no path: a placeholder */
    assert_int_equal(tb_config_parse("{", 1, NULL, &cfg, err, sizeof(err)),
                     TB_EPARSE);
    assert_has(err, "<config>:1:2: syntax error");
}

static void test_free_safety(void **state)
{
    (void)state;
    tb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    tb_config_free(&cfg);
    tb_config_free(&cfg);
    tb_config_free(NULL);
    parse_ok(FULL, &cfg);
    tb_config_free(&cfg);
    tb_config_free(&cfg);
    assert_null(cfg.ops);
    assert_null(cfg.text);
    /* a parse after a failed parse and a reused struct */
    char err[ERRLEN];
    assert_int_equal(parse("{\"name\": \"x\", \"ops\": [{\"op\": \"relu\", "
                           "\"shapes\": [[1]]}, 5]}",
                           &cfg, err),
                     TB_EINVAL);
    assert_null(cfg.ops);
    assert_int_equal(cfg.n_ops, 0);
    tb_config_free(&cfg);
    parse_ok(FULL, &cfg);
    tb_config_free(&cfg);
}

static void test_shipped_configs(void **state)
{
    (void)state;
    tb_config cfg;
    char err[ERRLEN];
    int rc = tb_config_load("configs/quick.json", &cfg, err, sizeof(err));
    if (rc)
        print_error("%s\n", err);
    assert_int_equal(rc, 0);
    assert_string_equal(cfg.name, "quick");
    assert_string_equal(cfg.path, "configs/quick.json");
    assert_non_null(cfg.text);
    /* every op in the table appears, and the case count stays small */
    bool seen[TB_OP_COUNT] = {false};
    for (int i = 0; i < cfg.n_ops; i++)
        seen[cfg.ops[i].op->id] = true;
    for (int i = 0; i < TB_OP_COUNT; i++)
        assert_true(seen[i]);
    int cases = count_cases(&cfg);
    print_message("# configs/quick.json: %d cases\n", cases);
    assert_in_range(cases, 15, 144); /* 144 with tfm_*_step */
    assert_true(cfg.measure.max_time_s <= 1.0);
    tb_config_free(&cfg);

    rc = tb_config_load("configs/example.json", &cfg, err, sizeof(err));
    if (rc)
        print_error("%s\n", err);
    assert_int_equal(rc, 0);
    /* it shows every feature */
    bool per_input = false, sweep = false, per_op_dtype = false;
    for (int i = 0; i < cfg.n_ops; i++) {
        per_op_dtype |= cfg.ops[i].has_dtypes;
        sweep |= cfg.ops[i].n_paramsets > 1;
        for (int s = 0; s < cfg.ops[i].n_shapes; s++)
            per_input |= cfg.ops[i].shapes[s].n_in > 1;
    }
    assert_true(per_input && sweep && per_op_dtype);
    bool axes = false;
    for (int b = 0; b < cfg.n_backends; b++)
        axes |= cfg.backends[b].n_axes > 0;
    assert_true(axes);
    assert_non_null(strstr(cfg.text, "//"));
    assert_non_null(strstr(cfg.text, "/*"));
    tb_config_free(&cfg);
}

static void test_load_errors(void **state)
{
    (void)state;
    tb_config cfg;
    char err[ERRLEN];
    assert_int_equal(tb_config_load("configs/no-such-file.json", &cfg, err,
                                    sizeof(err)),
                     TB_EIO);
    assert_string_equal(err, "configs/no-such-file.json: cannot open: No "
                             "such file or directory");
    assert_null(cfg.ops);
    tb_config_free(&cfg);
    assert_int_equal(tb_config_load("configs", &cfg, err, sizeof(err)),
                     TB_EIO);
    assert_has(err, "configs: cannot read");
    assert_int_equal(tb_config_load(NULL, &cfg, err, sizeof(err)),
                     TB_EINVAL);
    /* a file with an error: the message names the file */
    char path[] = "/tmp/tb_test_config_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs("{\n  \"name\": \"x\",\n  \"ops\": [{\"op\": \"nope\", "
          "\"shapes\": [[1]]}]\n}\n", f);
    fclose(f);
    assert_int_equal(tb_config_load(path, &cfg, err, sizeof(err)),
                     TB_EINVAL);
    char want[128];
    snprintf(want, sizeof(want), "%s:3:18: ops[0].op: unknown op \"nope\"",
             path);
    assert_has(err, want);
    remove(path);
}

/* ---- fuzz --------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rng(void)
{
    uint64_t x = rng_state; /* xorshift64* */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * UINT64_C(2685821657736338717);
}

/* Parses text (len bytes); must not crash, and an error must be one well
 * formed line. */
/* Issue 15: an escaped NUL would cut a name short ("a\u0000b" ran as
 * "a"); it is refused in keys and values alike, where the string starts. */
static void test_escaped_nul(void **state)
{
    (void)state;
    tb_config cfg;
    expect_fail("{\"name\": \"a\\u0000b\", \"ops\": [{\"op\": \"relu\", "
                "\"shapes\": [[4]]}]}",
                TB_EPARSE, "t.json:1:10: ", "\\u0000");
    expect_fail(with_op("{\"op\": \"relu\\u0000x\", \"shapes\": [[4]]}"),
                TB_EPARSE, "t.json:1:30: ", "\\u0000");
    expect_fail(with_top("\"backends\": {\"name\": \"cpu\", "
                         "\"thr\\u0000eads\": 1}"),
                TB_EPARSE, "t.json:1:43: ", "NUL");
    /* an escaped backslash before u0000 is text, not an escape */
    expect_fail("{\"name\": \"a\\\\u0000b\", \"ops\": [{\"op\": \"relu\", "
                "\"shapes\": [[4]]}]}",
                TB_EINVAL, "name: 'a\\u0000b' may contain only");
    /* other \u escapes still decode */
    parse_ok("{\"name\": \"\\u0061b\", \"ops\": [{\"op\": \"relu\", "
             "\"shapes\": [[4]]}]}", &cfg);
    assert_string_equal(cfg.name, "ab");
    tb_config_free(&cfg);
}

/* Issue 15: where a boolean is documented, 1 and 0 are refused. */
static void test_bool_params(void **state)
{
    (void)state;
    tb_config cfg;
    expect_fail(with_op("{\"op\": \"sum\", \"shapes\": [[4, 4]], "
                        "\"params\": {\"axis\": 1, \"keepdim\": 1}}"),
                TB_EINVAL, "t.json:1:90: ops[0].params.keepdim: expected "
                           "true or false, got 1");
    expect_fail(with_op("{\"op\": \"sum\", \"shapes\": [[4, 4]], "
                        "\"params\": {\"keepdim\": 0}}"),
                TB_EINVAL, "params.keepdim: expected true or false, got 0");
    parse_ok(with_op("{\"op\": \"sum\", \"shapes\": [[4, 4]], "
                     "\"params\": {\"axis\": 1, \"keepdim\": true}}"),
             &cfg);
    tb_config_free(&cfg);
}

/* Issue 15: numbers as RFC 8259 writes them, nothing strtod adds. */
static void test_rfc_numbers(void **state)
{
    (void)state;
    tb_config cfg;
    static const char *const bad[] = {"01", "-01", "00", "1.", "-0.e1",
                                      "1.e5", "1e", "1e+", "0012"};
    for (size_t i = 0; i < NELEM(bad); i++) {
        char top[64], want[64];
        snprintf(top, sizeof top, "\"seed\": %s", bad[i]);
        snprintf(want, sizeof want, "'%s' is not a JSON number", bad[i]);
        const char *text = with_top(top);
        tb_config c;
        char err[ERRLEN];
        int rc = parse(text, &c, err);
        if (rc == 0) {
            print_error("accepted seed %s\n", bad[i]);
            tb_config_free(&c);
            fail();
        }
        /* some are cJSON syntax errors already; either way one line
         * that points at the number */
        assert_int_equal(rc, TB_EPARSE);
        if (strcmp(bad[i], "1e") && strcmp(bad[i], "1e+")) {
            assert_has(err, "t.json:1:23: ");
            assert_has(err, want);
        }
    }
    expect_fail(with_op("{\"op\": \"relu\", \"shapes\": [[4, 08]]}"),
                TB_EPARSE, "t.json:1:53: syntax error: '08' is not a JSON "
                           "number");
    static const char *const good[] = {"0", "-0", "0.5", "-0.5", "10",
                                       "1e3", "1E+3", "1e-0", "0e0",
                                       "120.25e1"};
    for (size_t i = 0; i < NELEM(good); i++) {
        char top[96];
        snprintf(top, sizeof top, "\"measure\": {\"max_time_s\": %s}",
                 good[i]);
        char err[ERRLEN];
        int rc = parse(with_top(top), &cfg, err);
        /* range errors are fine ("-0.5"); syntax errors are not */
        if (rc == TB_EPARSE) {
            print_error("refused %s: %s\n", good[i], err);
            fail();
        }
        tb_config_free(&cfg);
    }
}

/* Issue 15: the planner's backend errors carry FILE:LINE:COL. */
static void expect_plan_fail(const char *text, const char *want)
{
    tb_config cfg;
    tb_plan plan;
    char err[ERRLEN];
    parse_ok(text, &cfg);
    int rc = tb_plan_build(&cfg, 1, NULL, &plan, err, sizeof err);
    if (rc == 0) {
        tb_plan_free(&plan);
        tb_config_free(&cfg);
        print_error("plan accepted %s\n", text);
        fail();
    }
    tb_config_free(&cfg);
    check_msg_shape(err, "t.json", __FILE__, __LINE__);
    assert_has(err, want);
}

static void test_backend_axis_positions(void **state)
{
    (void)state;
    expect_plan_fail("{\"name\": \"t\",\n \"backends\": [\"cpu\",\n"
                     "  {\"name\": \"cpu\", \"colour\": [1]}],\n"
                     " \"ops\": [{\"op\": \"add\", \"shapes\": [[4]]}]}",
                     "t.json:3:19: backends[1]: backend 'cpu' has no axis "
                     "'colour'");
    expect_plan_fail("{\"name\": \"t\",\n \"backends\": [{\"name\": \"cpu\","
                     "\n  \"threads\": [1, 999]}],\n"
                     " \"ops\": [{\"op\": \"add\", \"shapes\": [[4]]}]}",
                     "t.json:3:18: backends[0].threads: value '999' is not "
                     "offered");
    expect_plan_fail("{\"name\": \"t\", \"backends\": [{\"name\": \"cpu\", "
                     "\"threads\": 999}],\n"
                     " \"ops\": [{\"op\": \"add\", \"shapes\": [[4]]}]}",
                     "t.json:1:55: backends[0].threads: value '999'");
    expect_plan_fail("{\"name\": \"t\",\n \"backends\": [\"gpu9\"],\n"
                     " \"ops\": [{\"op\": \"add\", \"shapes\": [[4]]}]}",
                     "t.json:2:15: backends[0]: unknown backend 'gpu9'");
}

static void fuzz_one(const char *text, size_t len)
{
    tb_config cfg;
    char err[ERRLEN];
    int rc = tb_config_parse(text, len, "f.json", &cfg, err, sizeof(err));
    if (rc) {
        check_msg_shape(err, "f.json", __FILE__, __LINE__);
        assert_true(rc == TB_EPARSE || rc == TB_EINVAL);
        assert_null(cfg.ops);
    } else {
        assert_non_null(cfg.ops);
        assert_true(cfg.n_ops > 0);
    }
    tb_config_free(&cfg);
}

static void test_fuzz(void **state)
{
    (void)state;
    const char *env = getenv("TB_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : UINT64_C(0x5eedc0f1);
    print_message("# fuzz seed: 0x%llx (set TB_TEST_SEED to repeat)\n",
                  (unsigned long long)seed);
    rng_state = seed ? seed : 1;

    /* every prefix of a valid config */
    size_t n = strlen(FULL);
    for (size_t i = 0; i <= n; i++)
        fuzz_one(FULL, i);

    /* byte flips, insertions of JSON punctuation, deletions */
    static const char punct[] = "{}[]:,\"/*\\0-1e.\n ";
    char *buf = malloc(n + 64);
    assert_non_null(buf);
    for (int iter = 0; iter < 20000; iter++) {
        memcpy(buf, FULL, n);
        size_t len = n;
        int edits = 1 + (int)(rng() % 4);
        for (int e = 0; e < edits && len > 0; e++) {
            size_t at = rng() % len;
            switch (rng() % 4) {
            case 0:
                buf[at] = (char)(rng() & 0xFF);
                break;
            case 1:
                buf[at] = punct[rng() % (sizeof(punct) - 1)];
                break;
            case 2:
                memmove(buf + at, buf + at + 1, len - at - 1);
                len--;
                break;
            default:
                memmove(buf + at + 1, buf + at, len - at);
                buf[at] = punct[rng() % (sizeof(punct) - 1)];
                len++;
                break;
            }
        }
        fuzz_one(buf, len);
    }
    free(buf);

    /* random bytes and random punctuation */
    char rnd[256];
    for (int iter = 0; iter < 5000; iter++) {
        size_t len = rng() % sizeof(rnd);
        bool ascii = iter & 1;
        for (size_t i = 0; i < len; i++)
            rnd[i] = ascii ? punct[rng() % (sizeof(punct) - 1)]
                           : (char)(rng() & 0xFF);
        fuzz_one(rnd, len);
    }

    /* deep nesting, inside and outside the places the parser reads */
    enum { DEEP = 100000 };
    char *deep = malloc(2 * DEEP + 200);
    assert_non_null(deep);
    memset(deep, '[', DEEP);
    memset(deep + DEEP, ']', DEEP);
    fuzz_one(deep, 2 * DEEP);
    int k = snprintf(deep, 200, "{\"name\": \"x\", \"ops\": [{\"op\": "
                                "\"relu\", \"shapes\": ");
    memset(deep + k, '[', 900);
    memset(deep + k + 900, ']', 900);
    memcpy(deep + k + 1800, "}]}", 3);
    fuzz_one(deep, (size_t)k + 1803);
    /* an unterminated string and a huge comment */
    memset(deep, '"', 1);
    memset(deep + 1, 'a', DEEP);
    fuzz_one(deep, DEEP);
    memcpy(deep, "/*", 2);
    fuzz_one(deep, DEEP);
    free(deep);

    /* numbers at the edges wherever numbers go */
    static const char *const nums[] = {
        "1e300", "-1e300", "1e-300", "4.9e-324", "1e999", "-0",
        "18446744073709551616", "9223372036854775807", "2147483648",
        "-2147483649", "0.0000001", "\"1\"", "[]", "{}", "null",
    };
    static const char *const fmts[] = {
        "\"seed\": %s",
        "\"warmup\": {\"min_time_ms\": %s, \"min_iters\": %s}",
        "\"measure\": {\"min_samples\": %s}",
        "\"measure\": {\"max_samples\": %s, \"sample_time_ms\": %s}",
        "\"measure\": {\"ci_target\": %s, \"max_time_s\": %s}",
        "\"backends\": {\"name\": \"cpu\", \"t\": %s}",
    };
    char members[256];
    for (size_t f = 0; f < NELEM(fmts); f++) {
        for (size_t i = 0; i < NELEM(nums); i++) {
            snprintf(members, sizeof(members), fmts[f], nums[i], nums[i]);
            const char *t = with_top(members);
            fuzz_one(t, strlen(t));
        }
    }
    for (size_t i = 0; i < NELEM(nums); i++) {
        snprintf(members, sizeof(members),
                 "{\"op\": \"sum\", \"shapes\": [[%s, 2]], \"params\": "
                 "{\"axis\": %s, \"keepdim\": %s}}",
                 nums[i], nums[i], nums[i]);
        const char *t = with_op(members);
        fuzz_one(t, strlen(t));
    }
}

/* An op entry's "transfers" (true, false or both) and bool axis values
 * (cuda's pool axis: kept as the strings "true" and "false"). */
static void test_transfers_and_bool_axes(void **state)
{
    (void)state;
    tb_config cfg;
    parse_ok(with_op("{\"op\": \"add\", \"shapes\": [[4]]}"), &cfg);
    assert_true(cfg.ops[0].transfers[0]);
    assert_false(cfg.ops[0].transfers[1]);
    tb_config_free(&cfg);
    parse_ok(with_op("{\"op\": \"add\", \"shapes\": [[4]], "
                     "\"transfers\": [false, true]}"),
             &cfg);
    assert_true(cfg.ops[0].transfers[0]);
    assert_true(cfg.ops[0].transfers[1]);
    tb_config_free(&cfg);
    parse_ok(with_op("{\"op\": \"add_\", \"shapes\": [[4]], "
                     "\"transfers\": true}"),
             &cfg);
    assert_false(cfg.ops[0].transfers[0]);
    assert_true(cfg.ops[0].transfers[1]);
    tb_config_free(&cfg);
    expect_fail(with_op("{\"op\": \"add\", \"shapes\": [[4]], "
                        "\"transfers\": 1}"),
                TB_EINVAL, "ops[0].transfers: expected true or false, got 1");
    expect_fail(with_op("{\"op\": \"add\", \"shapes\": [[4]], "
                        "\"transfers\": \"host\"}"),
                TB_EINVAL, "ops[0].transfers: expected true or false, got");
    expect_fail(with_op("{\"op\": \"add\", \"shapes\": [[4]], "
                        "\"transfers\": []}"),
                TB_EINVAL, "ops[0].transfers: expected true, false or a "
                           "list of them, got an empty list");
    expect_fail(with_op("{\"op\": \"add\", \"shapes\": [[4]], "
                        "\"transfers\": [true, true]}"),
                TB_EINVAL, "ops[0].transfers[1]: true is listed twice");
    parse_ok(with_top("\"backends\": [{\"name\": \"cuda\", \"pool\": "
                      "[false, true]}]"),
             &cfg);
    assert_int_equal(cfg.backends[0].axes[0].n_values, 2);
    assert_string_equal(cfg.backends[0].axes[0].values[0], "false");
    assert_string_equal(cfg.backends[0].axes[0].values[1], "true");
    tb_config_free(&cfg);
    expect_fail(with_top("\"backends\": [{\"name\": \"cuda\", \"pool\": "
                         "[false, \"false\"]}]"),
                TB_EINVAL, "backends[0].pool[1]: duplicate value 'false'");
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_minimal_uses_defaults),
        cmocka_unit_test(test_full),
        cmocka_unit_test(test_comments),
        cmocka_unit_test(test_syntax_missing_comma),
        cmocka_unit_test(test_syntax_truncated),
        cmocka_unit_test(test_syntax_other),
        cmocka_unit_test(test_encoding),
        cmocka_unit_test(test_unknown_keys),
        cmocka_unit_test(test_duplicate_keys),
        cmocka_unit_test(test_missing_keys),
        cmocka_unit_test(test_bad_dims),
        cmocka_unit_test(test_bad_shapes),
        cmocka_unit_test(test_shapes_per_input),
        cmocka_unit_test(test_unknown_op),
        cmocka_unit_test(test_dtypes),
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_measure_ranges),
        cmocka_unit_test(test_seed),
        cmocka_unit_test(test_backends),
        cmocka_unit_test(test_message_sanitized),
        cmocka_unit_test(test_free_safety),
        cmocka_unit_test(test_shipped_configs),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_fuzz),
        cmocka_unit_test(test_escaped_nul),
        cmocka_unit_test(test_bool_params),
        cmocka_unit_test(test_rfc_numbers),
        cmocka_unit_test(test_backend_axis_positions),
        cmocka_unit_test(test_transfers_and_bool_axes),
    };
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--filter") == 0)
            cmocka_set_test_filter(argv[i + 1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
