/* Migrations: numbered SQL files applied once, then one file per SQL function re-applied when its
 * SHA-256 changes, each recorded in fleet_meta, all under one advisory lock. */
#include "migrate.h"

#include <dirent.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/mem.h"
#include "db.h"
#include "gen/schema_version.h"

#define MIGRATE_LOCK_KEY "7268431905" /* arbitrary, fixed: "bikaroo migrations" */
#define MIGRATE_MAX_FILES 512
#define MIGRATE_MAX_BYTES (4 * 1024 * 1024)
#define MIGRATE_FUNCTIONS "functions" /* subdirectory of the repeatable function files */
#define MIGRATE_SHA_HEX 65            /* SHA-256 in hex + NUL */
/* A rolling upgrade migrates while the previous release serves: a statement of this run waits
 * at most MIGRATE_LOCK_WAIT for a lock (an ALTER waiting for the tables' reads would otherwise
 * queue every later read behind it), and a transaction that gives up on a lock, or that
 * PostgreSQL chose as a deadlock's victim, is run again after a pause, up to MIGRATE_TRIES. */
#define MIGRATE_LOCK_WAIT "1s"
#define MIGRATE_TRIES 30
#define MIGRATE_PAUSE_MS 100 /* times the try's number, at most 10 times */

/* The migration's own connection, and the SQLSTATE of its last failed statement. */
struct migrate_db {
	struct exec_session *pg;
	char failed[6];
};

/* The bookkeeping tables, created before anything else (under the lock): applied numbered files
 * by name, and function files by name with the checksum of the text last applied. */
static const char migrate_meta_sql[] =
	"CREATE SCHEMA IF NOT EXISTS fleet_meta;"
	"CREATE TABLE IF NOT EXISTS fleet_meta.schema_migrations ("
	" name text PRIMARY KEY,"
	" applied_at timestamptz NOT NULL DEFAULT now());"
	"CREATE TABLE IF NOT EXISTS fleet_meta.schema_functions ("
	" name text PRIMARY KEY,"
	" checksum text NOT NULL CHECK (checksum ~ '^[0-9a-f]{64}$'),"
	" applied_at timestamptz NOT NULL DEFAULT now())";

/* One kind of migration file: how its names look and how an applied one is recorded. */
struct migrate_kind {
	const char *what;                 /* for logs: "migration" or "function" */
	int (*name_ok)(const char *name); /* whether a directory entry is one of these files */
	const char *record_sql;           /* $1 name, then $2 checksum if record_params is 2 */
	int record_params;
	bool together; /* all of a run's files in the caller's one transaction, not one each */
};

static int migrate_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool migrate_word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/* A migration file is NNNN_word.sql: four digits, an underscore, [a-z0-9_], ".sql". */
static int migrate_name_ok(const char *n)
{
	size_t len = strlen(n);
	if (len < 10 || len > 128 || strcmp(n + len - 4, ".sql") != 0 || n[4] != '_')
		return 0;
	for (int i = 0; i < 4; i++)
		if (n[i] < '0' || n[i] > '9')
			return 0;
	for (size_t i = 5; i < len - 4; i++)
		if (!migrate_word_char(n[i]))
			return 0;
	return 1;
}

/* A function file is schema.function.sql, both words [a-z0-9_]: fleet.act_as.sql. */
static int migrate_function_name_ok(const char *n)
{
	size_t len = strlen(n);
	if (len < 7 || len > 128 || strcmp(n + len - 4, ".sql") != 0)
		return 0;
	int dots = 0;
	for (size_t i = 0; i < len - 4; i++) {
		if (n[i] == '.') {
			if (i == 0 || n[i - 1] == '.' || i == len - 5)
				return 0;
			dots++;
		} else if (!migrate_word_char(n[i])) {
			return 0;
		}
	}
	return dots == 1;
}

