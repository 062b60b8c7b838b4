/* The method table, and the lifecycle methods: server/discover, initialize, ping
 * (logging/setLevel is in notify.c). */
#include "methods.h"

#include <string.h>

#include "completion.h"
#include "notify.h"
#include "prompts.h"
#include "resources.h"
#include "tools.h"

static const char methods_instructions[] =
	"Bikaroo fleet operations. Use get_bike_status to look up one bike by its id (VL- and 4 to "
	"6 digits). You only see bikes in the caller's regions; a bike outside them reads as not "
	"found, exactly like an unknown bike. For a damage report, follow the prompt "
	"investigate-damaged-bike and the resource bikaroo://procedures/damaged-bike; "
	"bikaroo://fleet/status-codes explains every status code. Use report_damaged_bike once "
	"per real damage report (it makes the bike unavailable and opens or extends its "
	"investigation case); send an idempotencyKey so that a retry cannot file the report twice.";

/* The server's capabilities object (new reference): the same in both eras, but for
 * resources.subscribe, offered where the connection can keep subscriptions (stdio). */
static json_t *methods_capabilities(const struct mcp_ctx *ctx)
{
	/* logging: every tools/call tells its outcome (tools.c), when the request asks for it. */
	json_t *caps = json_pack("{s:{}, s:{}, s:{}, s:{}, s:{}}", "tools", "resources", "prompts",
				 "completions", "logging");
	if (resources_subscribe_offered(ctx))
		json_object_set_new(json_object_get(caps, "resources"), "subscribe", json_true());
	return caps;
}

static int methods_discover(struct mcp_ctx *ctx, json_t *params, json_t **result,
			    struct mcp_error *err)
{
	(void)ctx;
	(void)params;
	(void)err;
	json_t *r = json_pack("{s:[s], s:o, s:s}", "supportedVersions", MCP_VERSION_MODERN,
			      "capabilities", methods_capabilities(ctx), "instructions",
			      methods_instructions);
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
	json_t *info =
		json_pack("{s:s, s:s}", "name", MCP_SERVER_NAME, "version", MCP_SERVER_VERSION);
	if (strcmp(v, "2025-06-18") >= 0)
		json_object_set_new(info, "title", json_string("Bikaroo Fleet"));
	*result = json_pack("{s:s, s:o, s:o, s:s}", "protocolVersion", v, "capabilities",
			    methods_capabilities(ctx), "serverInfo", info, "instructions",
			    methods_instructions);
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

#define BOTH (METHODS_MODERN | METHODS_LEGACY)

static const struct mcp_method methods_table[] = {
	{"server/discover", METHODS_MODERN, NULL, methods_discover},
	{"initialize", METHODS_LEGACY, NULL, methods_initialize},
	{"ping", METHODS_LEGACY, NULL, methods_ping},
	{"logging/setLevel", METHODS_LEGACY, NULL, notify_set_level},
	{"resources/subscribe", METHODS_LEGACY, NULL, resources_subscribe},
	{"resources/unsubscribe", METHODS_LEGACY, NULL, resources_unsubscribe},
	{"subscriptions/listen", METHODS_MODERN, NULL, resources_listen},
	{"tools/list", BOTH, NULL, tools_list},
	{"tools/call", BOTH, "name", tools_call},
	{"resources/list", BOTH, NULL, resources_list},
	{"resources/templates/list", BOTH, NULL, resources_templates_list},
	{"resources/read", BOTH, "uri", resources_read},
	{"prompts/list", BOTH, NULL, prompts_list},
	{"prompts/get", BOTH, "name", prompts_get},
	{"completion/complete", BOTH, NULL, completion_complete},
};

static const struct mcp_method *methods_extra;
static size_t methods_nextra;

void methods_set_extra(const struct mcp_method *extra, size_t n)
{
	methods_extra = extra;
	methods_nextra = n;
}

const struct mcp_method *methods_find(const char *name, enum methods_era era)
{
	for (size_t i = 0; i < sizeof methods_table / sizeof methods_table[0]; i++)
		if ((methods_table[i].eras & era) && strcmp(methods_table[i].name, name) == 0)
			return &methods_table[i];
	for (size_t i = 0; i < methods_nextra; i++)
		if ((methods_extra[i].eras & era) && strcmp(methods_extra[i].name, name) == 0)
			return &methods_extra[i];
	return NULL;
}
