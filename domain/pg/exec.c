/* The database executor (exec.h): per loop, a pool of connections watched by the loop and a
 * hook that, at each turn, connects what is down, fails what is late and sends what waits.
 * Each connection carries one unit at a time: in pipeline mode, a statement is (its Parse when
 * this connection has not prepared it, then) its Bind/Execute, and the unit ends with one Sync;
 * results come back as one group per Parse and per statement, then the Sync's. */
#include "exec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "common/log.h"
#include "common/loop.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "common/task.h"
#include "common/trace.h"
#include "conn.h"
#include "dbtrace.h"

#define EXEC_MAX_CONNS 32
#define EXEC_TRACE_STMTS 64 /* a unit's statements its span names at most (a batch's all) */
/* A connection that cannot be made is tried again after this long, doubled up to the most. */
#define EXEC_RETRY_MIN_MS 50
#define EXEC_RETRY_MAX_MS 1000
/* A unit's own bound, sent before it in its transaction: the server ends it at its deadline,
 * rolled back, its connection kept. Its connection is closed only this long after, when even
 * the cancellation does not come (a path that stopped answering). */
#define EXEC_BOUND_NAME "exec_bound"
#define EXEC_BOUND_SQL "SELECT set_config('statement_timeout', $1, true)"
#define EXEC_GRACE_MS 250

enum exec_state { EXEC_DOWN, EXEC_CONNECTING, EXEC_READY };

struct exec_pool;

struct exec_conn {
	struct exec_pool *pool;
	struct loop_fd fd;
	PGconn *pg;
	enum exec_state state;
	PostgresPollingStatusType polling;
	long long until_ms;            /* connecting: by when */
	long long retry_ms;            /* down: the next attempt, not before */
	long backoff_ms;               /* the wait after the next failure */
	struct exec_unit *unit;        /* in flight */
	bool flushing;                 /* libpq holds output it could not send yet */
	struct conn_prepared prepared; /* what it parsed already */
};

/* The connections of one conninfo on one loop: a loop's default pool, or a session. */
struct exec_pool {
	struct loop *loop;
	struct loop_hook hook;
	char *conninfo;
	bool simple;  /* the simple query protocol, one unit at a time (a session) */
	bool session; /* freed by exec_session_close, not with its loop */
	struct exec_unit *queue, **tail;
	char why[256]; /* the last connection attempt's failure, on one line */
	long nconns;
	struct exec_conn conns[EXEC_MAX_CONNS];
	struct dbtrace_memo memo; /* its units' summaries (dbtrace.h) */
};

static const char exec_key[] = "exec"; /* the loop slot of its default pool */

/* Ends u: its out fields are set; done() may free it. */
static void exec_finish(struct exec_unit *u, enum fleet_status st, bool timed_out)
{
	u->st = st;
	u->timed_out = timed_out;
	u->next = NULL;
	metrics_add(&metrics_db_busy, NULL, -1);
	if (st == FLEET_OK)
		conn_note_answer();
	const PGresult *bad = u->error;
	for (size_t i = 0; !bad && st != FLEET_OK && i < u->n; i++)
		if (PQresultStatus(u->stmts[i].res) == PGRES_FATAL_ERROR)
			bad = u->stmts[i].res;
	dbtrace_end(u->span, st != FLEET_OK, bad, timed_out, &u->trace);
	u->span = NULL;
	u->done(u);
}

static void exec_unwatch(struct exec_conn *c)
{
	if (c->fd.fd >= 0)
		loop_unwatch(c->pool->loop, &c->fd);
	c->fd.fd = -1;
}

/* Closes c (without waiting on it: its state is unknown) and fails what it carried: sent, it
 * may have committed. */
static void exec_close(struct exec_conn *c, bool timed_out, const char *why)
{
	struct exec_unit *u = c->unit;
	c->unit = NULL;
	exec_unwatch(c);
	if (c->pg) {
		if (why)
			log_error("database connection closed: %s", why);
		if (c->state == EXEC_READY)
			metrics_add(&metrics_db_connections, NULL, -1);
		conn_close(c->pg);
	}
	c->pg = NULL;
	c->state = EXEC_DOWN;
	c->flushing = false;
	c->prepared.n = 0;
	c->retry_ms = 0;
	if (u) {
		for (size_t i = 0; i < u->n; i++) {
			PQclear(u->stmts[i].res);
			u->stmts[i].res = NULL;
		}
		PQclear(u->error);
		u->error = NULL;
		exec_finish(u, FLEET_UNAVAILABLE, timed_out);
	}
}

