/* The MCP protocol core's vocabulary, shared by every transport and every capability: one
 * inbound message and its answer, the per-request context handlers see, handler errors, and the
 * server description the application hands the core (method, tool, resource, template and prompt
 * tables, the hooks for the caller's rights and the audit). The core knows no business word: a
 * product is a description built outside protocol/ (server/capabilities/catalog.c).
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
	/* Ours too: the caller's volume limit on tools/call is spent (HTTP 429 + Retry-After;
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

/* Where a connection keeps its resource subscriptions (2025-era resources/subscribe): a
 * transport that can deliver notifications/resources/updated later provides one. */
struct mcp_subscriptions {
	/* Adds (on) or removes uri (borrowed) for actor; 0, or -1 when the connection holds too
	 * many. */
	int (*change)(void *ctx, const struct fleet_actor *actor, const char *uri, bool on);
	void *ctx;
};

/* Why a listen stream could not be opened. */
enum mcp_listen_status {
	MCP_LISTEN_OK = 0,
	MCP_LISTEN_SHARE_SPENT, /* this caller holds its share of the streams: 429 */
	MCP_LISTEN_FULL,        /* the server holds all it can: 503 */
};

/* Where a connection keeps its 2026-07-28 subscriptions/listen streams: a transport that can
 * hold a stream open provides one. open() registers the listen request `id` of actor for the
 * resource URIs given and writes `ack` (the notifications/subscriptions/acknowledged message)
 * first, in one step, so that nothing for this subscription can precede it. The stream's final
 * result is the transport's to send when it ends. */
struct mcp_listen {
	enum mcp_listen_status (*open)(void *ctx, const struct fleet_actor *actor, const json_t *id,
				       const json_t *ack, const char *const *uris, size_t n);
	void *ctx;
};

/* A committed change, as the application's change feed reports it; exactly one member is set. */
struct mcp_change {
	const char *uri;     /* a resource whose content changed */
	const char *subject; /* a principal whose rights changed */
	const char *client;  /* a client application whose rights changed */
};

/* A receiver of changes (a transport's subscriptions). */
struct mcp_change_sink {
	/* A committed change; c NULL after a gap in the feed (anything may have changed, rights
	 * too). Called on the feed's thread, under its lock: never call add or remove from here. */
	void (*changed)(const struct mcp_change *c, void *arg);
	/* Every few seconds (keep-alives, expiries), or NULL. */
	void (*tick)(void *arg);
	void *arg;
	struct mcp_change_sink *next; /* the feed's */
};

/* The application's change feed. add() starts listening before it returns, so that nothing
 * committed after a subscription is acknowledged is missed; adding a sink twice is a no-op. */
struct mcp_change_feed {
	void (*add)(struct mcp_change_sink *s);
	void (*remove)(struct mcp_change_sink *s);
};

/* Whether c is a change of the rights of this subject or of this client application. */
bool mcp_change_of_rights_of(const struct mcp_change *c, const char *subject, const char *client);

struct mcp_server;

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
	 * filtered by the caller's rights whatever the actor: the caller_scopes hook). */
	bool per_principal;
	/* Where request-scoped notifications go; NULL: the transport cannot deliver them (they are
	 * dropped, e.g. an HTTP client whose Accept does not admit text/event-stream). */
	mcp_emit_fn emit;
	void *emit_ctx;
	/* The W3C trace id of the request (32 lowercase hex digits: the client's traceparent's, or
	 * one made for it), for logs and audit rows; NULL: none. */
	const char *trace_id;
};

/* What the transport writes back. body is new memory (caller frees), NULL = no body. */
struct mcp_response {
	int http_status;
	char *body;
	/* Set when the token lacks a scope the method needs (HTTP answers 403 insufficient_scope
	 * with a challenge naming it). Static string or NULL. */
	const char *missing_scope;
	/* The backend was unavailable (HTTP answers 503 with Retry-After: MCP_RETRY_AFTER). */
	bool unavailable;
	/* Seconds for a Retry-After header (a 429), 0: none. */
	long retry_after;
	/* For access logs and metrics, all static strings from bounded sets (never client text):
	 * the method table's name (NULL: none matched), the tool, resource (URI or URI template)
	 * or prompt of the server description (NULL: none), and how it ended: ok, failed (a tool
	 * result with isError), denied, invalid, not_found, input_required, rate_limited, stream,
	 * notification, unavailable or error. */
	const char *method;
	const char *name;
	const char *outcome;
};

