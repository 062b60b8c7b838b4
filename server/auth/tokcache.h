/* A small, bounded, thread-safe cache of token validation results, keyed by the SHA-256 of the
 * token bytes (the token itself is never stored). Used for verified JWTs and for introspection
 * answers. An entry is served only while now < exp, for at most max_age seconds after it was
 * stored, and only for the key-set generation it was verified with. */
#ifndef BIKAROO_TOKCACHE_H
#define BIKAROO_TOKCACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "domain/types.h"

#define TOKCACHE_DIGEST 32 /* SHA-256 */
#define TOKCACHE_WAYS 4    /* entries per bucket; a full bucket evicts its oldest entry */
#define TOKCACHE_BUCKETS 1024
#define TOKCACHE_SLOTS (TOKCACHE_WAYS * TOKCACHE_BUCKETS)

struct tokcache; /* opaque; one lock per bucket, never held outside tokcache_* calls */

/* A cache serving entries for at most max_age seconds (0: the cache never answers). New;
 * free with tokcache_free. */
struct tokcache *tokcache_new(long max_age);
void tokcache_free(struct tokcache *tc);

/* SHA-256 of the token bytes (len, borrowed). */
void tokcache_digest(const char *token, size_t len, unsigned char d[TOKCACHE_DIGEST]);

/* Looks d up at time now for key-set generation gen. On a hit copies the principal into
 * *actor and the stored verdict into *active, and returns true. */
bool tokcache_get(struct tokcache *tc, const unsigned char d[TOKCACHE_DIGEST], unsigned long gen,
		  long now, struct fleet_actor *actor, bool *active);

/* Stores a validation result (actor borrowed, may be NULL for a refusal) verified at now with
 * generation gen, usable until exp. Replaces an entry of the same digest, else a free or
 * unusable slot of its bucket, else the bucket's oldest entry. */
void tokcache_put(struct tokcache *tc, const unsigned char d[TOKCACHE_DIGEST], unsigned long gen,
		  long now, long exp, bool active, const struct fleet_actor *actor);

/* Entries usable at now for generation gen (tests and diagnostics; takes every lock). */
size_t tokcache_count(struct tokcache *tc, unsigned long gen, long now);

#endif
