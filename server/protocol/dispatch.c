/* The MCP protocol core's entry points: loading a server description, and one path for every
 * message of every transport and both eras. Order of checks follows the spec's transport
 * section A.5 (first failure decides). */
#include "dispatch.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "answers.h"
#include "common/b64.h"
#include "common/jsonw.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/trace.h"
#include "methods.h"
#include "mrtr.h"
#include "notify.h"
#include "observe.h"
#include "prompts.h"
#include "resources.h"
#include "service.h"
#include "tasks.h"
#include "tools.h"

#define MCP_META_VERSION "io.modelcontextprotocol/protocolVersion"
#define MCP_META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define MCP_META_INFO "io.modelcontextprotocol/clientInfo"
#define MCP_META_LOGLEVEL "io.modelcontextprotocol/logLevel"
#define MCP_META_SERVERINFO "io.modelcontextprotocol/serverInfo"

/* ---- response building ------------------------------------------------------------ */

static char *mcp_dump(json_t *msg)
{
	char *s = jsonw_dump(msg);
	json_decref(msg);
	return s;
}

static void mcp_error_out(struct mcp_response *out, int status, json_t *id, int code,
			  const char *message, json_t *data)
{
	json_t *e = json_pack("{s:i, s:s}", "code", code, "message", message);
	if (data)
		json_object_set_new(e, "data", data);
	json_t *msg = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(),
				"error", e);
	out->op.rpc_code = code;
	trace_fail(out->span, message);
	out->http_status = status;
	free(out->body);
	out->body = mcp_dump(msg);
}

/* The response around a result's text (ntext bytes): the bytes mcp_result_out() writes for its
 * tree, copied in runs (a kept tools/list is some 14 KiB: printf's copy was a third of its CPU). */
static void mcp_text_out(struct mcp_response *out, json_t *id, const char *text, size_t ntext)
{
	char *idtext = jsonw_dump(id);
	const char *part[] = {"{\"jsonrpc\":\"2.0\",\"id\":", idtext, ",\"result\":", text, "}"};
	size_t len[] = {strlen(part[0]), strlen(idtext), strlen(part[2]), ntext, 1}, all = 1;
	for (size_t i = 0; i < 5; i++)
		all += len[i];
	char *b = mem_alloc(all);
	for (size_t i = 0, at = 0; i < 5; at += len[i++])
		memcpy(b + at, part[i], len[i]);
	b[all - 1] = '\0';
	free(idtext);
	out->http_status = 200;
	out->body = b;
}

/* Writes the response of result (stolen); kept as text first when its handler named a key. */
static void mcp_result_out(struct mcp_ctx *ctx, struct mcp_response *out, json_t *result)
{
	out->http_status = 200;
	if (!ctx->answer->key[0]) {
		out->body = mcp_dump(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", ctx->id,
					       "result", result));
		return;
	}
	char *text = mcp_dump(result);
	answers_keep(ctx->service->answers, ctx->answer->key, text);
	mcp_text_out(out, ctx->id, text, strlen(text));
	free(text);
}

/* Adds what every modern result carries, or strips what legacy clients must not see. */
static void mcp_shape_result(const struct mcp_ctx *ctx, json_t *result)
{
	if (!ctx->modern) {
		json_object_del(result, "resultType");
		json_object_del(result, "ttlMs");
		json_object_del(result, "cacheScope");
		return;
	}
	if (!json_object_get(result, "resultType"))
		json_object_set_new(result, "resultType", json_string("complete"));
	json_t *meta = json_object_get(result, "_meta");
	if (!json_is_object(meta)) {
		meta = json_object();
		json_object_set_new(result, "_meta", meta);
	}
	json_object_set_new(meta, MCP_META_SERVERINFO,
			    json_pack("{s:s, s:s}", "name", ctx->server->name, "version",
				      ctx->server->version));
}

