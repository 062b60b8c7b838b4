/* Resources: the generic registry over a server description's resource and template tables:
 * listing, URI matching, documents, reading, and subscriptions of both eras. No file-system
 * path is ever derived from a URI: documents are loaded at start from the file names written in
 * the table (with the shared parts they include from their folder), and a URI only selects a
 * row. */
#include "resources.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "budget.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "subscriptions.h"
#include "pager.h"
#include "service.h"
#include "tasks.h"

#define RESOURCES_LIST_TTL_MS 3600000L

/* Documents loaded at start, parallel to the server's resource rows (NULL: not a file row). */
struct resources_loaded {
	char **docs;
};

/* Reads dir/name whole, at most RESOURCES_FILE_MAX bytes, as UTF-8 text (new, or NULL). */
static char *resources_read_text(const char *dir, const char *name)
{
	char path[4096];
	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
		return NULL;
	FILE *f = fopen(path, "rb");
	if (!f) {
		log_error("resources: cannot open %s: %s", path, strerror(errno));
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

/* A document takes shared parts from files of its folder: each directive
 * <!--#include file="NAME" --> (the form of server-side includes) is replaced by the text of
 * the file NAME at load, so that what several documents share is written once and each is
 * still served as one whole document. NAME is a plain file name (a letter or digit, then
 * letters, digits, '.', '_' or '-': no path, so nothing outside the folder); a part includes
 * nothing itself; the assembled document stays within RESOURCES_FILE_MAX. */
#define RESOURCES_INCLUDE_OPEN "<!--#include file=\""
#define RESOURCES_INCLUDE_CLOSE "\" -->"
#define RESOURCES_INCLUDE_NAME_MAX 64

/* The name of the directive at p (RESOURCES_INCLUDE_OPEN), into name; the directive's length,
 * or 0 when it is not a well-formed one. */
static size_t resources_include_name(const char *p, char name[RESOURCES_INCLUDE_NAME_MAX + 1])
{
	const char *s = p + strlen(RESOURCES_INCLUDE_OPEN);
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-");
	if (n == 0 || n > RESOURCES_INCLUDE_NAME_MAX || s[0] == '.' || s[0] == '-' || s[0] == '_' ||
	    strncmp(s + n, RESOURCES_INCLUDE_CLOSE, strlen(RESOURCES_INCLUDE_CLOSE)) != 0)
		return 0;
	memcpy(name, s, n);
	name[n] = '\0';
	return (size_t)(s - p) + n + strlen(RESOURCES_INCLUDE_CLOSE);
}

/* Appends n bytes of text to *doc (*len bytes so far, kept NUL-terminated); false when the
 * document would pass RESOURCES_FILE_MAX. */
static bool resources_append(char **doc, size_t *len, const char *text, size_t n)
{
	if (*len + n > RESOURCES_FILE_MAX)
		return false;
	*doc = mem_realloc(*doc, *len + n + 1);
	memcpy(*doc + *len, text, n);
	*len += n;
	(*doc)[*len] = '\0';
	return true;
}

/* dir/name's document with its parts in place (new, or NULL: logged, naming the document, the
 * part and why). */
static char *resources_load_file(const char *dir, const char *name)
{
	char *text = resources_read_text(dir, name);
	if (!text || !strstr(text, RESOURCES_INCLUDE_OPEN))
		return text;
	char *doc = NULL, *part = NULL, *result = NULL;
	size_t len = 0;
	const char *rest = text, *at;
	while ((at = strstr(rest, RESOURCES_INCLUDE_OPEN))) {
		char part_name[RESOURCES_INCLUDE_NAME_MAX + 1];
		size_t n = resources_include_name(at, part_name);
		if (n == 0) {
			log_error("resources: %s/%s: an include is <!--#include file=\"NAME\" --> "
				  "with "
				  "NAME a file of the same folder (letters, digits, '.', '_', '-')",
				  dir, name);
			goto out;
		}
		part = resources_read_text(dir, part_name);
		if (!part)
			goto out;
		if (strstr(part, RESOURCES_INCLUDE_OPEN)) {
			log_error(
				"resources: %s/%s includes %s, which includes another part: parts "
				"include nothing",
				dir, name, part_name);
			goto out;
		}
		if (!resources_append(&doc, &len, rest, (size_t)(at - rest)) ||
		    !resources_append(&doc, &len, part, strlen(part)))
			break;
		free(part);
		part = NULL;
		rest = at + n;
	}
	if (at || !resources_append(&doc, &len, rest, strlen(rest))) {
		log_error("resources: %s/%s with its parts is over %zu bytes", dir, name,
			  RESOURCES_FILE_MAX);
		goto out;
	}
	result = doc;
	doc = NULL;
out:
	free(part);
	free(doc);
	free(text);
	return result;
}

int resources_load(struct mcp_service *svc, const char *dir)
{
	const struct mcp_server *s = svc->server;
	struct resources_loaded *l = mem_calloc(1, sizeof *l);
	svc->resources = l;
	l->docs = mem_calloc(s->nresources + 1, sizeof *l->docs);
	for (size_t i = 0; i < s->nresources; i++) {
		const struct resource_desc *r = &s->resources[i];
		if (!r->file)
			continue;
		l->docs[i] = resources_load_file(dir, r->file);
		if (!l->docs[i])
			return -1;
	}
	return 0;
}

void resources_unload(struct mcp_service *svc)
{
	struct resources_loaded *l = svc->resources;
	if (!l)
		return;
	for (size_t i = 0; i < svc->server->nresources; i++)
		free(l->docs[i]);
	free(l->docs);
	free(l);
	svc->resources = NULL;
}

const char *resources_document(const struct mcp_service *svc, const char *uri,
			       const char **mime_type)
{
	const struct mcp_server *s = svc->server;
	for (size_t i = 0; i < s->nresources; i++) {
		const struct resource_desc *r = &s->resources[i];
		const char *doc = svc->resources->docs[i];
		if (r->file && doc && strcmp(r->uri, uri) == 0) {
			if (mime_type)
				*mime_type = r->mime_type;
			return doc;
		}
	}
	return NULL;
}

const struct resource_template_desc *resources_template_find(const struct mcp_server *s,
							     const char *uri_template)
{
	for (size_t i = 0; i < s->ntemplates; i++)
		if (strcmp(s->templates[i].uri_template, uri_template) == 0)
			return &s->templates[i];
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
	struct mcp_caller who;
	if (mcp_caller(ctx, &who, err) != 0)
		return -1;
	const struct mcp_server *s = ctx->server;
	json_t *all = json_array();
	for (size_t i = 0; i < s->nresources; i++) {
		const struct resource_desc *r = &s->resources[i];
		if (!MCP_MAY(&who, r) || !mcp_ext_offered(ctx, r->ext))
			continue;
		json_t *o = json_pack("{s:s}", "uri", r->uri);
		resources_describe(ctx, o, r->name, r->title, r->description, r->mime_type);
		mcp_describe_governance(ctx, ctx->server->governance_key, o, r->governance);
		mcp_describe_ext(ctx, o, r->ext);
		json_array_append_new(all, o);
	}
	/* With tokens the list depends on the caller: private. */
	return pager_page(ctx, params, all, "resources", RESOURCES_LIST_TTL_MS,
			  ctx->req->per_principal, result, err);
}

int resources_templates_list(struct mcp_ctx *ctx, json_t *params, json_t **result,
			     struct mcp_error *err)
{
	struct mcp_caller who;
	if (mcp_caller(ctx, &who, err) != 0)
		return -1;
	const struct mcp_server *s = ctx->server;
	json_t *all = json_array();
	for (size_t i = 0; i < s->ntemplates; i++) {
		const struct resource_template_desc *t = &s->templates[i];
		if (!MCP_MAY(&who, t) || !mcp_ext_offered(ctx, t->ext))
			continue;
		json_t *o = json_pack("{s:s}", "uriTemplate", t->uri_template);
		resources_describe(ctx, o, t->name, t->title, t->description, t->mime_type);
		mcp_describe_governance(ctx, ctx->server->governance_key, o, t->governance);
		mcp_describe_ext(ctx, o, t->ext);
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

/* Whether the caller may read document r (its scope, roles and people_only, as the
 * application's rights state them): into *allowed; -1 with err when it cannot say. */
static int resources_rights(struct mcp_ctx *ctx, const struct resource_desc *r, bool *allowed,
			    struct mcp_error *err)
{
	struct mcp_caller who;
	*allowed = !r->scope && !r->roles && !r->people_only;
	if (*allowed)
		return 0;
	if (mcp_caller(ctx, &who, err) != 0)
		return -1;
	*allowed = MCP_MAY(&who, r);
	return 0;
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
	const struct mcp_server *s = ctx->server;
	enum resource_status st = RESOURCE_NOT_FOUND;
	for (size_t i = 0; i < s->nresources; i++) {
		const struct resource_desc *r = &s->resources[i];
		const char *doc = ctx->service->resources->docs[i];
		if (strcmp(r->uri, uri) != 0 || !mcp_ext_offered(ctx, r->ext))
			continue;
		ctx->label = r->uri;
		if (mcp_require_scope(ctx, r->scope, r->scope_name, err) != 0)
			return -1;
		bool allowed = true;
		if (r->read) {
			/* It reads the business: the read budget pays, its read judges the rights.
			 */
			if (mcp_budget_take(ctx, false, "resources/read", err) != 0)
				return -1;
			ctx->spec = r->spec;
			st = r->read(ctx, uri, NULL, result, err);
		} else if (resources_rights(ctx, r, &allowed, err) != 0) {
			return -1;
		} else if (!allowed) {
			st = RESOURCE_NOT_FOUND; /* no one the database knows: nothing */
		} else if (doc) {
			*result = resources_text_result(uri, r->mime_type, doc, r->ttl_ms,
							r->private_scope);
			/* The extension's _meta (rendering hints) goes with the content too. */
			json_t *content = json_array_get(json_object_get(*result, "contents"), 0);
			mcp_describe_ext(ctx, content, r->ext);
			st = RESOURCE_OK;
		}
		goto done;
	}
	char value[RESOURCES_VALUE_MAX + 1];
	for (size_t i = 0; i < s->ntemplates; i++) {
		const struct resource_template_desc *t = &s->templates[i];
		if (mcp_ext_offered(ctx, t->ext) && resources_match(t, uri, value, sizeof value)) {
			ctx->label = t->uri_template; /* never the URI: it names an object */
			if (mcp_require_scope(ctx, t->scope, t->scope_name, err) != 0) {
				/* Refused before its read: the read's audit row all the same. */
				ctx->outcome = "denied";
				if (s->audit) {
					json_t *a =
						json_pack("{s:s, s:s}", "uri", uri, "value", value);
					s->audit(ctx, t->uri_template, a, "denied", t->scope_name);
					json_decref(a);
				}
				return -1;
			}
			if (mcp_budget_take(ctx, false, "resources/read", err) != 0)
				return -1;
			ctx->spec = t->spec;
			st = t->read(ctx, uri, value, result, err);
			goto done;
		}
	}
done:
	if (st == RESOURCE_NOT_FOUND) {
		ctx->outcome = "not_found";
		return resources_not_found(ctx, uri, err);
	}
	return st == RESOURCE_OK ? 0 : -1;
}

/* ---- subscriptions (2025-era) ------------------------------------------------------------ */

static const struct mcp_subscriptions *resources_subs(const struct mcp_ctx *ctx)
{
	return ctx->req->subscriptions ? ctx->req->subscriptions
				       : ctx->server->default_subscriptions;
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
	if (subs->change(subs->ctx, ctx->req->actor,
			 json_string_value(json_object_get(params, "uri")), true) != 0)
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
	subs->change(subs->ctx, ctx->req->actor, uri, false); /* not subscribed: the same {} */
	*result = json_object();
	return 0;
}

/* Seconds a refused listen is asked to wait. */
#define RESOURCES_LISTEN_RETRY_S 5

int resources_listen(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err)
{
	(void)result;
	const struct mcp_listen *listen = ctx->req->listen;
	if (listen && ctx->req->transport == MCP_TRANSPORT_HTTP && !ctx->req->emit) {
		/* No emitter: the request's Accept refuses text/event-stream, the only answer. */
		err->http_status = 406;
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
	if (json_array_size(wanted) > RESOURCES_MAX_SUBSCRIPTIONS)
		return mcp_fail(err, MCP_INVALID_PARAMS, "Too many resourceSubscriptions",
				json_pack("{s:i}", "max", RESOURCES_MAX_SUBSCRIPTIONS));
	json_t *tasks = NULL; /* the task ids honoured: the ack names them, the transport follows */
	if (tasks_listen(ctx, filter, &tasks, err) != 0)
		return -1;
	const char *uris[RESOURCES_MAX_SUBSCRIPTIONS];
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
		if (ignored.unavailable) {
			json_decref(honoured);
			json_decref(tasks);
			return mcp_unavailable(err, ignored.message);
		}
		if (ignored.code == MCP_RATE_LIMITED || ignored.missing_scope) {
			/* Each URI honoured is a read: past the budget, or without the scope, the
			 * listen is refused as a read would be. */
			json_decref(honoured);
			json_decref(tasks);
			*err = ignored;
			err->data = ignored.code == MCP_RATE_LIMITED
					    ? json_pack("{s:I}", "retryAfterSeconds",
							(json_int_t)ignored.retry_after)
					    : json_pack("{s:s}", "requiredScope",
							ignored.missing_scope);
			return -1;
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
	json_t *acked = json_object_get(json_object_get(ack, "params"), "notifications");
	if (n == 0)
		json_object_del(acked, "resourceSubscriptions");
	if (json_array_size(tasks))
		json_object_set(acked, "taskIds", tasks);
	json_decref(tasks);
	enum mcp_listen_status ls =
		listen->open(listen->ctx, ctx->req->actor, ctx->id, ack, uris, n);
	json_decref(ack);
	const char *reason[] = {ls == MCP_LISTEN_SHARE_SPENT ? "listen_share" : "listen_full"};
	if (ls != MCP_LISTEN_OK)
		metrics_add(&metrics_rate_limited, reason, 1);
	if (ls == MCP_LISTEN_SHARE_SPENT)
		return mcp_limited_as(err, 429,
				      "Too many listen streams open for this caller: end one, or "
				      "retry later",
				      RESOURCES_LISTEN_RETRY_S);
	if (ls != MCP_LISTEN_OK)
		return mcp_limited_as(err, 503, "The server holds all the listen streams it can",
				      RESOURCES_LISTEN_RETRY_S);
	return MCP_DEFERRED;
}
