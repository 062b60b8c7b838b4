/* Views for hosts that render MCP Apps (the extension io.modelcontextprotocol/ui): the bike
 * card and the case timeline, two HTML documents under resources/ served as ui:// resources that
 * exist only for clients that declared the extension; the tools and the case template link to
 * them (adapter.h). The documents are self-contained HTML5 (inline script and style, no external
 * origin), so no _meta.ui.csp is declared and the host's restrictive default policy applies.
 * They show a tool result's structuredContent and call tools through the host; the server's
 * checks apply to those calls unchanged. */
#include "adapter.h"

static const struct mcp_governance ui_views_governance = {
	.version = "1.0.0",
	ADAPTER_GOV_STABLE,
	.risk = "none",
	.data = "none of its own: it shows what the tool result it is given carries",
	ADAPTER_GOV_READ_ONLY,
	.systems = "none (a document shipped with the server)",
	.audit = "none (the tool calls it makes through the host are audited)",
};

/* The views' own rows carry their rendering hints (_meta.ui.prefersBorder) in the listing and
 * the content. */
static const struct mcp_ext_meta ui_views_document = {
	.extension = ADAPTER_UI_EXTENSION,
	.setting_key = "mimeTypes",
	.setting_value = ADAPTER_UI_MIME_TYPE,
	.meta = "{\"ui\":{\"prefersBorder\":true}}",
	.exclusive = true,
};

static const struct resource_desc ui_views_resources[] = {
	{
		.uri = ADAPTER_UI_CARD_URI,
		.name = "bike-card",
		.title = "Bike card",
		.description = "A view of one bike (status, region, station, battery, last seen, "
			       "open case) with a form to report damage, for hosts that render MCP "
			       "Apps.",
		.mime_type = ADAPTER_UI_MIME_TYPE,
		.file = "bike-card.html",
		.ttl_ms = ADAPTER_DOC_TTL_MS,
		ADAPTER_SCOPE_READ,
		.governance = &ui_views_governance,
		.ext = &ui_views_document,
	},
	{
		.uri = ADAPTER_UI_TIMELINE_URI,
		.name = "case-timeline",
		.title = "Case timeline",
		.description = "A view of one investigation case: its damage reports and events in "
			       "time order, for hosts that render MCP Apps.",
		.mime_type = ADAPTER_UI_MIME_TYPE,
		.file = "case-timeline.html",
		.ttl_ms = ADAPTER_DOC_TTL_MS,
		ADAPTER_SCOPE_READ,
		.governance = &ui_views_governance,
		.ext = &ui_views_document,
	},
};

const struct mcp_capability capability_ui_views = {
	.name = "ui_views",
	.resources = ui_views_resources,
	.nresources = MCP_COUNT(ui_views_resources),
};
