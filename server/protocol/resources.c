/* Resources: the descriptor tables, listing, URI matching and the adapters to the domain.
 * No file-system path is ever derived from a URI: documents are loaded at start from the file
 * names written in the table, and a URI only selects a row. */
#include "resources.h"

#include "server/capabilities/cases.h"

#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "domain/status_codes.h"
#include "pager.h"
#include "tools.h"
#include "server/transport/uriset.h"

#define RESOURCES_LIST_TTL_MS 3600000L
#define RESOURCES_DOC_TTL_MS 3600000L
#define RESOURCES_CODES_TTL_MS 300000L
#define RESOURCES_BIKE_TTL_MS 10000L

/* ---- adapters to the domain ------------------------------------------------------------ */

/* Maps a failed domain read: no scope -> 403 insufficient_scope on HTTP (like tools/call);
 * no right or not visible -> not found (no existence oracle); the rest -> mcp_domain_error. */
static enum resource_status resources_domain_failure(struct mcp_ctx *ctx, enum fleet_status st,
						     struct mcp_error *err)
{
	if (st == FLEET_NOT_FOUND)
		return RESOURCE_NOT_FOUND;
	if (st == FLEET_FORBIDDEN && !(ctx->req->actor->scopes & FLEET_SCOPE_READ)) {
		ctx->missing_scope = "fleet:read";
		mcp_fail(err, MCP_INVALID_PARAMS, "Insufficient scope",
			 json_pack("{s:s}", "requiredScope", "fleet:read"));
		return RESOURCE_FAILED;
	}
	if (st == FLEET_FORBIDDEN)
		return RESOURCE_NOT_FOUND;
	mcp_domain_error(ctx, st, err);
	return RESOURCE_FAILED;
}

static enum resource_status resources_read_status_codes(struct mcp_ctx *ctx, const char *uri,
							const char *value, json_t **result,
							struct mcp_error *err)
{
	(void)value;
	struct fleet_status_code codes[STATUS_CODES_MAX];
	size_t n = 0;
	enum fleet_status st =
		status_codes_read(ctx->req->actor, codes, STATUS_CODES_MAX, &n);
	if (st != FLEET_OK)
		return resources_domain_failure(ctx, st, err);
	json_t *list = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:b}", "code", codes[i].code,
						      "label", codes[i].label, "description",
						      codes[i].description, "rentable",
						      codes[i].rentable));
	json_t *doc = json_pack("{s:o}", "statusCodes", list);
	char *text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	/* Reference data, the same for every caller who may read it. */
	*result =
		resources_text_result(uri, "application/json", text, RESOURCES_CODES_TTL_MS, false);
	free(text);
	return RESOURCE_OK;
}

/* bikaroo://fleet/bikes/{bikeId}: the same read and the same rules as get_bike_status. */
static enum resource_status resources_read_bike(struct mcp_ctx *ctx, const char *uri,
						const char *value, json_t **result,
						struct mcp_error *err)
{
	struct fleet_bike_status b;
	enum fleet_status st = bikes_status(ctx->req->actor, value, &b);
	if (st != FLEET_OK)
		return resources_domain_failure(ctx, st, err);
	json_t *doc = tools_bike_status_json(&b);
	char *text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	/* Per-user: what this caller may see. */
	*result = resources_text_result(uri, "application/json", text, RESOURCES_BIKE_TTL_MS, true);
	free(text);
	return RESOURCE_OK;
}

/* bikaroo://cases/{caseId}: a case with its reports and events (server/case_resource.c). */
static enum resource_status resources_read_case(struct mcp_ctx *ctx, const char *uri,
						const char *value, json_t **result,
						struct mcp_error *err)
{
	(void)uri;
	json_t *contents = NULL;
	if (case_resource_read(ctx, value, &contents, err) != 0) {
		if (err->code == MCP_INTERNAL_ERROR)
			return RESOURCE_FAILED;
		json_decref(err->data); /* the registry answers "Resource not found" itself */
		err->data = NULL;
		return RESOURCE_NOT_FOUND;
	}
	json_t *r = json_pack("{s:o}", "contents", contents);
	mcp_cacheable(r, RESOURCES_BIKE_TTL_MS, true); /* per user */
	*result = r;
	return RESOURCE_OK;
}

