/* Prompts: the generic registry over a server description's prompt rows, read by prompts/list,
 * prompts/get, completion and the tests. Template prompts are loaded once at start from the prompts
 * directory; arguments are inserted as literal text and never interpreted. */
#ifndef BIKAROO_PROMPTS_H
#define BIKAROO_PROMPTS_H

#include "capability.h"

#define PROMPTS_FILE_MAX ((size_t)64 * 1024)

/* Loads and checks every template of s's rows from dir (mcp_service_new, after the resource
 * documents: templates may embed one). 0 on success, -1 (logged) otherwise. */
int prompts_load(struct mcp_service *svc, const char *dir) __attribute__((warn_unused_result));
void prompts_unload(struct mcp_service *svc);

const struct prompt_desc *prompts_find(const struct mcp_server *s, const char *name);

/* Renders template text with args (an object of strings, borrowed) in one pass: {{name}} is
 * replaced by the value as literal text, {{#name}}...{{/name}} is kept only when name has a
 * non-empty value. Inserted values are never scanned again. New string, or NULL when the
 * template is malformed. */
char *prompts_render_text(const char *tpl, json_t *args);

int prompts_list(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err);
int prompts_get(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err);

#endif