static const struct migrate_kind migrate_numbered = {
	"migration",
	migrate_name_ok,
	"INSERT INTO fleet_meta.schema_migrations (name) VALUES ($1)",
	1,
	.together = false,
};

/* Numbered files renamed after databases had recorded them (two files once shared 0003, and two
 * 0013): each pair is one file under its name before and its name now. Before and after the
 * numbered files run, a database that recorded one name of a pair gets the other recorded too
 * (with the same time), so a renamed file is never applied twice, and the previous release's
 * migrate, which knows only the names before, finds nothing to apply on a database that this
 * release migrated. Never reuse a name that appears here. */
static const struct {
	const char *before, *now;
} migrate_renamed[] = {
	{"0003_protocol_reads.sql", "0015_protocol_reads.sql"},
	{"0013_drop_unused_read.sql", "0014_drop_unused_read.sql"},
};

static const struct migrate_kind migrate_functions = {
	"function",
	migrate_function_name_ok,
	"INSERT INTO fleet_meta.schema_functions (name, checksum) VALUES ($1, $2)"
	" ON CONFLICT (name) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = now()",
	2,
	.together = true,
};

static char *migrate_read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = mem_alloc(MIGRATE_MAX_BYTES + 1);
	size_t n = fread(buf, 1, MIGRATE_MAX_BYTES + 1, f);
	fclose(f);
	if (n > MIGRATE_MAX_BYTES) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/* SHA-256 of the file's bytes in lower-case hex. */
static int migrate_sha256(const char *text, char hex[MIGRATE_SHA_HEX])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	if (!EVP_Digest(text, strlen(text), md, &n, EVP_sha256(), NULL) || n != 32)
		return 0;
	for (unsigned int i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return 1;
}

/* Whether the last failure was a lock: waited MIGRATE_LOCK_WAIT for it (55P03), or a deadlock's
 * victim (40P01). */
static bool migrate_lock_lost(const struct migrate_db *m)
{
	return strcmp(m->failed, "55P03") == 0 || strcmp(m->failed, "40P01") == 0;
}

/* After a transaction of the run failed and was rolled back (what names it): whether to run it
 * again, after a pause; false (logged) when it failed on something else than a lock, or on
 * locks MIGRATE_TRIES times. */
static bool migrate_again(struct migrate_db *m, int tries, const char *what)
{
	bool lock = migrate_lock_lost(m);
	m->failed[0] = '\0';
	if (!lock)
		return false;
	if (tries >= MIGRATE_TRIES) {
		log_error("migrate: %s found its locks taken %d times: given up (the sessions "
			  "holding them are in pg_locks)",
			  what, tries);
		return false;
	}
	int pause = MIGRATE_PAUSE_MS * (tries < 10 ? tries : 10);
	log_warn("migrate: %s waited for a lock other sessions hold: rolled back, tried again "
		 "in %d ms (try %d of %d)",
		 what, pause, tries + 1, MIGRATE_TRIES);
	usleep((useconds_t)pause * 1000);
	return true;
}

/* One statement (or a file of them) on the migration's own connection, through the executor
 * (exec.h: a simple session; a file of comments only is an empty query, not an error); what
 * names it in the log when it fails. */
static PGresult *migrate_query(struct migrate_db *m, const char *sql, int n,
			       const char *const *params, const char *what)
{
	struct db_error err;
	PGresult *r = db_session_exec(m->pg, sql, n, params, &err);
	if (!r) {
		snprintf(m->failed, sizeof m->failed, "%s", err.sqlstate);
		log_msg(migrate_lock_lost(m) ? LOG_WARN : LOG_ERROR, NULL, "migrate: %s failed: %s",
			what, *err.message ? err.message : fleet_status_name(err.st));
	}
	PQclear(err.refusal);
	return r;
}

static int migrate_exec(struct migrate_db *m, const char *sql, const char *what)
{
	PGresult *r = migrate_query(m, sql, 0, NULL, what);
	PQclear(r);
	return r != NULL;
}

