/* The caller's rights, read from the *_as functions' first columns, and a loop's cache of them
 * (see rights.h). */
#include "rights.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "changes.h"
#include "common/csv.h"
#include "common/log.h"
#include "common/loop.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "common/task.h"
#include "domain/pg/db.h"

/* Callers' rights a loop keeps: direct-mapped by a hash of subject and client (a collision only
 * replaces), so a loop holds at most this many whatever its callers. */
#define RIGHTS_KEPT 256

struct rights_kept {
	unsigned long long generation; /* changes_rights_generation() before they were read */
	bool used;
	char subject[FLEET_ID_MAX], client_id[FLEET_ID_MAX];
	struct rights rights;
};

/* A loop's rights kept; its hook only frees them with the loop. */
struct rights_cache {
	struct loop_hook hook;
	struct rights_kept kept[RIGHTS_KEPT];
};

static const char rights_cache_key[] = "rights"; /* the loop slot */

static long long rights_cache_due(struct loop_hook *h, long long now)
{
	(void)h;
	(void)now;
	return 0;
}

static void rights_cache_end(struct loop_hook *h)
{
	free(h);
}

/* The calling code's loop's cache (NULL: no loop). */
static struct rights_cache *rights_cache_here(void)
{
	struct loop *l = task_loop();
	if (!l)
		return NULL;
	struct rights_cache *c = loop_get(l, rights_cache_key);
	if (!c) {
		c = mem_calloc(1, sizeof *c);
		c->hook = (struct loop_hook){.due = rights_cache_due, .end = rights_cache_end};
		loop_hook(l, &c->hook);
		loop_set(l, rights_cache_key, c);
	}
	return c;
}