/* ---- the registry ---------------------------------------------------------------------- */

static const struct resource_desc resources_builtin[] = {
	{
		.uri = "bikaroo://fleet/status-codes",
		.name = "status-codes",
		.title = "Bike status codes",
		.description =
			"Every bike status code with its label, its meaning and whether a bike "
			"in that status can be rented (JSON).",
		.mime_type = "application/json",
		.read = resources_read_status_codes,
	},
	{
		.uri = "bikaroo://procedures/damaged-bike",
		.name = "damaged-bike-procedure",
		.title = "Procedure: damaged bike",
		.description = "What staff do when a bike is reported damaged: safety first, check "
			       "the bike, report it, follow the case (Markdown).",
		.mime_type = "text/markdown",
		.file = "damaged-bike.md",
		.ttl_ms = RESOURCES_DOC_TTL_MS,
	},
};

static const struct resource_template_desc resources_builtin_tpl[] = {
	{
		.uri_template = "bikaroo://fleet/bikes/{bikeId}",
		.name = "bike",
		.title = "Bike status",
		.description =
			"The current status of one bike in your regions (the same data as the "
			"get_bike_status tool), as JSON.",
		.mime_type = "application/json",
		.prefix = "bikaroo://fleet/bikes/",
		.var = "bikeId",
		.suffix = "",
		.read = resources_read_bike,
		.complete = completion_bike_ids,
	},
	{
		.uri_template = CASE_RESOURCE_TEMPLATE,
		.name = CASE_RESOURCE_NAME,
		.title = CASE_RESOURCE_TITLE,
		.description = CASE_RESOURCE_DESCRIPTION,
		.mime_type = "application/json",
		.prefix = CASE_RESOURCE_PREFIX,
		.var = "caseId",
		.suffix = "",
		.read = resources_read_case,
	},
};

#define RESOURCES_NBUILTIN (sizeof resources_builtin / sizeof resources_builtin[0])
#define RESOURCES_NBUILTIN_TPL (sizeof resources_builtin_tpl / sizeof resources_builtin_tpl[0])

static const struct resource_desc *resources_extra;
static size_t resources_nextra;
static const struct resource_template_desc *resources_extra_tpl;
static size_t resources_nextra_tpl;

/* Loaded documents, parallel to the rows (built-in first, then extra). */
#define RESOURCES_MAX_ROWS 64
static char *resources_docs[RESOURCES_MAX_ROWS];

void resources_set_extra(const struct resource_desc *res, size_t nres,
			 const struct resource_template_desc *tpl, size_t ntpl)
{
	resources_extra = res;
	resources_nextra = nres;
	resources_extra_tpl = tpl;
	resources_nextra_tpl = ntpl;
}

static size_t resources_count(void)
{
	size_t n = RESOURCES_NBUILTIN + resources_nextra;
	return n < RESOURCES_MAX_ROWS ? n : RESOURCES_MAX_ROWS;
}

static const struct resource_desc *resources_row(size_t i)
{
	return i < RESOURCES_NBUILTIN ? &resources_builtin[i]
				      : &resources_extra[i - RESOURCES_NBUILTIN];
}

static size_t resources_tpl_count(void)
{
	return RESOURCES_NBUILTIN_TPL + resources_nextra_tpl;
}

static const struct resource_template_desc *resources_tpl_row(size_t i)
{
	return i < RESOURCES_NBUILTIN_TPL ? &resources_builtin_tpl[i]
					  : &resources_extra_tpl[i - RESOURCES_NBUILTIN_TPL];
}

