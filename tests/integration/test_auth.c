/* Authorization against a real authorization server (tests/auth/as.mjs, npm oidc-provider):
 * the adversarial cases of tests/auth/cases.json, introspection, issuer outages, key refresh,
 * the stdio identity rule, row-level security with the C check compiled out, and no token ever
 * in a log or in the database. */
#define _GNU_SOURCE /* for strcasestr */
#include <check.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/b64.h"
#include "common/csv.h"
#include "common/mem.h"
#include "domain/pg/db.h"
#include "server/auth/auth.h"
#include "server/cfg.h"
#include "server/auth/identity.h"
#include "domain/rights.h"
#include "server/capabilities/catalog.h"
#include "server/protocol/tools.h"
#include "harness.h"
#include "tests/check_main.h"

/* The identity environment the composition root (server/main.c) hands identity, from a cfg. */
#define ENV_OF(c)                                                                                  \
	.token = (c).token, .local_subject = (c).local_subject, .local_client = (c).local_client,  \
	.local_scopes = (c).local_scopes, .development_db = rights_development_db

#define AUTH_RESOURCE IT_AS_RESOURCE
#define AUTH_PRM "https://mcp.bikaroo.test/.well-known/oauth-protected-resource/mcp"

/* GET path on the AS; returns the parsed JSON (new reference). */
static json_t *as_get(const struct it_as *as, const char *path)
{
	struct it_response r;
	it_http(as->port, "GET", path, NULL, NULL, 0, &r);
	ck_assert_msg(r.status == 200 && r.json, "AS %s: %ld %s", path, r.status, r.body);
	json_t *j = json_incref(r.json);
	it_response_free(&r);
	return j;
}

static char *as_escape(const char *s)
{
	CURL *c = curl_easy_init();
	char *e = curl_easy_escape(c, s, 0);
	char *out = mem_strdup(e);
	curl_free(e);
	curl_easy_cleanup(c);
	return out;
}

/* A token for spec (an entry of cases.json "tokens"): minted by a real flow, or forged. */
static char *as_token(const struct it_as *as, json_t *spec)
{
	const char *forge = json_string_value(json_object_get(spec, "forge"));
	char *path;
	if (forge) {
		path = mem_printf("/forge?kind=%s", forge);
	} else {
		const char *res = json_string_value(json_object_get(spec, "resource"));
		char *scope = as_escape(json_string_value(json_object_get(spec, "scope")));
		char *resource = as_escape(res ? res : AUTH_RESOURCE);
		const char *grant = json_string_value(json_object_get(spec, "grant"));
		const char *sub = json_string_value(json_object_get(spec, "sub"));
		path = mem_printf("/mint?client=%s&scope=%s&resource=%s&grant=%s&sub=%s",
				  json_string_value(json_object_get(spec, "client")), scope,
				  resource, grant ? grant : "authorization_code", sub ? sub : "");
		free(scope);
		free(resource);
	}
	json_t *r = as_get(as, path);
	free(path);
	const char *use = json_string_value(json_object_get(spec, "use"));
	const char *t = json_string_value(json_object_get(r, use ? use : "access_token"));
	ck_assert_msg(t != NULL, "no token in the AS answer");
	char *out = mem_strdup(t);
	json_decref(r);
	return out;
}

/* ---- the business-state digest --------------------------------------------------------- */

/* Digest of every business table (audit tables excluded: refusals are meant to be audited). */
static char *auth_digest(void)
{
	return it_sql("SELECT it_auth.fleet_digest()");
}

static void auth_digest_install(void)
{
	free(it_sql("CREATE SCHEMA IF NOT EXISTS it_auth"));
	char *ok = it_sql(
		"CREATE OR REPLACE FUNCTION it_auth.fleet_digest() RETURNS text LANGUAGE plpgsql "
		"AS $$"
		" DECLARE r record; acc text := ''; part text; BEGIN"
		" FOR r IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = "
		"c.relnamespace"
		"  WHERE n.nspname = 'fleet' AND c.relkind = 'r' AND c.relname NOT LIKE '%audit%'"
		"  ORDER BY 1 LOOP"
		"  EXECUTE format('SELECT coalesce(string_agg(t::text, chr(10) ORDER BY t::text), "
		"'''')"
		"   FROM fleet.%I t', r.relname) INTO part;"
		"  acc := acc || r.relname || ':' || md5(part) || ';';"
		" END LOOP; RETURN md5(acc); END $$");
	ck_assert_ptr_nonnull(ok);
	free(ok);
}

/* ---- the data-driven adversarial suite --------------------------------------------------- */

static struct it_as as_jwt;
static struct it_server auth_srv;
static json_t *auth_cases, *auth_tokens;

/* Starts the server validating JWTs of the test authorization server at issuer_url, with extra
 * settings (NULL-terminated list of "NAME=value", at most 8, or NULL). */
static void auth_jwt_server(struct it_server *s, const char *issuer_url, const char *const *extra)
{
	char issuer[160];
	snprintf(issuer, sizeof issuer, "BIKAROO_AUTH_ISSUER=%s", issuer_url);
	const char *env[13] = {"BIKAROO_AUTH=jwt", issuer, "BIKAROO_RESOURCE_URI=" AUTH_RESOURCE,
			       "BIKAROO_AUTH_INSECURE_LOOPBACK=1"};
	size_t n = 4;
	for (; extra && *extra && n < 12; extra++)
		env[n++] = *extra;
	env[n] = NULL;
	ck_assert_int_eq(it_server_start(s, env), 0);
}

static void auth_setup(void)
{
	json_error_t e;
	auth_cases = json_load_file("tests/auth/cases.json", JSON_REJECT_DUPLICATES, &e);
	ck_assert_msg(auth_cases != NULL, "cases.json: %s line %d", e.text, e.line);
	it_as_start(&as_jwt, "jwt");
	auth_tokens = json_object();
	const char *name;
	json_t *spec;
	json_object_foreach (json_object_get(auth_cases, "tokens"), name, spec) {
		char *t = as_token(&as_jwt, spec);
		json_object_set_new(auth_tokens, name, json_string(t));
		free(t);
	}
	auth_digest_install();
	const char *extra[] = {"BIKAROO_LOG_LEVEL=debug", NULL};
	auth_jwt_server(&auth_srv, as_jwt.issuer, extra);
}

static void auth_teardown(void)
{
	ck_assert_int_eq(it_server_stop(&auth_srv), 0);
	it_as_stop(&as_jwt);
	json_decref(auth_tokens);
	json_decref(auth_cases);
}

static const char *auth_tok(const char *name)
{
	const char *t = json_string_value(json_object_get(auth_tokens, name));
	ck_assert_msg(t != NULL, "no token named %s", name);
	return t;
}

/* Replaces $META, $PRM, $ISSUER, $RESOURCE and %s (marie's token) in text (new string). */
static char *auth_expand(const char *text)
{
	static const char meta[] =
		"\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
		"\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}";
	const char *from[] = {"$META", "$PRM", "$ISSUER", "$RESOURCE", "%s"};
	const char *to[] = {meta, AUTH_PRM, as_jwt.issuer, AUTH_RESOURCE, auth_tok("marie")};
	size_t cap = strlen(text) * 2 + 16384, o = 0;
	char *out = mem_alloc(cap);
	for (const char *p = text; *p;) {
		size_t i;
		for (i = 0; i < 5; i++)
			if (strncmp(p, from[i], strlen(from[i])) == 0)
				break;
		if (i < 5) {
			o += (size_t)snprintf(out + o, cap - o, "%s", to[i]);
			p += strlen(from[i]);
		} else {
			out[o++] = *p++;
		}
	}
	out[o] = '\0';
	return out;
}

static void auth_expand_json(json_t *j)
{
	const char *k;
	json_t *v;
	size_t i;
	if (json_is_object(j)) {
		json_object_foreach (j, k, v) {
			if (json_is_string(v)) {
				char *x = auth_expand(json_string_value(v));
				json_object_set_new(j, k, json_string(x));
				free(x);
			} else {
				auth_expand_json(v);
			}
		}
	} else if (json_is_array(j)) {
		json_array_foreach (j, i, v) {
			if (json_is_string(v)) {
				char *x = auth_expand(json_string_value(v));
				json_array_set_new(j, i, json_string(x));
				free(x);
			} else {
				auth_expand_json(v);
			}
		}
	}
}

static bool auth_tool_registered(const char *name)
{
	struct mcp_server product;
	ck_assert_int_eq(catalog_describe(&product, NULL), 0);
	bool found = false;
	for (size_t i = 0; i < product.ntools; i++)
		found = found || strcmp(product.tools[i].name, name) == 0;
	mcp_server_release(&product);
	return found;
}

/* The value of response header name (without CRLF) in r, or NULL. buf receives it. */
static const char *auth_header(const struct it_response *r, const char *name, char *buf, size_t cap)
{
	size_t n = strlen(name);
	for (const char *p = r->headers; p && *p;) {
		const char *eol = strstr(p, "\r\n");
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		if (len > n && strncasecmp(p, name, n) == 0 && p[n] == ':') {
			const char *v = p + n + 1;
			while (*v == ' ')
				v++;
			size_t vl = len - (size_t)(v - p);
			snprintf(buf, cap, "%.*s", (int)vl, v);
			return buf;
		}
		p = eol ? eol + 2 : NULL;
	}
	return NULL;
}

