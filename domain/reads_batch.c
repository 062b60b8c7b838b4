/* The batch former of reads (reads_batch.h): a queue of reads, the executor's source. A batch
 * holds calls of one read when that read's statement is known (fleet.read_batch_sql: asked once
 * per read, then prepared on each connection); otherwise, and for a batch whose statement failed,
 * fleet.read_batch, which runs any mix of reads and isolates a call that raises. */
#include "reads_batch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/deadline.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "domain/pg/conn.h"
#include "domain/pg/db.h"
#include "domain/pg/exec.h"

/* fleet.read_batch's parameters, in order (the statements of one read take the last ten, from
 * RB_SUBJECT on, in the same order: see rb_params). */
enum {
	RB_FN,
	RB_COLS,
	RB_KEY,
	RB_PREFIX,
	RB_LIST,
	RB_MAY,
	RB_SUBJECT,
	RB_CLIENT,
	RB_REF,
	RB_ARGS,
	RB_TOOL,
	RB_TARGET,
	RB_DIGEST,
	RB_REQUEST_ID,
	RB_TRACE_ID,
	RB_TOKEN_REF,
	RB_NPARAMS
};
/* The results' columns, read by name. */
enum { RC_ELEM, RC_SUBJECT, RC_CLIENT, RC_REF, RC_OUTCOME, RC_STATE, RC_LINE, RC_NCOLS };
static const char *const reads_batch_columns[RC_NCOLS] = {"elem",    "subject",  "client_id", "ref",
							  "outcome", "sqlstate", "line"};

#define RB_MAX_KINDS 32

/* A read the batches have seen (a function with its columns, key, prefix and kind) and the
 * statement of its batches once known. Kinds are added, never removed (a handful per process). */
struct reads_batch_kind {
	char *function, *columns, *key, *prefix;
	bool list;
	char name[24]; /* its prepared statement's name */
	char *sql;     /* its statement (fleet.read_batch_sql), or NULL: not known (yet) */
	bool asking;   /* fleet.read_batch_sql is under way */
	struct exec_stmt ask;
	const char *ask_params[5];
};

/* One statement's worth of reads; freed by the last of them to be done with it. */
struct reads_batch {
	struct exec_stmt stmt;
	const char *params[RB_NPARAMS];
	struct mem_buf bufs[RB_NPARAMS];
	struct reads_batch_elem *elems[READS_BATCH_MAX];
	size_t n;
	struct reads_batch_kind *kind; /* its read's statement, or NULL: fleet.read_batch */
	PGresult *res;
	int col[RC_NCOLS];
	atomic_int refs;
};

static pthread_mutex_t rb_lock = PTHREAD_MUTEX_INITIALIZER; /* guards what follows */
static struct reads_batch_elem *rb_head; /* reads waiting for a batch, oldest first */
static struct reads_batch_elem **rb_tail = &rb_head;
static size_t rb_queued;
static long long rb_oldest_ms; /* when the oldest waiting read was queued */
static bool rb_lingering;      /* the executor waits for more until the linger is over */
static struct reads_batch_kind rb_kinds[RB_MAX_KINDS];
static size_t rb_nkinds;
static pthread_once_t rb_once = PTHREAD_ONCE_INIT;
static atomic_ullong rb_seq;

static void rb_free(struct reads_batch *b)
{
	PQclear(b->res);
	for (size_t i = 0; i < RB_NPARAMS; i++)
		free(b->bufs[i].p);
	free(b);
}

static void rb_release(struct reads_batch *b)
{
	if (atomic_fetch_sub(&b->refs, 1) == 1)
		rb_free(b);
}

/* The kind of e (added if new; NULL when the table is full: those reads go generic). Called with
 * rb_lock held. */
