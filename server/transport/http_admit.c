/* A call's wait for a slot of its loop (http_admit.h). */
#include "http_admit.h"

#include <limits.h>
#include <stdatomic.h>

#include "common/loop.h"
#include "common/metrics.h"
#include "common/trace.h"
#include "http_reply.h"

/* Calls past calls_max wait, suspended (a connection and its request's buffers, no stack), for
 * a slot, but only as long as a caller would wait for an answer at all: a call that would, at
 * the pace its loop finishes calls, start later than its horizon from now is answered 503 +
 * Retry-After at once, nothing done (on its headers: its token never checked, its body read
 * only to keep its connection); a round of slots (calls_max) may always wait. The horizon is
 * HTTP_WAIT_TARGET_MS for a call on a new connection, whose client may still go elsewhere, and
 * the wait's own bound HTTP_WAIT_MAX_MS for one on a connection kept alive: one connection
 * carries one call at a time, so what such calls can make wait is bounded by the loop's
 * connections, and their client, refused, sends the same call again on the same connection at
 * once (at 1,000 kept-alive connections refusals on the short horizon were most answers and
 * halved the calls served: bench/README.md, decision 3). So under overload the calls run wait
 * little, the excess is refused in words while its client can still go elsewhere, and no
 * request read is ever reset. The waiting ones go first in, first out while the wait empties
 * now and then; newest first once it has stood non-empty for HTTP_NEWEST_AFTER_MS, so that the
 * calls run are those whose clients are still there (the adaptive LIFO of B. Maurer, "Fail at
 * Scale", ACM Queue 13(8), 2015). One that waited HTTP_WAIT_MAX_MS (the pace fell, as when the
 * database stalls) is answered 503 too. The shapes measured against this one: bench/README.md,
 * decision 3. */
#define HTTP_NEWEST_AFTER_MS 100
#define HTTP_WAIT_MAX_MS 1000
#define HTTP_WAIT_TARGET_MS 20
#define HTTP_PACE_WINDOW_MS 20

/* Ends the pace's window once it is HTTP_PACE_WINDOW_MS old: one in which calls waited counts. */
static void http_pace(struct http_loop *hl, long long now)
{
	if (now - hl->pace_t0 < HTTP_PACE_WINDOW_MS)
		return;
	if (hl->wait_first && hl->pace_t0) {
		double r = (double)hl->done / (double)(now - hl->pace_t0);
		hl->per_ms = hl->per_ms > 0 ? 0.75 * hl->per_ms + 0.25 * r : r;
	}
	hl->done = 0;
	hl->pace_t0 = now;
}

/* Whether a call arriving now would wait past its horizon at the loop's pace. */
bool http_wait_full(const struct http_loop *hl, bool kept_alive)
{
	if (hl->calls < hl->calls_max)
		return false;
	double room = hl->per_ms * (kept_alive ? HTTP_WAIT_MAX_MS : HTTP_WAIT_TARGET_MS);
	return (double)hl->waiting >= (room > (double)hl->calls_max ? room : (double)hl->calls_max);
}

static void http_wait_unlink(struct http_loop *hl, struct http_req *st)
{
	*(st->wait_prev ? &st->wait_prev->wait_next : &hl->wait_first) = st->wait_next;
	*(st->wait_next ? &st->wait_next->wait_prev : &hl->wait_last) = st->wait_prev;
	st->wait_prev = st->wait_next = NULL;
	hl->waiting--;
}

/* st answered 503 + Retry-After without being run (why: the metric's reason). */
void http_shed(struct http_req *st, const char *why)
{
	const char *reason[] = {why};
	metrics_add(&metrics_http_shed, reason, 1);
	st->outcome = "shed";
	st->out = (struct http_out){
		.status = 503,
		.body = http_error_body(MCP_RATE_LIMITED, HTTP_SHED_TEXT),
		.retry_after = 1,
	};
	st->answered = true;
}

/* A waiting call answered 503 without being run. */
static void http_wait_refuse(struct http_loop *hl, struct http_req *st, const char *why)
{
	http_wait_unlink(hl, st);
	http_shed(st, why);
	MHD_resume_connection(st->conn);
	hl->resumed = true;
}

void http_wait(struct http_loop *hl, struct http_req *st)
{
	st->wait_t0 = loop_now_ms();
	st->wait_ns[0] = trace_enabled() ? trace_now_ns() : 0;
	if (!hl->wait_first)
		hl->busy_since = st->wait_t0;
	st->wait_prev = hl->wait_last;
	*(hl->wait_last ? &hl->wait_last->wait_next : &hl->wait_first) = st;
	hl->wait_last = st;
	hl->waiting++;
}

struct http_req *http_wait_next(struct http_loop *hl, long long now, long long *due)
{
	bool stop = atomic_load(&hl->stop);
	http_pace(hl, now);
	while (hl->wait_first && (stop || now - hl->wait_first->wait_t0 >= HTTP_WAIT_MAX_MS))
		http_wait_refuse(hl, hl->wait_first, stop ? "stopping" : "waited");
	if (!hl->wait_first) {
		hl->busy_since = 0;
		*due = LLONG_MAX;
		return NULL;
	}
	*due = hl->wait_first->wait_t0 + HTTP_WAIT_MAX_MS;
	if (hl->calls >= hl->calls_max)
		return NULL;
	bool newest = now - hl->busy_since >= HTTP_NEWEST_AFTER_MS;
	struct http_req *st = newest ? hl->wait_last : hl->wait_first;
	http_wait_unlink(hl, st);
	return st;
}
