/* Volume limits on tools/call: token buckets per subject and per client application, one budget
 * for reads and one for writes. A call takes one token from its subject's bucket and one from its
 * client application's; past either, it is refused with the seconds until a token is back. The
 * buckets live in this process (several instances each keep their own: see docs/limits.md). */
#ifndef BIKAROO_RATELIMIT_H
#define BIKAROO_RATELIMIT_H

#include <stdbool.h>

/* Per subject: per_minute tokens come back each minute, up to burst. A client application's
 * buckets are client_factor times as large and as fast. per_minute 0 switches a budget off. */
struct ratelimit_settings {
	long read_per_minute, read_burst;
	long write_per_minute, write_burst;
	long client_factor;
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

#endif
