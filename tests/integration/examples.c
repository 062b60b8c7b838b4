/* The declarations' examples for the suites that walk every row (examples.h). */
#include "examples.h"

#include <check.h>
#include <glob.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "server/capabilities/adapter.h"

/* A modern client that declares the views' extension, so that their rows are offered too. */
#define EX_META                                                                                    \
	"\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                   \
	"\"io.modelcontextprotocol/clientCapabilities\":{\"elicitation\":{\"form\":{}},"           \
	"\"extensions\":{\"" ADAPTER_UI_EXTENSION "\":{\"mimeTypes\":[\"" ADAPTER_UI_MIME_TYPE     \
	"\"]}}}}"

/* Whether one of the n rows at rows (each sz bytes, its name a const char * at offset at) is
 * named name; *index is its index. */
static bool ex_in(const void *rows, size_t n, size_t sz, size_t at, const char *name, size_t *index)
{
	for (size_t i = 0; i < n; i++) {
		const char *row_name;
		memcpy(&row_name, (const char *)rows + i * sz + at, sizeof row_name);
		if (strcmp(row_name, name) == 0)
			return *index = i, true;
	}
	return false;
}

/* The capability declaring row kind/name, the row's index and its table's name, or NULL. */
static const struct mcp_capability *ex_row(const char *kind, const char *name, size_t *index,
					   const char **table)
{
	for (size_t c = 0; c < capabilities_count; c++) {
		const struct mcp_capability *k = capabilities_all[c];
		bool found = false;
		if (strcmp(kind, "tool") == 0)
			*table = "tools",
			found = ex_in(k->tools, k->ntools, sizeof *k->tools,
				      offsetof(struct tool_desc, name), name, index);
		else if (strcmp(kind, "resource") == 0)
			*table = "resources",
			found = ex_in(k->resources, k->nresources, sizeof *k->resources,
				      offsetof(struct resource_desc, uri), name, index);
		else if (strcmp(kind, "template") == 0)
			*table = "templates",
			found = ex_in(k->templates, k->ntemplates, sizeof *k->templates,
				      offsetof(struct resource_template_desc, uri_template), name,
				      index);
		else if (strcmp(kind, "prompt") == 0)
			*table = "prompts",
			found = ex_in(k->prompts, k->nprompts, sizeof *k->prompts,
				      offsetof(struct prompt_desc, name), name, index);
		if (found)
			return k;
	}
	return NULL;
}

const char *ex_where(const char *kind, const char *name, char *buf, size_t cap)
{
	size_t i = 0;
	const char *table = "";
	const struct mcp_capability *c = ex_row(kind, name, &i, &table);
	if (c)
		snprintf(buf, cap, "server/capabilities/%s.json: %s[%zu]", c->name, table, i);
	else
		snprintf(buf, cap, "(undeclared %s %s)", kind, name);
	return buf;
}

/* s (borrowed), copied for the life of the process, or NULL. */
static const char *ex_keep(const char *s)
{
	return s ? mem_strdup(s) : NULL;
}

const struct capability_example *ex_all(size_t *n)
{
	static struct capability_example all[256];
	static size_t count;
	static const char *const tables[][3] = {{"tools", "tool", "name"},
						{"resources", "resource", "uri"},
						{"templates", "template", "uri_template"},
						{"prompts", "prompt", "name"}};
	glob_t g;
	if (!count && glob("server/capabilities/*.json", 0, NULL, &g) == 0) {
		for (size_t f = 0; f < g.gl_pathc; f++) {
			json_t *decl = json_load_file(g.gl_pathv[f], 0, NULL), *row;
			for (size_t t = 0; t < 4; t++) {
				size_t i;
				json_array_foreach (json_object_get(decl, tables[t][0]), i, row) {
					json_t *ex = json_object_get(row, "example");
					if (!ex)
						continue;
					ck_assert_uint_lt(count, sizeof all / sizeof all[0]);
					json_t *who[3] = {json_object_get(ex, "caller"),
							  json_object_get(ex, "outside"),
							  json_object_get(ex, "refused")};
					char *args = json_dumps(json_object_get(ex, "arguments"),
								JSON_COMPACT | JSON_SORT_KEYS);
					all[count++] = (struct capability_example){
						tables[t][1],
						ex_keep(json_string_value(
							json_object_get(row, tables[t][2]))),
						args,
#define EX_WHO(w, k) ex_keep(json_string_value(json_object_get(who[w], k)))
						EX_WHO(0, "subject"),
						EX_WHO(0, "client"),
						EX_WHO(1, "subject"),
						EX_WHO(1, "client"),
						EX_WHO(2, "subject"),
						EX_WHO(2, "client"),
#undef EX_WHO
						ex_keep(json_string_value(
							json_object_get(ex, "fixture")))};
				}
			}
			json_decref(decl);
		}
		globfree(&g);
	}
	*n = count;
	return all;
}

const struct capability_example *ex_find(const char *kind, const char *name)
{
	size_t n;
	const struct capability_example *all = ex_all(&n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(all[i].kind, kind) == 0 && strcmp(all[i].name, name) == 0)
			return &all[i];
	return NULL;
}

void ex_fixture(const struct capability_example *e)
{
	if (!e->fixture)
		return;
	char *done = it_sql(e->fixture);
	char where[256];
	ck_assert_msg(done != NULL,
		      "%s.example.fixture: the SQL failed (the harness's log says why): make it "
		      "run as the database owner, and run again, on a migrated database with the "
		      "demo data",
		      ex_where(e->kind, e->name, where, sizeof where));
	free(done);
}

