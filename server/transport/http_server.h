/* The HTTP transport's state, shared by its files (http.c starts and stops it; http_route.c
 * routes requests; http_reply.c, http_stream.c, http_auth.c, http_health.c answer them). Not a
 * public header: the rest of the server sees struct http_server as opaque (http.h). Everything
 * that changes while the server runs lives in one struct http_server or in one request's
 * struct http_req: the transport has no process-wide variable. */
#ifndef BIKAROO_HTTP_SERVER_H
#define BIKAROO_HTTP_SERVER_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "domain/types.h"
#include "guard.h"
#include "listen.h"
#include "server/protocol/dispatch.h"

struct MHD_Connection;
struct MHD_Daemon;
struct http_stream;
struct http_work;

struct http_server {
	struct MHD_Daemon *daemon;
	const struct mcp_service *mcp;
	struct fleet_actor actor;
	bool tokens; /* every request carries a bearer token (auth.c); actor is unused */
	size_t max_body;
	char *allowed_hosts;
	char *allowed_origins;
	struct listen_hub *hub;           /* the listen streams */
	struct listen_out_ops stream_ops; /* how a listen stream's bytes leave (http_stream.c) */
	struct guard *guard;              /* header and body deadlines, the pending-headers cap */
	void (*ready)(json_t *missing);   /* http_settings.ready */
	atomic_bool draining;             /* http_set_draining(): /readyz says so */
	struct MHD_Daemon *metrics;       /* GET /metrics, on its own address; NULL: none */
	atomic_ulong counter;             /* requests begun: the request ids */
	/* Stopping: new requests get 503 and every answer closes its connection (http_drain). */
	atomic_bool stopping;
	/* Requests between their headers and their answer's last byte (http_completed). */
	atomic_int inflight;
	/* Listen streams whose response libmicrohttpd still holds (for the drain at shutdown). */
	atomic_int live_streams;
	struct http_work *work; /* the workers that run calls, and their queue */
	long call_timeout_ms;   /* each call's deadline on its worker */
};

/* A call's answer, made on a worker and sent by the event thread once the connection resumes. */
struct http_out {
	unsigned status;
	char *body;                 /* owned: JSON, or SSE events when sse */
	bool sse;                   /* body is a text/event-stream body */
	char *challenge;            /* owned WWW-Authenticate value, or NULL */
	long retry_after;           /* > 0: a Retry-After header */
	struct http_stream *stream; /* a listen stream to answer with instead, or NULL */
};

/* One request, from its headers to the completion callback. */
struct http_req {
	char *body;
	size_t len, cap;
	bool refused;     /* a response was already queued (e.g. 413) */
	bool probe;       /* GET /healthz or /readyz: answered once the request is read */
	bool too_large;   /* a streamed body passed the limit: 413 at once, discard the rest */
	size_t discarded; /* bytes thrown away since */
	/* A status written on the socket itself (the 413 of a streamed body), or 0. */
	unsigned answered;
	char reqid[24];
	/* For the access line and the metrics, written when the request completes. */
	struct timespec t0;
	char verb[8];        /* GET, POST... */
	const char *path;    /* static: the endpoint's name, for labels */
	const char *method;  /* static: response.method, or NULL */
	const char *name;    /* static: response.name, or NULL */
	const char *outcome; /* static, or NULL (then from the status) */
	char subject[FLEET_ID_MAX], client[FLEET_ID_MAX];
	char trace[33];
	struct fleet_actor actor; /* the bearer token's principal, checked on the headers */
	/* Handed to a worker (http_work.h): what it needs, read on the event thread first. */
	struct http_server *srv;
	struct MHD_Connection *conn;               /* suspended while the call waits and runs */
	bool queued;                               /* handed over; the next access call sends out */
	const char *h_version, *h_method, *h_name; /* MCP headers (libmicrohttpd's) or NULL */
	bool sse_ok;                               /* Accept admits text/event-stream */
	struct http_out out;
};

#endif
