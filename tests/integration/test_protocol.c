/* Runs every case of tests/protocol/cases.json (request -> expected status and body) against
 * the real server. One runner for all protocol error paths. */
#define _GNU_SOURCE /* for strcasestr */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "harness.h"
#include "tests/check_main.h"

static struct it_server proto_srv;
static json_t *proto_cases;

#define PROTO_META                                                                                 \
	"\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                   \
	"\"io.modelcontextprotocol/clientCapabilities\":{}}"

static void proto_setup(void)
{
	json_error_t e;
	proto_cases = json_load_file("tests/protocol/cases.json", JSON_REJECT_DUPLICATES, &e);
	ck_assert_msg(proto_cases != NULL, "cases.json: %s line %d", e.text, e.line);
	ck_assert_int_eq(it_server_start(&proto_srv, NULL), 0);
}

static void proto_teardown(void)
{
	ck_assert_int_eq(it_server_stop(&proto_srv), 0);
	json_decref(proto_cases);
}

/* Replaces every $META with the modern envelope (new string). */
static char *proto_expand(const char *body)
{
	size_t cap = strlen(body) * 2 + 1024, o = 0;
	char *out = mem_alloc(cap);
	for (const char *p = body; *p;) {
		if (strncmp(p, "$META", 5) == 0) {
			o += (size_t)snprintf(out + o, cap - o, "%s", PROTO_META);
			p += 5;
		} else {
			out[o++] = *p++;
		}
	}
	out[o] = '\0';
	return out;
}

static char *proto_unhex(const char *hex, size_t *len)
{
	size_t n = strlen(hex) / 2;
	char *out = mem_alloc(n + 1);
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		ck_assert(sscanf(hex + 2 * i, "%2x", &v) == 1);
		out[i] = (char)v;
	}
	out[n] = '\0';
	*len = n;
	return out;
}

/* The value at a dotted path ("result.tools.0.title": numeric segments index arrays), borrowed,
 * or NULL when absent. */
static json_t *proto_at(json_t *root, const char *path)
{
	char seg[128];
	json_t *cur = root;
	for (const char *p = path; cur && *p;) {
		size_t n = strcspn(p, ".");
		snprintf(seg, sizeof seg, "%.*s", (int)n, p);
		char *end = NULL;
		unsigned long idx = strtoul(seg, &end, 10);
		cur = json_is_array(cur) && end && *end == '\0' ? json_array_get(cur, idx)
								: json_object_get(cur, seg);
		p += n;
		if (*p == '.')
			p++;
	}
	return cur;
}

