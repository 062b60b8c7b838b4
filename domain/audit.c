/* The audit log writers: fleet.audit_as for a single row (the identity, then a row through the
 * narrowly scoped SECURITY DEFINER fleet.audit_record, in one round trip), and fleet.audit_batch
 * for the group commit of reads (the login role holds no privilege on the table). */
#include "audit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "domain/pg/db.h"

/* A row waiting for its batch: lives on its caller's stack until done. */
struct audit_waiter {
	const struct fleet_actor *actor;
	const struct audit_entry *e;
	enum fleet_status st;
	bool done;
	pthread_cond_t wake; /* signalled when done, or when it may lead the next batch */
	struct audit_waiter *next;
};

/* The columns, in fleet.audit_as / fleet.audit_batch parameter order. */
enum { AUDIT_FROM_ACTOR, AUDIT_FROM_ENTRY };
static const struct {
	int from;
	size_t offset;
} audit_fields[] = {
	{AUDIT_FROM_ACTOR, offsetof(struct fleet_actor, subject)},
	{AUDIT_FROM_ACTOR, offsetof(struct fleet_actor, client_id)},
	{AUDIT_FROM_ENTRY, offsetof(struct audit_entry, tool)},
	{AUDIT_FROM_ENTRY, offsetof(struct audit_entry, target)},
	{AUDIT_FROM_ENTRY, offsetof(struct audit_entry, args_digest)},
	{AUDIT_FROM_ENTRY, offsetof(struct audit_entry, outcome)},
	{AUDIT_FROM_ENTRY, offsetof(struct audit_entry, detail)},
	{AUDIT_FROM_ENTRY, offsetof(struct audit_entry, request_id)},
};
#define AUDIT_NFIELDS (sizeof audit_fields / sizeof audit_fields[0])

/* Field i of a row (borrowed, may be NULL). */
static const char *audit_field(const struct fleet_actor *actor, const struct audit_entry *e,
			       size_t i)
{
	if (audit_fields[i].from == AUDIT_FROM_ACTOR)
		return (const char *)actor + audit_fields[i].offset; /* char arrays */
	return *(const char *const *)((const char *)e + audit_fields[i].offset);
}

enum fleet_status audit_record(const struct fleet_actor *actor, const struct audit_entry *e)
{
	static const char sql[] = "SELECT fleet.audit_as($1, $2, $3, $4, $5, $6, $7, $8)";
	const char *params[AUDIT_NFIELDS];
	for (size_t i = 0; i < AUDIT_NFIELDS; i++)
		params[i] = audit_field(actor, e, i);
	enum fleet_status st;
	PGresult *res = db_exec_prepared("audit_as", sql, AUDIT_NFIELDS, params, &st);
	if (!res) {
		/* Never the arguments themselves: they may carry personal data. */
		log_error("audit row for %s (%s) not written: %s", e->tool, e->outcome,
			  fleet_status_name(st));
		return st;
	}
	PQclear(res);
	return FLEET_OK;
}

/* A value of a batch's column: len bytes at p, or NULL. */
struct audit_value {
	const char *p;
	size_t len;
};

/* The three parts of a request reference (adapter_request_ref): "<trace> " when it starts with
 * 32 lowercase hex digits and a space, then "<jti:... or sha256:...> " (printable, no space),
 * then the JSON-RPC id; the same split as fleet.audit_ref, which the single-row writers use.
 * The batch sends the parts apart: splitting them in SQL cost more than the INSERT itself. */
