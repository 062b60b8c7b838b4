/* A declared read's document is written from its rows as text (adapter_document), never as a
 * tree: its bytes must be what the tree it replaced wrote (each shown column set on an object by
 * jansson in declared order, then jsonw_dump), for every form and for text jansson would refuse
 * (a string that is not UTF-8 is left out, a JSON column that does not parse is null). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "server/capabilities/adapter.h"
#include "server/capabilities/declared.h"
#include "tests/check_main.h"

static const struct declared_field fields[] = {
	{.column = "bike_id", .name = "bikeId", .json = DECLARED_STRING},
	{.column = "secret", .name = NULL, .json = DECLARED_STRING}, /* withheld */
	{.column = "battery_pct", .name = "batteryPct", .json = DECLARED_INTEGER, .nullable = true},
	{.column = "active", .name = "active", .json = DECLARED_BOOLEAN},
	{.column = "extra", .name = "extra", .json = DECLARED_JSON, .nullable = true},
	{.column = "note", .name = "note \"n\"", .json = DECLARED_STRING, .nullable = true},
};
#define NCOLS (sizeof fields / sizeof fields[0])

/* The tree the document was built as before it was written as text. */
static json_t *tree_row(char *const *row)
{
	json_t *o = json_object();
	for (size_t i = 0; i < NCOLS; i++) {
		const struct declared_field *f = &fields[i];
		const char *v = row[i];
		json_t *j;
		if (!f->name)
			continue;
		if (!v)
			j = json_null();
		else if (f->json == DECLARED_INTEGER)
			j = json_integer(strtoll(v, NULL, 10));
		else if (f->json == DECLARED_BOOLEAN)
			j = json_boolean(strcmp(v, "t") == 0);
		else if (f->json == DECLARED_JSON)
			j = (j = json_loads(v, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL))
				    ? j
				    : json_null();
		else
			j = json_string(v);
		json_object_set_new(o, f->name, j); /* NULL (not UTF-8): left out */
	}
	return o;
}

static char *rows[][NCOLS] = {
	{"VL-1", "hidden", "87", "t", "{\"b\":[1,2.5,null],\"a\":\"x\"}", "plain"},
	{"VL-\"2\"\\\n\t\x01\x1f", "x", "-3", "f", "[ 1 , true ]", "caf\xc3\xa9 \xe2\x82\xac"},
	{"VL-3", NULL, NULL, "f", NULL, NULL},
	{"VL-4", "x", "0", "t", "not json", "bad \xff\xfe utf-8"},
	{"\xc3\x28", "x", "9223372036854775807", "t", "\"s\"", "\xed\xa0\x80 surrogate"},
};
#define NROWS (sizeof rows / sizeof rows[0])

START_TEST(an_object_read_is_written_as_its_tree_was)
{
	struct declared_read r = {.query = {.ncolumns = NCOLS}, .fields = fields};
	for (size_t i = 0; i < NROWS; i++) {
		struct mem_buf b = {0};
		adapter_document(&b, NULL, &r, rows[i], 1, NULL);
		json_t *t = tree_row(rows[i]);
		char *want = jsonw_dump(t);
		ck_assert_msg(strcmp(b.p, want) == 0, "row %zu:\n want %s\n got  %s", i, want, b.p);
		ck_assert_uint_eq(b.len, strlen(want));
		free(want);
		json_decref(t);
		free(b.p);
	}
}
END_TEST

START_TEST(a_list_read_is_written_as_its_tree_was)
{
	struct declared_read r = {
		.query = {.ncolumns = NCOLS, .list = true}, .fields = fields, .list = "bikes"};
	for (size_t n = 0; n <= NROWS; n++) {
		struct mem_buf b = {0};
		adapter_document(&b, NULL, &r, &rows[0][0], n, NULL);
		json_t *list = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(list, tree_row(rows[i]));
		json_t *t = json_pack("{s:o}", "bikes", list);
		char *want = jsonw_dump(t);
		ck_assert_msg(strcmp(b.p, want) == 0, "%zu rows:\n want %s\n got  %s", n, want,
			      b.p);
		free(want);
		json_decref(t);
		free(b.p);
	}
}
END_TEST

CHECK_SUITE(document)
{
	Suite *s = suite_create("document");
	TCase *tc = tcase_create("written");
	tcase_add_test(tc, an_object_read_is_written_as_its_tree_was);
	tcase_add_test(tc, a_list_read_is_written_as_its_tree_was);
	suite_add_tcase(s, tc);
	return s;
}