START_TEST(protocol_case)
{
	json_t *c = json_array_get(json_object_get(proto_cases, "cases"), (size_t)_i);
	const char *name = json_string_value(json_object_get(c, "name"));
	json_t *expect = json_object_get(c, "expect");
	char *body = NULL;
	size_t body_len = 0;
	if (json_object_get(c, "body_hex"))
		body = proto_unhex(json_string_value(json_object_get(c, "body_hex")), &body_len);
	else if (json_object_get(c, "body")) {
		body = proto_expand(json_string_value(json_object_get(c, "body")));
		body_len = strlen(body);
	}
	/* Headers: explicit list, or the modern defaults plus Mcp-Method from the body. */
	const char *headers[16];
	int nh = 0;
	char mh[160] = "";
	json_t *hl = json_object_get(c, "headers");
	size_t i;
	json_t *h;
	if (hl) {
		json_array_foreach (hl, i, h)
			headers[nh++] = json_string_value(h);
	} else {
		headers[nh++] = "Content-Type: application/json";
		headers[nh++] = "Accept: application/json, text/event-stream";
		headers[nh++] = "MCP-Protocol-Version: 2026-07-28";
		json_error_t e;
		json_t *parsed = body ? json_loadb(body, body_len, 0, &e) : NULL;
		const char *m = json_string_value(json_object_get(parsed, "method"));
		if (m) {
			snprintf(mh, sizeof mh, "Mcp-Method: %s", m);
			headers[nh++] = mh;
		}
		json_decref(parsed);
	}
	json_array_foreach (json_object_get(c, "extra_headers"), i, h)
		headers[nh++] = json_string_value(h);
	headers[nh] = NULL;
	const char *method = json_string_value(json_object_get(c, "http_method"));
	const char *path = json_string_value(json_object_get(c, "path"));
	struct it_response r;
	it_http(proto_srv.port, method ? method : "POST", path ? path : "/mcp", headers, body,
		body_len, &r);

	long want_status = (long)json_integer_value(json_object_get(expect, "status"));
	ck_assert_msg(r.status == want_status, "%s: status %ld, want %ld; body %s", name, r.status,
		      want_status, r.body);
	if (json_is_true(json_object_get(expect, "empty")))
		ck_assert_msg(r.body[0] == '\0', "%s: body should be empty: %s", name, r.body);
	json_t *code = json_object_get(expect, "code");
	if (code) {
		json_t *err = json_object_get(r.json, "error");
		ck_assert_msg(json_is_object(err), "%s: no error object in %s", name, r.body);
		ck_assert_msg(json_integer_value(json_object_get(err, "code")) ==
				      json_integer_value(code),
			      "%s: code in %s", name, r.body);
		ck_assert_msg(json_is_string(json_object_get(err, "message")), "%s: message", name);
	}
	json_t *id = json_object_get(expect, "id");
	if (id)
		ck_assert_msg(json_equal(json_object_get(r.json, "id"), id),
			      "%s: id not echoed in %s", name, r.body);
	json_t *data = json_object_get(expect, "data");
	if (data)
		ck_assert_msg(
			json_equal(json_object_get(json_object_get(r.json, "error"), "data"), data),
			"%s: data in %s", name, r.body);
	json_t *result = json_object_get(r.json, "result");
	const char *rt = json_string_value(json_object_get(expect, "resultType"));
	if (rt)
		ck_assert_msg(
			strcmp(json_string_value(json_object_get(result, "resultType")), rt) == 0,
			"%s: resultType in %s", name, r.body);
	json_t *is_error = json_object_get(expect, "isError");
	if (is_error)
		ck_assert_msg(json_equal(json_object_get(result, "isError"), is_error),
			      "%s: isError in %s", name, r.body);
	const char *pv = json_string_value(json_object_get(expect, "protocolVersion"));
	if (pv)
		ck_assert_msg(strcmp(json_string_value(json_object_get(result, "protocolVersion")),
				     pv) == 0,
			      "%s: protocolVersion in %s", name, r.body);
	if (json_is_true(json_object_get(expect, "noResultType")))
		ck_assert_msg(result && !json_object_get(result, "resultType") &&
				      !json_object_get(result, "ttlMs"),
			      "%s: legacy result must not carry resultType/ttlMs: %s", name,
			      r.body);
	if (json_is_true(json_object_get(expect, "noSessionId")))
		ck_assert_msg(!strcasestr(r.headers, "mcp-session-id"), "%s: session id minted",
			      name);
	const char *allow = json_string_value(json_object_get(expect, "allow"));
	if (allow) {
		char want[64];
		snprintf(want, sizeof want, "Allow: %s", allow);
		ck_assert_msg(strcasestr(r.headers, want) != NULL, "%s: no Allow header in %s",
			      name, r.headers);
	}
	/* Dotted-path checks on the whole response: values that must be equal, keys that must be
	 * absent (per-version projection, legacy shapes). */
	const char *jpath;
	json_t *want;
	json_object_foreach (json_object_get(expect, "equal"), jpath, want) {
		json_t *got = proto_at(r.json, jpath);
		char *g = got ? json_dumps(got, JSON_ENCODE_ANY) : NULL;
		ck_assert_msg(got && json_equal(got, want), "%s: %s is %s in %s", name, jpath,
			      g ? g : "(absent)", r.body);
		free(g);
	}
	json_array_foreach (json_object_get(expect, "absent"), i, h) {
		jpath = json_string_value(h);
		ck_assert_msg(proto_at(r.json, jpath) == NULL, "%s: %s must be absent in %s", name,
			      path, r.body);
	}
	it_response_free(&r);
	free(body);

	/* Whatever the case did, the next valid request is still served. */
	it_mcp(proto_srv.port, "tools/call", "get_bike_status",
	       "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-2048\"}", &r);
	ck_assert_msg(r.status == 200 && json_is_false(json_object_get(
						 json_object_get(r.json, "result"), "isError")),
		      "%s: server no longer serves: %s", name, r.body);
	it_response_free(&r);
}
END_TEST

CHECK_SUITE(protocol)
{
	json_error_t e;
	json_t *all = json_load_file("tests/protocol/cases.json", 0, &e);
	int n = (int)json_array_size(json_object_get(all, "cases"));
	json_decref(all);
	Suite *s = suite_create("protocol");
	TCase *tc = tcase_create("cases.json");
	tcase_add_unchecked_fixture(tc, proto_setup, proto_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, protocol_case, 0, n > 0 ? n : 1);
	suite_add_tcase(s, tc);
	return s;
}
