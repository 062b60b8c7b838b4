/* Budgets: token buckets shared by every instance of a deployment, in PostgreSQL
 * (fleet.budget_take, migration 0012). An instance takes leases of several tokens and spends
 * them in memory (server/protocol/ratelimit.c): one statement per lease, never per call. */
#ifndef BIKAROO_BUDGETS_H
#define BIKAROO_BUDGETS_H

#include <stddef.h>

#include "types.h"

#define BUDGETS_MAX_LEASES 4

/* Takes l[0..n) (n <= BUDGETS_MAX_LEASES), in order, in one statement of its own on the
 * calling thread's connection: each up to its want, as many whole tokens as its bucket holds,
 * with the level left.
 * FLEET_UNAVAILABLE when the database cannot answer, or the table is locked past the
 * function's lock timeout (100 ms); FLEET_INVALID for leases the function refuses. */
enum fleet_status budgets_take(struct fleet_budget_lease *l, size_t n)
	__attribute__((warn_unused_result));

#endif