static struct reads_batch_kind *rb_kind_of(const struct reads_batch_elem *e)
{
	for (size_t i = 0; i < rb_nkinds; i++) {
		struct reads_batch_kind *k = &rb_kinds[i];
		if (strcmp(k->function, e->function) == 0 && strcmp(k->columns, e->columns) == 0 &&
		    strcmp(k->key, e->key_column) == 0 &&
		    strcmp(k->prefix, e->rights_prefix) == 0 && k->list == e->list)
			return k;
	}
	if (rb_nkinds == RB_MAX_KINDS)
		return NULL;
	struct reads_batch_kind *k = &rb_kinds[rb_nkinds];
	*k = (struct reads_batch_kind){.function = mem_strdup(e->function),
				       .columns = mem_strdup(e->columns),
				       .key = mem_strdup(e->key_column),
				       .prefix = mem_strdup(e->rights_prefix),
				       .list = e->list};
	snprintf(k->name, sizeof k->name, "read_batch_%zu", rb_nkinds + 1);
	rb_nkinds++;
	return k;
}

/* fleet.read_batch_sql answered (executor's thread): the kind's batches use it from now on. */
static void rb_kind_told(struct exec_stmt *s)
{
	struct reads_batch_kind *k =
		(struct reads_batch_kind *)((char *)s - offsetof(struct reads_batch_kind, ask));
	char *sql = NULL;
	if (s->st == FLEET_OK && PQntuples(s->res) == 1 && !PQgetisnull(s->res, 0, 0))
		sql = mem_strdup(PQgetvalue(s->res, 0, 0));
	else
		log_error("fleet.read_batch_sql(%s) failed: %s; its reads go through "
			  "fleet.read_batch",
			  k->function, s->res ? PQresultErrorMessage(s->res) : "no answer");
	PQclear(s->res);
	pthread_mutex_lock(&rb_lock);
	free(k->sql);
	k->sql = sql;
	k->asking = false;
	pthread_mutex_unlock(&rb_lock);
	exec_kick();
}

/* Whether k's statement is to be asked for (neither known nor asked for yet): then the caller
 * submits k->ask once rb_lock is released. Called with rb_lock held. */
static bool rb_kind_ask(struct reads_batch_kind *k)
{
	if (k->sql || k->asking)
		return false;
	k->asking = true;
	k->ask_params[0] = k->function;
	k->ask_params[1] = k->columns;
	k->ask_params[2] = k->key;
	k->ask_params[3] = k->prefix;
	k->ask_params[4] = k->list ? "t" : "f";
	k->ask = (struct exec_stmt){
		.name = "read_batch_sql",
		.sql = "SELECT fleet.read_batch_sql($1, $2, $3, $4, $5)",
		.nparams = 5,
		.params = k->ask_params,
		.until_ms = conn_timeout_ms() > 0 ? conn_now_ms() + conn_timeout_ms() : 0,
		.done = rb_kind_told,
	};
	return true;
}

static void rb_done(struct exec_stmt *s);

