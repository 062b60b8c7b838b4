/* Fixtures of the test-only conformance server: the tools, resources and prompts the official
 * conformance suite calls by fixed names (see each scenario's description in
 * @modelcontextprotocol/conformance). Never linked into bikaroo-mcp. */
#ifndef BIKAROO_CONF_FIXTURES_H
#define BIKAROO_CONF_FIXTURES_H

#include <jansson.h>
#include <stddef.h>

#include "server/protocol/dispatch.h"
#include "server/protocol/server.h"
#include "server/protocol/tools.h"
#include "taskstore.h"

/* The fixture tools (static rows, after the product's in the description). */
const struct tool_desc *conf_tools(size_t *n);

/* The tasks scenarios' fixture tools (fixtures_tasks.c), and how their tasks' jobs end (for the
 * task store, taskstore.h). */
const struct tool_desc *conf_task_tools(size_t *n);
taskstore_finish_fn conf_task_finish(void);

/* Where 2025-era HTTP requests keep their resource subscriptions (per process), and their
 * release. */
extern const struct mcp_subscriptions conf_subscriptions;
void conf_subscriptions_cleanup(void);

/* ---- resources, templates, prompts, completion ------------------------------------------
 * Plain rows and handlers (fixtures_catalog.c), registered with the resources and prompts
 * registries' extension hooks by registries.c. */

/* A fixed resource: text or blob (base64), never both. */
struct conf_resource {
	const char *uri, *name, *title, *description, *mime_type;
	const char *text;
	const char *blob_b64;
};
const struct conf_resource *conf_resources(size_t *n);

/* A resource template and how one of its URIs reads. */
struct conf_template {
	const char *uri_template, *name, *title, *description, *mime_type;
};
const struct conf_template *conf_templates(size_t *n);
/* Reads uri if it matches a fixture template: 0 and *contents (new ReadResourceResult
 * contents array), or -1 when no template matches. */
int conf_template_read(const char *uri, json_t **contents);

/* A prompt: its arguments and a handler with the method-handler contract of mcp.h (params are
 * the whole prompts/get params, so that MRTR fixtures see inputResponses). */
struct conf_prompt_arg {
	const char *name, *description;
	bool required;
};
struct conf_prompt {
	const char *name, *title, *description;
	const struct conf_prompt_arg *args;
	size_t nargs;
	mcp_handler_fn get;
};
const struct conf_prompt *conf_prompts(size_t *n);

/* completion/complete for a fixture prompt argument: values (new array) or NULL. */
json_t *conf_complete(const char *prompt, const char *argument, const char *value);

#endif
