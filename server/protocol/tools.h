/* Tools: the generic registry over a server description's tool table, read by tools/list,
 * tools/call and the tests; and the CallToolResult builder every tool shares. */
#ifndef BIKAROO_TOOLS_H
#define BIKAROO_TOOLS_H

#include "capability.h"

/* Parses and checks every row's schemas (schema_check) into svc (mcp_service_new). 0 on
 * success. */
int tools_load(struct mcp_service *svc) __attribute__((warn_unused_result));
void tools_unload(struct mcp_service *svc);

/* Parsed schemas of row i of svc's description (borrowed; NULL past the end or without
 * outputSchema). */
const json_t *tools_input_schema(const struct mcp_service *svc, size_t i);
const json_t *tools_output_schema(const struct mcp_service *svc, size_t i);

int tools_list(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err);
int tools_call(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err);

/* Builds a CallToolResult: text content plus optional structured content (stolen). */
json_t *tools_result(const char *text, json_t *structured, bool is_error);

/* The successful CallToolResult of a document written as text (doc[0..n): a JSON object as
 * jsonw writes it), never a tree: its text block and its structuredContent, written once for
 * the response, byte for byte what tools_result(doc, the document, false) would be answered as
 * in ctx's revision and era. For a tool_fn of a dispatched call, which then returns 0 with
 * *result NULL. */
void tools_result_text(struct mcp_ctx *ctx, const char *doc, size_t n);

#endif
