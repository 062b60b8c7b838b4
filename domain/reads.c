/* The one path of every read as the acting identity (reads.h): a loop's reads wait in its queue
 * while its last batch is in the database, then go as one unit (exec.h) of statements, one per
 * caller and read; each call is woken with its statement's result and maps it itself. */
#include "reads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "common/log.h"
#include "common/loop.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "common/task.h"
#include "common/trace.h"
#include "domain/pg/conn.h"
#include "domain/pg/exec.h"
#include "rights.h"

/* Calls in one batch at most (and so groups: one per caller and read). */
#define READS_BATCH_MAX 64
/* A loop's batch in the database holds the next one back (it gathers meanwhile: larger batches,
 * less of the database's fixed cost per call; bench/README.md, "Decisions") for this long at
 * most, then a free connection takes it. */
#define READS_HOLD_MS 5
/* Reads of a process: a handful of static descriptors. */
#define READS_KINDS 32
/* The identity's statement: fleet.act_as sets the caller for the rest of the unit's transaction
 * and returns its rights, with the identity then in effect (the echo); the read that follows is
 * planned under it (its policies' perimeter known), and its plan is pinned: planned once per
 * connection, generic, never again per unit (bench/README.md, "Decisions"). */
enum { RC_ROLE, RC_REGIONS, RC_HUMAN, RC_READ, RC_REPORT, RC_CONFIRM, RC_SUBJECT, RC_CLIENT, RC_N };
#define READS_ECHO "fleet.current_subject() AS echo_subject, fleet.current_client() AS echo_client"
#define READS_ACT_SQL                                                                              \
	"SELECT a.role, a.regions, a.is_human, a.client_may_read, a.client_may_report, "           \
	"a.requires_confirmation, " READS_ECHO " FROM fleet.act_as($1::text, $2::text) AS a, "     \
	"set_config('plan_cache_mode', 'force_generic_plan', true) AS pinned"
/* A read's columns: the echo, then the function's columns and their ordinality. */
enum { RR_SUBJECT, RR_CLIENT, RR_FIRST };
/* What the server logs when it refuses a result (the tests look for it). */
#define READS_REFUSED "a row of another read; refused, not answered"

/* A read's statement, made once per process from its descriptor. */
struct reads_kind {
	const struct reads_query *q;
	char *sql;       /* the read as the transaction's identity; NULL: the rights alone */
	int key, region; /* columns of the function, or -1 */
	int nparams;     /* the read's: its keys, the audit entries of its calls */
};

/* One read, on its caller's stack. */
struct reads_call {
	const struct reads_query *q;
	const struct reads_kind *kind;
	const struct fleet_actor *actor;
	const char *key;
	const struct audit_entry *audit;
	long long until_ms;
	struct task_wait wait;
	/* out */
	enum fleet_status st;
	char sqlstate[6]; /* the read raised in SQL, alone: its SQLSTATE */
	struct reads_batch *batch;
	size_t group;            /* its statement in batch */
	struct trace_span *span; /* the span of the call (common/trace.h), NULL: not recorded */
	struct reads_call *next;
};

/* A caller and a read in a batch: its statements (the identity's, then the read's), its distinct
 * keys and its audited calls. */
struct reads_group {
	const struct reads_kind *kind;
	const struct fleet_actor *actor;
	struct mem_buf keys, calls; /* its read's parameters as text: a text[], a JSON array */
	const char *params[4];
	size_t stmt; /* its identity's statement in the batch; the read's is the next */
};

struct reads_batch {
	struct exec_unit unit;
	struct exec_stmt stmts[2 * READS_BATCH_MAX];
	struct reads_group groups[READS_BATCH_MAX];
	size_t ngroups;
	struct reads_call *calls[READS_BATCH_MAX];
	size_t ncalls;
	int refs;   /* calls not done with it yet */
	bool alone; /* the failure path: one call, run again alone */
	struct reads_loop *rl;
};

