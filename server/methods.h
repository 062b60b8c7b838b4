/* The method registry: which MCP methods exist in which era, and their handlers. */
#ifndef BIKAROO_METHODS_H
#define BIKAROO_METHODS_H

#include "mcp.h"

enum methods_era { METHODS_MODERN = 1, METHODS_LEGACY = 2 };

struct mcp_method {
	const char *name;
	unsigned eras;          /* enum methods_era bits */
	const char *name_param; /* params key mirrored in the Mcp-Name header, or NULL */
	mcp_handler_fn fn;
};

/* The method named name in era, or NULL. */
const struct mcp_method *methods_find(const char *name, enum methods_era era);

/* Adds methods (borrowed, static; consulted after the table) and the capabilities they bring to
 * 2025-era clients (a JSON object text merged into the initialize result's capabilities). For
 * the test-only conformance server; call once before serving. */
void methods_set_extra(const struct mcp_method *extra, size_t n, const char *legacy_caps_json);

#endif
