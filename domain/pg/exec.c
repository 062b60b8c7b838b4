/* The database executor (exec.h): one thread, a poll() loop over its connections and a wake-up
 * descriptor. Each connection is in pipeline mode: a statement is sent as (Parse when this
 * connection has not prepared it,) Bind/Execute and a Sync of its own, so it is its own
 * transaction whatever is in flight beside it; up to `depth` of them are in flight on a
 * connection, and its results come back in order. */
#include "exec.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "conn.h"

#define EXEC_MAX_CONNS 32
#define EXEC_MAX_PREPARED 64
/* A connection that cannot be made is tried again after this long, doubled up to the most. */
#define EXEC_RETRY_MIN_MS 50
#define EXEC_RETRY_MAX_MS 1000

enum exec_state { EXEC_DOWN, EXEC_CONNECTING, EXEC_SETUP, EXEC_READY };
/* Where a statement in flight is: its Parse's result, its own results, its Sync. */
enum { EXEC_PHASE_PREPARE = 1, EXEC_PHASE_PREPARE_END, EXEC_PHASE_RESULT, EXEC_PHASE_SYNC };

struct exec_conn {
	PGconn *pg;
	enum exec_state state;
	PostgresPollingStatusType polling;
	long long until_ms;     /* connecting or setting up: by when */
	long long retry_ms;     /* down: the next attempt, not before */
	long backoff_ms;        /* the wait after the next failure */
	struct exec_stmt *head; /* in flight, oldest first */
	struct exec_stmt **tail;
	int inflight;
	bool flushing;                           /* libpq holds output it could not send yet */
	const char *prepared[EXEC_MAX_PREPARED]; /* statement names (static strings) */
	int nprepared;
	struct exec_stmt setup; /* SET statement_timeout, on a direct connection */
	char setup_sql[64];
};

static struct {
	pthread_mutex_t lock; /* guards queue, stopping, running, src */
	struct exec_stmt *queue, **queue_tail;
	bool stopping;
	struct exec_source src;
	atomic_bool asleep; /* the thread is in poll(), or about to be: wake it with wakefd */
	atomic_long free;   /* connections that could take a statement when it went to sleep */
	atomic_bool up;     /* running: exec_kick() need not take the lock */
	int wakefd;
	pthread_t thread;
	bool running;
	long nconns, depth;
	struct exec_conn conns[EXEC_MAX_CONNS];
} ex = {.lock = PTHREAD_MUTEX_INITIALIZER, .nconns = 4, .depth = 1};

static long long exec_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Ends s: sets what the executor knows, then hands it back. */
static void exec_finish(struct exec_stmt *s, PGresult *res, enum fleet_status st, bool timed_out)
{
	s->res = res;
	s->st = st;
	s->timed_out = timed_out;
	s->next = NULL;
	metrics_add(&metrics_db_busy, NULL, -1);
	s->done(s);
}

/* Closes c (without waiting on it: its state is unknown) and fails what is in flight on it:
 * sent, each may have committed. */
static void exec_close(struct exec_conn *c, bool timed_out, const char *why)
{
	struct exec_stmt *s = c->head;
	c->head = NULL;
	c->tail = &c->head;
	c->inflight = 0;
	if (c->pg) {
		if (why)
			log_error("database connection closed: %s", why);
		conn_close(c->pg);
		if (c->state == EXEC_READY || c->state == EXEC_SETUP)
			metrics_add(&metrics_db_connections, NULL, -1);
	}
	c->pg = NULL;
	c->state = EXEC_DOWN;
	c->flushing = false;
	c->nprepared = 0;
	c->retry_ms = 0;
	while (s) {
		struct exec_stmt *next = s->next;
		if (s == &c->setup)
			metrics_add(&metrics_db_busy, NULL, -1);
		else {
			PQclear(s->res);
			exec_finish(s, NULL, FLEET_UNAVAILABLE, timed_out);
		}
		s = next;
	}
}

/* Whether c, with nothing in flight, is still there: the server may have ended it while idle
 * (an administrator's pg_terminate_backend, a restart) before this thread read its socket. What
 * arrived is read first, so that no statement is sent into a connection already gone: a
 * statement sent may have committed and is never retried, so it would fail its call. */