static void exec_watch(struct exec_conn *c, uint32_t events)
{
	int fd = PQsocket(c->pg);
	if (fd != c->fd.fd)
		exec_unwatch(c);
	c->fd.fd = fd;
	if (loop_watch(c->pool->loop, &c->fd, events) != 0) {
		c->fd.fd = -1;
		exec_close(c, false, "cannot watch its socket");
	}
}

/* Whether the server ends u at its deadline: a unit with one, on a pipeline (not a simple
 * session). Its transaction begins with a statement_timeout of what is left (pooler or not: a
 * session setting would outlive the transaction); at the deadline PostgreSQL rolls it back and
 * the connection stays. */
static bool exec_bound(const struct exec_conn *c, const struct exec_unit *u)
{
	return u->until_ms && !c->pool->simple;
}

/* When c's unit is given up and c closed. */
static long long exec_close_at(const struct exec_conn *c)
{
	return c->unit->until_ms + (exec_bound(c, c->unit) ? EXEC_GRACE_MS : 0);
}

/* Sends one statement on c: its Parse first (*parse) when named and c has not prepared it yet. */
static bool exec_send_one(struct exec_conn *c, bool named, const char *name, const char *sql,
			  int nparams, const char *const *params, bool *parse)
{
	*parse = named && name && !conn_prepared_has(&c->prepared, name);
	if (*parse) {
		/* Parsed once per connection, in the round trip of its first execution. */
		if (!PQsendPrepare(c->pg, name, sql, nparams, NULL))
			return false;
		conn_prepared_add(&c->prepared, name);
	}
	if (c->pool->simple && nparams == 0)
		return PQsendQuery(c->pg, sql);
	if (named && name)
		return PQsendQueryPrepared(c->pg, name, nparams, params, NULL, NULL, 0);
	return PQsendQueryParams(c->pg, sql, nparams, NULL, params, NULL, NULL, 0);
}

/* Sends u on c; false when c broke (u then failed). */
static bool exec_send(struct exec_conn *c, struct exec_unit *u)
{
	struct exec_pool *p = c->pool;
	c->unit = u;
	u->at = 0;
	u->lead = 0;
	u->sync = false;
	u->error = NULL;
	u->why = NULL;
	u->rolled_back = false;
	metrics_add(&metrics_db_busy, NULL, 1);
	if (u->trace_parent) {
		const char *sql[EXEC_TRACE_STMTS], *name[EXEC_TRACE_STMTS];
		size_t n = u->n < EXEC_TRACE_STMTS ? u->n : EXEC_TRACE_STMTS;
		for (size_t i = 0; i < n; i++) {
			sql[i] = u->stmts[i].sql;
			name[i] = u->stmts[i].name;
		}
		u->span = dbtrace_begin(u->trace_parent, sql, name, n, u->trace_calls, c->pg,
					&p->memo);
	}
	bool ok = true, named = !p->simple && !conn_pooled();
	if (exec_bound(c, u)) { /* the unit's statement_timeout: what is left until its deadline */
		long long left = u->until_ms - loop_now_ms();
		char ms[24];
		snprintf(ms, sizeof ms, "%lld", left > 1 ? left : 1);
		const char *v[] = {ms};
		bool parse;
		ok = exec_send_one(c, named, EXEC_BOUND_NAME, EXEC_BOUND_SQL, 1, v, &parse);
		u->lead = 1 + parse;
	}
	for (size_t i = 0; ok && i < u->n; i++) {
		struct exec_stmt *s = &u->stmts[i];
		s->res = NULL;
		ok = exec_send_one(c, named, s->name, s->sql, s->nparams, s->params, &s->parse);
	}
	if (ok && !p->simple)
		ok = PQpipelineSync(c->pg);
	if (ok) {
		int f = PQflush(c->pg);
		c->flushing = f > 0;
		ok = f >= 0;
	}
	if (!ok) {
		log_error("statement %s: cannot send: %s", u->n ? u->stmts[0].sql : "?",
			  PQerrorMessage(c->pg));
		conn_count_error("lost");
		exec_close(c, false, NULL);
		return false;
	}
	exec_watch(c, EPOLLIN | (c->flushing ? EPOLLOUT : 0));
	return true;
}

