/* Tests for the .npy header parser of src/ops/npy.c (issue 15: the
 * header was searched with strstr, so a key inside a string value was
 * taken as the key).
 *
 * Good headers are those numpy 1.24's numpy.save writes (copied from its
 * output, padding included) and the other legal spellings of the dict
 * literal; every header tb_npy_encode writes parses back to its dtype and
 * shape; bad headers are refused with the reason.  `--filter GLOB` runs
 * only the matching tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "ops/npy.h"
#include "ops/tensor.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int parse(const char *h, tb_dtype *dt, tb_shape *sh,
                 const char **why)
{
    return tb_npy_parse_header(h, strlen(h), dt, sh, why);
}

static void test_numpy_headers(void **state)
{
    (void)state;
    static const struct {
        const char *h;
        tb_dtype dt;
        int ndim;
        int64_t dim[4];
    } ok[] = {
        /* numpy.save, verbatim */
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }     "
         "                                                     \n",
         TB_F32, 2, {2, 3}},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }       "
         "                                                     \n",
         TB_F64, 1, {5}},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2, 3, 4), "
         "}                                                    \n",
         TB_F64, 4, {1, 2, 3, 4}},
        /* other orders, quotes, no trailing comma, native byte order */
        {"{'shape': (7,), 'fortran_order': False, 'descr': '<f4'}\n",
         TB_F32, 1, {7}},
        {"{\"descr\": \"=f8\", \"fortran_order\": False, \"shape\": "
         "(3,4,)}\n", TB_F64, 2, {3, 4}},
        {"{'descr':'<f4','fortran_order':False,'shape':(1099511627776,)}\n",
         TB_F32, 1, {INT64_C(1) << 40}},
    };
    for (size_t i = 0; i < NELEM(ok); i++) {
        tb_dtype dt = TB_F64 + TB_F32 - ok[i].dt;
        tb_shape sh;
        const char *why = NULL;
        int rc = parse(ok[i].h, &dt, &sh, &why);
        if (rc) {
            print_error("refused %s: %s\n", ok[i].h, why);
            fail();
        }
        assert_int_equal(dt, ok[i].dt);
        assert_int_equal(sh.ndim, ok[i].ndim);
        for (int d = 0; d < ok[i].ndim; d++)
            assert_int_equal(sh.dim[d], ok[i].dim[d]);
    }
}

static void test_bad_headers(void **state)
{
    (void)state;
    static const struct {
        const char *h, *why;
    } bad[] = {
        /* a key inside a string value is not a key: strstr found
         * 'shape' (9,) and 'descr' '<f8' inside the first value */
        {"{'x': \"'shape': (9,), 'descr': '<f8'\", 'descr': '<f4', "
         "'fortran_order': False, 'shape': (2,)}\n",
         "a key other than"},
        {"{'descr': \"<f4', 'shape': (9,)\", 'fortran_order': False, "
         "'shape': (2,)}\n",
         "not little-endian float32"},
        {"{'descr': '<f4', 'fortran_order': False}\n", "lacks descr"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "
         "'shape': (2,)}\n", "a key twice"},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (2,)}\n",
         "Fortran order"},
        {"{'descr': '<f4', 'fortran_order': Falsey, 'shape': (2,)}\n",
         "not True or False"},
        {"{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}\n",
         "not True or False"},
        {"{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}\n",
         "not little-endian"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (2,)}\n",
         "not little-endian"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': ()}\n",
         "0-dim"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (0,)}\n",
         "positive integer"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}\n",
         "positive integer"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4)}\n",
         "not a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': [4]}\n",
         "not a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3,)}\n",
         "tuple of integers"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': "
         "(1,1,1,1,1,1,1,1,1)}\n", "more than 8"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': "
         "(1099511627777,)}\n", "too large"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': "
         "(1048576, 1048577)}\n", "too many elements"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", "newline"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x\n",
         "text after"},
        {"{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}\n",
         "',' or '}'"},
        {"{'descr' '<f4', 'fortran_order': False, 'shape': (2,)}\n",
         "lacks a ':'"},
        {"{descr: '<f4', 'fortran_order': False, 'shape': (2,)}\n",
         "not a string"},
        {"{'descr: '<f4', 'fortran_order': False, 'shape': (2,)}\n",
         "other than"},
        {"{'descr': '<f4\n", "not a string"},
        {"'descr': '<f4'\n", "not a dict"},
        {"\n", "not a dict"},
        {"", "newline"},
    };
    for (size_t i = 0; i < NELEM(bad); i++) {
        tb_dtype dt;
        tb_shape sh;
        const char *why = NULL;
        int rc = parse(bad[i].h, &dt, &sh, &why);
        if (rc != TB_EPARSE || !why || !strstr(why, bad[i].why)) {
            print_error("%zu: %s: rc %d, why '%s', want '%s'\n", i, bad[i].h,
                        rc, why ? why : "(none)", bad[i].why);
            fail();
        }
    }
    /* a NUL inside the header is not text */
    static const char nul[] = "{'descr': '<f\0', 'fortran_order': False, "
                              "'shape': (2,)}\n";
    tb_dtype dt;
    tb_shape sh;
    const char *why;
    assert_int_equal(tb_npy_parse_header(nul, sizeof nul - 1, &dt, &sh,
                                         &why),
                     TB_EPARSE);
}

/* Every header the writer makes parses back to the tensor's dtype and
 * shape (odd dims, 1 to 8 of them). */
static void test_encode_roundtrip(void **state)
{
    (void)state;
    static const int64_t dims[] = {1, 7, 513, 2, 3, 1, 5, 4};
    for (int dt = 0; dt < 2; dt++) {
        for (int nd = 1; nd <= 8; nd++) {
            tb_shape s = {0};
            s.ndim = nd;
            for (int d = 0; d < nd; d++)
                s.dim[d] = dims[d];
            if (nd > 3)
                s.dim[2] = 3; /* keep it small */
            tb_tensor t;
            tb_dtype want = dt ? TB_F64 : TB_F32;
            assert_int_equal(tb_tensor_create(&t, want, &s), 0);
            char *buf;
            size_t len;
            assert_int_equal(tb_npy_encode(&t, &buf, &len), 0);
            size_t hlen = (unsigned char)buf[8] |
                          (size_t)(unsigned char)buf[9] << 8;
            assert_int_equal((10 + hlen) % 64, 0);
            tb_dtype got;
            tb_shape sh;
            const char *why = NULL;
            if (tb_npy_parse_header(buf + 10, hlen, &got, &sh, &why)) {
                print_error("%.*s: %s\n", (int)hlen, buf + 10, why);
                fail();
            }
            assert_int_equal(got, want);
            assert_int_equal(sh.ndim, nd);
            for (int d = 0; d < nd; d++)
                assert_int_equal(sh.dim[d], s.dim[d]);
            free(buf);
            tb_tensor_destroy(&t);
        }
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numpy_headers),
        cmocka_unit_test(test_bad_headers),
        cmocka_unit_test(test_encode_roundtrip),
    };
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--filter") == 0)
            cmocka_set_test_filter(argv[i + 1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
