/* Reads of the business as the acting identity, all through one path. A read is a SQL function
 * fleet.name_for([keys text[]]) in plain SQL, inlined into the statement that calls it, that
 * returns the rows the transaction's identity may see under row-level security, for any number
 * of keys at once (one row set, each row naming its key), and a struct reads_query: its columns,
 * in order, into the caller's row struct. Concurrent reads of a loop go in batches, one in the
 * database at a time while the next gathers: one transaction, one round trip; per caller and read,
 * a statement that sets the identity (fleet.act_as, which returns the rights), then one that reads
 * all of that caller's keys if the caller may use the capability (fleet.may_read, judged once) and
 * writes the audit rows of its audited calls with one INSERT (fleet.audit_reads). Here, for each
 * call: both results checked to echo its caller, the rights judged again in C (rights.h), every
 * row's region checked against the caller's perimeter in C too (the second line: both must agree),
 * its rows copied by position into the caller's structs. A read answers only once its batch has
 * committed. A batch that the database refuses (a read that raises, a COMMIT that fails) runs again
 * call by call, each alone, so that one call's failure is its answer only. */
#ifndef BIKAROO_READS_H
#define BIKAROO_READS_H

#include <stddef.h>

#include "audit.h"
#include "types.h"

enum reads_type {
	READS_TEXT_NEW, /* char *, new memory (reads_free_rows frees it); NULL: NULL */
	READS_LONG,     /* long; NULL: -1 */
	READS_SKIP,     /* a column of the function that the caller does not keep */
};

/* One result column of the function, in its RETURNS TABLE order, into one field of the row. */
struct reads_column {
	const char *name;
	enum reads_type type;
	size_t offset;
	size_t size; /* the field's size */
};

#define READS_COLUMN(row, field, type, column)                                                     \
	{                                                                                          \
		(column), (type), offsetof(row, field), sizeof(((row *)0)->field)                  \
	}

/* A read: its SQL function and how its rows map into the caller's structs. */
struct reads_query {
	/* The function, schema-qualified (fleet.name_for, lower case, digits and _): called as
	 * function(keys text[]) when key_column is set, else function(); NULL: no function, the
	 * read is the caller's rights alone (fleet.act_as). */
	const char *function;
	/* Every column the function returns, in order (checked by name against each result). */
	const struct reads_column *columns;
	size_t ncolumns;
	/* The column naming each row's key (a call's rows are those of its key), or NULL: the rows
	 * are every call's whole answer (reference data). */
	const char *key_column;
	/* The column naming each row's region, checked against the caller's perimeter in C; NULL:
	 * the rows carry none (reference data). */
	const char *region_column;
	size_t row_size;
	/* The roles that may read it (comma-separated, as its declaration lists them; NULL: every
	 * role), judged in C with the rights that come with the rows; the statement judges them
	 * too, and the audit rows say denied, by its capability's row of fleet.capabilities
	 * (capability: its declaration's name, lower case, digits and _; NULL: none, and no call
	 * of it may be audited). */
	const char *roles;
	const char *capability;
	/* One object (false): a call's first row is its object (FLEET_NOT_FOUND when none is
	 * visible or it is outside the perimeter), later rows of its key belong to it (a case's
	 * reports). A list (true): every row of its key in the perimeter, FLEET_OK even with none.
	 */
	bool list;
};

/* Runs q as actor for key (NULL for a read without keys; borrowed), mapping at most limit rows
 * into a new array of q->row_size bytes each (*rows: new memory, NULL when *n is 0; free it with
 * reads_free_rows() then free()); *n is how many were mapped. FLEET_FORBIDDEN when the caller may
 * not read (the token's fleet:read, an active subject and client application, the client allowed to
 * read), FLEET_NOT_FOUND for an invisible object (unknown and out of perimeter alike),
 * FLEET_UNAVAILABLE / FLEET_INTERNAL when it could not run. When audit is set (tool, target,
 * args_digest, request_id; outcome and detail are filled here; a read with a key and a capability)
 * the call leaves exactly one audit row, ok / not_found / denied / error, and returns only once it
 * has committed; if it cannot be written, that status and no rows (the read must not answer). From
 * a task or a thread of its own. */
enum fleet_status reads_run_all(const struct reads_query *q, const struct fleet_actor *actor,
				const char *key, const struct audit_entry *audit, size_t limit,
				void **rows, size_t *n) __attribute__((warn_unused_result));

/* The caller's rights alone (fleet.act_as in a batch): FLEET_OK with *rights set. */
struct rights;
enum fleet_status reads_rights(const struct fleet_actor *actor, struct rights *rights)
	__attribute__((warn_unused_result));

/* Frees the READS_TEXT_NEW fields of n rows of q (not the array). */
void reads_free_rows(const struct reads_query *q, void *rows, size_t n);

#endif