/* The unit u's statement whose results come now, and whether they are its Parse's. */
static struct exec_stmt *exec_group(struct exec_unit *u, bool *parse)
{
	size_t g = 0;
	for (size_t i = 0; i < u->n; i++) {
		if (u->stmts[i].parse && g++ == u->at) {
			*parse = true;
			return &u->stmts[i];
		}
		if (g++ == u->at) {
			*parse = false;
			return &u->stmts[i];
		}
	}
	return NULL;
}

/* One result r of c's unit (NULL: the end of a group). False when c was closed. */
static bool exec_result(struct exec_conn *c, PGresult *r)
{
	struct exec_unit *u = c->unit;
	if (c->pool->simple) {
		/* A simple query: results until NULL; the first error is the unit's. */
		if (r) {
			ExecStatusType rs = PQresultStatus(r);
			if (rs != PGRES_TUPLES_OK && rs != PGRES_COMMAND_OK &&
			    rs != PGRES_EMPTY_QUERY && !u->error)
				u->error = r;
			else if (u->n && !u->error) {
				PQclear(u->stmts[0].res);
				u->stmts[0].res = r;
			} else
				PQclear(r);
			return true;
		}
		c->unit = NULL;
		u->rolled_back = u->error != NULL;
		exec_finish(u, u->error ? conn_status(u->error, c->pg) : FLEET_OK, false);
		return true;
	}
	if (u->lead) { /* the unit's statement_timeout: its Parse, its result */
		if (!r) {
			u->lead--;
		} else if (PQresultStatus(r) == PGRES_FATAL_ERROR && !u->error) {
			conn_prepared_forget(&c->prepared,
					     EXEC_BOUND_NAME); /* it may not be prepared */
			u->error = r; /* then every statement of the unit is aborted */
		} else {
			PQclear(r);
		}
		return true;
	}
	if (!u->sync) {
		bool parse = false;
		struct exec_stmt *s = exec_group(u, &parse);
		if (!r) {
			u->at++;
			u->sync = exec_group(u, &parse) == NULL;
			return true;
		}
		ExecStatusType rs = PQresultStatus(r);
		if (parse && rs == PGRES_COMMAND_OK) {
			PQclear(r);
		} else if (parse) {
			conn_prepared_forget(&c->prepared, s->name);
			if (rs != PGRES_PIPELINE_ABORTED)
				log_error("prepare %s failed: %s", s->name,
					  PQresultErrorMessage(r));
			PQclear(s->res);
			s->res = r; /* its error says why the statement did not run */
		} else if (rs == PGRES_PIPELINE_ABORTED && s->res) {
			PQclear(r); /* its Parse's error says why */
		} else {
			PQclear(s->res);
			s->res = r;
		}
		return true;
	}
	if (!r)
		return true;
	ExecStatusType rs = PQresultStatus(r);
	if (rs == PGRES_FATAL_ERROR) {
		/* The COMMIT at the Sync failed: nothing committed; the Sync's own result follows.
		 */
		PQclear(u->error);
		u->error = r;
		return true;
	}
	PQclear(r);
	if (rs != PGRES_PIPELINE_SYNC) {
		log_error("a unit's Sync: unexpected result in pipeline (%s)", PQresStatus(rs));
		exec_close(c, false, NULL);
		return false;
	}
	c->unit = NULL;
	enum fleet_status st = FLEET_OK;
	const PGresult *bad = u->error;
	for (size_t i = 0; !bad && i < u->n; i++) {
		ExecStatusType s = PQresultStatus(u->stmts[i].res);
		if (s != PGRES_TUPLES_OK && s != PGRES_COMMAND_OK)
			bad = u->stmts[i].res;
	}
	if (bad) {
		st = conn_status(bad, c->pg);
		u->rolled_back = PQresultStatus(bad) == PGRES_FATAL_ERROR && st == FLEET_INTERNAL;
	}
	exec_finish(u, st, conn_cancelled(bad));
	return true;
}

