/* Documents of the resources folder: a document takes shared parts from files of its folder
 * (<!--#include file="NAME" -->), assembled once at load and served whole; a part named by a
 * path, a missing part, a part that includes another, or an assembled document over the size
 * limit stop the load, naming the file. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mem.h"
#include "server/protocol/dispatch.h"
#include "server/protocol/resources.h"
#include "server/protocol/server.h"
#include "tests/check_main.h"

#define DOC_URI "ui://t/page"

static char doc_dir[256];

static void doc_write(const char *name, const char *text)
{
	char *path = mem_printf("%s/%s", doc_dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

static void setup(void)
{
	snprintf(doc_dir, sizeof doc_dir, "%s/bikaroo-documents.XXXXXX", P_tmpdir);
	ck_assert_ptr_nonnull(mkdtemp(doc_dir));
}

static void teardown(void)
{
	static const char *const names[] = {"page.html", "look.css", "talk.js",
					    "nested.js", "big.txt",  NULL};
	for (int i = 0; names[i]; i++) {
		char *path = mem_printf("%s/%s", doc_dir, names[i]);
		unlink(path);
		free(path);
	}
	rmdir(doc_dir);
}

/* page.html served as DOC_URI from doc_dir: its service, or NULL when it does not load. */
static struct mcp_service *doc_load(void)
{
	static const struct resource_desc rows[] = {{
		.uri = DOC_URI,
		.name = "page",
		.mime_type = "text/html",
		.file = "page.html",
	}};
	static const struct mcp_server s = {
		.name = "documents", .version = "1", .resources = rows, .nresources = 1};
	struct mcp_service_config cfg = {.resources_dir = doc_dir, .prompts_dir = "prompts"};
	return mcp_service_new(&s, &cfg);
}

START_TEST(a_document_is_served_whole_with_its_parts_in_place)
{
	doc_write("look.css", "body { margin: 0; }\n");
	doc_write("talk.js", "const said = \"<b>\";\n");
	doc_write("page.html", "<style>\n<!--#include file=\"look.css\" -->h1 { color: red; }\n"
			       "</style><script>\n<!--#include file=\"talk.js\" --></script>\n"
			       "<script><!--#include file=\"talk.js\" --></script>\n");
	struct mcp_service *svc = doc_load();
	ck_assert_ptr_nonnull(svc);
	const char *mime = NULL;
	ck_assert_str_eq(
		resources_document(svc, DOC_URI, &mime),
		"<style>\nbody { margin: 0; }\nh1 { color: red; }\n</style><script>\n"
		"const said = \"<b>\";\n</script>\n<script>const said = \"<b>\";\n</script>\n");
	ck_assert_str_eq(mime, "text/html");
	mcp_service_free(svc);
}
END_TEST

START_TEST(a_document_without_parts_is_served_as_written)
{
	/* Comments that are no directive stay as they are. */
	static const char *const kept[] = {"<p>A comment <!-- include --> stays.</p>\n",
					   "<p>Write <!--#include file=NAME --> to share.</p>\n",
					   NULL};
	for (int i = 0; kept[i]; i++) {
		doc_write("page.html", kept[i]);
		struct mcp_service *svc = doc_load();
		ck_assert_ptr_nonnull(svc);
		ck_assert_str_eq(resources_document(svc, DOC_URI, NULL), kept[i]);
		mcp_service_free(svc);
	}
}
END_TEST

START_TEST(a_part_is_a_file_of_the_same_folder_and_nothing_else)
{
	doc_write("look.css", "body { margin: 0; }\n");
	static const char *const refused[] = {"<!--#include file=\"../look.css\" -->",
					      "<!--#include file=\"sub/look.css\" -->",
					      "<!--#include file=\".look.css\" -->",
					      "<!--#include file=\"/look.css\" -->",
					      "<!--#include file=\"\" -->",
					      "<!--#include file=\"look.css\"-->",
					      "<!--#include file=\"missing.css\" -->",
					      NULL};
	for (int i = 0; refused[i]; i++) {
		doc_write("page.html", refused[i]);
		struct mcp_service *svc = doc_load();
		ck_assert_msg(svc == NULL, "loaded: %s", refused[i]);
	}
}
END_TEST

START_TEST(a_part_includes_nothing)
{
	doc_write("talk.js", "const a = 1;\n");
	doc_write("nested.js", "<!--#include file=\"talk.js\" -->\n");
	doc_write("page.html", "<script><!--#include file=\"nested.js\" --></script>\n");
	ck_assert_ptr_null(doc_load());
}
END_TEST

START_TEST(the_assembled_document_stays_within_the_size_limit)
{
	size_t n = RESOURCES_FILE_MAX / 2 + 1;
	char *big = mem_alloc(n + 1);
	memset(big, 'x', n);
	big[n] = '\0';
	doc_write("big.txt", big);
	free(big);
	doc_write("page.html", "<!--#include file=\"big.txt\" -->\n");
	struct mcp_service *svc = doc_load();
	ck_assert_ptr_nonnull(svc);
	mcp_service_free(svc);
	doc_write("page.html",
		  "<!--#include file=\"big.txt\" --><!--#include file=\"big.txt\" -->");
	ck_assert_ptr_null(doc_load());
}
END_TEST

CHECK_SUITE(documents)
{
	Suite *s = suite_create("documents");
	TCase *tc = tcase_create("documents");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, a_document_is_served_whole_with_its_parts_in_place);
	tcase_add_test(tc, a_document_without_parts_is_served_as_written);
	tcase_add_test(tc, a_part_is_a_file_of_the_same_folder_and_nothing_else);
	tcase_add_test(tc, a_part_includes_nothing);
	tcase_add_test(tc, the_assembled_document_stays_within_the_size_limit);
	suite_add_tcase(s, tc);
	return s;
}
