/* Prints the public contract of every capability Bikaroo serves, as a 2026-07-28 client sees it
 * in tools/list, resources/list, resources/templates/list and prompts/list (each descriptor
 * without its _meta), with its governance record (the descriptor's _meta entry under the
 * server's governance key) beside it:
 *   {"server": ..., "capabilities": {KIND: {KEY: {"contract": {...}, "governance": {...}}}}}
 * KIND is tool, resource, resourceTemplate or prompt (the catalogue's words); KEY is the name,
 * uri or uriTemplate. Needs no database: only the lists are asked for. Run from the repository
 * root (the catalogue loads its documents from resources/ and prompts/). scripts/contracts.py
 * compares this output with tests/contracts/snapshot.json. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "gen/capabilities.h"
#include "server/capabilities/catalog.h"
#include "server/capabilities/adapter.h"
#include "server/protocol/dispatch.h"

/* The client declares every extension the catalogue has rows for, so that those rows are listed
 * too (their _meta, like every descriptor's, is not part of the contract). */
#define DUMP_META                                                                                  \
	"\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"" MCP_VERSION_MODERN "\","       \
	"\"io.modelcontextprotocol/clientCapabilities\":{\"extensions\":{\"" ADAPTER_UI_EXTENSION    \
	"\":{\"mimeTypes\":[\"" ADAPTER_UI_MIME_TYPE "\"]}}}}"

/* No one in particular: the caller hook is unset (no database), so roles are not judged; the
 * request carries every scope a row needs (dump_scopes) and is a person's, so that no scope and
 * no people_only row hides a row. */
static struct fleet_actor dump_actor;

/* Every scope bit a row of s needs. */
static unsigned dump_scopes(const struct mcp_server *s)
{
	unsigned all = 0;
	for (size_t i = 0; i < s->ntools; i++)
		all |= s->tools[i].scope;
	for (size_t i = 0; i < s->nresources; i++)
		all |= s->resources[i].scope;
	for (size_t i = 0; i < s->ntemplates; i++)
		all |= s->templates[i].scope;
	for (size_t i = 0; i < s->nprompts; i++)
		all |= s->prompts[i].scope;
	return all;
}

/* Whether the dump's capabilities hold row key of kind (declared in table of
 * server/capabilities/NAME.json); a missing row is said on stderr with its declaration. */
static bool dump_has(json_t *caps, const char *kind, const char *name, const char *table,
		     const char *key)
{
	if (json_object_get(json_object_get(caps, kind), key))
		return true;
	fprintf(stderr,
		"contracts-dump: server/capabilities/%s.json: %s %s is not in the lists the dump "
		"asks for (every scope, roles not judged, every extension of the catalogue): list "
		"it to such a client, or the contracts check would read it as removed\n",
		name, table, key);
	return false;
}

/* Whether every row declared is in the dump: a row the lists hid from the dump would read as
 * removed to `make contracts`. */
static bool dump_complete(json_t *caps)
{
	bool complete = true;
	for (size_t c = 0; c < capabilities_count; c++) {
		const struct mcp_capability *k = capabilities_all[c];
		for (size_t i = 0; i < k->ntools; i++)
			complete &= dump_has(caps, "tool", k->name, "tools", k->tools[i].name);
		for (size_t i = 0; i < k->nresources; i++)
			complete &= dump_has(caps, "resource", k->name, "resources",
					     k->resources[i].uri);
		for (size_t i = 0; i < k->ntemplates; i++)
			complete &= dump_has(caps, "resourceTemplate", k->name, "templates",
					     k->templates[i].uri_template);
		for (size_t i = 0; i < k->nprompts; i++)
			complete &= dump_has(caps, "prompt", k->name, "prompts",
					     k->prompts[i].name);
	}
	return complete;
}

