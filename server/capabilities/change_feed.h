/* The process's follower of the change feed (domain/changes.h): one thread, started by the
 * first sink, that tells every registered sink each changed resource and each caller whose
 * rights changed. Transports register
 * a sink while they hold subscriptions (stdio: per connection; HTTP: per server). */
#ifndef BIKAROO_FEED_H
#define BIKAROO_FEED_H

#include "domain/changes.h"

/* Seconds between ticks (HTTP sends its SSE keep-alives on them), default 15. Call before the
 * first feed_add. */
void feed_set_tick(long seconds);

struct feed_sink {
	/* A committed change (a resource's content, or a caller's rights); c NULL after a gap in
	 * the feed (the database went away): any resource may have changed. Called on the feed's
	 * thread, under its lock: a sink must not call feed_add or feed_remove from here. */
	void (*changed)(const struct change *c, void *arg);
	/* On every tick, or NULL. */
	void (*tick)(void *arg);
	void *arg;
	struct feed_sink *next; /* the feed's */
};

/* Registers s (borrowed until feed_remove). The feed LISTENs before this returns, so that no
 * change committed after the caller acknowledges a subscription is missed; without a database
 * it keeps trying (and reports a gap once it is back). Adding a registered sink is a no-op. */
void feed_add(struct feed_sink *s);
void feed_remove(struct feed_sink *s);
/* Stops the thread (at shutdown, after every sink is removed). */
void feed_stop(void);

#endif