static void audit_ref_split(const char *ref, struct audit_value *trace, struct audit_value *token,
			    struct audit_value *id)
{
	*trace = *token = (struct audit_value){NULL, 0};
	*id = (struct audit_value){ref, ref ? strlen(ref) : 0};
	if (!ref)
		return;
	const char *s = ref;
	if (strspn(s, "0123456789abcdef") >= 32 && s[32] == ' ') {
		*trace = (struct audit_value){s, 32};
		s += 33;
	}
	size_t kind = strncmp(s, "jti:", 4) == 0 ? 4 : strncmp(s, "sha256:", 7) == 0 ? 7 : 0;
	if (kind) {
		size_t n = kind;
		while (s[n] >= '!' && s[n] <= '~')
			n++;
		if (n > kind && s[n] == ' ') {
			*token = (struct audit_value){s, n};
			s += n + 1;
		}
	}
	*id = (struct audit_value){s, strlen(s)};
}

/* Appends a PostgreSQL text array literal of v[0..n): {"a","b",NULL}, each element quoted,
 * '"' and '\' escaped. */
static void audit_array(struct mem_buf *b, const struct audit_value *v, size_t n)
{
	mem_buf_put(b, "{", 1);
	for (size_t r = 0; r < n; r++) {
		if (r)
			mem_buf_put(b, ",", 1);
		if (!v[r].p) {
			mem_buf_put(b, "NULL", 4);
			continue;
		}
		mem_buf_put(b, "\"", 1);
		const char *s = v[r].p, *end = s + v[r].len;
		while (s < end) {
			size_t run = strcspn(s, "\"\\");
			if (run > (size_t)(end - s))
				run = (size_t)(end - s);
			mem_buf_put(b, s, run);
			s += run;
			if (s >= end)
				break;
			mem_buf_put(b, "\\", 1);
			mem_buf_put(b, s, 1);
			s++;
		}
		mem_buf_put(b, "\"", 1);
	}
	mem_buf_put(b, "}", 1);
}

/* The batch's columns: the fields but the last (the request reference), then its three parts. */
enum { AUDIT_BATCH_NCOLS = AUDIT_NFIELDS + 2 };

/* Writes rows[0..n) in one statement (its own transaction) on this thread's connection. */
static enum fleet_status audit_flush(struct audit_waiter *const *rows, size_t n)
{
	static const char sql[] =
		"SELECT fleet.audit_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
	struct mem_buf bufs[AUDIT_BATCH_NCOLS];
	const char *params[AUDIT_BATCH_NCOLS];
	struct audit_value col[AUDIT_BATCH_NCOLS][AUDIT_BATCH_MAX];
	memset(bufs, 0, sizeof bufs);
	for (size_t r = 0; r < n; r++) {
		for (size_t i = 0; i + 1 < AUDIT_NFIELDS; i++) {
			const char *v = audit_field(rows[r]->actor, rows[r]->e, i);
			col[i][r] = (struct audit_value){v, v ? strlen(v) : 0};
		}
		audit_ref_split(rows[r]->e->request_id, &col[AUDIT_NFIELDS][r],
				&col[AUDIT_NFIELDS + 1][r], &col[AUDIT_NFIELDS - 1][r]);
	}
	for (size_t i = 0; i < AUDIT_BATCH_NCOLS; i++) {
		audit_array(&bufs[i], col[i], n);
		params[i] = bufs[i].p;
	}
	enum fleet_status st;
	PGresult *res = db_exec_prepared("audit_batch", sql, AUDIT_BATCH_NCOLS, params, &st);
	const char *result[] = {res ? "ok" : "failed"};
	metrics_add(&metrics_audit_batches, result, 1);
	if (res) {
		PQclear(res);
	} else {
		log_error("audit batch of %zu read(s) not written: %s: those reads fail", n,
			  fleet_status_name(st));
		/* Whatever the cause, the caller may try again: 503, never a read without
		 * its row. */
		st = FLEET_UNAVAILABLE;
	}
	for (size_t i = 0; i < AUDIT_BATCH_NCOLS; i++)
		free(bufs[i].p);
	return st;
}