/* Takes the results that arrived on c. */
static void exec_receive(struct exec_conn *c)
{
	if (!PQconsumeInput(c->pg)) {
		log_error("database connection lost: %s", PQerrorMessage(c->pg));
		if (c->unit)
			conn_count_error("lost");
		exec_close(c, false, NULL);
		return;
	}
	for (PGnotify *n; (n = PQnotifies(c->pg)) != NULL;)
		PQfreemem(n);
	while (c->unit && !PQisBusy(c->pg))
		if (!exec_result(c, PQgetResult(c->pg)))
			return;
}

static void exec_connected(struct exec_conn *c);
static void exec_expire(struct exec_pool *p, long long now, bool all);

/* Whether a connection of p is up or on its way. */
static bool exec_any_up(const struct exec_pool *p)
{
	for (long i = 0; i < p->nconns; i++)
		if (p->conns[i].state != EXEC_DOWN)
			return true;
	return false;
}

/* A connection attempt failed: tried again after a while; meanwhile, when no other connection
 * of its pool is up or on its way, what waits fails now (the database cannot be reached), as a
 * caller's own attempt would. */
static void exec_connect_failed(struct exec_conn *c, long long now, const char *why)
{
	log_escape(why, c->pool->why, sizeof c->pool->why);
	conn_failed(why);
	conn_count_error("connect");
	exec_close(c, false, NULL);
	c->retry_ms = now + c->backoff_ms;
	c->backoff_ms =
		c->backoff_ms * 2 > EXEC_RETRY_MAX_MS ? EXEC_RETRY_MAX_MS : c->backoff_ms * 2;
	if (!exec_any_up(c->pool))
		exec_expire(c->pool, now, true);
}

static void exec_ready(struct loop_fd *f, uint32_t events)
{
	struct exec_conn *c = (struct exec_conn *)((char *)f - offsetof(struct exec_conn, fd));
	if (c->state == EXEC_CONNECTING) {
		c->polling = PQconnectPoll(c->pg);
		if (c->polling == PGRES_POLLING_OK) {
			exec_connected(c);
		} else if (c->polling == PGRES_POLLING_FAILED) {
			exec_connect_failed(c, loop_now_ms(), PQerrorMessage(c->pg));
		} else {
			exec_watch(c, c->polling == PGRES_POLLING_READING ? EPOLLIN : EPOLLOUT);
		}
		return;
	}
	if (c->flushing && (events & EPOLLOUT)) {
		int fl = PQflush(c->pg);
		c->flushing = fl > 0;
		if (fl < 0) {
			exec_close(c, false, "cannot send");
			return;
		}
		exec_watch(c, EPOLLIN | (c->flushing ? EPOLLOUT : 0));
	}
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
		exec_receive(c);
}

/* A connection is up: units may go. */
static void exec_connected(struct exec_conn *c)
{
	conn_ready(c->pg);
	c->state = EXEC_READY;
	metrics_add(&metrics_db_connections, NULL, 1);
	c->backoff_ms = EXEC_RETRY_MIN_MS;
	if (c->pool->simple) {
		exec_watch(c, EPOLLIN);
		return;
	}
	if (!PQenterPipelineMode(c->pg)) {
		log_error("database connection: cannot enter pipeline mode: %s",
			  PQerrorMessage(c->pg));
		exec_close(c, false, NULL);
		return;
	}
	exec_watch(c, EPOLLIN);
}

static void exec_connect(struct exec_conn *c, long long now)
{
	struct exec_pool *p = c->pool;
	c->pg = conn_start(p->conninfo ? p->conninfo : conn_info());
	long timeout = conn_timeout_ms();
	c->until_ms = now + (timeout > 0 ? timeout : 10000);
	if (!c->pg || PQstatus(c->pg) == CONNECTION_BAD) {
		exec_connect_failed(c, now, c->pg ? PQerrorMessage(c->pg) : "no memory");
		return;
	}
	c->state = EXEC_CONNECTING;
	c->polling = PGRES_POLLING_WRITING;
	exec_watch(c, EPOLLOUT);
}

/* Fails the units queued in p past their deadline, or all of them (nothing was sent), oldest
 * first. */
