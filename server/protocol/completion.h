/* completion/complete: argument completion for prompts and resource templates. The values come
 * from the completer named in the prompt's or template's descriptor row. */
#ifndef BIKAROO_COMPLETION_H
#define BIKAROO_COMPLETION_H

#include "mcp.h"

/* Longest argument.value accepted; longer is -32602. */
#define COMPLETION_VALUE_MAX 256

/* A completer: values (new array of strings, at most 100, best first) starting with prefix among
 * what the caller may see, and *total how many exist in all. Returns 0, or -1 with err. */
typedef int (*completion_fn)(struct mcp_ctx *ctx, const char *prefix, json_t **values, long *total,
			     struct mcp_error *err);

/* Completer for bike ids ({bikeId}): the caller's perimeter only, prefix match, id order. */
int completion_bike_ids(struct mcp_ctx *ctx, const char *prefix, json_t **values, long *total,
			struct mcp_error *err);

int completion_complete(struct mcp_ctx *ctx, json_t *params, json_t **result,
			struct mcp_error *err);

#endif
