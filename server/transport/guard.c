/* Deadlines and the fresh-connections cap (see guard.h). Lists, oldest first: fresh connections
 * and kept-alive ones waiting for headers, connections waiting for a body, streams watched; a
 * connection is in at most one. */
#include "guard.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/metrics.h"

/* How often the loop looks for connections past their deadline. */
#define GUARD_TICK_MS 100
/* A fresh connection is cut to make room only once it had this long (or the header deadline,
 * when shorter) to send its request, and only when the server has read everything it sent: by
 * the client's clock, never for the server's delay. */
#define GUARD_GRACE_MS 250

enum guard_list { GUARD_NONE = 0, GUARD_PENDING, GUARD_IDLE, GUARD_BODY, GUARD_WATCH };

struct guard_conn {
	struct guard_conn *prev, *next;
	enum guard_list in;
	int fd;
	int64_t since_ms;          /* when what is due began to be due */
	bool cut;                  /* shut down already */
	void (*hangup)(void *arg); /* GUARD_WATCH: told once when the peer closes */
	void *arg;
	bool served; /* a request of its was answered (guard_fresh) */
};

struct guard_queue {
	struct guard_conn *head, *tail;
	unsigned long n;
};

struct guard {
	struct guard_settings set;
	pthread_mutex_t lock;    /* guards what follows */
	struct guard_queue q[5]; /* by enum guard_list (q[GUARD_NONE] unused) */
	struct guard_counts counts;
};

static int64_t guard_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Under the lock: takes c out of its list. */
static void guard_unlink(struct guard *g, struct guard_conn *c)
{
	if (c->in == GUARD_NONE)
		return;
	struct guard_queue *q = &g->q[c->in];
	if (c->prev)
		c->prev->next = c->next;
	else
		q->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		q->tail = c->prev;
	c->prev = c->next = NULL;
	q->n--;
	c->in = GUARD_NONE;
}

/* Under the lock: moves c to the end of list `in` (NONE: out of every list), due from now. */
static void guard_move(struct guard *g, struct guard_conn *c, enum guard_list in)
{
	guard_unlink(g, c);
	c->since_ms = guard_now_ms();
	if (in == GUARD_NONE || c->cut)
		return;
	struct guard_queue *q = &g->q[in];
	c->in = in;
	c->prev = q->tail;
	if (q->tail)
		q->tail->next = c;
	else
		q->head = c;
	q->tail = c;
	q->n++;
}

/* Under the lock: ends c's connection (the event loop closes it on its next turn), counted in
 * *counter and, when reason is set, in the metrics. */
static void guard_cut(struct guard *g, struct guard_conn *c, unsigned long *counter,
		      const char *reason)
{
	guard_unlink(g, c);
	c->cut = true;
	(*counter)++;
	shutdown(c->fd, SHUT_RDWR);
	if (reason)
		metrics_add(&metrics_connections_cut, &reason, 1);
}

/* Under the lock: cuts every connection of list `in` older than limit_ms. */
static void guard_sweep(struct guard *g, enum guard_list in, long limit_ms, int64_t now,
			unsigned long *counter, const char *reason)
{
	while (g->q[in].head && now - g->q[in].head->since_ms >= limit_ms)
		guard_cut(g, g->q[in].head, counter, reason);
}

/* Under the lock: tells the watchers whose peer closed (EOF or error on a peek). */
static void guard_hangups(struct guard *g)
{
	for (struct guard_conn *c = g->q[GUARD_WATCH].head, *next; c; c = next) {
		next = c->next;
		struct pollfd p = {.fd = c->fd, .events = POLLIN};
		char b;
		if (poll(&p, 1, 0) <= 0)
			continue;
		ssize_t n = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
			void (*hangup)(void *) = c->hangup;
			void *arg = c->arg;
			guard_move(g, c, GUARD_NONE);
			c->hangup = NULL;
			c->arg = NULL;
			hangup(arg);
		}
	}
}

long long guard_tick(struct guard *g, long long now)
{
	pthread_mutex_lock(&g->lock);
	unsigned long h = g->counts.header_deadline, b = g->counts.body_deadline;
	guard_sweep(g, GUARD_PENDING, g->set.header_ms, now, &g->counts.header_deadline,
		    "header_deadline");
	guard_sweep(g, GUARD_IDLE, g->set.header_ms, now, &g->counts.header_deadline,
		    "header_deadline");
	guard_sweep(g, GUARD_BODY, g->set.body_ms, now, &g->counts.body_deadline, "body_deadline");
	guard_hangups(g);
	pthread_mutex_unlock(&g->lock);
	if (g->counts.header_deadline != h || g->counts.body_deadline != b)
		log_warn("http: closed %lu connection(s) past the header deadline, %lu past the "
			 "body "
			 "deadline",
			 g->counts.header_deadline - h, g->counts.body_deadline - b);
	return now + GUARD_TICK_MS;
}

