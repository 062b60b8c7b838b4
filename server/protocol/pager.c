/* Opaque list cursors: "bk1." + 8 hex digits of offset + 4 hex digits of a check value.
 * Not a secret, only tamper-evident enough that a made-up cursor is refused as invalid. */
#include "pager.h"

#include <stdio.h>
#include <string.h>

#include "capability.h"
#include "common/mem.h"
#include "reqstate.h"

/* The method a list cursor is sealed for: never a request's, so that neither a cursor nor a
 * requestState opens as the other. */
#define PAGER_CURSOR_METHOD "pager/cursor"

static unsigned pager_check(size_t offset)
{
	return (unsigned)((offset * 2654435761u) >> 7) & 0xFFFFu;
}

void pager_encode(size_t offset, char *buf, size_t cap)
{
	snprintf(buf, cap, "bk1.%08zx%04x", offset, pager_check(offset));
}

int pager_decode(const char *cursor, size_t *offset)
{
	if (strlen(cursor) != 16 || strncmp(cursor, "bk1.", 4) != 0)
		return -1;
	size_t off = 0;
	unsigned check = 0;
	for (int i = 4; i < 16; i++) {
		char c = cursor[i];
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else
			return -1;
		if (i < 12)
			off = off * 16 + d;
		else
			check = check * 16 + d;
	}
	if (check != pager_check(off))
		return -1;
	*offset = off;
	return 0;
}

int pager_page(struct mcp_ctx *ctx, json_t *params, json_t *all, const char *key, long ttl_ms,
	       bool private_scope, json_t **result, struct mcp_error *err)
{
	(void)ctx;
	size_t offset = 0, n = json_array_size(all);
	json_t *cursor = json_object_get(params, "cursor");
	if (cursor && !json_is_null(cursor)) {
		if (!json_is_string(cursor) ||
		    pager_decode(json_string_value(cursor), &offset) != 0 ||
		    (offset >= n && !(offset == 0 && n == 0))) {
			json_decref(all);
			return mcp_fail(err, MCP_INVALID_PARAMS, "Invalid cursor", NULL);
		}
	}
	json_t *page = json_array();
	size_t end = offset + PAGER_PAGE_SIZE < n ? offset + PAGER_PAGE_SIZE : n;
	for (size_t i = offset; i < end; i++)
		json_array_append(page, json_array_get(all, i));
	json_decref(all);
	json_t *r = json_object();
	json_object_set_new(r, key, page);
	if (end < n) {
		char next[32];
		pager_encode(end, next, sizeof next);
		json_object_set_new(r, "nextCursor", json_string(next));
	}
	mcp_cacheable(r, ttl_ms, private_scope);
	*result = r;
	return 0;
}

/* The digest a cursor is bound to: the tool and its arguments but the cursor. */
static void pager_cursor_digest(const struct mcp_ctx *ctx, json_t *args, char out[65])
{
	json_t *list = json_is_object(args) ? json_copy(args) : json_object();
	json_object_del(list, "cursor");
	json_t *bound = json_pack("{s:s, s:o}", "tool", ctx->tool ? ctx->tool->name : "",
				  "arguments", list);
	reqstate_digest(bound, out);
	json_decref(bound);
}

char *pager_cursor_seal(const struct mcp_ctx *ctx, json_t *args, const char *place)
{
	char digest[65];
	pager_cursor_digest(ctx, args, digest);
	json_t *payload = json_pack("{s:s}", "after", place);
	char *cursor = reqstate_seal(ctx->req->actor, PAGER_CURSOR_METHOD, digest, payload,
				     PAGER_CURSOR_TTL_S, NULL);
	json_decref(payload);
	return cursor;
}

char *pager_cursor_query(const struct mcp_ctx *ctx, json_t *args, size_t limit)
{
	json_t *cursor = json_object_get(args, "cursor"), *payload = NULL;
	char digest[65];
	pager_cursor_digest(ctx, args, digest);
	if (cursor && (!json_is_string(cursor) ||
		       reqstate_open(json_string_value(cursor), ctx->req->actor,
				     PAGER_CURSOR_METHOD, digest, &payload, NULL) != REQSTATE_OK))
		return NULL;
	const char *after = json_string_value(json_object_get(payload, "after"));
	char *text = NULL;
	if (!cursor || after) {
		json_t *list = json_copy(args);
		json_object_del(list, "cursor");
		json_t *q = json_pack("{s:o, s:s?, s:I}", "arguments", list, "after", after,
				      "limit", (json_int_t)limit);
		text = json_dumps(q, JSON_COMPACT | JSON_SORT_KEYS);
		json_decref(q);
	}
	json_decref(payload);
	return text;
}