/* The sorted names of dir's files that kind accepts (new strings, caller frees), or -1 (logged).
 * A directory that does not exist is an error: a deployment that forgot functions/ would
 * otherwise keep the numbered files' fail-closed declarations without a word. */
static int migrate_list(const char *dir, const struct migrate_kind *kind,
			char *names[MIGRATE_MAX_FILES])
{
	int count = 0;
	DIR *d = opendir(dir);
	if (!d) {
		log_error("migrate: cannot open directory %s", dir);
		return -1;
	}
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (!kind->name_ok(e->d_name))
			continue;
		if (count == MIGRATE_MAX_FILES) {
			log_error("migrate: more than %d %s files in %s", MIGRATE_MAX_FILES,
				  kind->what, dir);
			closedir(d);
			for (int i = 0; i < count; i++)
				free(names[i]);
			return -1;
		}
		names[count++] = mem_strdup(e->d_name);
	}
	closedir(d);
	qsort(names, (size_t)count, sizeof names[0], migrate_name_cmp);
	return count;
}

/* Whether the file needs applying: a numbered file when its name is not recorded, a function
 * file when no checksum or another checksum is recorded for it. */
static int migrate_is_due(struct migrate_db *m, const struct migrate_kind *kind, const char *name,
			  const char *sha, bool *due)
{
	const char *p[1] = {name};
	const char *sql =
		kind == &migrate_numbered
			? "SELECT 1 FROM fleet_meta.schema_migrations WHERE name = $1"
			: "SELECT checksum FROM fleet_meta.schema_functions WHERE name = $1";
	PGresult *r = migrate_query(m, sql, 1, p, "reading fleet_meta");
	if (!r)
		return 0;
	if (kind == &migrate_numbered)
		*due = PQntuples(r) == 0;
	else
		*due = PQntuples(r) == 0 || strcmp(PQgetvalue(r, 0, 0), sha) != 0;
	PQclear(r);
	return 1;
}

/* Applies dir/name if due, with its record: in a transaction of its own, or in the caller's when
 * kind->together (which the caller rolls back when this fails). *done tells whether it ran;
 * then *text is the text applied (new string), when text is not NULL. */
static int migrate_apply(struct migrate_db *m, const struct migrate_kind *kind, const char *dir,
			 const char *name, bool *done, char **text)
{
	char *path = mem_printf("%s/%s", dir, name);
	char *sql = migrate_read_file(path);
	char sha[MIGRATE_SHA_HEX];
	bool due = false;
	int ok = 0;
	*done = false;
	if (!sql) {
		log_error("migrate: cannot read %s (missing or over %d bytes)", path,
			  MIGRATE_MAX_BYTES);
		goto out;
	}
	/* The checksum is of the very text applied below: read once. */
	if (!migrate_sha256(sql, sha)) {
		log_error("migrate: cannot compute the SHA-256 of %s", path);
		goto out;
	}
	if (!migrate_is_due(m, kind, name, sha, &due))
		goto out;
	if (!due) {
		ok = 1;
		goto out;
	}
	const char *p[2] = {name, sha};
	for (int tries = 1;; tries++) {
		if (!kind->together && !migrate_exec(m, "BEGIN", "BEGIN"))
			goto out;
		PGresult *r = NULL;
		if (migrate_exec(m, sql, name))
			r = migrate_query(m, kind->record_sql, kind->record_params, p,
					  "its record");
		bool recorded = r != NULL;
		PQclear(r);
		if (kind->together && !recorded)
			goto out;
		if (kind->together || (recorded && migrate_exec(m, "COMMIT", "COMMIT")))
			break;
		migrate_exec(m, "ROLLBACK", "ROLLBACK");
		if (!migrate_again(m, tries, name))
			goto out;
	}
	log_info("migrate: applied %s %s", kind->what, name);
	*done = true;
	ok = 1;
	if (text) {
		*text = sql;
		sql = NULL;
	}
out:
	free(sql);
	free(path);
	return ok;
}

