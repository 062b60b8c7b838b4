/* The stdio transport (`bikaroo-mcp stdio`): newline-delimited JSON-RPC on stdin/stdout, the same
 * dispatch (mcp_handle) as HTTP, the identity fixed at start from the environment. */
#ifndef BIKAROO_STDIO_TRANSPORT_H
#define BIKAROO_STDIO_TRANSPORT_H

#include <stddef.h>

#include "domain/types.h"
#include "server/protocol/dispatch.h"

/* Requests read but not yet answered; reading pauses at this many. */
#define STDIO_MAX_INFLIGHT 64
/* subscriptions/listen requests one connection may hold open. */
#define STDIO_MAX_LISTENS 16

/* Serves server (loaded) as actor until EOF on stdin (or SIGINT/SIGTERM); lines longer than max
 * bytes are refused. Returns the process exit status. Writes nothing but JSON-RPC messages to
 * stdout; logs go to stderr. */
int stdio_serve(const struct mcp_service *server, const struct fleet_actor *actor, size_t max);

#endif