/* Reads dir/name whole, at most RESOURCES_FILE_MAX bytes, as UTF-8 text (new, or NULL). */
static char *resources_load(const char *dir, const char *name)
{
	char path[4096];
	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
		return NULL;
	FILE *f = fopen(path, "rb");
	if (!f) {
		log_error("resources: cannot open %s", path);
		return NULL;
	}
	char *buf = mem_alloc(RESOURCES_FILE_MAX + 1);
	size_t n = fread(buf, 1, RESOURCES_FILE_MAX + 1, f);
	fclose(f);
	if (n == 0 || n > RESOURCES_FILE_MAX || memchr(buf, '\0', n)) {
		log_error("resources: %s must be non-empty text of at most %zu bytes", path,
			  RESOURCES_FILE_MAX);
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	/* The text goes into JSON strings: it must be valid UTF-8. */
	json_t *probe = json_string(buf);
	if (!probe) {
		log_error("resources: %s is not valid UTF-8", path);
		free(buf);
		return NULL;
	}
	json_decref(probe);
	return buf;
}

int resources_init(const char *dir)
{
	for (size_t i = 0; i < resources_count(); i++) {
		const struct resource_desc *r = resources_row(i);
		if (!r->file)
			continue;
		free(resources_docs[i]);
		resources_docs[i] = resources_load(dir, r->file);
		if (!resources_docs[i])
			return -1;
	}
	return 0;
}

void resources_cleanup(void)
{
	for (size_t i = 0; i < RESOURCES_MAX_ROWS; i++) {
		free(resources_docs[i]);
		resources_docs[i] = NULL;
	}
}

const char *resources_document(const char *uri, const char **mime_type)
{
	for (size_t i = 0; i < resources_count(); i++) {
		const struct resource_desc *r = resources_row(i);
		if (r->file && resources_docs[i] && strcmp(r->uri, uri) == 0) {
			if (mime_type)
				*mime_type = r->mime_type;
			return resources_docs[i];
		}
	}
	return NULL;
}

const struct resource_template_desc *resources_template_find(const char *uri_template)
{
	for (size_t i = 0; i < resources_tpl_count(); i++)
		if (strcmp(resources_tpl_row(i)->uri_template, uri_template) == 0)
			return resources_tpl_row(i);
	return NULL;
}

json_t *resources_text_result(const char *uri, const char *mime_type, const char *text, long ttl_ms,
			      bool private_scope)
{
	json_t *r = json_pack("{s:[{s:s, s:s, s:s}]}", "contents", "uri", uri, "mimeType",
			      mime_type, "text", text);
	mcp_cacheable(r, ttl_ms, private_scope);
	return r;
}

/* ---- listing --------------------------------------------------------------------------- */

/* Common metadata as the request's revision knows it (title from 2025-06-18 on). */
static void resources_describe(const struct mcp_ctx *ctx, json_t *o, const char *name,
			       const char *title, const char *description, const char *mime)
{
	json_object_set_new(o, "name", json_string(name));
	if (title && mcp_version_at_least(ctx, "2025-06-18"))
		json_object_set_new(o, "title", json_string(title));
	if (description)
		json_object_set_new(o, "description", json_string(description));
	if (mime)
		json_object_set_new(o, "mimeType", json_string(mime));
}

int resources_list(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err)
{
	unsigned may = 0; /* every resource is a read: listed only for callers who may read */
	if (tools_caller_scopes(ctx, &may, err) != 0)
		return -1;
	json_t *all = json_array();
	for (size_t i = 0; (may & FLEET_SCOPE_READ) && i < resources_count(); i++) {
		const struct resource_desc *r = resources_row(i);
		json_t *o = json_pack("{s:s}", "uri", r->uri);
		resources_describe(ctx, o, r->name, r->title, r->description, r->mime_type);
		json_array_append_new(all, o);
	}
	/* With tokens the list depends on the caller: private. */
	return pager_page(ctx, params, all, "resources", RESOURCES_LIST_TTL_MS,
			  ctx->req->per_principal, result, err);
}

int resources_templates_list(struct mcp_ctx *ctx, json_t *params, json_t **result,
			     struct mcp_error *err)
{
	unsigned may = 0;
	if (tools_caller_scopes(ctx, &may, err) != 0)
		return -1;
	json_t *all = json_array();
	for (size_t i = 0; (may & FLEET_SCOPE_READ) && i < resources_tpl_count(); i++) {
		const struct resource_template_desc *t = resources_tpl_row(i);
		json_t *o = json_pack("{s:s}", "uriTemplate", t->uri_template);
		resources_describe(ctx, o, t->name, t->title, t->description, t->mime_type);
		json_array_append_new(all, o);
	}
	return pager_page(ctx, params, all, "resourceTemplates", RESOURCES_LIST_TTL_MS,
			  ctx->req->per_principal, result, err);
}

/* ---- reading --------------------------------------------------------------------------- */

/* True when s is a plausible variable value: RFC 3986 unreserved characters only, so that no
 * '/', '?', '#', '%' or dot-segment trick can reach a reader. */
static bool resources_value_ok(const char *s, size_t n)
{
	if (n == 0 || n > RESOURCES_VALUE_MAX)
		return false;
	if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '.' || c == '_' || c == '~'))
			return false;
	}
	return true;
}

