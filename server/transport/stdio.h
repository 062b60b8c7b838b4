/* The stdio transport (`bikaroo-mcp stdio`): newline-delimited JSON-RPC on stdin/stdout, the same
 * dispatch (mcp_handle) as HTTP, the identity fixed at start from the environment. */
#ifndef BIKAROO_STDIO_TRANSPORT_H
#define BIKAROO_STDIO_TRANSPORT_H

#include "domain/types.h"
#include "server/cfg.h"

/* Requests processed at once; a notifications/cancelled can arrive while they run. */
#define STDIO_WORKERS 4
/* Requests read but not yet answered; reading pauses at this many. */
#define STDIO_MAX_INFLIGHT 64
/* subscriptions/listen requests one connection may hold open. */
#define STDIO_MAX_LISTENS 16

/* The identity of a stdio server, fixed for the life of the process. Today: the configured
 * local identity (BIKAROO_LOCAL_*); the one place to change when identity comes from a token
 * in the environment. 0 on success, -1 (logged) otherwise. */
int stdio_identity(const struct cfg *cfg, struct fleet_actor *out)
	__attribute__((warn_unused_result));

/* Serves until EOF on stdin (or SIGINT/SIGTERM); returns the process exit status. Writes nothing
 * but JSON-RPC messages to stdout; logs go to stderr. The caller has initialised the registries
 * and the database. */
int stdio_serve(const struct cfg *cfg, const struct fleet_actor *actor);

#endif
