/* stdio transport: a reader (the calling thread) splits stdin into lines of at most
 * BIKAROO_MAX_BODY_BYTES, a small worker pool runs mcp_handle() on them, and one mutex keeps
 * each response on its own stdout line. Cancellation: notifications/cancelled marks the
 * in-flight request; its worker finishes the (short, read-only) database call but writes no
 * response for it. The requests that change the connection's legacy session (`initialize`,
 * `logging/setLevel`) are answered by the reader itself, so what they set holds for every
 * later line. Resource subscriptions are the connection's too, 2025-era (resources/subscribe)
 * and 2026-07-28 (subscriptions/listen, a request that stays open until cancelled or EOF): the
 * change feed (feed.h), joined with the first one, tells the connection of every committed
 * change, and it writes notifications/resources/updated for the subscribed URIs. They all end
 * when the identity's token expires or its rights change in PostgreSQL. */
#include "stdio.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/mem.h"
#include "server/auth/auth.h"
#include "server/capabilities/change_feed.h"
#include "server/auth/identity.h"
#include "server/protocol/mcp.h"
#include "server/protocol/notify.h"
#include "uriset.h"

/* What a legacy session set, as a request sees it (copied into each job when it is queued). */
struct stdio_session {
	const char *version; /* negotiated by initialize (static string), or NULL */
	int log_level;       /* enum notify_level chosen by logging/setLevel, or -1 */
};

struct stdio_job {
	char *line;
	size_t len;
	json_t *id; /* new reference: the request id, for cancellation */
	struct stdio_session session;
	bool cancelled;
	unsigned long seq;
	struct stdio_job *next;
};

/* One open subscriptions/listen request and the URIs it honours. */
struct stdio_listen {
	json_t *id;
	char **uris;
	size_t n;
	struct stdio_listen *next;
};

struct stdio_conn {
	const struct fleet_actor *actor;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct stdio_job *head, *tail; /* waiting for a worker */
	struct stdio_job *running[STDIO_WORKERS];
	size_t inflight; /* queued + running */
	bool eof;
	pthread_mutex_t out_lock;
	bool out_broken;
	struct stdio_session session; /* written by the reader only */
	unsigned long seq;
	/* Resource subscriptions, told by the change feed through sink (feed.h). */
	struct uriset subs;
	struct mcp_subscriptions subscriptions;
	struct stdio_listen *listens; /* under listen_lock, which also orders their lines */
	size_t nlistens;
	pthread_mutex_t listen_lock;
	struct mcp_listen listen;
	struct feed_sink sink;
};

int stdio_identity(const struct cfg *cfg, struct fleet_actor *out)
{
	/* From the environment, never from the client: BIKAROO_TOKEN validated like a bearer
	 * token, or the local identity against a development database only (identity.h). */
	if (auth_init(cfg) != AUTH_OK)
		return -1;
	const char *why = NULL;
	if (identity_from_environment(cfg, out, &why) != IDENTITY_OK) {
		log_error("stdio: no usable identity: %s", why ? why : "refused");
		return -1;
	}
	return 0;
}

/* Writes one message line; a broken stdout ends the connection. */
static void stdio_write(struct stdio_conn *c, const char *body)
{
	pthread_mutex_lock(&c->out_lock);
	if (!c->out_broken) {
		size_t n = strlen(body);
		if (fwrite(body, 1, n, stdout) != n || fputc('\n', stdout) == EOF ||
		    fflush(stdout) != 0) {
			c->out_broken = true;
			log_error("stdio: cannot write to stdout; stopping");
		}
	}
	pthread_mutex_unlock(&c->out_lock);
}

/* Where a request's notifications go (progress, log messages): one line each, before its
 * response, and nothing once the request is cancelled. */
struct stdio_emit {
	struct stdio_conn *c;
	struct stdio_job *job; /* NULL for the session requests, which are not cancelled */
};

static void stdio_emit_line(void *emit_ctx, const json_t *msg)
{
	struct stdio_emit *e = emit_ctx;
	bool cancelled = false;
	if (e->job) {
		pthread_mutex_lock(&e->c->lock);
		cancelled = e->job->cancelled;
		pthread_mutex_unlock(&e->c->lock);
	}
	char *line = cancelled ? NULL : json_dumps(msg, JSON_COMPACT);
	if (line)
		stdio_write(e->c, line);
	free(line);
}