/* Matches uri against t; on success copies the variable into value (cap > VALUE_MAX). */
static bool resources_match(const struct resource_template_desc *t, const char *uri, char *value,
			    size_t cap)
{
	size_t lp = strlen(t->prefix), ls = strlen(t->suffix), lu = strlen(uri);
	if (lu < lp + ls || strncmp(uri, t->prefix, lp) != 0 ||
	    strcmp(uri + lu - ls, t->suffix) != 0)
		return false;
	size_t n = lu - lp - ls;
	if (n >= cap || !resources_value_ok(uri + lp, n))
		return false;
	memcpy(value, uri + lp, n);
	value[n] = '\0';
	return true;
}

static int resources_not_found(const struct mcp_ctx *ctx, const char *uri, struct mcp_error *err)
{
	/* 2026-07-28: -32602 (MUST); 2025 clients: -32002. Never an empty contents array. */
	return mcp_fail(err, ctx->modern ? MCP_INVALID_PARAMS : MCP_LEGACY_RESOURCE_NOT_FOUND,
			"Resource not found", json_pack("{s:s}", "uri", uri));
}

int resources_read(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err)
{
	json_t *ju = json_object_get(params, "uri");
	if (!json_is_string(ju))
		return mcp_fail(err, MCP_INVALID_PARAMS, "resources/read needs a string 'uri'",
				NULL);
	const char *uri = json_string_value(ju);
	if (json_string_length(ju) > RESOURCES_URI_MAX)
		return resources_not_found(ctx, uri, err);
	enum resource_status st = RESOURCE_NOT_FOUND;
	for (size_t i = 0; i < resources_count(); i++) {
		const struct resource_desc *r = resources_row(i);
		if (strcmp(r->uri, uri) != 0)
			continue;
		if (r->read) {
			st = r->read(ctx, uri, NULL, result, err);
		} else if (resources_docs[i]) {
			*result = resources_text_result(uri, r->mime_type, resources_docs[i],
							r->ttl_ms, r->private_scope);
			st = RESOURCE_OK;
		}
		goto done;
	}
	char value[RESOURCES_VALUE_MAX + 1];
	for (size_t i = 0; i < resources_tpl_count(); i++) {
		const struct resource_template_desc *t = resources_tpl_row(i);
		if (resources_match(t, uri, value, sizeof value)) {
			st = t->read(ctx, uri, value, result, err);
			goto done;
		}
	}
done:
	if (st == RESOURCE_NOT_FOUND)
		return resources_not_found(ctx, uri, err);
	return st == RESOURCE_OK ? 0 : -1;
}

/* ---- subscriptions (2025-era) ------------------------------------------------------------ */

static const struct mcp_subscriptions *resources_default_subs;

void resources_set_default_subscriptions(const struct mcp_subscriptions *subs)
{
	resources_default_subs = subs;
}

static const struct mcp_subscriptions *resources_subs(const struct mcp_ctx *ctx)
{
	return ctx->req->subscriptions ? ctx->req->subscriptions : resources_default_subs;
}

bool resources_subscribe_offered(const struct mcp_ctx *ctx)
{
	return ctx->modern ? ctx->req->listen != NULL : resources_subs(ctx) != NULL;
}

static int resources_not_offered(const char *method, struct mcp_error *err)
{
	return mcp_fail(err, MCP_METHOD_NOT_FOUND, "Method not found",
			json_pack("{s:s}", "method", method));
}

