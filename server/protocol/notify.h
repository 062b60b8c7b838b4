/* Request-scoped notifications: notifications/progress (when the request carried
 * _meta.progressToken) and notifications/message (only when the request set
 * io.modelcontextprotocol/logLevel, at or above that level). Both go through the transport's
 * emit callback (struct mcp_request.emit), before the response; never on a listen stream. */
#ifndef BIKAROO_NOTIFY_H
#define BIKAROO_NOTIFY_H

#include "mcp.h"

/* RFC 5424 levels, lowest first, as MCP names them. */
enum notify_level {
	NOTIFY_DEBUG = 0,
	NOTIFY_INFO,
	NOTIFY_NOTICE,
	NOTIFY_WARNING,
	NOTIFY_ERROR,
	NOTIFY_CRITICAL,
	NOTIFY_ALERT,
	NOTIFY_EMERGENCY,
};

/* The notification state of one request, owned by the core for the request's life. */
struct notify_state {
	json_t *progress_token; /* borrowed: _meta.progressToken, or NULL */
	int log_level;          /* threshold for notifications/message, or -1: none */
	double progress_last;   /* the last progress sent (progress must increase) */
	int progress_sent;      /* how many progress notifications went out */
};

/* logging/setLevel (2025-era only): checks params.level and answers {}. The stdio transport
 * keeps the level for its connection (struct mcp_request.session_log_level). */
int notify_set_level(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err);

/* The level named s, or -1. */
int notify_parse_level(const char *s);
const char *notify_level_name(enum notify_level level);

/* Called by the core before a handler runs: reads progressToken and logLevel from params._meta
 * (borrowed) into ctx->notify. Legacy (2025-era) requests carry no per-request level: on stdio
 * the connection's last logging/setLevel applies; until one is sent, and always over HTTP (no
 * sessions: every request is its own session, as in the official SDKs' stateless mode), the
 * server description's legacy_log_level does, as the 2025 revisions allow. */
void notify_prepare(struct mcp_ctx *ctx, json_t *params);

/* Sends notifications/progress for this request if it asked for progress. progress must
 * increase from one call to the next (a value that does not is not sent); total <= 0 and
 * message NULL are left out. */
void notify_progress(struct mcp_ctx *ctx, double progress, double total, const char *message);

/* Whether a message at level would be sent for this request (so that one is built only then). */
bool notify_wants(const struct mcp_ctx *ctx, enum notify_level level);

/* Sends notifications/message at level if the request's threshold admits it. data is borrowed;
 * logger may be NULL. Handlers call it only in servers that declare the logging capability. */
void notify_log(struct mcp_ctx *ctx, enum notify_level level, const char *logger,
		const json_t *data);

#endif
