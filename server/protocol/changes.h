/* Committed changes and who hears of them: the application's change feed (struct
 * mcp_change_feed, in the server description) reports them to sinks (a transport's listen
 * streams and subscriptions). */
#ifndef BIKAROO_PROTOCOL_CHANGES_H
#define BIKAROO_PROTOCOL_CHANGES_H

#include <jansson.h>
#include <stdbool.h>

/* A task whose state changed (the Tasks extension, tasks.h), as its provider publishes it. */
struct mcp_task_change {
	const char *id;
	/* Whom it belongs to: only the listens of this subject through this client application
	 * that named the task hear of it. */
	const char *subject, *client;
	const json_t *detail; /* the DetailedTask as tasks/get answers its owner (borrowed) */
};

/* A committed change, as the application's change feed reports it; exactly one member is set. */
struct mcp_change {
	const char *uri;                    /* a resource whose content changed */
	const char *subject;                /* a principal whose rights changed */
	const char *client;                 /* a client application whose rights changed */
	const struct mcp_task_change *task; /* a task whose state changed */
};

/* A receiver of changes (a transport's subscriptions). */
struct mcp_change_sink {
	/* A committed change; c NULL after a gap in the feed (anything may have changed, rights
	 * too). Called on the feed's thread, under its lock: never call add or remove from here. */
	void (*changed)(const struct mcp_change *c, void *arg);
	/* Every few seconds (keep-alives, expiries), or NULL. */
	void (*tick)(void *arg);
	void *arg;
	struct mcp_change_sink *next; /* the feed's */
};

/* The application's change feed. add() starts listening before it returns, so that nothing
 * committed after a subscription is acknowledged is missed; adding a sink twice is a no-op. */
struct mcp_change_feed {
	void (*add)(struct mcp_change_sink *s);
	void (*remove)(struct mcp_change_sink *s);
};

/* Whether c is a change of the rights of this subject or of this client application. */
bool mcp_change_of_rights_of(const struct mcp_change *c, const char *subject, const char *client);

#endif
