/* Every resource, resource template and prompt of the catalogue (catalog_describe: each row, read
 * here, so a new row is covered by being in the catalogue) is behind its scope and the caller's
 * rights, as the tools are: without fleet:read in the token, 403 insufficient_scope; for a
 * caller the database does not know as active (an unknown subject, an inactive principal, an
 * inactive client application), nothing: "Resource not found", "Unknown prompt", a listen that
 * honours none of them. And every path that reads the business takes from the read budget:
 * past it, resources/read of a row that reads, completion and a listen's URIs are 429. */
#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "examples.h"
#include "harness.h"
#include "server/capabilities/catalog.h"
#include "tests/check_main.h"

/* Declares the views' extension, so that their exclusive rows are offered too. */
#define ROWS_CAPS                                                                                  \
	"{\"extensions\":{\"" ADAPTER_UI_EXTENSION "\":{\"mimeTypes\":[\"" ADAPTER_UI_MIME_TYPE    \
	"\"]}}}"

/* One request of a modern client declaring ROWS_CAPS; name is the Mcp-Name value or NULL. */
static void rows_call(unsigned port, const char *method, const char *name, const char *params,
		      struct it_response *r)
{
	char *body =
		mem_printf("{\"jsonrpc\":\"2.0\",\"id\":\"rows\",\"method\":\"%s\",\"params\":{%s%s"
			   "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
			   "\"io.modelcontextprotocol/clientCapabilities\":" ROWS_CAPS "}}}",
			   method, params, *params ? "," : "");
	char mm[96], mn[512];
	snprintf(mm, sizeof mm, "Mcp-Method: %s", method);
	snprintf(mn, sizeof mn, "Mcp-Name: %s", name ? name : "");
	const char *headers[] = {"Content-Type: application/json",
				 "Accept: application/json, text/event-stream",
				 "MCP-Protocol-Version: 2026-07-28",
				 mm,
				 name ? mn : NULL,
				 NULL};
	it_http(port, "POST", "/mcp", headers, body, strlen(body), r);
	free(body);
}

/* A URI of each row: a fixed resource's own, a template's with a value of the right shape. */
static char *rows_uri(const struct resource_template_desc *t)
{
	return mem_printf("%sX1%s", t->prefix, t->suffix);
}

static void rows_start(struct it_server *s, const char *subject, const char *client,
		       const char *scopes, const char *extra)
{
	char se[128], ce[128], sc[128];
	snprintf(se, sizeof se, "BIKAROO_LOCAL_SUBJECT=%s", subject);
	snprintf(ce, sizeof ce, "BIKAROO_LOCAL_CLIENT=%s", client);
	snprintf(sc, sizeof sc, "BIKAROO_LOCAL_SCOPES=%s", scopes);
	const char *env[] = {se, ce, sc, "BIKAROO_RATE_STORE=local", extra, NULL};
	ck_assert_int_eq(it_server_start(s, env), 0);
}

/* Asks for every row; checks what each answer must be. forbidden: the token lacks fleet:read. */
static void rows_check_all(unsigned port, const struct mcp_server *p, bool forbidden,
			   const char *who)
{
	struct it_response r;
	char params[1024];
	for (size_t i = 0; i < p->nresources + p->ntemplates; i++) {
		bool fixed = i < p->nresources;
		char *uri = fixed ? mem_strdup(p->resources[i].uri)
				  : rows_uri(&p->templates[i - p->nresources]);
		snprintf(params, sizeof params, "\"uri\":\"%s\"", uri);
		rows_call(port, "resources/read", uri, params, &r);
		json_t *e = json_object_get(r.json, "error");
		if (forbidden) {
			ck_assert_msg(r.status == 403 && strstr(r.headers, "insufficient_scope") &&
					      strstr(r.headers, "fleet:read"),
				      "%s %s: HTTP %ld %s", who, uri, r.status, r.body);
		} else {
			ck_assert_msg(
				r.status == 200 && e &&
					strcmp(json_string_value(json_object_get(e, "message")),
					       "Resource not found") == 0,
				"%s %s: HTTP %ld %s", who, uri, r.status, r.body);
		}
		it_response_free(&r);
		free(uri);
	}
	for (size_t i = 0; i < p->nprompts; i++) {
		/* Its example's arguments: refused for who they are, not for what they ask. */
		const struct capability_example *ex = ex_find("prompt", p->prompts[i].name);
		snprintf(params, sizeof params, "\"name\":\"%s\",\"arguments\":%s",
			 p->prompts[i].name, ex ? ex->arguments : "{}");
		rows_call(port, "prompts/get", p->prompts[i].name, params, &r);
		json_t *e = json_object_get(r.json, "error");
		if (forbidden)
			ck_assert_msg(r.status == 403 && strstr(r.headers, "insufficient_scope"),
				      "%s prompt %s: HTTP %ld %s", who, p->prompts[i].name,
				      r.status, r.body);
		else
			ck_assert_msg(e && strcmp(json_string_value(json_object_get(e, "message")),
						  "Unknown prompt") == 0,
				      "%s prompt %s: %s", who, p->prompts[i].name, r.body);
		it_response_free(&r);
	}
}

