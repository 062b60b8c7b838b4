/* Token buckets in a bounded hash table (see ratelimit.h). A bucket that has filled up again is
 * the same as no bucket: when the table is full those are dropped first, then the fullest one
 * (with the leases it held: a dropped lease is tokens never spent, never tokens granted twice).
 * With a budget store, a bucket also holds this process's lease of the shared bucket and, when
 * the shared bucket had no whole lease to give, the time before which it is not asked again. */
#include "ratelimit.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "common/task.h"
#include "common/task_cond.h"

#define RATELIMIT_SLOTS 4096u
#define RATELIMIT_MAX_KEYS 16384u
/* Times a call asks the store itself and finds its leases gone (its buckets evicted from a full
 * table meanwhile) before it is refused. */
#define RATELIMIT_ASKS 4

struct rl_bucket {
	struct rl_bucket *next;
	double tokens, stamp;  /* this process's bucket: tokens at stamp (monotonic seconds) */
	long leased;           /* tokens of the shared bucket this process holds */
	double hold_until;     /* the shared bucket was emptied: not asked before then */
	bool asking;           /* a call is asking the store for a lease of it */
	unsigned long answers; /* answers of the store to asks for it (a waiter's cue) */
	bool write, client;
	char name[]; /* subject or client id */
};

struct ratelimit {
	struct ratelimit_settings set;
	pthread_mutex_t lock; /* guards what follows */
	/* The store answered a call's ask. A task-aware condition: the asker may be a task parked
	 * on the worker a waiter would otherwise block. */
	struct task_cond answered;
	struct rl_bucket *slots[RATELIMIT_SLOTS];
	size_t keys;
	unsigned long refused_reads, refused_writes;
	/* The store: not asked before store_retry_at (it failed, or one call is probing it);
	 * fallback while on this process's buckets because it failed. */
	double store_retry_at;
	bool fallback;
	/* The client applications named in the refusal metrics (bounded label set). */
	size_t nlabels;
	char labels[RATELIMIT_CLIENT_LABELS][65];
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
	b->leased = 0;
	b->hold_until = 0;
	b->asking = false;
	b->answers = 0;
	b->write = write;
	b->client = client;
	memcpy(b->name, name, n + 1);
	b->next = rl->slots[h];
	rl->slots[h] = b;
	rl->keys++;
	return b;
}

/* s seconds as a Retry-After: whole seconds rounded up, 1 to a day. */
static long rl_seconds(double s)
{
	if (s > 86400)
		return 86400;
	long whole = (long)s;
	return whole < 1 ? 1 : whole < s ? whole + 1 : whole;
}

/* Seconds until bucket b holds one token again (at least 1). */
static long rl_wait(const struct ratelimit *rl, const struct rl_bucket *b)
{
	double burst, per_s;
	rl_budget(rl, b->write, b->client, &burst, &per_s);
	return rl_seconds((1.0 - b->tokens) / per_s);
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
	if (rl->fallback)
		metrics_add(&metrics_rate_fallback, NULL, -1);
	pthread_mutex_destroy(&rl->lock);
	free(rl);
}

/* Under the lock: the buckets of subject and client, brought up to now, room made for them. */
static void rl_pair(struct ratelimit *rl, const char *subject, const char *client, bool write,
		    double now, struct rl_bucket **s, struct rl_bucket **c)
{
	while (rl->keys + 2 > RATELIMIT_MAX_KEYS)
		rl_evict(rl, now); /* before the look-ups: they hold pointers into the table */
	*s = rl_find(rl, subject, write, false, now);
	*c = rl_find(rl, client, write, true, now);
}

/* Under the lock, this process's buckets deciding: a token from each, or the wait. */
static enum ratelimit_status rl_take_local(struct ratelimit *rl, struct rl_bucket *s,
					   struct rl_bucket *c, long *retry_after_s)
{
	if (s->tokens >= 1.0 && c->tokens >= 1.0) {
		s->tokens -= 1.0;
		c->tokens -= 1.0;
		return RATELIMIT_OK;
	}
	long ws = s->tokens < 1.0 ? rl_wait(rl, s) : 0;
	long wc = c->tokens < 1.0 ? rl_wait(rl, c) : 0;
	*retry_after_s = ws > wc ? ws : wc;
	return RATELIMIT_LIMITED;
}

