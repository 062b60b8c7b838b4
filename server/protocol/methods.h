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

/* Adds methods (borrowed, static), consulted after the table. For tests that need a method
 * the product does not have; call before serving. */
void methods_set_extra(const struct mcp_method *extra, size_t n);

/* The method named name in era, or NULL. */
const struct mcp_method *methods_find(const char *name, enum methods_era era);

#endif