/* The stream of a listen on uri, until its acknowledgement (or 5 s): new text. */
static size_t rows_keep(char *ptr, size_t size, size_t n, void *arg)
{
	char **got = arg;
	size_t old = *got ? strlen(*got) : 0;
	*got = mem_realloc(*got, old + size * n + 1);
	memcpy(*got + old, ptr, size * n);
	(*got)[old + size * n] = '\0';
	return strstr(*got, "acknowledged") ? 0 : size * n; /* 0: the client ends the stream */
}

static char *rows_listen(unsigned port, const char *uri, long *status)
{
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%u/mcp", port);
	char *body =
		mem_printf("{\"jsonrpc\":\"2.0\",\"id\":\"l\",\"method\":\"subscriptions/listen\","
			   "\"params\":{\"notifications\":{\"resourceSubscriptions\":[\"%s\"]},"
			   "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
			   "\"io.modelcontextprotocol/clientCapabilities\":" ROWS_CAPS "}}}",
			   uri);
	struct curl_slist *h = NULL;
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Accept: application/json, text/event-stream");
	h = curl_slist_append(h, "MCP-Protocol-Version: 2026-07-28");
	h = curl_slist_append(h, "Mcp-Method: subscriptions/listen");
	char *got = NULL;
	CURL *c = curl_easy_init();
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, rows_keep);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &got);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 5L);
	curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	free(body);
	return got ? got : mem_strdup("");
}

START_TEST(every_row_needs_the_scope_and_a_caller_the_database_knows)
{
	struct mcp_server p;
	ck_assert_int_eq(catalog_describe(&p, NULL), 0);
	ck_assert_uint_gt(p.nresources + p.ntemplates + p.nprompts, 0);
	free(it_sql("DELETE FROM fleet.principals WHERE subject = 'rows-inactive';"
		    "INSERT INTO fleet.principals (subject, display_name, role, active) VALUES"
		    " ('rows-inactive', 'Inactive', 'fleet_operator', false);"
		    "INSERT INTO fleet.principal_regions VALUES ('rows-inactive', 'FR-PAR');"
		    "DELETE FROM fleet.client_apps WHERE client_id = 'rows-inactive-app';"
		    "INSERT INTO fleet.client_apps (client_id, name, may_read, may_report, active)"
		    " VALUES ('rows-inactive-app', 'Inactive app', true, true, false)"));
	struct it_server s;
	rows_start(&s, "marie", "customer-care-assistant", "fleet:report", NULL);
	rows_check_all(s.port, &p, true, "a token without fleet:read");
	ck_assert_int_eq(it_server_stop(&s), 0);
	static const char *const nobody[][3] = {
		{"rows-nobody", "customer-care-assistant", "an unknown subject"},
		{"rows-inactive", "customer-care-assistant", "an inactive principal"},
		{"marie", "rows-inactive-app", "an inactive client application"},
	};
	for (size_t k = 0; k < sizeof nobody / sizeof nobody[0]; k++) {
		rows_start(&s, nobody[k][0], nobody[k][1], "fleet:read fleet:report", NULL);
		rows_check_all(s.port, &p, false, nobody[k][2]);
		/* A listen honours none of the rows for them. */
		for (size_t i = 0; i < p.nresources; i++) {
			long status = 0;
			char *got = rows_listen(s.port, p.resources[i].uri, &status);
			ck_assert_msg(status == 200 && strstr(got, "acknowledged") &&
					      !strstr(got, "resourceSubscriptions"),
				      "%s: listen on %s: %ld %s", nobody[k][2], p.resources[i].uri,
				      status, got);
			free(got);
		}
		ck_assert_int_eq(it_server_stop(&s), 0);
	}
	free(it_sql("DELETE FROM fleet.principal_regions WHERE subject = 'rows-inactive';"
		    "DELETE FROM fleet.principals WHERE subject = 'rows-inactive';"
		    "DELETE FROM fleet.client_apps WHERE client_id = 'rows-inactive-app'"));
	mcp_server_release(&p);
}
END_TEST