/* The URI of template e with its variable's value in args (new), or NULL. */
static char *ex_uri(const struct capability_example *e, json_t *args)
{
	size_t i = 0;
	const char *table;
	const struct mcp_capability *c = ex_row(e->kind, e->name, &i, &table);
	if (!c)
		return NULL;
	const struct resource_template_desc *t = &c->templates[i];
	const char *value = json_string_value(json_object_get(args, t->var));
	return value ? mem_printf("%s%s%s", t->prefix, value, t->suffix) : NULL;
}

void ex_call(unsigned port, const struct capability_example *e, const char *args, const char *id,
	     struct it_response *r)
{
	const char *text = args ? args : e->arguments;
	json_t *a = json_loads(text, 0, NULL);
	const char *method = "tools/call", *name = e->name;
	char *params, *uri = NULL;
	if (strcmp(e->kind, "template") == 0 || strcmp(e->kind, "resource") == 0) {
		method = "resources/read";
		uri = strcmp(e->kind, "resource") == 0 ? mem_strdup(e->name) : ex_uri(e, a);
		/* No value for the variable: a URI no row serves. */
		name = uri ? uri : "bikaroo://no-such-row";
		params = mem_printf("\"uri\":\"%s\"", name);
	} else {
		if (strcmp(e->kind, "prompt") == 0)
			method = "prompts/get";
		params = mem_printf("\"name\":\"%s\",\"arguments\":%s", e->name, text);
	}
	char *body = mem_printf("{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"%s\",\"params\":{"
				"%s," EX_META "}}",
				id, method, params);
	char mm[96], mn[512];
	snprintf(mm, sizeof mm, "Mcp-Method: %s", method);
	snprintf(mn, sizeof mn, "Mcp-Name: %s", name);
	const char *headers[] = {"Content-Type: application/json",
				 "Accept: application/json, text/event-stream",
				 "MCP-Protocol-Version: 2026-07-28",
				 mm,
				 mn,
				 NULL};
	it_http(port, "POST", "/mcp", headers, body, strlen(body), r);
	free(body);
	free(params);
	free(uri);
	json_decref(a);
}

const char *ex_failure(const struct it_response *r, char *buf, size_t cap)
{
	json_t *result = json_object_get(r->json, "result");
	json_t *error = json_object_get(r->json, "error");
	if (r->status == 200 && result && !json_is_true(json_object_get(result, "isError"))) {
		snprintf(buf, cap, "%s", "");
	} else if (error) {
		snprintf(buf, cap, "the error %lld \"%s\"",
			 (long long)json_integer_value(json_object_get(error, "code")),
			 json_string_value(json_object_get(error, "message")));
	} else if (result) {
		const char *text = json_string_value(json_object_get(
			json_array_get(json_object_get(result, "content"), 0), "text"));
		snprintf(buf, cap, "isError \"%s\"", text ? text : "(no text)");
	} else {
		snprintf(buf, cap, "HTTP %ld %.200s", r->status, r->body ? r->body : "");
	}
	return buf;
}

/* Appends name to the space-separated list buf (cap bytes) unless it is there already. */
static void ex_scope_add(char *buf, size_t cap, const char *name, const char *without)
{
	if (!name || !*name || (without && strcmp(name, without) == 0))
		return;
	size_t n = strlen(name);
	for (const char *p = strstr(buf, name); p; p = strstr(p + 1, name))
		if ((p == buf || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return;
	size_t used = strlen(buf);
	snprintf(buf + used, cap - used, "%s%s", used ? " " : "", name);
}

const char *ex_scopes(const char *without, char *buf, size_t cap)
{
	buf[0] = '\0';
	for (size_t c = 0; c < capabilities_count; c++) {
		const struct mcp_capability *k = capabilities_all[c];
		for (size_t i = 0; i < k->ntools; i++)
			ex_scope_add(buf, cap, k->tools[i].scope_name, without);
		for (size_t i = 0; i < k->nresources; i++)
			ex_scope_add(buf, cap, k->resources[i].scope_name, without);
		for (size_t i = 0; i < k->ntemplates; i++)
			ex_scope_add(buf, cap, k->templates[i].scope_name, without);
		for (size_t i = 0; i < k->nprompts; i++)
			ex_scope_add(buf, cap, k->prompts[i].scope_name, without);
	}
	return buf;
}

unsigned ex_port(struct ex_servers *p, const char *subject, const char *client, const char *scopes)
{
	char key[384];
	snprintf(key, sizeof key, "%s|%s|%s", subject, client, scopes);
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->at[i].key, key) == 0)
			return p->at[i].s.port;
	ck_assert_msg(p->n < EX_MAX_SERVERS, "more than %d callers: raise EX_MAX_SERVERS",
		      EX_MAX_SERVERS);
	char se[160], ce[160], sc[200];
	snprintf(se, sizeof se, "BIKAROO_LOCAL_SUBJECT=%s", subject);
	snprintf(ce, sizeof ce, "BIKAROO_LOCAL_CLIENT=%s", client);
	snprintf(sc, sizeof sc, "BIKAROO_LOCAL_SCOPES=%s", scopes);
	const char *env[] = {se, ce, sc, NULL};
	ck_assert_msg(it_server_start(&p->at[p->n].s, env) == 0,
		      "the server acting as %s via %s did not start", subject, client);
	snprintf(p->at[p->n].key, sizeof p->at[p->n].key, "%s", key);
	return p->at[p->n++].s.port;
}

void ex_servers_stop(struct ex_servers *p)
{
	for (size_t i = 0; i < p->n; i++)
		ck_assert_msg(it_server_stop(&p->at[i].s) == 0,
			      "the server acting as %s: unclean "
			      "stop",
			      p->at[i].key);
	p->n = 0;
}