static bool exec_idle_alive(struct exec_conn *c)
{
	/* The server's last words (a FATAL error) and the end of the stream may need two reads:
	 * libpq sees the end only when a read returns nothing. */
	for (int k = 0; k < 3; k++) {
		struct pollfd p = {.fd = PQsocket(c->pg), .events = POLLIN};
		if (poll(&p, 1, 0) <= 0)
			return true;
		if (!PQconsumeInput(c->pg) || PQstatus(c->pg) != CONNECTION_OK)
			return false;
	}
	return true;
}

static bool exec_is_prepared(const struct exec_conn *c, const char *name)
{
	for (int i = 0; i < c->nprepared; i++)
		if (c->prepared[i] == name || strcmp(c->prepared[i], name) == 0)
			return true;
	return false;
}

/* Sends s on c (in pipeline mode, with a Sync of its own); false when c broke. */
static bool exec_send(struct exec_conn *c, struct exec_stmt *s)
{
	bool pooled = conn_pooled();
	s->phase = EXEC_PHASE_RESULT;
	s->res = NULL;
	s->next = NULL;
	*c->tail = s;
	c->tail = &s->next;
	c->inflight++;
	metrics_add(&metrics_db_busy, NULL, 1);
	bool ok = true;
	if (s != &c->setup && !pooled && !exec_is_prepared(c, s->name)) {
		/* Parse once per connection, in the same round trip as the first execution. */
		ok = PQsendPrepare(c->pg, s->name, s->sql, s->nparams, NULL);
		s->phase = EXEC_PHASE_PREPARE;
		if (ok && c->nprepared < EXEC_MAX_PREPARED)
			c->prepared[c->nprepared++] = s->name;
	}
	if (ok)
		ok = pooled || s == &c->setup ? PQsendQueryParams(c->pg, s->sql, s->nparams, NULL,
								  s->params, NULL, NULL, 0)
					      : PQsendQueryPrepared(c->pg, s->name, s->nparams,
								    s->params, NULL, NULL, 0);
	if (ok)
		ok = PQpipelineSync(c->pg);
	if (ok) {
		int f = PQflush(c->pg);
		c->flushing = f > 0;
		ok = f >= 0;
	}
	if (!ok) {
		log_error("statement %s: cannot send: %s", s->name, PQerrorMessage(c->pg));
		conn_count_error("lost");
		exec_close(c, false, NULL);
	}
	return ok;
}

/* A connection is up: statements may go once its setup (if any) answered. */
static void exec_connected(struct exec_conn *c, long long now)
{
	conn_ready(c->pg);
	metrics_add(&metrics_db_connections, NULL, 1);
	c->backoff_ms = EXEC_RETRY_MIN_MS;
	if (!PQenterPipelineMode(c->pg)) {
		log_error("database connection: cannot enter pipeline mode: %s",
			  PQerrorMessage(c->pg));
		c->state = EXEC_READY; /* counted as open: exec_close takes it off */
		exec_close(c, false, NULL);
		return;
	}
	long timeout = conn_timeout_ms();
	if (conn_pooled() || timeout <= 0) {
		c->state = EXEC_READY;
		return;
	}
	/* On a direct connection the server ends a statement at the timeout too (behind a
	 * pooler a session setting would outlive the transaction). */
	snprintf(c->setup_sql, sizeof c->setup_sql, "SET statement_timeout = %ld", timeout);
	c->setup = (struct exec_stmt){.name = "setup", .sql = c->setup_sql};
	c->state = EXEC_SETUP;
	c->until_ms = now + timeout;
	exec_send(c, &c->setup);
}

static void exec_fail_waiting(long long now);

/* Whether a connection is up or on its way. */
static bool exec_any_up(void)
{
	for (long i = 0; i < ex.nconns; i++)
		if (ex.conns[i].state != EXEC_DOWN)
			return true;
	return false;
}

/* A connection attempt failed: tried again after a while; meanwhile, when no other connection
 * is up or on its way, what waits fails now (the database cannot be reached), as a caller's
 * own attempt would. */
static void exec_connect_failed(struct exec_conn *c, long long now)
{
	if (c->pg)
		conn_close(c->pg);
	c->pg = NULL;
	conn_count_error("connect");
	c->state = EXEC_DOWN;
	c->retry_ms = now + c->backoff_ms;
	c->backoff_ms =
		c->backoff_ms * 2 > EXEC_RETRY_MAX_MS ? EXEC_RETRY_MAX_MS : c->backoff_ms * 2;
	if (!exec_any_up())
		exec_fail_waiting(now);
}

