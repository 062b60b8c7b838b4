/* bikaroo://cases/{caseId}: one investigation case with its reports and events, read as the
 * caller (the same perimeter rules as the tools). The resources registry plugs this in. */
#ifndef BIKAROO_CASE_RESOURCE_H
#define BIKAROO_CASE_RESOURCE_H

#include "domain/cases.h"
#include "server/protocol/mcp.h"

#define CASE_RESOURCE_PREFIX "bikaroo://cases/"
/* For the resources/templates/list row. Results of case_resource_read are per user: the
 * registry should mark them cacheScope "private". */
#define CASE_RESOURCE_TEMPLATE "bikaroo://cases/{caseId}"
#define CASE_RESOURCE_NAME "investigation-case"
#define CASE_RESOURCE_TITLE "Investigation case"
#define CASE_RESOURCE_DESCRIPTION                                                                  \
	"An investigation case (caseId, e.g. IC-1001) with its damage reports and events. Fleet "  \
	"operators see every case of their regions; others the cases they opened or reported "     \
	"into."

/* Reads case_id (the part of the URI after CASE_RESOURCE_PREFIX) for ctx's actor. On success
 * returns 0 and sets *contents to a new array with one application/json text content.
 * Unknown and invisible cases alike: -1 with "Resource not found" (-32602; -32002 for legacy
 * clients) and data {uri}; never an empty contents array. */
int case_resource_read(struct mcp_ctx *ctx, const char *case_id, json_t **contents,
		       struct mcp_error *err);

/* The case as JSON (new reference), for the resource and for tests. */
json_t *case_resource_json(const struct case_file *c);

#endif
