/* Bike status: the get_bike_status tool, the bikaroo://fleet/bikes/{bikeId} template, the bikeId
 * completer, and the one JSON view of a bike that all three share. */
#ifndef BIKAROO_BIKE_STATUS_H
#define BIKAROO_BIKE_STATUS_H

#include "domain/bikes.h"
#include "server/protocol/mcp.h"

extern const char bike_status_description[];
extern const char bike_status_in[];  /* input JSON Schema */
extern const char bike_status_out[]; /* output JSON Schema */

/* get_bike_status (tool_fn): the audited read, its row written in the same round trip. */
int bike_status_call(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err);

/* bikaroo://fleet/bikes/{bikeId} (resource_read_fn): the same read and rules as the tool. */
enum resource_status bike_status_read(struct mcp_ctx *ctx, const char *uri, const char *value,
				      json_t **result, struct mcp_error *err);

/* Completer for {bikeId} (completion_fn): the caller's perimeter only, prefix match, id order. */
int bike_status_complete(struct mcp_ctx *ctx, const char *prefix, json_t **values, long *total,
			 struct mcp_error *err);

/* One bike's status as the tool's structured content and the template's document (new): one
 * shape, matching the tool's outputSchema. */
json_t *bike_status_json(const struct fleet_bike_status *b);

#endif