static void exec_expire(struct exec_pool *p, long long now, bool all)
{
	struct exec_unit *late = NULL, **late_tail = &late, **keep = &p->queue;
	while (*keep) {
		struct exec_unit *u = *keep;
		if (all || (u->until_ms && u->until_ms <= now)) {
			*keep = u->next;
			*late_tail = u;
			late_tail = &u->next;
			u->next = NULL;
		} else {
			keep = &u->next;
		}
	}
	p->tail = keep;
	while (late) {
		struct exec_unit *next = late->next;
		late->why = all && *p->why ? p->why : NULL;
		metrics_add(&metrics_db_busy, NULL, 1);
		if (!all) {
			conn_count_error("timeout");
			conn_note_timeout();
		}
		exec_finish(late, FLEET_UNAVAILABLE, !all);
		late = next;
	}
}

/* Writes in flight on p. */
static long exec_writes(const struct exec_pool *p)
{
	long writes = 0;
	for (long i = 0; i < p->nconns; i++)
		writes += p->conns[i].unit && p->conns[i].unit->write;
	return writes;
}

/* Whether u may take a free connection of p with writes in flight: a write only while another
 * connection stays free for reads. */
static bool exec_may_go(const struct exec_pool *p, const struct exec_unit *u, long writes)
{
	return !u->write || p->nconns == 1 || writes < p->nconns - 1;
}

/* The loop's hook: connections, deadlines, what waits. */
static long long exec_due(struct loop_hook *h, long long now)
{
	struct exec_pool *p = (struct exec_pool *)((char *)h - offsetof(struct exec_pool, hook));
	long long due = 0;
#define EXEC_SOONER(t)                                                                             \
	do {                                                                                       \
		if ((t) && (!due || (t) < due))                                                    \
			due = (t);                                                                 \
	} while (0)
	/* Work waits and nothing is up or on its way: one attempt now, whatever the back-off (the
	 * database may be back), whose failure fails that work (exec_connect_failed). */
	if (p->queue && !exec_any_up(p))
		exec_connect(&p->conns[0], now);
	for (long i = 0; i < p->nconns; i++) {
		struct exec_conn *c = &p->conns[i];
		if (c->state == EXEC_DOWN && p->queue && c->retry_ms <= now)
			exec_connect(c, now);
		if (c->state == EXEC_CONNECTING && c->until_ms <= now) {
			conn_note_timeout();
			exec_connect_failed(c, now,
					    "no answer within the call timeout "
					    "(BIKAROO_CALL_TIMEOUT_MS)");
		}
		if (c->unit && c->unit->until_ms && exec_close_at(c) <= now) {
			log_error("a unit of %zu statement(s): no answer within the call timeout "
				  "(BIKAROO_CALL_TIMEOUT_MS); its connection is closed",
				  c->unit->n);
			conn_count_error("timeout");
			conn_note_timeout();
			exec_close(c, true, NULL);
		}
		if (c->state == EXEC_CONNECTING)
			EXEC_SOONER(c->until_ms);
		if (c->unit && c->unit->until_ms)
			EXEC_SOONER(exec_close_at(c));
	}
	exec_expire(p, now, false);
	long writes = exec_writes(p);
	for (long i = 0; i < p->nconns && p->queue; i++) {
		struct exec_conn *c = &p->conns[i];
		if (c->state != EXEC_READY || c->unit || c->flushing)
			continue;
		if (!conn_idle_alive(c->pg)) {
			conn_count_error("lost");
			exec_close(c, false, "ended by the server while idle");
			continue;
		}
		/* The oldest unit that may go. */
		struct exec_unit **pick = &p->queue;
		while (*pick && !exec_may_go(p, *pick, writes))
			pick = &(*pick)->next;
		struct exec_unit *u = *pick;
		if (!u)
			break;
		*pick = u->next;
		if (!*pick)
			p->tail = pick;
		writes += u->write;
		if (exec_send(c, u))
			EXEC_SOONER(u->until_ms);
	}
	for (struct exec_unit *u = p->queue; u; u = u->next)
		EXEC_SOONER(u->until_ms);
	for (long i = 0; i < p->nconns && p->queue; i++)
		if (p->conns[i].state == EXEC_DOWN)
			EXEC_SOONER(p->conns[i].retry_ms > now ? p->conns[i].retry_ms : now + 1);
#undef EXEC_SOONER
	return due;
}

