/* Migrations: numbered SQL files, recorded in a table, applied under an advisory lock. */
#include "migrate.h"

#include <dirent.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"

#define MIGRATE_LOCK_KEY "7268431905" /* arbitrary, fixed: "bikaroo migrations" */
#define MIGRATE_MAX_FILES 512
#define MIGRATE_MAX_BYTES (4 * 1024 * 1024)

static int migrate_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
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
		if (!((n[i] >= 'a' && n[i] <= 'z') || (n[i] >= '0' && n[i] <= '9') || n[i] == '_'))
			return 0;
	return 1;
}

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

static int migrate_exec(PGconn *pg, const char *sql, const char *what)
{
	PGresult *r = PQexec(pg, sql);
	int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
	if (!ok)
		log_error("migrate: %s failed: %s", what, PQresultErrorMessage(r));
	PQclear(r);
	return ok;
}

static int migrate_is_applied(PGconn *pg, const char *name, int *applied)
{
	const char *p[1] = {name};
	PGresult *r = PQexecParams(pg, "SELECT 1 FROM fleet_meta.schema_migrations WHERE name = $1",
				   1, NULL, p, NULL, NULL, 0);
	int ok = PQresultStatus(r) == PGRES_TUPLES_OK;
	if (ok)
		*applied = PQntuples(r) > 0;
	else
		log_error("migrate: cannot read schema_migrations: %s", PQresultErrorMessage(r));
	PQclear(r);
	return ok;
}

static int migrate_apply(PGconn *pg, const char *dir, const char *name)
{
	char *path = mem_printf("%s/%s", dir, name);
	char *sql = migrate_read_file(path);
	int ok = 0;
	if (!sql) {
		log_error("migrate: cannot read %s (missing or over %d bytes)", path,
			  MIGRATE_MAX_BYTES);
		goto out;
	}
	if (!migrate_exec(pg, "BEGIN", "BEGIN"))
		goto out;
	if (!migrate_exec(pg, sql, name)) {
		migrate_exec(pg, "ROLLBACK", "ROLLBACK");
		goto out;
	}
	const char *p[1] = {name};
	PGresult *r =
		PQexecParams(pg, "INSERT INTO fleet_meta.schema_migrations (name) VALUES ($1)", 1,
			     NULL, p, NULL, NULL, 0);
	int recorded = PQresultStatus(r) == PGRES_COMMAND_OK;
	PQclear(r);
	if (!recorded || !migrate_exec(pg, "COMMIT", "COMMIT")) {
		migrate_exec(pg, "ROLLBACK", "ROLLBACK");
		goto out;
	}
	log_info("migrate: applied %s", name);
	ok = 1;
out:
	free(sql);
	free(path);
	return ok;
}

enum fleet_status migrate_run(const char *conninfo, const char *dir, int *applied)
{
	enum fleet_status st = FLEET_INTERNAL;
	char *names[MIGRATE_MAX_FILES];
	int count = 0;
	*applied = 0;

	PGconn *pg = PQconnectdb(conninfo ? conninfo : "");
	if (PQstatus(pg) != CONNECTION_OK) {
		log_error("migrate: cannot connect: %s", PQerrorMessage(pg));
		PQfinish(pg);
		return FLEET_UNAVAILABLE;
	}
	DIR *d = opendir(dir);
	if (!d) {
		log_error("migrate: cannot open migrations directory %s", dir);
		goto out;
	}
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (!migrate_name_ok(e->d_name))
			continue;
		if (count == MIGRATE_MAX_FILES) {
			log_error("migrate: more than %d migration files", MIGRATE_MAX_FILES);
			closedir(d);
			goto out;
		}
		names[count++] = mem_strdup(e->d_name);
	}
	closedir(d);
	qsort(names, (size_t)count, sizeof names[0], migrate_name_cmp);

	/* Session lock: a second instance waits here, then finds everything applied. */
	if (!migrate_exec(pg, "SET client_min_messages = warning", "settings") ||
	    !migrate_exec(pg, "SELECT pg_advisory_lock(" MIGRATE_LOCK_KEY ")", "advisory lock"))
		goto out;
	if (!migrate_exec(pg,
			  "CREATE SCHEMA IF NOT EXISTS fleet_meta;"
			  "CREATE TABLE IF NOT EXISTS fleet_meta.schema_migrations ("
			  " name text PRIMARY KEY,"
			  " applied_at timestamptz NOT NULL DEFAULT now())",
			  "create schema_migrations"))
		goto unlock;
	for (int i = 0; i < count; i++) {
		int done = 0;
		if (!migrate_is_applied(pg, names[i], &done))
			goto unlock;
		if (done)
			continue;
		if (!migrate_apply(pg, dir, names[i]))
			goto unlock;
		(*applied)++;
	}
	st = FLEET_OK;
unlock:
	migrate_exec(pg, "SELECT pg_advisory_unlock(" MIGRATE_LOCK_KEY ")", "advisory unlock");
out:
	for (int i = 0; i < count; i++)
		free(names[i]);
	PQfinish(pg);
	return st;
}
