/* Subscriptions held open by a transport, one implementation for HTTP and stdio: the
 * 2026-07-28 subscriptions/listen streams and the 2025-era resources/subscribe sets. A hub
 * (per HTTP server, per stdio connection) hears the application's change feed and tells each
 * subscription what concerns it: notifications/resources/updated for its URIs;
 * notifications/tasks for the task ids its acknowledgement names (the Tasks extension), to
 * their owner's listens only; its end (the
 * listen request's result) when its caller's rights change in the database, when the caller's
 * token expires, after a gap in the feed (anything may have changed, rights too: the client
 * listens again and what it may hear is checked anew), or when the server stops. The transport
 * only says how bytes leave (struct listen_out_ops). */
#ifndef BIKAROO_LISTEN_H
#define BIKAROO_LISTEN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "domain/types.h"
#include "server/protocol/dispatch.h"

/* URIs one 2025-era subscription set may hold. */
#define LISTEN_MAX_URIS 256

/* The transport's side of one subscription. Every callback but kick() runs under the hub's
 * lock and must not call the hub. */
struct listen_out_ops {
	/* Appends one message (borrowed) to out's stream. Returns a token for kick(), or NULL. */
	void *(*write)(void *out, const json_t *msg);
	/* A keep-alive on every tick (NULL: none). Returns a token for kick(), or NULL. */
	void *(*ping)(void *out);
	/* Nothing follows what was written: the stream ends (NULL: nothing to do). Returns a
	 * token for kick(), or NULL. */
	void *(*end)(void *out);
	/* After the hub's lock is released: wake the connection the token names (NULL: none). */
	void (*kick)(void *token);
	/* Whether the client has gone away (NULL: never): the hub then forgets the stream. */
	bool (*gone)(void *out);
	/* Whether the client reads too slowly to be kept (NULL: never): the hub then ends the
	 * stream with its result, which write() must take whatever it holds. */
	bool (*slow)(void *out);
	/* The hub forgets out (NULL: nothing to do). */
	void (*release)(void *out);
};

struct listen_hub;

/* A hub of at most max listen streams, per_subject of them for one subject (0: no share), fed
 * by feed (borrowed; NULL: no feed, streams only end), pinging each stream every keepalive_s
 * seconds (0: never). New; free with listen_hub_free(). */
struct listen_hub *listen_hub_new(const struct mcp_change_feed *feed, size_t max,
				  size_t per_subject, long keepalive_s);
/* Forgets every subscription without a word (call listen_hub_end_all() first for a graceful
 * end) and leaves the feed. */
void listen_hub_free(struct listen_hub *h);

/* Registers listen request id (copied) of actor for uris (copied) and for the task ids ack names
 * (params.notifications.taskIds) on out, and writes ack first under the hub's lock, so nothing
 * of this subscription precedes it. Joins the feed before.
 * Refused (nothing written) when actor's subject holds its share, or the hub is full or
 * closed. */
enum mcp_listen_status listen_hub_open(struct listen_hub *h, const struct fleet_actor *actor,
				       const json_t *id, const json_t *ack, const char *const *uris,
				       size_t n, const struct listen_out_ops *ops, void *out);

/* Adds (on) or removes uri in actor's 2025-era subscription set on out. 0, or -1 when adding
 * to a full set. */
int listen_hub_subscribe(struct listen_hub *h, const struct fleet_actor *actor, const char *uri,
			 bool on, const struct listen_out_ops *ops, void *out);

/* The listens of request id end without a result (a cancelled request gets no response). */
void listen_hub_cancel(struct listen_hub *h, const json_t *id);

/* Every listen ends with its result; the 2025-era sets are dropped. closing: no new ones. */
void listen_hub_end_all(struct listen_hub *h, bool closing);

#endif
