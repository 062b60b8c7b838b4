/* The ids a caller may see, for completion (a resource template's variable, a prompt's
 * argument): bike ids and investigation case ids, each as its read would show them, through the
 * one read path (reads.h). No MCP, JSON-RPC or HTTP here. */
#ifndef BIKAROO_IDS_H
#define BIKAROO_IDS_H

#include "types.h"

#define IDS_MAX_COMPLETIONS 100
/* Longest id completed, NUL included: a bike's VL- and 6 digits, a case's IC- and 9. */
#define IDS_ID_MAX FLEET_BIKE_ID_MAX

enum ids_kind {
	IDS_BIKE, /* bike ids (fleet.bike_ids_for): the bikes of the caller's perimeter, id order */
	IDS_CASE, /* case ids (fleet.case_ids_for): the cases the caller may read, active first */
};

/* Up to IDS_MAX_COMPLETIONS ids of kind starting with prefix (compared literally; a case's also
 * with IC- and prefix) among those actor may see, best first, into ids; *n is how many were
 * written and *total how many match in all. A prefix that no id can start with yields zero
 * matches, not an error. */
enum fleet_status ids_complete(enum ids_kind kind, const struct fleet_actor *actor,
			       const char *prefix, char ids[][IDS_ID_MAX], size_t *n, long *total)
	__attribute__((warn_unused_result));

#endif