/* The parameters of b's statement: fleet.read_batch's sixteen, or the ten of its read's. */
static void rb_params(struct reads_batch *b)
{
	size_t width = 0;
	for (size_t i = 0; i < b->n; i++)
		if (b->elems[i]->nargs > width)
			width = b->elems[i]->nargs;
	for (size_t p = 0; p < RB_NPARAMS; p++) {
		free(b->bufs[p].p);
		b->bufs[p] = (struct mem_buf){0};
		db_array_open(&b->bufs[p]);
	}
	for (size_t i = 0; i < b->n; i++) {
		const struct reads_batch_elem *e = b->elems[i];
		const struct audit_entry *a = e->audit;
		struct audit_ref_part trace, token, id;
		audit_ref_parts(a ? a->request_id : NULL, &trace, &token, &id);
		db_array_add(&b->bufs[RB_FN], e->function);
		db_array_add(&b->bufs[RB_COLS], e->columns);
		db_array_add(&b->bufs[RB_KEY], e->key_column);
		db_array_add(&b->bufs[RB_PREFIX], e->rights_prefix);
		db_array_add(&b->bufs[RB_LIST], e->list ? "t" : "f");
		db_array_add(&b->bufs[RB_MAY], e->may ? "t" : "f");
		db_array_add(&b->bufs[RB_SUBJECT], e->actor->subject);
		db_array_add(&b->bufs[RB_CLIENT], e->actor->client_id);
		db_array_add(&b->bufs[RB_REF], e->ref);
		if (width) {
			db_array_open(&b->bufs[RB_ARGS]);
			for (size_t k = 0; k < width; k++)
				db_array_add(&b->bufs[RB_ARGS], k < e->nargs ? e->args[k] : NULL);
			db_array_close(&b->bufs[RB_ARGS]);
		}
		db_array_add(&b->bufs[RB_TOOL], a ? a->tool : NULL);
		db_array_add(&b->bufs[RB_TARGET], a ? a->target : NULL);
		db_array_add(&b->bufs[RB_DIGEST], a ? a->args_digest : NULL);
		db_array_add_n(&b->bufs[RB_REQUEST_ID], a ? id.p : NULL, id.len);
		db_array_add_n(&b->bufs[RB_TRACE_ID], trace.p, trace.len);
		db_array_add_n(&b->bufs[RB_TOKEN_REF], token.p, token.len);
	}
	for (size_t p = 0; p < RB_NPARAMS; p++) {
		db_array_close(&b->bufs[p]);
		b->params[p] = b->bufs[p].p;
	}
	long long until = 0;
	bool bounded = true;
	for (size_t i = 0; i < b->n; i++) {
		if (!b->elems[i]->until_ms)
			bounded = false;
		else if (b->elems[i]->until_ms > until)
			until = b->elems[i]->until_ms;
	}
	static const char generic[] =
		"SELECT elem, ord, subject, client_id, ref, outcome, sqlstate, line FROM "
		"fleet.read_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, "
		"$15, "
		"$16)";
	b->stmt = (struct exec_stmt){
		.name = b->kind ? b->kind->name : "read_batch",
		.sql = b->kind ? b->kind->sql : generic,
		.nparams = b->kind ? RB_NPARAMS - RB_SUBJECT : RB_NPARAMS,
		.params = b->kind ? b->params + RB_SUBJECT : b->params,
		.until_ms = bounded ? until : 0,
		.done = rb_done,
	};
}

/* Whether a failed statement said "not run" (an error the server reported: nothing of it
 * committed), so that its reads may run again, rather than "unknown" (a lost connection, a
 * timeout: it may have committed). */
static bool rb_rolled_back(const struct exec_stmt *s)
{
	return s->res && !s->timed_out && PQresultStatus(s->res) == PGRES_FATAL_ERROR &&
	       s->st == FLEET_INTERNAL;
}

/* The statement's end, on the executor's thread: each read gets its rows (found by the row's
 * element number), then is woken. Nothing of b is touched after the first wake-up but through
 * what was read before it. A batch of one read's statement that failed runs again whole through
 * fleet.read_batch, which answers each call alone. */
