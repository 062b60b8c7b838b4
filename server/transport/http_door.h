/* The door of an HTTP loop: new connections the loop cannot take (it holds its share of
 * connections) are accepted and answered here, without libmicrohttpd and without reading more
 * than the request line: 503 with Retry-After and Connection: close, or 200 for a GET /healthz
 * (the process lives; /readyz gets the 503: an instance that refuses is not ready). A
 * connection from an address past its share is answered 429 with Retry-After at once, whatever
 * it asks. Then the door lingers,
 * reading and dropping what the client still sends until it closes, so that the client reads the
 * answer rather than a reset. Never more than its capacity at once: past it the loop leaves new
 * connections in the kernel's backlog. On the loop's thread only. */
#ifndef BIKAROO_HTTP_DOOR_H
#define BIKAROO_HTTP_DOOR_H

#include <stdbool.h>

#include "common/loop.h"

/* Why a connection is answered at the door. */
enum http_door_why {
	HTTP_DOOR_FULL,        /* 503: the loop holds its share of connections */
	HTTP_DOOR_PER_ADDRESS, /* 429: BIKAROO_MAX_CONNECTIONS_PER_IP from this address */
};

struct http_door;

/* A door on loop l for at most max connections at once. */
struct http_door *http_door_new(struct loop *l, long max);
/* Closes what is still at the door. On the loop's thread (or once it no longer turns). */
void http_door_free(struct http_door *d);
/* Whether the door can take one more connection now. */
bool http_door_room(const struct http_door *d);
/* Takes fd (accepted, non-blocking; owned from now on) to answer it; false when the door is
 * full (fd untouched, still the caller's). */
bool http_door_take(struct http_door *d, int fd, enum http_door_why why);
/* Closes the connections whose time at the door is up; when it is next due (0: nothing). */
long long http_door_tick(struct http_door *d, long long now_ms);

#endif
