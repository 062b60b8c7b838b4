/* stdio transport: an event loop on the calling thread (common/loop.h) reads stdin, splits it
 * into lines of at most BIKAROO_MAX_BODY_BYTES and runs each request as a task of that loop, as
 * the HTTP loops run theirs: it waits for the database without holding the loop. One mutex keeps
 * each line of stdout whole (the listen hub writes from its own thread). Cancellation:
 * notifications/cancelled marks the request; it finishes its (short, read-only) database call
 * but writes no response. The requests that change the connection's legacy session
 * (`initialize`, `logging/setLevel`) are run alone, reading paused, so that what they set holds
 * for every later line. Resource subscriptions are the connection's too, 2025-era
 * (resources/subscribe) and 2026-07-28 (subscriptions/listen, a request that stays open until
 * cancelled or EOF), held by the connection's listen hub (listen.h), which writes their
 * notifications as lines. */
#include "stdio.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "common/jsonw.h"
#include "common/log.h"
#include "access.h"
#include "common/mem.h"
#include "common/task.h"
#include "common/trace.h"
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

/* One request, from its line to its response: a task of the loop. */
struct stdio_job {
	struct stdio_conn *c;
	char *line;
	size_t len;
	json_t *id; /* new reference: the request id, for cancellation */
	struct stdio_session session;
	long long arrived_ns; /* when its line was read (unix ns; 0: tracing off) */
	bool cancelled;
	bool session_call; /* initialize or logging/setLevel: what it sets holds afterwards */
	const char *method;
	json_t *params; /* new reference, for a session call */
	unsigned long seq;
	struct stdio_job *prev, *next; /* under way */
};

struct stdio_conn {
	const struct fleet_actor *actor;
	struct loop *loop;
	struct loop_fd in, sig;
	struct stdio_job *jobs; /* under way (the loop's thread only) */
	size_t inflight;
	bool reading;    /* stdin is watched */
	bool unwatched;  /* stdin is a regular file, which epoll does not watch */
	bool in_session; /* a session call runs: nothing more is split until it ends */
	bool eof;        /* stdin ended (or a stop signal came) */
	int rc;
	char *line;
	size_t len, max;
	bool overflow;        /* discarding the rest of a too-long line */
	struct mem_buf pend;  /* read, not split yet (behind a session call, or past the room) */
	size_t pend_off;      /* where the next line begins in pend */
	struct loop_job more; /* splits pend again once a session call or a request ended */
	bool more_posted;
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
	bool cancelled = e->job && e->job->cancelled;
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
			  long long arrived_ns, struct mcp_response *resp)
{
	char reqid[24], trace[33];
	snprintf(reqid, sizeof reqid, "s%lu", seq);
	struct trace_ctx root = {0}; /* not valid: a trace id alone */
	trace_new_id(&root); /* a message's _meta traceparent wins (mcp_response.trace_id) */
	trace_id_hex(&root, trace);
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
		.transport_trace = &root,
		.arrived_ns = arrived_ns,
	};
	mcp_handle(c->server, &req, resp);
	acc.trace = resp->trace_id;
	acc.method = resp->method ? resp->method : resp->op.method; /* a notification: its name */
	acc.name = resp->name;
	acc.outcome = resp->outcome;
	acc.op = resp->op;
	acc.span = resp->span; /* ended with the access line */
	resp->span = NULL;
	access_record(&acc);
}

static void stdio_watch_input(struct stdio_conn *c);
static void stdio_session_result(struct stdio_conn *c, const struct mcp_response *resp,
				 const char *method, json_t *params);

/* The job's task: answered, its line written unless it was cancelled; a session call's result
 * becomes the connection's session, then reading goes on. */
static void stdio_job_run(void *arg)
{
	struct stdio_job *j = arg;
	struct stdio_conn *c = j->c;
	struct mcp_response resp = {0};
	if (!j->cancelled)
		stdio_run_one(c, j->session_call ? NULL : j, j->line, j->len, &j->session, j->seq,
			      j->arrived_ns, &resp);
	if (j->session_call)
		stdio_session_result(c, &resp, j->method, j->params);
	if (resp.body && !j->cancelled)
		stdio_write(c, resp.body);
	else if (j->cancelled)
		log_msg(LOG_INFO, NULL, "stdio: request %lu cancelled; no response written",
			j->seq);
	mcp_response_free(&resp);
	if (j->prev)
		j->prev->next = j->next;
	else
		c->jobs = j->next;
	if (j->next)
		j->next->prev = j->prev;
	c->inflight--;
	c->in_session &= !j->session_call;
	json_decref(j->id);
	json_decref(j->params);
	json_decref(j->session.extensions);
	free(j->line);
	free(j);
	/* What waits is split at the loop's top level (a task starts no task). */
	if (c->pend.len > c->pend_off && !c->more_posted) {
		c->more_posted = true;
		loop_post(c->loop, &c->more);
	}
	stdio_watch_input(c);
}

