/* The standard MCP methods of each era with their handlers, and the lifecycle methods
 * (server/discover, initialize, ping); a server description may add its own. */
#ifndef BIKAROO_METHODS_H
#define BIKAROO_METHODS_H

#include "server.h"

/* The method named name in era: a standard one, else one of s->methods; NULL when none. */
const struct mcp_method *methods_find(const struct mcp_server *s, const char *name,
				      enum mcp_era era);

#endif
