/* The batch former of reads (issue "One round trip per batch of calls"): concurrent reads are
 * gathered and sent as one fleet.read_batch statement, one transaction and one commit for all of
 * them and their audit rows, run by the database executor (pg/exec.h) on whichever of its
 * connections is free. A batch holds at most READS_BATCH_MAX reads; it is formed when a connection
 * is free, from what waits then (while every connection is busy, reads gather by themselves), and
 * lingers at most READS_BATCH_LINGER_MS for more only while other calls are under way
 * (common/task.h) and fewer than the most wait. Each read answers after that commit. One read's
 * failure (a denial, no such object, a statement error in it) is its answer only; a batch that
 * fails as a whole (the connection, the commit, its audit rows) fails each of its reads with
 * FLEET_UNAVAILABLE, never a read without its row.
 *
 * Every result row echoes the identity it was read as and the read's reference (a sequence number
 * of this process and its request reference); reads_batch_run() checks the echo of every row
 * before handing a row over: a row of another read is refused (FLEET_INTERNAL) and logged, never
 * answered. Used by reads.c (the one read path) and rights.c (the rights lookup). */
#ifndef BIKAROO_READS_BATCH_H
#define BIKAROO_READS_BATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "audit.h"
#include "common/task.h"
#include "types.h"

#define READS_BATCH_MAX 64
#define READS_BATCH_LINGER_MS 1

/* The rights columns every fleet.*_as function returns, after its prefix, in the order a read
 * asks for them first (fields 0..5 of every row). */
#define READS_BATCH_RIGHTS                                                                         \
	"role", "regions", "is_human", "client_may_read", "client_may_report",                     \
		"requires_confirmation"
#define READS_BATCH_NRIGHTS 6

struct reads_batch;
struct reads_batch_kind;

/* One read. The caller's (e.g. on its stack); the in fields are borrowed until
 * reads_batch_done(). */
struct reads_batch_elem {
	/* in */
	const char *function; /* fleet.name_as (checked by the caller) */
	/* The columns wanted, as a PostgreSQL text array literal, the six rights columns (with
	 * their prefix) first: "{role,regions,...,bike_id,...}". Row fields come in this order. */
	const char *columns;
	const char *rights_prefix;
	const char *key_column; /* NULL in the first row: nothing (a one-object read) */
	bool list;
	bool may; /* the token allows the read (else it is denied without being run) */
	const struct fleet_actor *actor;
	const char *const *args; /* nargs strings */
	size_t nargs;
	const struct audit_entry *audit; /* NULL: no audit row; else tool, target, digest and
					    request_id (the outcome is the database's) */
	/* out, once reads_batch_run() returned FLEET_OK */
	const char *outcome; /* the database's: ok, not_found, denied or error (static) */
	char sqlstate[6];    /* of an error */
	size_t nrows;        /* rows of this read (>= 1) */
	/* the former's */
	struct reads_batch_kind *kind; /* its read, or NULL: in fleet.read_batch batches only */
	struct reads_batch *batch;
	size_t index; /* in the batch */
	size_t first; /* its first row in the batch's result */
	enum fleet_status st;
	char ref[40 + 200];
	long long until_ms;
	struct task_wait wait;
	struct reads_batch_elem *next;
};

/* Runs e in the next batch and waits for its commit: FLEET_OK (then e's out fields, its rows by
 * reads_batch_row(), and reads_batch_done() once they were read), FLEET_UNAVAILABLE when its
 * batch could not run or commit in time, FLEET_INTERNAL when a row's echo is not e's. */
enum fleet_status reads_batch_run(struct reads_batch_elem *e) __attribute__((warn_unused_result));

/* Row r (< e->nrows) of e: its fields into v[0..n) (NULL: an SQL NULL), their text in *buf (new
 * memory, the caller frees it after using v). FLEET_INTERNAL (logged) when the row does not
 * have n fields. */
enum fleet_status reads_batch_row(const struct reads_batch_elem *e, size_t r, const char **v,
				  size_t n, char **buf) __attribute__((warn_unused_result));

/* e's rows are no longer needed (after FLEET_OK). */
void reads_batch_done(struct reads_batch_elem *e);

#endif
