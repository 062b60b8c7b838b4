/* Views for hosts that render MCP Apps (the extension io.modelcontextprotocol/ui): the bike
 * card and the case timeline, two HTML documents under resources/ served as ui:// resources,
 * and the _meta that links tools and the case template to them. Only a client that declared
 * the extension (with the text/html;profile=mcp-app content type) sees any of it. */
#ifndef BIKAROO_UI_VIEWS_CAPABILITY_H
#define BIKAROO_UI_VIEWS_CAPABILITY_H

#include "server/protocol/mcp.h"

#define UI_VIEWS_EXTENSION "io.modelcontextprotocol/ui"
#define UI_VIEWS_MIME_TYPE "text/html;profile=mcp-app"
#define UI_VIEWS_CARD_URI "ui://bikaroo/bike-card"
#define UI_VIEWS_TIMELINE_URI "ui://bikaroo/case-timeline"
#define UI_VIEWS_CARD_FILE "bike-card.html"
#define UI_VIEWS_TIMELINE_FILE "case-timeline.html"

/* What server/discover lists under capabilities.extensions. */
extern const char ui_views_extensions[];

/* A tool's link to the card (get_bike_status, report_damaged_bike); the case template's link to
 * the timeline. */
extern const struct mcp_ext_meta ui_views_card_link;
extern const struct mcp_ext_meta ui_views_timeline_link;

/* The views' own rows: they exist only for clients that declared the extension, and carry
 * their rendering hints (_meta.ui.prefersBorder) in the listing and the content. */
extern const struct mcp_ext_meta ui_views_document;

#endif
