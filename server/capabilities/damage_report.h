/* Damage report: the report_damaged_bike tool (its schemas and description, its handler) and
 * the server-side confirmation (input_required + a sealed requestState) for client
 * applications registered with requires_confirmation. */
#ifndef BIKAROO_DAMAGE_REPORT_H
#define BIKAROO_DAMAGE_REPORT_H

#include "server/protocol/mcp.h"

extern const char damage_report_description[];
extern const char damage_report_in[];  /* input JSON Schema */
extern const char damage_report_out[]; /* output JSON Schema */

/* report_damaged_bike (tool_fn). Writes the audit row of every call it handles (the database
 * does so for the outcomes it decides). */
int damage_report_call(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err);

#endif