static void rb_done(struct exec_stmt *s)
{
	struct reads_batch *b = (struct reads_batch *)s;
	size_t n = b->n;
	if (s->st != FLEET_OK && b->kind && rb_rolled_back(s)) {
		const char *state = PQresultErrorField(s->res, PG_DIAG_SQLSTATE);
		log_warn("a batch of %zu %s read(s) failed (%s): run again call by call", n,
			 b->kind->function, state ? state : "?");
		/* A statement that no longer fits its function (replaced, dropped): asked
		 * again. */
		pthread_mutex_lock(&rb_lock);
		if (state && (strncmp(state, "42", 2) == 0 || strcmp(state, "0A000") == 0 ||
			      strcmp(state, "26000") == 0)) {
			free(b->kind->sql);
			b->kind->sql = NULL;
		}
		pthread_mutex_unlock(&rb_lock);
		PQclear(s->res);
		b->kind = NULL;
		rb_params(b);
		exec_submit(&b->stmt);
		return;
	}
	b->res = s->res;
	enum fleet_status st = s->st;
	if (st == FLEET_OK && db_columns(b->res, "fleet.read_batch", reads_batch_columns, RC_NCOLS,
					 b->col) != FLEET_OK)
		st = FLEET_INTERNAL;
	for (size_t i = 0; i < n; i++)
		b->elems[i]->nrows = 0;
	int rows = st == FLEET_OK ? PQntuples(b->res) : 0;
	long prev = -1;
	for (int r = 0; r < rows && st == FLEET_OK; r++) {
		long e = strtol(PQgetvalue(b->res, r, b->col[RC_ELEM]), NULL, 10) - 1;
		if (e < prev || e < 0 || (size_t)e >= n) {
			log_error("read batch: row %d names element %ld of %zu, out of order", r,
				  e + 1, n);
			st = FLEET_INTERNAL;
			break;
		}
		if (e != prev)
			b->elems[e]->first = (size_t)r;
		b->elems[e]->nrows++;
		prev = e;
	}
#ifdef FLEET_TEST_SWAP_ROWS
	/* Test-only build (bikaroo-mcp-swap-rows): the first two reads of every batch get each
	 * other's rows, so the tests show that the echo check refuses them. Never in the product
	 * binary. */
	if (n >= 2) {
		size_t f = b->elems[0]->first, k = b->elems[0]->nrows;
		b->elems[0]->first = b->elems[1]->first;
		b->elems[0]->nrows = b->elems[1]->nrows;
		b->elems[1]->first = f;
		b->elems[1]->nrows = k;
	}
#endif
	const char *result[] = {st == FLEET_OK ? "ok" : "failed"};
	metrics_add(&metrics_audit_batches, result, 1);
	if (s->st != FLEET_OK) {
		const char *why = b->res ? PQresultErrorMessage(b->res) : "";
		log_error("a batch of %zu read(s) failed: %s%s%s: those reads fail", n,
			  s->timed_out ? "no answer in time" : fleet_status_name(s->st),
			  *why ? ": " : "", why);
		/* Whatever the cause, the caller may try again: 503, never a read without its
		 * row. */
		st = FLEET_UNAVAILABLE;
	}
	atomic_store(&b->refs, (int)n);
	struct reads_batch_elem *elems[READS_BATCH_MAX];
	memcpy(elems, b->elems, n * sizeof *elems);
	for (size_t i = 0; i < n; i++) {
		elems[i]->st = st;
		task_wake(&elems[i]->wait);
	}
}

/* A read whose deadline passed before it was sent: it fails, nothing was done. */
static void rb_expire(struct reads_batch_elem *e)
{
	conn_count_error("timeout");
	conn_note_timeout();
	e->st = FLEET_UNAVAILABLE;
	e->batch = NULL;
	task_wake(&e->wait);
}

/* Sorting key of a generic batch: audited reads first (fleet.read_batch writes their rows from
 * a slice), then by read, so that each read's calls run together. */
static int rb_cmp(const struct reads_batch_elem *a, const struct reads_batch_elem *b)
{
	if (!a->audit != !b->audit)
		return a->audit ? -1 : 1;
	int c = strcmp(a->function, b->function);
	return c ? c : strcmp(a->columns, b->columns);
}

/* The executor's source: a batch of what waits, when a connection is free. The oldest read's
 * kind decides: when its statement is known, the batch holds reads of that kind only, else any
 * (fleet.read_batch). */