void answers_shape_text(const struct mcp_ctx *ctx, struct mem_buf *b)
{
	static const char info[] =
		",\"resultType\":\"complete\",\"_meta\":{\"" MCP_META_SERVERINFO "\":{\"name\":";
	if (ctx->modern) { /* as mcp_shape_result adds them to a result without either */
		mem_buf_put(b, info, sizeof info - 1);
		jsonw_string(b, ctx->server->name, strlen(ctx->server->name));
		mem_buf_put(b, ",\"version\":", 11);
		jsonw_string(b, ctx->server->version, strlen(ctx->server->version));
		mem_buf_put(b, "}}", 2);
	}
	mem_buf_put(b, "}", 1);
}

/* ---- header helpers ----------------------------------------------------------------- */

/* Trims SP/HTAB around a header value into buf; decodes the =?base64?...?= sentinel.
 * Returns 0, or -1 for an invalid sentinel. */
static int mcp_header_value(const char *raw, char *buf, size_t cap)
{
	while (*raw == ' ' || *raw == '\t')
		raw++;
	size_t n = strlen(raw);
	while (n && (raw[n - 1] == ' ' || raw[n - 1] == '\t'))
		n--;
	if (n >= 12 && strncmp(raw, "=?base64?", 9) == 0 && strncmp(raw + n - 2, "?=", 2) == 0) {
		size_t dlen = 0;
		unsigned char *d = b64_decode(raw + 9, n - 11, false, &dlen);
		if (!d || dlen >= cap || memchr(d, '\0', dlen)) {
			free(d);
			return -1;
		}
		memcpy(buf, d, dlen + 1);
		free(d);
		return 0;
	}
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, raw, n);
	buf[n] = '\0';
	return 0;
}

static bool mcp_is_modern_version(const char *v)
{
	return v && strcmp(v, MCP_VERSION_MODERN) >= 0 && strncmp(v, "20", 2) == 0;
}

static bool mcp_known_log_level(const char *s)
{
	static const char *const levels[] = {"debug", "info",     "notice", "warning",
					     "error", "critical", "alert",  "emergency"};
	for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
		if (strcmp(s, levels[i]) == 0)
			return true;
	return false;
}

/* Validates the 2026-07-28 envelope; returns NULL or the static reason. */
static const char *mcp_envelope_problem(json_t *meta)
{
	if (!json_is_object(meta))
		return "params._meta must be an object carrying the request envelope";
	if (!json_is_string(json_object_get(meta, MCP_META_VERSION)))
		return "_meta io.modelcontextprotocol/protocolVersion must be a string";
	if (!json_is_object(json_object_get(meta, MCP_META_CAPS)))
		return "_meta io.modelcontextprotocol/clientCapabilities is required and must be "
		       "an object";
	json_t *info = json_object_get(meta, MCP_META_INFO);
	if (info && !json_is_object(info))
		return "_meta io.modelcontextprotocol/clientInfo must be an object";
	json_t *lvl = json_object_get(meta, MCP_META_LOGLEVEL);
	if (lvl && (!json_is_string(lvl) || !mcp_known_log_level(json_string_value(lvl))))
		return "_meta io.modelcontextprotocol/logLevel must be an RFC 5424 level name";
	json_t *pt = json_object_get(meta, "progressToken");
	if (pt && !json_is_string(pt) && !json_is_integer(pt))
		return "_meta progressToken must be a string or an integer";
	return NULL;
}

static json_t *mcp_supported_versions(void)
{
	return json_pack("[s]", MCP_VERSION_MODERN);
}

static json_t *mcp_mismatch(const char *header, const char *hv, const char *bv)
{
	return json_pack("{s:{s:s, s:s, s:s}}", "mismatch", "header", header, "headerValue", hv,
			 "body", bv);
}

/* ---- the entry point ---------------------------------------------------------------- */

