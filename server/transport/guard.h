/* The slow-client guard of an HTTP loop: a deadline for a request's headers and one for its body,
 * whatever the rate the bytes dribble in (libmicrohttpd only has an inactivity timeout), and a
 * cap on fresh connections (accepted, no request completed yet: no token shown). Slowness is
 * judged by the client's own clock: a connection is cut for its headers only once it has had
 * header_ms to send them since its loop accepted it (and the loop accepts only what it reads at
 * once), and at the cap the oldest fresh connection is cut only when it has had a grace of its
 * own and the server has read all it sent (a valid client sends its headers at once; a dribbler
 * is always the oldest; it is told why first, cut_for_room); otherwise nothing is cut and the
 * loop stops accepting: new connections wait in the kernel's backlog, never reset. Kept-alive
 * connections between two requests have shown a valid one already: they have the header deadline,
 * not the cap. Knows sockets, not HTTP: the transport tells it what happened on each connection; it
 * shuts down the sockets whose time is up (shutdown(2), so the event loop sees the end and closes
 * the connection itself; the descriptor stays valid until then). Ticked by its loop; a mutex guards
 * it all the same, since listen streams are watched and unwatched from other threads. */
#ifndef BIKAROO_GUARD_H
#define BIKAROO_GUARD_H

#include <stdbool.h>

struct guard_settings {
	long header_ms;   /* a request's headers must be complete this long after it began */
	long body_ms;     /* its body this long after its headers */
	long max_pending; /* fresh connections at most; 0: no cap */
	/* Told of the socket of a fresh connection cut to make room, before it is shut down: its
	 * client is told why (it sent nothing yet: the socket's buffer is empty). NULL: nothing. */
	void (*cut_for_room)(int fd);
};

struct guard_counts {
	unsigned long header_deadline, body_deadline, evicted; /* connections closed for each */
	unsigned long pending;                                 /* fresh now */
};

struct guard;
struct guard_conn;

struct guard *guard_new(const struct guard_settings *set);
void guard_free(struct guard *g);

/* What is due by now_ms: connections past their deadline are cut, watched streams whose peer
 * hung up are told. Returns when to tick again (CLOCK_MONOTONIC ms). */
long long guard_tick(struct guard *g, long long now_ms);

/* Whether a new connection may be accepted now: below the cap, or once the oldest fresh
 * connection that had its grace and holds nothing unread was cut to make room. */
bool guard_room(struct guard *g, long long now_ms);

/* A connection was accepted on fd (borrowed: open until guard_closed): its first request's
 * headers are due. Returns its handle (owned by the guard until guard_closed). */
struct guard_conn *guard_opened(struct guard *g, int fd);
/* Its request's headers are complete: the body is due. */
void guard_headers_done(struct guard *g, struct guard_conn *c);
/* Its request's body is complete: no deadline while the request is handled and answered. */
void guard_body_done(struct guard *g, struct guard_conn *c);
/* Its request was answered: the next request's headers are due (keep-alive), without the cap. */
void guard_request_done(struct guard *g, struct guard_conn *c);
/* c now holds a stream open (no deadline): from now on the guard watches for its client hanging
 * up, which the event loop of a suspended connection does not see, and calls hangup(arg) once,
 * under the guard's lock, when the peer has closed. Until guard_unwatch(arg) or guard_closed. */
void guard_watch(struct guard *g, struct guard_conn *c, void (*hangup)(void *arg), void *arg);
/* Whatever connection watches with arg no longer does; hangup(arg) is not called after this
 * returns. */
void guard_unwatch(struct guard *g, void *arg);
/* Whether c has had no request answered yet (a fresh connection; NULL: not fresh). */
bool guard_fresh(const struct guard_conn *c);
/* The connection is gone (before its descriptor is closed); c is freed. */
void guard_closed(struct guard *g, struct guard_conn *c);
/* Closes every connection waiting for headers (fresh or kept alive): nothing was begun on them.
 * For the graceful stop, so that a proxy drops its idle connections to this server now rather
 * than sending on them at the end. */
void guard_cut_waiting(struct guard *g);
struct guard_counts guard_counts(struct guard *g);

#endif
