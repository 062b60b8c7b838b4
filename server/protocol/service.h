/* Inside the protocol core only: what loading a server description produced (each registry's
 * own part, opaque to the others) and the runtime state the registries share. Built by
 * mcp_service_new() (dispatch.c), read-only afterwards but for the rate limiter's own lock and the
 * answers kept. */
#ifndef BIKAROO_SERVICE_H
#define BIKAROO_SERVICE_H

#include <jansson.h>

#include "server.h"

struct mcp_service {
	const struct mcp_server *server;    /* the description (borrowed) */
	struct tools_loaded *tools;         /* parsed and compiled schemas (tools.c) */
	struct resources_loaded *resources; /* documents (resources.c) */
	struct prompts_loaded *prompts;     /* parsed templates (prompts.c) */
	json_t *extensions; /* the server's extensions object, parsed (NULL: none); read-only */
	struct ratelimit *limits; /* volume limits (borrowed), or NULL */
	struct answers *answers;  /* results kept as text (answers.h), its own lock-free reads */
};

#endif
