/* Reads of the business as the acting identity, all through one path: a fleet.*_as SQL
 * function called with the actor's subject and client first, which sets the identity in the
 * database and returns the caller's rights (role, regions, ...) then the read's columns under
 * row-level security; here, the rights judged again in C (rights.h), every row's region checked
 * against the caller's perimeter in C too (the second line: both must agree), the columns copied
 * by name into the caller's structs, and, for an audited call, exactly one audit row whatever
 * the outcome (ok, not_found, denied), by group commit, committed before the read returns.
 * A new read is its SQL function and a struct reads_query: its column map. */
#ifndef BIKAROO_READS_H
#define BIKAROO_READS_H

#include <stddef.h>

#include "audit.h"
#include "types.h"

enum reads_type {
	READS_TEXT,     /* char[size], truncated; NULL: "" */
	READS_TEXT_NEW, /* char *, new memory (reads_free_rows frees it); NULL: NULL */
	READS_INT,      /* int; NULL: -1 */
	READS_LONG,     /* long; NULL: -1 */
	READS_BOOL,     /* bool; NULL: false */
};

/* One result column into one field of the caller's row struct. */
struct reads_column {
	const char *name;
	enum reads_type type;
	size_t offset;
	size_t size; /* READS_TEXT: the field's size */
};

#define READS_COLUMN(row, field, type, column)                                                     \
	{                                                                                          \
		(column), (type), offsetof(row, field), sizeof(((row *)0)->field)                  \
	}

/* A read: its SQL function and how its result maps into rows. */
struct reads_query {
	/* The function, schema-qualified (fleet.name_as, lower case, digits and _), called as
	 * SELECT * FROM function(subject, client, args...). Its first row carries the rights
	 * columns (prefix + role, regions, is_human, client_may_read, client_may_report,
	 * requires_confirmation). */
	const char *function;
	size_t nargs;              /* its arguments after subject and client */
	const char *rights_prefix; /* "" or e.g. "out_" */
	/* The column naming each row's region, checked against the caller's perimeter in C;
	 * NULL: the rows carry none (reference data). */
	const char *region_column;
	/* The column whose NULL says "no row": in row 0 of a one-object read, nothing visible;
	 * in a list, an empty one. */
	const char *key_column;
	const struct reads_column *columns;
	size_t ncolumns;
	size_t row_size;
	/* One object (false): row 0 is the object (FLEET_NOT_FOUND when invisible or outside the
	 * perimeter), later rows belong to it (e.g. a case's reports). A list (true): every
	 * visible row in the perimeter, FLEET_OK even when there is none. */
	bool list;
	/* A write (make new-capability KIND=write): the function decides the outcome and records
	 * the call's audit row in its own transaction (it is given the tool, the digest and the
	 * request reference); here the rights are not judged again and no row is written (audit
	 * must be NULL). Row 0 is always mapped (its outcome column says what happened); its region
	 * is checked when its key is set (a visible object outside the perimeter: a bug, refused).
	 */
	bool write;
};

/* Runs q as actor with args (q->nargs strings, borrowed), mapping at most max_rows rows into
 * rows (an array of q->row_size bytes each, zeroed first); *n is how many were mapped.
 * FLEET_FORBIDDEN when the caller may not read (the token's fleet:read, an active subject and
 * client application, the client allowed to read), FLEET_NOT_FOUND for an invisible object
 * (unknown and out of perimeter alike), FLEET_UNAVAILABLE / FLEET_INTERNAL when the statement
 * failed. When audit is set (tool, target, args_digest, request_id; outcome and detail are
 * filled here) the call leaves exactly one audit row, ok / not_found / denied, and returns
 * only once it has committed; if it cannot be written, that status and no rows (the read must
 * not answer). A statement that failed reads nothing and writes no row. */
enum fleet_status reads_run(const struct reads_query *q, const struct fleet_actor *actor,
			    const char *const *args, const struct audit_entry *audit, void *rows,
			    size_t max_rows, size_t *n) __attribute__((warn_unused_result));

/* The same into a new array of at most limit rows (*rows: new memory, NULL when *n is 0; free
 * it with reads_free_rows() then free()), for reads of unknown length (a case's history). */
enum fleet_status reads_run_all(const struct reads_query *q, const struct fleet_actor *actor,
				const char *const *args, const struct audit_entry *audit,
				size_t limit, void **rows, size_t *n)
	__attribute__((warn_unused_result));

/* Frees the READS_TEXT_NEW fields of n rows of q (not the array). */
void reads_free_rows(const struct reads_query *q, void *rows, size_t n);

#endif
