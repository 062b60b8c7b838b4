/* The capability adapters' shared parts (see adapter.h). */
#include "adapter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "common/log.h"
#include "domain/case_tasks.h"
#include "domain/ids.h"
#include "domain/reads.h"
#include "domain/rights.h"
#include "gen/capabilities.h"
#include "server/protocol/pager.h"
#include "server/protocol/reqstate.h"
#include "server/protocol/tasks.h"
#include "server/protocol/server.h"
#include "server/protocol/tools.h"

const struct mcp_app *adapter_settings(const struct mcp_ctx *ctx)
{
	static const struct mcp_app defaults = {.confirm_ttl_s = 300};
	return ctx->server->app ? ctx->server->app : &defaults;
}

/* The extension's settings name the content types a host renders (mimeTypes, REQUIRED). */
#define ADAPTER_UI_DECLARED                                                                        \
	.extension = ADAPTER_UI_EXTENSION, .setting_key = "mimeTypes",                             \
	.setting_value = ADAPTER_UI_MIME_TYPE

const struct mcp_ext_meta adapter_card_link = {
	ADAPTER_UI_DECLARED,
	.meta = "{\"ui\":{\"resourceUri\":\"" ADAPTER_UI_CARD_URI "\"}}",
};

const struct mcp_ext_meta adapter_timeline_link = {
	ADAPTER_UI_DECLARED,
	.meta = "{\"ui\":{\"resourceUri\":\"" ADAPTER_UI_TIMELINE_URI "\"}}",
};

const struct mcp_ext_meta adapter_queue_link = {
	ADAPTER_UI_DECLARED,
	.meta = "{\"ui\":{\"resourceUri\":\"" ADAPTER_UI_QUEUE_URI "\"}}",
};

/* The documents are self-contained HTML5 (inline script and style, no external origin): no
 * _meta.ui.csp, so the host's restrictive default policy applies. */
const struct mcp_ext_meta adapter_view_document = {
	ADAPTER_UI_DECLARED,
	.meta = "{\"ui\":{\"prefersBorder\":true}}",
	.exclusive = true,
};

int adapter_unavailable(struct mcp_error *err)
{
	return mcp_unavailable(err,
			       "The fleet database is unavailable right now: nothing was done. "
			       "Try again in a minute.");
}

int adapter_domain_error(enum fleet_status st, struct mcp_error *err)
{
	if (st == FLEET_UNAVAILABLE)
		return adapter_unavailable(err);
	return mcp_fail(err, MCP_INTERNAL_ERROR, "Internal error", NULL);
}

enum resource_status adapter_read_failure(struct mcp_ctx *ctx, enum fleet_status st,
					  struct mcp_error *err)
{
	if (st == FLEET_NOT_FOUND)
		return RESOURCE_NOT_FOUND;
	if (st == FLEET_FORBIDDEN && !(ctx->req->actor->scopes & FLEET_SCOPE_READ)) {
		err->missing_scope = "fleet:read";
		mcp_fail(err, MCP_INVALID_PARAMS, "Insufficient scope",
			 json_pack("{s:s}", "requiredScope", "fleet:read"));
		return RESOURCE_FAILED;
	}
	if (st == FLEET_FORBIDDEN)
		return RESOURCE_NOT_FOUND;
	adapter_domain_error(st, err);
	return RESOURCE_FAILED;
}

/* ---- rows and tasks as answers ------------------------------------------------------------ */

/* Whether v is text jansson takes as a string: a string that is not (not UTF-8: PostgreSQL's
 * text in another client encoding) is left out of its object, as json_object_set_new leaves a
 * NULL value out. ASCII is always taken, and costs no allocation. */
static bool adapter_string_ok(const char *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] >= 0x80) {
			json_t *s = json_stringn(v, n);
			json_decref(s);
			return s != NULL;
		}
	return true;
}

