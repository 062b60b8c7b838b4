/* Cases: bikaroo://cases/{caseId}, one investigation case with its reports and events, read as
 * the caller (the same perimeter rules as the tools). */
#ifndef BIKAROO_CASES_CAPABILITY_H
#define BIKAROO_CASES_CAPABILITY_H

#include "domain/cases.h"
#include "server/protocol/mcp.h"

#define CASES_URI_PREFIX "bikaroo://cases/"

/* The template's read (resource_read_fn): per user, cacheScope private. */
enum resource_status cases_read_template(struct mcp_ctx *ctx, const char *uri, const char *value,
					 json_t **result, struct mcp_error *err);

/* Reads case_id for ctx's actor. On success returns 0 and sets *contents to a new array with
 * one application/json text content. Unknown and invisible cases alike: -1 with "Resource not
 * found" (-32602; -32002 for legacy clients) and data {uri}; never an empty contents array. */
int cases_resource_read(struct mcp_ctx *ctx, const char *case_id, json_t **contents,
			struct mcp_error *err);

/* The case as JSON (new reference), for the resource and for tests. */
json_t *cases_json(const struct case_file *c);

#endif
