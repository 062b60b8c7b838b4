/* The slow-client guard of the HTTP transport: a deadline for a request's headers and one for
 * its body, whatever the rate the bytes dribble in (libmicrohttpd only has an inactivity
 * timeout), and a cap on connections that have not completed their headers, past which the
 * oldest such connection is closed (a valid client sends its headers at once; a dribbler is
 * always the oldest), unless its socket holds a whole request not read yet (under load: a
 * valid call, answered, never cut). Knows sockets, not HTTP: the transport tells it what happened
 * on each connection, it shuts down the sockets whose time is up (shutdown(2), so the event loop
 * sees the end and closes the connection itself; the descriptor stays valid until then). */
#ifndef BIKAROO_GUARD_H
#define BIKAROO_GUARD_H

#include <stdbool.h>

struct guard_settings {
	long header_ms;   /* a request's headers must be complete this long after it began */
	long body_ms;     /* its body this long after its headers */
	long max_pending; /* connections waiting for headers at most; 0: no cap */
};

struct guard_counts {
	unsigned long header_deadline, body_deadline, evicted; /* connections closed for each */
	unsigned long pending;                                 /* waiting for headers now */
};

struct guard;
struct guard_conn;

/* New guard with its sweeper thread (free with guard_free, which joins it). */
struct guard *guard_new(const struct guard_settings *set);
void guard_free(struct guard *g);

/* A connection was accepted on fd (borrowed: open until guard_closed): its first request's
 * headers are due. Returns its handle (owned by the guard until guard_closed). */
struct guard_conn *guard_opened(struct guard *g, int fd);
/* Its request's headers are complete: the body is due. */
void guard_headers_done(struct guard *g, struct guard_conn *c);
/* Its request's body is complete: no deadline while the request is handled and answered. */
void guard_body_done(struct guard *g, struct guard_conn *c);
/* Its request was answered: the next request's headers are due (keep-alive). */
void guard_request_done(struct guard *g, struct guard_conn *c);
/* c now holds a stream open (no deadline): from now on the sweeper watches for its client
 * hanging up, which the event loop of a suspended connection does not see, and calls
 * hangup(arg) once, under the guard's lock, when the peer has closed. Until guard_unwatch(arg)
 * or guard_closed. */
void guard_watch(struct guard *g, struct guard_conn *c, void (*hangup)(void *arg), void *arg);
/* Whatever connection watches with arg no longer does; hangup(arg) is not called after this
 * returns. */
void guard_unwatch(struct guard *g, void *arg);
/* The connection is gone (before its descriptor is closed); c is freed. */
void guard_closed(struct guard *g, struct guard_conn *c);
/* Closes every connection waiting for headers (idle kept-alive ones, and any whose request has
 * not arrived whole): nothing was begun on them. For the graceful stop, so that a proxy drops
 * its idle connections to this server now rather than sending on them at the end. */
void guard_cut_waiting(struct guard *g);
struct guard_counts guard_counts(struct guard *g);

#endif