/* ---- resource subscriptions ------------------------------------------------------------ */

/* notifications/resources/updated for uri, if this connection subscribed to it. */
/* Writes msg (stolen) as one line. */
static void stdio_write_json(struct stdio_conn *c, json_t *msg)
{
	char *line = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	stdio_write(c, line);
	free(line);
}

static bool stdio_listen_has(const struct stdio_listen *l, const char *uri)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->uris[i], uri) == 0)
			return true;
	return false;
}

/* notifications/resources/updated for uri: once for the 2025-era subscription, once per open
 * listen that honours it (tagged with its subscription id). */
static void stdio_updated(const char *uri, void *arg)
{
	struct stdio_conn *c = arg;
	if (uriset_has(&c->subs, uri))
		stdio_write_json(c, json_pack("{s:s, s:s, s:{s:s}}", "jsonrpc", "2.0", "method",
					      "notifications/resources/updated", "params", "uri",
					      uri));
	pthread_mutex_lock(&c->listen_lock);
	for (struct stdio_listen *l = c->listens; l; l = l->next)
		if (stdio_listen_has(l, uri))
			stdio_write_json(
				c, json_pack("{s:s, s:s, s:{s:s, s:{s:O}}}", "jsonrpc", "2.0",
					     "method", "notifications/resources/updated", "params",
					     "uri", uri, "_meta",
					     "io.modelcontextprotocol/subscriptionId", l->id));
	pthread_mutex_unlock(&c->listen_lock);
}

/* After a gap in the feed (the database went away), every subscribed resource may have
 * changed: say so, and let the client read them again. */
static void stdio_updated_all(struct stdio_conn *c)
{
	struct uriset *all = mem_calloc(1, sizeof *all);
	pthread_mutex_init(&all->lock, NULL);
	char *uris[URISET_MAX];
	size_t n = uriset_copy(&c->subs, uris, URISET_MAX);
	for (size_t i = 0; i < n; i++) {
		(void)uriset_change(all, uris[i], true);
		free(uris[i]);
	}
	pthread_mutex_lock(&c->listen_lock);
	for (struct stdio_listen *l = c->listens; l; l = l->next)
		for (size_t i = 0; i < l->n; i++)
			(void)uriset_change(all, l->uris[i],
					    true); /* a full set: some are not told */
	pthread_mutex_unlock(&c->listen_lock);
	n = uriset_copy(all, uris, URISET_MAX);
	for (size_t i = 0; i < n; i++) {
		stdio_updated(uris[i], c);
		free(uris[i]);
	}
	uriset_clear(all);
	pthread_mutex_destroy(&all->lock);
	free(all);
}

static void stdio_listen_end_all(struct stdio_conn *c);

/* The end of every subscription of this connection: listens with their result (the client
 * may listen again: what it may hear is checked anew), 2025-era subscriptions dropped. */
static void stdio_subscriptions_end(struct stdio_conn *c)
{
	stdio_listen_end_all(c);
	uriset_clear(&c->subs);
}

/* feed_sink.tick: once the token the server acts with has expired, its subscriptions end too;
 * requests are already refused by the core. */
static void stdio_tick(void *arg)
{
	struct stdio_conn *c = arg;
	if (c->actor->expires_at && (long)time(NULL) >= c->actor->expires_at)
		stdio_subscriptions_end(c);
}

/* feed_sink.changed for this connection: a changed resource, or a change of rights, which
 * ends the subscriptions when they are those of the identity this server acts as. After a gap
 * in the feed, rights may have changed unseen: every subscription is told its URIs may have
 * changed, then the listens end (2025-era subscriptions have no end to give: they stay). */
static void stdio_changed(const struct change *ch, void *arg)
{
	struct stdio_conn *c = arg;
	if (!ch) {
		stdio_updated_all(c);
		stdio_listen_end_all(c);
	} else if (ch->uri) {
		stdio_updated(ch->uri, c);
	} else if (change_of_rights_of(ch, c->actor->subject, c->actor->client_id)) {
		log_warn("stdio: the rights of %s changed; its resource subscriptions end",
			 ch->subject ? "the subject" : "the client application");
		stdio_subscriptions_end(c);
	}
}

