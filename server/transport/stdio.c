/* stdio transport: a reader (the calling thread) splits stdin into lines of at most
 * BIKAROO_MAX_BODY_BYTES, a small worker pool runs mcp_handle() on them, and one mutex keeps
 * each response on its own stdout line. Cancellation: notifications/cancelled marks the
 * in-flight request; its worker finishes the (short, read-only) database call but writes no
 * response for it. The requests that change the connection's legacy session (`initialize`,
 * `logging/setLevel`) are answered by the reader itself, so what they set holds for every
 * later line. Resource subscriptions are the connection's too, 2025-era (resources/subscribe)
 * and 2026-07-28 (subscriptions/listen, a request that stays open until cancelled or EOF), held
 * by the connection's listen hub (listen.h), which writes their notifications as lines. */
#include "stdio.h"

#include <errno.h>
#include <sys/select.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/jsonw.h"
#include "common/log.h"
#include "access.h"
#include "common/mem.h"
#include "listen.h"
#include "server/auth/auth.h"
#include "server/protocol/dispatch.h"
#include "server/protocol/notify.h"

/* What a legacy session set, as a request sees it (copied into each job when it is queued). */
struct stdio_session {
	const char *version; /* negotiated by initialize (static string), or NULL */
	int log_level;       /* enum notify_level chosen by logging/setLevel, or -1 */
	/* The "extensions" initialize declared (a new reference per holder: the connection and
	 * each queued job), or NULL. */
	json_t *extensions;
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
	const struct mcp_service *server;
	/* Resource subscriptions of both eras (listen.h). */
	struct listen_hub *hub;
	struct listen_out_ops sub_ops; /* how its messages leave: stdio_sub_write */
	struct mcp_subscriptions subscriptions;
	struct mcp_listen listen;
};

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
	char *line = cancelled ? NULL : jsonw_dump(msg);
	if (line)
		stdio_write(e->c, line);
	free(line);
}

/* ---- resource subscriptions ------------------------------------------------------------ */

/* listen_out_ops.write for this connection: one line per message (under the hub's lock, which
 * orders a subscription's lines). */
static void *stdio_sub_write(void *out, const json_t *msg)
{
	char *line = jsonw_dump(msg);
	stdio_write(out, line);
	free(line);
	return NULL;
}

/* mcp_subscriptions.change for this connection (2025-era resources/subscribe). */
static int stdio_sub_change(void *ctx, const struct fleet_actor *actor, const char *uri, bool on)
{
	struct stdio_conn *c = ctx;
	return listen_hub_subscribe(c->hub, actor, uri, on, &c->sub_ops, c);
}

/* mcp_listen.open for this connection (2026-07-28 subscriptions/listen). */
static enum mcp_listen_status stdio_listen_open(void *ctx, const struct fleet_actor *actor,
						const json_t *id, const json_t *ack,
						const char *const *uris, size_t n)
{
	struct stdio_conn *c = ctx;
	return listen_hub_open(c->hub, actor, id, ack, uris, n, &c->sub_ops, c);
}

static void stdio_run_one(struct stdio_conn *c, struct stdio_job *job, const char *line, size_t len,
			  const struct stdio_session *session, unsigned long seq,
			  struct mcp_response *resp)
{
	char reqid[24], trace[33];
	snprintf(reqid, sizeof reqid, "s%lu", seq);
	log_trace_id(NULL, trace);
	struct access_entry acc = {.transport = "stdio",
				   .reqid = reqid,
				   .trace = trace,
				   .subject = c->actor->subject,
				   .client = c->actor->client_id,
				   .quiet = true}; /* an IDE's stderr: quiet at info */
	clock_gettime(CLOCK_MONOTONIC, &acc.t0);
	struct stdio_emit emit = {c, job};
	struct mcp_request req = {
		.transport = MCP_TRANSPORT_STDIO,
		.body = line,
		.body_len = len,
		.actor = c->actor,
		.reqid = reqid,
		.session_version = session->version,
		.session_log_level = session->log_level >= 0 ? &session->log_level : NULL,
		.session_extensions = session->extensions,
		.subscriptions = &c->subscriptions,
		.listen = &c->listen,
		.per_principal = auth_mode() != AUTH_MODE_LOCAL,
		.emit = stdio_emit_line,
		.emit_ctx = &emit,
		.trace_id = trace,
	};
	mcp_handle(c->server, &req, resp);
	acc.method = resp->method;
	acc.name = resp->name;
	acc.outcome = resp->outcome;
	access_record(&acc);
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
		json_decref(j->session.extensions);
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
	listen_hub_cancel(c->hub, request_id);
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
		json_t *ext =
			json_object_get(json_object_get(params, "capabilities"), "extensions");
		json_decref(c->session.extensions);
		c->session.extensions = json_is_object(ext) ? json_deep_copy(ext) : NULL;
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
	json_incref(j->session.extensions);
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

int stdio_serve(const struct mcp_service *server, const struct fleet_actor *actor, size_t max)
{
	struct stdio_conn c = {.actor = actor, .server = server, .session = {.log_level = -1}};
	c.hub = listen_hub_new(mcp_service_changes(server), STDIO_MAX_LISTENS, 0, 0);
	c.sub_ops = (struct listen_out_ops){.write = stdio_sub_write};
	c.listen = (struct mcp_listen){stdio_listen_open, &c};
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
		mem_thread(&workers[i], stdio_worker, &args[i], "stdio worker");
	}
	/* The reader keeps them blocked too, but for its wait on stdin (pselect with the old mask):
	 * a stop signal that comes while it queues a line, or waits for room, is taken at the next
	 * wait instead of being lost before a read() that would block forever. */

	char *line = mem_alloc(max + 1);
	size_t len = 0;
	bool overflow = false; /* discarding the rest of a too-long line */
	char chunk[65536];
	int rc = 0;
	for (;;) {
		fd_set in;
		FD_ZERO(&in);
		FD_SET(STDIN_FILENO, &in);
		ssize_t got = pselect(STDIN_FILENO + 1, &in, NULL, NULL, NULL, &old) < 0
				      ? -1
				      : read(STDIN_FILENO, chunk, sizeof chunk);
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
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	/* Answer what was already read, then stop the workers. */
	pthread_mutex_lock(&c.lock);
	c.eof = true;
	pthread_cond_broadcast(&c.changed);
	pthread_mutex_unlock(&c.lock);
	for (size_t i = 0; i < STDIO_WORKERS; i++)
		pthread_join(workers[i], NULL);
	listen_hub_end_all(c.hub, true);
	listen_hub_free(c.hub); /* nothing more is told after this */
	json_decref(c.session.extensions);
	pthread_mutex_destroy(&c.lock);
	pthread_cond_destroy(&c.changed);
	pthread_mutex_destroy(&c.out_lock);
	log_info("stdio: end of input; exiting");
	return rc;
}
