/* The catalogue: the list of what Bikaroo serves, one value per capability file (its rows,
 * schemas, governance, audit policy and handlers are declared there), in listing order, and the
 * server description made of them. Adding a capability is a file in this folder and a line in
 * each list below (make new-capability writes both). */
#include "catalog.h"

#include "change_feed.h"
#include "common/version.h"

extern const struct mcp_capability capability_bike_status;
extern const struct mcp_capability capability_damage_report;
extern const struct mcp_capability capability_status_codes;
extern const struct mcp_capability capability_procedures;
extern const struct mcp_capability capability_catalog;
extern const struct mcp_capability capability_ui_views;
extern const struct mcp_capability capability_cases;

/* One line a capability, in listing order. */
/* clang-format off */
static const struct mcp_capability *const catalog[] = {
	&capability_bike_status,
	&capability_damage_report,
	&capability_status_codes,
	&capability_procedures,
	&capability_catalog,
	&capability_ui_views,
	&capability_cases,
};
/* clang-format on */

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
		.caller_scopes = adapter_caller_scopes,
		.audit = adapter_audit,
		.changes = &change_feed,
		.app = app,
	};
	return mcp_server_compose(out, catalog, sizeof catalog / sizeof catalog[0]);
}