/* Sends the request described by case c; fills r. */
static void auth_send(json_t *c, struct it_response *r)
{
	const char *headers[24];
	int nh = 0;
	char *owned[24];
	int no = 0;
	headers[nh++] = "Content-Type: application/json";
	headers[nh++] = "Accept: application/json, text/event-stream";
	headers[nh++] = "MCP-Protocol-Version: 2026-07-28";
	const char *method = json_string_value(json_object_get(c, "method"));
	const char *tool = json_string_value(json_object_get(c, "tool"));
	if (!method)
		method = "tools/call";
	const char *mm = json_string_value(json_object_get(c, "mcp_method"));
	const char *mn = json_string_value(json_object_get(c, "mcp_name"));
	headers[nh++] = owned[no++] = mem_printf("Mcp-Method: %s", mm ? mm : method);
	if (tool || mn)
		headers[nh++] = owned[no++] = mem_printf("Mcp-Name: %s", mn ? mn : tool);
	const char *tname = json_string_value(json_object_get(c, "token"));
	if (tname)
		headers[nh++] = owned[no++] =
			mem_printf("Authorization: Bearer %s", auth_tok(tname));
	size_t i;
	json_t *h;
	json_array_foreach (json_object_get(c, "authorization"), i, h) {
		char *v = auth_expand(json_string_value(h));
		headers[nh++] = owned[no++] = mem_printf("Authorization: %s", v);
		free(v);
	}
	json_t *extra = json_object_get(c, "extra_headers");
	for (i = 0; i < json_array_size(extra); i++)
		headers[nh++] = json_string_value(json_array_get(extra, i));
	bool chunked = json_is_true(json_object_get(c, "chunked"));
	if (chunked)
		headers[nh++] = "Transfer-Encoding: chunked";
	headers[nh] = NULL;

	char *body = NULL;
	size_t body_len = 0;
	json_t *jb = json_object_get(c, "body");
	json_int_t big = json_integer_value(json_object_get(c, "big_body"));
	if (big > 0) {
		body_len = (size_t)big;
		body = mem_alloc(body_len + 1);
		memset(body, ' ', body_len);
		body[body_len] = '\0';
	} else if (json_is_string(jb)) {
		body = auth_expand(json_string_value(jb));
		body_len = strlen(body);
	} else if (!jb) {
		json_t *params = json_object();
		if (tool) {
			json_object_set_new(params, "name", json_string(tool));
			json_object_set(params, "arguments", json_object_get(c, "args"));
		}
		if (json_is_object(json_object_get(c, "params")))
			json_object_update(params, json_object_get(c, "params"));
		json_object_set_new(
			params, "_meta",
			json_pack("{s:s, s:{}}", "io.modelcontextprotocol/protocolVersion",
				  "2026-07-28", "io.modelcontextprotocol/clientCapabilities"));
		json_t *msg = json_pack("{s:s, s:i, s:s, s:o}", "jsonrpc", "2.0", "id", 42,
					"method", method, "params", params);
		body = json_dumps(msg, JSON_COMPACT);
		json_decref(msg);
		body_len = strlen(body);
	}
	const char *http_method = json_string_value(json_object_get(c, "http_method"));
	const char *path = json_string_value(json_object_get(c, "path"));
	char *xpath = auth_expand(path ? path : "/mcp");
	it_http(auth_srv.port, http_method ? http_method : "POST", xpath, headers, body, body_len,
		r);
	free(xpath);
	free(body);
	for (int k = 0; k < no; k++)
		free(owned[k]);
}

static void auth_check(const char *name, json_t *expect, struct it_response *r)
{
	long want = (long)json_integer_value(json_object_get(expect, "status"));
	ck_assert_msg(r->status == want, "%s: status %ld, want %ld; body %s", name, r->status, want,
		      r->body);
	char buf[1024];
	const char *wa = json_string_value(json_object_get(expect, "www_authenticate"));
	if (wa) {
		char *w = auth_expand(wa);
		const char *got = auth_header(r, "WWW-Authenticate", buf, sizeof buf);
		ck_assert_msg(got && strcmp(got, w) == 0, "%s: WWW-Authenticate %s, want %s", name,
			      got ? got : "(none)", w);
		free(w);
	}
	if (json_is_true(json_object_get(expect, "invalid_token"))) {
		const char *got = auth_header(r, "WWW-Authenticate", buf, sizeof buf);
		ck_assert_msg(got && strncmp(got, "Bearer error=\"invalid_token\"", 28) == 0 &&
				      strstr(got, "resource_metadata=\"" AUTH_PRM "\""),
			      "%s: WWW-Authenticate %s", name, got ? got : "(none)");
		ck_assert_msg(strstr(r->body, "\"error\":\"invalid_token\""), "%s: body %s", name,
			      r->body);
	}
	if (want == 200)
		ck_assert_msg(!auth_header(r, "WWW-Authenticate", buf, sizeof buf),
			      "%s: unexpected challenge %s", name, buf);
	const char *hdr = json_string_value(json_object_get(expect, "header"));
	if (hdr)
		ck_assert_msg(strcasestr(r->headers, hdr) != NULL, "%s: no %s in %s", name, hdr,
			      r->headers);
	json_t *result = json_object_get(r->json, "result");
	json_t *is_error = json_object_get(expect, "isError");
	if (is_error)
		ck_assert_msg(json_equal(json_object_get(result, "isError"), is_error),
			      "%s: isError in %s", name, r->body);
	const char *tc = json_string_value(json_object_get(expect, "text_contains"));
	if (tc)
		ck_assert_msg(strstr(r->body, tc) != NULL, "%s: %s not in %s", name, tc, r->body);
	json_t *code = json_object_get(expect, "code");
	if (code)
		ck_assert_msg(json_integer_value(
				      json_object_get(json_object_get(r->json, "error"), "code")) ==
				      json_integer_value(code),
			      "%s: code in %s", name, r->body);
	const char *cs = json_string_value(json_object_get(expect, "cacheScope"));
	if (cs)
		ck_assert_msg(
			strcmp(json_string_value(json_object_get(result, "cacheScope")), cs) == 0,
			"%s: cacheScope in %s", name, r->body);
	json_t *tools = json_object_get(result, "tools");
	size_t i;
	json_t *t;
	json_t *want_tools = json_object_get(expect, "tools");
	json_t *derived = NULL;
	const char *scope = json_string_value(json_object_get(expect, "tools_with_scope"));
	if (scope) {
		/* Exactly the catalogue's tools that need this scope and that the roles of the
		 * token's subject (tools_for_subject) may use, in its order. */
		const char *subject =
			json_string_value(json_object_get(expect, "tools_for_subject"));
		ck_assert_msg(subject, "%s: tools_with_scope without tools_for_subject", name);
		char *sql = mem_printf("SELECT role FROM fleet.principals WHERE subject = '%s'",
				       subject);
		char *role = it_sql(sql);
		free(sql);
		ck_assert_msg(role && *role, "%s: %s has no role", name, subject);
		struct mcp_server product;
		ck_assert_int_eq(catalog_describe(&product, NULL), 0);
		want_tools = derived = json_array();
		for (i = 0; i < product.ntools; i++)
			if (product.tools[i].scope_name &&
			    strcmp(product.tools[i].scope_name, scope) == 0 &&
			    (!product.tools[i].roles || csv_list_has(product.tools[i].roles, role)))
				json_array_append_new(derived, json_string(product.tools[i].name));
		mcp_server_release(&product);
		free(role);
		ck_assert_msg(json_array_size(derived) > 0, "%s: no tool needs %s", name, scope);
	}
	if (want_tools) {
		json_t *names = json_array();
		for (i = 0; i < json_array_size(tools); i++)
			json_array_append(names, json_object_get(json_array_get(tools, i), "name"));
		ck_assert_msg(json_equal(names, want_tools), "%s: tools in %s", name, r->body);
		json_decref(names);
	}
	json_decref(derived);
	json_t *excl = json_object_get(expect, "tools_exclude");
	for (i = 0; i < json_array_size(excl); i++) {
		t = json_array_get(excl, i);
		ck_assert_msg(json_is_array(tools), "%s: no tools in %s", name, r->body);
		for (size_t j = 0; j < json_array_size(tools); j++)
			ck_assert_msg(
				!json_equal(json_object_get(json_array_get(tools, j), "name"), t),
				"%s: %s listed in %s", name, json_string_value(t), r->body);
	}
	json_t *list = json_object_get(expect, "list");
	if (list) {
		json_t *items =
			json_object_get(result, json_string_value(json_object_get(list, "key")));
		size_t n = json_array_size(items);
		ck_assert_msg(json_is_array(items), "%s: no list in %s", name, r->body);
		json_t *min = json_object_get(list, "min"), *max = json_object_get(list, "max");
		ck_assert_msg(!min || n >= (size_t)json_integer_value(min), "%s: %zu items", name,
			      n);
		ck_assert_msg(!max || n <= (size_t)json_integer_value(max), "%s: %zu items", name,
			      n);
	}
	json_t *doc = json_object_get(expect, "json");
	if (doc) {
		json_t *w = json_deep_copy(doc);
		auth_expand_json(w);
		ck_assert_msg(json_equal(r->json, w), "%s: body %s", name, r->body);
		json_decref(w);
	}
	/* Error bodies never echo a token. */
	const char *tname = NULL;
	json_t *tv;
	json_object_foreach (auth_tokens, tname, tv) {
		ck_assert_msg(!strstr(r->body, json_string_value(tv)) &&
				      !strstr(r->headers, json_string_value(tv)),
			      "%s: a token is echoed in the response", name);
	}
}

static void auth_valid_request_still_served(const char *name)
{
	json_t *c = json_pack("{s:s, s:s, s:{s:s}}", "token", "marie", "tool", "get_bike_status",
			      "args", "bikeId", "VL-2048");
	struct it_response r;
	auth_send(c, &r);
	ck_assert_msg(r.status == 200 && json_is_false(json_object_get(
						 json_object_get(r.json, "result"), "isError")),
		      "%s: the next valid request failed: %ld %s", name, r.status, r.body);
	it_response_free(&r);
	json_decref(c);
}

