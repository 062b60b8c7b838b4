/* Access lines and request metrics (access.h). */
#include "access.h"

#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/metrics.h"
#include "common/trace.h"

/* mcp.server.operation.duration, labelled as the MCP conventions say. */
static void access_operation(const struct access_entry *e, double secs, const char *code)
{
	bool tool = strcmp(e->op.method, "tools/call") == 0;
	bool prompt = strcmp(e->op.method, "prompts/get") == 0;
	const char *labels[] = {
		e->op.method,
		tool && e->name ? e->name : "",
		prompt && e->name ? e->name : "",
		tool ? "execute_tool" : "",
		*code              ? code
		: e->op.tool_error ? "tool_error"
				   : "",
		code,
		strcmp(e->transport, "http") == 0 ? "tcp" : "pipe",
		e->op.version ? e->op.version : "",
	};
	metrics_observe(&metrics_mcp_duration, labels, secs);
}

/* What the span of a message says that the protocol core does not know: this server's words
 * for the call (outcome, request id, what was called, the client application), the HTTP
 * status, and the subject with personal data only. Then it ends. */
static void access_span(const struct access_entry *e)
{
	struct trace_span *s = e->span;
	trace_str(s, "bikaroo.outcome", e->outcome);
	trace_str(s, "bikaroo.request.id", e->reqid);
	trace_str(s, "bikaroo.target", e->name);
	if (e->client && *e->client)
		trace_str(s, "bikaroo.client.id", e->client);
	if (e->subject && *e->subject && trace_personal_data())
		trace_str(s, "enduser.id", e->subject);
	if (e->status)
		trace_int(s, "http.response.status_code", e->status);
	trace_end(s, 0);
}

void access_record(const struct access_entry *e)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs =
		(double)(t1.tv_sec - e->t0.tv_sec) + (double)(t1.tv_nsec - e->t0.tv_nsec) / 1e9;
	char status[12] = "", ms[24];
	if (e->status)
		snprintf(status, sizeof status, "%u", e->status);
	snprintf(ms, sizeof ms, "%.1f", secs * 1000);
	const char *method = e->method ? e->method : e->path ? e->path : "";
	const char *labels[] = {e->transport, method, e->name ? e->name : "",
				e->outcome ? e->outcome : "", status};
	metrics_add(&metrics_requests, labels, 1);
	metrics_observe(&metrics_request_seconds, labels, secs); /* its labels: the first three */
	char code[16] = "";
	if (e->op.rpc_code)
		snprintf(code, sizeof code, "%d", e->op.rpc_code);
	if (e->op.method)
		access_operation(e, secs, code);
	access_span(e);
	const struct log_field f[] = {
		{"transport", e->transport},
		{"trace", e->trace},
		{"http", e->http},
		{"path", e->path},
		{"method", e->method},
		{"name", e->name},
		{"subject", e->subject && *e->subject ? e->subject : NULL},
		{"client", e->client && *e->client ? e->client : NULL},
		{"outcome", e->outcome},
		{"status", *status ? status : NULL},
		{"ms", ms},
	};
	log_fields(e->quiet ? LOG_DEBUG : LOG_INFO, e->reqid, "access", f, sizeof f / sizeof f[0]);
}
