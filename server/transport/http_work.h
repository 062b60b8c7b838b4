/* The HTTP workers and their admission: a call read whole waits in a bounded queue (by count and
 * by waiting time) for a place among the calls under way (calls_max), which a fixed number of
 * worker threads run as tasks (common/task.h): a call waiting for the database parks and holds
 * no thread. libmicrohttpd's event threads only read, check and answer: probes, refusals and
 * the queue's own answers never wait for a call, and a call that cannot be admitted is answered
 * 503 + Retry-After (nothing done), never reset. Knows no HTTP: it runs what it is handed. */
#ifndef BIKAROO_HTTP_WORK_H
#define BIKAROO_HTTP_WORK_H

#include <stdbool.h>

struct http_work_settings {
	long threads;       /* workers */
	long calls_max;     /* calls under way at once (parked ones included) */
	long queue_max;     /* calls waiting for a worker at most */
	long queue_wait_ms; /* a call that waited longer is not run */
	/* Runs one call (arg as submitted) on a worker: run is false when it waited past
	 * queue_wait_ms, or the pool stops, and is to be answered without being run. */
	void (*run)(void *arg, bool run);
};

struct http_work;

/* A new pool with its worker threads (free with http_work_free, which joins them). */
struct http_work *http_work_new(const struct http_work_settings *set);
/* Takes a place in the queue; false when it is full (the call is to be refused now). A place
 * taken is given back by http_work_push. */
bool http_work_reserve(struct http_work *w);
/* Queues arg (borrowed until its run) in the place reserved. */
void http_work_push(struct http_work *w, void *arg);
/* Calls waiting now, and waiting or running now (for the drain). */
long http_work_queued(struct http_work *w);
/* Stops: calls still queued are run with run false, the workers are joined, w is freed. */
void http_work_free(struct http_work *w);

#endif