static bool mcp_valid_id(json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

static bool mcp_has_envelope(json_t *msg)
{
	json_t *meta = json_object_get(json_object_get(msg, "params"), "_meta");
	return json_object_get(meta, MCP_META_VERSION) != NULL;
}

/* Dispatches a classified request to its handler and writes the response. */
static void mcp_dispatch(struct mcp_ctx *ctx, const struct mcp_method *m, json_t *params,
			 struct mcp_response *out)
{
	json_t *result = NULL;
	struct mcp_error err = {0};
	json_t *empty = NULL;
	if (ctx->req->local_only && !m->local) {
		out->not_local = true; /* before anything is done */
		return;
	}
	if (!params)
		params = empty = json_object();
	struct notify_state notify;
	struct mrtr_state mrtr;
	ctx->method = m->name;
	ctx->params = params;
	struct mcp_answer answer = {.key = ""};
	ctx->answer = &answer;
	ctx->notify = &notify;
	ctx->mrtr = &mrtr;
	notify_prepare(ctx, params);
	int rc = mrtr_prepare(ctx, params, &err);
	if (rc == 0)
		rc = m->fn(ctx, params, &result, &err);
	if (rc == 0 && !answer.text &&
	    (mrtr_check_result(ctx, result, &err) != 0 ||
	     tasks_check_result(ctx, result, &err) != 0)) {
		json_decref(result);
		rc = -1;
	}
	bool http = ctx->req->transport == MCP_TRANSPORT_HTTP;
	out->method = m->name;
	out->op.version = ctx->version;
	out->name = ctx->label;
	out->outcome = ctx->outcome         ? ctx->outcome
		       : rc == 0            ? "ok"
		       : rc == MCP_DEFERRED ? "stream"
		       : err.unavailable    ? "unavailable"
					    : "error";
	if (rc == MCP_DEFERRED) {
		out->http_status = 200; /* the stream is the answer; its end, the transport's */
	} else if (rc == 0 && answer.text) {
		/* shaped when kept or written */
		mcp_text_out(out, ctx->id, answer.text, answer.len);
	} else if (rc == 0) {
		out->op.tool_error = json_is_true(json_object_get(result, "isError"));
		mcp_shape_result(ctx, result);
		mcp_result_out(ctx, out, result);
	} else {
		int status = 200;
		if (err.http_status && http) {
			status = err.http_status;
			out->retry_after = err.retry_after;
		} else if (err.unavailable && http) {
			status = 503;
			out->unavailable = true;
		} else if (err.missing_scope && http) {
			status = 403;
			out->missing_scope = err.missing_scope;
		} else if (err.code == MCP_MISSING_CAPABILITY && ctx->modern && http) {
			status = 400; /* the spec's MUST for -32021 */
		} else if (err.code == MCP_METHOD_NOT_FOUND && ctx->modern && http) {
			status = 404; /* a method this transport does not offer */
		}
		mcp_error_out(out, status, ctx->id, err.code, err.message, err.data);
	}
	mrtr_finish(ctx);
	ctx->notify = NULL;
	ctx->mrtr = NULL;
	ctx->answer = NULL;
	free(answer.written.p);
	json_decref(empty);
}

static void mcp_handle_modern(struct mcp_ctx *ctx, const char *method, json_t *params,
			      struct mcp_response *out)
{
	const struct mcp_request *req = ctx->req;
	ctx->modern = true; /* for errors and logs: the body claims the modern era */
	json_t *meta = json_object_get(params, "_meta");
	const char *problem = mcp_envelope_problem(meta);
	if (problem) {
		mcp_error_out(out, 400, ctx->id, MCP_INVALID_PARAMS, problem, NULL);
		return;
	}
	const char *v = json_string_value(json_object_get(meta, MCP_META_VERSION));
	bool http = req->transport == MCP_TRANSPORT_HTTP;
	char hv[512];
	if (http && req->h_protocol_version) {
		if (mcp_header_value(req->h_protocol_version, hv, sizeof hv) != 0 ||
		    strcmp(hv, v) != 0) {
			mcp_error_out(
				out, 400, ctx->id, MCP_HEADER_MISMATCH,
				"Header mismatch: MCP-Protocol-Version does not match the body",
				mcp_mismatch("MCP-Protocol-Version", hv, v));
			return;
		}
	}
	if (http && req->h_method) {
		if (mcp_header_value(req->h_method, hv, sizeof hv) != 0 ||
		    strcmp(hv, method) != 0) {
			mcp_error_out(out, 400, ctx->id, MCP_HEADER_MISMATCH,
				      "Header mismatch: Mcp-Method does not match the body method",
				      mcp_mismatch("Mcp-Method", hv, method));
			return;
		}
	}
	if (strcmp(v, MCP_VERSION_MODERN) != 0) {
		mcp_error_out(out, 400, ctx->id, MCP_UNSUPPORTED_VERSION,
			      "Unsupported protocol version",
			      json_pack("{s:o, s:s}", "supported", mcp_supported_versions(),
					"requested", v));
		return;
	}
	if (http && !req->h_protocol_version) {
		mcp_error_out(out, 400, ctx->id, MCP_HEADER_MISMATCH,
			      "Missing required MCP-Protocol-Version header", NULL);
		return;
	}
	if (http && !req->h_method) {
		mcp_error_out(out, 400, ctx->id, MCP_HEADER_MISMATCH,
			      "Missing required Mcp-Method header", NULL);
		return;
	}
	const struct mcp_method *m = methods_find(ctx->server, method, MCP_ERA_MODERN);
	if (!m) {
		mcp_error_out(out, http ? 404 : 200, ctx->id, MCP_METHOD_NOT_FOUND,
			      "Method not found", json_pack("{s:s}", "method", method));
		return;
	}
	if (http && m->name_param) {
		const char *bv = json_string_value(json_object_get(params, m->name_param));
		if (bv && !req->h_name) {
			mcp_error_out(out, 400, ctx->id, MCP_HEADER_MISMATCH,
				      "Missing required Mcp-Name header", NULL);
			return;
		}
		if (req->h_name) {
			if (mcp_header_value(req->h_name, hv, sizeof hv) != 0) {
				mcp_error_out(
					out, 400, ctx->id, MCP_HEADER_MISMATCH,
					"Header mismatch: Mcp-Name has an invalid base64 value",
					NULL);
				return;
			}
			if (!bv || strcmp(hv, bv) != 0) {
				mcp_error_out(out, 400, ctx->id, MCP_HEADER_MISMATCH,
					      "Header mismatch: Mcp-Name does not match the body",
					      mcp_mismatch("Mcp-Name", hv, bv ? bv : ""));
				return;
			}
		}
	}
	ctx->version = MCP_VERSION_MODERN;
	ctx->client_caps = json_object_get(meta, MCP_META_CAPS);
	json_t *ext = json_object_get(ctx->client_caps, "extensions");
	if (json_is_object(ext))
		ctx->client_extensions = ext;
	mcp_dispatch(ctx, m, params, out);
}

static void mcp_handle_legacy(struct mcp_ctx *ctx, const char *method, json_t *params,
			      struct mcp_response *out)
{
	const struct mcp_request *req = ctx->req;
	const char *v = req->session_version ? req->session_version : "2025-03-26";
	char hv[64];
	if (req->transport == MCP_TRANSPORT_HTTP && req->h_protocol_version &&
	    strcmp(method, "initialize") != 0) {
		if (mcp_header_value(req->h_protocol_version, hv, sizeof hv) != 0)
			hv[0] = '\0';
		v = NULL;
		for (size_t i = 0; mcp_legacy_version(i); i++)
			if (strcmp(hv, mcp_legacy_version(i)) == 0)
				v = mcp_legacy_version(i);
		if (!v) {
			mcp_error_out(out, 400, ctx->id, MCP_INVALID_REQUEST,
				      "Unsupported MCP-Protocol-Version header",
				      json_pack("{s:[s,s,s]}", "supported", mcp_legacy_version(0),
						mcp_legacy_version(1), mcp_legacy_version(2)));
			return;
		}
	}
	ctx->modern = false;
	ctx->version = v;
	json_t *caps = json_object_get(params, "capabilities");
	ctx->client_caps = json_is_object(caps) ? caps : NULL;
	/* initialize declares them; later requests of a connection that kept them, too. */
	json_t *ext = strcmp(method, "initialize") == 0 ? json_object_get(caps, "extensions")
							: req->session_extensions;
	if (json_is_object(ext))
		ctx->client_extensions = ext;
	const struct mcp_method *m = methods_find(ctx->server, method, MCP_ERA_LEGACY);
	if (!m) {
		mcp_error_out(out, 200, ctx->id, MCP_METHOD_NOT_FOUND, "Method not found",
			      json_pack("{s:s}", "method", method));
		return;
	}
	mcp_dispatch(ctx, m, params, out);
}

void mcp_handle(const struct mcp_service *svc, const struct mcp_request *req,
		struct mcp_response *out)
{
	memset(out, 0, sizeof *out);
	struct mcp_ctx ctx = {.server = svc->server,
			      .service = svc,
			      .req = req,
			      .version = "2025-03-26",
			      .trace_id = out->trace_id};
	snprintf(out->trace_id, sizeof out->trace_id, "%s", req->trace_id ? req->trace_id : "");
	struct trace_span *prev = NULL;
	json_t *empty_caps = json_object();
	ctx.client_caps = empty_caps;
	ctx.client_extensions = empty_caps;
	json_t *msg = mcp_parse_strict(req->body, req->body_len);
	const char *method = "(none)";
	if (!msg) {
		mcp_error_out(out, 400, NULL, MCP_PARSE_ERROR,
			      "Parse error: the body is not valid JSON (UTF-8, no duplicate keys)",
			      NULL);
		goto out;
	}
	if (json_is_array(msg)) {
		size_t i;
		json_t *e;
		json_array_foreach (msg, i, e)
			if (mcp_has_envelope(e))
				break;
		/* 2025-03-26 batches are not supported (removed in 2025-06-18): docs/using.md. */
		mcp_error_out(out, 400, NULL, MCP_INVALID_REQUEST,
			      i < json_array_size(msg)
				      ? "Invalid Request: batches are not allowed in 2026-07-28"
				      : "Invalid Request: JSON-RPC batches are not supported",
			      NULL);
		goto out;
	}
	json_t *id = json_object_get(msg, "id");
	json_t *jm = json_object_get(msg, "method");
	json_t *params = json_object_get(msg, "params");
	json_t *good_id = mcp_valid_id(id) ? id : NULL;
	if (!json_is_object(msg) || !json_is_string(json_object_get(msg, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0") != 0 ||
	    !json_is_string(jm) || (id && !good_id) || (params && !json_is_object(params))) {
		mcp_error_out(out, 400, good_id, MCP_INVALID_REQUEST,
			      "Invalid Request: expected one JSON-RPC 2.0 request object", NULL);
		goto out;
	}
	method = json_string_value(jm);
	ctx.id = good_id;
	out->op.method = observe_method(&ctx, method);
	out->span = observe_begin(&ctx, msg, out->op.method, out->trace_id);
	prev = trace_swap(out->span);
	bool enveloped = mcp_has_envelope(msg);
	bool header_modern = req->transport == MCP_TRANSPORT_HTTP &&
			     mcp_is_modern_version(req->h_protocol_version);
	if (!id) {
		/* Notifications: never answered. Cancellation is honoured by the stdio transport.
		 */
		out->http_status = 202;
		goto out;
	}
	if (req->actor->expires_at && (long)time(NULL) >= req->actor->expires_at) {
		/* A stdio server started with a token acts as that token only until its exp
		 * (over HTTP each request's token was checked before it got here). */
		mcp_error_out(out, 401, ctx.id, MCP_AUTHORITY_EXPIRED,
			      "The access token this server acts with has expired; start it again "
			      "with a fresh one",
			      NULL);
		goto out;
	}
	if (strcmp(method, "initialize") == 0 &&
	    !(enveloped && mcp_is_modern_version(json_string_value(json_object_get(
				   json_object_get(params, "_meta"), MCP_META_VERSION))))) {
		if (header_modern) {
			mcp_error_out(out, 400, ctx.id, MCP_HEADER_MISMATCH,
				      "Header mismatch: initialize does not exist in the "
				      "MCP-Protocol-Version named in the header",
				      NULL);
			goto out;
		}
		mcp_handle_legacy(&ctx, method, params, out);
	} else if (enveloped) {
		mcp_handle_modern(&ctx, method, params, out);
	} else if (header_modern) {
		mcp_error_out(
			out, 400, ctx.id, MCP_INVALID_PARAMS,
			"Missing required _meta envelope (io.modelcontextprotocol/protocolVersion "
			"and clientCapabilities)",
			NULL);
	} else {
		mcp_handle_legacy(&ctx, method, params, out);
	}
out:
	if (!out->outcome)
		out->outcome = out->http_status == 202 ? "notification" : "invalid";
	if (out->op.method) {
		trace_swap(prev);
		observe_end(out->span, &ctx, msg, method, &out->op);
	}
	if (out->not_local) { /* it runs again where it may wait: this span was for nothing */
		trace_discard(out->span);
		out->span = NULL;
	}
	log_msg(LOG_DEBUG, req->reqid, "%s %s -> %d", ctx.modern ? "modern" : "legacy", method,
		out->http_status);
	json_decref(msg);
	json_decref(empty_caps);
}

void mcp_response_free(struct mcp_response *r)
{
	free(r->body);
	r->body = NULL;
	trace_end(r->span, 0);
	r->span = NULL;
}

/* ---- loading a description ----------------------------------------------------------- */

/* Every row's extension part is well formed, and so is the server's extensions object (kept
 * parsed in svc). */
static int mcp_service_check_ext(struct mcp_service *svc)
{
	const struct mcp_server *s = svc->server;
	int bad = 0;
	for (size_t i = 0; i < s->ntools; i++)
		bad |= mcp_ext_check(s->tools[i].ext);
	for (size_t i = 0; i < s->nresources; i++)
		bad |= mcp_ext_check(s->resources[i].ext);
	for (size_t i = 0; i < s->ntemplates; i++)
		bad |= mcp_ext_check(s->templates[i].ext);
	json_t *e = s->extensions ? json_loads(s->extensions, JSON_REJECT_DUPLICATES, NULL) : NULL;
	if (s->extensions && !json_is_object(e))
		bad = -1;
	svc->extensions = e;
	if (bad)
		log_error("server description: an extension's _meta or the extensions object is "
			  "not a JSON object");
	return bad ? -1 : 0;
}

struct mcp_service *mcp_service_new(const struct mcp_server *s,
				    const struct mcp_service_config *cfg)
{
	struct mcp_service *svc = mem_calloc(1, sizeof *svc);
	svc->server = s;
	svc->limits = cfg->limits;
	svc->answers = answers_new();
	/* Prompt templates may embed a resource document: documents first. */
	if (mcp_service_check_ext(svc) != 0 || tasks_load(svc) != 0 || tools_load(svc) != 0 ||
	    resources_load(svc, cfg->resources_dir) != 0 ||
	    prompts_load(svc, cfg->prompts_dir) != 0) {
		mcp_service_free(svc);
		return NULL;
	}
	return svc;
}

void mcp_service_free(struct mcp_service *svc)
{
	if (!svc)
		return;
	prompts_unload(svc);
	resources_unload(svc);
	tools_unload(svc);
	json_decref(svc->extensions);
	answers_free(svc->answers);
	free(svc);
}

const struct mcp_server *mcp_service_server(const struct mcp_service *svc)
{
	return svc->server;
}

const struct mcp_change_feed *mcp_service_changes(const struct mcp_service *svc)
{
	return svc->server->changes;
}

bool mcp_method_local(const struct mcp_service *svc, const char *method)
{
	const struct mcp_method *m =
		method ? methods_find(svc->server, method, MCP_ERA_MODERN) : NULL;
	return m && m->local;
}