/* Under the lock, the shared buckets deciding: a token of each lease, or the wait until the
 * shared bucket that was emptied may be asked again; RATELIMIT_OK with *ask set when a bucket
 * without a lease may be asked for one now. This process's buckets follow what is
 * spent, so that a fall-back starts from this process's use, not from full buckets. */
static enum ratelimit_status rl_take_shared(struct rl_bucket *s, struct rl_bucket *c, double now,
					    long *retry_after_s, bool *ask)
{
	*ask = false;
	if (s->leased >= 1 && c->leased >= 1) {
		s->leased--;
		c->leased--;
		s->tokens = s->tokens >= 1.0 ? s->tokens - 1.0 : 0.0;
		c->tokens = c->tokens >= 1.0 ? c->tokens - 1.0 : 0.0;
		return RATELIMIT_OK;
	}
	double hold = 0;
	if (s->leased < 1 && s->hold_until > hold)
		hold = s->hold_until;
	if (c->leased < 1 && c->hold_until > hold)
		hold = c->hold_until;
	if (hold > now) {
		*retry_after_s = rl_seconds(hold - now);
		return RATELIMIT_LIMITED;
	}
	*ask = true;
	return RATELIMIT_OK;
}

/* The lease to ask for bucket b of holder: an eighth of its burst, 1 to RATELIMIT_LEASE_MAX. */
static struct fleet_budget_lease rl_lease(const struct ratelimit *rl, const struct rl_bucket *b,
					  const char *holder)
{
	double burst, per_s;
	rl_budget(rl, b->write, b->client, &burst, &per_s);
	long want = (long)(burst / 8);
	want = want < 1 ? 1 : want > RATELIMIT_LEASE_MAX ? RATELIMIT_LEASE_MAX : want;
	return (struct fleet_budget_lease){.holder = holder,
					   .client = b->client,
					   .write = b->write,
					   .want = want,
					   .per_s = per_s,
					   .burst = burst};
}

/* Under the lock: what the store answered (rc, leases l[0..n)) applied to s and c. */
static void rl_store_answered(struct ratelimit *rl, int rc, const struct fleet_budget_lease *l,
			      size_t n, struct rl_bucket *s, struct rl_bucket *c, double now)
{
	if (rc != 0) {
		rl->store_retry_at = now + RATELIMIT_STORE_RETRY_S;
		if (!rl->fallback) {
			rl->fallback = true;
			metrics_add(&metrics_rate_fallback, NULL, 1);
			log_warn("volume limits: the budget store does not answer: this instance "
				 "uses its own budgets for %d s, then tries again",
				 RATELIMIT_STORE_RETRY_S);
		}
		return;
	}
	rl->store_retry_at = 0;
	if (rl->fallback) {
		rl->fallback = false;
		metrics_add(&metrics_rate_fallback, NULL, -1);
		log_info("volume limits: the budget store answers again: budgets are the "
			 "deployment's");
	}
	for (size_t i = 0; i < n; i++) {
		struct rl_bucket *b = l[i].client ? c : s;
		b->leased += l[i].granted;
		/* Emptied: not asked again before a token is back, nor within a second (what a
		 * Retry-After can say), so that a caller past its budget costs each instance at
		 * most one store call a second, whatever its pace. */
		if (l[i].granted < l[i].want) {
			double wait = (1.0 - l[i].level) / l[i].per_s;
			b->hold_until = now + (wait > 1.0 ? wait : 1.0);
		}
	}
}

/* The label of client in the refusal metrics: its id while fewer than RATELIMIT_CLIENT_LABELS
 * are named and it reads safely as a label value, else "other". Under the lock. */
static const char *rl_client_label(struct ratelimit *rl, const char *client)
{
	for (size_t i = 0; i < rl->nlabels; i++)
		if (strcmp(rl->labels[i], client) == 0)
			return rl->labels[i];
	size_t n = strlen(client);
	if (n == 0 || n >= sizeof rl->labels[0] || rl->nlabels == RATELIMIT_CLIENT_LABELS)
		return "other";
	for (const char *p = client; *p; p++)
		if (*p < '!' || *p > '~' || *p == '"' || *p == '\\')
			return "other";
	memcpy(rl->labels[rl->nlabels], client, n + 1);
	return rl->labels[rl->nlabels++];
}