START_TEST(auth_case)
{
	json_t *c = json_array_get(json_object_get(auth_cases, "cases"), (size_t)_i);
	const char *name = json_string_value(json_object_get(c, "name"));
	const char *needs = json_string_value(json_object_get(c, "requires_tool"));
	if (needs && !auth_tool_registered(needs)) {
		fprintf(stderr, "auth case '%s': pending until %s exists\n", name, needs);
		return;
	}
	char *before = auth_digest();
	ck_assert_ptr_nonnull(before);
	struct it_response r;
	auth_send(c, &r);
	auth_check(name, json_object_get(c, "expect"), &r);
	it_response_free(&r);
	char *after = auth_digest();
	ck_assert_msg(after && strcmp(before, after) == 0, "%s: the business tables changed", name);
	free(before);
	free(after);
	auth_valid_request_still_served(name);
}
END_TEST

/* Writes need a human subject, and a machine client (client credentials: sub = client) is never
 * one, even when its principal row says otherwise (a registration mistake): the server refuses
 * before the database is asked, audits the denial, and nothing is written. */
START_TEST(machine_token_never_reports_whatever_its_row_says)
{
	char a[9000];
	snprintf(a, sizeof a, "Authorization: Bearer %s", auth_tok("machine"));
	const char *h[] = {"Content-Type: application/json",
			   "MCP-Protocol-Version: 2026-07-28",
			   "Mcp-Method: tools/call",
			   "Mcp-Name: report_damaged_bike",
			   a,
			   NULL};
	const char *body =
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"report_damaged_bike\",\"arguments\":{\"bikeId\":\"VL-2048\",\"issue\":"
		"\"flat_tire\"},\"_meta\":{\"io.modelcontextprotocol/"
		"protocolVersion\":\"2026-07-28\","
		"\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
	char *reports = it_sql("SELECT count(*) FROM fleet.damage_reports");
	char *denials = it_sql("SELECT count(*) FROM fleet.audit_log WHERE subject = 'fleet-sync'"
			       " AND outcome = 'denied'");
	free(it_sql("UPDATE fleet.principals SET is_human = true WHERE subject = 'fleet-sync'"));
	struct it_response r;
	it_http(auth_srv.port, "POST", "/mcp", h, body, strlen(body), &r);
	free(it_sql("UPDATE fleet.principals SET is_human = false WHERE subject = 'fleet-sync'"));
	char *reports_after = it_sql("SELECT count(*) FROM fleet.damage_reports");
	char *denials_after = it_sql("SELECT count(*) FROM fleet.audit_log WHERE subject ="
				     " 'fleet-sync' AND outcome = 'denied'");
	ck_assert_int_eq(r.status, 200);
	ck_assert(json_is_true(json_object_get(json_object_get(r.json, "result"), "isError")));
	ck_assert_str_eq(reports_after, reports);
	ck_assert_int_eq(strtol(denials_after, NULL, 10), strtol(denials, NULL, 10) + 1);
	it_response_free(&r);
	free(reports);
	free(reports_after);
	free(denials);
	free(denials_after);
}
END_TEST

/* The audit row names the token a call was made with by its jti, or by the SHA-256 of the token
 * when it has none, never the token (tokens_never_leak checks the whole database for it): on
 * the batched path of reads and on the one-by-one path of a refusal. */
static void auth_call_as(const char *token, const char *tool, const char *args, int id)
{
	char a[9000], mn[64], body[512];
	snprintf(a, sizeof a, "Authorization: Bearer %s", token);
	snprintf(mn, sizeof mn, "Mcp-Name: %s", tool);
	snprintf(body, sizeof body,
		 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":"
		 "\"%s\",\"arguments\":%s,\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
		 "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
		 id, tool, args);
	const char *h[] = {"Content-Type: application/json",
			   "MCP-Protocol-Version: 2026-07-28",
			   "Mcp-Method: tools/call",
			   mn,
			   a,
			   NULL};
	struct it_response r;
	it_http(auth_srv.port, "POST", "/mcp", h, body, strlen(body), &r);
	ck_assert_msg(r.status == 200 || r.status == 403, "%ld %s", r.status, r.body);
	it_response_free(&r);
}

/* The token_ref of the audit row with JSON-RPC id `id` (new string). */
static char *auth_audit_ref(int id)
{
	char *q = mem_printf("SELECT coalesce(token_ref, 'NULL') FROM fleet.audit_log WHERE "
			     "request_id = '%d' ORDER BY audit_id DESC LIMIT 1",
			     id);
	char *v = it_sql(q);
	free(q);
	ck_assert_ptr_nonnull(v);
	return v;
}

