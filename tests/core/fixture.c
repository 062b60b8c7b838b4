/* The protocol core's test description (see fixture.h). */
#include "fixture.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "server/protocol/tools.h"

#define CORE_MAX_TOOLS 8

static const char core_in[] =
	"{\"type\":\"object\",\"properties\":{\"bikeId\":{\"type\":\"string\","
	"\"pattern\":\"^VL-[0-9]{4,6}$\"}},\"required\":[\"bikeId\"],"
	"\"additionalProperties\":false}";
static const char core_out[] = "{\"type\":\"object\",\"properties\":{\"bikeId\":{\"type\":"
			       "\"string\"}},\"required\":[\"bikeId\"]}";

/* Echoes its argument: the core's path is under test, not a business. */
static int core_read(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err)
{
	(void)ctx, (void)err;
	json_t *sc = json_pack("{s:O}", "bikeId", json_object_get(args, "bikeId"));
	*result = tools_result("read", sc, false);
	return 0;
}

static struct tool_desc core_tools[CORE_MAX_TOOLS] = {
	{
		.name = CORE_READ_TOOL,
		.title = "Read",
		.description = "Reads one thing.",
		.input_schema = core_in,
		.output_schema = core_out,
		.read_only = true,
		.idempotent = true,
		.scope = FLEET_SCOPE_READ,
		.scope_name = "fleet:read",
		.fn = core_read,
	},
};

struct mcp_service *core_load(const struct mcp_server *s)
{
	struct mcp_service_config cfg = {.resources_dir = "resources", .prompts_dir = "prompts"};
	struct mcp_service *svc = mcp_service_new(s, &cfg);
	ck_assert_ptr_nonnull(svc);
	return svc;
}

struct mcp_service *core_server(struct mcp_server *s, const struct tool_desc *extra, size_t n,
				const struct mcp_method *methods, size_t m)
{
	ck_assert_uint_lt(n, CORE_MAX_TOOLS);
	for (size_t i = 0; i < n; i++)
		core_tools[1 + i] = extra[i];
	*s = (struct mcp_server){
		.name = CORE_SERVER_NAME,
		.title = "Core test server",
		.version = "0.0.1",
		.instructions = "For tests.",
		.methods = methods,
		.nmethods = m,
		.tools = core_tools,
		.ntools = 1 + n,
		.tools_logger = "core.tools",
	};
	return core_load(s);
}
