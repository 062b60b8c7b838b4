/* Token buckets in a bounded hash table (see ratelimit.h). A bucket that has filled up again is
 * the same as no bucket: when the table is full those are dropped first, then the fullest one. */
#include "ratelimit.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/mem.h"

#define RATELIMIT_SLOTS 4096u
#define RATELIMIT_MAX_KEYS 16384u

struct rl_bucket {
	struct rl_bucket *next;
	double tokens, stamp; /* tokens at stamp (monotonic seconds) */
	bool write, client;
	char name[]; /* subject or client id */
};

struct ratelimit {
	struct ratelimit_settings set;
	pthread_mutex_t lock; /* guards what follows */
	struct rl_bucket *slots[RATELIMIT_SLOTS];
	size_t keys;
	unsigned long refused_reads, refused_writes;
};

static double rl_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The budget of a bucket: its burst and its refill per second. */
static void rl_budget(const struct ratelimit *rl, bool write, bool client, double *burst,
		      double *per_s)
{
	long f = client ? rl->set.client_factor : 1;
	*burst = (double)(write ? rl->set.write_burst : rl->set.read_burst) * (double)f;
	*per_s = (double)(write ? rl->set.write_per_minute : rl->set.read_per_minute) * (double)f /
		 60.0;
}

static double rl_level(const struct ratelimit *rl, const struct rl_bucket *b, double now)
{
	double burst, per_s;
	rl_budget(rl, b->write, b->client, &burst, &per_s);
	double t = b->tokens + (now - b->stamp) * per_s;
	return t > burst ? burst : t;
}

static uint32_t rl_hash(const char *name, bool write, bool client)
{
	uint32_t h = 2166136261u ^ (write ? 1u : 0u) ^ (client ? 2u : 0u);
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h % RATELIMIT_SLOTS;
}

/* Under the lock, the table full: drops every refilled bucket, or else the fullest one (so a
 * flood of new names costs the least-throttled callers their history first). */
static void rl_evict(struct ratelimit *rl, double now)
{
	struct rl_bucket **victim = NULL;
	double best = -1;
	for (size_t i = 0; i < RATELIMIT_SLOTS; i++) {
		for (struct rl_bucket **pp = &rl->slots[i]; *pp;) {
			struct rl_bucket *b = *pp;
			double burst, per_s, level = rl_level(rl, b, now);
			rl_budget(rl, b->write, b->client, &burst, &per_s);
			if (level >= burst) {
				*pp = b->next;
				free(b);
				rl->keys--;
				continue;
			}
			if (level > best) {
				best = level;
				victim = pp;
			}
			pp = &b->next;
		}
	}
	if (rl->keys >= RATELIMIT_MAX_KEYS && victim) {
		struct rl_bucket *b = *victim;
		*victim = b->next;
		free(b);
		rl->keys--;
	}
}

/* Under the lock: the bucket of name (created full), its level brought up to now. The caller
 * made room for a new one. */
static struct rl_bucket *rl_find(struct ratelimit *rl, const char *name, bool write, bool client,
				 double now)
{
	uint32_t h = rl_hash(name, write, client);
	for (struct rl_bucket *b = rl->slots[h]; b; b = b->next)
		if (b->write == write && b->client == client && strcmp(b->name, name) == 0) {
			b->tokens = rl_level(rl, b, now);
			b->stamp = now;
			return b;
		}
	size_t n = strlen(name);
	struct rl_bucket *b = mem_alloc(sizeof *b + n + 1);
	double per_s;
	rl_budget(rl, write, client, &b->tokens, &per_s);
	b->stamp = now;
	b->write = write;
	b->client = client;
	memcpy(b->name, name, n + 1);
	b->next = rl->slots[h];
	rl->slots[h] = b;
	rl->keys++;
	return b;
}

/* Seconds until bucket b holds one token again (at least 1). */
static long rl_wait(const struct ratelimit *rl, const struct rl_bucket *b)
{
	double burst, per_s;
	rl_budget(rl, b->write, b->client, &burst, &per_s);
	double s = (1.0 - b->tokens) / per_s;
	if (s > 86400)
		return 86400;
	long whole = (long)s;
	return whole < 1 ? 1 : whole < s ? whole + 1 : whole;
}

struct ratelimit *ratelimit_new(const struct ratelimit_settings *set)
{
	struct ratelimit *rl = mem_calloc(1, sizeof *rl);
	rl->set = *set;
	if (rl->set.client_factor < 1)
		rl->set.client_factor = 1;
	pthread_mutex_init(&rl->lock, NULL);
	return rl;
}

void ratelimit_free(struct ratelimit *rl)
{
	if (!rl)
		return;
	for (size_t i = 0; i < RATELIMIT_SLOTS; i++)
		for (struct rl_bucket *b = rl->slots[i], *next; b; b = next) {
			next = b->next;
			free(b);
		}
	pthread_mutex_destroy(&rl->lock);
	free(rl);
}

enum ratelimit_status ratelimit_take(struct ratelimit *rl, const char *subject, const char *client,
				     bool write, long *retry_after_s)
{
	*retry_after_s = 0;
	if (!rl || (write ? rl->set.write_per_minute : rl->set.read_per_minute) == 0)
		return RATELIMIT_OK;
	double now = rl_now();
	pthread_mutex_lock(&rl->lock);
	while (rl->keys + 2 > RATELIMIT_MAX_KEYS)
		rl_evict(rl, now); /* before the look-ups: they hold pointers into the table */
	struct rl_bucket *s = rl_find(rl, subject, write, false, now);
	struct rl_bucket *c = rl_find(rl, client, write, true, now);
	enum ratelimit_status st = RATELIMIT_OK;
	if (s->tokens < 1.0 || c->tokens < 1.0) {
		long ws = s->tokens < 1.0 ? rl_wait(rl, s) : 0;
		long wc = c->tokens < 1.0 ? rl_wait(rl, c) : 0;
		*retry_after_s = ws > wc ? ws : wc;
		if (write)
			rl->refused_writes++;
		else
			rl->refused_reads++;
		st = RATELIMIT_LIMITED;
	} else {
		s->tokens -= 1.0;
		c->tokens -= 1.0;
	}
	pthread_mutex_unlock(&rl->lock);
	return st;
}

void ratelimit_counts(struct ratelimit *rl, unsigned long *reads, unsigned long *writes)
{
	*reads = *writes = 0;
	if (!rl)
		return;
	pthread_mutex_lock(&rl->lock);
	*reads = rl->refused_reads;
	*writes = rl->refused_writes;
	pthread_mutex_unlock(&rl->lock);
}
