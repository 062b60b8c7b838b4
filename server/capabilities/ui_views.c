/* The MCP Apps views (ui_views.h). The documents are self-contained HTML5 (inline script and
 * style, no external origin), so no _meta.ui.csp is declared and the host's restrictive default
 * policy applies. They show a tool result's structuredContent and call tools through the host;
 * the server's checks apply to those calls unchanged. */
#include "ui_views.h"

const char ui_views_extensions[] = "{\"" UI_VIEWS_EXTENSION "\":{}}";

/* The extension's settings name the content types a host renders (mimeTypes, REQUIRED). */
#define UI_VIEWS_DECLARED                                                                          \
	.extension = UI_VIEWS_EXTENSION, .setting_key = "mimeTypes",                               \
	.setting_value = UI_VIEWS_MIME_TYPE

const struct mcp_ext_meta ui_views_card_link = {
	UI_VIEWS_DECLARED,
	.meta = "{\"ui\":{\"resourceUri\":\"" UI_VIEWS_CARD_URI "\"}}",
};

const struct mcp_ext_meta ui_views_timeline_link = {
	UI_VIEWS_DECLARED,
	.meta = "{\"ui\":{\"resourceUri\":\"" UI_VIEWS_TIMELINE_URI "\"}}",
};

const struct mcp_ext_meta ui_views_document = {
	UI_VIEWS_DECLARED,
	.meta = "{\"ui\":{\"prefersBorder\":true}}",
	.exclusive = true,
};
