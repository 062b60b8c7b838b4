/* Connections per client address (peers.h): an open-addressing table of addresses with their
 * counts, grown when half full; an address whose count falls to 0 leaves a tombstone-free hole by
 * re-inserting the run that follows it. */
#include "peers.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

struct peer {
	unsigned char addr[16]; /* IPv4 as an IPv4-mapped IPv6 address */
	long n;                 /* 0: a free slot */
};

struct peers {
	long max;
	pthread_mutex_t lock; /* guards what follows */
	struct peer *slots;
	size_t cap, used;
};

struct peers *peers_new(long max)
{
	struct peers *p = mem_calloc(1, sizeof *p);
	p->max = max;
	pthread_mutex_init(&p->lock, NULL);
	p->cap = 64;
	p->slots = mem_calloc(p->cap, sizeof *p->slots);
	return p;
}

void peers_free(struct peers *p)
{
	if (!p)
		return;
	pthread_mutex_destroy(&p->lock);
	free(p->slots);
	free(p);
}

/* The address's 16 bytes; false for a family that has none (a Unix socket: not counted). */
static bool peers_key(const struct sockaddr *sa, socklen_t len, unsigned char key[16])
{
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		memset(key, 0, 10);
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return true;
	}
	if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		memcpy(key, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		return true;
	}
	return false;
}

static size_t peers_hash(const unsigned char key[16], size_t cap)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (int i = 0; i < 16; i++)
		h = (h ^ key[i]) * 1099511628211ull;
	return (size_t)(h & (cap - 1));
}

/* The slot of key, or the free slot where it would go. */
static struct peer *peers_find(struct peers *p, const unsigned char key[16])
{
	for (size_t i = peers_hash(key, p->cap);; i = (i + 1) & (p->cap - 1))
		if (!p->slots[i].n || memcmp(p->slots[i].addr, key, 16) == 0)
			return &p->slots[i];
}

static void peers_grow(struct peers *p)
{
	struct peer *old = p->slots;
	size_t n = p->cap;
	p->cap *= 2;
	p->slots = mem_calloc(p->cap, sizeof *p->slots);
	for (size_t i = 0; i < n; i++)
		if (old[i].n)
			*peers_find(p, old[i].addr) = old[i];
	free(old);
}

bool peers_take(struct peers *p, const struct sockaddr *sa, socklen_t len)
{
	unsigned char key[16];
	if (p->max <= 0 || !peers_key(sa, len, key))
		return true;
	pthread_mutex_lock(&p->lock);
	if (2 * (p->used + 1) > p->cap)
		peers_grow(p);
	struct peer *e = peers_find(p, key);
	bool ok = e->n < p->max;
	if (ok) {
		if (!e->n) {
			memcpy(e->addr, key, 16);
			p->used++;
		}
		e->n++;
	}
	pthread_mutex_unlock(&p->lock);
	return ok;
}

void peers_give(struct peers *p, const struct sockaddr *sa, socklen_t len)
{
	unsigned char key[16];
	if (p->max <= 0 || !peers_key(sa, len, key))
		return;
	pthread_mutex_lock(&p->lock);
	struct peer *e = peers_find(p, key);
	if (e->n && --e->n == 0) {
		/* Emptied: the entries after it in its run move up if their home allows. */
		p->used--;
		size_t hole = (size_t)(e - p->slots);
		for (size_t i = (hole + 1) & (p->cap - 1); p->slots[i].n;
		     i = (i + 1) & (p->cap - 1)) {
			size_t home = peers_hash(p->slots[i].addr, p->cap);
			/* Movable when its home is not cyclically within (hole, i]. */
			bool between =
				hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
			if (!between) {
				p->slots[hole] = p->slots[i];
				p->slots[i].n = 0;
				hole = i;
			}
		}
	}
	pthread_mutex_unlock(&p->lock);
}