/* Records the name of each renamed file that the database lacks where it recorded the other;
 * only for the files dir holds under their name now (an older folder applied by this binary
 * gains no name it does not have). */
static int migrate_record_renamed(struct migrate_db *m, const char *dir)
{
	static const char sql[] = "INSERT INTO fleet_meta.schema_migrations (name, applied_at)"
				  " SELECT $2, applied_at FROM fleet_meta.schema_migrations"
				  " WHERE name = $1 ON CONFLICT (name) DO NOTHING";
	for (size_t i = 0; i < 2 * (sizeof migrate_renamed / sizeof migrate_renamed[0]); i++) {
		const char *before = migrate_renamed[i / 2].before,
			   *now = migrate_renamed[i / 2].now;
		const char *p[2] = {i % 2 ? now : before, i % 2 ? before : now};
		char *path = mem_printf("%s/%s", dir, now);
		bool here = access(path, F_OK) == 0;
		free(path);
		if (!here)
			continue;
		PGresult *r = migrate_query(m, sql, 2, p, "recording a renamed file");
		int ok = r != NULL;
		if (ok && strcmp(PQcmdTuples(r), "1") == 0)
			log_info("migrate: recorded %s, the file applied as %s, under both names",
				 p[1], p[0]);
		PQclear(r);
		if (!ok)
			return 0;
	}
	return 1;
}

/* Applies every due file of dir of one kind, in name order; counts them into *applied. Function
 * files (kind->together) go in two passes in the caller's transaction: a SQL function's body
 * names what it calls when it is created, whatever the order of their files (fleet.case_for
 * calls fleet.case_visible), so they are created with check_function_bodies off, as
 * pg_restore does, then created again with it on, once every one of them exists: a body that
 * does not parse, or names what does not exist, fails migrate as it always did. */
static int migrate_apply_all(struct migrate_db *m, const struct migrate_kind *kind, const char *dir,
			     int *applied)
{
	char *names[MIGRATE_MAX_FILES];
	char *texts[MIGRATE_MAX_FILES] = {0};
	int count = migrate_list(dir, kind, names);
	int ok = count >= 0;
	if (ok && kind->together)
		ok = migrate_exec(m, "SET LOCAL check_function_bodies = off", "its setting");
	for (int i = 0; ok && i < count; i++) {
		bool done;
		ok = migrate_apply(m, kind, dir, names[i], &done,
				   kind->together ? &texts[i] : NULL);
		if (ok && done)
			(*applied)++;
	}
	if (ok && kind->together)
		ok = migrate_exec(m, "SET LOCAL check_function_bodies = on", "its setting");
	for (int i = 0; ok && i < count; i++)
		if (texts[i])
			ok = migrate_exec(m, texts[i], names[i]);
	for (int i = 0; i < count; i++) {
		free(names[i]);
		free(texts[i]);
	}
	return ok;
}

/* fleet.capabilities made the declared rows exactly (migrate.h, step 3): the rows as one JSON array
 * (roles a comma list, split and trimmed in SQL), upserted where they differ, and every other row
 * deleted; its triggers bump the rights epoch for each row changed. */
