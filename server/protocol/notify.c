/* Request-scoped notifications, framed by the transport (see notify.h). */
#include "notify.h"

#include <string.h>

#include "common/log.h"
#include "server.h"

static const char *const notify_names[] = {"debug", "info",     "notice", "warning",
					   "error", "critical", "alert",  "emergency"};
#define NOTIFY_NLEVELS (sizeof notify_names / sizeof notify_names[0])

int notify_parse_level(const char *s)
{
	for (size_t i = 0; s && i < NOTIFY_NLEVELS; i++)
		if (strcmp(s, notify_names[i]) == 0)
			return (int)i;
	return -1;
}

const char *notify_level_name(enum notify_level level)
{
	return (size_t)level < NOTIFY_NLEVELS ? notify_names[level] : "info";
}

void notify_prepare(struct mcp_ctx *ctx, json_t *params)
{
	json_t *meta = json_object_get(params, "_meta");
	json_t *pt = json_object_get(meta, "progressToken");
	struct notify_state *n = ctx->notify;
	n->progress_token = (json_is_string(pt) || json_is_integer(pt)) ? pt : NULL;
	n->progress_sent = 0;
	n->progress_last = 0;
	if (ctx->modern)
		n->log_level = notify_parse_level(json_string_value(
			json_object_get(meta, "io.modelcontextprotocol/logLevel")));
	else if (ctx->req->session_log_level)
		n->log_level = *ctx->req->session_log_level;
	else
		n->log_level = notify_parse_level(ctx->server->legacy_log_level);
}

int notify_set_level(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err)
{
	(void)ctx;
	if (notify_parse_level(json_string_value(json_object_get(params, "level"))) < 0)
		return mcp_fail(err, MCP_INVALID_PARAMS,
				"level must be an RFC 5424 level name (debug ... emergency)", NULL);
	*result = json_object();
	return 0;
}

static void notify_emit(struct mcp_ctx *ctx, const char *method, json_t *params)
{
	json_t *msg =
		json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", method, "params", params);
	ctx->req->emit(ctx->req->emit_ctx, msg);
	json_decref(msg);
}

/* Integral values are written as integers (50, not 50.0). */
static json_t *notify_number(double v)
{
	if (v >= -9007199254740991.0 && v <= 9007199254740991.0 && v == (double)(json_int_t)v)
		return json_integer((json_int_t)v);
	return json_real(v);
}

void notify_progress(struct mcp_ctx *ctx, double progress, double total, const char *message)
{
	struct notify_state *n = ctx->notify;
	if (!n || !n->progress_token || !ctx->req->emit)
		return;
	if (n->progress_sent > 0 && !(progress > n->progress_last)) {
		log_msg(LOG_WARN, ctx->req->reqid, "progress %g does not increase: not sent",
			progress);
		return;
	}
	json_t *p = json_pack("{s:O, s:o}", "progressToken", n->progress_token, "progress",
			      notify_number(progress));
	if (total > 0)
		json_object_set_new(p, "total", notify_number(total));
	if (message)
		json_object_set_new(p, "message", json_string(message));
	n->progress_last = progress;
	n->progress_sent++;
	notify_emit(ctx, "notifications/progress", p);
}

bool notify_wants(const struct mcp_ctx *ctx, enum notify_level level)
{
	const struct notify_state *n = ctx->notify;
	return n && n->log_level >= 0 && (int)level >= n->log_level && ctx->req->emit;
}

void notify_log(struct mcp_ctx *ctx, enum notify_level level, const char *logger,
		const json_t *data)
{
	if (!notify_wants(ctx, level))
		return;
	json_t *p =
		json_pack("{s:s, s:O}", "level", notify_level_name(level), "data", (json_t *)data);
	if (logger)
		json_object_set_new(p, "logger", json_string(logger));
	notify_emit(ctx, "notifications/message", p);
}