/* mcp_subscriptions.change for this connection (2025-era resources/subscribe). */
static int stdio_sub_change(void *ctx, const char *uri, bool on)
{
	struct stdio_conn *c = ctx;
	if (uriset_change(&c->subs, uri, on) != 0)
		return -1;
	if (on)
		feed_add(&c->sink);
	return 0;
}

/* mcp_listen.open for this connection (2026-07-28 subscriptions/listen). */
static int stdio_listen_open(void *ctx, const json_t *id, const json_t *ack,
			     const char *const *uris, size_t n)
{
	struct stdio_conn *c = ctx;
	if (n)
		feed_add(&c->sink);
	pthread_mutex_lock(&c->listen_lock);
	if (c->nlistens >= STDIO_MAX_LISTENS) {
		pthread_mutex_unlock(&c->listen_lock);
		return -1;
	}
	struct stdio_listen *l = mem_calloc(1, sizeof *l);
	l->id = json_deep_copy(id);
	l->uris = mem_calloc(n ? n : 1, sizeof *l->uris);
	for (size_t i = 0; i < n; i++)
		l->uris[l->n++] = mem_strdup(uris[i]);
	l->next = c->listens;
	c->listens = l;
	c->nlistens++;
	stdio_write_json(c,
			 json_incref((json_t *)ack)); /* first, under the lock: nothing precedes */
	pthread_mutex_unlock(&c->listen_lock);
	return 0;
}

static void stdio_listen_free(struct stdio_listen *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->uris[i]);
	free(l->uris);
	json_decref(l->id);
	free(l);
}

/* Ends the listen requests with this id (a cancellation): no response, as for any cancelled
 * request. */
static void stdio_listen_cancel(struct stdio_conn *c, const json_t *id)
{
	pthread_mutex_lock(&c->listen_lock);
	for (struct stdio_listen **p = &c->listens; *p;) {
		struct stdio_listen *l = *p;
		if (json_equal(l->id, id)) {
			*p = l->next;
			c->nlistens--;
			stdio_listen_free(l);
		} else {
			p = &l->next;
		}
	}
	pthread_mutex_unlock(&c->listen_lock);
}

/* The graceful end of every open listen (end of input): its result, then nothing more. */
static void stdio_listen_end_all(struct stdio_conn *c)
{
	pthread_mutex_lock(&c->listen_lock);
	while (c->listens) {
		struct stdio_listen *l = c->listens;
		c->listens = l->next;
		stdio_write_json(c,
				 json_pack("{s:s, s:O, s:{s:s, s:{s:O}}}", "jsonrpc", "2.0", "id",
					   l->id, "result", "resultType", "complete", "_meta",
					   "io.modelcontextprotocol/subscriptionId", l->id));
		stdio_listen_free(l);
	}
	c->nlistens = 0;
	pthread_mutex_unlock(&c->listen_lock);
}

static void stdio_run_one(struct stdio_conn *c, struct stdio_job *job, const char *line, size_t len,
			  const struct stdio_session *session, unsigned long seq,
			  struct mcp_response *resp)
{
	char reqid[24];
	snprintf(reqid, sizeof reqid, "s%lu", seq);
	struct stdio_emit emit = {c, job};
	struct mcp_request req = {
		.transport = MCP_TRANSPORT_STDIO,
		.body = line,
		.body_len = len,
		.actor = c->actor,
		.reqid = reqid,
		.session_version = session->version,
		.session_log_level = session->log_level >= 0 ? &session->log_level : NULL,
		.subscriptions = &c->subscriptions,
		.listen = &c->listen,
		.per_principal = auth_mode() != AUTH_MODE_LOCAL,
		.emit = stdio_emit_line,
		.emit_ctx = &emit,
	};
	mcp_handle(&req, resp);
}

struct stdio_worker_arg {
	struct stdio_conn *c;
	size_t slot; /* this worker's index in c->running */
};