/* One column's value (v: its text as PostgreSQL sends it, NULL for null) in its JSON form. */
static void adapter_value(struct mem_buf *b, const struct declared_field *f, const char *v)
{
	char num[32];
	if (!v) {
		mem_buf_put(b, "null", 4);
		return;
	}
	switch (f->json) {
	case DECLARED_INTEGER:
		mem_buf_put(b, num,
			    (size_t)snprintf(num, sizeof num, "%lld", strtoll(v, NULL, 10)));
		return;
	case DECLARED_BOOLEAN:
		if (strcmp(v, "t") == 0)
			mem_buf_put(b, "true", 4);
		else
			mem_buf_put(b, "false", 5);
		return;
	case DECLARED_JSON: { /* jsonb's text, written again as every answer is (compact) */
		json_t *j = json_loads(v, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
		if (j)
			jsonw_value(b, j);
		else
			mem_buf_put(b, "null", 4);
		json_decref(j);
		return;
	}
	case DECLARED_STRING: break;
	}
	jsonw_string(b, v, strlen(v));
}

/* One row (n column texts) as the object of its shown columns, in declared order. */
static void adapter_row(struct mem_buf *b, const struct declared_field *fields, size_t n,
			char *const *row)
{
	bool first = true;
	mem_buf_put(b, "{", 1);
	for (size_t i = 0; i < n; i++) {
		const struct declared_field *f = &fields[i];
		if (!f->name || (f->json == DECLARED_STRING && row[i] &&
				 !adapter_string_ok(row[i], strlen(row[i]))))
			continue;
		if (!first)
			mem_buf_put(b, ",", 1);
		first = false;
		jsonw_string(b, f->name, strlen(f->name));
		mem_buf_put(b, ":", 1);
		adapter_value(b, f, row[i]);
	}
	mem_buf_put(b, "}", 1);
}

void adapter_document(struct mem_buf *b, const struct mcp_ctx *ctx, const struct declared_read *r,
		      char *const *rows, size_t n, json_t *args)
{
	size_t w = r->query.ncolumns;
	if (!r->query.list) {
		adapter_row(b, r->fields, w, rows);
		return;
	}
	bool more = r->page_size && n > r->page_size;
	n = more ? r->page_size : n;
	mem_buf_put(b, "{", 1);
	jsonw_string(b, r->list, strlen(r->list));
	mem_buf_put(b, ":[", 2);
	for (size_t i = 0; i < n; i++) {
		if (i)
			mem_buf_put(b, ",", 1);
		adapter_row(b, r->fields, w, rows + i * w);
	}
	mem_buf_put(b, "]", 1);
	if (more) {
		const char *place = rows[(n - 1) * w + (size_t)r->page_after];
		char *cursor = pager_cursor_seal(ctx, args, place ? place : "");
		mem_buf_put(b, ",\"nextCursor\":", 14);
		jsonw_string(b, cursor, strlen(cursor));
		free(cursor);
	}
	mem_buf_put(b, "}", 1);
}

json_t *adapter_result(const struct declared_write *w, const char *result)
{
	json_t *in = result ? json_loads(result, JSON_REJECT_DUPLICATES, NULL) : NULL;
	json_t *out = json_is_object(in) ? json_object() : NULL;
	const char *why = out ? NULL : "not an object";
	const char *key;
	json_t *v;
	json_object_foreach (in, key, v) {
		const struct declared_field *f = NULL;
		for (size_t i = 0; i < w->nfields && !f; i++)
			if (strcmp(w->fields[i].column, key) == 0)
				f = &w->fields[i];
		bool fits = f && (json_is_null(v)               ? f->nullable || !f->name
				  : f->json == DECLARED_STRING  ? json_is_string(v)
				  : f->json == DECLARED_INTEGER ? json_is_integer(v)
				  : f->json == DECLARED_BOOLEAN ? json_is_boolean(v)
								: true);
		if (!fits && !why)
			why = key;
		else if (f && f->name)
			json_object_set(out, f->name, v);
	}
	for (size_t i = 0; out && i < w->nfields; i++)
		if (w->fields[i].name && !w->fields[i].optional &&
		    !json_object_get(out, w->fields[i].name)) {
			if (!w->fields[i].nullable && !why)
				why = w->fields[i].column;
			json_object_set_new(out, w->fields[i].name, json_null());
		}
	if (why) { /* why may be a key of in: logged before in is released */
		log_error("%s: its result is not what its declaration says (%s): %.200s",
			  w->query.function, why, result ? result : "(none)");
		json_decref(out);
		out = NULL;
	}
	json_decref(in);
	return out;
}

/* The declared write of the tool named, among every capability's, or NULL. */
static const struct declared_write *adapter_write_of(const char *tool)
{
	for (size_t i = 0; i < capabilities_count; i++) {
		const struct mcp_capability *c = capabilities_all[i];
		for (size_t k = 0; k < c->ntools; k++)
			if (c->tools[k].fn == declared_tool && strcmp(c->tools[k].name, tool) == 0)
				return ((const struct declared_row *)c->tools[k].spec)->write;
	}
	return NULL;
}

void adapter_task(const struct case_task *f, struct mcp_task *t)
{
	*t = (struct mcp_task){.created_ms = f->created_ms,
			       .updated_ms = f->updated_ms,
			       .ttl_ms = f->ttl_ms,
			       .poll_ms = f->poll_ms};
	snprintf(t->id, sizeof t->id, "%s", f->id);
	snprintf(t->tool, sizeof t->tool, "%s", f->tool);
	snprintf(t->message, sizeof t->message, "%s", f->message);
	t->status = f->status == CASE_TASK_COMPLETED   ? MCP_TASK_COMPLETED
		    : f->status == CASE_TASK_CANCELLED ? MCP_TASK_CANCELLED
						       : MCP_TASK_WORKING;
	if (f->status != CASE_TASK_COMPLETED)
		return;
	const struct declared_write *w = f->is_error ? NULL : adapter_write_of(f->tool);
	json_t *sc = w ? adapter_result(w, f->result) : NULL;
	t->result = sc ? adapter_structured(sc) : tools_result(f->message, NULL, true);
}

json_t *adapter_structured(json_t *sc)
{
	char *text = jsonw_dump(sc);
	json_t *r = tools_result(text, sc, false);
	free(text);
	return r;
}

void adapter_request_ref(const struct mcp_ctx *ctx, char *buf, size_t cap)
{
	char id[96];
	mcp_request_id(ctx, id, sizeof id);
	const char *trace = ctx->trace_id;
	const char *token = ctx->req->actor->token_ref;
	bool t = trace && strlen(trace) == 32;
	snprintf(buf, cap, "%s%s%s%s%s", t ? trace : "", t ? " " : "", token, *token ? " " : "",
		 id);
}

void adapter_call_entry(struct mcp_ctx *ctx, json_t *args, struct adapter_call *c)
{
	reqstate_digest(args ? args : json_null(), c->digest);
	adapter_request_ref(ctx, c->reqid, sizeof c->reqid);
	const char *key = ctx->tool ? ctx->tool->audit.target : NULL;
	c->entry = (struct audit_entry){
		.tool = ctx->tool ? ctx->tool->name : "(none)",
		.target = key ? json_string_value(json_object_get(args, key)) : NULL,
		.args_digest = c->digest,
		.request_id = c->reqid,
	};
}

void adapter_read_entry(struct mcp_ctx *ctx, const char *uri, const char *value,
			struct adapter_call *c)
{
	json_t *args = json_pack("{s:s}", "uri", uri);
	reqstate_digest(args, c->digest);
	json_decref(args);
	adapter_request_ref(ctx, c->reqid, sizeof c->reqid);
	c->entry = (struct audit_entry){
		.tool = ctx->label ? ctx->label : "resources/read",
		.target = value,
		.args_digest = c->digest,
		.request_id = c->reqid,
	};
}

int adapter_caller(struct mcp_ctx *ctx, struct mcp_caller *who, struct mcp_error *err)
{
	struct rights r;
	enum fleet_status st = rights_known(ctx->req->actor, &r, reads_rights);
	who->scopes = st == FLEET_OK ? rights_scopes(ctx->req->actor, &r) : 0;
	who->person = st == FLEET_OK && r.human && !ctx->req->actor->machine;
	snprintf(who->role, sizeof who->role, "%s", st == FLEET_OK ? r.role : "");
	return st == FLEET_OK ? 0 : adapter_domain_error(st, err);
}

void adapter_audit(struct mcp_ctx *ctx, const char *tool, json_t *args, const char *outcome,
		   const char *detail)
{
	struct adapter_call c;
	const char *uri = ctx->method && strcmp(ctx->method, "resources/read") == 0
				  ? json_string_value(json_object_get(args, "uri"))
				  : NULL;
	if (uri) /* a template's read, refused before it ran (server.h) */
		adapter_read_entry(ctx, uri, json_string_value(json_object_get(args, "value")), &c);
	else
		adapter_call_entry(ctx, args, &c);
	c.entry.tool = tool; /* the name asked for, when no row matched it */
	c.entry.outcome = outcome;
	c.entry.detail = detail;
	if (audit_record(ctx->req->actor, &c.entry) != FLEET_OK)
		log_msg(LOG_WARN, ctx->req->reqid, "audit row missing for %s", tool);
}

/* Completion of an id of kind (ids.h) as ctx's caller. */
static int adapter_complete_ids(struct mcp_ctx *ctx, enum ids_kind kind, const char *prefix,
				json_t **values, long *total, struct mcp_error *err)
{
	char ids[IDS_MAX_COMPLETIONS][IDS_ID_MAX];
	size_t n = 0;
	enum fleet_status st = ids_complete(kind, ctx->req->actor, prefix, ids, &n, total);
	if (st == FLEET_UNAVAILABLE || st == FLEET_INTERNAL)
		return adapter_domain_error(st, err);
	/* A caller who may not read gets no suggestions, like a caller whose prefix matches
	 * nothing: completion never reveals what the caller could not read. */
	*values = json_array();
	if (st != FLEET_OK) {
		*total = 0;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		json_array_append_new(*values, json_string(ids[i]));
	return 0;
}

int adapter_complete_bike_id(struct mcp_ctx *ctx, const char *prefix, json_t **values, long *total,
			     struct mcp_error *err)
{
	return adapter_complete_ids(ctx, IDS_BIKE, prefix, values, total, err);
}

int adapter_complete_case_id(struct mcp_ctx *ctx, const char *prefix, json_t **values, long *total,
			     struct mcp_error *err)
{
	return adapter_complete_ids(ctx, IDS_CASE, prefix, values, total, err);
}