struct guard *guard_new(const struct guard_settings *set)
{
	struct guard *g = mem_calloc(1, sizeof *g);
	g->set = *set;
	pthread_mutex_init(&g->lock, NULL);
	return g;
}

void guard_free(struct guard *g)
{
	if (!g)
		return;
	/* Connections still listed belong to a daemon already stopped: they were closed. */
	for (int in = GUARD_PENDING; in <= GUARD_WATCH; in++)
		while (g->q[in].head) {
			struct guard_conn *c = g->q[in].head;
			guard_unlink(g, c);
			free(c);
		}
	pthread_mutex_destroy(&g->lock);
	free(g);
}

/* Whether fd holds bytes the server has not read yet: what the client sent waits for the server,
 * not the other way round. */
static bool guard_unread(int fd)
{
	int n = 0;
	return ioctl(fd, FIONREAD, &n) == 0 && n > 0;
}

/* Under the lock: the oldest of the first GUARD_SCAN fresh connections that had its grace and
 * holds nothing unread, or NULL (then none is closed: a connection is never cut for the server's
 * own delay). */
#define GUARD_SCAN 32
static struct guard_conn *guard_oldest_slow(struct guard *g, long long now)
{
	long grace = g->set.header_ms < GUARD_GRACE_MS ? g->set.header_ms : GUARD_GRACE_MS;
	int i = 0;
	for (struct guard_conn *c = g->q[GUARD_PENDING].head;
	     c && i < GUARD_SCAN && now - c->since_ms >= grace; c = c->next, i++)
		if (!guard_unread(c->fd))
			return c;
	return NULL;
}

bool guard_room(struct guard *g, long long now)
{
	pthread_mutex_lock(&g->lock);
	bool room =
		!g->set.max_pending || g->q[GUARD_PENDING].n < (unsigned long)g->set.max_pending;
	if (!room) {
		struct guard_conn *victim = guard_oldest_slow(g, now);
		if (victim) {
			if (g->set.cut_for_room)
				g->set.cut_for_room(victim->fd);
			guard_cut(g, victim, &g->counts.evicted, "pending_cap");
			room = true;
		}
	}
	pthread_mutex_unlock(&g->lock);
	return room;
}

struct guard_conn *guard_opened(struct guard *g, int fd)
{
	struct guard_conn *c = mem_calloc(1, sizeof *c);
	c->fd = fd;
	pthread_mutex_lock(&g->lock);
	guard_move(g, c, GUARD_PENDING);
	pthread_mutex_unlock(&g->lock);
	return c;
}

static void guard_set(struct guard *g, struct guard_conn *c, enum guard_list in)
{
	if (!c)
		return;
	pthread_mutex_lock(&g->lock);
	guard_move(g, c, in);
	pthread_mutex_unlock(&g->lock);
}

void guard_headers_done(struct guard *g, struct guard_conn *c)
{
	guard_set(g, c, GUARD_BODY);
}

void guard_body_done(struct guard *g, struct guard_conn *c)
{
	guard_set(g, c, GUARD_NONE);
}

void guard_request_done(struct guard *g, struct guard_conn *c)
{
	if (c)
		c->served = true;
	guard_set(g, c, GUARD_IDLE);
}

bool guard_fresh(const struct guard_conn *c)
{
	return c && !c->served;
}

void guard_watch(struct guard *g, struct guard_conn *c, void (*hangup)(void *arg), void *arg)
{
	if (!c)
		return;
	pthread_mutex_lock(&g->lock);
	guard_move(g, c, GUARD_WATCH);
	c->hangup = hangup;
	c->arg = arg;
	pthread_mutex_unlock(&g->lock);
}

void guard_unwatch(struct guard *g, void *arg)
{
	pthread_mutex_lock(&g->lock);
	for (struct guard_conn *c = g->q[GUARD_WATCH].head; c; c = c->next)
		if (c->arg == arg) {
			guard_move(g, c, GUARD_NONE);
			c->hangup = NULL;
			c->arg = NULL;
			break;
		}
	pthread_mutex_unlock(&g->lock);
}

void guard_closed(struct guard *g, struct guard_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&g->lock);
	guard_unlink(g, c);
	pthread_mutex_unlock(&g->lock);
	free(c);
}

void guard_cut_waiting(struct guard *g)
{
	unsigned long cut = 0;
	pthread_mutex_lock(&g->lock);
	while (g->q[GUARD_PENDING].head)
		guard_cut(g, g->q[GUARD_PENDING].head, &cut, NULL);
	while (g->q[GUARD_IDLE].head)
		guard_cut(g, g->q[GUARD_IDLE].head, &cut, NULL);
	pthread_mutex_unlock(&g->lock);
	if (cut)
		log_info("http: closed %lu idle connection(s) for the stop", cut);
}

struct guard_counts guard_counts(struct guard *g)
{
	pthread_mutex_lock(&g->lock);
	struct guard_counts out = g->counts;
	out.pending = g->q[GUARD_PENDING].n;
	pthread_mutex_unlock(&g->lock);
	return out;
}