static void *stdio_worker(void *arg)
{
	struct stdio_conn *c = ((struct stdio_worker_arg *)arg)->c;
	size_t slot = ((struct stdio_worker_arg *)arg)->slot;
	pthread_mutex_lock(&c->lock);
	for (;;) {
		while (!c->head && !c->eof)
			pthread_cond_wait(&c->changed, &c->lock);
		if (!c->head)
			break;
		struct stdio_job *j = c->head;
		c->head = j->next;
		if (!c->head)
			c->tail = NULL;
		c->running[slot] = j;
		bool skip = j->cancelled;
		pthread_mutex_unlock(&c->lock);

		struct mcp_response resp = {0};
		if (!skip)
			stdio_run_one(c, j, j->line, j->len, &j->session, j->seq, &resp);

		pthread_mutex_lock(&c->lock);
		c->running[slot] = NULL;
		bool cancelled = j->cancelled;
		pthread_mutex_unlock(&c->lock);
		if (resp.body && !cancelled)
			stdio_write(c, resp.body);
		else if (cancelled)
			log_msg(LOG_INFO, NULL, "stdio: request %lu cancelled; no response written",
				j->seq);
		mcp_response_free(&resp);
		json_decref(j->id);
		free(j->line);
		free(j);
		pthread_mutex_lock(&c->lock);
		c->inflight--;
		pthread_cond_broadcast(&c->changed);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* notifications/cancelled {requestId}: marks every queued or running request with that id.
 * Unknown, finished or malformed ids are ignored, as the spec asks. */
static void stdio_cancel(struct stdio_conn *c, json_t *request_id)
{
	if (!json_is_string(request_id) && !json_is_integer(request_id))
		return;
	pthread_mutex_lock(&c->lock);
	for (struct stdio_job *j = c->head; j; j = j->next)
		if (json_equal(j->id, request_id))
			j->cancelled = true;
	for (size_t i = 0; i < STDIO_WORKERS; i++)
		if (c->running[i] && json_equal(c->running[i]->id, request_id))
			c->running[i]->cancelled = true;
	pthread_mutex_unlock(&c->lock);
	stdio_listen_cancel(c, request_id);
}

/* A legacy session request (un-enveloped `initialize` or `logging/setLevel`): answered here, and
 * what it set (the negotiated revision, the log level) holds for the connection's later
 * un-enveloped requests once it succeeded. */
static void stdio_session_call(struct stdio_conn *c, const char *line, size_t len,
			       const char *method, json_t *params)
{
	struct mcp_response resp = {0};
	stdio_run_one(c, NULL, line, len, &c->session, ++c->seq, &resp);
	json_t *r = resp.body ? mcp_parse_strict(resp.body, strlen(resp.body)) : NULL;
	json_t *result = json_object_get(r, "result");
	if (result && strcmp(method, "initialize") == 0) {
		const char *v = json_string_value(json_object_get(result, "protocolVersion"));
		for (size_t i = 0; v && mcp_legacy_version(i); i++)
			if (strcmp(v, mcp_legacy_version(i)) == 0)
				c->session.version = mcp_legacy_version(i); /* static string */
	} else if (result) {
		c->session.log_level =
			notify_parse_level(json_string_value(json_object_get(params, "level")));
	}
	json_decref(r);
	if (resp.body)
		stdio_write(c, resp.body);
	mcp_response_free(&resp);
}

static void stdio_line(struct stdio_conn *c, char *line, size_t len)
{
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (len == 0)
		return; /* blank lines between messages are tolerated */
	json_t *msg = mcp_parse_strict(line, len);
	json_t *params = json_object_get(msg, "params");
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *id = json_object_get(msg, "id");
	bool enveloped = json_object_get(json_object_get(params, "_meta"),
					 "io.modelcontextprotocol/protocolVersion") != NULL;
	if (json_is_object(msg) && !id && method) {
		if (strcmp(method, "notifications/cancelled") == 0)
			stdio_cancel(c, json_object_get(params, "requestId"));
		json_decref(msg); /* other notifications need no answer and change nothing */
		return;
	}
	if (json_is_object(msg) && !method && id &&
	    (json_object_get(msg, "result") || json_object_get(msg, "error"))) {
		/* A response: this server sends no requests, so there is nothing to match it to,
		 * and a response is never answered. */
		log_warn("stdio: ignoring a JSON-RPC response from the client");
		json_decref(msg);
		return;
	}
	if (json_is_object(msg) && method && !enveloped &&
	    (strcmp(method, "initialize") == 0 || strcmp(method, "logging/setLevel") == 0)) {
		stdio_session_call(c, line, len, method, params);
		json_decref(msg);
		return;
	}
	struct stdio_job *j = mem_calloc(1, sizeof *j);
	j->line = mem_strndup(line, len);
	j->len = len;
	j->id = (json_is_string(id) || json_is_integer(id)) ? json_incref(id) : NULL;
	json_decref(msg);
	pthread_mutex_lock(&c->lock);
	while (c->inflight >= STDIO_MAX_INFLIGHT)
		pthread_cond_wait(&c->changed, &c->lock);
	j->session = c->session;
	j->seq = ++c->seq;
	c->inflight++;
	if (c->tail)
		c->tail->next = j;
	else
		c->head = j;
	c->tail = j;
	pthread_cond_broadcast(&c->changed);
	pthread_mutex_unlock(&c->lock);
}

static void stdio_too_long(struct stdio_conn *c, size_t max)
{
	char body[200];
	snprintf(body, sizeof body,
		 "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":%d,\"message\":\"Invalid "
		 "Request: a message is longer than %zu bytes\"}}",
		 MCP_INVALID_REQUEST, max);
	log_warn("stdio: a line longer than %zu bytes was discarded", max);
	stdio_write(c, body);
}

int stdio_serve(const struct cfg *cfg, const struct fleet_actor *actor)
{
	struct stdio_conn c = {.actor = actor, .session = {.log_level = -1}};
	pthread_mutex_init(&c.subs.lock, NULL);
	pthread_mutex_init(&c.listen_lock, NULL);
	c.listen = (struct mcp_listen){stdio_listen_open, &c};
	c.sink = (struct feed_sink){.changed = stdio_changed, .tick = stdio_tick, .arg = &c};
	feed_set_tick(cfg->keepalive_seconds); /* also when subscriptions end after the token */
	c.subscriptions = (struct mcp_subscriptions){stdio_sub_change, &c};
	pthread_mutex_init(&c.lock, NULL);
	pthread_cond_init(&c.changed, NULL);
	pthread_mutex_init(&c.out_lock, NULL);
	/* Workers never take SIGINT/SIGTERM: the reader's read() must see them (EINTR). */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	pthread_t workers[STDIO_WORKERS];
	struct stdio_worker_arg args[STDIO_WORKERS];
	for (size_t i = 0; i < STDIO_WORKERS; i++) {
		args[i] = (struct stdio_worker_arg){&c, i};
		pthread_create(&workers[i], NULL, stdio_worker, &args[i]);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	size_t max = (size_t)cfg->max_body;
	char *line = mem_alloc(max + 1);
	size_t len = 0;
	bool overflow = false; /* discarding the rest of a too-long line */
	char chunk[65536];
	int rc = 0;
	for (;;) {
		ssize_t got = read(STDIN_FILENO, chunk, sizeof chunk);
		if (got < 0 && errno == EINTR) {
			log_info("stdio: interrupted; stopping");
			break;
		}
		if (got < 0) {
			log_error("stdio: cannot read stdin: %s", strerror(errno));
			rc = 1;
			break;
		}
		if (got == 0)
			break; /* EOF: the client closed stdin */
		for (const char *p = chunk, *end = chunk + got; p < end;) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n = (size_t)((nl ? nl : end) - p);
			if (!overflow && len + n > max) {
				overflow = true;
				len = 0;
				stdio_too_long(&c, max);
			}
			if (!overflow) {
				memcpy(line + len, p, n);
				len += n;
			}
			p += n;
			if (nl) {
				if (!overflow)
					stdio_line(&c, line, len);
				overflow = false;
				len = 0;
				p++;
			}
		}
		pthread_mutex_lock(&c.out_lock);
		bool broken = c.out_broken;
		pthread_mutex_unlock(&c.out_lock);
		if (broken)
			break;
	}
	if (len && !overflow)
		stdio_line(&c, line, len); /* a last message without its newline */
	free(line);

	/* Answer what was already read, then stop the workers. */
	pthread_mutex_lock(&c.lock);
	c.eof = true;
	pthread_cond_broadcast(&c.changed);
	pthread_mutex_unlock(&c.lock);
	for (size_t i = 0; i < STDIO_WORKERS; i++)
		pthread_join(workers[i], NULL);
	feed_remove(&c.sink); /* nothing more is told after this */
	feed_stop();
	stdio_listen_end_all(&c);
	uriset_clear(&c.subs);
	pthread_mutex_destroy(&c.subs.lock);
	pthread_mutex_destroy(&c.listen_lock);
	pthread_mutex_destroy(&c.lock);
	pthread_cond_destroy(&c.changed);
	pthread_mutex_destroy(&c.out_lock);
	log_info("stdio: end of input; exiting");
	return rc;
}
