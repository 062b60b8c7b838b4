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

/* ---- cursors of a list a tool answers in pages ----------------------------------------------
 * A page of a list that changes while it is read starts after a place (the sort key of the last
 * row shown, e.g. a time and an id), not at an offset: rows that leave or join before it move
 * no other row into or out of the next page. The place travels in the cursor
 * sealed (reqstate.h) for the caller, the tool and its arguments but "cursor", and expires
 * after PAGER_CURSOR_TTL_S: a made-up, altered, transplanted or stale cursor is refused. */
#define PAGER_CURSOR_TTL_S 3600

/* The cursor of the page after place (borrowed) of the list ctx's tool answers for args
 * (borrowed; its "cursor" member is ignored). New string. */
char *pager_cursor_seal(const struct mcp_ctx *ctx, json_t *args, const char *place);
/* The query of the page args ask for (new JSON text, keys sorted): {"arguments": args but
 * "cursor", "after": the place its cursor carries, or null without one, "limit": limit}. NULL
 * when the cursor is not one pager_cursor_seal made for this caller, tool and arguments, or has
 * expired. */
char *pager_cursor_query(const struct mcp_ctx *ctx, json_t *args, size_t limit);

#endif
