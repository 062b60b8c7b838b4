/* common/jsonw.c writes every response: it must write exactly what json_dumps(JSON_COMPACT)
 * writes, for every value jansson can hold. Fixed edge cases, then random documents. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "tests/check_main.h"

/* Both writers agree on v (consumed). */
static void jsonw_same(json_t *v)
{
	char *want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	char *got = jsonw_dump(v);
	ck_assert_ptr_nonnull(want);
	ck_assert_ptr_nonnull(got);
	ck_assert_msg(strcmp(want, got) == 0, "jansson: %s\njsonw:   %s", want, got);
	free(want);
	free(got);
	json_decref(v);
}

START_TEST(edge_cases_match_jansson)
{
	/* Every control character, the two mandatory escapes, and what needs none. */
	char all[160];
	size_t n = 0;
	for (int c = 0; c < 0x20; c++)
		all[n++] = (char)c;
	memcpy(all + n, "\"\\/\x7f", 4);
	n += 4;
	memcpy(all + n, "\xc3\xa9\xe2\x80\xa8\xf0\x9f\x9a\xb2", 9); /* é, U+2028, a bicycle */
	n += 9;
	jsonw_same(json_stringn(all, n));
	jsonw_same(json_string(""));
	jsonw_same(json_object());
	jsonw_same(json_array());
	jsonw_same(json_loads("{\"a\":{},\"b\":[],\"c\":[{}],\"d\":{\"e\":[null,true,false]}}", 0,
			      NULL));
	jsonw_same(json_integer(0));
	jsonw_same(json_integer(INT64_MAX));
	jsonw_same(json_integer(INT64_MIN));
	const double reals[] = {0.0,
				-0.0,
				1.0,
				-1.5,
				0.1,
				1e-7,
				1e21,
				1e300,
				5e-324,
				DBL_MAX,
				123456789012345678.0,
				2.5e-5,
				100.0,
				1e16,
				1e17};
	for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
		jsonw_same(json_real(reals[i]));
	/* Keys need the same escapes as strings; an embedded NUL too. */
	json_t *o = json_object();
	json_object_setn_new(o, "k\0ey", 4, json_string("v"));
	json_object_set_new(o, "q\"\\\n", json_null());
	json_object_set_new(o, "z", json_integer(1));
	json_object_set_new(o, "a", json_integer(2)); /* insertion order, not sorted */
	jsonw_same(o);
	ck_assert_ptr_null(jsonw_dump(NULL));
}
END_TEST

static uint64_t jsonw_rng = 0x9e3779b97f4a7c15u;
static unsigned jsonw_next(unsigned bound)
{
	jsonw_rng ^= jsonw_rng << 13;
	jsonw_rng ^= jsonw_rng >> 7;
	jsonw_rng ^= jsonw_rng << 17;
	return (unsigned)(jsonw_rng % bound);
}

/* A random valid UTF-8 string of up to 24 code points (ASCII, controls, 2-, 3- and 4-byte). */
static size_t jsonw_random_text(char *out)
{
	size_t n = 0, len = jsonw_next(25);
	for (size_t i = 0; i < len; i++) {
		unsigned kind = jsonw_next(10), cp;
		if (kind < 5)
			cp = 0x20 + jsonw_next(0x5f);
		else if (kind < 7)
			cp = jsonw_next(0x20);
		else if (kind == 7)
			cp = 0x80 + jsonw_next(0x780);
		else if (kind == 8) {
			cp = 0x800 + jsonw_next(0xf800);
			if (cp >= 0xd800 && cp <= 0xdfff)
				cp = 0xe000;
		} else
			cp = 0x10000 + jsonw_next(0x100000);
		if (cp < 0x80) {
			out[n++] = (char)cp;
		} else if (cp < 0x800) {
			out[n++] = (char)(0xc0 | (cp >> 6));
			out[n++] = (char)(0x80 | (cp & 0x3f));
		} else if (cp < 0x10000) {
			out[n++] = (char)(0xe0 | (cp >> 12));
			out[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			out[n++] = (char)(0x80 | (cp & 0x3f));
		} else {
			out[n++] = (char)(0xf0 | (cp >> 18));
			out[n++] = (char)(0x80 | ((cp >> 12) & 0x3f));
			out[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			out[n++] = (char)(0x80 | (cp & 0x3f));
		}
	}
	return n;
}

static json_t *jsonw_random(int depth)
{
	char text[128];
	switch (jsonw_next(depth > 3 ? 6 : 8)) {
	case 0: return json_null();
	case 1: return json_boolean(jsonw_next(2));
	case 2: return json_integer((json_int_t)jsonw_next(1u << 31) * (jsonw_next(2) ? 1 : -1));
	case 3: {
		double d = ldexp((double)jsonw_next(1u << 30), (int)jsonw_next(200) - 100);
		return json_real(jsonw_next(2) ? d : -d);
	}
	case 4:
	case 5: {
		size_t n = jsonw_random_text(text);
		return json_stringn(text, n);
	}
	case 6: {
		json_t *a = json_array();
		for (unsigned i = jsonw_next(5); i > 0; i--)
			json_array_append_new(a, jsonw_random(depth + 1));
		return a;
	}
	default: {
		json_t *o = json_object();
		for (unsigned i = jsonw_next(5); i > 0; i--) {
			size_t n = jsonw_random_text(text);
			json_object_setn_new(o, text, n, jsonw_random(depth + 1));
		}
		return o;
	}
	}
}

START_TEST(random_documents_match_jansson)
{
	for (int i = 0; i < 5000; i++)
		jsonw_same(jsonw_random(0));
}
END_TEST

CHECK_SUITE(jsonw)
{
	Suite *s = suite_create("jsonw");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, edge_cases_match_jansson);
	tcase_add_test(tc, random_documents_match_jansson);
	suite_add_tcase(s, tc);
	return s;
}
