/* A message's server span and its metric's labels (observe.h). */
#include "observe.h"

#include <stdio.h>
#include <string.h>

#include "common/trace.h"
#include "methods.h"
#include "server.h"

/* The conventions' well-known method names that are no method of ours (notifications, the
 * removed ones): named as they are; any other unknown method is "_OTHER", so that neither span
 * names nor metric labels take what a client chose. */
static const char *const observe_known[] = {
	"notifications/initialized",
	"notifications/cancelled",
	"notifications/progress",
	"notifications/message",
	"notifications/roots/list_changed",
	"notifications/elicitation/complete",
	"notifications/tasks/status",
	"roots/list",
	"sampling/createMessage",
	"elicitation/create",
	"tasks/result",
	"tasks/list",
};

const char *observe_method(const struct mcp_ctx *ctx, const char *method)
{
	const struct mcp_method *m = methods_find(ctx->server, method, MCP_ERA_MODERN);
	if (!m)
		m = methods_find(ctx->server, method, MCP_ERA_LEGACY);
	if (m)
		return m->name;
	for (size_t i = 0; i < sizeof observe_known / sizeof observe_known[0]; i++)
		if (strcmp(method, observe_known[i]) == 0)
			return observe_known[i];
	return "_OTHER";
}

struct trace_span *observe_begin(const struct mcp_ctx *ctx, json_t *msg, const char *op_method,
				 char trace_id[33])
{
	const struct mcp_request *req = ctx->req;
	json_t *meta = json_object_get(json_object_get(msg, "params"), "_meta");
	struct trace_ctx from_meta, root = {0};
	bool in_meta =
		trace_parse(json_string_value(json_object_get(meta, "traceparent")), &from_meta);
	const struct trace_ctx *http = req->transport_trace;
	bool in_http = http && http->valid;
	const struct trace_ctx *parent = in_meta ? &from_meta : in_http ? http : NULL;
	/* The log line and the audit row carry the trace the span belongs to. */
	if (parent)
		trace_id_hex(parent, trace_id);
	if (!trace_enabled())
		return NULL;
	/* A root's trace id is the transport's (the one its log line carries), read as bytes;
	 * from the hex only for a request that came without one. */
	if (!parent && http)
		memcpy(root.trace_id, http->trace_id, sizeof root.trace_id);
	else if (!parent && !trace_id_parse(trace_id, &root))
		trace_new_id(&root);
	struct trace_span *s = trace_begin(&(struct trace_begin){
		.name = op_method,
		.kind = TRACE_SERVER,
		.start_ns = req->arrived_ns,
		.remote = parent,
		.tracestate = in_meta ? json_string_value(json_object_get(meta, "tracestate"))
				      : req->transport_tracestate,
		.root = &root,
	});
	/* The transport's context is the message's link to the HTTP request that carried it. */
	if (in_meta && in_http &&
	    (memcmp(from_meta.trace_id, http->trace_id, 16) != 0 ||
	     memcmp(from_meta.span_id, http->span_id, 8) != 0))
		trace_link(s, http, "transport");
	return s;
}

/* The resource a resources/read names, as mcp.resource.uri: a document's URI always, an
 * object's (a URI template matched it: the URI names one) only with personal data. */
static void observe_resource(const struct mcp_ctx *ctx, json_t *params, struct trace_span *s)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));
	if (uri && (trace_personal_data() || (ctx->label && strcmp(ctx->label, uri) == 0)))
		trace_str(s, "mcp.resource.uri", uri);
}

void observe_end(struct trace_span *s, const struct mcp_ctx *ctx, json_t *msg, const char *method,
		 const struct mcp_operation *op)
{
	if (!s)
		return;
	const char *target = NULL;
	json_t *params = json_object_get(msg, "params");
	trace_str(s, "mcp.method.name", op->method);
	if (strcmp(method, "tools/call") == 0 && ctx->label) {
		target = ctx->label;
		trace_str(s, "gen_ai.tool.name", target);
		trace_str(s, "gen_ai.operation.name", "execute_tool");
	} else if (strcmp(method, "prompts/get") == 0 && ctx->label) {
		target = ctx->label;
		trace_str(s, "gen_ai.prompt.name", target);
	} else if (strcmp(method, "resources/read") == 0) {
		observe_resource(ctx, params, s);
	}
	trace_rename(s, op->method, target);
	json_t *id = json_object_get(msg, "id");
	if (json_is_string(id))
		trace_str(s, "jsonrpc.request.id", json_string_value(id));
	else if (json_is_integer(id)) {
		char n[24];
		snprintf(n, sizeof n, "%" JSON_INTEGER_FORMAT, json_integer_value(id));
		trace_str(s, "jsonrpc.request.id", n);
	}
	if (op->version)
		trace_str(s, "mcp.protocol.version", op->version);
	trace_str(s, "network.transport",
		  ctx->req->transport == MCP_TRANSPORT_HTTP ? "tcp" : "pipe");
	if (op->rpc_code) {
		char code[16];
		snprintf(code, sizeof code, "%d", op->rpc_code);
		trace_str(s, "rpc.response.status_code", code);
		trace_str(s, "error.type", code);
	} else if (op->tool_error) {
		/* Its text may name an object of the caller's: not the span's description. */
		trace_str(s, "error.type", "tool_error");
		trace_fail(s, NULL);
	}
}