/* Starts a connection attempt for c. */
static void exec_connect(struct exec_conn *c, long long now)
{
	c->pg = conn_start(conn_info());
	long timeout = conn_timeout_ms();
	c->until_ms = now + (timeout > 0 ? timeout : 10000);
	if (!c->pg || PQstatus(c->pg) == CONNECTION_BAD) {
		conn_failed(c->pg ? PQerrorMessage(c->pg) : "no memory");
		exec_connect_failed(c, now);
		return;
	}
	c->state = EXEC_CONNECTING;
	c->polling = PGRES_POLLING_WRITING;
}

/* One step of a connection attempt whose socket is ready. */
static void exec_connect_step(struct exec_conn *c, long long now)
{
	c->polling = PQconnectPoll(c->pg);
	if (c->polling == PGRES_POLLING_OK) {
		exec_connected(c, now);
	} else if (c->polling == PGRES_POLLING_FAILED) {
		conn_failed(PQerrorMessage(c->pg));
		exec_connect_failed(c, now);
	}
}

/* Takes the results that arrived on c, ending the statements they complete. */
static void exec_receive(struct exec_conn *c)
{
	if (!PQconsumeInput(c->pg)) {
		log_error("database connection lost: %s", PQerrorMessage(c->pg));
		if (c->head)
			conn_count_error("lost");
		exec_close(c, false, NULL);
		return;
	}
	while (c->head && !PQisBusy(c->pg)) {
		struct exec_stmt *s = c->head;
		PGresult *r = PQgetResult(c->pg);
		switch (s->phase) {
		case EXEC_PHASE_PREPARE:
			if (PQresultStatus(r) != PGRES_COMMAND_OK) {
				/* Not prepared after all: the execution that follows is aborted and
				 * reports it; the next statement of that name prepares again. */
				for (int i = 0; i < c->nprepared; i++)
					if (strcmp(c->prepared[i], s->name) == 0)
						c->prepared[i] = c->prepared[--c->nprepared];
				log_error("prepare %s failed: %s", s->name,
					  PQresultErrorMessage(r));
				s->res = r;
				r = NULL;
			}
			PQclear(r);
			s->phase = EXEC_PHASE_PREPARE_END;
			break;
		case EXEC_PHASE_PREPARE_END:
			/* The NULL that ends the Parse's results. */
			PQclear(r);
			s->phase = EXEC_PHASE_RESULT;
			break;
		case EXEC_PHASE_RESULT:
			if (!r) {
				s->phase = EXEC_PHASE_SYNC;
			} else if (PQresultStatus(r) == PGRES_PIPELINE_ABORTED && s->res) {
				PQclear(r); /* the Parse's error says why */
			} else {
				PQclear(s->res);
				s->res = r;
			}
			break;
		case EXEC_PHASE_SYNC:
		default: {
			if (!r)
				break;
			ExecStatusType rs = PQresultStatus(r);
			if (rs == PGRES_FATAL_ERROR) {
				/* The COMMIT at the Sync failed: that error is the statement's
				 * result (nothing of it committed); the Sync's own result follows.
				 */
				PQclear(s->res);
				s->res = r;
				break;
			}
			PQclear(r);
			if (rs != PGRES_PIPELINE_SYNC) {
				log_error("statement %s: unexpected result in pipeline (%s)",
					  s->name, PQresStatus(rs));
				exec_close(c, false, NULL);
				return;
			}
			c->head = s->next;
			if (!c->head)
				c->tail = &c->head;
			c->inflight--;
			ExecStatusType st = PQresultStatus(s->res);
			enum fleet_status fs = st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK
						       ? FLEET_OK
						       : conn_status(s->res, c->pg);
			if (s == &c->setup) {
				metrics_add(&metrics_db_busy, NULL, -1);
				PQclear(s->res);
				s->res = NULL;
				if (fs != FLEET_OK) {
					exec_close(c, false, "cannot set statement_timeout");
					return;
				}
				c->state = EXEC_READY;
				continue;
			}
			conn_note_answer();
			exec_finish(s, s->res, fs, false);
			break;
		}
		}
	}
}

