/* Volume limits on tools/call: token buckets per subject and per client application, one budget
 * for reads and one for writes. A call takes one token from its subject's bucket and one from its
 * client application's; past either, it is refused with the seconds until a token is back.
 *
 * Where the buckets live: in this process, or, when the application hands a budget store (a
 * hook: the core never knows it is a database), in buckets shared by every instance of the
 * deployment. Then this process takes leases of several tokens from the shared bucket and spends
 * them here: one store call per lease, none for a call its lease covers, none for a refusal
 * while the shared bucket is known to be empty. When the store cannot answer, this process uses
 * its own buckets for RATELIMIT_STORE_RETRY_S and says so (the metrics), then tries again. */
#ifndef BIKAROO_RATELIMIT_H
#define BIKAROO_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>

#include "domain/types.h"

/* Most tokens one lease takes from a shared bucket (fewer for small buckets: burst / 8). */
#define RATELIMIT_LEASE_MAX 16
/* Seconds on this process's own buckets after the store failed, before it is tried again. */
#define RATELIMIT_STORE_RETRY_S 5
/* Client applications named in the refusal metrics; the others count as "other". */
#define RATELIMIT_CLIENT_LABELS 32

/* The deployment-wide budget store, the application's. take() takes the leases l[0..n) (n is 1
 * or 2, a subject's before its client application's), each in full or not at all, in one step;
 * 0, or -1 when the store cannot answer. Called from any worker thread, never under the
 * limiter's lock. */
struct ratelimit_store {
	int (*take)(void *ctx, struct fleet_budget_lease *l, size_t n);
	void *ctx;
};

/* Per subject: per_minute tokens come back each minute, up to burst. A client application's
 * buckets are client_factor times as large and as fast. per_minute 0 switches a budget off.
 * store: NULL (buckets of this process) or the shared store (borrowed, for the limiter's life). */
struct ratelimit_settings {
	long read_per_minute, read_burst;
	long write_per_minute, write_burst;
	long client_factor;
	const struct ratelimit_store *store;
};

enum ratelimit_status { RATELIMIT_OK = 0, RATELIMIT_LIMITED };

struct ratelimit;

/* New limiter (caller frees with ratelimit_free); settings copied. */
struct ratelimit *ratelimit_new(const struct ratelimit_settings *set);
void ratelimit_free(struct ratelimit *rl);
/* Takes a token of the read (write false) or write budget for subject and client (borrowed).
 * RATELIMIT_LIMITED: nothing taken, *retry_after_s (>= 1) is when to try again. */
enum ratelimit_status ratelimit_take(struct ratelimit *rl, const char *subject, const char *client,
				     bool write, long *retry_after_s)
	__attribute__((warn_unused_result));
/* Calls refused so far, reads and writes (for /metrics). */
void ratelimit_counts(struct ratelimit *rl, unsigned long *reads, unsigned long *writes);
/* Whether the limiter has a store and is on its own buckets because the store failed lately. */
bool ratelimit_on_fallback(struct ratelimit *rl);

#endif
