/* The tool registry: one descriptor per tool, read by tools/list, tools/call and the tests. */
#ifndef BIKAROO_TOOLS_H
#define BIKAROO_TOOLS_H

#include "mcp.h"

typedef int (*tool_fn)(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err);

struct tool_desc {
	const char *name;
	const char *title;
	const char *description;
	const char *input_schema;  /* JSON text */
	const char *output_schema; /* JSON text, or NULL */
	bool read_only, destructive, idempotent;
	unsigned scope;         /* enum fleet_scope bit the token must carry (0: none) */
	const char *scope_name; /* its OAuth name, for challenges */
	tool_fn fn;
	bool self_audit; /* fn writes the audit row of every call it handles */
};

/* Appends rows (borrowed, static) after the registry; call before tools_init. Used by the
 * test-only conformance server (tests/conformance) to register its fixture tools. */
void tools_set_extra(const struct tool_desc *extra, size_t n);

/* Parses and checks every descriptor's schemas; 0 on success. */
int tools_init(void) __attribute__((warn_unused_result));
void tools_cleanup(void);

/* The registry, for tests. */
const struct tool_desc *tools_table(size_t *count);
/* Parsed schemas of tool i (borrowed). */
const json_t *tools_input_schema(size_t i);
const json_t *tools_output_schema(size_t i);

/* What the caller may use, as enum fleet_scope bits, for filtering every list (tools, resources,
 * templates, prompts). 0, or -1 with *err filled when the database cannot say. */
int tools_caller_scopes(struct mcp_ctx *ctx, unsigned *may, struct mcp_error *err)
	__attribute__((warn_unused_result));
/* Turns the audit rows of tools/call on (the product) or off (unit tests and the conformance
 * server, which have no business database). Off until called. */
void tools_set_audit(bool on);

int tools_list(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err);
int tools_call(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err);

/* One bike's status as get_bike_status's structured content and the bike template's document
 * (new reference): one shape, matching the tool's outputSchema. */
json_t *tools_bike_status_json(const struct fleet_bike_status *b);

/* Builds a CallToolResult: text content plus optional structured content (stolen). */
json_t *tools_result(const char *text, json_t *structured, bool is_error);

#endif
