/* Listen streams over HTTP (http_stream.h). libmicrohttpd pulls the bytes through
 * http_stream_read; with nothing to send the connection is suspended, and resumed when something
 * arrives: by its loop (a daemon in external epoll mode has no channel of its own to be woken
 * by another thread), which the writer, whatever its thread, asks with a job. libmicrohttpd is
 * never called with one of our locks held by another thread (a suspended connection cannot go
 * away, so the one who flips `suspended` may have it resumed after unlocking). */
#include "http_stream.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/jsonw.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "guard.h"
#include "http_reply.h"

/* Bytes a stream may hold unsent; a client that reads slower than this is cut off. */
#define HTTP_STREAM_MAX_BYTES ((size_t)256 * 1024)

struct http_stream {
	pthread_mutex_t lock;        /* guards what follows */
	struct MHD_Connection *conn; /* NULL once libmicrohttpd released the response */
	char *buf;
	size_t len, off, cap;
	bool suspended, ending;
	bool slow; /* its client read too slowly: nothing more but the final result */
	int refs;  /* the hub's, the response's, and a resumption's while one is posted */
	struct http_server *srv;
	struct http_loop *hl;   /* its connection's loop */
	struct guard *guard;    /* its loop's: watches for the client hanging up (borrowed) */
	struct loop_job resume; /* its connection's resumption, posted to its loop */
	bool resume_posted;
};

static void http_stream_unref(void *out)
{
	struct http_stream *st = out;
	pthread_mutex_lock(&st->lock);
	bool last = --st->refs == 0;
	pthread_mutex_unlock(&st->lock);
	if (!last)
		return;
	free(st->buf);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

/* Appends text (under st->lock), past the budget only when final (the stream's result); returns
 * st when its connection is to be resumed (http_stream_kick), or NULL. */
static struct http_stream *http_stream_append(struct http_stream *st, const char *text, bool final)
{
	size_t n = strlen(text);
	if (!st->conn || st->ending || (st->slow && !final))
		return NULL;
	if (!final && st->len - st->off + n > HTTP_STREAM_MAX_BYTES) {
		/* The hub sees it (slow) and ends the stream with its result, which goes out
		 * once what is buffered has been read. */
		log_warn("listen stream: the client reads too slowly; ending it with its result");
		st->slow = true;
	} else {
		if (st->off && st->off == st->len)
			st->off = st->len = 0;
		if (st->len + n > st->cap) {
			st->cap = (st->len + n) * 2;
			st->buf = mem_realloc(st->buf, st->cap);
		}
		memcpy(st->buf + st->len, text, n);
		st->len += n;
	}
	if (!st->suspended)
		return NULL;
	st->suspended = false;
	return st;
}

static void *http_stream_text(struct http_stream *st, const char *text, bool end, bool final)
{
	pthread_mutex_lock(&st->lock);
	struct http_stream *resume = text ? http_stream_append(st, text, final) : NULL;
	if (end) {
		st->ending = true;
		if (st->suspended && st->conn) {
			st->suspended = false;
			resume = st;
		}
	}
	pthread_mutex_unlock(&st->lock);
	return resume;
}

/* listen_out_ops for an HTTP stream: one SSE event per message. */
static void *http_stream_write(void *out, const json_t *msg)
{
	char *json = jsonw_dump(msg);
	char *ev = mem_printf("event: message\ndata: %s\n\n", json);
	free(json);
	/* The listen request's result (it carries "result") ends the stream: never dropped. */
	void *resume = http_stream_text(out, ev, false, json_object_get(msg, "result") != NULL);
	free(ev);
	return resume;
}

static bool http_stream_slow(void *out)
{
	struct http_stream *st = out;
	pthread_mutex_lock(&st->lock);
	bool slow = st->slow;
	pthread_mutex_unlock(&st->lock);
	return slow;
}

static void *http_stream_ping(void *out)
{
	return http_stream_text(out, ": keep-alive\n\n", false, false);
}

static void *http_stream_end(void *out)
{
	return http_stream_text(out, NULL, true, false);
}

/* On the stream's loop: its connection resumes (if libmicrohttpd still holds it), and the loop
 * runs its daemon at this turn. */
static void http_stream_resumed(struct loop_job *j)
{
	struct http_stream *st =
		(struct http_stream *)((char *)j - offsetof(struct http_stream, resume));
	pthread_mutex_lock(&st->lock);
	st->resume_posted = false;
	struct MHD_Connection *c = st->conn;
	pthread_mutex_unlock(&st->lock);
	if (c) {
		MHD_resume_connection(c);
		st->hl->resumed = true;
	}
	http_stream_unref(st);
}

/* listen_out_ops.kick: token is a stream whose connection is to resume, from any thread. */
static void http_stream_kick(void *token)
{
	struct http_stream *st = token;
	pthread_mutex_lock(&st->lock);
	bool post = !st->resume_posted;
	if (post) {
		st->resume_posted = true;
		st->refs++;
	}
	pthread_mutex_unlock(&st->lock);
	if (post)
		loop_post(st->hl->loop, &st->resume);
}

static bool http_stream_gone(void *out)
{
	struct http_stream *st = out;
	pthread_mutex_lock(&st->lock);
	bool gone = st->conn == NULL;
	pthread_mutex_unlock(&st->lock);
	return gone;
}

void http_stream_ops_init(struct listen_out_ops *ops)
{
	*ops = (struct listen_out_ops){
		.write = http_stream_write,
		.ping = http_stream_ping,
		.end = http_stream_end,
		.kick = http_stream_kick,
		.gone = http_stream_gone,
		.slow = http_stream_slow,
		.release = http_stream_unref,
	};
}

static ssize_t http_stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
	(void)pos;
	struct http_stream *st = cls;
	ssize_t n = 0;
	pthread_mutex_lock(&st->lock);
	if (st->off < st->len) {
		size_t k = st->len - st->off < max ? st->len - st->off : max;
		memcpy(out, st->buf + st->off, k);
		st->off += k;
		n = (ssize_t)k;
	} else if (st->ending) {
		n = MHD_CONTENT_READER_END_OF_STREAM;
	} else {
		st->suspended = true;
		MHD_suspend_connection(st->conn);
	}
	pthread_mutex_unlock(&st->lock);
	return n;
}

