/* The MCP protocol core's vocabulary, for everyone who handles a request: one inbound message
 * (struct mcp_request), the per-request context a handler sees (struct mcp_ctx), handler errors,
 * and the helpers every handler shares. What else reads the core includes one more header:
 * a capability capability.h (its descriptor rows), the composition root server.h (the server
 * description and loading it), a transport dispatch.h (handing messages in, answers out).
 * The core knows no business word.
 * jansson rule, once: json_object_set_new()/json_array_append_new() steal the value,
 * json_object_get() borrows, json_*() constructors return a new reference. */
#ifndef BIKAROO_MCP_H
#define BIKAROO_MCP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "domain/types.h"

#define MCP_VERSION_MODERN "2026-07-28"

/* JSON-RPC and MCP error codes. */
enum mcp_code {
	MCP_PARSE_ERROR = -32700,
	MCP_INVALID_REQUEST = -32600,
	MCP_METHOD_NOT_FOUND = -32601,
	MCP_INVALID_PARAMS = -32602,
	MCP_INTERNAL_ERROR = -32603,
	MCP_HEADER_MISMATCH = -32020,
	MCP_MISSING_CAPABILITY = -32021,
	MCP_UNSUPPORTED_VERSION = -32022,
	MCP_LEGACY_RESOURCE_NOT_FOUND = -32002,
	/* Ours, in the implementation-defined range: the authority this server acts with (the
	 * token a stdio server was started with) has expired. */
	MCP_AUTHORITY_EXPIRED = -32001,
	/* Ours too: the caller's volume limit is spent (HTTP 429 + Retry-After;
	 * data.retryAfterSeconds on every transport). */
	MCP_RATE_LIMITED = -32029,
};

/* A handler's answer is in the transport's hands (a listen stream): no response now. */
#define MCP_DEFERRED 1

/* Seconds a client is asked to wait when the backend is unavailable. */
#define MCP_RETRY_AFTER 30

enum mcp_transport { MCP_TRANSPORT_HTTP, MCP_TRANSPORT_STDIO };

/* Delivers one notification (a whole JSON-RPC message, borrowed) that belongs to the request in
 * flight, before its response. The transport owns the framing: HTTP turns the response into an
 * SSE stream (transport/sse.c), stdio writes one line per message. */
typedef void (*mcp_emit_fn)(void *emit_ctx, const json_t *notification);

struct mcp_subscriptions; /* subscriptions.h: where a connection keeps its subscriptions */
struct trace_ctx;         /* common/span.h: a W3C trace context */
struct trace_span;        /* common/span.h: a span */
struct mcp_listen;        /* subscriptions.h: where it keeps its listen streams */

/* One inbound message, as a transport hands it over. All pointers are borrowed. */
struct mcp_request {
	enum mcp_transport transport;
	const char *body;
	size_t body_len;
	/* HTTP request-metadata headers, NULL when absent (always NULL on stdio). */
	const char *h_protocol_version;
	const char *h_method;
	const char *h_name;
	const struct fleet_actor *actor; /* who acts; never NULL */
	const char *reqid;               /* for logs */
	/* stdio only: the revision negotiated by this connection's `initialize` (NULL: none), and
	 * the level its last logging/setLevel chose (enum notify_level; NULL: never set). */
	const char *session_version;
	const int *session_log_level;
	/* This connection's subscriptions (NULL: the server description's default, or
	 * resources/subscribe not offered), and its listen streams (NULL: subscriptions/listen not
	 * offered). */
	const struct mcp_subscriptions *subscriptions;
	const struct mcp_listen *listen;
	/* stdio only: the extensions this connection's `initialize` declared (its capabilities'
	 * "extensions" object; NULL: none), for its later un-enveloped requests. */
	json_t *session_extensions;
	/* The actor comes from a token: per-caller results are cacheScope private (lists are
	 * filtered by the caller's rights whatever the actor: the caller hook). */
	bool per_principal;
	/* Where request-scoped notifications go; NULL: the transport cannot deliver them (they are
	 * dropped, e.g. an HTTP client whose Accept does not admit text/event-stream). */
	mcp_emit_fn emit;
	void *emit_ctx;
	/* The W3C trace id of the request as the transport knows it (32 lowercase hex digits: the
	 * HTTP traceparent's, or one made for it); a traceparent in the message's params._meta
	 * wins (mcp_ctx.trace_id). NULL: none. */
	const char *trace_id;
	/* The transport's trace context (the HTTP traceparent header's; NULL: none; not valid:
	 * none came, its trace id is trace_id's as bytes) and its tracestate (NULL: none), and
	 * when the message arrived (unix ns; 0: now): its span's. */
	const struct trace_ctx *transport_trace;
	const char *transport_tracestate;
	long long arrived_ns;
	/* The transport runs this request where nothing may wait (an HTTP event thread): a method
	 * that is not local (server.h) is not run, and the response says not_local. */
	bool local_only;
};

/* One message as OpenTelemetry's MCP conventions describe it (server/protocol/observe.h): for
 * its span and mcp.server.operation.duration. */
struct mcp_operation {
	const char *method;  /* as the conventions name it (static; "_OTHER": one unknown); NULL: no
				message was read (a parse error) */
	const char *version; /* the revision it spoke (static); NULL: unknown */
	int rpc_code;        /* the JSON-RPC error code answered; 0: a result */
	bool tool_error;     /* a tool result with isError */
};

