/* The change feed: PostgreSQL's NOTIFY bikaroo_changes (triggers of migration 0006) carries the
 * key of every business entity whose content changed, and NOTIFY bikaroo_rights (0007) names
 * every caller whose rights changed (or "all", or a capability whose rules changed), both at
 * commit. Entity keys, not MCP URIs: mapping them to resources is the server's business. The
 * process's one follower is one connection of its own, opened when someone subscribes or the
 * rights generation is watched (changes_watch). */
#ifndef BIKAROO_CHANGES_H
#define BIKAROO_CHANGES_H

#include <stdbool.h>

struct changes;

/* What one notification says; exactly one member is set. */
struct change {
	const char *entity;  /* an entity whose content changed: "bike:VL-2048", "case:IC-1001",
				"status_codes" */
	const char *subject; /* a principal whose role, regions or activity changed */
	const char *client;  /* a client application whose rights changed */
};

/* Who hears of changes. */
struct changes_listener {
	/* A committed change; c NULL after a gap in the feed (the connection was lost: anything
	 * may have changed meanwhile, rights too). Called on the follower's thread, under its
	 * lock: never call changes_follow() or changes_unfollow() from here. */
	void (*changed)(const struct change *c, void *arg);
	/* Every second (keep-alives, expiries), or NULL. */
	void (*tick)(void *arg);
	void *arg;                     /* identifies the listener (changes_unfollow) */
	struct changes_listener *next; /* the follower's */
};

/* The follower is a process singleton: one thread and one LISTEN connection of its own,
 * started with the first listener, which keeps reconnecting while the database is away and
 * tells a gap once it is back. changes_follow() registers l (borrowed until unfollowed) and
 * returns once the follower listens, so nothing committed afterwards is missed; false (nothing
 * registered) when a listener with l->arg is registered already. */
bool changes_follow(struct changes_listener *l);
/* Starts the follower, if it does not run, without a listener: for the rights generation.
 * Returns once it listens, or failed to connect (it tries again every second). From a thread
 * that may block (start-up). */
void changes_watch(void);
/* The rights generation: a number that changes whenever a committed rights change (of anyone,
 * bikaroo_rights) is heard and whenever the feed starts or stops listening; *live tells whether
 * it listens now. Rights read while it was g, and while it listened, are current while it is
 * still g: only then may they be kept (domain/rights.h). From any thread, without a lock. */
unsigned long long changes_rights_generation(bool *live);
/* Unregisters the listener with arg; returns it (NULL: none). */
struct changes_listener *changes_unfollow(const void *arg);
/* Stops the follower's thread (at shutdown, after every listener is gone). */
void changes_stop(void);

#endif
