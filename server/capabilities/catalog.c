/* The server description: every capability the build generated from its declaration
 * (server/capabilities/NAME.json: rows, schemas, governance, roles, audit policy, handlers), in
 * the order of their names, and the hooks. Adding a capability adds no line here. */
#include "catalog.h"

#include "change_feed.h"
#include "common/version.h"
#include "gen/capabilities.h"
#include "task_provider.h"

static const char catalog_instructions[] =
	"Bikaroo fleet operations. Use get_bike_status to look up one bike by its id (VL- and 4 to "
	"6 digits). You only see bikes in the caller's regions; a bike outside them reads as not "
	"found, exactly like an unknown bike. For a damage report, follow the prompt "
	"investigate-damaged-bike and the resource bikaroo://procedures/damaged-bike; "
	"bikaroo://fleet/status-codes explains every status code. Use report_damaged_bike once "
	"per real damage report (it makes the bike unavailable and opens or extends its "
	"investigation case); send an idempotencyKey so that a retry cannot file the report twice.";

int catalog_describe(struct mcp_server *out, const struct mcp_app *app)
{
	*out = (struct mcp_server){
		.name = "bikaroo-fleet-mcp",
		.title = "Bikaroo Fleet",
		.version = BIKAROO_VERSION, /* common/version.h */
		.instructions = catalog_instructions,
		.tools_logger = "bikaroo.tools",
		.governance_key = CATALOG_GOVERNANCE_KEY,
		.extensions = "{\"" ADAPTER_UI_EXTENSION "\":{}}",
		.caller = adapter_caller,
		.tasks = &task_provider,
		.audit = adapter_audit,
		.changes = &change_feed,
		.app = app,
	};
	return mcp_server_compose(out, capabilities_all, capabilities_count);
}
