/* Pagination for every list method: opaque cursors, deterministic order, caching hints. */
#ifndef BIKAROO_PAGER_H
#define BIKAROO_PAGER_H

#include "mcp.h"

#define PAGER_PAGE_SIZE 50

/* Builds {key: page of items, nextCursor?, ttlMs, cacheScope} from all (stolen) using
 * params.cursor. An invalid cursor is -32602 "Invalid cursor". Returns 0 or -1. */
int pager_page(struct mcp_ctx *ctx, json_t *params, json_t *all, const char *key, long ttl_ms,
	       bool private_scope, json_t **result, struct mcp_error *err)
	__attribute__((warn_unused_result));

/* Encodes/decodes an offset as an opaque cursor. decode returns 0 on success. */
void pager_encode(size_t offset, char *buf, size_t cap);
int pager_decode(const char *cursor, size_t *offset) __attribute__((warn_unused_result));

#endif