static struct exec_stmt *rb_take(void *arg, long long now, long long *wake)
{
	(void)arg;
	pthread_mutex_lock(&rb_lock);
	if (!rb_head) {
		pthread_mutex_unlock(&rb_lock);
		return NULL;
	}
	/* Linger for more while calls are under way that may bring some, at most the linger
	 * after the oldest arrived. */
	if (rb_queued < READS_BATCH_MAX && now < rb_oldest_ms + READS_BATCH_LINGER_MS &&
	    task_busy() > 0) {
		*wake = rb_oldest_ms + READS_BATCH_LINGER_MS;
		rb_lingering = true;
		pthread_mutex_unlock(&rb_lock);
		return NULL;
	}
	rb_lingering = false;
	struct reads_batch_kind *kind = rb_head->kind;
	struct reads_batch_kind *ask = kind && rb_kind_ask(kind) ? kind : NULL;
	if (kind && !kind->sql)
		kind = NULL;
	struct reads_batch_elem *taken[READS_BATCH_MAX];
	size_t n = 0;
	struct reads_batch_elem **p = &rb_head;
	while (*p && n < READS_BATCH_MAX) {
		struct reads_batch_elem *e = *p;
		bool fits = !kind || e->kind == kind;
		if (!fits) {
			p = &e->next;
			continue;
		}
		*p = e->next;
		rb_queued--;
		if (e->until_ms && e->until_ms <= now)
			rb_expire(e);
		else
			taken[n++] = e;
	}
	rb_tail = &rb_head;
	while (*rb_tail)
		rb_tail = &(*rb_tail)->next;
	rb_oldest_ms = now; /* those left have waited at least this batch */
	pthread_mutex_unlock(&rb_lock);
	if (ask)
		exec_submit(&ask->ask);
	if (n == 0)
		return NULL;
	struct reads_batch *b = mem_calloc(1, sizeof *b);
	/* Insertion sort (stable): at most READS_BATCH_MAX. */
	for (size_t i = 0; i < n; i++) {
		size_t j = i;
		while (!kind && j > 0 && rb_cmp(taken[i], b->elems[j - 1]) < 0) {
			b->elems[j] = b->elems[j - 1];
			j--;
		}
		b->elems[j] = taken[i];
	}
	b->n = n;
	b->kind = kind;
	for (size_t i = 0; i < n; i++) {
		b->elems[i]->batch = b;
		b->elems[i]->index = i;
	}
	rb_params(b);
	return &b->stmt;
}

static void rb_expire_waiting(void *arg, long long now, long long *next)
{
	(void)arg;
	pthread_mutex_lock(&rb_lock);
	struct reads_batch_elem **p = &rb_head;
	rb_tail = &rb_head;
	while (*p) {
		struct reads_batch_elem *e = *p;
		if (e->until_ms && e->until_ms <= now) {
			*p = e->next;
			rb_queued--;
			rb_expire(e);
			continue;
		}
		if (e->until_ms && (!*next || e->until_ms < *next))
			*next = e->until_ms;
		p = &e->next;
		rb_tail = p;
	}
	pthread_mutex_unlock(&rb_lock);
}

static bool rb_pending(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&rb_lock);
	bool any = rb_head != NULL;
	pthread_mutex_unlock(&rb_lock);
	return any;
}

static void rb_init(void)
{
	static const struct exec_source src = {rb_take, rb_pending, rb_expire_waiting, NULL};
	exec_source_set(&src);
}

/* Whether row r of b echoes e: its identity, its reference. */
static bool rb_echoes(const struct reads_batch *b, int r, const struct reads_batch_elem *e)
{
	return strcmp(PQgetvalue(b->res, r, b->col[RC_SUBJECT]), e->actor->subject) == 0 &&
	       strcmp(PQgetvalue(b->res, r, b->col[RC_CLIENT]), e->actor->client_id) == 0 &&
	       strcmp(PQgetvalue(b->res, r, b->col[RC_REF]), e->ref) == 0;
}

static const char *rb_outcome(const char *v)
{
	static const char *const known[] = {"ok", "not_found", "denied", "error"};
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (strcmp(v, known[i]) == 0)
			return known[i];
	return NULL;
}