/* Past the read budget, every path that reads the business is refused as a read tool's call is:
 * 429, Retry-After, MCP_RATE_LIMITED; a document still answers. */
START_TEST(every_business_read_takes_from_the_read_budget)
{
	struct it_server s;
	rows_start(&s, "marie", "customer-care-assistant", "fleet:read fleet:report",
		   "BIKAROO_RATE_READS=1");
	/* BIKAROO_RATE_READ_BURST stays the default: spend it on the bike resource. */
	struct it_response r;
	const char *bike = "\"uri\":\"bikaroo://fleet/bikes/VL-2048\"";
	long last = 200;
	for (int i = 0; i < 1000 && last == 200; i++) {
		rows_call(s.port, "resources/read", "bikaroo://fleet/bikes/VL-2048", bike, &r);
		last = r.status;
		it_response_free(&r);
	}
	ck_assert_int_eq(last, 429);
	struct {
		const char *method, *name, *params;
	} reads[] = {
		{"resources/read", "bikaroo://cases/IC-1001",
		 "\"uri\":\"bikaroo://cases/IC-1001\""},
		{"resources/read", "bikaroo://fleet/status-codes",
		 "\"uri\":\"bikaroo://fleet/status-codes\""},
		{"completion/complete", NULL,
		 "\"ref\":{\"type\":\"ref/resource\",\"uri\":\"bikaroo://fleet/bikes/{bikeId}\"},"
		 "\"argument\":{\"name\":\"bikeId\",\"value\":\"VL-20\"}"},
		{"tools/call", "get_bike_status",
		 "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-2048\"}"},
	};
	for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
		rows_call(s.port, reads[i].method, reads[i].name, reads[i].params, &r);
		json_t *e = json_object_get(r.json, "error");
		ck_assert_msg(r.status == 429 && strstr(r.headers, "Retry-After") &&
				      json_integer_value(json_object_get(e, "code")) == -32029,
			      "%s %s: HTTP %ld %s", reads[i].method, reads[i].params, r.status,
			      r.body);
		it_response_free(&r);
	}
	long status = 0;
	char *got = rows_listen(s.port, "bikaroo://fleet/bikes/VL-2048", &status);
	ck_assert_msg(status == 429, "listen past the budget: %ld %s", status, got);
	free(got);
	/* A document reads nothing of the business: it still answers. */
	rows_call(s.port, "resources/read", "bikaroo://procedures/damaged-bike",
		  "\"uri\":\"bikaroo://procedures/damaged-bike\"", &r);
	ck_assert_msg(r.status == 200, "%s", r.body);
	it_response_free(&r);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

CHECK_SUITE(rows)
{
	Suite *s = suite_create("rows");
	TCase *tc = tcase_create("scope-rights-budget");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, every_row_needs_the_scope_and_a_caller_the_database_knows);
	tcase_add_test(tc, every_business_read_takes_from_the_read_budget);
	suite_add_tcase(s, tc);
	return s;
}
