/* The change feed: one thread per process follows the domain's changes (domain/changes.h:
 * entities whose content changed, callers whose rights changed), maps each entity to the
 * resource URIs that show it, and tells every registered sink (the transports' listen hubs).
 * It opens its database connection with the first sink and keeps trying while the database is
 * away (reporting a gap once it is back). */
#ifndef BIKAROO_CHANGE_FEED_H
#define BIKAROO_CHANGE_FEED_H

#include "server/protocol/mcp.h"

/* The feed, for the server description (struct mcp_server.changes). */
extern const struct mcp_change_feed change_feed;

/* Stops the thread (at shutdown, after every sink is removed). */
void change_feed_stop(void);

#endif