/* The client hung up (guard.h; under the guard's lock, so st is alive): the stream ends now,
 * not at its next keep-alive, and its slot is free for the next listen. */
static void http_stream_hangup(void *arg)
{
	void *resume = http_stream_text(arg, NULL, true, false);
	if (resume)
		http_stream_kick(resume);
}

/* libmicrohttpd is done with the response (the client left, or the stream ended), or it never
 * had it (http_stream_abandon). */
static void http_stream_released(void *cls)
{
	struct http_stream *st = cls;
	guard_unwatch(st->guard, st);
	pthread_mutex_lock(&st->lock);
	st->conn = NULL;
	pthread_mutex_unlock(&st->lock);
	atomic_fetch_sub(&st->srv->live_streams, 1);
	const char *const label[] = {"http"};
	metrics_add(&metrics_listen_streams, label, -1);
	http_stream_unref(st);
}

enum mcp_listen_status http_listen_open(void *ctx, const struct fleet_actor *actor,
					const json_t *id, const json_t *ack,
					const char *const *uris, size_t n)
{
	struct http_listen_req *lr = ctx;
	struct http_stream *st = mem_calloc(1, sizeof *st);
	pthread_mutex_init(&st->lock, NULL);
	st->conn = lr->conn;
	st->refs = 2;
	st->srv = lr->srv;
	st->hl = lr->hl;
	st->guard = lr->hl->guard;
	st->resume = (struct loop_job){.run = http_stream_resumed};
	atomic_fetch_add(&st->srv->live_streams, 1);
	const char *const label[] = {"http"};
	metrics_add(&metrics_listen_streams, label, 1);
	enum mcp_listen_status ls =
		listen_hub_open(lr->srv->hub, actor, id, ack, uris, n, &lr->srv->stream_ops, st);
	if (ls != MCP_LISTEN_OK) {
		http_stream_released(st); /* the response's reference */
		http_stream_unref(st);    /* the hub's */
		return ls;
	}
	lr->opened = st;
	return MCP_LISTEN_OK;
}

enum MHD_Result http_send_stream(struct http_server *s, struct MHD_Connection *c,
				 struct http_stream *st)
{
	struct MHD_Response *r = MHD_create_response_from_callback(
		MHD_SIZE_UNKNOWN, 4096, http_stream_read, st, http_stream_released);
	if (!r) {
		http_stream_released(st);
		return MHD_NO;
	}
	guard_watch(st->guard, http_guard_conn(c), http_stream_hangup, st);
	return http_queue_sse(s, c, r);
}

void http_streams_drain(struct http_server *s)
{
	for (int i = 0; i < 200 && atomic_load(&s->live_streams) > 0; i++) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

void http_stream_abandon(struct http_stream *st)
{
	http_stream_released(st); /* gone from now on: the hub forgets it at its next event */
}
