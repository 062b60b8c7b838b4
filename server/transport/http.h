/* Streamable HTTP transport (libmicrohttpd). Moves bytes and headers; semantics live in the
 * protocol core (protocol/dispatch.h), listen streams in listen.h. Its files: http.c (start,
 * drain, stop), http_route.c (the order of checks, /mcp), http_reply.c (responses, media
 * types), http_stream.c (listen streams), http_auth.c (bearer tokens), http_health.c (probes,
 * /metrics), http_allow.c (Host/Origin), http_server.h (their shared state). */
#ifndef BIKAROO_HTTP_H
#define BIKAROO_HTTP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "domain/types.h"
#include "http_allow.h" /* the Host/Origin allow-lists, exposed for unit tests */
#include "server/protocol/dispatch.h"

struct http_server;

enum http_status { HTTP_OK = 0, HTTP_START_FAILED };

/* GET /readyz: appends to missing (a JSON array, borrowed) one short text for each thing the
 * server needs and lacks now (the database, its schema, the issuer's keys); nothing when ready.
 * Runs as a task of an HTTP loop (common/task.h): it may wait, never with a pthread condition. */
typedef void (*http_ready_fn)(json_t *missing);

/* The HTTP settings (strings borrowed for the call). */
struct http_settings {
	const char *listen;          /* IPv4 or IPv6 address to bind (BIKAROO_LISTEN) */
	long port;                   /* 0: any free port */
	long threads;                /* event loops, a thread each */
	size_t max_body;             /* bytes */
	const char *allowed_hosts;   /* extra Host names, comma-separated */
	const char *allowed_origins; /* extra Origin hosts, comma-separated */
	const char *ready_file;      /* "" or where to write the bound port */
	long keepalive_s;            /* seconds between keep-alives on listen streams */
	long header_timeout_ms;      /* a request's headers are complete within this, or closed */
	long body_timeout_ms;        /* its body within this after its headers */
	long max_pending;            /* connections without complete headers (0: no cap) */
	long max_connections;        /* connections at once */
	long max_per_ip;             /* connections from one address (0: no limit) */
	long listen_per_subject;     /* listen streams one subject may hold (0: no share) */
	long call_timeout_ms;        /* a call's deadline (its task's, common/task.h) */
	long calls_max;              /* calls under way at once, shared among the loops */
	const char *metrics_listen;  /* ADDR:PORT of GET /metrics ("" for none) */
	http_ready_fn ready;         /* NULL: ready whenever alive */
};

/* Starts serving POST /mcp for mcp (borrowed until http_stop) on set's address, on set->threads
 * event loops (each a thread with its own listening socket on the port, its connections, its
 * calls as tasks, its database connections: a call lives on one thread), acting as actor
 * (copied), or, when actor is NULL, as the principal of each request's bearer token (auth.c,
 * initialised before). *out is new (free with http_stop). *bound_port receives the port
 * actually bound, also written to set->ready_file when that is set. */
enum http_status http_start(const struct http_settings *set, const struct mcp_service *mcp,
			    const struct fleet_actor *actor, struct http_server **out,
			    unsigned *bound_port) __attribute__((warn_unused_result));
/* The graceful stop's first half: stops accepting connections, answers 503 (Retry-After) to
 * requests that begin from now on, ends every listen stream with its result, and waits until
 * every request already begun has been answered to its last byte, at most limit_ms. Returns
 * the milliseconds it took. Then http_stop. */
long http_drain(struct http_server *s, long limit_ms);
void http_stop(struct http_server *s);

/* While draining, GET /readyz answers 503 "draining" (a load balancer stops sending new
 * requests) and everything else is served as before. Thread-safe. */
void http_set_draining(struct http_server *s, bool draining);

/* Parses an address to bind: an IPv4 or IPv6 literal (brackets optional: ::1, [::1]), or with
 * port_out an ADDR:PORT ([::1]:9464). Fills *sa and *len; -1 when text is not one. Exposed for
 * unit tests. */
int http_parse_address(const char *text, long *port_out, struct sockaddr_storage *sa, unsigned *len)
	__attribute__((warn_unused_result));

#endif
