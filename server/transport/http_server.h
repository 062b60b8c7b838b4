/* The HTTP transport's state, shared by its files (http.c starts and stops it; http_route.c
 * routes requests; http_reply.c, http_stream.c, http_auth.c, http_health.c answer them). Not a
 * public header: the rest of the server sees struct http_server as opaque (http.h). Everything
 * that changes while the server runs lives in one struct http_server, in one of its loops
 * (struct http_loop: touched on that loop's thread only, but where it says) or in one request's
 * struct http_req: the transport has no process-wide variable. */
#ifndef BIKAROO_HTTP_SERVER_H
#define BIKAROO_HTTP_SERVER_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "domain/types.h"
#include "guard.h"
#include "listen.h"
#include "server/auth/auth.h"
#include "server/protocol/dispatch.h"

#include "common/loop.h"
#include "common/span.h"

struct MHD_Connection;
struct MHD_Daemon;
struct http_stream;
struct http_server;
struct http_door;

/* One event loop of the transport, on a thread of its own: its listening socket (each loop has
 * one on the shared port, SO_REUSEPORT), the connections it accepted, its libmicrohttpd daemon
 * (external epoll, its epoll set inside the loop's), its calls (tasks), its guard; its
 * database connections and batches are the loop's too (domain/pg/exec.h). A request lives on
 * the loop that accepted its connection, from its first byte to its last. */
struct http_loop {
	struct http_server *srv;
	struct loop *loop;
	pthread_t thread;
	struct MHD_Daemon *daemon;
	struct loop_fd listen;  /* its own listening socket */
	struct loop_fd mhd;     /* the daemon's epoll set */
	struct loop_hook hook;  /* accepts, the daemon's timeouts and resumed connections, guard */
	struct guard *guard;    /* header and body deadlines, the pending-headers cap */
	struct http_door *door; /* new connections it does not take, answered (http_door.h) */
	long conns, conns_max;  /* connections open, and at most */
	long calls, calls_max;  /* calls under way (tasks), and at most: past it they wait */
	/* Calls read whole that wait for one of calls_max (http_admit), oldest first, and since
	 * when the wait has not been empty. */
	struct http_req *wait_first, *wait_last;
	long waiting;
	long long busy_since;
	/* The loop's pace: calls finished a millisecond, measured over windows of
	 * HTTP_PACE_WINDOW_MS while calls waited (then they finish as fast as the loop can finish
	 * them), smoothed; done counts the current window's since pace_t0. */
	double per_ms;
	long done;
	long long pace_t0;
	bool accepting;   /* the listening socket is watched */
	bool resumed;     /* a connection was resumed since the daemon last ran */
	atomic_bool stop; /* http_stop: leave once no call is left */
};

struct http_server {
	struct http_loop *loops;
	long nloops;
	bool running;        /* the loops' threads were started */
	struct peers *peers; /* connections per client address, across the loops */
	const struct mcp_service *mcp;
	struct fleet_actor actor;
	bool tokens; /* every request carries a bearer token (auth.c); actor is unused */
	size_t max_body;
	char *allowed_hosts;
	char *allowed_origins;
	struct listen_hub *hub;           /* the listen streams */
	struct listen_out_ops stream_ops; /* how a listen stream's bytes leave (http_stream.c) */
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
	long call_timeout_ms; /* each call's deadline (its task's) */
};

/* A call's answer, made by its task and sent once its connection resumes. */
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
	bool dropping;    /* refused on its headers: its body is dropped, the answer follows it */
	size_t discarded; /* bytes thrown away since */
	/* A status written on the socket itself (the 413 of a streamed body), or 0. */
	unsigned socket_status;
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
	/* Traces (common/trace.h): the traceparent header's context and its tracestate (borrowed
	 * from libmicrohttpd), the HTTP version ("1.1"), when the request arrived, when its token
	 * was checked and when it waited for a call slot (unix ns, 0: it did not); its message's
	 * span once the core answered, ended with the access line, and the message as
	 * mcp.server.operation.duration labels it. */
	struct trace_ctx tctx;
	const char *tracestate;
	char proto[4];
	long long arrived_ns, auth_ns[2], wait_ns[2];
	struct trace_span *span;
	/* The authorization's span when it waited for the issuer (its fetches kept inside), begun
	 * in the HTTP request's trace before the message is read: moved under the message's span
	 * once there is one (http_trace_parts), else ended on its own when the request ends. */
	struct trace_span *auth_span;
	struct mcp_operation op;
	struct fleet_actor actor; /* the bearer token's principal, checked on the headers */
	/* A token whose check needs the issuer: checked by a task of the loop while the connection
	 * waits, suspended, before its body is read (http_auth.c). */
	const char *token; /* the bearer token (libmicrohttpd's, in the request's headers) */
	size_t token_len;
	bool auth_suspended; /* the connection waits for the check */
	bool auth_decided;   /* the task's verdict is in auth_st and auth_why */
	enum auth_status auth_st;
	const char *auth_why; /* static */
	/* A call: run as a task of its loop (common/task.h). */
	struct http_loop *hl;
	struct http_server *srv;
	struct MHD_Connection *conn;               /* suspended while the call's task waits */
	bool queued;                               /* a call: the next access call sends out */
	bool answered;                             /* its task made out */
	bool suspended;                            /* its connection waits for the task */
	const char *h_version, *h_method, *h_name; /* MCP headers (libmicrohttpd's) or NULL */
	bool sse_ok;                               /* Accept admits text/event-stream */
	struct http_out out;
	struct http_req *wait_prev, *wait_next; /* in its loop's wait (suspended) */
	long long wait_t0;                      /* when it began to wait */
};

/* The loop's hook: calls that waited too long answered 503, then as many waiting calls started
 * as calls_max allows (all refused once the loop stops). Returns when it is next due (or
 * LLONG_MAX). */
long long http_admit(struct http_loop *hl, long long now);

#endif
