/* Where a connection keeps what it subscribed to: its 2025-era resource subscriptions and its
 * 2026-07-28 listen streams. A transport that can deliver later provides them (dispatch.h hands
 * them in with each request); the resource registry uses them. */
#ifndef BIKAROO_SUBSCRIPTIONS_H
#define BIKAROO_SUBSCRIPTIONS_H

#include "mcp.h"

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

#endif