/* notifications/cancelled {requestId}: marks every queued or running request with that id.
 * Unknown, finished or malformed ids are ignored, as the spec asks. */
static void stdio_cancel(struct stdio_conn *c, json_t *request_id)
{
	if (!json_is_string(request_id) && !json_is_integer(request_id))
		return;
	for (struct stdio_job *j = c->jobs; j; j = j->next)
		if (!j->session_call && json_equal(j->id, request_id))
			j->cancelled = true;
	listen_hub_cancel(c->hub, request_id);
}

/* A legacy session request (un-enveloped `initialize` or `logging/setLevel`) answered: what it
 * set (the negotiated revision, the log level) holds for the connection's later un-enveloped
 * requests once it succeeded. */
static void stdio_session_result(struct stdio_conn *c, const struct mcp_response *resp,
				 const char *method, json_t *params)
{
	json_t *r = resp->body ? mcp_parse_strict(resp->body, strlen(resp->body)) : NULL;
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
	long long arrived_ns = trace_enabled() ? trace_now_ns() : 0;
	if (json_is_object(msg) && !id && method) {
		if (strcmp(method, "notifications/cancelled") == 0)
			stdio_cancel(c, json_object_get(params, "requestId"));
		json_decref(msg); /* other notifications need no answer and change nothing */
		/* Its access line and span all the same: the core reads it and answers nothing. */
		struct mcp_response resp;
		stdio_run_one(c, NULL, line, len, &c->session, ++c->seq, arrived_ns, &resp);
		mcp_response_free(&resp);
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
	struct stdio_job *j = mem_calloc(1, sizeof *j);
	j->c = c;
	j->line = mem_strndup(line, len);
	j->len = len;
	j->id = (json_is_string(id) || json_is_integer(id)) ? json_incref(id) : NULL;
	j->session_call =
		json_is_object(msg) && method && !enveloped &&
		(strcmp(method, "initialize") == 0 || strcmp(method, "logging/setLevel") == 0);
	if (j->session_call) {
		/* Static: the two names above. */
		j->method = strcmp(method, "initialize") == 0 ? "initialize" : "logging/setLevel";
		j->params = json_incref(params);
		c->in_session = true; /* nothing more is read until it is answered */
	}
	json_decref(msg);
	j->session = c->session;
	json_incref(j->session.extensions);
	j->seq = ++c->seq;
	j->arrived_ns = arrived_ns;
	c->inflight++;
	j->next = c->jobs;
	if (c->jobs)
		c->jobs->prev = j;
	c->jobs = j;
	task_start(c->loop, stdio_job_run, j);
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

/* Watches stdin while there is room for another request, nothing read waits to be split and no
 * session call runs. */
static void stdio_watch_input(struct stdio_conn *c)
{
	bool want = !c->eof && !c->in_session && c->inflight < STDIO_MAX_INFLIGHT &&
		    c->pend.len == c->pend_off && !c->unwatched;
	if (want == c->reading)
		return;
	if (!want)
		loop_unwatch(c->loop, &c->in);
	else if (loop_watch(c->loop, &c->in, EPOLLIN) != 0) {
		c->unwatched = true; /* a regular file: read without waiting (stdio_serve) */
		want = false;
	}
	c->reading = want;
}

/* Splits what waits in c->pend into lines and starts each, until a session call runs (what it
 * sets holds for the next line) or there is no room for another request. */
static void stdio_split(struct stdio_conn *c)
{
	while (c->pend_off < c->pend.len && !c->in_session && c->inflight < STDIO_MAX_INFLIGHT) {
		const char *p = c->pend.p + c->pend_off, *end = c->pend.p + c->pend.len;
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		if (!c->overflow && c->len + n > c->max) {
			c->overflow = true;
			c->len = 0;
			stdio_too_long(c, c->max);
		}
		if (!c->overflow) {
			memcpy(c->line + c->len, p, n);
			c->len += n;
		}
		c->pend_off += n;
		if (nl) {
			c->pend_off++;
			bool whole = !c->overflow;
			c->overflow = false;
			size_t len = c->len;
			c->len = 0;
			if (whole)
				stdio_line(c, c->line, len);
		}
	}
	if (c->pend_off == c->pend.len)
		c->pend.len = c->pend_off = 0;
}

static void stdio_more(struct loop_job *j)
{
	struct stdio_conn *c = (struct stdio_conn *)((char *)j - offsetof(struct stdio_conn, more));
	c->more_posted = false;
	stdio_split(c);
	stdio_watch_input(c);
}

/* stdin is readable: one read, split into lines. */
static void stdio_readable(struct loop_fd *f, uint32_t events)
{
	(void)events;
	struct stdio_conn *c = (struct stdio_conn *)((char *)f - offsetof(struct stdio_conn, in));
	char chunk[65536];
	ssize_t got = read(f->fd, chunk, sizeof chunk);
	if (got < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (got < 0) {
		log_error("stdio: cannot read stdin: %s", strerror(errno));
		c->rc = 1;
	}
	if (got <= 0) {
		c->eof = true;
		stdio_watch_input(c);
		return;
	}
	mem_buf_put(&c->pend, chunk, (size_t)got);
	stdio_split(c);
	pthread_mutex_lock(&c->out_lock);
	c->eof |= c->out_broken;
	pthread_mutex_unlock(&c->out_lock);
	stdio_watch_input(c);
}

/* SIGINT or SIGTERM: stop reading; what was read is answered. */
static void stdio_signalled(struct loop_fd *f, uint32_t events)
{
	(void)events;
	struct stdio_conn *c = (struct stdio_conn *)((char *)f - offsetof(struct stdio_conn, sig));
	struct signalfd_siginfo si;
	if (read(f->fd, &si, sizeof si) > 0)
		log_info("stdio: interrupted; stopping");
	c->eof = true;
	stdio_watch_input(c);
}

int stdio_serve(const struct mcp_service *server, const struct fleet_actor *actor, size_t max)
{
	struct stdio_conn c = {.actor = actor, .server = server, .session = {.log_level = -1}};
	c.hub = listen_hub_new(mcp_service_changes(server), STDIO_MAX_LISTENS, 0, 0);
	c.sub_ops = (struct listen_out_ops){.write = stdio_sub_write};
	c.listen = (struct mcp_listen){stdio_listen_open, &c};
	c.subscriptions = (struct mcp_subscriptions){stdio_sub_change, &c};
	pthread_mutex_init(&c.out_lock, NULL);
	c.max = max;
	c.line = mem_alloc(max + 1);
	/* The stop signals come through the loop (a signalfd), never lost between two reads. */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	c.loop = loop_new();
	c.more = (struct loop_job){.run = stdio_more};
	c.in = (struct loop_fd){.fd = STDIN_FILENO, .ready = stdio_readable};
	c.sig = (struct loop_fd){.fd = signalfd(-1, &block, SFD_NONBLOCK | SFD_CLOEXEC),
				 .ready = stdio_signalled};
	int fl = fcntl(STDIN_FILENO, F_GETFL);
	if (fl >= 0)
		fcntl(STDIN_FILENO, F_SETFL, fl | O_NONBLOCK);
	if (c.sig.fd >= 0)
		loop_watch(c.loop, &c.sig, EPOLLIN);
	stdio_watch_input(&c);
	/* Until EOF, then until what was read is answered (the last line without its newline
	 * included). */
	for (;;) {
		if (c.unwatched && !c.eof && !c.in_session && c.inflight < STDIO_MAX_INFLIGHT &&
		    c.pend.len == c.pend_off)
			stdio_readable(&c.in, EPOLLIN);
		if (c.eof && !c.in_session && c.pend.len > c.pend_off &&
		    c.inflight < STDIO_MAX_INFLIGHT)
			stdio_split(&c);
		if (c.eof && !c.in_session && c.pend.len == c.pend_off && c.len) {
			size_t len = c.len;
			c.len = 0;
			if (!c.overflow)
				stdio_line(&c, c.line, len);
		}
		if (c.eof && c.inflight == 0 && c.pend.len == c.pend_off && !c.len)
			break;
		loop_turn(c.loop, !c.unwatched || c.eof || c.in_session ||
					  c.inflight >= STDIO_MAX_INFLIGHT);
	}
	listen_hub_end_all(c.hub, true);
	listen_hub_free(c.hub); /* nothing more is told after this */
	loop_free(c.loop);
	task_idle_free();
	if (c.sig.fd >= 0)
		close(c.sig.fd);
	if (fl >= 0)
		fcntl(STDIN_FILENO, F_SETFL, fl);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	free(c.line);
	free(c.pend.p);
	json_decref(c.session.extensions);
	pthread_mutex_destroy(&c.out_lock);
	log_info("stdio: end of input; exiting");
	return c.rc;
}
