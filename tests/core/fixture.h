/* A server description for the protocol core's unit tests: one read tool (scope bit
 * FLEET_SCOPE_READ, "fleet:read") with an output schema, plus the tools and methods a test
 * adds. Built without capabilities or a database: what the core does with any description. */
#ifndef BIKAROO_CORE_FIXTURE_H
#define BIKAROO_CORE_FIXTURE_H

#include "server/protocol/dispatch.h"
#include "server/protocol/server.h"

#define CORE_SERVER_NAME "core-test-server"
#define CORE_READ_TOOL "get_bike_status"

/* Fills *s with the read tool then extra (n rows, borrowed) and methods (m rows, borrowed), and
 * returns it loaded (mcp_service_free() it). */
struct mcp_service *core_server(struct mcp_server *s, const struct tool_desc *extra, size_t n,
				const struct mcp_method *methods, size_t m);
/* s loaded with the repository's resources and prompts directories; fails the test if it
 * cannot be. */
struct mcp_service *core_load(const struct mcp_server *s);

#endif
