/* The standard method table, and the lifecycle methods: server/discover, initialize, ping
 * (logging/setLevel is in notify.c). Names, instructions and tables come from the server
 * description. */
#include "methods.h"

#include <string.h>

#include "completion.h"
#include "service.h"
#include "notify.h"
#include "prompts.h"
#include "resources.h"
#include "tasks.h"
#include "tools.h"

/* The server's capabilities object (new reference): the same in both eras, but for
 * resources.subscribe, offered where the connection can keep subscriptions (stdio), and the
 * extensions, listed in server/discover. */
static json_t *methods_capabilities(const struct mcp_ctx *ctx)
{
	/* logging: every tools/call tells its outcome (tools.c), when the request asks for it. */
	json_t *caps = json_pack("{s:{}, s:{}, s:{}, s:{}, s:{}}", "tools", "resources", "prompts",
				 "completions", "logging");
	if (resources_subscribe_offered(ctx))
		json_object_set_new(json_object_get(caps, "resources"), "subscribe", json_true());
	/* Extensions are negotiated per request in 2026-07-28 (server/discover lists them). */
	if (ctx->modern && ctx->service->extensions) /* parsed once, shared read-only */
		json_object_set(caps, "extensions", ctx->service->extensions);
	return caps;
}

static int methods_discover(struct mcp_ctx *ctx, json_t *params, json_t **result,
			    struct mcp_error *err)
{
	(void)ctx;
	(void)params;
	(void)err;
	json_t *r = json_pack("{s:[s], s:o}", "supportedVersions", MCP_VERSION_MODERN,
			      "capabilities", methods_capabilities(ctx));
	if (ctx->server->instructions)
		json_object_set_new(r, "instructions", json_string(ctx->server->instructions));
	mcp_cacheable(r, 3600000, false);
	*result = r;
	return 0;
}

/* Legacy handshake: counter-offer our newest legacy revision when the asked one is unknown. */
static int methods_initialize(struct mcp_ctx *ctx, json_t *params, json_t **result,
			      struct mcp_error *err)
{
	(void)ctx;
	(void)err;
	const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
	const char *v = mcp_legacy_version(0);
	for (size_t i = 0; asked && mcp_legacy_version(i); i++)
		if (strcmp(asked, mcp_legacy_version(i)) == 0)
			v = mcp_legacy_version(i);
	const struct mcp_server *s = ctx->server;
	json_t *info = json_pack("{s:s, s:s}", "name", s->name, "version", s->version);
	if (s->title && strcmp(v, "2025-06-18") >= 0)
		json_object_set_new(info, "title", json_string(s->title));
	*result = json_pack("{s:s, s:o, s:o}", "protocolVersion", v, "capabilities",
			    methods_capabilities(ctx), "serverInfo", info);
	if (s->instructions)
		json_object_set_new(*result, "instructions", json_string(s->instructions));
	return 0;
}

static int methods_ping(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err)
{
	(void)ctx;
	(void)params;
	(void)err;
	*result = json_object();
	return 0;
}

#define BOTH (MCP_ERA_MODERN | MCP_ERA_LEGACY)

static const struct mcp_method methods_table[] = {
	{"server/discover", MCP_ERA_MODERN, NULL, methods_discover, true},
	{"initialize", MCP_ERA_LEGACY, NULL, methods_initialize, true},
	{"ping", MCP_ERA_LEGACY, NULL, methods_ping, true},
	{"logging/setLevel", MCP_ERA_LEGACY, NULL, notify_set_level, false},
	{"resources/subscribe", MCP_ERA_LEGACY, NULL, resources_subscribe, false},
	{"resources/unsubscribe", MCP_ERA_LEGACY, NULL, resources_unsubscribe, false},
	{"subscriptions/listen", MCP_ERA_MODERN, NULL, resources_listen, false},
	{"tools/list", BOTH, NULL, tools_list, false},
	{"tools/call", BOTH, "name", tools_call, false},
	{"resources/list", BOTH, NULL, resources_list, false},
	{"resources/templates/list", BOTH, NULL, resources_templates_list, false},
	{"resources/read", BOTH, "uri", resources_read, false},
	{"prompts/list", BOTH, NULL, prompts_list, false},
	{"prompts/get", BOTH, "name", prompts_get, false},
	{"completion/complete", BOTH, NULL, completion_complete, false},
};

/* The Tasks extension's methods, served only with a task provider (the 2025-11-25 tasks/result
 * and tasks/list are gone: -32601, as for any unknown method). Mcp-Name carries the taskId. */
static const struct mcp_method methods_tasks[] = {
	{"tasks/get", MCP_ERA_MODERN, "taskId", tasks_get, false},
	{"tasks/update", MCP_ERA_MODERN, "taskId", tasks_update, false},
	{"tasks/cancel", MCP_ERA_MODERN, "taskId", tasks_cancel, false},
};

/* The row of t[0..n) named name in era, or NULL. */
static const struct mcp_method *methods_in(const struct mcp_method *t, size_t n, const char *name,
					   enum mcp_era era)
{
	for (size_t i = 0; i < n; i++)
		if ((t[i].eras & era) && strcmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

const struct mcp_method *methods_find(const struct mcp_server *s, const char *name,
				      enum mcp_era era)
{
	const struct mcp_method *m = methods_in(
		methods_table, sizeof methods_table / sizeof methods_table[0], name, era);
	if (!m && s->tasks)
		m = methods_in(methods_tasks, sizeof methods_tasks / sizeof methods_tasks[0], name,
			       era);
	return m ? m : methods_in(s->methods, s->nmethods, name, era);
}