/* A loop's reads that wait for a batch, and its batches in the database. */
struct reads_loop {
	struct loop_hook hook;
	struct reads_call *head, **tail;
	size_t queued;              /* calls in head */
	int sent;                   /* batches sent, not done */
	struct reads_batch *newest; /* the last sent while not done, */
	long long newest_ms;        /* since then */
	bool ended;                 /* its loop's end: freed by its last batch's */
};

static const char reads_key[] = "reads"; /* the loop slot */
static pthread_mutex_t reads_kinds_lock = PTHREAD_MUTEX_INITIALIZER;
static struct reads_kind reads_kinds[READS_KINDS];
static size_t reads_nkinds;

/* Names are code, never input; they are checked anyway before they become SQL text: an
 * identifier of lower case, digits and _, after prefix. */
static bool reads_name_ok(const char *f, const char *prefix)
{
	size_t skip = strlen(prefix);
	if (strncmp(f, prefix, skip) != 0 || !f[skip] || strlen(f) > 63)
		return false;
	for (const char *p = f + skip; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return true;
}

static int reads_column_index(const struct reads_query *q, const char *name)
{
	for (size_t i = 0; name && i < q->ncolumns; i++)
		if (strcmp(q->columns[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* q's statement (made once; NULL, logged, when q is not a valid read). */
static const struct reads_kind *reads_kind_of(const struct reads_query *q)
{
	pthread_mutex_lock(&reads_kinds_lock);
	struct reads_kind *k = NULL;
	for (size_t i = 0; i < reads_nkinds && !k; i++)
		if (reads_kinds[i].q == q)
			k = &reads_kinds[i];
	if (k || reads_nkinds == READS_KINDS)
		goto out;
	int key = reads_column_index(q, q->key_column);
	int region = reads_column_index(q, q->region_column);
	if ((q->function && !reads_name_ok(q->function, "fleet.")) ||
	    (q->key_column && (key < 0 || !reads_name_ok(q->key_column, ""))) ||
	    (q->region_column && region < 0) || (!q->function && q->ncolumns) ||
	    (q->capability && !reads_name_ok(q->capability, ""))) {
		log_error("read %s: not a valid reads_query", q->function ? q->function : "rights");
		goto out;
	}
	k = &reads_kinds[reads_nkinds++];
	k->q = q;
	k->key = key;
	k->region = region;
	if (!q->function)
		goto out; /* the rights alone: the identity's statement */
	/* Who may use the capability, judged once for the read and for its calls' audit rows
	 * (fleet.act_as listed it). The read function is plain SQL, inlined into this statement:
	 * its rows are what row-level security lets the transaction's identity see. */
	char *gate = q->capability ? mem_printf(" WHERE fleet.may_read('%s')", q->capability)
				   : mem_strdup("");
	char *read = mem_printf("r AS MATERIALIZED (SELECT f.*, row_number() OVER () AS ordinality "
				"FROM %s(%s) AS f%s)",
				q->function, q->key_column ? "$1::text[]" : "", gate);
	k->nparams = q->key_column ? 1 : 0;
	if (q->key_column && q->capability) {
		k->nparams = 2;
		k->sql = mem_printf("WITH %s, w AS MATERIALIZED (SELECT fleet.audit_reads("
				    "fleet.current_subject(), fleet.current_client(), $2::jsonb, "
				    "fleet.may_read('%s'), ARRAY(SELECT r.%s FROM r)) AS n) "
				    "SELECT " READS_ECHO ", r.* FROM w LEFT JOIN r ON true "
				    "ORDER BY r.ordinality",
				    read, q->capability, q->key_column);
	} else {
		k->sql = mem_printf("WITH %s SELECT " READS_ECHO
				    ", r.* FROM (SELECT) AS one LEFT JOIN r ON true "
				    "ORDER BY r.ordinality",
				    read);
	}
	free(read);
	free(gate);
out:
	pthread_mutex_unlock(&reads_kinds_lock);
	return k;
}

/* ---- batches, on the loop's thread -------------------------------------------------------- */

static void reads_batch_free(struct reads_batch *b)
{
	for (size_t i = 0; i < b->unit.n; i++)
		PQclear(b->stmts[i].res);
	for (size_t g = 0; g < b->ngroups; g++) {
		free(b->groups[g].keys.p);
		free(b->groups[g].calls.p);
	}
	PQclear(b->unit.error);
	free(b);
}

/* A call is done with its batch's result. */
static void reads_release(struct reads_call *c)
{
	if (c->batch && --c->batch->refs == 0)
		reads_batch_free(c->batch);
	c->batch = NULL;
}

/* The group of c in b, added if new. */
static struct reads_group *reads_group_of(struct reads_batch *b, struct reads_call *c)
{
	for (size_t g = 0; g < b->ngroups; g++) {
		struct reads_group *x = &b->groups[g];
		if (x->kind == c->kind && strcmp(x->actor->subject, c->actor->subject) == 0 &&
		    strcmp(x->actor->client_id, c->actor->client_id) == 0) {
			c->group = g;
			return x;
		}
	}
	c->group = b->ngroups;
	struct reads_group *x = &b->groups[b->ngroups++];
	*x = (struct reads_group){.kind = c->kind, .actor = c->actor};
	return x;
}

/* A JSON string of s[0..n), or null when s is NULL, after a separator and a name. */
static void reads_json_field(struct mem_buf *w, const char *name, const char *s, size_t n)
{
	mem_buf_put(w, name, strlen(name));
	if (s)
		jsonw_string(w, s, n);
	else
		mem_buf_put(w, "null", 4);
}

/* Adds c (the last call of b) to its group x: its key to the text[] literal, unless a call of
 * the group before it has the same (each quoted, its " and \ escaped), and its audit entry to
 * the JSON array (an absent part null in the row, as fleet.audit_ref stores it). */
static void reads_group_add(struct reads_batch *b, struct reads_group *x,
			    const struct reads_call *c)
{
	if (!c->q->key_column)
		return;
	bool known = false;
	for (size_t i = 0; i + 1 < b->ncalls && !known; i++)
		known = b->calls[i]->group == c->group && strcmp(b->calls[i]->key, c->key) == 0;
	if (!known) {
		mem_buf_put(&x->keys, x->keys.len ? ",\"" : "{\"", 2);
		for (const char *k = c->key, *run = k;; k++) {
			if (*k && *k != '"' && *k != '\\')
				continue;
			mem_buf_put(&x->keys, run, (size_t)(k - run));
			if (!*k)
				break;
			mem_buf_put(&x->keys, "\\", 1);
			run = k;
		}
		mem_buf_put(&x->keys, "\"", 1);
	}
	const struct audit_entry *a = c->audit;
	if (!a)
		return;
	struct audit_ref_part trace, token, id;
	audit_ref_parts(a->request_id, &trace, &token, &id);
	struct mem_buf *w = &x->calls;
	reads_json_field(w, w->len ? ",{\"tool\":" : "[{\"tool\":", a->tool,
			 a->tool ? strlen(a->tool) : 0);
	reads_json_field(w, ",\"target\":", a->target, a->target ? strlen(a->target) : 0);
	reads_json_field(w, ",\"key\":", c->key, strlen(c->key));
	reads_json_field(w, ",\"digest\":", a->args_digest,
			 a->args_digest ? strlen(a->args_digest) : 0);
	reads_json_field(w, ",\"id\":", a->request_id ? (id.p ? id.p : "") : NULL, id.len);
	reads_json_field(w, ",\"trace\":", trace.p, trace.len);
	reads_json_field(w, ",\"token\":", token.p, token.len);
	mem_buf_put(w, c->q->list ? ",\"list\":true}" : ",\"list\":false}", c->q->list ? 13 : 14);
}

/* Group g's statement in b: its read's (read true; the identity's when it reads the rights
 * alone), or its identity's. */
static struct exec_stmt *reads_stmt(struct reads_batch *b, size_t g, bool read)
{
	const struct reads_group *x = &b->groups[g];
	return &b->stmts[x->stmt + (read && x->kind->sql ? 1 : 0)];
}

static void reads_done(struct exec_unit *u);

/* A batch of calls[0..n) (taken from rl's queue) on rl's loop; the batch. */
static struct reads_batch *reads_submit(struct reads_loop *rl, struct reads_call **calls, size_t n,
					bool alone)
{
	struct reads_batch *b = mem_calloc(1, sizeof *b);
	b->alone = alone;
	b->rl = rl;
	rl->sent++;
	long long until = 0;
	bool bounded = true;
	for (size_t i = 0; i < n; i++) {
		struct reads_call *c = calls[i];
		b->calls[b->ncalls++] = c;
		reads_group_add(b, reads_group_of(b, c), c);
		if (!c->until_ms)
			bounded = false;
		else if (c->until_ms > until)
			until = c->until_ms;
	}
	size_t n_stmts = 0;
	for (size_t g = 0; g < b->ngroups; g++) {
		struct reads_group *x = &b->groups[g];
		const struct reads_kind *k = x->kind;
		x->params[0] = x->actor->subject;
		x->params[1] = x->actor->client_id;
		if (x->keys.len) {
			mem_buf_put(&x->keys, "}", 1);
			mem_buf_put(&x->calls, x->calls.len ? "]" : "[]", x->calls.len ? 1 : 2);
			x->params[2] = x->keys.p;
			x->params[3] = x->calls.p;
		}
		x->stmt = n_stmts;
		b->stmts[n_stmts++] = (struct exec_stmt){.name = "fleet.act_as",
							 .sql = READS_ACT_SQL,
							 .nparams = 2,
							 .params = x->params};
		if (k->sql)
			b->stmts[n_stmts++] = (struct exec_stmt){.name = k->q->function,
								 .sql = k->sql,
								 .nparams = k->nparams,
								 .params = x->params + 2};
	}
	b->unit = (struct exec_unit){.stmts = b->stmts,
				     .n = n_stmts,
				     .until_ms = bounded ? until : 0,
				     .done = reads_done,
				     .trace_calls = n};
	/* One span for the unit, in the first recorded call's trace; every call links to it. */
	for (size_t i = 0; i < n && !b->unit.trace_parent; i++)
		b->unit.trace_parent = calls[i]->span;
	exec_submit(&b->unit);
	return b;
}

/* Whether a SQLSTATE says "try again" (a timeout, a lost connection, a conflict) rather than a
 * bug. */
static bool reads_retryable(const char *state)
{
	return strncmp(state, "08", 2) == 0 || strncmp(state, "40", 2) == 0 ||
	       strncmp(state, "57", 2) == 0 || strncmp(state, "55P03", 5) == 0;
}

/* The unit's end, on the loop's thread. A batch the database refused runs again call by call,
 * each alone; otherwise every call is woken with its statement's result. */
static void reads_done(struct exec_unit *u)
{
	struct reads_batch *b = (struct reads_batch *)u;
	bool ending = b->rl->ended; /* its loop's end: nothing is run again */
	if (b->rl->newest == b)
		b->rl->newest = NULL;
	if (--b->rl->sent == 0 && ending)
		free(b->rl);
	for (size_t i = 0; i < b->ncalls; i++)
		trace_link(b->calls[i]->span, &u->trace, "db_unit");
	if (u->st != FLEET_OK && u->rolled_back && !b->alone && !ending) {
		static struct log_limit limit;
		unsigned long skipped;
		const PGresult *why = u->error;
		for (size_t i = 0; !why && i < u->n; i++)
			if (PQresultStatus(b->stmts[i].res) == PGRES_FATAL_ERROR)
				why = b->stmts[i].res;
		if (log_due(&limit, 60, &skipped))
			log_warn("a batch of %zu read(s) failed (%s%s): run again call by call, "
				 "each "
				 "alone (%lu such batches before this one in the last minute)",
				 b->ncalls, u->error ? "at its COMMIT: " : "",
				 why ? PQresultErrorMessage(why) : "?", skipped);
		const char *split[] = {"split"};
		metrics_add(&metrics_audit_batches, split, 1);
		metrics_add(&metrics_reads_alone, NULL, (long)b->ncalls);
		for (size_t i = 0; i < b->ncalls; i++)
			reads_submit(b->rl, &b->calls[i], 1, true);
		reads_batch_free(b); /* the calls are the new batches' now */
		return;
	}
#ifdef FLEET_TEST_SWAP_ROWS
	/* Test-only build (bikaroo-mcp-swap-rows): the first two reads of every batch get each
	 * other's results (each group's last statement: its read, or its rights alone), so the
	 * tests show that the echo check refuses them. Never in the product binary. */
	if (u->st == FLEET_OK && b->ngroups >= 2) {
		struct exec_stmt *s0 = reads_stmt(b, 0, true), *s1 = reads_stmt(b, 1, true);
		PGresult *r = s0->res;
		s0->res = s1->res;
		s1->res = r;
	}
#endif
	enum fleet_status st = u->st;
	const char *result[] = {st == FLEET_OK ? "ok" : "failed"};
	metrics_add(&metrics_audit_batches, result, 1);
	if (st != FLEET_OK && !u->rolled_back)
		st = FLEET_UNAVAILABLE; /* it may have committed: the caller may try again */
	b->refs = (int)b->ncalls;
	struct reads_call *calls[READS_BATCH_MAX];
	size_t n = b->ncalls;
	memcpy(calls, b->calls, n * sizeof *calls);
	for (size_t i = 0; i < n; i++) {
		struct reads_call *c = calls[i];
		c->st = st;
		c->batch = b;
		if (st != FLEET_OK && b->alone && u->rolled_back) {
			/* Alone and refused: its own error (the read raised), its audit row's, or
			 * its COMMIT's. Only the first is the call's answer; the others say "try
			 * again" (503), the row it could not have written not being its fault. */
			const PGresult *r = reads_stmt(b, c->group, false)->res;
			if (PQresultStatus(r) != PGRES_FATAL_ERROR)
				r = reads_stmt(b, c->group, true)->res;
			bool raised = PQresultStatus(r) == PGRES_FATAL_ERROR;
			const char *state = raised ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
			const char *msg = raised ? PQresultErrorMessage(r) : "";
			const char *where = raised ? PQresultErrorField(r, PG_DIAG_CONTEXT) : NULL;
			bool audit = strstr(msg, "audit_") || (where && strstr(where, "audit_"));
			c->st = state && !audit && !reads_retryable(state) ? FLEET_INTERNAL
									   : FLEET_UNAVAILABLE;
			if (c->st == FLEET_INTERNAL)
				snprintf(c->sqlstate, sizeof c->sqlstate, "%s", state);
			if (raised)
				log_error("read %s failed for this call%s: %s", c->q->function,
					  audit ? " (its audit row)" : "", msg);
			else
				log_error("a read's COMMIT failed: %s",
					  u->error ? PQresultErrorMessage(u->error) : "?");
		}
		task_wake(&c->wait);
	}
}

/* Fails c before it was sent (nothing was done). */
static void reads_expire(struct reads_call *c)
{
	conn_count_error("timeout");
	conn_note_timeout();
	c->st = FLEET_UNAVAILABLE;
	task_wake(&c->wait);
}

/* The loop's hook: what waits goes as a batch while a connection is free, one batch in the
 * database at a time (the next gathers meanwhile), unless a full batch waits or the last one
 * sent has been there READS_HOLD_MS (a stuck batch holds up no other). */
static long long reads_due(struct loop_hook *h, long long now)
{
	struct reads_loop *rl = (struct reads_loop *)h;
	long long due = 0;
	while (rl->head &&
	       (!rl->newest || rl->queued >= READS_BATCH_MAX ||
		now - rl->newest_ms >= READS_HOLD_MS) &&
	       exec_room(false)) {
		struct reads_call *calls[READS_BATCH_MAX];
		size_t n = 0;
		while (rl->head && n < READS_BATCH_MAX) {
			struct reads_call *c = rl->head;
			rl->head = c->next;
			rl->queued--;
			if (c->until_ms && c->until_ms <= now)
				reads_expire(c);
			else
				calls[n++] = c;
		}
		if (!rl->head)
			rl->tail = &rl->head;
		if (n) {
			rl->newest = reads_submit(rl, calls, n, false);
			rl->newest_ms = now;
		}
	}
	if (rl->head && rl->newest && now - rl->newest_ms < READS_HOLD_MS)
		due = rl->newest_ms + READS_HOLD_MS;
	struct reads_call **p = &rl->head;
	while (*p) {
		struct reads_call *c = *p;
		if (c->until_ms && c->until_ms <= now) {
			*p = c->next;
			rl->queued--;
			reads_expire(c);
			continue;
		}
		if (c->until_ms && (!due || c->until_ms < due))
			due = c->until_ms;
		p = &c->next;
	}
	rl->tail = p;
	return due;
}

static void reads_loop_end(struct loop_hook *h)
{
	struct reads_loop *rl = (struct reads_loop *)h;
	while (rl->head) {
		struct reads_call *c = rl->head;
		rl->head = c->next;
		c->st = FLEET_UNAVAILABLE;
		task_wake(&c->wait);
	}
	if (rl->sent)
		rl->ended = true; /* the executor's end fails its batches next: the last frees it */
	else
		free(rl);
}

/* The calling code's loop's queue of reads. Its hook runs before the executor's, so that a batch
 * formed at a turn is sent at that turn. */
static struct reads_loop *reads_loop_here(void)
{
	struct loop *l = task_loop();
	struct reads_loop *rl = loop_get(l, reads_key);
	if (!rl) {
		(void)exec_room(false); /* the executor's hook first: it then runs after this one */
		rl = mem_calloc(1, sizeof *rl);
		rl->tail = &rl->head;
		rl->hook = (struct loop_hook){.due = reads_due, .end = reads_loop_end};
		loop_hook(l, &rl->hook);
		loop_set(l, reads_key, rl);
	}
	return rl;
}

/* ---- a call's side, in its task ----------------------------------------------------------- */

/* Whether region is in the caller's perimeter as the database stated it. The second line behind
 * row-level security: both must agree before a row is shown. */
static bool reads_inside(const char *regions, const char *region)
{
#ifdef FLEET_TEST_NO_C_PERIMETER
	/* Test-only build (bikaroo-mcp-rls-only): the C check is gone, so the tests show that
	 * PostgreSQL alone keeps other regions out of every read. Never in the product binary. */
	(void)regions;
	(void)region;
	return true;
#else
	return rights_in_perimeter(regions, region);
#endif
}

/* Where the rows go: a new array of at most cap rows. */
struct reads_out {
	void *rows;
	size_t cap;
	size_t have; /* rows allocated so far */
	size_t n;
};

/* Room for one more row: its address, or NULL when the output is full. */
static char *reads_slot(const struct reads_query *q, struct reads_out *o)
{
	if (o->n == o->cap)
		return NULL;
	if (o->n == o->have) {
		size_t more = o->have ? o->have * 2 : 8;
		if (more > o->cap)
			more = o->cap;
		o->rows = mem_realloc(o->rows, more * q->row_size);
		memset((char *)o->rows + o->have * q->row_size, 0, (more - o->have) * q->row_size);
		o->have = more;
	}
	return (char *)o->rows + o->n * q->row_size;
}

static void reads_copy_row(const struct reads_query *q, const PGresult *res, int r, char *row)
{
	for (size_t i = 0; i < q->ncolumns; i++) {
		const struct reads_column *c = &q->columns[i];
		int col = RR_FIRST + (int)i;
		const char *v = PQgetisnull(res, r, col) ? NULL : PQgetvalue(res, r, col);
		void *field = row + c->offset;
		switch (c->type) {
		case READS_TEXT_NEW: *(char **)field = v ? mem_strdup(v) : NULL; break;
		case READS_LONG: *(long *)field = v ? strtol(v, NULL, 10) : -1; break;
		case READS_SKIP: break;
		}
	}
}

/* Whether res has the columns of c's identity statement (read false) or of its read (true), in
 * order, and they echo c's caller as the identity in effect. */
static bool reads_result_ok(const struct reads_call *c, const PGresult *res, bool read)
{
	static const char *const head[RC_N] = {"role",
					       "regions",
					       "is_human",
					       "client_may_read",
					       "client_may_report",
					       "requires_confirmation",
					       "echo_subject",
					       "echo_client"};
	const struct reads_query *q = c->q;
	const char *who = read ? q->function : "fleet.act_as";
	int want = read ? RR_FIRST + (int)q->ncolumns + 1 : RC_N;
	bool ok = PQresultStatus(res) == PGRES_TUPLES_OK && PQnfields(res) == want &&
		  PQntuples(res) >= 1;
	for (int i = 0; ok && i < want; i++) {
		const char *name = !read          ? head[i]
				   : i < RR_FIRST ? head[RC_SUBJECT + i]
				   : i < want - 1 ? q->columns[i - RR_FIRST].name
						  : "ordinality";
		ok = strcmp(PQfname(res, i), name) == 0;
	}
	if (!ok) {
		log_error("%s: its result does not have the columns its reads_query declares, in "
			  "that order; refused",
			  who);
		return false;
	}
	int subject = read ? RR_SUBJECT : RC_SUBJECT, client = read ? RR_CLIENT : RC_CLIENT;
	if (strcmp(PQgetvalue(res, 0, subject), c->actor->subject) != 0 ||
	    strcmp(PQgetvalue(res, 0, client), c->actor->client_id) != 0) {
		/* Never the row itself: it may be another caller's. */
		log_error("%s for %s: " READS_REFUSED, who, c->actor->subject);
		return false;
	}
	return true;
}

/* c's rows from its statement's result into o: FLEET_OK, or FLEET_NOT_FOUND for a one-object
 * read whose object is invisible or outside the perimeter. */
static enum fleet_status reads_map(const struct reads_call *c, const PGresult *res,
				   const char *regions, struct reads_out *o)
{
	const struct reads_query *q = c->q;
	int key = c->kind->key < 0 ? -1 : RR_FIRST + c->kind->key;
	int region = c->kind->region < 0 ? -1 : RR_FIRST + c->kind->region;
	bool first = true;
	for (int r = 0; r < PQntuples(res); r++) {
		if (PQgetisnull(res, r, PQnfields(res) - 1))
			continue; /* the rights alone: the function returned no row */
		if (key >= 0 &&
		    (PQgetisnull(res, r, key) || strcmp(PQgetvalue(res, r, key), c->key)))
			continue; /* another call's */
		bool outside = region >= 0 && (first || q->list) &&
			       !reads_inside(regions, PQgetvalue(res, r, region));
		if (!q->list && first && outside) {
			log_error("read %s: row-level security let through a row outside the "
				  "caller's perimeter; not shown",
				  q->function);
			return FLEET_NOT_FOUND;
		}
		first = false;
		if (outside) {
			log_warn("%s: a row outside the caller's perimeter passed row-level "
				 "security; "
				 "not shown",
				 q->function);
			continue;
		}
		char *row = reads_slot(q, o);
		if (!row) {
			log_warn("%s: more than %zu rows; the rest is not shown", q->function,
				 o->cap);
			break;
		}
		reads_copy_row(q, res, r, row);
		o->n++;
	}
	return !q->list && o->n == 0 ? FLEET_NOT_FOUND : FLEET_OK;
}

/* Runs c in the next batch of its loop and waits for its answer. */
static enum fleet_status reads_wait(struct reads_call *c)
{
	if (conn_held() || task_deadline_passed())
		return FLEET_UNAVAILABLE;
	struct reads_loop *rl = reads_loop_here();
	task_wait_init(&c->wait);
	c->until_ms = conn_deadline_ms();
	c->span = trace_current();
	c->st = FLEET_INTERNAL;
	c->next = NULL;
	*rl->tail = c;
	rl->tail = &c->next;
	rl->queued++;
	task_wait(&c->wait);
	return c->st;
}

/* c's answer from its batch: the echoes, the rights in C, then its rows. */
static enum fleet_status reads_answer(struct reads_call *c, struct rights *rights,
				      struct reads_out *o)
{
	const PGresult *res = reads_stmt(c->batch, c->group, false)->res;
	const PGresult *rows = reads_stmt(c->batch, c->group, true)->res;
	if (!reads_result_ok(c, res, false) || (o && !reads_result_ok(c, rows, true)))
		return FLEET_INTERNAL;
	const char *f[RC_CONFIRM + 1];
	for (int i = 0; i <= RC_CONFIRM; i++)
		f[i] = PQgetisnull(res, 0, i) ? NULL : PQgetvalue(res, 0, i);
	rights_from_fields(f, rights);
	if (!o)
		return FLEET_OK;
	bool db_denied = !rights->known || !rights->client_read;
	bool may = rights_may_use(c->actor, rights, FLEET_SCOPE_READ, c->q->roles, false);
	if (!may || db_denied) {
		if (may != !db_denied)
			log_error("read %s: the database %s the read, the server's rules %s it; "
				  "refused",
				  c->q->function, db_denied ? "denied" : "allowed",
				  may ? "allow" : "deny");
		return FLEET_FORBIDDEN;
	}
	return reads_map(c, rows, rights->regions, o);
}

static enum fleet_status reads_exec(const struct reads_query *q, const struct fleet_actor *actor,
				    const char *key, const struct audit_entry *audit,
				    struct rights *rights, struct reads_out *o)
{
	struct reads_call c = {.q = q, .actor = actor, .key = key, .audit = audit};
	c.kind = reads_kind_of(q);
	if (!c.kind || (q->key_column && !key) || (audit && !(q->key_column && q->capability)))
		return FLEET_INTERNAL;
	if (o && !(actor->scopes & FLEET_SCOPE_READ)) {
		/* The token does not allow reading: nothing is run, the refusal is recorded. */
		if (audit) {
			struct audit_entry e = *audit;
			e.outcome = "denied";
			enum fleet_status st = audit_record(actor, &e);
			if (st != FLEET_OK)
				return st;
		}
		return FLEET_FORBIDDEN;
	}
	enum fleet_status st = reads_wait(&c);
	if (st == FLEET_OK) {
		st = reads_answer(&c, rights, o);
	} else if (c.sqlstate[0] && audit) {
		/* The read raised in SQL, alone: nothing of it committed; its row says so. */
		struct audit_entry e = *audit;
		e.outcome = "error";
		e.detail = c.sqlstate;
		if (audit_record(actor, &e) != FLEET_OK)
			st = FLEET_UNAVAILABLE;
	}
	reads_release(&c);
	return st;
}

enum fleet_status reads_run_all(const struct reads_query *q, const struct fleet_actor *actor,
				const char *key, const struct audit_entry *audit, size_t limit,
				void **rows, size_t *n)
{
	struct reads_out o = {.cap = limit};
	struct rights rights;
	enum fleet_status st = reads_exec(q, actor, key, audit, &rights, &o);
	if (st != FLEET_OK && o.n) {
		reads_free_rows(q, o.rows, o.n);
		o.n = 0;
	}
	if (o.n == 0) {
		free(o.rows);
		o.rows = NULL;
	}
	*rows = o.rows;
	*n = o.n;
	return st;
}

enum fleet_status reads_rights(const struct fleet_actor *actor, struct rights *rights)
{
	static const struct reads_query act_as = {.function = NULL};
	return reads_exec(&act_as, actor, NULL, NULL, rights, NULL);
}

void reads_free_rows(const struct reads_query *q, void *rows, size_t n)
{
	for (size_t r = 0; r < n; r++)
		for (size_t i = 0; i < q->ncolumns; i++)
			if (q->columns[i].type == READS_TEXT_NEW) {
				char **f = (char **)((char *)rows + r * q->row_size +
						     q->columns[i].offset);
				free(*f);
				*f = NULL;
			}
}
