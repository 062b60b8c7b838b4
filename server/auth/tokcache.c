/* The token validation cache: a fixed table of TOKCACHE_BUCKETS buckets of TOKCACHE_WAYS
 * entries, each bucket with its own mutex so that requests with different tokens rarely meet.
 * Nothing here verifies or fetches: callers validate first, then store. */
#include "tokcache.h"

#include <openssl/sha.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

struct tokcache_slot {
	unsigned char digest[TOKCACHE_DIGEST];
	bool used, active;
	long exp, stored;
	unsigned long gen;
	struct fleet_actor actor;
};

struct tokcache_bucket {
	pthread_mutex_t lock;
	struct tokcache_slot slot[TOKCACHE_WAYS];
};

struct tokcache {
	long max_age;
	struct tokcache_bucket bucket[TOKCACHE_BUCKETS];
};

struct tokcache *tokcache_new(long max_age)
{
	struct tokcache *tc = mem_calloc(1, sizeof *tc);
	tc->max_age = max_age;
	for (size_t i = 0; i < TOKCACHE_BUCKETS; i++)
		pthread_mutex_init(&tc->bucket[i].lock, NULL);
	return tc;
}

void tokcache_free(struct tokcache *tc)
{
	if (!tc)
		return;
	for (size_t i = 0; i < TOKCACHE_BUCKETS; i++)
		pthread_mutex_destroy(&tc->bucket[i].lock);
	memset(tc, 0, sizeof *tc); /* principals do not outlive the cache */
	free(tc);
}

void tokcache_digest(const char *token, size_t len, unsigned char d[TOKCACHE_DIGEST])
{
	/* SHA256(), not EVP_Digest(EVP_sha256()): OpenSSL 3 looks the algorithm up again on
	 * every EVP call (EVP_MD_fetch was 2% of the server's CPU on server/discover). */
	SHA256((const unsigned char *)token, len, d);
}

static struct tokcache_bucket *tokcache_bucket_of(struct tokcache *tc,
						  const unsigned char d[TOKCACHE_DIGEST])
{
	size_t h = (size_t)d[0] | (size_t)d[1] << 8 | (size_t)d[2] << 16;
	return &tc->bucket[h % TOKCACHE_BUCKETS];
}

/* The one rule for serving an entry. */
static bool tokcache_usable(const struct tokcache *tc, const struct tokcache_slot *s,
			    unsigned long gen, long now)
{
	return s->used && s->gen == gen && now < s->exp && now >= s->stored &&
	       now - s->stored < tc->max_age;
}

bool tokcache_get(struct tokcache *tc, const unsigned char d[TOKCACHE_DIGEST], unsigned long gen,
		  long now, struct fleet_actor *actor, bool *active)
{
	struct tokcache_bucket *b = tokcache_bucket_of(tc, d);
	bool hit = false;
	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; i < TOKCACHE_WAYS; i++) {
		const struct tokcache_slot *s = &b->slot[i];
		if (memcmp(s->digest, d, TOKCACHE_DIGEST) == 0 &&
		    tokcache_usable(tc, s, gen, now)) {
			*actor = s->actor;
			*active = s->active;
			hit = true;
			break;
		}
	}
	pthread_mutex_unlock(&b->lock);
	return hit;
}

void tokcache_put(struct tokcache *tc, const unsigned char d[TOKCACHE_DIGEST], unsigned long gen,
		  long now, long exp, bool active, const struct fleet_actor *actor)
{
	if (tc->max_age <= 0 || now >= exp)
		return; /* could never be served */
	struct tokcache_bucket *b = tokcache_bucket_of(tc, d);
	pthread_mutex_lock(&b->lock);
	struct tokcache_slot *victim = NULL;
	for (size_t i = 0; i < TOKCACHE_WAYS && !victim; i++)
		if (b->slot[i].used && memcmp(b->slot[i].digest, d, TOKCACHE_DIGEST) == 0)
			victim = &b->slot[i];
	for (size_t i = 0; i < TOKCACHE_WAYS && !victim; i++)
		if (!b->slot[i].used || !tokcache_usable(tc, &b->slot[i], gen, now))
			victim = &b->slot[i];
	if (!victim) {
		victim = &b->slot[0];
		for (size_t i = 1; i < TOKCACHE_WAYS; i++)
			if (b->slot[i].stored < victim->stored)
				victim = &b->slot[i];
	}
	memcpy(victim->digest, d, TOKCACHE_DIGEST);
	victim->used = true;
	victim->active = active;
	victim->exp = exp;
	victim->stored = now;
	victim->gen = gen;
	if (actor)
		victim->actor = *actor;
	else
		memset(&victim->actor, 0, sizeof victim->actor);
	pthread_mutex_unlock(&b->lock);
}

size_t tokcache_count(struct tokcache *tc, unsigned long gen, long now)
{
	size_t n = 0;
	for (size_t i = 0; i < TOKCACHE_BUCKETS; i++) {
		struct tokcache_bucket *b = &tc->bucket[i];
		pthread_mutex_lock(&b->lock);
		for (size_t j = 0; j < TOKCACHE_WAYS; j++)
			n += tokcache_usable(tc, &b->slot[j], gen, now);
		pthread_mutex_unlock(&b->lock);
	}
	return n;
}
