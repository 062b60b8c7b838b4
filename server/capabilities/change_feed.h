/* The change feed for the protocol core: the domain's changes (domain/changes.h: entities whose
 * content changed, callers whose rights changed), each entity mapped to the resource URI that
 * shows it, told to every sink (the transports' listen hubs). The domain's follower is a
 * process singleton, stopped with changes_stop(). */
#ifndef BIKAROO_CHANGE_FEED_H
#define BIKAROO_CHANGE_FEED_H

#include "server/protocol/changes.h"

/* The feed, for the server description (struct mcp_server.changes). */
extern const struct mcp_change_feed change_feed;

#endif