/* The next statement for a free connection: the queue's oldest (unless queue is false), else
 * the source's. */
static struct exec_stmt *exec_next(long long now, long long *wake, bool queue)
{
	pthread_mutex_lock(&ex.lock);
	struct exec_stmt *s = queue ? ex.queue : NULL;
	if (s) {
		ex.queue = s->next;
		if (!ex.queue)
			ex.queue_tail = &ex.queue;
	}
	struct exec_source src = ex.src;
	pthread_mutex_unlock(&ex.lock);
	if (s)
		s->queued = true;
	else if (src.take && (s = src.take(src.arg, now, wake)) != NULL)
		s->queued = false;
	return s;
}

/* Whether statements wait, in the queue or at the source. */
static bool exec_pending(void)
{
	pthread_mutex_lock(&ex.lock);
	bool any = ex.queue != NULL;
	struct exec_source src = ex.src;
	pthread_mutex_unlock(&ex.lock);
	return any || (src.pending && src.pending(src.arg));
}

/* Fails every statement that waits (none can be sent: no connection), the queue's and the
 * source's. */
static void exec_fail_waiting(long long now)
{
	long long ignored = 0;
	struct exec_stmt *s;
	while ((s = exec_next(now, &ignored, true)) != NULL) {
		metrics_add(&metrics_db_busy, NULL, 1);
		exec_finish(s, NULL, FLEET_UNAVAILABLE, false);
	}
}

/* Fails the statements queued past their deadline (never sent: nothing happened). */
static void exec_expire_queue(long long now)
{
	pthread_mutex_lock(&ex.lock);
	struct exec_stmt *late = NULL, **keep = &ex.queue;
	while (*keep) {
		struct exec_stmt *s = *keep;
		if (s->until_ms && s->until_ms <= now) {
			*keep = s->next;
			s->next = late;
			late = s;
		} else {
			keep = &s->next;
		}
	}
	ex.queue_tail = keep;
	pthread_mutex_unlock(&ex.lock);
	while (late) {
		struct exec_stmt *next = late->next;
		metrics_add(&metrics_db_busy, NULL, 1);
		conn_count_error("timeout");
		conn_note_timeout();
		exec_finish(late, NULL, FLEET_UNAVAILABLE, true);
		late = next;
	}
}