static void exec_pool_free(struct exec_pool *p)
{
	for (long i = 0; i < p->nconns; i++)
		exec_close(&p->conns[i], false, NULL);
	exec_expire(p, 0, true);
	free(p->conninfo);
	free(p);
}

static void exec_pool_end(struct loop_hook *h)
{
	struct exec_pool *p = (struct exec_pool *)((char *)h - offsetof(struct exec_pool, hook));
	if (!p->session)
		exec_pool_free(p);
	else
		p->loop = NULL; /* its owner closes it */
}

static struct exec_pool *exec_pool_new(struct loop *l, const char *conninfo, long n, bool simple,
				       bool session)
{
	struct exec_pool *p = mem_calloc(1, sizeof *p);
	p->loop = l;
	p->conninfo = conninfo ? mem_strdup(conninfo) : NULL;
	p->simple = simple;
	p->session = session;
	p->tail = &p->queue;
	p->nconns = n < 1 ? 1 : n > EXEC_MAX_CONNS ? EXEC_MAX_CONNS : n;
	for (long i = 0; i < p->nconns; i++)
		p->conns[i] = (struct exec_conn){.pool = p,
						 .fd = {.fd = -1, .ready = exec_ready},
						 .backoff_ms = EXEC_RETRY_MIN_MS};
	p->hook = (struct loop_hook){.due = exec_due, .end = exec_pool_end};
	loop_hook(l, &p->hook);
	return p;
}

/* The calling code's loop's default pool: the configured connections, shared among the serving
 * loops (a private loop has one). */
static struct exec_pool *exec_pool_here(void)
{
	struct loop *l = task_loop();
	struct exec_pool *p = loop_get(l, exec_key);
	if (!p) {
		p = exec_pool_new(l, NULL, loop_serving() ? conn_per_loop() : 1, false, false);
		loop_set(l, exec_key, p);
	}
	return p;
}

static void exec_queue(struct exec_pool *p, struct exec_unit *u)
{
	u->next = NULL;
	u->st = FLEET_INTERNAL;
	u->timed_out = false;
	u->rolled_back = false;
	u->error = NULL;
	u->why = NULL;
	u->span = NULL;
	if (!u->trace_parent) /* sent from the loop's top level: the submitter's span, now */
		u->trace_parent = trace_current();
	*p->tail = u;
	p->tail = &u->next;
}

void exec_submit(struct exec_unit *u)
{
	exec_queue(exec_pool_here(), u);
}

bool exec_room(bool write)
{
	struct exec_pool *p = exec_pool_here();
	long free = 0, writes = exec_writes(p);
	for (long i = 0; i < p->nconns; i++)
		free += p->conns[i].state != EXEC_CONNECTING && !p->conns[i].unit;
	/* What is queued goes first, as exec_due sends it: a write that may not go yet takes no
	 * connection from the units behind it. */
	for (const struct exec_unit *u = p->queue; u && free > 0; u = u->next)
		if (exec_may_go(p, u, writes)) {
			free--;
			writes += u->write;
		}
	struct exec_unit unit = {.write = write};
	return free > 0 && exec_may_go(p, &unit, writes);
}

struct exec_session {
	struct exec_pool *pool;
};

struct exec_session *exec_session_new(const char *conninfo, bool simple)
{
	struct exec_session *s = mem_calloc(1, sizeof *s);
	s->pool = exec_pool_new(task_loop(), conninfo, 1, simple, true);
	return s;
}

void exec_session_submit(struct exec_session *s, struct exec_unit *u)
{
	if (!s->pool->loop || (s->pool->simple && u->n != 1)) {
		log_error("exec: a unit for a session %s",
			  s->pool->loop ? "of the simple protocol with more than one statement"
					: "whose loop is gone");
		abort(); /* our bug */
	}
	exec_queue(s->pool, u);
}

PGconn *exec_session_conn(struct exec_session *s)
{
	return s->pool->conns[0].state == EXEC_READY ? s->pool->conns[0].pg : NULL;
}

void exec_session_close(struct exec_session *s)
{
	if (!s)
		return;
	if (s->pool->loop)
		loop_unhook(s->pool->loop, &s->pool->hook);
	exec_pool_free(s->pool);
	free(s);
}
