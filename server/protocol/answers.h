/* Answers kept as text: a result that depends only on a short key (what a caller may see, the
 * revision, the page), serialised once for the service's life and sent as bytes afterwards.
 * Inside the protocol core only (dispatch.c keeps and sends them; a registry names the key). */
#ifndef BIKAROO_ANSWERS_H
#define BIKAROO_ANSWERS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/mem.h"
#include "mcp.h"

/* At most this many answers are kept (a result past them is built each time, as if none were
 * kept), each key shorter than ANSWERS_KEY_MAX. */
#define ANSWERS_MAX 64
#define ANSWERS_KEY_MAX 128

/* A request's side (mcp_ctx.answer, on dispatch's stack): the key its handler's result depends
 * on ("": none), and the text kept under it when one was found, or the result its handler wrote
 * as text (written, owned by dispatch; tools_result_text). */
struct mcp_answer {
	char key[ANSWERS_KEY_MAX];
	const char *text;
	size_t len;
	struct mem_buf written;
};

struct answers;

struct answers *answers_new(void);
void answers_free(struct answers *a);

/* The text kept under key, borrowed for the life of a (never changed once kept), and its length
 * in *len; or NULL. Any thread, without a lock. */
const char *answers_find(const struct answers *a, const char *key, size_t *len);

/* Keeps a copy of text under key, unless one is kept there already or ANSWERS_MAX are kept.
 * Any thread. */
void answers_keep(struct answers *a, const char *key, const char *text);

/* For a handler whose result depends on nothing but key (every fact of the request and of the
 * caller it reads, in words or bits: never a subject, whose rights change): true when a result
 * is kept as text under key, which the handler then answers by returning 0 with *result NULL;
 * false, and the result it returns is kept under key (dispatch.c). False too, keeping nothing,
 * for a key of ANSWERS_KEY_MAX characters or more. */
bool answers_known(struct mcp_ctx *ctx, const char *key);

/* Ends a result written as text (b: its object's members, open) with what dispatch adds to
 * every result of ctx's era (the tree's own path: dispatch.c, mcp_shape_result). */
void answers_shape_text(const struct mcp_ctx *ctx, struct mem_buf *b);

#endif