static void *exec_run(void *arg)
{
	(void)arg;
	struct pollfd fds[EXEC_MAX_CONNS + 1];
	struct exec_conn *of[EXEC_MAX_CONNS + 1];
	for (;;) {
		long long now = exec_now_ms();
		pthread_mutex_lock(&ex.lock);
		bool stopping = ex.stopping;
		pthread_mutex_unlock(&ex.lock);
		if (stopping)
			break;
		long long wake = 0;
		for (long i = 0; i < ex.nconns; i++) {
			struct exec_conn *c = &ex.conns[i];
			if (c->state == EXEC_DOWN && c->retry_ms <= now)
				exec_connect(c, now);
		}
		/* Work waits and no connection is up or on its way: one attempt now, whatever the
		 * back-off (the database may be back), whose failure fails that work. */
		if (!exec_any_up() && exec_pending()) {
			exec_connect(&ex.conns[0], now);
			continue;
		}
		exec_expire_queue(now);
		long long next_due = 0;
		pthread_mutex_lock(&ex.lock);
		struct exec_source src = ex.src;
		pthread_mutex_unlock(&ex.lock);
		if (src.expire)
			src.expire(src.arg, now, &next_due);
		/* Work for every free connection. Statements of the queue (writes, single rows)
		 * take all connections but one: a few slow ones (reports waiting on a bike's row)
		 * never hold up every read. */
		long singles = 0;
		for (long i = 0; i < ex.nconns; i++)
			for (struct exec_stmt *s = ex.conns[i].head; s; s = s->next)
				singles += s->queued;
		for (long i = 0; i < ex.nconns; i++) {
			struct exec_conn *c = &ex.conns[i];
			if (c->state == EXEC_READY && c->inflight == 0 && exec_pending() &&
			    !exec_idle_alive(c)) {
				conn_count_error("lost");
				exec_close(c, false, "ended by the server while idle");
				continue;
			}
			while (c->state == EXEC_READY && c->inflight < ex.depth) {
				bool queue = ex.nconns == 1 || singles < ex.nconns - 1;
				struct exec_stmt *s = exec_next(now, &wake, queue);
				if (s && s->queued)
					singles++;
				if (!s)
					break;
				if (s->until_ms && s->until_ms <= now) {
					metrics_add(&metrics_db_busy, NULL, 1);
					conn_count_error("timeout");
					conn_note_timeout();
					exec_finish(s, NULL, FLEET_UNAVAILABLE, true);
					continue;
				}
				exec_send(c, s);
			}
		}
		/* Sleep until a socket, a wake-up or a deadline. */
		int n = 0;
		long long until = wake;
		if (next_due && (!until || next_due < until))
			until = next_due;
		fds[n] = (struct pollfd){.fd = ex.wakefd, .events = POLLIN};
		of[n++] = NULL;
		for (long i = 0; i < ex.nconns; i++) {
			struct exec_conn *c = &ex.conns[i];
			long long due = 0;
			short ev = 0;
			if (c->state == EXEC_CONNECTING) {
				ev = c->polling == PGRES_POLLING_READING ? POLLIN : POLLOUT;
				due = c->until_ms;
			} else if (c->state == EXEC_READY || c->state == EXEC_SETUP) {
				ev = POLLIN | (c->flushing ? POLLOUT : 0);
				for (struct exec_stmt *s = c->head; s; s = s->next)
					if (s->until_ms && (!due || s->until_ms < due))
						due = s->until_ms;
				if (c->state == EXEC_SETUP && (!due || c->until_ms < due))
					due = c->until_ms;
			} else if (c->state == EXEC_DOWN) {
				due = c->retry_ms;
			}
			if (due && (!until || due < until))
				until = due;
			if (ev) {
				fds[n] = (struct pollfd){.fd = PQsocket(c->pg), .events = ev};
				of[n++] = c;
			}
		}
		pthread_mutex_lock(&ex.lock);
		for (struct exec_stmt *s = ex.queue; s; s = s->next)
			if (s->until_ms && (!until || s->until_ms < until))
				until = s->until_ms;
		pthread_mutex_unlock(&ex.lock);
		int timeout = -1;
		if (until) {
			long long left = until - exec_now_ms();
			timeout = left <= 0 ? 0 : left > 60000 ? 60000 : (int)left;
		}
		long free = 0;
		for (long i = 0; i < ex.nconns; i++)
			free += ex.conns[i].state == EXEC_READY && ex.conns[i].inflight < ex.depth;
		atomic_store(&ex.free, free);
		/* Whether a statement of the queue could be sent now (a free connection, and fewer
		 * of them in flight than their share). */
		bool queue_room = free > 0 && (ex.nconns == 1 || singles < ex.nconns - 1);
		atomic_store(&ex.asleep, true);
		/* Anything submitted before asleep was set is in the queue: look once more if it
		 * could be sent. Statements that wait for their share go when a result frees one:
		 * looking again at once would spin (a report load kept this thread busy). */
		pthread_mutex_lock(&ex.lock);
		bool more = (ex.queue != NULL && queue_room) || ex.stopping;
		pthread_mutex_unlock(&ex.lock);
		if (more)
			timeout = 0;
		int got = poll(fds, (nfds_t)n, timeout);
		atomic_store(&ex.asleep, false);
		if (got < 0 && errno != EINTR) {
			log_error("executor: poll: %s", strerror(errno));
			continue;
		}
		now = exec_now_ms();
		for (int k = 0; got > 0 && k < n; k++) {
			if (!fds[k].revents)
				continue;
			struct exec_conn *c = of[k];
			if (!c) {
				uint64_t v;
				if (read(ex.wakefd, &v, sizeof v) < 0 && errno != EAGAIN)
					log_error("executor: wake-up: %s", strerror(errno));
				continue;
			}
			if (c->state == EXEC_CONNECTING) {
				exec_connect_step(c, now);
				continue;
			}
			if (c->flushing && (fds[k].revents & POLLOUT)) {
				int f = PQflush(c->pg);
				c->flushing = f > 0;
				if (f < 0) {
					exec_close(c, false, "cannot send");
					continue;
				}
			}
			if (fds[k].revents & (POLLIN | POLLERR | POLLHUP))
				exec_receive(c);
		}
		/* Deadlines: a connection whose oldest statement is late is closed. */
		for (long i = 0; i < ex.nconns; i++) {
			struct exec_conn *c = &ex.conns[i];
			bool late = (c->state == EXEC_CONNECTING || c->state == EXEC_SETUP) &&
				    c->until_ms <= now;
			for (struct exec_stmt *s = c->head; !late && s; s = s->next)
				late = s->until_ms && s->until_ms <= now;
			if (!late)
				continue;
			if (c->state == EXEC_CONNECTING || c->state == EXEC_SETUP) {
				conn_failed("no answer within the call timeout "
					    "(BIKAROO_CALL_TIMEOUT_MS)");
				conn_count_error("timeout");
				conn_note_timeout();
				if (c->state == EXEC_CONNECTING) {
					exec_connect_failed(c, now);
					continue;
				}
			} else {
				log_error("statement %s: no answer within the call timeout "
					  "(BIKAROO_CALL_TIMEOUT_MS); its connection is closed",
					  c->head->name);
				conn_count_error("timeout");
				conn_note_timeout();
			}
			exec_close(c, true, NULL);
		}
	}
	for (long i = 0; i < ex.nconns; i++)
		exec_close(&ex.conns[i], false, NULL);
	exec_fail_waiting(exec_now_ms());
	return NULL;
}

