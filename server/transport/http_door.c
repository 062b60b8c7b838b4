/* The door of an HTTP loop (http_door.h): its connections in one list, oldest first. A
 * connection has DOOR_MS to show its request line, then is answered (a client that showed
 * nothing gets the refusal too), and DOOR_MS more to close: the same span for both, so that a
 * connection that moves on to lingering goes to the end of the list and the list stays in
 * deadline order. */
#define _GNU_SOURCE /* MSG_NOSIGNAL */
#include "http_door.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "http_reply.h"
#include "server/protocol/mcp.h"

#define DOOR_MS 1000
/* The bytes of a head the door reads to tell a probe: "HEAD /healthz " and a little more. */
#define DOOR_HEAD 24

struct door_conn {
	struct loop_fd fd;
	struct http_door *door;
	enum http_door_why why;
	long long until_ms;
	bool answered; /* lingering: what comes is dropped until the client closes */
	size_t got;
	char head[DOOR_HEAD];
	struct door_conn *prev, *next;
};

/* The refusal of each why: its status line and its metric's reason. */
static const struct door_refusal {
	unsigned status;
	const char *reason, *metric;
} door_refusals[] = {
	[HTTP_DOOR_FULL] = {503, "Service Unavailable", "full"},
	[HTTP_DOOR_PER_ADDRESS] = {429, "Too Many Requests", "per_address"},
};

struct http_door {
	struct loop *loop;
	long n, max;
	struct door_conn *first, *last;
	char *refusal[2]; /* the JSON-RPC errors' bodies, by why */
};

struct http_door *http_door_new(struct loop *l, long max)
{
	struct http_door *d = mem_calloc(1, sizeof *d);
	d->loop = l;
	d->max = max;
	d->refusal[HTTP_DOOR_FULL] = http_error_body(
		MCP_RATE_LIMITED, "Service Unavailable: this server is at its capacity; retry "
				  "(nothing was done)");
	d->refusal[HTTP_DOOR_PER_ADDRESS] =
		http_error_body(MCP_RATE_LIMITED, "Too Many Requests: too many connections from "
						  "your address; retry (nothing was done)");
	return d;
}

static void door_unlink(struct http_door *d, struct door_conn *c)
{
	*(c->prev ? &c->prev->next : &d->first) = c->next;
	*(c->next ? &c->next->prev : &d->last) = c->prev;
	c->prev = c->next = NULL;
}

static void door_append(struct http_door *d, struct door_conn *c, long long now)
{
	c->until_ms = now + DOOR_MS;
	c->prev = d->last;
	*(d->last ? &d->last->next : &d->first) = c;
	d->last = c;
}

static void door_close(struct http_door *d, struct door_conn *c)
{
	door_unlink(d, c);
	loop_unwatch(d->loop, &c->fd);
	close(c->fd.fd);
	free(c);
	d->n--;
}

void http_door_free(struct http_door *d)
{
	if (!d)
		return;
	while (d->first)
		door_close(d, d->first);
	free(d->refusal[0]);
	free(d->refusal[1]);
	free(d);
}

bool http_door_room(const struct http_door *d)
{
	return d->n < d->max;
}

/* Whether the head read so far asks for /healthz with GET or HEAD; *head_only: HEAD. */
static bool door_probe(const struct door_conn *c, bool *head_only)
{
	*head_only = c->got >= 5 && memcmp(c->head, "HEAD ", 5) == 0;
	const char *path = *head_only ? c->head + 5 : c->head + 4;
	size_t at = (size_t)(path - c->head);
	if (!*head_only && (c->got < 4 || memcmp(c->head, "GET ", 4) != 0))
		return false;
	return c->got >= at + 9 && memcmp(path, "/healthz", 8) == 0 &&
	       (path[8] == ' ' || path[8] == '?');
}

/* Writes c's answer, shuts the sending side, and lingers. */
static void door_answer(struct http_door *d, struct door_conn *c, long long now)
{
	bool head_only;
	bool probe = door_probe(c, &head_only);
	const struct door_refusal *r = &door_refusals[c->why];
	bool sent = probe ? http_answer_on_socket(c->fd.fd, 200, "OK", "",
						  head_only ? "" : "{\"status\":\"alive\"}")
			  : http_answer_on_socket(c->fd.fd, r->status, r->reason,
						  "Retry-After: 1\r\n", d->refusal[c->why]);
	if (!sent) {
		door_close(d, c);
		return;
	}
	if (!probe)
		metrics_add(&metrics_http_shed, &r->metric, 1);
	shutdown(c->fd.fd, SHUT_WR);
	c->answered = true;
	door_unlink(d, c);
	door_append(d, c, now);
}

/* Reads what c's client sent: its head's first bytes, then (answered) nothing kept. */
static void door_read(struct http_door *d, struct door_conn *c)
{
	for (;;) {
		char drop[4096];
		char *into = c->answered ? drop : c->head + c->got;
		size_t room = c->answered ? sizeof drop : DOOR_HEAD - c->got;
		ssize_t got = recv(c->fd.fd, into, room, 0);
		if (got == 0 ||
		    (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
			door_close(d, c); /* the client closed (or the connection failed) */
			return;
		}
		if (got < 0)
			return;
		if (c->answered)
			continue;
		c->got += (size_t)got;
		if (c->got >= DOOR_HEAD || memchr(c->head, '\n', c->got)) {
			door_answer(d, c, loop_now_ms());
			return; /* lingering: what follows is read at the next readiness */
		}
	}
}

static void door_ready(struct loop_fd *f, uint32_t events)
{
	(void)events;
	struct door_conn *c = (struct door_conn *)((char *)f - offsetof(struct door_conn, fd));
	door_read(c->door, c);
}

bool http_door_take(struct http_door *d, int fd, enum http_door_why why)
{
	if (!http_door_room(d))
		return false;
	struct door_conn *c = mem_calloc(1, sizeof *c);
	c->fd = (struct loop_fd){.fd = fd, .ready = door_ready};
	c->door = d;
	c->why = why;
	if (loop_watch(d->loop, &c->fd, EPOLLIN | EPOLLRDHUP) != 0) {
		log_warn("http: cannot watch a connection at the door: %s", strerror(errno));
		free(c);
		return false;
	}
	d->n++;
	long long now = loop_now_ms();
	door_append(d, c, now);
	if (why == HTTP_DOOR_PER_ADDRESS)
		door_answer(d, c, now); /* whatever it asks: no probe from there is waited for */
	else
		door_read(d, c); /* its request line may be there already */
	return true;
}

long long http_door_tick(struct http_door *d, long long now)
{
	while (d->first && d->first->until_ms <= now) {
		struct door_conn *c = d->first;
		if (c->answered)
			door_close(d, c); /* it had its answer a while ago */
		else
			door_answer(d, c, now); /* nothing of its head came: the refusal anyway */
	}
	return d->first ? d->first->until_ms : 0;
}