static const char migrate_capabilities_sql[] =
	"WITH d AS ("
	" SELECT x.name, ARRAY(SELECT btrim(r.role) FROM unnest(string_to_array(x.roles, ','))"
	"  WITH ORDINALITY AS r(role, n) WHERE btrim(r.role) <> '' ORDER BY r.n) AS roles,"
	" x.scope, x.people_only, x.confirmation"
	" FROM jsonb_to_recordset($1::jsonb) AS x(name text, roles text, scope text,"
	"  people_only boolean, confirmation text)),"
	" up AS (INSERT INTO fleet.capabilities AS c"
	" (name, roles, scope, people_only, confirmation)"
	" SELECT d.name, d.roles, d.scope, d.people_only, d.confirmation FROM d"
	" ON CONFLICT (name) DO UPDATE SET roles = EXCLUDED.roles, scope = EXCLUDED.scope,"
	" people_only = EXCLUDED.people_only, confirmation = EXCLUDED.confirmation"
	" WHERE (c.roles, c.scope, c.people_only, c.confirmation) IS DISTINCT FROM"
	" (EXCLUDED.roles, EXCLUDED.scope, EXCLUDED.people_only, EXCLUDED.confirmation)"
	" RETURNING 1),"
	" gone AS (DELETE FROM fleet.capabilities c WHERE c.name NOT IN (SELECT d.name FROM d)"
	" RETURNING 1)"
	" SELECT (SELECT count(*) FROM up) || ' added or changed, ' ||"
	" (SELECT count(*) FROM gone) || ' removed'";

/* The declared rows as the JSON array migrate_capabilities_sql reads (new string), or NULL
 * (logged) when a row lacks a field or names a capability twice: the generator's bug. */
static char *migrate_capabilities_json(const struct migrate_capability *caps, size_t n)
{
	json_t *rows = json_array();
	char *text = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct migrate_capability *c = &caps[i];
		if (!c->name || !c->roles || !c->scope || !c->confirmation) {
			log_error("migrate: capability row %zu (%s) lacks a field", i,
				  c->name ? c->name : "no name");
			goto out;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(caps[j].name, c->name) == 0) {
				log_error("migrate: capability %s is declared twice", c->name);
				goto out;
			}
		json_array_append_new(rows,
				      json_pack("{s:s, s:s, s:s, s:b, s:s}", "name", c->name,
						"roles", c->roles, "scope", c->scope, "people_only",
						c->people_only, "confirmation", c->confirmation));
	}
	text = json_dumps(rows, JSON_COMPACT);
out:
	json_decref(rows);
	return text;
}

/* Step 3 of migrate_run, in the caller's transaction: fleet.capabilities as declared, when the
 * schema has it. */
static int migrate_capabilities_sync(struct migrate_db *m, const struct migrate_capability *caps,
				     size_t n)
{
	char *rows = migrate_capabilities_json(caps, n);
	if (!rows)
		return 0;
	int ok = 0;
	PGresult *r = migrate_query(m, "SELECT to_regclass('fleet.capabilities') IS NOT NULL", 0,
				    NULL, "looking for fleet.capabilities");
	if (!r)
		goto out;
	bool here = PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	PQclear(r);
	if (!here) {
		log_info("migrate: no fleet.capabilities in this schema (numbered files before "
			 "0018_capabilities.sql): %zu capabilities not recorded",
			 n);
		ok = 1;
		goto out;
	}
	const char *p[1] = {rows};
	r = migrate_query(m, migrate_capabilities_sql, 1, p, "recording the capabilities");
	if (!r)
		goto out;
	log_info("migrate: capabilities: %zu declared, %s", n,
		 PQntuples(r) == 1 ? PQgetvalue(r, 0, 0) : "(no count)");
	PQclear(r);
	ok = 1;
out:
	free(rows);
	return ok;
}

/* Steps 2 and 3 of migrate_run in one transaction: other sessions see the new text of every
 * changed function and the declared capabilities together, or none of them. Applied one by one,
 * a function calling another that is new in the same run (fleet.report_damage_as calls
 * fleet.report_damaged_bike_as, which sorts after it) would fail in between, and so would
 * every write and read before the capabilities were recorded, while a previous release keeps
 * serving during a rolling upgrade. */
