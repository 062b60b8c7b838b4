/* completion/complete: argument completion for prompts and resource templates. The values come
 * from the completer named in the prompt's or template's descriptor row (completion_fn, mcp.h). */
#ifndef BIKAROO_COMPLETION_H
#define BIKAROO_COMPLETION_H

#include "capability.h"

/* Longest argument.value accepted; longer is -32602. */
#define COMPLETION_VALUE_MAX 256

int completion_complete(struct mcp_ctx *ctx, json_t *params, json_t **result,
			struct mcp_error *err);

#endif