/* One list request (cursor NULL for the first page); the result object (new), or NULL. */
static json_t *dump_list(const struct mcp_service *s, const char *method, const char *cursor)
{
	json_t *params = json_loads("{" DUMP_META "}", 0, NULL);
	if (cursor)
		json_object_set_new(params, "cursor", json_string(cursor));
	json_t *msg = json_pack("{s:s, s:i, s:s, s:o}", "jsonrpc", "2.0", "id", 1, "method", method,
				"params", params);
	char *body = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	struct mcp_request req = {.transport = MCP_TRANSPORT_STDIO,
				  .body = body,
				  .body_len = strlen(body),
				  .actor = &dump_actor,
				  .reqid = "contracts",
				  .per_principal = false};
	struct mcp_response out;
	mcp_handle(s, &req, &out);
	free(body);
	json_t *answer = out.body ? json_loads(out.body, 0, NULL) : NULL;
	mcp_response_free(&out);
	json_t *result = json_incref(json_object_get(answer, "result"));
	if (!result)
		fprintf(stderr, "contracts-dump: %s: no result: %s\n", method,
			answer ? "error answer" : "no answer");
	json_decref(answer);
	return result;
}

/* Adds every item of every page of method's list under kind, keyed by the item's key member. */
static int dump_kind(const struct mcp_service *s, json_t *caps, const char *method,
		     const char *list_key, const char *kind, const char *item_key)
{
	json_t *byname = json_object();
	json_object_set_new(caps, kind, byname);
	char *cursor = NULL;
	int pages = 0;
	do {
		json_t *res = dump_list(s, method, cursor);
		free(cursor);
		cursor = NULL;
		if (!res)
			return -1;
		json_t *items = json_object_get(res, list_key);
		if (!json_is_array(items)) {
			fprintf(stderr, "contracts-dump: %s: no %s array\n", method, list_key);
			json_decref(res);
			return -1;
		}
		size_t i;
		json_t *item;
		json_array_foreach (items, i, item) {
			const char *key = json_string_value(json_object_get(item, item_key));
			if (!key || json_object_get(byname, key)) {
				fprintf(stderr, "contracts-dump: %s: item without a unique %s\n",
					method, item_key);
				json_decref(res);
				return -1;
			}
			json_t *contract = json_deep_copy(item);
			json_t *gov = json_object_get(json_object_get(contract, "_meta"),
						      CATALOG_GOVERNANCE_KEY);
			json_t *entry = json_pack("{s:O, s:O}", "contract", contract, "governance",
						  gov ? gov : json_null());
			json_object_del(contract, "_meta");
			json_decref(contract);
			json_object_set_new(byname, key, entry);
		}
		const char *next = json_string_value(json_object_get(res, "nextCursor"));
		if (next)
			cursor = strdup(next);
		json_decref(res);
	} while (cursor && ++pages < 1000);
	free(cursor);
	return 0;
}

int main(void)
{
	log_set_level(LOG_WARN); /* one info line per list request is noise here */
	struct mcp_server s;
	if (catalog_describe(&s, NULL) != 0)
		return 1;
	s.caller = NULL; /* no database: lists show every capability, as contracts do */
	dump_actor.scopes = dump_scopes(&s);
	struct mcp_service_config cfg = {.resources_dir = "resources", .prompts_dir = "prompts"};
	struct mcp_service *svc = mcp_service_new(&s, &cfg);
	if (!svc) {
		fprintf(stderr,
			"contracts-dump: cannot load the catalogue (run from the repository "
			"root)\n");
		return 1;
	}
	json_t *caps = json_object();
	int rc = dump_kind(svc, caps, "tools/list", "tools", "tool", "name");
	rc |= dump_kind(svc, caps, "resources/list", "resources", "resource", "uri");
	rc |= dump_kind(svc, caps, "resources/templates/list", "resourceTemplates",
			"resourceTemplate", "uriTemplate");
	rc |= dump_kind(svc, caps, "prompts/list", "prompts", "prompt", "name");
	if (rc == 0 && !dump_complete(caps))
		rc = 1;
	if (rc == 0) {
		json_t *doc = json_pack("{s:s, s:s, s:o}", "server", s.name, "protocolVersion",
					MCP_VERSION_MODERN, "capabilities", caps);
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		fputc('\n', stdout);
		json_decref(doc);
	} else {
		json_decref(caps);
	}
	mcp_service_free(svc);
	mcp_server_release(&s);
	return rc == 0 ? 0 : 1;
}