static pthread_mutex_t audit_lock = PTHREAD_MUTEX_INITIALIZER;
static struct audit_waiter *audit_head; /* rows waiting for a batch, oldest first */
static struct audit_waiter **audit_tail = &audit_head;
static size_t audit_queued;                 /* how many */
static bool audit_flushing;                 /* a batch is being formed or written */
static struct audit_waiter *audit_lingerer; /* the leader waiting for more rows, or NULL */
/* Reads begun whose rows are not queued yet (audit_read_begin): counted without the lock, read
 * under it only to decide how long a leader lingers. */
static atomic_int audit_reading;

void audit_read_begin(void)
{
	atomic_fetch_add(&audit_reading, 1);
}

void audit_read_cancel(void)
{
	pthread_mutex_lock(&audit_lock);
	atomic_fetch_sub(&audit_reading, 1);
	if (audit_lingerer) /* one fewer row to wait for */
		pthread_cond_signal(&audit_lingerer->wake);
	pthread_mutex_unlock(&audit_lock);
}

/* The leader waits, at most AUDIT_LINGER_US, for the rows of the reads under way when it began
 * to wait (each arrival wakes it), not for reads that begin meanwhile: under a steady load
 * those never stop, and the batch would always wait the whole linger. Called and returns with
 * audit_lock held. */
static void audit_linger(struct audit_waiter *me)
{
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until); /* the waiter's condition runs on this clock */
	until.tv_nsec += AUDIT_LINGER_US * 1000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	audit_lingerer = me;
	size_t want = audit_queued + (size_t)atomic_load(&audit_reading);
	for (;;) {
		/* A read that ends without a row (audit_read_cancel) lowers what may come. */
		size_t may = audit_queued + (size_t)atomic_load(&audit_reading);
		if (may < want)
			want = may;
		if (audit_queued >= want || audit_queued >= AUDIT_BATCH_MAX)
			break;
		if (pthread_cond_timedwait(&me->wake, &audit_lock, &until) != 0)
			break; /* the time is up */
	}
	audit_lingerer = NULL;
}

enum fleet_status audit_record_read(const struct fleet_actor *actor, const struct audit_entry *e)
{
	struct audit_waiter me = {.actor = actor, .e = e, .st = FLEET_INTERNAL};
	struct audit_waiter *batch[AUDIT_BATCH_MAX];
	pthread_condattr_t ca; /* a monotonic linger: a step of the wall clock cannot stretch it */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&me.wake, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_lock(&audit_lock);
	*audit_tail = &me;
	audit_tail = &me.next;
	audit_queued++;
	atomic_fetch_sub(&audit_reading, 1);
	if (audit_lingerer)
		pthread_cond_signal(&audit_lingerer->wake);
	while (!me.done) {
		if (audit_flushing) {
			/* Each waiter sleeps on its own condition: a finished batch wakes its rows
			 * and the next leader only, not every waiter. */
			pthread_cond_wait(&me.wake, &audit_lock);
			continue;
		}
		/* Lead: take the oldest rows (ours among them unless more than a batch waits
		 * ahead of it, in which case we lead again after this one). */
		audit_flushing = true;
		if (atomic_load(&audit_reading) > 0)
			audit_linger(&me);
		size_t n = 0;
		while (audit_head && n < AUDIT_BATCH_MAX) {
			batch[n++] = audit_head;
			audit_head = audit_head->next;
		}
		audit_queued -= n;
		if (!audit_head)
			audit_tail = &audit_head;
		pthread_mutex_unlock(&audit_lock);
		enum fleet_status st = audit_flush(batch, n);
		pthread_mutex_lock(&audit_lock);
		for (size_t i = 0; i < n; i++) {
			batch[i]->st = st;
			batch[i]->done = true;
			if (batch[i] != &me)
				pthread_cond_signal(&batch[i]->wake);
		}
		audit_flushing = false;
		if (audit_head) /* rows that arrived meanwhile: their oldest leads next */
			pthread_cond_signal(&audit_head->wake);
	}
	pthread_mutex_unlock(&audit_lock);
	pthread_cond_destroy(&me.wake);
	return me.st;
}