/* Where actor's rights are kept in c (FNV-1a of subject, a separator, client). */
static struct rights_kept *rights_slot(struct rights_cache *c, const struct fleet_actor *actor)
{
	uint64_t h = 14695981039346656037u;
	for (const char *s = actor->subject; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	h = (h ^ 0x1f) * 1099511628211u;
	for (const char *s = actor->client_id; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return &c->kept[h % RIGHTS_KEPT];
}

enum fleet_status rights_known(const struct fleet_actor *actor, struct rights *r,
			       enum fleet_status (*read)(const struct fleet_actor *actor,
							 struct rights *r))
{
	static const char *const hit[] = {"hit"}, *const miss[] = {"miss"},
				 *const unwatched[] = {"unwatched"};
	bool live;
	/* Read before the rights: a change heard after it makes them of another generation, so
	 * what is kept is never newer-looking than what it holds. */
	unsigned long long generation = changes_rights_generation(&live);
	struct rights_cache *c = live ? rights_cache_here() : NULL;
	struct rights_kept *k = c ? rights_slot(c, actor) : NULL;
	if (k && k->used && k->generation == generation &&
	    strcmp(k->subject, actor->subject) == 0 &&
	    strcmp(k->client_id, actor->client_id) == 0) {
		*r = k->rights;
		metrics_add(&metrics_rights_cache, hit, 1);
		return FLEET_OK;
	}
	metrics_add(&metrics_rights_cache, k ? miss : unwatched, 1);
	enum fleet_status st = read(actor, r);
	if (st == FLEET_OK && k) {
		/* The slot is this loop's: no other thread touches it (docs/concurrency.md). */
		*k = (struct rights_kept){.generation = generation, .used = true, .rights = *r};
		snprintf(k->subject, sizeof k->subject, "%s", actor->subject);
		snprintf(k->client_id, sizeof k->client_id, "%s", actor->client_id);
	}
	return st;
}

bool rights_may_use(const struct fleet_actor *actor, const struct rights *r, unsigned scope,
		    const char *roles, bool people_only)
{
	bool client = (scope != FLEET_SCOPE_READ || r->client_read) &&
		      (scope != FLEET_SCOPE_REPORT || r->client_report);
	return (actor->scopes & scope) && r->known && client &&
	       (!roles || csv_list_has(roles, r->role)) &&
	       (!people_only || (r->human && !actor->machine));
}

bool rights_in_perimeter(const char *regions, const char *region)
{
	size_t n = strlen(region);
	if (n == 0 || strpbrk(region, ",{}\"\\ "))
		return false; /* not a region code: never a match, whatever the array holds */
	for (const char *p = strstr(regions, region); p; p = strstr(p + 1, region)) {
		char before = p == regions ? '{' : p[-1];
		char after = p[n];
		if ((before == '{' || before == ',') && (after == '}' || after == ','))
			return true;
	}
	return false;
}

unsigned rights_scopes(const struct fleet_actor *actor, const struct rights *r)
{
	return (rights_may_use(actor, r, FLEET_SCOPE_READ, NULL, false) ? FLEET_SCOPE_READ : 0u) |
	       (rights_may_use(actor, r, FLEET_SCOPE_REPORT, NULL, false) && !actor->machine
			? FLEET_SCOPE_REPORT
			: 0u);
}

void rights_from_fields(const char *const *v, struct rights *r)
{
	memset(r, 0, sizeof *r);
	r->known = v[0] != NULL;
	db_copy(r->role, sizeof r->role, v[0]);
	db_copy(r->regions, sizeof r->regions, v[1]);
	r->human = v[2] && strcmp(v[2], "t") == 0;
	r->client_read = v[3] && strcmp(v[3], "t") == 0;
	r->client_report = v[4] && strcmp(v[4], "t") == 0;
	r->confirm = v[5] && strcmp(v[5], "t") == 0;
}

enum fleet_status rights_development_db(bool *dev)
{
	static const char sql[] = "SELECT value FROM fleet.settings WHERE name = 'environment'";
	*dev = false;
	/* A connection of its own: asked before the login role is checked (statements held). */
	struct exec_session *es = exec_session_new(NULL, false);
	struct db_error err;
	PGresult *res = db_session_exec(es, sql, 0, NULL, &err);
	enum fleet_status st = err.st;
	static const char *const names[] = {"value"};
	int col[1];
	if (!res) {
		log_error("database: cannot tell whether it is a development one: %s",
			  *err.message ? err.message : fleet_status_name(err.st));
	} else if (db_columns(res, "environment", names, 1, col) != FLEET_OK) {
		st = FLEET_INTERNAL;
	} else {
		*dev = PQntuples(res) == 1 &&
		       strcmp(PQgetvalue(res, 0, col[0]), "development") == 0;
	}
	PQclear(res);
	PQclear(err.refusal);
	exec_session_close(es);
	return st;
}

enum fleet_status rights_read_row(const struct pg_result *res, const char *what, const char *prefix,
				  struct rights *r)
{
	enum { R_ROLE, R_REGIONS, R_HUMAN, R_READ, R_REPORT, R_CONFIRM, R_NCOLS };
	static const char *const names[R_NCOLS] = {
		[R_ROLE] = "role",
		[R_REGIONS] = "regions",
		[R_HUMAN] = "is_human",
		[R_READ] = "client_may_read",
		[R_REPORT] = "client_may_report",
		[R_CONFIRM] = "requires_confirmation",
	};
	char buf[R_NCOLS][48];
	const char *full[R_NCOLS];
	int col[R_NCOLS];
	memset(r, 0, sizeof *r);
	for (int i = 0; i < R_NCOLS; i++) {
		full[i] = names[i];
		if (*prefix) {
			snprintf(buf[i], sizeof buf[i], "%s%s", prefix, names[i]);
			full[i] = buf[i];
		}
	}
	if (PQntuples(res) < 1 || db_columns(res, what, full, R_NCOLS, col) != FLEET_OK)
		return FLEET_INTERNAL;
	r->known = !PQgetisnull(res, 0, col[R_ROLE]);
	db_copy(r->role, sizeof r->role, PQgetvalue(res, 0, col[R_ROLE]));
	db_copy(r->regions, sizeof r->regions, PQgetvalue(res, 0, col[R_REGIONS]));
	r->human = db_true(res, 0, col[R_HUMAN]);
	r->client_read = db_true(res, 0, col[R_READ]);
	r->client_report = db_true(res, 0, col[R_REPORT]);
	r->confirm = db_true(res, 0, col[R_CONFIRM]);
	return FLEET_OK;
}