struct mcp_server;   /* server.h: the server description (immutable once built) */
struct mcp_service;  /* server.h: a description loaded and serving */
struct tool_desc;    /* capability.h: a tool's row */
struct notify_state; /* notify.h: progress and log level of one request */
struct mrtr_state;   /* mrtr.h: a retry's inputResponses and requestState */

/* Per-request context handed to method handlers: facts of the request, nothing else. */
struct mcp_ctx {
	const struct mcp_server *server;   /* the description: tables, hooks */
	const struct mcp_service *service; /* what loading it produced */
	const struct mcp_request *req;
	bool modern;         /* 2026-07-28 envelope vs legacy (initialize-era) */
	const char *version; /* the revision this request speaks (borrowed) */
	json_t *client_caps; /* borrowed; {} when none declared */
	/* borrowed: the extensions the client declared, {} when none: this request's
	 * clientCapabilities (2026-07-28), or initialize's on a connection that keeps them
	 * (2025-era stdio; 2025-era HTTP has no session to keep them in). */
	json_t *client_extensions;
	json_t *id;                   /* borrowed; NULL for notifications */
	json_t *params;               /* borrowed: the request's params ({} when absent) */
	const char *method;           /* static: the method table's name */
	const struct tool_desc *tool; /* tools/call: the row called (its name, audit policy) */
	/* The spec of the row being served (a tool, resource or template: MCP_ACCESS_FIELDS),
	 * for its handler; NULL otherwise. */
	const void *spec;
	struct notify_state *notify;
	struct mrtr_state *mrtr;
	struct mcp_answer *answer; /* answers.h: its result kept as text, the key it depends on */
	/* Set by the registries for access logs and metrics (struct mcp_response): the
	 * description's name of what is called, and its outcome word; static, or NULL. */
	const char *label;
	const char *outcome;
	/* The trace this message belongs to, for audit rows: 32 hex digits (borrowed). */
	const char *trace_id;
};

/* Error a handler reports; message is static or owned by data's lifetime. The last three say
 * how HTTP answers it when the default rules (200, or 400/404 for some modern errors) do not
 * fit; stdio answers every error in JSON-RPC alone. */
struct mcp_error {
	int code;
	const char *message;
	json_t *data;              /* new reference or NULL */
	int http_status;           /* e.g. 406; 0: the default rules */
	const char *missing_scope; /* 403 insufficient_scope naming this scope (static) */
	bool unavailable;          /* 503 + Retry-After */
	long retry_after;          /* with http_status 429: the Retry-After seconds */
};

/* Handler contract: return 0 and set *result (new reference, without resultType/_meta), return
 * -1 and fill *err, or return MCP_DEFERRED when the transport holds the answer. */
typedef int (*mcp_handler_fn)(struct mcp_ctx *ctx, json_t *params, json_t **result,
			      struct mcp_error *err);

/* ---- helpers for handlers ------------------------------------------------------------- */

int mcp_fail(struct mcp_error *err, int code, const char *message, json_t *data);
/* The answer when the backend is unavailable, whatever the method: -32603 with message,
 * data {retryAfterSeconds}, HTTP 503 + Retry-After; never a result. */
int mcp_unavailable(struct mcp_error *err, const char *message);
/* The answer past a volume limit: MCP_RATE_LIMITED, data {retryAfterSeconds}, HTTP 429 +
 * Retry-After. */
int mcp_limited(struct mcp_error *err, long retry_after_s);
/* The same with another message and HTTP status (e.g. 503 when the server, not the caller, is
 * at its limit). */
int mcp_limited_as(struct mcp_error *err, int http_status, const char *message, long retry_after_s);
/* 0 when the token carries scope (an enum fleet_scope bit; 0: none needed); else -1 with err:
 * -32602 "Insufficient scope" naming scope_name, HTTP 403 insufficient_scope (a new token can
 * cure it), and ctx->outcome "denied". */
int mcp_require_scope(struct mcp_ctx *ctx, unsigned scope, const char *scope_name,
		      struct mcp_error *err) __attribute__((warn_unused_result));
/* 0 when responses (borrowed) is an inputResponses object (an object of result objects: MRTR
 * retries, tasks/update); else -1 with err (-32602). */
int mcp_input_responses_check(json_t *responses, struct mcp_error *err)
	__attribute__((warn_unused_result));
/* True when the request speaks at least revision v (legacy dates compare as strings). */
bool mcp_version_at_least(const struct mcp_ctx *ctx, const char *v);
/* Adds the caching hints to a cacheable result (removed again for legacy clients). */
void mcp_cacheable(json_t *result, long ttl_ms, bool private_scope);
/* The JSON-RPC id of ctx's request as text ("" for none) into buf. */
void mcp_request_id(const struct mcp_ctx *ctx, char *buf, size_t cap);

/* The i-th revision served through `initialize`, newest first; NULL past the end. */
const char *mcp_legacy_version(size_t i);

/* Parses a JSON text strictly: duplicate keys, NUL in strings and invalid UTF-8 are errors. */
json_t *mcp_parse_strict(const char *text, size_t len);

#endif
