/* Listen streams over HTTP (subscriptions/listen, 2026-07-28): a listen request's response is
 * an SSE stream that stays open, fed by the server's listen hub (listen.h): the
 * acknowledgement first, then notifications/resources/updated events, a comment line on every
 * tick of the change feed as a keep-alive, and the request's result when the stream ends. */
#ifndef BIKAROO_HTTP_STREAM_H
#define BIKAROO_HTTP_STREAM_H

#include <jansson.h>
#include <microhttpd.h>
#include <stddef.h>

#include "domain/types.h"
#include "http_server.h"
#include "listen.h"
#include "server/protocol/dispatch.h"

/* Listen streams one server holds at once. */
#define HTTP_MAX_STREAMS 256

struct http_stream;

/* Fills ops with the way a stream's bytes leave (for listen_hub_open). */
void http_stream_ops_init(struct listen_out_ops *ops);

/* What one request's listen (if any) opened: the mcp_listen context of one request. */
struct http_listen_req {
	struct http_server *srv;
	struct http_loop *hl; /* the connection's loop */
	struct MHD_Connection *conn;
	struct http_stream *opened; /* set by http_listen_open, then given to http_send_stream */
};

/* mcp_listen.open for one HTTP request (ctx: its struct http_listen_req). */
enum mcp_listen_status http_listen_open(void *ctx, const struct fleet_actor *actor,
					const json_t *id, const json_t *ack,
					const char *const *uris, size_t n);

/* The response of a listen request: its stream (lr.opened, consumed), open until the client
 * leaves or the stream ends. */
enum MHD_Result http_send_stream(struct http_server *s, struct MHD_Connection *c,
				 struct http_stream *st);

/* A stream opened for a request that will never answer with it (its connection went before):
 * the response's share of it is given back. */
void http_stream_abandon(struct http_stream *st);

/* Waits (at most about two seconds) until libmicrohttpd has sent every ended stream to its
 * end, so that stopping the daemon does not cut a final result short. */
void http_streams_drain(struct http_server *s);

#endif