static int migrate_functions_and_capabilities(struct migrate_db *m, const char *fdir,
					      const struct migrate_capability *caps, size_t ncaps,
					      int *applied)
{
	for (int tries = 1;; tries++) {
		if (!migrate_exec(m, "BEGIN", "BEGIN"))
			return 0;
		if (migrate_apply_all(m, &migrate_functions, fdir, applied) &&
		    migrate_capabilities_sync(m, caps, ncaps) &&
		    migrate_exec(m, "COMMIT", "COMMIT"))
			return 1;
		bool lock = migrate_lock_lost(m);
		migrate_exec(m, "ROLLBACK", "ROLLBACK");
		if (*applied)
			log_msg(lock ? LOG_WARN : LOG_ERROR, NULL,
				"migrate: the %d function file(s) above were rolled back with the "
				"rest of this run's: none is applied",
				*applied);
		*applied = 0;
		if (!migrate_again(m, tries, "the function files and capabilities"))
			return 0;
	}
}

enum fleet_status migrate_run(const char *conninfo, const char *dir,
			      const struct migrate_capability *caps, size_t ncaps,
			      struct migrate_count *applied)
{
	enum fleet_status st = FLEET_INTERNAL;
	char *fdir = mem_printf("%s/%s", dir, MIGRATE_FUNCTIONS);
	applied->numbered = applied->functions = 0;

	struct migrate_db db = {exec_session_new(conninfo ? conninfo : "", true), ""}, *m = &db;
	struct db_error err;
	PGresult *r = db_session_exec(m->pg, "SET client_min_messages = warning", 0, NULL, &err);
	PQclear(r);
	PQclear(err.refusal);
	if (!r) {
		log_error("migrate: cannot connect (%s)%s%s", fleet_status_name(err.st),
			  *err.message ? ": " : "", err.message);
		st = err.st == FLEET_OK ? FLEET_INTERNAL : err.st;
		goto out;
	}
	/* Session lock: a second instance waits here, then finds everything applied. */
	if (!migrate_exec(m, "SELECT pg_advisory_lock(" MIGRATE_LOCK_KEY ")", "advisory lock"))
		goto out;
	/* Only now: lock_timeout bounds the advisory lock's wait too. */
	if (!migrate_exec(m, "SET lock_timeout = '" MIGRATE_LOCK_WAIT "'", "lock_timeout"))
		goto unlock;
	/* Numbered files first (tables, types, policies, triggers, grants), then the functions,
	 * whose current text replaces the declarations the numbered files needed, then the
	 * declared capabilities. */
	if (migrate_exec(m, migrate_meta_sql, "create fleet_meta") &&
	    migrate_record_renamed(m, dir) &&
	    migrate_apply_all(m, &migrate_numbered, dir, &applied->numbered) &&
	    migrate_record_renamed(m, dir) &&
	    migrate_functions_and_capabilities(m, fdir, caps, ncaps, &applied->functions))
		st = FLEET_OK;
unlock:
	migrate_exec(m, "SELECT pg_advisory_unlock(" MIGRATE_LOCK_KEY ")", "advisory unlock");
out:
	exec_session_close(m->pg);
	free(fdir);
	return st;
}

int migrate_schema_needed(void)
{
	return MIGRATE_SCHEMA_NEEDED;
}

enum fleet_status migrate_schema_version(int *version)
{
	static const char sql[] = "SELECT coalesce(max(substr(name, 1, 4)::int), 0) AS version"
				  " FROM fleet_meta.schema_migrations WHERE name ~ '^[0-9]{4}_'";
	*version = 0;
	struct db_error err;
	PGresult *res = db_exec("schema_version", sql, 0, NULL, &err);
	if (!res)
		return err.st;
	enum fleet_status st = FLEET_OK;
	static const char *const names[] = {"version"};
	int col[1];
	if (db_columns(res, "schema_version", names, 1, col) == FLEET_OK && PQntuples(res) == 1)
		*version = (int)strtol(PQgetvalue(res, 0, col[0]), NULL, 10);
	else
		st = FLEET_INTERNAL;
	PQclear(res);
	return st;
}