int resources_subscribe(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err)
{
	const struct mcp_subscriptions *subs = resources_subs(ctx);
	if (!subs)
		return resources_not_offered("resources/subscribe", err);
	json_t *read = NULL;
	if (resources_read(ctx, params, &read, err) != 0)
		return -1;
	json_decref(read);
	if (subs->change(subs->ctx, json_string_value(json_object_get(params, "uri")), true) != 0)
		return mcp_fail(err, MCP_INVALID_PARAMS,
				"Too many subscriptions on this connection", NULL);
	*result = json_object();
	return 0;
}

int resources_unsubscribe(struct mcp_ctx *ctx, json_t *params, json_t **result,
			  struct mcp_error *err)
{
	const struct mcp_subscriptions *subs = resources_subs(ctx);
	if (!subs)
		return resources_not_offered("resources/unsubscribe", err);
	const char *uri = json_string_value(json_object_get(params, "uri"));
	if (!uri)
		return mcp_fail(err, MCP_INVALID_PARAMS,
				"resources/unsubscribe needs a string 'uri'", NULL);
	subs->change(subs->ctx, uri, false); /* not subscribed: the same empty result */
	*result = json_object();
	return 0;
}

int resources_listen(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err)
{
	(void)result;
	const struct mcp_listen *listen = ctx->req->listen;
	if (listen && ctx->req->transport == MCP_TRANSPORT_HTTP && !ctx->req->emit) {
		/* No emitter: the request's Accept refuses text/event-stream, the only answer. */
		ctx->http_status = 406;
		return mcp_fail(
			err, MCP_INVALID_REQUEST,
			"Not Acceptable: subscriptions/listen answers with an SSE stream; Accept "
			"must admit text/event-stream",
			NULL);
	}
	if (!listen)
		return resources_not_offered("subscriptions/listen", err);
	json_t *filter = json_object_get(params, "notifications");
	json_t *wanted = json_object_get(filter, "resourceSubscriptions");
	if ((filter && !json_is_object(filter)) || (wanted && !json_is_array(wanted)))
		return mcp_fail(err, MCP_INVALID_PARAMS,
				"notifications must be an object, resourceSubscriptions an array",
				NULL);
	if (json_array_size(wanted) > URISET_MAX)
		return mcp_fail(err, MCP_INVALID_PARAMS, "Too many resourceSubscriptions",
				json_pack("{s:i}", "max", URISET_MAX));
	const char *uris[URISET_MAX];
	size_t n = 0;
	json_t *honoured = json_array();
	size_t i;
	json_t *u;
	json_array_foreach (wanted, i, u) {
		if (!json_is_string(u))
			continue;
		json_t *probe = json_pack("{s:O}", "uri", u), *read = NULL;
		struct mcp_error ignored = {0};
		int rc = resources_read(ctx, probe, &read, &ignored);
		json_decref(probe);
		json_decref(read);
		json_decref(ignored.data);
		if (ctx->unavailable) {
			json_decref(honoured);
			return mcp_unavailable(ctx, err);
		}
		bool seen = false;
		for (size_t k = 0; k < n && !seen; k++)
			seen = strcmp(uris[k], json_string_value(u)) == 0;
		if (rc == 0 && !seen) {
			json_array_append(honoured, u);
			uris[n++] = json_string_value(u);
		}
	}
	json_t *ack = json_pack("{s:s, s:s, s:{s:{s:O}, s:{s:o}}}", "jsonrpc", "2.0", "method",
				"notifications/subscriptions/acknowledged", "params", "_meta",
				"io.modelcontextprotocol/subscriptionId", ctx->id, "notifications",
				"resourceSubscriptions", honoured);
	if (n == 0)
		json_object_del(json_object_get(json_object_get(ack, "params"), "notifications"),
				"resourceSubscriptions");
	int rc = listen->open(listen->ctx, ctx->id, ack, uris, n);
	json_decref(ack);
	if (rc != 0)
		return mcp_fail(err, MCP_INTERNAL_ERROR, "Subscription limit reached", NULL);
	ctx->deferred = true;
	return 0;
}
