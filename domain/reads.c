/* The one path of every read as the acting identity (see reads.h): reads go in batches
 * (reads_batch.h), writes one statement each; both are mapped here by the same code. */
#include "reads.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "domain/pg/db.h"
#include "reads_batch.h"
#include "rights.h"

#define READS_MAX_ARGS 8
#define READS_MAX_COLUMNS 32
/* A row's fields: the rights, the query's columns, its key, its region. */
#define READS_MAX_FIELDS (READS_BATCH_NRIGHTS + READS_MAX_COLUMNS + 2)
#define READS_NONE ((size_t)-1)

/* The function name is code, never input; it is checked anyway before it becomes SQL text. */
static bool reads_name_ok(const char *f)
{
	if (strncmp(f, "fleet.", 6) != 0 || !f[6] || strlen(f) > 63)
		return false;
	for (const char *p = f + 6; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return true;
}

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

/* Where each field of q's rows is: the rights first, then q's columns, then its key and region
 * columns (asked again, by name, whatever the columns hold). */
struct reads_layout {
	size_t key;
	size_t region; /* READS_NONE: the rows carry none */
	size_t n;
};

static struct reads_layout reads_layout_of(const struct reads_query *q)
{
	struct reads_layout l;
	l.key = READS_BATCH_NRIGHTS + q->ncolumns;
	l.region = q->region_column ? l.key + 1 : READS_NONE;
	l.n = l.key + 1 + (q->region_column ? 1 : 0);
	return l;
}

/* The name of field i of q's rows, the rights' with their prefix (into buf). */
static const char *reads_field_name(const struct reads_query *q, const struct reads_layout *l,
				    size_t i, char *buf, size_t cap)
{
	static const char *const rights[] = {READS_BATCH_RIGHTS};
	if (i < READS_BATCH_NRIGHTS) {
		snprintf(buf, cap, "%s%s", q->rights_prefix, rights[i]);
		return buf;
	}
	if (i == l->key)
		return q->key_column;
	if (i == l->region)
		return q->region_column;
	return q->columns[i - READS_BATCH_NRIGHTS].name;
}

/* The fields as a text array literal (names are identifiers: nothing to quote); false when it
 * does not fit. */
static bool reads_columns_build(const struct reads_query *q, const struct reads_layout *l,
				char *out, size_t cap)
{
	size_t used = 0;
	out[used++] = '{';
	for (size_t i = 0; i < l->n; i++) {
		char name[96];
		int w = snprintf(out + used, cap - used, "%s%s", i ? "," : "",
				 reads_field_name(q, l, i, name, sizeof name));
		if (w < 0 || (size_t)w >= cap - used)
			return false;
		used += (size_t)w;
	}
	if (used + 2 > cap)
		return false;
	out[used++] = '}';
	out[used] = '\0';
	return true;
}

/* The literals already built, by query (a query is a static descriptor: a handful of them). */
#define READS_LITERALS 32
static struct {
	const struct reads_query *q;
	char *columns;
} reads_literals[READS_LITERALS];
static atomic_size_t reads_nliterals; /* published after their entry is written */
static pthread_mutex_t reads_literals_lock = PTHREAD_MUTEX_INITIALIZER;

/* q's columns literal (built once; a profile showed its formatting at 2.6% of a call), or NULL
 * when it does not fit. */
static const char *reads_columns_literal(const struct reads_query *q, const struct reads_layout *l)
{
	size_t n = atomic_load(&reads_nliterals);
	for (size_t i = 0; i < n; i++)
		if (reads_literals[i].q == q)
			return reads_literals[i].columns;
	char buf[1024];
	if (!reads_columns_build(q, l, buf, sizeof buf))
		return NULL;
	pthread_mutex_lock(&reads_literals_lock);
	n = atomic_load(&reads_nliterals);
	const char *found = NULL;
	for (size_t i = 0; i < n && !found; i++)
		if (reads_literals[i].q == q)
			found = reads_literals[i].columns;
	if (!found && n < READS_LITERALS) {
		reads_literals[n].q = q;
		reads_literals[n].columns = mem_strdup(buf);
		found = reads_literals[n].columns;
		atomic_store(&reads_nliterals, n + 1);
	}
	pthread_mutex_unlock(&reads_literals_lock);
	/* (A full table, never with the product's reads, builds it every time.) */
	return found ? found : NULL;
}

static void reads_copy_row(const struct reads_query *q, const char *const *f, char *row)
{
	for (size_t i = 0; i < q->ncolumns; i++) {
		const struct reads_column *c = &q->columns[i];
		const char *v = f[READS_BATCH_NRIGHTS + i];
		void *field = row + c->offset;
		switch (c->type) {
		case READS_TEXT: db_copy(field, c->size, v); break;
		case READS_TEXT_NEW: *(char **)field = v ? mem_strdup(v) : NULL; break;
		case READS_INT: *(int *)field = v ? (int)strtol(v, NULL, 10) : -1; break;
		case READS_LONG: *(long *)field = v ? strtol(v, NULL, 10) : -1; break;
		case READS_BOOL: *(bool *)field = v && strcmp(v, "t") == 0; break;
		}
	}
}

/* Where the rows go: a caller's array of cap rows, or (grow) a new one of at most cap rows. */
struct reads_out {
	void *rows;
	size_t cap;
	bool grow;
	size_t have; /* grow: rows allocated so far */
	size_t n;
};

/* Room for one more row: its address, or NULL when the output is full. */
static char *reads_slot(const struct reads_query *q, struct reads_out *o)
{
	if (o->n == o->cap)
		return NULL;
	if (o->grow && o->n == o->have) {
		size_t more = o->have ? o->have * 2 : 8;
		if (more > o->cap)
			more = o->cap;
		o->rows = mem_realloc(o->rows, more * q->row_size);
		memset((char *)o->rows + o->have * q->row_size, 0, (more - o->have) * q->row_size);
		o->have = more;
	}
	return (char *)o->rows + o->n * q->row_size;
}

/* Rows of a result, field by field in the layout's order: those of a batch (reads_batch_row) or
 * of a statement's own result. */
struct reads_source {
	size_t nrows;
	/* Row r's n fields into f (NULL: SQL NULL); *buf (new or NULL) is freed after use. */
	enum fleet_status (*row)(const void *ctx, size_t r, const char **f, size_t n, char **buf);
	const void *ctx;
};

/* Maps the visible rows of src into o; FLEET_OK, or FLEET_NOT_FOUND for a one-object read whose
 * object is invisible or outside the perimeter. */
static enum fleet_status reads_map(const struct reads_query *q, const struct reads_layout *l,
				   const struct reads_source *src, const char *regions,
				   struct reads_out *o)
{
	enum fleet_status st = FLEET_OK;
	for (size_t r = 0; r < src->nrows && st == FLEET_OK; r++) {
		const char *f[READS_MAX_FIELDS];
		char *buf = NULL;
		st = src->row(src->ctx, r, f, l->n, &buf);
		if (st != FLEET_OK)
			break;
		bool absent = f[l->key] == NULL;
		bool outside = l->region != READS_NONE && (r == 0 || q->list) && !absent &&
			       !reads_inside(regions, f[l->region] ? f[l->region] : "");
		if (!q->list && r == 0 && (outside || (absent && !q->write))) {
			free(buf);
			return FLEET_NOT_FOUND;
		}
		if (q->list && (absent || outside)) {
			if (outside)
				log_warn("%s: a row outside the caller's perimeter passed "
					 "row-level security; not shown",
					 q->function);
			free(buf);
			continue;
		}
		char *row = reads_slot(q, o);
		if (!row) {
			log_warn("%s: more than %zu rows; the rest is not shown", q->function,
				 o->cap);
			free(buf);
			break;
		}
		reads_copy_row(q, f, row);
		o->n++;
		free(buf);
	}
	if (st == FLEET_OK && !q->list && o->n == 0)
		return FLEET_NOT_FOUND;
	return st;
}

static enum fleet_status reads_batch_source_row(const void *ctx, size_t r, const char **f, size_t n,
						char **buf)
{
	return reads_batch_row(ctx, r, f, n, buf);
}

/* A statement's own result and where each field's column is in it. */
struct reads_result {
	const PGresult *res;
	int col[READS_MAX_FIELDS];
};

static enum fleet_status reads_result_row(const void *ctx, size_t r, const char **f, size_t n,
					  char **buf)
{
	const struct reads_result *rr = ctx;
	*buf = NULL;
	for (size_t i = 0; i < n; i++)
		f[i] = PQgetisnull(rr->res, (int)r, rr->col[i])
			       ? NULL
			       : PQgetvalue(rr->res, (int)r, rr->col[i]);
	return FLEET_OK;
}

/* A write (reads.h: reads_query.write): its function, one statement in its own transaction. */
static enum fleet_status reads_write(const struct reads_query *q, const struct reads_layout *l,
				     const struct fleet_actor *actor, const char *const *args,
				     struct reads_out *o)
{
	char sql[160];
	int used = snprintf(sql, sizeof sql, "SELECT * FROM %s($1, $2", q->function);
	for (size_t i = 0; i < q->nargs; i++)
		used += snprintf(sql + used, sizeof sql - (size_t)used, ", $%zu", i + 3);
	snprintf(sql + used, sizeof sql - (size_t)used, ")");
	const char *params[2 + READS_MAX_ARGS] = {actor->subject, actor->client_id};
	for (size_t i = 0; i < q->nargs; i++)
		params[2 + i] = args[i];
	enum fleet_status st;
	PGresult *res = db_exec_prepared(q->function, sql, (int)(2 + q->nargs), params, &st);
	if (!res)
		return st;
	struct reads_result rr = {.res = res};
	const char *names[READS_MAX_FIELDS];
	char bufs[READS_BATCH_NRIGHTS][96];
	for (size_t i = 0; i < l->n; i++)
		names[i] = reads_field_name(q, l, i, bufs[i < READS_BATCH_NRIGHTS ? i : 0],
					    sizeof bufs[0]);
	/* (The rights' names are in bufs; the others are the query's own strings.) */
	if (PQntuples(res) < 1 || db_columns(res, q->function, names, l->n, rr.col) != FLEET_OK) {
		st = FLEET_INTERNAL;
		goto out;
	}
	const char *f[READS_MAX_FIELDS];
	char *unused;
	reads_result_row(&rr, 0, f, l->n, &unused);
	struct reads_source src = {(size_t)PQntuples(res), reads_result_row, &rr};
	st = reads_map(q, l, &src, f[1] ? f[1] : "", o);
out:
	PQclear(res);
	return st;
}

/* Whether an element's SQLSTATE says "try again" (a timeout, a lost connection, a conflict)
 * rather than a bug. */
static bool reads_retryable(const char *state)
{
	return strncmp(state, "08", 2) == 0 || strncmp(state, "40", 2) == 0 ||
	       strncmp(state, "57", 2) == 0 || strncmp(state, "55P03", 5) == 0;
}

static enum fleet_status reads_exec(const struct reads_query *q, const struct fleet_actor *actor,
				    const char *const *args, const struct audit_entry *audit,
				    struct reads_out *o)
{
	if (!reads_name_ok(q->function) || q->nargs > READS_MAX_ARGS ||
	    q->ncolumns > READS_MAX_COLUMNS || !q->key_column || (q->write && audit)) {
		log_error("read %s: not a valid reads_query", q->function);
		return FLEET_INTERNAL;
	}
	struct reads_layout l = reads_layout_of(q);
	if (q->write)
		return reads_write(q, &l, actor, args, o);
	const char *columns = reads_columns_literal(q, &l);
	if (!columns) {
		log_error("read %s: too many columns", q->function);
		return FLEET_INTERNAL;
	}
	struct reads_batch_elem e = {
		.function = q->function,
		.columns = columns,
		.rights_prefix = q->rights_prefix,
		.key_column = q->key_column,
		.list = q->list,
		.may = actor->scopes & FLEET_SCOPE_READ,
		.actor = actor,
		.args = args,
		.nargs = q->nargs,
		.audit = audit,
	};
	enum fleet_status st = reads_batch_run(&e);
	if (st != FLEET_OK)
		return st;
	if (e.outcome[0] == 'e') { /* error */
		log_error("read %s failed for this call: SQLSTATE %s", q->function, e.sqlstate);
		reads_batch_done(&e);
		return reads_retryable(e.sqlstate) ? FLEET_UNAVAILABLE : FLEET_INTERNAL;
	}
	bool db_denied = strcmp(e.outcome, "denied") == 0;
	if (db_denied && !e.may) {
		reads_batch_done(&e);
		return FLEET_FORBIDDEN;
	}
	/* The rights again, in C: the second line. */
	const char *f[READS_MAX_FIELDS];
	char *buf;
	struct rights rights;
	st = reads_batch_row(&e, 0, f, db_denied ? READS_BATCH_NRIGHTS : l.n, &buf);
	if (st == FLEET_OK)
		rights_from_fields(f, &rights);
	free(buf);
	if (st != FLEET_OK) {
		reads_batch_done(&e);
		return st;
	}
	bool may = rights_may_read(actor, &rights);
	if (!may || db_denied) {
		if (may != !db_denied)
			log_error("read %s: the database %s the read, the server's rules %s it; "
				  "refused",
				  q->function, db_denied ? "denied" : "allowed",
				  may ? "allow" : "deny");
		reads_batch_done(&e);
		return FLEET_FORBIDDEN;
	}
	struct reads_source src = {e.nrows, reads_batch_source_row, &e};
	st = reads_map(q, &l, &src, rights.regions, o);
	if (st == FLEET_NOT_FOUND && strcmp(e.outcome, "ok") == 0 && !q->list)
		log_error("read %s: row-level security let through a row outside the caller's "
			  "perimeter; not shown",
			  q->function);
	reads_batch_done(&e);
	return st;
}

enum fleet_status reads_run(const struct reads_query *q, const struct fleet_actor *actor,
			    const char *const *args, const struct audit_entry *audit, void *rows,
			    size_t max_rows, size_t *n)
{
	memset(rows, 0, max_rows * q->row_size);
	struct reads_out o = {.rows = rows, .cap = max_rows};
	enum fleet_status st = reads_exec(q, actor, args, audit, &o);
	if (st != FLEET_OK && o.n) {
		reads_free_rows(q, o.rows, o.n);
		o.n = 0;
	}
	*n = o.n;
	return st;
}

enum fleet_status reads_run_all(const struct reads_query *q, const struct fleet_actor *actor,
				const char *const *args, const struct audit_entry *audit,
				size_t limit, void **rows, size_t *n)
{
	struct reads_out o = {.cap = limit, .grow = true};
	enum fleet_status st = reads_exec(q, actor, args, audit, &o);
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
