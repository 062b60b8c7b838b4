/* The prompt registry: one descriptor row per prompt, read by prompts/list, prompts/get,
 * completion and the tests. Template prompts are loaded once at start from the prompts
 * directory; arguments are inserted as literal text and never interpreted. */
#ifndef BIKAROO_PROMPTS_H
#define BIKAROO_PROMPTS_H

#include "completion.h"
#include "mcp.h"

#define PROMPTS_MAX_ARGS 4
#define PROMPTS_FILE_MAX ((size_t)64 * 1024)

struct prompt_arg_desc {
	const char *name;
	const char *title;
	const char *description;
	bool required;
	size_t max_len;              /* in characters; longer is -32602 */
	bool (*valid)(const char *); /* NULL: any text */
	const char *invalid_message; /* -32602 message when valid() refuses */
	completion_fn complete;      /* NULL: no completion */
};

struct prompt_desc;

/* Builds a GetPromptResult for a fixture prompt; args are checked against the descriptor. */
typedef int (*prompt_render_fn)(struct mcp_ctx *ctx, const struct prompt_desc *p, json_t *args,
				json_t **result, struct mcp_error *err);

struct prompt_desc {
	const char *name;
	const char *title;
	const char *description;
	/* Template under the prompts directory (a constant name), or NULL when render is set.
	 * Format: see prompts/README.md. */
	const char *file;
	prompt_render_fn render;
	size_t nargs;
	struct prompt_arg_desc args[PROMPTS_MAX_ARGS];
};

/* Registers extra rows after the built-in ones (borrowed; call before prompts_init()). */
void prompts_set_extra(const struct prompt_desc *extra, size_t n);

/* Loads and checks every template of dir (call after resources_init(): templates may embed a
 * resource). 0 on success, -1 (logged) otherwise. */
int prompts_init(const char *dir) __attribute__((warn_unused_result));
void prompts_cleanup(void);

const struct prompt_desc *prompts_find(const char *name);

/* Renders template text with args (an object of strings, borrowed) in one pass: {{name}} is
 * replaced by the value as literal text, {{#name}}...{{/name}} is kept only when name has a
 * non-empty value. Inserted values are never scanned again. New string, or NULL when the
 * template is malformed. */
char *prompts_render_text(const char *tpl, json_t *args);

int prompts_list(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err);
int prompts_get(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err);

#endif
