/* bikaroo://cases/{caseId}: one investigation case with its reports and events, read as the
 * caller (the same perimeter rules as the tools). The resources registry plugs this in. */
#ifndef BIKAROO_CASE_RESOURCE_H
#define BIKAROO_CASE_RESOURCE_H

#include "../domain/report.h"
#include "mcp.h"

#define CASE_RESOURCE_PREFIX "bikaroo://cases/"

/* Reads case_id (the part of the URI after CASE_RESOURCE_PREFIX) for ctx's actor. On success
 * returns 0 and sets *contents to a new array with one application/json text content.
 * Unknown and invisible cases alike: -1 with "Resource not found" (-32602; -32002 for legacy
 * clients) and data {uri}; never an empty contents array. */
int case_resource_read(struct mcp_ctx *ctx, const char *case_id, json_t **contents,
		       struct mcp_error *err);

/* The case as JSON (new reference), for the resource and for tests. */
json_t *case_resource_json(const struct report_case *c);

#endif