enum fleet_status reads_batch_run(struct reads_batch_elem *e)
{
	pthread_once(&rb_once, rb_init);
	if (db_held() || deadline_passed())
		return FLEET_UNAVAILABLE;
	unsigned long long seq = atomic_fetch_add(&rb_seq, 1) + 1;
	const char *ref = e->audit && e->audit->request_id ? e->audit->request_id : "";
	snprintf(e->ref, sizeof e->ref, "%llu%s%.200s", seq, *ref ? " " : "", ref);
	e->until_ms = db_deadline_ms();
	e->batch = NULL;
	e->next = NULL;
	e->st = FLEET_INTERNAL;
	task_wait_init(&e->wait);
	pthread_mutex_lock(&rb_lock);
	e->kind = e->may ? rb_kind_of(e) : NULL; /* a denied call goes generic (nothing is run) */
	if (!rb_head)
		rb_oldest_ms = conn_now_ms();
	*rb_tail = e;
	rb_tail = &e->next;
	rb_queued++;
	/* While it lingers the executor looks again at the linger's end; woken only for a full
	 * batch (a wake-up per read cost more than the batch saved). */
	bool kick = !rb_lingering || rb_queued >= READS_BATCH_MAX;
	pthread_mutex_unlock(&rb_lock);
	if (kick)
		exec_kick();
	task_wait(&e->wait);
	task_wait_destroy(&e->wait);
	if (!e->batch)
		return e->st;
	if (e->st != FLEET_OK) {
		rb_release(e->batch);
		e->batch = NULL;
		return e->st;
	}
	const struct reads_batch *b = e->batch;
	const char *why = e->nrows == 0 ? "no row" : NULL;
	for (size_t r = 0; !why && r < e->nrows; r++)
		if (!rb_echoes(b, (int)(e->first + r), e))
			why = "a row of another read";
	if (!why) {
		int r0 = (int)e->first;
		e->outcome = rb_outcome(PQgetvalue(b->res, r0, b->col[RC_OUTCOME]));
		snprintf(e->sqlstate, sizeof e->sqlstate, "%s",
			 PQgetvalue(b->res, r0, b->col[RC_STATE]));
		if (!e->outcome)
			why = "an unknown outcome";
	}
	if (why) {
		/* Never the row itself: it may be another caller's. */
		log_error("%s for %s (reference %s): %s; refused, not answered", e->function,
			  e->actor->subject, e->ref, why);
		reads_batch_done(e);
		return FLEET_INTERNAL;
	}
	return FLEET_OK;
}

enum fleet_status reads_batch_row(const struct reads_batch_elem *e, size_t r, const char **v,
				  size_t n, char **buf)
{
	const struct reads_batch *b = e->batch;
	int row = (int)(e->first + r);
	*buf = NULL;
	for (size_t i = 0; i < n; i++)
		v[i] = NULL;
	if (r >= e->nrows || PQgetisnull(b->res, row, b->col[RC_LINE])) {
		log_error("%s: row %zu has no columns", e->function, r);
		return FLEET_INTERNAL;
	}
	/* A composite's text as record_out writes it: "(a,,"b c",...)": an empty field is NULL,
	 * a quoted one doubles '"' and '\\' inside. Unescaped into a copy. */
	const char *s = PQgetvalue(b->res, row, b->col[RC_LINE]);
	size_t len = strlen(s);
	char *out = mem_alloc(len + 1);
	*buf = out;
	size_t k = 0;
	if (*s++ != '(')
		goto bad;
	for (;;) {
		if (k == n)
			goto bad;
		if (*s == ',' || *s == ')') {
			v[k++] = NULL;
		} else {
			v[k++] = out;
			while (*s && *s != ',' && *s != ')') {
				if (*s == '"') {
					for (s++; *s; s++) {
						if (*s == '"' && s[1] == '"')
							s++;
						else if (*s == '"')
							break;
						else if (*s == '\\' && s[1])
							s++;
						*out++ = *s;
					}
					if (*s != '"')
						goto bad;
					s++;
				} else {
					*out++ = *s++;
				}
			}
			*out++ = '\0';
		}
		if (*s == ')')
			break;
		if (*s != ',')
			goto bad;
		s++;
	}
	if (k == n && s[1] == '\0')
		return FLEET_OK;
bad:
	log_error("%s: row %zu is not a record of %zu columns", e->function, r, n);
	free(*buf);
	*buf = NULL;
	return FLEET_INTERNAL;
}

void reads_batch_done(struct reads_batch_elem *e)
{
	if (e->batch)
		rb_release(e->batch);
	e->batch = NULL;
}
