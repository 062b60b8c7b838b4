/* A call's wait for one of its loop's calls_max slots under overload: whether it may wait, the
 * wait itself (suspended: a connection and its request's buffers, no stack), its order, and the
 * 503 + Retry-After of a call refused for want of a slot (http_admit.c says the rule). Run on the
 * loop's own thread, as everything of a struct http_loop. */
#ifndef BIKAROO_HTTP_ADMIT_H
#define BIKAROO_HTTP_ADMIT_H

#include <stdbool.h>

#include "http_server.h"

#define HTTP_SHED_TEXT "Service Unavailable: too many calls under way; retry (nothing was done)"

/* Whether a call arriving now would wait for a slot longer than its loop's pace allows, on a
 * connection kept alive (an earlier request of its answered) or a new one. */
bool http_wait_full(const struct http_loop *hl, bool kept_alive);
/* st answered 503 + Retry-After without being run (why: the metric's reason); st->out set. */
void http_shed(struct http_req *st, const char *why);
/* st joins its loop's wait (its caller suspends its connection). */
void http_wait(struct http_loop *hl, struct http_req *st);
/* The loop's hook's part: the waiting calls past their bound (or all, once the loop stops)
 * answered 503 and resumed; then the next call to start, taken out of the wait, while a slot is
 * free (NULL when none); *due: when the wait is next due (LLONG_MAX: nothing waits). */
struct http_req *http_wait_next(struct http_loop *hl, long long now, long long *due);

#endif