/* Under the lock: asks the store for the leases s and c lack, the lock released meanwhile, and
 * applies the answer; *s and *c are found again after (they may have been evicted). A token of
 * the lease the call already holds is set aside while it asks for the other and put back after,
 * so that the lock released does not let other calls spend it: the caller, still under the lock,
 * then takes its tokens before any other call can. Other calls for the buckets asked for wait
 * for the answer rather than ask too (asking, rl->answered). */
static void rl_ask(struct ratelimit *rl, const char *subject, const char *client, bool write,
		   struct rl_bucket **s, struct rl_bucket **c)
{
	struct fleet_budget_lease l[2];
	size_t n = 0;
	long kept_s = 0, kept_c = 0;
	if ((*s)->leased < 1) {
		l[n++] = rl_lease(rl, *s, subject);
		(*s)->asking = true;
	} else {
		(*s)->leased--;
		kept_s = 1;
	}
	if ((*c)->leased < 1) {
		l[n++] = rl_lease(rl, *c, client);
		(*c)->asking = true;
	} else {
		(*c)->leased--;
		kept_c = 1;
	}
	if (rl->fallback) /* one call probes a store that failed; the others stay local */
		rl->store_retry_at = rl_now() + RATELIMIT_STORE_RETRY_S;
	pthread_mutex_unlock(&rl->lock);
	int rc = rl->set.store->take(rl->set.store->ctx, l, n);
	const char *result[] = {rc == 0 ? "ok" : "failed"};
	metrics_add(&metrics_rate_store_calls, result, 1);
	pthread_mutex_lock(&rl->lock);
	double now = rl_now();
	rl_pair(rl, subject, client, write, now, s, c);
	(*s)->leased += kept_s; /* this call's token, whatever became of the bucket meanwhile */
	(*c)->leased += kept_c;
	for (size_t i = 0; i < n; i++) {
		(l[i].client ? *c : *s)->asking = false;
		(l[i].client ? *c : *s)->answers++;
	}
	rl_store_answered(rl, rc, l, n, *s, *c, now);
	task_cond_broadcast(&rl->answered);
}

enum ratelimit_status ratelimit_take(struct ratelimit *rl, const char *subject, const char *client,
				     bool write, long *retry_after_s)
{
	*retry_after_s = 0;
	if (!rl || (write ? rl->set.write_per_minute : rl->set.read_per_minute) == 0)
		return RATELIMIT_OK;
	struct rl_bucket *s, *c;
	enum ratelimit_status st;
	/* Only an emptied shared bucket refuses a call, never other calls' timing: a call waits for
	 * another's ask until that ask is answered (answers: a broadcast for other buckets is no
	 * cue), once; if the leases it brought were spent by the calls woken with it, the call asks
	 * the store itself, and an asker takes its tokens first (rl_ask). */
	bool waiting = false, waited = false;
	unsigned long seen = 0;
	int asks = 0;
	pthread_mutex_lock(&rl->lock);
	for (;;) {
		double now = rl_now();
		rl_pair(rl, subject, client, write, now, &s, &c);
		if (!rl->set.store || now < rl->store_retry_at) {
			st = rl_take_local(rl, s, c, retry_after_s);
			break;
		}
		bool ask;
		st = rl_take_shared(s, c, now, retry_after_s, &ask);
		if (!ask)
			break;
		if (waiting && s->answers + c->answers != seen)
			waited = true;
		if (!waited && ((s->leased < 1 && s->asking) || (c->leased < 1 && c->asking))) {
			/* The asker always answers: the store's call has its deadline. */
			waiting = true;
			seen = s->answers + c->answers;
			task_cond_wait(&rl->answered, &rl->lock);
			continue;
		}
		if (asks++ == RATELIMIT_ASKS) { /* its leases evicted each time */
			st = RATELIMIT_LIMITED;
			*retry_after_s = 1;
			break;
		}
		rl_ask(rl, subject, client, write, &s, &c);
	}
	if (st == RATELIMIT_LIMITED) {
		if (write)
			rl->refused_writes++;
		else
			rl->refused_reads++;
		const char *labels[] = {rl_client_label(rl, client), write ? "write" : "read"};
		metrics_add(&metrics_rate_limited_client, labels, 1);
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

bool ratelimit_on_fallback(struct ratelimit *rl)
{
	if (!rl)
		return false;
	pthread_mutex_lock(&rl->lock);
	bool f = rl->fallback;
	pthread_mutex_unlock(&rl->lock);
	return f;
}