/* Starts the thread unless it runs (called with ex.lock held). */
static void exec_start_locked(void)
{
	if (ex.running || ex.stopping)
		return;
	long n = conn_executor();
	ex.nconns = n < 1 ? 1 : n > EXEC_MAX_CONNS ? EXEC_MAX_CONNS : n;
	ex.wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ex.wakefd < 0) {
		log_error("executor: eventfd: %s", strerror(errno));
		abort();
	}
	ex.queue = NULL;
	ex.queue_tail = &ex.queue;
	for (long i = 0; i < EXEC_MAX_CONNS; i++) {
		ex.conns[i] = (struct exec_conn){.backoff_ms = EXEC_RETRY_MIN_MS};
		ex.conns[i].tail = &ex.conns[i].head;
	}
	ex.running = true;
	atomic_store(&ex.up, true);
	mem_thread(&ex.thread, exec_run, NULL, "database executor");
}

/* Wakes the thread if it sleeps. */
static void exec_wake(void)
{
	if (atomic_exchange(&ex.asleep, false)) {
		uint64_t one = 1;
		if (write(ex.wakefd, &one, sizeof one) < 0 && errno != EAGAIN)
			log_error("executor: wake-up: %s", strerror(errno));
	}
}

void exec_source_set(const struct exec_source *src)
{
	pthread_mutex_lock(&ex.lock);
	ex.src = *src;
	pthread_mutex_unlock(&ex.lock);
}

void exec_kick(void)
{
	if (!atomic_load(&ex.up)) {
		pthread_mutex_lock(&ex.lock);
		exec_start_locked();
		pthread_mutex_unlock(&ex.lock);
	}
	/* While every connection is busy, the source is asked again as soon as one is free: no
	 * need to wake the thread now (a wake-up per read was the executor's main cost). */
	if (atomic_load(&ex.free) > 0)
		exec_wake();
}

void exec_submit(struct exec_stmt *s)
{
	s->next = NULL;
	pthread_mutex_lock(&ex.lock);
	exec_start_locked();
	bool stopping = ex.stopping;
	if (!stopping) {
		*ex.queue_tail = s;
		ex.queue_tail = &s->next;
	}
	pthread_mutex_unlock(&ex.lock);
	if (stopping) {
		metrics_add(&metrics_db_busy, NULL, 1);
		exec_finish(s, NULL, FLEET_UNAVAILABLE, false);
		return;
	}
	exec_wake();
}

void exec_stop(void)
{
	pthread_mutex_lock(&ex.lock);
	bool running = ex.running;
	ex.stopping = running;
	atomic_store(&ex.up, false);
	pthread_mutex_unlock(&ex.lock);
	if (!running)
		return;
	atomic_store(&ex.asleep, true);
	exec_wake();
	pthread_join(ex.thread, NULL);
	close(ex.wakefd);
	/* Stopped: a later statement (a test that configures again) starts it anew. */
	pthread_mutex_lock(&ex.lock);
	ex.running = false;
	ex.stopping = false;
	pthread_mutex_unlock(&ex.lock);
}
