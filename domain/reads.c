/* The one path of every read as the acting identity (see reads.h). */
#include "reads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "domain/pg/db.h"
#include "rights.h"

#define READS_MAX_ARGS 8
#define READS_MAX_COLUMNS 32

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

static void reads_copy_row(const struct reads_query *q, const PGresult *res, int r, const int *col,
			   char *row)
{
	for (size_t i = 0; i < q->ncolumns; i++) {
		const struct reads_column *c = &q->columns[i];
		bool null = PQgetisnull(res, r, col[i]);
		const char *v = PQgetvalue(res, r, col[i]);
		void *field = row + c->offset;
		switch (c->type) {
		case READS_TEXT: db_copy(field, c->size, v); break;
		case READS_TEXT_NEW: *(char **)field = null ? NULL : mem_strdup(v); break;
		case READS_INT: *(int *)field = null ? -1 : (int)strtol(v, NULL, 10); break;
		case READS_LONG: *(long *)field = null ? -1 : strtol(v, NULL, 10); break;
		case READS_BOOL: *(bool *)field = !null && db_true(res, r, col[i]); break;
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

/* Maps the visible rows of res into o; FLEET_OK, or FLEET_NOT_FOUND for a one-object read whose
 * object is invisible or outside the perimeter. */
static enum fleet_status reads_map(const struct reads_query *q, const PGresult *res, const int *col,
				   int c_key, int c_region, const char *regions,
				   struct reads_out *o)
{
	int ntuples = PQntuples(res);
	for (int r = 0; r < ntuples; r++) {
		bool absent = PQgetisnull(res, r, c_key);
		bool outside = c_region >= 0 && (r == 0 || q->list) && !absent &&
			       !reads_inside(regions, PQgetvalue(res, r, c_region));
		if (!q->list && r == 0 && outside)
			return FLEET_NOT_FOUND;
		if (!q->list && r == 0 && absent && !q->write)
			return FLEET_NOT_FOUND;
		if (q->list && (absent || outside)) {
			if (outside)
				log_warn("%s: a row outside the caller's perimeter passed "
					 "row-level security; not shown",
					 q->function);
			continue;
		}
		char *row = reads_slot(q, o);
		if (!row) {
			log_warn("%s: more than %zu rows; the rest is not shown", q->function,
				 o->cap);
			break;
		}
		reads_copy_row(q, res, r, col, row);
		o->n++;
	}
	if (!q->list && o->n == 0)
		return FLEET_NOT_FOUND;
	return FLEET_OK;
}

/* The column named prefix + name of res, or -1 (logged). */
static int reads_column(const PGresult *res, const struct reads_query *q, const char *prefix,
			const char *name)
{
	char full[96];
	snprintf(full, sizeof full, "%s%s", prefix, name);
	int c = PQfnumber(res, full);
	if (c < 0)
		log_error("%s: no column %s in its result", q->function, full);
	return c;
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
	char sql[160];
	int used = snprintf(sql, sizeof sql, "SELECT * FROM %s($1, $2", q->function);
	for (size_t i = 0; i < q->nargs; i++)
		used += snprintf(sql + used, sizeof sql - (size_t)used, ", $%zu", i + 3);
	snprintf(sql + used, sizeof sql - (size_t)used, ")");
	const char *params[2 + READS_MAX_ARGS] = {actor->subject, actor->client_id};
	for (size_t i = 0; i < q->nargs; i++)
		params[2 + i] = args[i];

	if (audit)
		audit_read_begin();
	enum fleet_status st;
	PGresult *res = db_exec_prepared(q->function, sql, (int)(2 + q->nargs), params, &st);
	if (!res) {
		if (audit)
			audit_read_cancel(); /* nothing was read: no row to write */
		return st;
	}
	const char *names[READS_MAX_COLUMNS];
	int col[READS_MAX_COLUMNS];
	for (size_t i = 0; i < q->ncolumns; i++)
		names[i] = q->columns[i].name;
	struct rights rights;
	int c_key = reads_column(res, q, "", q->key_column);
	int c_regions = reads_column(res, q, q->rights_prefix, "regions");
	int c_region = q->region_column ? reads_column(res, q, "", q->region_column) : -1;
	if (rights_read_row(res, q->function, q->rights_prefix, &rights) != FLEET_OK ||
	    db_columns(res, q->function, names, q->ncolumns, col) != FLEET_OK || c_key < 0 ||
	    c_regions < 0 || (q->region_column && c_region < 0)) {
		if (audit)
			audit_read_cancel();
		st = FLEET_INTERNAL;
		goto out;
	}
	if (!q->write && !rights_may_read(actor, &rights))
		st = FLEET_FORBIDDEN;
	else
		st = reads_map(q, res, col, c_key, c_region, PQgetvalue(res, 0, c_regions), o);
	if (audit) {
		struct audit_entry e = *audit;
		e.outcome = st == FLEET_FORBIDDEN ? "denied" : fleet_status_name(st);
		e.detail = NULL;
		enum fleet_status ast = audit_record_read(actor, &e);
		if (ast != FLEET_OK) {
			reads_free_rows(q, o->rows, o->n);
			o->n = 0;
			st = ast;
		}
	}
out:
	PQclear(res);
	return st;
}

enum fleet_status reads_run(const struct reads_query *q, const struct fleet_actor *actor,
			    const char *const *args, const struct audit_entry *audit, void *rows,
			    size_t max_rows, size_t *n)
{
	memset(rows, 0, max_rows * q->row_size);
	struct reads_out o = {.rows = rows, .cap = max_rows};
	enum fleet_status st = reads_exec(q, actor, args, audit, &o);
	*n = o.n;
	return st;
}

enum fleet_status reads_run_all(const struct reads_query *q, const struct fleet_actor *actor,
				const char *const *args, const struct audit_entry *audit,
				size_t limit, void **rows, size_t *n)
{
	struct reads_out o = {.cap = limit, .grow = true};
	enum fleet_status st = reads_exec(q, actor, args, audit, &o);
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