/* "jti:" and the jti of a JWT (new string). */
static char *auth_jti_ref(const char *token)
{
	const char *d1 = strchr(token, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
	ck_assert_ptr_nonnull(d2);
	size_t n = 0;
	unsigned char *payload = b64_decode(d1 + 1, (size_t)(d2 - d1 - 1), true, &n);
	ck_assert_ptr_nonnull(payload);
	json_t *claims = json_loadb((const char *)payload, n, 0, NULL);
	const char *jti = json_string_value(json_object_get(claims, "jti"));
	ck_assert_ptr_nonnull(jti);
	char *ref = mem_printf("jti:%s", jti);
	json_decref(claims);
	free(payload);
	return ref;
}

/* The token_ref of call id is want. */
static void auth_expect_ref(int id, const char *want)
{
	char *got = auth_audit_ref(id);
	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(audit_rows_name_the_token_by_jti_or_digest)
{
	const char *t = auth_tok("forged-valid");
	char *want = auth_jti_ref(t);
	auth_call_as(t, "get_bike_status", "{\"bikeId\":\"VL-2048\"}", 7301);
	auth_expect_ref(7301, want);
	free(want);
	/* A refusal (no fleet:report in this token) is audited one by one: the same reference. */
	const char *ro = auth_tok("marie-read");
	want = auth_jti_ref(ro);
	auth_call_as(ro, "report_damaged_bike", "{\"bikeId\":\"VL-2048\",\"issue\":\"flat_tire\"}",
		     7302);
	auth_expect_ref(7302, want);
	free(want);
	/* No jti: the digest of the token. */
	const char *nj = auth_tok("no-jti");
	auth_call_as(nj, "get_bike_status", "{\"bikeId\":\"VL-2048\"}", 7303);
	char *q = mem_printf("SELECT 'sha256:' || encode(sha256(convert_to('%s', 'UTF8')), 'hex')",
			     nj);
	want = it_sql(q);
	auth_expect_ref(7303, want);
	free(want);
	free(q);
}
END_TEST

/* Runs last in the case list: no token appears in the server log or the database. */
START_TEST(tokens_never_leak)
{
	FILE *f = fopen(auth_srv.log_file, "r");
	ck_assert_ptr_nonnull(f);
	size_t cap = 1 << 24;
	char *log = mem_alloc(cap);
	size_t n = fread(log, 1, cap - 1, f);
	log[n] = '\0';
	fclose(f);
	ck_assert_msg(strstr(log, " access transport=http ") != NULL &&
			      strstr(log, " method=tools/call name=get_bike_status ") != NULL,
		      "the log is not the server's, or has no access lines");
	/* Access lines name the tool, never its arguments (bike ids are arguments). */
	for (const char *l = strstr(log, " access "); l; l = strstr(l + 1, " access ")) {
		const char *eol = strchr(l, '\n');
		size_t ll = eol ? (size_t)(eol - l) : strlen(l);
		ck_assert_msg(!memmem(l, ll, "VL-", 3) && !memmem(l, ll, "Bearer", 6),
			      "an access line carries an argument or a token: %.*s", (int)ll, l);
	}
	char *cmd = mem_printf("pg_dump --data-only '%s' 2>/dev/null", it_env("IT_SUPER_URL"));
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	char *dump = mem_alloc(cap);
	size_t dn = fread(dump, 1, cap - 1, p);
	dump[dn] = '\0';
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_msg(dn > 1000, "empty database dump");
	const char *name;
	json_t *tv;
	json_object_foreach (auth_tokens, name, tv) {
		const char *t = json_string_value(tv);
		size_t tl = strlen(t);
		/* The whole token, and its last 24 characters (the signature, for JWTs). */
		const char *tail = tl > 24 ? t + tl - 24 : t;
		ck_assert_msg(!strstr(log, t) && !strstr(log, tail), "token %s is in the log",
			      name);
		ck_assert_msg(!strstr(dump, t) && !strstr(dump, tail),
			      "token %s is in the database", name);
	}
	free(dump);
	free(cmd);
	free(log);
}
END_TEST

/* ---- introspection (opaque tokens) ---------------------------------------------------------- */

static struct it_as as_opaque;
static struct it_server intro_srv;

/* Starts the server introspecting tokens at the test authorization server as (opaque), with
 * extra settings (NULL-terminated list of "NAME=value", at most 4, or NULL). */
static void intro_server(struct it_server *s, const struct it_as *as, const char *const *extra)
{
	char issuer[128];
	snprintf(issuer, sizeof issuer, "BIKAROO_AUTH_ISSUER=%s", as->issuer);
	const char *env[11] = {"BIKAROO_AUTH=introspection",
			       issuer,
			       "BIKAROO_RESOURCE_URI=" AUTH_RESOURCE,
			       "BIKAROO_AUTH_INSECURE_LOOPBACK=1",
			       "BIKAROO_AUTH_CLIENT_ID=bikaroo-mcp",
			       "BIKAROO_AUTH_CLIENT_SECRET=bikaroo-mcp-secret"};
	size_t n = 6;
	for (; extra && *extra && n < 10; extra++)
		env[n++] = *extra;
	env[n] = NULL;
	ck_assert_int_eq(it_server_start(s, env), 0);
}

static void intro_setup(void)
{
	it_as_start(&as_opaque, "opaque");
	intro_server(&intro_srv, &as_opaque, NULL);
}

static void intro_teardown(void)
{
	ck_assert_int_eq(it_server_stop(&intro_srv), 0);
	it_as_stop(&as_opaque);
}

static long intro_call(const char *token, const char *bike, struct it_response *r)
{
	char auth[9000], params[400];
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
	snprintf(params, sizeof params,
		 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
		 "\"get_bike_status\",\"arguments\":{\"bikeId\":\"%s\"},\"_meta\":{\"io."
		 "modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/"
		 "clientCapabilities\":{}}}}",
		 bike);
	const char *h[] = {"Content-Type: application/json",
			   "MCP-Protocol-Version: 2026-07-28",
			   "Mcp-Method: tools/call",
			   "Mcp-Name: get_bike_status",
			   auth,
			   NULL};
	it_http(intro_srv.port, "POST", "/mcp", h, params, strlen(params), r);
	return r->status;
}

static char *intro_mint(const char *sub, const char *client, const char *scope,
			const char *resource)
{
	json_t *spec = json_pack("{s:s, s:s, s:s, s:s}", "sub", sub, "client", client, "scope",
				 scope, "resource", resource);
	if (strcmp(sub, client) == 0)
		json_object_set_new(spec, "grant", json_string("client_credentials"));
	char *t = as_token(&as_opaque, spec);
	json_decref(spec);
	return t;
}

START_TEST(introspection_accepts_active_tokens_for_this_server)
{
	char *t = intro_mint("marie", "customer-care-assistant", "fleet:read", AUTH_RESOURCE);
	ck_assert_ptr_null(strchr(t, '.')); /* opaque, not a JWT */
	struct it_response r;
	ck_assert_int_eq(intro_call(t, "VL-2048", &r), 200);
	ck_assert(json_is_false(json_object_get(json_object_get(r.json, "result"), "isError")));
	it_response_free(&r);
	/* The perimeter still comes from PostgreSQL. */
	ck_assert_int_eq(intro_call(t, "VL-2047", &r), 200);
	ck_assert(json_is_true(json_object_get(json_object_get(r.json, "result"), "isError")));
	it_response_free(&r);
	free(t);
}
END_TEST

START_TEST(introspection_refuses_other_audiences_and_garbage)
{
	char *other = intro_mint("marie", "customer-care-assistant", "fleet:read",
				 "https://other-api.bikaroo.test/api");
	struct it_response r;
	ck_assert_int_eq(intro_call(other, "VL-2048", &r), 401);
	ck_assert_ptr_nonnull(strstr(r.headers, "error=\"invalid_token\""));
	it_response_free(&r);
	ck_assert_int_eq(intro_call("c29tZS1nYXJiYWdlLXRva2Vu", "VL-2048", &r), 401);
	it_response_free(&r);
	/* JWTs are not this issuer's opaque tokens: one claiming another issuer, one signed with a
	 * key this issuer never had, one signed by it but never issued; none is active here. */
	const char *kinds[] = {"wrong_iss", "unknown_key_known_kid", "valid"};
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		json_t *spec = json_pack("{s:s}", "forge", kinds[k]);
		char *jwt = as_token(&as_opaque, spec);
		ck_assert_ptr_nonnull(strchr(jwt, '.'));
		ck_assert_msg(intro_call(jwt, "VL-2048", &r) == 401, "%s: %ld", kinds[k], r.status);
		ck_assert_ptr_nonnull(strstr(r.headers, "error=\"invalid_token\""));
		it_response_free(&r);
		json_decref(spec);
		free(jwt);
	}
	free(other);
}
END_TEST

START_TEST(introspection_issuer_down_is_503_but_cached_answers_stand)
{
	char *cached = intro_mint("marie", "customer-care-assistant", "fleet:read", AUTH_RESOURCE);
	char *fresh = intro_mint("paul", "customer-care-assistant", "fleet:read", AUTH_RESOURCE);
	char *fresh2 = intro_mint("olivia", "ops-assistant", "fleet:read", AUTH_RESOURCE);
	struct it_response r;
	ck_assert_int_eq(intro_call(cached, "VL-2048", &r), 200);
	it_response_free(&r);
	char *before = auth_digest();
	kill(as_opaque.pid, SIGTERM); /* the fixture's child: it reaps it at teardown */
	for (int i = 0; i < 250; i++) {
		struct it_response gone;
		it_http(as_opaque.port, "GET", "/stats", NULL, NULL, 0, &gone);
		long st = gone.status;
		it_response_free(&gone);
		if (st < 0)
			break;
		it_sleep_ms(20);
	}
	/* Never fail open: an unknown token with the issuer gone is 503 + Retry-After. */
	ck_assert_int_eq(intro_call(fresh, "VL-2047", &r), 503);
	ck_assert_ptr_nonnull(strcasestr(r.headers, "Retry-After: 30"));
	ck_assert_ptr_null(strstr(r.body, fresh));
	it_response_free(&r);
	/* Another unknown token meanwhile: still 503 (inside the cool-down), never accepted. */
	ck_assert_int_eq(intro_call(fresh2, "VL-2047", &r), 503);
	ck_assert_ptr_nonnull(strcasestr(r.headers, "Retry-After: 30"));
	it_response_free(&r);
	/* A token validated moments ago is still usable from the short cache. */
	ck_assert_int_eq(intro_call(cached, "VL-2048", &r), 200);
	it_response_free(&r);
	char *after = auth_digest();
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	free(cached);
	free(fresh);
	free(fresh2);
}
END_TEST

/* ---- issuer outages, key refresh, configuration --------------------------------------------- */

START_TEST(jwt_issuer_unreachable_is_503_never_accept)
{
	struct it_as as;
	it_as_start(&as, "jwt");
	json_t *spec = json_pack("{s:s}", "forge", "valid");
	char *t = as_token(&as, spec);
	json_decref(spec);
	it_as_stop(
		&as); /* the issuer the token names is gone before the server ever saw its keys */
	struct it_server s;
	const char *extra[] = {"BIKAROO_AUTH_TIMEOUT_MS=500", NULL};
	auth_jwt_server(&s, as.issuer, extra);
	char auth[9000];
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", t);
	const char *body =
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":"
		"{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io."
		"modelcontextprotocol/clientCapabilities\":{}}}}";
	const char *h[] = {"Content-Type: application/json", "MCP-Protocol-Version: 2026-07-28",
			   "Mcp-Method: tools/list", auth, NULL};
	for (int i = 0; i < 2; i++) { /* the first try fetches, the second is in the back-off */
		struct it_response r;
		it_http(s.port, "POST", "/mcp", h, body, strlen(body), &r);
		ck_assert_int_eq(r.status, 503);
		ck_assert_ptr_nonnull(strcasestr(r.headers, "Retry-After: 30"));
		ck_assert_ptr_null(strstr(r.body, "\"result\""));
		it_response_free(&r);
	}
	ck_assert_int_eq(it_server_stop(&s), 0);
	free(t);
}
END_TEST

START_TEST(unknown_kid_triggers_one_rate_limited_refresh)
{
	struct it_as as;
	it_as_start(&as, "jwt");
	struct it_server s;
	const char *extra[] = {"BIKAROO_AUTH_REFRESH_SECONDS=2", NULL};
	auth_jwt_server(&s, as.issuer, extra);
	json_t *vs = json_pack("{s:s}", "forge", "valid");
	json_t *us = json_pack("{s:s}", "forge", "unknown_kid");
	char *valid = as_token(&as, vs), *unknown = as_token(&as, us);
	char a1[9000], a2[9000];
	snprintf(a1, sizeof a1, "Authorization: Bearer %s", valid);
	snprintf(a2, sizeof a2, "Authorization: Bearer %s", unknown);
	const char *body =
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":"
		"{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io."
		"modelcontextprotocol/clientCapabilities\":{}}}}";
	const char *h1[] = {"Content-Type: application/json", "MCP-Protocol-Version: 2026-07-28",
			    "Mcp-Method: tools/list", a1, NULL};
	const char *h2[] = {"Content-Type: application/json", "MCP-Protocol-Version: 2026-07-28",
			    "Mcp-Method: tools/list", a2, NULL};
	struct it_response r;
	it_http(s.port, "POST", "/mcp", h1, body, strlen(body), &r);
	ck_assert_int_eq(r.status, 200);
	it_response_free(&r);
	json_t *st = as_get(&as, "/stats");
	json_int_t first = json_integer_value(json_object_get(st, "jwks"));
	json_decref(st);
	ck_assert_int_eq(first, 1);
	it_sleep_ms(2200); /* past the cool-down; the six requests below fit well inside one */
	for (int i = 0; i < 6; i++) {
		it_http(s.port, "POST", "/mcp", h2, body, strlen(body), &r);
		ck_assert_int_eq(r.status, 401);
		it_response_free(&r);
	}
	st = as_get(&as, "/stats");
	ck_assert_int_eq(json_integer_value(json_object_get(st, "jwks")),
			 2); /* exactly one refresh */
	json_decref(st);
	it_http(s.port, "POST", "/mcp", h1, body, strlen(body), &r);
	ck_assert_int_eq(r.status, 200);
	it_response_free(&r);
	ck_assert_int_eq(it_server_stop(&s), 0);
	it_as_stop(&as);
	free(valid);
	free(unknown);
	json_decref(vs);
	json_decref(us);
}
END_TEST

/* Occurrences of needle in the server's log so far. */
static int auth_log_count(const struct it_server *s, const char *needle)
{
	FILE *f = fopen(s->log_file, "r");
	ck_assert_ptr_nonnull(f);
	size_t cap = 1 << 22;
	char *log = mem_alloc(cap);
	size_t n = fread(log, 1, cap - 1, f);
	log[n] = '\0';
	fclose(f);
	int count = 0;
	for (const char *p = strstr(log, needle); p; p = strstr(p + 1, needle))
		count++;
	free(log);
	return count;
}

static long auth_list_tools(unsigned port, const char *token)
{
	char a[9000];
	snprintf(a, sizeof a, "Authorization: Bearer %s", token);
	const char *body =
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":"
		"{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io."
		"modelcontextprotocol/clientCapabilities\":{}}}}";
	const char *h[] = {"Content-Type: application/json", "MCP-Protocol-Version: 2026-07-28",
			   "Mcp-Method: tools/list", a, NULL};
	struct it_response r;
	it_http(port, "POST", "/mcp", h, body, strlen(body), &r);
	long status = r.status;
	it_response_free(&r);
	return status;
}

#define AUTH_VERIFIED "bearer token verified"

/* A subscriptions/listen stream lives no longer than the token that opened it: with keep-alives
 * every second, a stream opened with a token that expires within 3 s ends with its result
 * shortly after exp (the client listens again with a fresh token), where a stream would
 * otherwise stay open. */
START_TEST(listen_stream_ends_when_its_token_expires)
{
	struct it_as as;
	it_as_start(&as, "jwt");
	struct it_server s;
	const char *extra[] = {"BIKAROO_AUTH_CLOCK_SKEW=0", "BIKAROO_KEEPALIVE_SECONDS=1", NULL};
	auth_jwt_server(&s, as.issuer, extra);
	json_t *spec = json_pack("{s:s}", "forge", "valid&exp_in=3");
	char *token = as_token(&as, spec);
	char a[9000];
	snprintf(a, sizeof a, "Authorization: Bearer %s", token);
	const char *h[] = {"Content-Type: application/json",
			   "Accept: application/json, text/event-stream",
			   "MCP-Protocol-Version: 2026-07-28",
			   "Mcp-Method: subscriptions/listen",
			   a,
			   NULL};
	const char *body =
		"{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"subscriptions/listen\",\"params\":{"
		"\"notifications\":{\"resourceSubscriptions\":[\"bikaroo://fleet/bikes/VL-2048\"]},"
		"\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		"\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
	time_t t0 = time(NULL);
	struct it_response r;
	it_http(s.port, "POST", "/mcp", h, body, strlen(body),
		&r); /* returns when the stream ends */
	time_t took = time(NULL) - t0;
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(strstr(r.body, "notifications/subscriptions/acknowledged"));
	ck_assert_ptr_nonnull(strstr(r.body, ": keep-alive"));
	ck_assert_ptr_nonnull(
		strstr(r.body, "\"id\":\"x\",\"result\":{\"resultType\":\"complete\""));
	/* It lived while the token did (at least 2 s), and ended by itself: a stream left open
	 * would have hit the client's timeout (status -1 above). */
	ck_assert_msg(took >= 1, "the stream lasted %ld s", (long)took);
	ck_assert_ptr_null(strstr(r.body, token));
	it_response_free(&r);
	ck_assert_int_eq(it_server_stop(&s), 0);
	it_as_stop(&as);
	free(token);
	json_decref(spec);
}
END_TEST

/* A token seen again is served from the validation cache, but only until its exp and for at
 * most BIKAROO_AUTH_CACHE_SECONDS; then it is verified again (and refused once expired). */
START_TEST(verified_tokens_are_cached_until_exp_and_max_age)
{
	struct it_as as;
	it_as_start(&as, "jwt");
	struct it_server s;
	const char *extra[] = {"BIKAROO_AUTH_CLOCK_SKEW=0", "BIKAROO_AUTH_CACHE_SECONDS=6",
			       "BIKAROO_LOG_LEVEL=debug", NULL};
	auth_jwt_server(&s, as.issuer, extra);
	json_t *ls = json_pack("{s:s}", "forge", "valid");
	json_t *ss = json_pack("{s:s}", "forge", "valid&exp_in=3");
	char *lasting = as_token(&as, ls);

	/* Verified once, then served from the cache. */
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(auth_list_tools(s.port, lasting), 200);
	ck_assert_int_eq(auth_log_count(&s, AUTH_VERIFIED), 1);

	/* A token that expires within 3 s (at least 2 s after it is minted, iat being whole
	 * seconds): cached, then refused after exp although the entry is younger than the cache's
	 * max age (6 s) and no clock skew is allowed. */
	char *brief = as_token(&as, ss);
	ck_assert_int_eq(auth_list_tools(s.port, brief), 200);
	ck_assert_int_eq(auth_list_tools(s.port, brief), 200);
	ck_assert_int_eq(auth_log_count(&s, AUTH_VERIFIED), 2);
	it_sleep_ms(4000);
	ck_assert_int_eq(auth_list_tools(s.port, brief), 401);
	ck_assert_int_eq(auth_log_count(&s, AUTH_VERIFIED), 2);

	/* Past the max age the lasting token's entry is not used: it is verified again. */
	it_sleep_ms(2500);
	ck_assert_int_eq(auth_list_tools(s.port, lasting), 200);
	ck_assert_int_eq(auth_log_count(&s, AUTH_VERIFIED), 3);
	ck_assert_int_eq(auth_list_tools(s.port, lasting), 200);
	ck_assert_int_eq(auth_log_count(&s, AUTH_VERIFIED), 3);

	ck_assert_int_eq(it_server_stop(&s), 0);
	it_as_stop(&as);
	free(lasting);
	free(brief);
	json_decref(ls);
	json_decref(ss);
}
END_TEST

START_TEST(token_validation_is_the_default_and_needs_configuration)
{
	struct it_server s;
	/* No BIKAROO_AUTH at all (an empty value keeps the default): jwt, which needs an issuer
	 * and a resource URI, so the server refuses to start rather than serve unprotected. */
	const char *e1[] = {"BIKAROO_AUTH=", NULL};
	ck_assert_int_eq(it_server_start(&s, e1), -1);
	/* Plain http to a non-loopback issuer is refused even in the test configuration. */
	const char *e2[] = {"BIKAROO_AUTH=jwt", "BIKAROO_AUTH_ISSUER=http://issuer.bikaroo.test",
			    "BIKAROO_RESOURCE_URI=" AUTH_RESOURCE,
			    "BIKAROO_AUTH_INSECURE_LOOPBACK=1", NULL};
	ck_assert_int_eq(it_server_start(&s, e2), -1);
	/* HMAC and none are never accepted algorithms. */
	const char *e3[] = {"BIKAROO_AUTH=jwt", "BIKAROO_AUTH_ISSUER=https://issuer.bikaroo.test",
			    "BIKAROO_RESOURCE_URI=" AUTH_RESOURCE, "BIKAROO_AUTH_ALGS=RS256 HS256",
			    NULL};
	ck_assert_int_eq(it_server_start(&s, e3), -1);
	/* Introspection needs the server's own client credentials. */
	const char *e4[] = {"BIKAROO_AUTH=introspection",
			    "BIKAROO_AUTH_ISSUER=https://issuer.bikaroo.test",
			    "BIKAROO_RESOURCE_URI=" AUTH_RESOURCE, NULL};
	ck_assert_int_eq(it_server_start(&s, e4), -1);
	/* Configured, it serves, and a request without a token is refused without any fetch. */
	const char *e5[] = {"BIKAROO_AUTH=jwt", "BIKAROO_AUTH_ISSUER=https://issuer.bikaroo.test",
			    "BIKAROO_RESOURCE_URI=" AUTH_RESOURCE, NULL};
	ck_assert_int_eq(it_server_start(&s, e5), 0);
	struct it_response r;
	it_mcp(s.port, "tools/list", NULL, "", &r);
	ck_assert_int_eq(r.status, 401);
	it_response_free(&r);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* ---- stdio identity from the environment -------------------------------------------------- */

START_TEST(stdio_identity_from_environment)
{
	struct it_as as;
	it_as_start(&as, "jwt");
	json_t *spec = json_pack("{s:s, s:s, s:s}", "sub", "paul", "client",
				 "customer-care-assistant", "scope", "fleet:read");
	char *t = as_token(&as, spec);
	json_decref(spec);
	db_configure(&(struct db_settings){.conninfo = it_env("DATABASE_URL")});
	char *flags[] = {"stdio",
			 "--auth=jwt",
			 NULL,
			 "--resource-uri=" AUTH_RESOURCE,
			 "--auth-insecure-loopback=1",
			 NULL,
			 NULL};
	flags[2] = mem_printf("--auth-issuer=%s", as.issuer);
	flags[5] = mem_printf("--token=%s", t);
	struct cfg c;
	ck_assert_int_eq(cfg_load(&c, 6, flags), CFG_OK);
	struct auth_settings set = cfg_auth_settings(&c);
	ck_assert_int_eq(auth_init(&set), AUTH_OK);
	struct fleet_actor a;
	const char *why = NULL;
	ck_assert_int_eq(identity_from_environment(&(struct identity_env){ENV_OF(c)}, &a, &why),
			 IDENTITY_OK);
	ck_assert_str_eq(a.subject, "paul");
	ck_assert_str_eq(a.client_id, "customer-care-assistant");
	ck_assert_uint_eq(a.scopes, FLEET_SCOPE_READ);
	ck_assert(!a.machine);
	/* A token is validated exactly like over HTTP: a forged one is refused. */
	free(c.token);
	c.token = mem_strdup("eyJhbGciOiJub25lIn0.eyJzdWIiOiJvbGl2aWEifQ.");
	ck_assert_int_eq(identity_from_environment(&(struct identity_env){ENV_OF(c)}, &a, &why),
			 IDENTITY_INVALID);
	free(c.token);
	c.token = mem_strdup("");
	ck_assert_int_eq(identity_from_environment(&(struct identity_env){ENV_OF(c)}, &a, &why),
			 IDENTITY_NO_TOKEN);
	auth_cleanup();
	cfg_free(&c);
	/* Local identity: only against a database its owner marked as development. */
	char *lflags[] = {"stdio", "--auth=local", "--local-subject=dev",
			  "--local-client=developer-ide", NULL};
	ck_assert_int_eq(cfg_load(&c, 4, lflags), CFG_OK);
	set = cfg_auth_settings(&c);
	ck_assert_int_eq(auth_init(&set), AUTH_OK);
	ck_assert_int_eq(identity_from_environment(&(struct identity_env){ENV_OF(c)}, &a, &why),
			 IDENTITY_OK);
	ck_assert_str_eq(a.subject, "dev");
	free(it_sql("UPDATE fleet.settings SET value = 'production' WHERE name = 'environment'"));
	enum identity_status prod =
		identity_from_environment(&(struct identity_env){ENV_OF(c)}, &a, &why);
	free(it_sql("UPDATE fleet.settings SET value = 'development' WHERE name = 'environment'"));
	ck_assert_int_eq(prod, IDENTITY_REFUSED);
	ck_assert_str_eq(a.subject, "");
	cfg_free(&c);
	db_shutdown();
	free(flags[2]);
	free(flags[5]);
	free(t);
	it_as_stop(&as);
}
END_TEST

/* ---- defense in depth: PostgreSQL alone ------------------------------------------------------ */

/* One read of another region's object by marie (FR-PAR), through each read path of the domain
 * (domain/reads.c): what shows that it was shown. */
struct rls_read {
	const char *what;
	const char *method, *name, *params;
	const char *table; /* the table whose policy keeps it out */
	const char *shown; /* a text the answer holds when the object is shown */
};

static const struct rls_read rls_reads[] = {
	{"get_bike_status", "tools/call", "get_bike_status",
	 "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-2047\"}", "fleet.bikes",
	 "\"isError\":false"},
	{"the bike resource", "resources/read", "bikaroo://fleet/bikes/VL-2047",
	 "\"uri\":\"bikaroo://fleet/bikes/VL-2047\"", "fleet.bikes", "FR-LYO"},
	{"bike id completion", "completion/complete", NULL,
	 "\"ref\":{\"type\":\"ref/resource\",\"uri\":\"bikaroo://fleet/bikes/{bikeId}\"},"
	 "\"argument\":{\"name\":\"bikeId\",\"value\":\"VL-2047\"}",
	 "fleet.bikes", "\"VL-2047\""},
	{"the case resource", "resources/read", "bikaroo://cases/IC-99990047",
	 "\"uri\":\"bikaroo://cases/IC-99990047\"", "fleet.cases", "FR-LYO"},
	{"the work queues", "tools/call", "list_cases",
	 "\"name\":\"list_cases\",\"arguments\":{\"bikeId\":\"VL-2047\",\"includeClosed\":true}",
	 "fleet.cases", "IC-99990047"},
	{"case id completion", "completion/complete", NULL,
	 "\"ref\":{\"type\":\"ref/resource\",\"uri\":\"bikaroo://cases/{caseId}\"},"
	 "\"argument\":{\"name\":\"caseId\",\"value\":\"IC-9999004\"}",
	 "fleet.cases", "\"IC-99990047\""},
};

/* Whether read r, asked on port, shows the object. */
static bool rls_shown(unsigned port, const struct rls_read *rd)
{
	struct it_response r;
	it_mcp(port, rd->method, rd->name, rd->params, &r);
	ck_assert_msg(r.status == 200, "%s: HTTP %ld %s", rd->what, r.status, r.body);
	bool shown = json_object_get(r.json, "result") && strstr(r.body, rd->shown) != NULL;
	it_response_free(&r);
	return shown;
}

START_TEST(rls_alone_refuses_when_the_c_check_is_compiled_out)
{
	char bin[1024];
	snprintf(bin, sizeof bin, "BIKAROO_BIN=%s-rls-only", it_env("BIKAROO_BIN"));
	struct it_server rls_only, normal;
	const char *e1[] = {bin, NULL};
	ck_assert_int_eq(it_server_start(&rls_only, e1), 0);
	ck_assert_int_eq(it_server_start(&normal, NULL), 0);
	/* A FR-LYO case marie opened (closed: it changes nothing else): only the region keeps it
	 * from her. */
	free(it_sql(
		"INSERT INTO fleet.cases (case_id, bike_id, region, state, opened_by, opened_via,"
		" closed_at) VALUES ('IC-99990047', 'VL-2047', 'FR-LYO', 'closed', 'marie',"
		" 'customer-care-assistant', now()) ON CONFLICT DO NOTHING"));
	for (size_t i = 0; i < sizeof rls_reads / sizeof rls_reads[0]; i++) {
		const struct rls_read *rd = &rls_reads[i];
		/* With no C check, row-level security refuses. */
		bool refused = !rls_shown(rls_only.port, rd);
		/* Proof that the C check really is gone from that binary, and that the normal
		 * binary's C check stands alone: the same request with the table's policy off. */
		char *off = mem_printf("ALTER TABLE %s DISABLE ROW LEVEL SECURITY", rd->table);
		char *on = mem_printf("ALTER TABLE %s ENABLE ROW LEVEL SECURITY", rd->table);
		free(it_sql(off));
		bool leaked = rls_shown(rls_only.port, rd);
		bool c_refused = !rls_shown(normal.port, rd);
		free(it_sql(on));
		char *q =
			mem_printf("SELECT relrowsecurity FROM pg_class WHERE oid = '%s'::regclass",
				   rd->table);
		char *enabled = it_sql(q);
		ck_assert_str_eq(enabled, "t");
		free(enabled);
		free(q);
		free(on);
		free(off);
		ck_assert_msg(refused, "%s: row-level security alone must refuse another region",
			      rd->what);
		ck_assert_msg(leaked, "%s: the rls-only binary still checks the perimeter in C",
			      rd->what);
		ck_assert_msg(c_refused, "%s: the C check alone must refuse another region",
			      rd->what);
	}
	free(it_sql("DELETE FROM fleet.cases WHERE case_id = 'IC-99990047'"));
	/* And writes: the login role, acting as marie, cannot change a bike of another region:
	 * the UPDATE grant exists (for reports), row-level security leaves it nothing to change. */
	char *before = it_sql("SELECT status FROM fleet.bikes WHERE bike_id = 'VL-2047'");
	char *w = it_sql_as_app_then(
		"BEGIN; SELECT fleet.act_as('marie', 'customer-care-assistant')",
		"WITH u AS (UPDATE fleet.bikes SET status = 'lost' WHERE bike_id = 'VL-2047'"
		" RETURNING 1) SELECT count(*) FROM u");
	char *after = it_sql("SELECT status FROM fleet.bikes WHERE bike_id = 'VL-2047'");
	ck_assert_msg(w == NULL || strcmp(w, "0") == 0, "an out-of-perimeter UPDATE changed rows");
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	free(w);
	ck_assert_int_eq(it_server_stop(&rls_only), 0);
	ck_assert_int_eq(it_server_stop(&normal), 0);
}
END_TEST

struct par_auth {
	unsigned port;
	const char *auth;
	int ok;
};

static void *par_auth_worker(void *p)
{
	struct par_auth *a = p;
	const char *body =
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
		"\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-2048\"},"
		"\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io."
		"modelcontextprotocol/clientCapabilities\":{}}}}";
	const char *h[] = {"Content-Type: application/json",
			   "MCP-Protocol-Version: 2026-07-28",
			   "Mcp-Method: tools/call",
			   "Mcp-Name: get_bike_status",
			   a->auth,
			   NULL};
	for (int i = 0; i < 10; i++) {
		struct it_response r;
		it_http(a->port, "POST", "/mcp", h, body, strlen(body), &r);
		if (r.status == 200 &&
		    json_is_false(json_object_get(json_object_get(r.json, "result"), "isError")))
			a->ok++;
		it_response_free(&r);
	}
	return NULL;
}

START_TEST(concurrent_first_requests_share_one_key_fetch)
{
	struct it_as as;
	it_as_start(&as, "jwt");
	struct it_server s;
	auth_jwt_server(&s, as.issuer, NULL);
	json_t *spec = json_pack("{s:s, s:s, s:s}", "sub", "marie", "client",
				 "customer-care-assistant", "scope", "fleet:read");
	char *t = as_token(&as, spec);
	json_decref(spec);
	char auth[9000];
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", t);
	/* 8 clients at once on 4 workers, before any key is known: no 503, one download. */
	pthread_t th[8];
	struct par_auth a[8];
	for (int i = 0; i < 8; i++) {
		a[i] = (struct par_auth){s.port, auth, 0};
		pthread_create(&th[i], NULL, par_auth_worker, &a[i]);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(a[i].ok, 10);
	}
	json_t *st = as_get(&as, "/stats");
	ck_assert_int_eq(json_integer_value(json_object_get(st, "jwks")), 1);
	json_decref(st);
	ck_assert_int_eq(it_server_stop(&s), 0);
	it_as_stop(&as);
	free(t);
}
END_TEST

/* ---- a slow issuer holds no loop ------------------------------------------------------------
 * The issuer's answers (an introspection, a key set after a rotation) take 2 s. The server runs
 * one loop (BIKAROO_THREADS=1): whatever else that loop serves, /healthz and a caller whose token
 * is already known, must be answered meanwhile, well within the issuer's delay, while the call
 * that needs the issuer waits for it and is then served. */

#define SLOW_MS 2000
/* Well under SLOW_MS, and far above what a loop free to serve takes on a loaded machine. */
#define SLOW_BOUND_MS 1000

/* GET path on the AS, the answer dropped (its helpers: /slow, /rotate). */
static void as_do(const struct it_as *as, const char *path)
{
	json_decref(as_get(as, path));
}

/* The AS's count of one fetch kind ("jwks", "introspections"). */
static long as_stat(const struct it_as *as, const char *what)
{
	json_t *st = as_get(as, "/stats");
	long n = (long)json_integer_value(json_object_get(st, what));
	json_decref(st);
	return n;
}

/* Waits (at most 10 s) until the AS has been asked for what more than `than` times: the fetch
 * under test is under way. */
static void as_wait_stat(const struct it_as *as, const char *what, long than)
{
	for (int i = 0; i < 500 && as_stat(as, what) <= than; i++)
		it_sleep_ms(20);
	ck_assert_msg(as_stat(as, what) > than, "the server never asked the issuer (%s)", what);
}

/* A get_bike_status call of marie's VL-2048 with token on port: its status, *ms its duration. */
static long slow_call(unsigned port, const char *token, long *ms)
{
	char auth[9000];
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
	const char *body =
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
		"\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-2048\"},"
		"\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io."
		"modelcontextprotocol/clientCapabilities\":{}}}}";
	const char *h[] = {"Content-Type: application/json",
			   "MCP-Protocol-Version: 2026-07-28",
			   "Mcp-Method: tools/call",
			   "Mcp-Name: get_bike_status",
			   auth,
			   NULL};
	struct it_response r;
	long long t0 = it_now_us();
	it_http(port, "POST", "/mcp", h, body, strlen(body), &r);
	*ms = (long)((it_now_us() - t0) / 1000);
	long status = r.status;
	if (status == 200 &&
	    !json_is_false(json_object_get(json_object_get(r.json, "result"), "isError")))
		status = -2; /* answered, but not served */
	if (status != 200 && status != 401 && status != 503)
		fprintf(stderr, "slow_call: %ld %s\n", r.status, r.body);
	it_response_free(&r);
	return status;
}

/* GET /healthz on port: its duration in ms (fails the test unless it is a 200). */
static long slow_health_ms(unsigned port)
{
	struct it_response r;
	long long t0 = it_now_us();
	it_http(port, "GET", "/healthz", NULL, NULL, 0, &r);
	long ms = (long)((it_now_us() - t0) / 1000);
	ck_assert_msg(r.status == 200, "/healthz: %ld", r.status);
	it_response_free(&r);
	return ms;
}

/* A call on a thread of its own. */
struct slow_caller {
	pthread_t thread;
	unsigned port;
	const char *token;
	long status, ms;
};

static void *slow_caller_run(void *p)
{
	struct slow_caller *c = p;
	c->status = slow_call(c->port, c->token, &c->ms);
	return NULL;
}

static void slow_caller_start(struct slow_caller *c, unsigned port, const char *token)
{
	*c = (struct slow_caller){.port = port, .token = token};
	ck_assert_int_eq(pthread_create(&c->thread, NULL, slow_caller_run, c), 0);
}

/* While the issuer's answer is late, /healthz and the victim (a cached token) are answered on
 * the same loop well within its delay; then the waiting call ends served, after the delay. */
static void slow_expect_loop_free(unsigned port, const char *victim, struct slow_caller *waiting)
{
	long health = slow_health_ms(port), victim_ms = 0;
	long st = slow_call(port, victim, &victim_ms);
	pthread_join(waiting->thread, NULL);
	ck_assert_msg(health < SLOW_BOUND_MS,
		      "/healthz took %ld ms while the issuer was slow: the loop waited for it",
		      health);
	ck_assert_int_eq(st, 200);
	ck_assert_msg(victim_ms < SLOW_BOUND_MS,
		      "a cached token's call took %ld ms while the issuer was slow", victim_ms);
	ck_assert_msg(waiting->status == 200, "the call that needed the issuer: %ld",
		      waiting->status);
	ck_assert_msg(waiting->ms >= SLOW_MS - 200, "the call did not wait for the issuer (%ld ms)",
		      waiting->ms);
}

/* A slow-issuer test's world: the test authorization server, a server of its tokens (jwt or
 * opaque: introspection) with extra settings, and the victim: a token of marie's whose first
 * call was served, so that the server knows it. */
struct slow_world {
	struct it_as as;
	struct it_server s;
	bool jwt;
	char *victim;
};

/* A new token of marie's: forged with kind (jwt), or minted (opaque). New string. */
static char *slow_mint(struct slow_world *w, const char *kind)
{
	json_t *spec = w->jwt ? json_pack("{s:s}", "forge", kind)
			      : json_pack("{s:s, s:s, s:s}", "sub", "marie", "client",
					  "customer-care-assistant", "scope", "fleet:read");
	char *t = as_token(&w->as, spec);
	json_decref(spec);
	return t;
}

/* A token the server has not seen: signed by the newest key of /rotate (jwt), or minted. */
static char *slow_token(struct slow_world *w)
{
	return slow_mint(w, "valid_rotated");
}

static void slow_world_start(struct slow_world *w, const char *format, const char *const *extra)
{
	w->jwt = strcmp(format, "jwt") == 0;
	it_as_start(&w->as, format);
	if (w->jwt)
		auth_jwt_server(&w->s, w->as.issuer, extra);
	else
		intro_server(&w->s, &w->as, extra);
	w->victim = slow_mint(w, "valid");
	long ms;
	ck_assert_int_eq(slow_call(w->s.port, w->victim, &ms), 200);
}

static void slow_world_stop(struct slow_world *w)
{
	ck_assert_int_eq(it_server_stop(&w->s), 0);
	it_as_stop(&w->as);
	free(w->victim);
}

/* The issuer rotates its keys, and its key set answers ms late from now; past the server's
 * refresh cool-down (1 s). Returns the key-set downloads so far. */
static long slow_rotate(struct slow_world *w, int ms)
{
	as_do(&w->as, "/rotate");
	char *path = mem_printf("/slow?path=/jwks&ms=%d", ms);
	as_do(&w->as, path);
	free(path);
	it_sleep_ms(1100);
	return as_stat(&w->as, "jwks");
}

/* Calls with each of the n tokens at once, each on its own connection: all are served. */
static void slow_all_served(unsigned port, char *const *tokens, int n)
{
	struct slow_caller c[16];
	ck_assert_int_le(n, 16);
	for (int i = 0; i < n; i++)
		slow_caller_start(&c[i], port, tokens[i]);
	for (int i = 0; i < n; i++) {
		pthread_join(c[i].thread, NULL);
		ck_assert_msg(c[i].status == 200, "call %d: %ld", i, c[i].status);
	}
}

START_TEST(slow_introspection_holds_no_loop)
{
	struct slow_world w;
	const char *extra[] = {"BIKAROO_AUTH_TIMEOUT_MS=10000", "BIKAROO_THREADS=1", NULL};
	slow_world_start(&w, "opaque", extra);
	char *fresh = slow_token(&w);
	long asked = as_stat(&w.as, "introspections");
	as_do(&w.as, "/slow?path=/token/introspection&ms=2000");
	struct slow_caller waiting;
	slow_caller_start(&waiting, w.s.port, fresh);
	as_wait_stat(&w.as, "introspections", asked);
	slow_expect_loop_free(w.s.port, w.victim, &waiting);
	slow_world_stop(&w);
	free(fresh);
}
END_TEST

/* The issuer rotates its keys and its key set answers late: a token signed by the new key waits
 * for the one fetch of the new set (never 401 "unknown key") while the loop serves the rest. */
START_TEST(slow_key_rotation_holds_no_loop)
{
	struct slow_world w;
	const char *extra[] = {"BIKAROO_AUTH_REFRESH_SECONDS=1", "BIKAROO_AUTH_TIMEOUT_MS=10000",
			       "BIKAROO_THREADS=1", NULL};
	slow_world_start(&w, "jwt", extra);
	long fetched = slow_rotate(&w, SLOW_MS);
	char *rotated = slow_token(&w);
	struct slow_caller waiting;
	slow_caller_start(&waiting, w.s.port, rotated);
	as_wait_stat(&w.as, "jwks", fetched);
	slow_expect_loop_free(w.s.port, w.victim, &waiting);
	ck_assert_int_eq(as_stat(&w.as, "jwks"), fetched + 1);
	slow_world_stop(&w);
	free(rotated);
}
END_TEST

/* The issuer publishes a new key, and its key set then answers past BIKAROO_AUTH_TIMEOUT_MS: a
 * token of the new key cannot be judged, so it gets 503 + Retry-After (retry later), neither 401
 * (the key may well be the issuer's) nor acceptance; tokens of the known keys are served. */
START_TEST(a_new_key_whose_key_set_cannot_be_had_is_503)
{
	struct slow_world w;
	const char *extra[] = {"BIKAROO_AUTH_REFRESH_SECONDS=1", "BIKAROO_AUTH_TIMEOUT_MS=500",
			       NULL};
	slow_world_start(&w, "jwt", extra);
	(void)slow_rotate(&w, 3000);
	char *rotated = slow_token(&w);
	long ms;
	for (int i = 0; i < 2; i++) /* the fetch that times out, then inside its cool-down */
		ck_assert_int_eq(slow_call(w.s.port, rotated, &ms), 503);
	ck_assert_int_eq(slow_call(w.s.port, w.victim, &ms), 200);
	slow_world_stop(&w);
	free(rotated);
}
END_TEST

/* Several calls at once on the server's loops (2), each with a token of its own signed by the
 * new key: all wait for the one download of the new key set, none gets 401. */
START_TEST(tokens_of_a_new_key_wait_for_one_key_fetch)
{
	struct slow_world w;
	const char *extra[] = {"BIKAROO_AUTH_REFRESH_SECONDS=1", "BIKAROO_AUTH_TIMEOUT_MS=10000",
			       "BIKAROO_THREADS=2", NULL};
	slow_world_start(&w, "jwt", extra);
	long fetched = slow_rotate(&w, 1000);
	enum { N = 8 };
	char *tokens[N];
	for (int i = 0; i < N; i++)
		tokens[i] = slow_token(&w);
	slow_all_served(w.s.port, tokens, N);
	ck_assert_int_eq(as_stat(&w.as, "jwks"), fetched + 1);
	for (int i = 0; i < N; i++)
		free(tokens[i]);
	slow_world_stop(&w);
}
END_TEST

/* Calls that present the same unknown token at once, on both loops, share one introspection. */
START_TEST(one_token_one_introspection)
{
	struct slow_world w;
	const char *extra[] = {"BIKAROO_AUTH_TIMEOUT_MS=10000", "BIKAROO_THREADS=2", NULL};
	slow_world_start(&w, "opaque", extra);
	enum { N = 8 };
	char *token = slow_token(&w), *same[N];
	for (int i = 0; i < N; i++)
		same[i] = token;
	as_do(&w.as, "/slow?path=/token/introspection&ms=1000");
	long asked = as_stat(&w.as, "introspections");
	slow_all_served(w.s.port, same, N);
	ck_assert_int_eq(as_stat(&w.as, "introspections"), asked + 1);
	slow_world_stop(&w);
	free(token);
}
END_TEST

/* A flood of tokens the server has never seen (made up: the issuer answers "not active" after
 * 3 s) makes at most 64 introspections at once; the calls past that are refused at once with
 * 503 + Retry-After, never accepted, and the rest are refused as the issuer says. */
START_TEST(a_flood_of_unknown_tokens_is_capped)
{
	struct slow_world w;
	const char *extra[] = {"BIKAROO_AUTH_TIMEOUT_MS=15000", NULL};
	slow_world_start(&w, "opaque", extra);
	as_do(&w.as, "/slow?path=/token/introspection&ms=3000");
	long asked = as_stat(&w.as, "introspections");
	enum { N = 80 };
	struct slow_caller *c = mem_calloc(N, sizeof *c);
	char *tokens[N];
	for (int i = 0; i < N; i++) {
		tokens[i] = mem_printf("made-up-token-%d-%ld", i, (long)getpid());
		slow_caller_start(&c[i], w.s.port, tokens[i]);
	}
	int refused = 0, busy = 0;
	for (int i = 0; i < N; i++) {
		pthread_join(c[i].thread, NULL);
		refused += c[i].status == 401;
		busy += c[i].status == 503;
		ck_assert_msg(c[i].status == 401 || c[i].status == 503, "call %d: %ld", i,
			      c[i].status);
		free(tokens[i]);
	}
	long made = as_stat(&w.as, "introspections") - asked;
	ck_assert_msg(made <= 64, "%ld introspections for %d calls at once", made, N);
	ck_assert_msg(busy >= N - 64 && refused >= 1, "401: %d, 503: %d", refused, busy);
	free(c);
	slow_world_stop(&w);
}
END_TEST

/* An issuer slower than BIKAROO_AUTH_TIMEOUT_MS: the call that needs it gets 503 + Retry-After
 * when the timeout (a timer of the loop) fires, never a token accepted, never a hang. */
START_TEST(issuer_past_the_timeout_is_503)
{
	struct slow_world w;
	const char *extra[] = {"BIKAROO_AUTH_TIMEOUT_MS=500", "BIKAROO_THREADS=1", NULL};
	slow_world_start(&w, "opaque", extra);
	char *token = slow_token(&w);
	as_do(&w.as, "/slow?path=/token/introspection&ms=4000");
	char auth[9000];
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
	const char *body =
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":"
		"{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io."
		"modelcontextprotocol/clientCapabilities\":{}}}}";
	const char *h[] = {"Content-Type: application/json", "MCP-Protocol-Version: 2026-07-28",
			   "Mcp-Method: tools/list", auth, NULL};
	struct it_response r;
	long long t0 = it_now_us();
	it_http(w.s.port, "POST", "/mcp", h, body, strlen(body), &r);
	long ms = (long)((it_now_us() - t0) / 1000);
	ck_assert_int_eq(r.status, 503);
	ck_assert_ptr_nonnull(strcasestr(r.headers, "Retry-After: 30"));
	ck_assert_ptr_null(strstr(r.body, "\"result\""));
	ck_assert_msg(ms >= 400 && ms < 3500, "the timeout of 500 ms fired after %ld ms", ms);
	it_response_free(&r);
	ck_assert_int_eq(slow_call(w.s.port, w.victim, &ms), 200); /* the known token serves */
	slow_world_stop(&w);
	free(token);
}
END_TEST

/* Runs `bikaroo-mcp stdio` with env (a shell prefix of NAME='value' words) and the request lines
 * on stdin; returns its stdout (new) and sets *status to its exit status. */
static char *stdio_run(const char *env, const char *lines, int *status)
{
	char *cmd = mem_printf("printf '%%s\\n' %s | env %s %s %s stdio 2>/dev/null", lines, env,
			       it_env("BIKAROO_WRAPPER"), it_env("BIKAROO_BIN"));
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	size_t cap = 1 << 20;
	char *out = mem_alloc(cap);
	size_t n = fread(out, 1, cap - 1, p);
	out[n] = '\0';
	int st = pclose(p);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	free(cmd);
	return out;
}

START_TEST(stdio_binary_acts_as_the_token_in_its_environment)
{
	struct it_as as;
	it_as_start(&as, "jwt");
	json_t *spec = json_pack("{s:s, s:s, s:s}", "sub", "marie", "client",
				 "customer-care-assistant", "scope", "fleet:read");
	char *t = as_token(&as, spec);
	json_decref(spec);
	json_t *xs = json_pack("{s:s}", "forge", "expired");
	char *expired = as_token(&as, xs);
	json_decref(xs);
	const char *lines =
		"'{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/"
		"list\",\"params\":{\"_meta\":{\"io."
		"modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/"
		"clientCapabilities\":{}}}}' "
		"'{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
		"\"params\":{\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-2047\"},"
		"\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io."
		"modelcontextprotocol/clientCapabilities\":{}}}}'";
	char *base = mem_printf("BIKAROO_AUTH=jwt BIKAROO_AUTH_ISSUER=%s BIKAROO_RESOURCE_URI=%s "
				"BIKAROO_AUTH_INSECURE_LOOPBACK=1",
				as.issuer, AUTH_RESOURCE);
	char *good = mem_printf("%s BIKAROO_TOKEN=%s", base, t);
	int st;
	char *out = stdio_run(good, lines, &st);
	ck_assert_int_eq(st, 0);
	ck_assert_msg(strstr(out, "\"name\":\"get_bike_status\"") != NULL, "tools/list: %s", out);
	ck_assert_msg(strstr(out, "\"cacheScope\":\"private\"") != NULL, "tools/list: %s", out);
	ck_assert_msg(strstr(out, "was not found among the bikes you can access") != NULL,
		      "marie must not see a FR-LYO bike over stdio either: %s", out);
	free(out);
	/* No token, or a bad one: the process refuses to serve and answers nothing. */
	out = stdio_run(base, lines, &st);
	ck_assert_int_ne(st, 0);
	ck_assert_str_eq(out, "");
	free(out);
	char *bad = mem_printf("%s BIKAROO_TOKEN=%s", base, expired);
	out = stdio_run(bad, lines, &st);
	ck_assert_int_ne(st, 0);
	ck_assert_str_eq(out, "");
	free(out);
	free(bad);
	free(good);
	free(base);
	free(expired);
	free(t);
	it_as_stop(&as);
}
END_TEST

CHECK_SUITE(auth)
{
	json_error_t e;
	json_t *all = json_load_file("tests/auth/cases.json", 0, &e);
	int n = (int)json_array_size(json_object_get(all, "cases"));
	json_decref(all);
	Suite *s = suite_create("auth");
	TCase *tc = tcase_create("adversarial-cases");
	tcase_add_unchecked_fixture(tc, auth_setup, auth_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, auth_case, 0, n > 0 ? n : 1);
	tcase_add_test(tc, machine_token_never_reports_whatever_its_row_says);
	tcase_add_test(tc, audit_rows_name_the_token_by_jti_or_digest);
	tcase_add_test(tc, tokens_never_leak);
	suite_add_tcase(s, tc);
	TCase *ti = tcase_create("introspection");
	tcase_add_unchecked_fixture(ti, intro_setup, intro_teardown);
	/* Generous: an authorization server may take two minutes to start (it_as_start). */
	tcase_set_timeout(ti, 180);
	tcase_add_test(ti, introspection_accepts_active_tokens_for_this_server);
	tcase_add_test(ti, introspection_refuses_other_audiences_and_garbage);
	tcase_add_test(ti, introspection_issuer_down_is_503_but_cached_answers_stand);
	suite_add_tcase(s, ti);
	TCase *tm = tcase_create("modes-and-defense-in-depth");
	tcase_set_timeout(tm, 180);
	tcase_add_test(tm, jwt_issuer_unreachable_is_503_never_accept);
	tcase_add_test(tm, listen_stream_ends_when_its_token_expires);
	tcase_add_test(tm, unknown_kid_triggers_one_rate_limited_refresh);
	tcase_add_test(tm, verified_tokens_are_cached_until_exp_and_max_age);
	tcase_add_test(tm, concurrent_first_requests_share_one_key_fetch);
	tcase_add_test(tm, token_validation_is_the_default_and_needs_configuration);
	tcase_add_test(tm, stdio_identity_from_environment);
	tcase_add_test(tm, stdio_binary_acts_as_the_token_in_its_environment);
	tcase_add_test(tm, rls_alone_refuses_when_the_c_check_is_compiled_out);
	suite_add_tcase(s, tm);
	TCase *tw = tcase_create("slow-issuer");
	tcase_set_timeout(tw, 180);
	tcase_add_test(tw, slow_introspection_holds_no_loop);
	tcase_add_test(tw, slow_key_rotation_holds_no_loop);
	tcase_add_test(tw, a_new_key_whose_key_set_cannot_be_had_is_503);
	tcase_add_test(tw, tokens_of_a_new_key_wait_for_one_key_fetch);
	tcase_add_test(tw, one_token_one_introspection);
	tcase_add_test(tw, issuer_past_the_timeout_is_503);
	tcase_add_test(tw, a_flood_of_unknown_tokens_is_capped);
	suite_add_tcase(s, tw);
	return s;
}
