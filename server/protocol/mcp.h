/* The MCP protocol core, shared by every transport: JSON-RPC parsing, era classification,
 * the 2026-07-28 envelope and header checks, method dispatch, result shaping.
 * jansson rule, once: json_object_set_new()/json_array_append_new() steal the value,
 * json_object_get() borrows, json_*() constructors return a new reference. */
#ifndef BIKAROO_MCP_H
#define BIKAROO_MCP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "domain/bikes.h"
#include "domain/rights.h"

#define MCP_VERSION_MODERN "2026-07-28"
#define MCP_SERVER_NAME "bikaroo-fleet-mcp"
#define MCP_SERVER_VERSION "0.1.0"

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
};

enum mcp_transport { MCP_TRANSPORT_HTTP, MCP_TRANSPORT_STDIO };

/* Delivers one notification (a whole JSON-RPC message, borrowed) that belongs to the request in
 * flight, before its response. The transport owns the framing: HTTP turns the response into an
 * SSE stream (server/sse.c), stdio writes one line per message. */
typedef void (*mcp_emit_fn)(void *emit_ctx, const json_t *notification);

/* Where a connection keeps its resource subscriptions (2025-era resources/subscribe): a
 * transport that can deliver notifications/resources/updated later provides one. */
struct mcp_subscriptions {
	/* Adds (on) or removes uri (borrowed); 0, or -1 when the connection holds too many. */
	int (*change)(void *ctx, const char *uri, bool on);
	void *ctx;
};

/* Where a connection keeps its 2026-07-28 subscriptions/listen streams: a transport that can
 * hold a stream open provides one. open() registers the listen request `id` for the resource
 * URIs given and writes `ack` (the notifications/subscriptions/acknowledged message) first, in
 * one step, so that nothing for this subscription can precede it; 0, or -1 when the connection
 * holds too many. The stream's final result is the transport's to send when it ends. */
struct mcp_listen {
	int (*open)(void *ctx, const json_t *id, const json_t *ack, const char *const *uris,
		    size_t n);
	void *ctx;
};

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
	/* stdio only: this connection's subscriptions (NULL: resources/subscribe not offered), and
	 * its listen streams (NULL: subscriptions/listen not offered). */
	const struct mcp_subscriptions *subscriptions;
	const struct mcp_listen *listen;
	/* The actor comes from a token: lists are filtered by the caller's rights in PostgreSQL
	 * and per-caller results are cacheScope private. */
	bool per_principal;
	/* Where request-scoped notifications go; NULL: the transport cannot deliver them (they are
	 * dropped, e.g. an HTTP client whose Accept does not admit text/event-stream). */
	mcp_emit_fn emit;
	void *emit_ctx;
};

/* What the transport writes back. body is new memory (caller frees), NULL = no body. */
struct mcp_response {
	int http_status;
	char *body;
	/* Set when the token lacks a scope the method needs (HTTP answers 403 insufficient_scope
	 * with a challenge naming it). Static string or NULL. */
	const char *missing_scope;
	/* The database was unavailable (HTTP answers 503 with Retry-After: MCP_RETRY_AFTER). */
	bool unavailable;
};

/* Seconds a client is asked to wait when the database is unavailable. */
#define MCP_RETRY_AFTER 30

/* Per-request context handed to method handlers. */
struct mcp_ctx {
	const struct mcp_request *req;
	bool modern;         /* 2026-07-28 envelope vs legacy (initialize-era) */
	const char *version; /* the revision this request speaks (borrowed) */
	json_t *client_caps; /* borrowed; {} when none declared */
	json_t *id;          /* borrowed; NULL for notifications */
	json_t *params;      /* borrowed: the request's params ({} when absent) */
	/* Set by handlers that need an HTTP-level refusal (insufficient scope, mcp_unavailable). */
	const char *missing_scope;
	bool unavailable;
	/* Set by a handler whose response the transport sends later (subscriptions/listen). */
	bool deferred;
	/* HTTP status for the handler's error, when the default rules do not fit (0: they do). */
	int http_status;
	/* Filled by the core before the handler runs (server/notify.c, server/mrtr.c). */
	const char *method;      /* static: the method table's name */
	json_t *progress_token;  /* borrowed: _meta.progressToken, or NULL */
	int log_level;           /* notify.h threshold for notifications/message, or -1: none */
	double progress_last;    /* the last progress sent (progress must increase) */
	int progress_sent;       /* how many progress notifications went out */
	json_t *input_responses; /* borrowed: the retry's inputResponses object, or NULL */
	json_t *request_state;   /* new reference: the verified requestState payload, or NULL */
};

/* Error a handler reports; message is static or owned by data's lifetime. */
struct mcp_error {
	int code;
	const char *message;
	json_t *data; /* new reference or NULL */
};

/* Handler contract: return 0 and set *result (new reference, without resultType/_meta), or
 * return -1 and fill *err. */
typedef int (*mcp_handler_fn)(struct mcp_ctx *ctx, json_t *params, json_t **result,
			      struct mcp_error *err);

/* Handles one message. Never fails: every outcome is a response (possibly 202, no body). */
void mcp_handle(const struct mcp_request *req, struct mcp_response *out);
void mcp_response_free(struct mcp_response *r);

/* Helpers for handlers. */
int mcp_fail(struct mcp_error *err, int code, const char *message, json_t *data);
/* The answer when PostgreSQL is unavailable, whatever the method (SECURITY.md row 15): -32603
 * "The fleet database is unavailable right now", HTTP 503 + Retry-After; never a result. */
int mcp_unavailable(struct mcp_ctx *ctx, struct mcp_error *err);
/* A domain call that failed for want of the database or of a working statement:
 * FLEET_UNAVAILABLE is mcp_unavailable(), anything else -32603 "Internal error". */
int mcp_domain_error(struct mcp_ctx *ctx, enum fleet_status st, struct mcp_error *err);
/* True when the request speaks at least revision v (legacy dates compare as strings). */
bool mcp_version_at_least(const struct mcp_ctx *ctx, const char *v);
/* Adds the caching hints to a cacheable result (removed again for legacy clients). */
void mcp_cacheable(json_t *result, long ttl_ms, bool private_scope);

/* The i-th revision served through `initialize`, newest first; NULL past the end. */
const char *mcp_legacy_version(size_t i);

/* Parses a JSON text strictly: duplicate keys, NUL in strings and invalid UTF-8 are errors. */
json_t *mcp_parse_strict(const char *text, size_t len);

#endif