struct notify_state; /* protocol/notify.h: progress and log level of one request */
struct mrtr_state;   /* protocol/mrtr.h: a retry's inputResponses and requestState */

/* Per-request context handed to method handlers: facts of the request, nothing else. */
struct mcp_ctx {
	const struct mcp_server *server;
	const struct mcp_request *req;
	bool modern;         /* 2026-07-28 envelope vs legacy (initialize-era) */
	const char *version; /* the revision this request speaks (borrowed) */
	json_t *client_caps; /* borrowed; {} when none declared */
	/* borrowed: the extensions the client declared, {} when none: this request's
	 * clientCapabilities (2026-07-28), or initialize's on a connection that keeps them
	 * (2025-era stdio; 2025-era HTTP has no session to keep them in). */
	json_t *client_extensions;
	json_t *id;         /* borrowed; NULL for notifications */
	json_t *params;     /* borrowed: the request's params ({} when absent) */
	const char *method; /* static: the method table's name */
	struct notify_state *notify;
	struct mrtr_state *mrtr;
	/* Set by the registries for access logs and metrics (struct mcp_response): the
	 * description's name of what is called, and its outcome word; static, or NULL. */
	const char *label;
	const char *outcome;
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

/* ---- the server description: what the application serves ------------------------------ */

enum mcp_era { MCP_ERA_MODERN = 1, MCP_ERA_LEGACY = 2 };

struct mcp_method {
	const char *name;
	unsigned eras;          /* enum mcp_era bits */
	const char *name_param; /* params key mirrored in the Mcp-Name header, or NULL */
	mcp_handler_fn fn;
};

/* Governance of one capability (a tool, resource, template or prompt), served in its
 * descriptor's _meta under the server's governance_key. Strings are static; NULL is left out. */
struct mcp_governance {
	const char *version;      /* semver of the capability's public contract */
	const char *owner;        /* the team answerable for it */
	const char *domain;       /* the business domain it belongs to */
	const char *risk;         /* none | low | high */
	const char *data;         /* classification of what it reads or writes */
	const char *roles;        /* roles allowed, comma-separated */
	const char *systems;      /* systems it calls, comma-separated */
	const char *confirmation; /* confirmation policy */
	const char *audit;        /* what is recorded */
	const char *lifecycle;    /* stable | deprecated */
	const char *sunset;       /* deprecated: the date it stops working (YYYY-MM-DD) */
	const char *replacement;  /* deprecated: what to use instead */
};

/* An extension's part of a descriptor (a tool, resource or template row), shown only to a
 * request whose client declared that extension (mcp_ctx.client_extensions). */
struct mcp_ext_meta {
	const char *extension; /* its identifier, e.g. "vendor.example/name" */
	/* When set, the declaration's settings must hold an array under setting_key listing
	 * setting_value (e.g. the content types the client can show); NULL: any declaration. */
	const char *setting_key;
	const char *setting_value;
	/* JSON object text merged into the descriptor's _meta and, for a document resource, into
	 * its contents' _meta; checked at load. */
	const char *meta;
	/* The row exists only for such clients: not listed and not read otherwise. */
	bool exclusive;
};

/* tools/call handler: args is the validated arguments object (borrowed). */
typedef int (*tool_fn)(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err);

struct tool_desc {
	const char *name;
	const char *title;
	const char *description;
	const char *input_schema;  /* JSON text */
	const char *output_schema; /* JSON text, or NULL */
	bool read_only, destructive, idempotent;
	unsigned scope;         /* enum fleet_scope bit the token must carry (0: none) */
	const char *scope_name; /* its OAuth name, for challenges */
	tool_fn fn;
	bool self_audit; /* fn writes the audit row of every call it handles */
	const struct mcp_governance *governance; /* NULL: none published */
	const struct mcp_ext_meta *ext;          /* NULL: none */
};

/* A completer: values (new array of strings, at most 100, best first) starting with prefix among
 * what the caller may see, and *total how many exist in all. Returns 0, or -1 with err. */
typedef int (*completion_fn)(struct mcp_ctx *ctx, const char *prefix, json_t **values, long *total,
			     struct mcp_error *err);

enum resource_status { RESOURCE_OK = 0, RESOURCE_NOT_FOUND, RESOURCE_FAILED };

/* Reads one resource: uri as asked, value the template variable (NULL for a fixed resource).
 * RESOURCE_OK: *result is new, usually from resources_text_result(). RESOURCE_NOT_FOUND: the
 * core answers "Resource not found" (-32602, legacy -32002). RESOURCE_FAILED: err is filled. */
typedef enum resource_status (*resource_read_fn)(struct mcp_ctx *ctx, const char *uri,
						 const char *value, json_t **result,
						 struct mcp_error *err);

struct resource_desc {
	const char *uri;
	const char *name;
	const char *title;
	const char *description;
	const char *mime_type;
	/* A document under the resources directory, loaded once at start (the name is this
	 * constant, never derived from a URI); NULL when read is set. */
	const char *file;
	resource_read_fn read;
	long ttl_ms;
	bool private_scope;
	unsigned
		scope; /* enum fleet_scope bit the caller must hold for it to be listed (0: none) */
	const struct mcp_governance *governance;
	const struct mcp_ext_meta *ext; /* NULL: none */
};

/* A template of the form prefix{var}suffix (RFC 6570 level 1, one variable). */
struct resource_template_desc {
	const char *uri_template;
	const char *name;
	const char *title;
	const char *description;
	const char *mime_type;
	const char *prefix;
	const char *var;
	const char *suffix;
	resource_read_fn read;
	completion_fn complete; /* NULL: no completion for var */
	unsigned scope;
	const struct mcp_governance *governance;
	const struct mcp_ext_meta *ext; /* NULL: none */
};

#define PROMPTS_MAX_ARGS 4

struct prompt_arg_desc {
	const char *name;
	const char *title;
	const char *description;
	bool required;
	size_t max_len;              /* in characters; longer is -32602 */
	bool (*valid)(const char *); /* NULL: any text */
	const char *invalid_message; /* -32602 message when valid() refuses */
	completion_fn complete;      /* NULL: no completion */
};

struct prompt_desc;

/* Builds a GetPromptResult for a prompt without a template; args are checked already. */
typedef int (*prompt_render_fn)(struct mcp_ctx *ctx, const struct prompt_desc *p, json_t *args,
				json_t **result, struct mcp_error *err);

struct prompt_desc {
	const char *name;
	const char *title;
	const char *description;
	/* Template under the prompts directory (a constant name), or NULL when render is set.
	 * Format: docs/using.md ("Prompt arguments are data"). */
	const char *file;
	prompt_render_fn render;
	size_t nargs;
	struct prompt_arg_desc args[PROMPTS_MAX_ARGS];
	unsigned scope;
	const struct mcp_governance *governance;
};

/* What mcp_server_load() built for the tables, each registry's own (opaque) part. */
struct mcp_loaded {
	struct tools_loaded *tools;         /* parsed schemas (protocol/tools.c) */
	struct resources_loaded *resources; /* documents (protocol/resources.c) */
	struct prompts_loaded *prompts;     /* parsed templates (protocol/prompts.c) */
	json_t *extensions; /* the server's extensions object, parsed (NULL: none); read-only */
};

/* The server description: built by the application (or a test), borrowed by the core for the
 * server's life. Tables are borrowed too. */
struct mcp_server {
	const char *name, *title, *version; /* serverInfo */
	const char *instructions;
	/* Methods beyond the standard MCP ones (tests' fixtures), consulted after them. */
	const struct mcp_method *methods;
	size_t nmethods;
	const struct tool_desc *tools;
	size_t ntools;
	const struct resource_desc *resources;
	size_t nresources;
	const struct resource_template_desc *templates;
	size_t ntemplates;
	const struct prompt_desc *prompts;
	size_t nprompts;
	/* The tools/call argument that names a call's target (logs and audit), or NULL; the logger
	 * name of the outcome messages tools/call sends (notifications/message). */
	const char *target_arg;
	const char *tools_logger;
	/* _meta key under which each descriptor's governance is listed (NULL: not listed). */
	const char *governance_key;
	/* JSON object text: the extensions the server supports, listed under capabilities in
	 * server/discover (NULL: none). */
	const char *extensions;
	/* What the caller may use, as enum fleet_scope bits, for filtering every list; 0, or -1
	 * with *err filled when it cannot be said. Called for every request that lists (a local
	 * identity's too: its rights are the database's); NULL: the actor's scopes. */
	int (*caller_scopes)(struct mcp_ctx *ctx, unsigned *may, struct mcp_error *err);
	/* Leaves the audit row of a tools/call that its tool does not record itself (arguments
	 * borrowed, may be NULL). NULL: no audit (unit tests, the conformance fixtures). */
	void (*audit)(struct mcp_ctx *ctx, const char *tool, json_t *args, const char *outcome,
		      const char *detail);
	/* Where subscriptions hear of changes (NULL: no change feed; listens stay silent). */
	const struct mcp_change_feed *changes;
	/* Subscriptions for requests whose transport keeps none (NULL: none). */
	const struct mcp_subscriptions *default_subscriptions;
	/* Legacy requests without a per-connection logging/setLevel: send notifications/message at
	 * this level and above ("info"...), or none when NULL. */
	const char *legacy_log_level;
	/* Volume limits on tools/call (protocol/ratelimit.h), or NULL: none. */
	struct ratelimit *limits;
	/* The application's own settings, for its handlers (the core never reads it). */
	const void *app;
	struct mcp_loaded *loaded; /* mcp_server_load()'s */
};

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
/* True when the request speaks at least revision v (legacy dates compare as strings). */
bool mcp_version_at_least(const struct mcp_ctx *ctx, const char *v);
/* Adds the caching hints to a cacheable result (removed again for legacy clients). */
void mcp_cacheable(json_t *result, long ttl_ms, bool private_scope);
/* What the caller may use (struct mcp_server.caller_scopes, or the actor's scopes). */
int mcp_caller_scopes(struct mcp_ctx *ctx, unsigned *may, struct mcp_error *err)
	__attribute__((warn_unused_result));
/* The JSON-RPC id of ctx's request as text ("" for none) into buf. */
void mcp_request_id(const struct mcp_ctx *ctx, char *buf, size_t cap);
/* A governance record as a JSON object (new; NULL fields left out). */
json_t *mcp_governance_json(const struct mcp_governance *g);
/* Adds descriptor's governance under the server's key to o's _meta (when both are set). */
void mcp_describe_governance(const struct mcp_ctx *ctx, json_t *o, const struct mcp_governance *g);

/* True when the request's client declared ext's extension (with its required setting). */
bool mcp_ext_declared(const struct mcp_ctx *ctx, const struct mcp_ext_meta *ext);
/* Whether a row with ext (NULL: none) exists for this request: not an exclusive row of an
 * extension the client did not declare. */
bool mcp_ext_offered(const struct mcp_ctx *ctx, const struct mcp_ext_meta *ext);
/* Merges ext's meta into o's _meta when the client declared it (and ext is not NULL). */
void mcp_describe_ext(const struct mcp_ctx *ctx, json_t *o, const struct mcp_ext_meta *ext);
/* 0 when ext (NULL: none) is well formed: an identifier and meta a JSON object; else -1. */
int mcp_ext_check(const struct mcp_ext_meta *ext) __attribute__((warn_unused_result));

/* The i-th revision served through `initialize`, newest first; NULL past the end. */
const char *mcp_legacy_version(size_t i);

/* Parses a JSON text strictly: duplicate keys, NUL in strings and invalid UTF-8 are errors. */
json_t *mcp_parse_strict(const char *text, size_t len);

#endif
