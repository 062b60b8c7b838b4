/* Integration tests of `bikaroo-mcp migrate` (migrations/README.md): numbered files once, function
 * files again when their checksum changes, and pg_dump proof that a database migrated by the
 * numbered files of d73423a (tests/integration/migrations-d73423a) and then by today's code
 * has the schema of a fresh one. */
#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "common/mem.h"
#include "harness.h"
#include "tests/check_main.h"

#define MIG_OLD_DIR "tests/integration/migrations-d73423a"

/* A libpq URL of database db as role (new string). */
static char *mig_url(const char *role, const char *db)
{
	return mem_printf("postgresql://%s@/%s?%s", role, db, it_env("IT_PG_QUERY"));
}

static void mig_createdb(const char *db)
{
	char *drop = mem_printf("DROP DATABASE IF EXISTS %s WITH (FORCE)", db);
	char *create = mem_printf("CREATE DATABASE %s OWNER fleet_owner", db);
	free(it_sql(drop));
	char *done = it_sql(create);
	ck_assert_ptr_nonnull(done);
	free(done);
	free(create);
	free(drop);
}

static void mig_dropdb(const char *db)
{
	char *drop = mem_printf("DROP DATABASE IF EXISTS %s WITH (FORCE)", db);
	free(it_sql(drop));
	free(drop);
}

/* Runs `bikaroo-mcp migrate` on db as the owner, with migrations from dir (NULL: the product's
 * own migrations/); returns its exit status. */
static int mig_migrate(const char *db, const char *dir)
{
	char *url = mig_url("fleet_owner", db);
	char *url_env = mem_printf("BIKAROO_MIGRATE_URL=%s", url);
	char *dir_env = mem_printf("BIKAROO_MIGRATIONS_DIR=%s", dir ? dir : "migrations");
	const char *env[] = {url_env, dir_env, NULL};
	int rc = it_run("migrate", env);
	free(dir_env);
	free(url_env);
	free(url);
	return rc;
}

/* Drops the lines of text that start with prefix (in place). */
static void mig_drop_lines(char *text, const char *prefix)
{
	char *w = text;
	for (char *r = text; *r;) {
		char *nl = strchr(r, '\n');
		size_t len = nl ? (size_t)(nl - r) + 1 : strlen(r);
		if (strncmp(r, prefix, strlen(prefix)) != 0) {
			memmove(w, r, len);
			w += len;
		}
		r += len;
	}
	*w = '\0';
}

/* `pg_dump --schema-only` of db without the bookkeeping schema fleet_meta (new string). The
 * \restrict lines of recent pg_dump versions carry a random key: left out. */
static char *mig_dump(const char *db)
{
	static unsigned seq;
	char *url = mig_url("postgres", db);
	char *file = mem_printf("%s/dump-%d-%u.sql", it_env("IT_TMP"), (int)getpid(), ++seq);
	pid_t pid = fork();
	if (pid == 0) {
		execl(it_env("IT_PG_DUMP"), "pg_dump", "--schema-only",
		      "--exclude-schema=fleet_meta", "-f", file, "-d", url, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "pg_dump %s failed", db);
	FILE *f = fopen(file, "r");
	ck_assert_ptr_nonnull(f);
	size_t cap = 1 << 16, n = 0;
	char *text = mem_alloc(cap);
	for (size_t got; (got = fread(text + n, 1, cap - n - 1, f)) > 0;) {
		n += got;
		if (cap - n - 1 == 0)
			text = mem_realloc(text, cap *= 2);
	}
	fclose(f);
	text[n] = '\0';
	unlink(file);
	mig_drop_lines(text, "\\restrict ");
	mig_drop_lines(text, "\\unrestrict ");
	free(file);
	free(url);
	return text;
}

/* What the upgrade from d73423a may change, derived from the tree (no list to keep by hand):
 * - every function of migrations/functions/ (its text is today's file, on both paths);
 * - every object a numbered file added since d73423a (one not in MIG_OLD_DIR) creates, alters or
 *   drops, as the file names it (CREATE/ALTER TABLE, CREATE TRIGGER/INDEX/POLICY/TYPE/SEQUENCE,
 *   CREATE/DROP FUNCTION, DROP INDEX, CREATE/ALTER DOMAIN). */
#define MIG_MAX_NAMES 256
struct mig_names {
	char name[MIG_MAX_NAMES][128];
	size_t n;
};

/* Adds the first len - strlen(suffix) bytes of name, then suffix. */
static void mig_names_add(struct mig_names *ns, const char *name, size_t len, const char *suffix)
{
	ck_assert_uint_lt(ns->n, MIG_MAX_NAMES);
	snprintf(ns->name[ns->n++], sizeof ns->name[0], "%.*s%s", (int)(len - strlen(suffix)), name,
		 suffix);
}

/* The functions (schema.name) of migrations/functions/, from the file names. */
static void mig_function_files(struct mig_names *ns)
{
	DIR *d = opendir("migrations/functions");
	ck_assert_ptr_nonnull(d);
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		size_t n = strlen(e->d_name);
		if (n > 4 && strcmp(e->d_name + n - 4, ".sql") == 0)
			mig_names_add(ns, e->d_name, n - 4, "");
	}
	closedir(d);
}

static const char *mig_skip_words(const char *p)
{
	static const char *const words[] = {"IF NOT EXISTS ", "IF EXISTS ", "ONLY ", "UNLOGGED ",
					    "UNIQUE "};
	for (bool again = true; again;) {
		again = false;
		for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
			if (strncasecmp(p, words[i], strlen(words[i])) == 0) {
				p += strlen(words[i]);
				again = true;
			}
	}
	return p;
}

/* The objects numbered files since d73423a name: needles for mig_cut_blocks (a function as
 * "name(" without its schema, as pg_dump's headers write it; anything else as written). */
static void mig_new_objects(struct mig_names *ns)
{
	static const char *const verbs[] = {
		"CREATE TABLE ",    "ALTER TABLE ",         "CREATE TRIGGER ",
		"CREATE INDEX ",    "CREATE POLICY ",       "CREATE TYPE ",
		"CREATE SEQUENCE ", "CREATE FUNCTION ",     "CREATE OR REPLACE FUNCTION ",
		"DROP FUNCTION ",   "CREATE UNIQUE INDEX ", "DROP INDEX ",
		"CREATE DOMAIN ",   "ALTER DOMAIN "};
	DIR *d = opendir("migrations");
	ck_assert_ptr_nonnull(d);
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		size_t n = strlen(e->d_name);
		if (n < 9 || strcmp(e->d_name + n - 4, ".sql") != 0 || e->d_name[4] != '_')
			continue;
		char *old = mem_printf("%s/%s", MIG_OLD_DIR, e->d_name);
		bool known = access(old, F_OK) == 0;
		free(old);
		if (known)
			continue;
		char *path = mem_printf("migrations/%s", e->d_name);
		FILE *f = fopen(path, "r");
		ck_assert_ptr_nonnull(f);
		char line[1024], upper[1024];
		while (fgets(line, sizeof line, f))
			for (size_t v = 0; v < sizeof verbs / sizeof verbs[0]; v++) {
				for (size_t i = 0; i < sizeof line; i++)
					if (!(upper[i] = (char)toupper((unsigned char)line[i])))
						break;
				const char *hit = strstr(upper, verbs[v]);
				if (!hit || strncmp(line, "--", 2) == 0)
					continue;
				const char *at = line + (hit - upper);
				const char *p = mig_skip_words(at + strlen(verbs[v]));
				size_t len = strspn(p, "abcdefghijklmnopqrstuvwxyz"
						       "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.");
				bool fn = strstr(verbs[v], "FUNCTION") != NULL;
				/* A policy's name is unique per table only: "name ON table". */
				if (strcmp(verbs[v], "CREATE POLICY ") == 0) {
					const char *on = strstr(p, " ON ");
					if (on && on > p)
						len = (size_t)(on - p) + 4 +
						      strspn(on + 4,
							     "abcdefghijklmnopqrstuvwxyz_.");
				}
				/* pg_dump names a function, and an index, without its schema. */
				bool bare = fn || strcmp(verbs[v], "DROP INDEX ") == 0;
				const char *dot = bare ? memchr(p, '.', len) : NULL;
				if (dot) {
					len -= (size_t)(dot + 1 - p);
					p = dot + 1;
				}
				if (len)
					mig_names_add(ns, p, len + (fn ? 1 : 0), fn ? "(" : "");
			}
		fclose(f);
		free(path);
	}
	closedir(d);
}

static size_t mig_count(const char *text, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* Cuts, in place, the lines of a dump that begin with prefix (pg_dump's session settings, SET
 * default_tablespace..., which it writes where its output changes kind, after whatever block
 * comes last of a kind: they tell nothing of the schema), and every empty line. */
static void mig_cut_lines(char *dump, const char *prefix)
{
	char *head = mem_printf("\n%s", prefix);
	for (char *from; (from = strstr(dump, head)) != NULL;) {
		char *end = strchr(from + 1, '\n');
		memmove(from, end ? end : from + strlen(from), strlen(end ? end : "") + 1);
	}
	free(head);
	char *out = dump;
	for (const char *in = dump; *in; in++)
		if (!(*in == '\n' && in[1] == '\n'))
			*out++ = *in;
	*out = '\0';
}

/* Cuts, in place, every block of a dump (from one "--\n-- Name: " header to the next) whose
 * text contains needle. */
static void mig_cut_blocks(char *dump, const char *needle)
{
	static const char head[] = "\n--\n-- Name: ";
	char *from = strstr(dump, head);
	while (from) {
		char *next = strstr(from + 1, head);
		if (!next)
			next = strstr(from + 1, "\n--\n-- PostgreSQL database dump complete");
		if (!next)
			next = from + strlen(from);
		char saved = *next;
		*next = '\0';
		bool hit = strstr(from, needle) != NULL;
		*next = saved;
		if (hit) {
			memmove(from, next, strlen(next) + 1);
			from = strstr(from, head);
		} else {
			from = strstr(next, head);
		}
	}
}

/* Cuts the definitions of function name (schema.name, every overload) out of a dump, in place:
 * from each "CREATE FUNCTION name(" to the end of that statement, which pg_dump follows with
 * its ALTER FUNCTION ... OWNER line or the next block (whatever quotes the body). */
static void mig_cut_function(char *dump, const char *name)
{
	char *head = mem_printf("\nCREATE FUNCTION %s(", name);
	for (char *from; (from = strstr(dump, head)) != NULL;) {
		char *alter = strstr(from, "\nALTER FUNCTION ");
		char *next = strstr(from, "\n--\n");
		char *to = alter && (!next || alter < next) ? alter : next;
		ck_assert_ptr_nonnull(to);
		memmove(from, to, strlen(to) + 1);
	}
	free(head);
}

/* The record of applied function files, for comparing before and after a run (new string). */
static char *mig_function_records(const char *db)
{
	char *url = mig_url("fleet_owner", db);
	char *rows =
		it_sql_url(url, "SELECT string_agg(name || ' ' || checksum || ' ' || "
				"applied_at, ',' ORDER BY name) FROM fleet_meta.schema_functions");
	ck_assert_ptr_nonnull(rows);
	free(url);
	return rows;
}

/* The first line where a and b differ, for a failure message (static buffer). */
static const char *mig_first_difference(const char *a, const char *b)
{
	static char msg[512];
	int line = 1;
	const char *sa = a, *sb = b;
	for (; *a && *a == *b; a++, b++)
		if (*a == '\n') {
			line++;
			sa = a + 1;
			sb = b + 1;
		}
	snprintf(msg, sizeof msg, "line %d: \"%.200s\" vs \"%.200s\"", line, sa, sb);
	for (char *p = msg; *p; p++)
		if (*p == '\n')
			*p = ' ';
	return msg;
}

START_TEST(upgrade_from_d73423a_changes_only_changed_functions_and_matches_a_fresh_install)
{
	mig_createdb("it_schema_old");
	mig_createdb("it_schema_new");
	/* A database as the previous main left it: the numbered files of d73423a, recorded by
	 * name, function bodies in them. */
	ck_assert_int_eq(mig_migrate("it_schema_old", MIG_OLD_DIR), 0);
	char *before = mig_dump("it_schema_old");
	ck_assert_ptr_nonnull(strstr(before, "CREATE FUNCTION fleet.report_damage_as("));
	/* Today's migrate on it: the numbered files since d73423a, then the function files. */
	ck_assert_int_eq(mig_migrate("it_schema_old", NULL), 0);
	char *after = mig_dump("it_schema_old");
	/* The same schema, but for the function files' texts and what the numbered files since
	 * d73423a name (both derived from the tree). A function whose overloads are the same on
	 * both sides keeps its grants and comments compared; one added, dropped or given another
	 * signature is left out whole. */
	char *before_cut = mem_strdup(before), *after_cut = mem_strdup(after);
	static struct mig_names fns, added;
	fns.n = added.n = 0;
	mig_function_files(&fns);
	mig_new_objects(&added);
	for (size_t i = 0; i < fns.n; i++) {
		char *head = mem_printf("\nCREATE FUNCTION %s(", fns.name[i]);
		size_t nb = mig_count(before_cut, head), na = mig_count(after_cut, head);
		free(head);
		if (nb != na || nb == 0) {
			const char *dot = strchr(fns.name[i], '.');
			const char *bare = dot ? dot + 1 : fns.name[i];
			mig_names_add(&added, bare, strlen(bare) + 1, "(");
		}
		mig_cut_function(before_cut, fns.name[i]);
		mig_cut_function(after_cut, fns.name[i]);
	}
	for (size_t i = 0; i < added.n; i++) {
		mig_cut_blocks(before_cut, added.name[i]);
		mig_cut_blocks(after_cut, added.name[i]);
	}
	mig_cut_lines(before_cut, "SET default_");
	mig_cut_lines(after_cut, "SET default_");
	ck_assert_msg(strcmp(before_cut, after_cut) == 0,
		      "upgrade changed the schema at %s. A change made on purpose belongs in a "
		      "numbered file after d73423a that names the object in its CREATE, ALTER or "
		      "DROP statement, or in a function file of migrations/functions/ (this test "
		      "reads both to know what may change)",
		      mig_first_difference(before_cut, after_cut));
	free(after_cut);
	free(before_cut);
	/* A fresh database migrated by today's code: stubs, then the function files. */
	ck_assert_int_eq(mig_migrate("it_schema_new", NULL), 0);
	char *fresh = mig_dump("it_schema_new");
	ck_assert_msg(strcmp(after, fresh) == 0, "upgraded and fresh differ at %s",
		      mig_first_difference(after, fresh));
	/* Once more: nothing is due, nothing runs. */
	char *records = mig_function_records("it_schema_new");
	ck_assert_int_eq(mig_migrate("it_schema_new", NULL), 0);
	char *records2 = mig_function_records("it_schema_new");
	char *again = mig_dump("it_schema_new");
	ck_assert_str_eq(records, records2);
	ck_assert(strcmp(fresh, again) == 0);
	free(again);
	free(records2);
	free(records);
	free(fresh);
	free(after);
	free(before);
	mig_dropdb("it_schema_old");
	mig_dropdb("it_schema_new");
}
END_TEST

static void mig_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* Database db created and migrated by today's migrations; its owner's URL (new string). */
static char *mig_migrated(const char *db)
{
	mig_createdb(db);
	ck_assert_int_eq(mig_migrate(db, NULL), 0);
	return mig_url("fleet_owner", db);
}

/* A new empty migrations folder of the test's own, mig-TAG-PID (new string). */
static char *mig_folder(const char *tag)
{
	char *dir = mem_printf("%s/mig-%s-%d", it_env("IT_TMP"), tag, (int)getpid());
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	return dir;
}

START_TEST(function_file_reapplied_only_when_changed)
{
	char *url = mig_migrated("it_schema_fn");
	/* A migrations folder of one function file and no numbered file. */
	char *dir = mig_folder("fn");
	char *fdir = mem_printf("%s/functions", dir);
	char *file = mem_printf("%s/fleet.it_probe.sql", fdir);
	/* No functions/ folder at all is an error, not "nothing to do". */
	ck_assert_int_ne(mig_migrate("it_schema_fn", dir), 0);
	ck_assert_int_eq(mkdir(fdir, 0700), 0);
	mig_write(file, "CREATE OR REPLACE FUNCTION fleet.it_probe() RETURNS integer\n"
			"LANGUAGE sql AS $$ SELECT 1 $$;\n");
	ck_assert_int_eq(mig_migrate("it_schema_fn", dir), 0);
	char *one = it_sql_url(url, "SELECT fleet.it_probe()");
	ck_assert_str_eq(one, "1");
	char *records = mig_function_records("it_schema_fn");
	/* Unchanged: not applied again (its record keeps its time). */
	ck_assert_int_eq(mig_migrate("it_schema_fn", dir), 0);
	char *records2 = mig_function_records("it_schema_fn");
	ck_assert_str_eq(records, records2);
	/* Changed: applied once more, by one of two instances started together. */
	mig_write(file, "CREATE OR REPLACE FUNCTION fleet.it_probe() RETURNS integer\n"
			"LANGUAGE sql AS $$ SELECT 2 $$;\n");
	pid_t pids[2];
	for (int i = 0; i < 2; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(mig_migrate("it_schema_fn", dir));
	}
	for (int i = 0; i < 2; i++) {
		int status;
		waitpid(pids[i], &status, 0);
		ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	char *two = it_sql_url(url, "SELECT fleet.it_probe()");
	ck_assert_str_eq(two, "2");
	char *records3 = mig_function_records("it_schema_fn");
	ck_assert_str_ne(records2, records3);
	/* A broken function file fails the run and leaves the previous definition and record. */
	mig_write(file, "CREATE OR REPLACE FUNCTION fleet.it_probe() RETURNS integer\n"
			"LANGUAGE sql AS $$ SELEC 3 $$;\n");
	ck_assert_int_ne(mig_migrate("it_schema_fn", dir), 0);
	char *still = it_sql_url(url, "SELECT fleet.it_probe()");
	ck_assert_str_eq(still, "2");
	char *records4 = mig_function_records("it_schema_fn");
	ck_assert_str_eq(records3, records4);
	/* The function files of a run go together: a good change beside a broken file (sorted
	 * after it) is not applied either, so that no session sees some of a run's new texts
	 * without the others. */
	char *broken = mem_printf("%s/fleet.it_probe_z.sql", fdir);
	mig_write(file, "CREATE OR REPLACE FUNCTION fleet.it_probe() RETURNS integer\n"
			"LANGUAGE sql AS $$ SELECT 4 $$;\n");
	mig_write(broken, "CREATE OR REPLACE FUNCTION fleet.it_probe_z() RETURNS integer\n"
			  "LANGUAGE sql AS $$ SELEC 5 $$;\n");
	ck_assert_int_ne(mig_migrate("it_schema_fn", dir), 0);
	char *together = it_sql_url(url, "SELECT fleet.it_probe()");
	ck_assert_str_eq(together, "2");
	char *records5 = mig_function_records("it_schema_fn");
	ck_assert_str_eq(records3, records5);
	unlink(broken);
	free(records5);
	free(together);
	free(broken);
	free(records4);
	free(still);
	free(records3);
	free(two);
	free(records2);
	free(records);
	free(one);
	unlink(file);
	rmdir(fdir);
	rmdir(dir);
	free(file);
	free(fdir);
	free(dir);
	free(url);
	mig_dropdb("it_schema_fn");
}
END_TEST

/* A report with an idempotency key, filed through a database of d73423a's schema by that
 * release's function, then the upgrade: the key replays the same report through today's write
 * function and through the previous releases' form, and the same key with other arguments is a
 * conflict; nothing is filed again. */
#define MIG_KEYS_SETUP                                                                             \
	"INSERT INTO fleet.regions (code, name) VALUES ('FR-PAR', 'Paris');"                       \
	"INSERT INTO fleet.principals (subject, display_name, role) VALUES ('marie', 'Marie', "    \
	"'customer_care');"                                                                        \
	"INSERT INTO fleet.principal_regions (subject, region) VALUES ('marie', 'FR-PAR');"        \
	"INSERT INTO fleet.client_apps (client_id, name, may_report) VALUES ('mig-app', 'App', "   \
	"true);"                                                                                   \
	"INSERT INTO fleet.bikes (bike_id, region, status, last_seen_at) VALUES ('VL-2048', "      \
	"'FR-PAR', 'available', now())"
#define MIG_KEYS_NEW(digest)                                                                       \
	"SELECT outcome || ' ' || coalesce(result->>'report_id', '-') || ' ' ||"                   \
	" coalesce(result->>'recorded_at', '-') FROM fleet.report_damaged_bike_as(('marie',"       \
	" 'mig-app', '{\"bikeId\": \"VL-2048\", \"issue\": \"flat_tire\"}', "                      \
	"'report_damaged_bike',"                                                                   \
	" 'key-1', repeat('" digest "', 64), 'mig-2', false, NULL, NULL, NULL,"                    \
	" NULL)::fleet.write_call)"

START_TEST(keys_used_before_the_upgrade_still_replay)
{
	mig_createdb("it_schema_keys");
	ck_assert_int_eq(mig_migrate("it_schema_keys", MIG_OLD_DIR), 0);
	char *owner = mig_url("fleet_owner", "it_schema_keys");
	char *app = mig_url("fleet_app", "it_schema_keys");
	free(it_sql_url(owner, MIG_KEYS_SETUP));
	char *first = it_sql_url(
		app,
		"SELECT out_outcome || ' ' || out_report_id || ' ' || out_recorded_at"
		" FROM fleet.report_damage_as('marie', 'mig-app', 'VL-2048', 'flat_tire', NULL, "
		"NULL, 'key-1', repeat('a', 64), 'mig-1', false)");
	ck_assert_msg(first && strncmp(first, "ok DR-", 6) == 0, "before: %s", first);
	ck_assert_int_eq(mig_migrate("it_schema_keys", NULL), 0);
	char *copied =
		it_sql_url(owner, "SELECT count(*) FROM fleet.idempotent_calls WHERE"
				  " idem_key = 'key-1' AND result->>'report_id' IS NOT NULL");
	ck_assert_str_eq(copied, "1");
	free(copied);
	char *again = it_sql_url(app, MIG_KEYS_NEW("a"));
	ck_assert_msg(again && strcmp(again + strlen("replayed"), first + strlen("ok")) == 0 &&
			      strncmp(again, "replayed ", 9) == 0,
		      "after: %s, before: %s", again, first);
	char *old_form = it_sql_url(
		app,
		"SELECT out_outcome || ' ' || out_report_id FROM fleet.report_damage_as('marie',"
		" 'mig-app', 'VL-2048', 'flat_tire', NULL, NULL, 'key-1', repeat('a', 64), "
		"'mig-3', false)");
	ck_assert_ptr_nonnull(old_form);
	ck_assert_int_eq(strncmp(old_form, again, strlen(old_form)), 0);
	char *other = it_sql_url(app, MIG_KEYS_NEW("b"));
	ck_assert_str_eq(other, "key_conflict - -");
	char *reports = it_sql_url(owner, "SELECT count(*) FROM fleet.damage_reports");
	ck_assert_str_eq(reports, "1");
	free(reports);
	free(other);
	free(old_form);
	free(again);
	free(first);
	free(app);
	free(owner);
	mig_dropdb("it_schema_keys");
}
END_TEST

/* A statement on its own connection to url: whether it succeeded. */
static bool mig_ok(PGconn *pg, const char *sql)
{
	PGresult *r = PQexec(pg, sql);
	ExecStatusType st = PQresultStatus(r);
	PQclear(r);
	return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
}

static double mig_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A rolling upgrade: the release still serving holds a table's lock (a long read) when this
 * release's migration must ALTER that table. The ALTER waits a bounded time, gives the lock queue
 * back (reads behind it pass instead of waiting for the long read to end), and is tried again
 * until the read ends: the migration succeeds. Without lock_timeout the read below waits behind
 * the ALTER until its statement_timeout; without the retry migrate fails. */
START_TEST(a_migration_waiting_for_a_lock_lets_reads_by_and_tries_again)
{
	char *url = mig_migrated("it_schema_lock");
	/* A migrations folder of one numbered file that alters the bikes' table. */
	char *dir = mig_folder("lock");
	char *fdir = mem_printf("%s/functions", dir);
	char *file = mem_printf("%s/9001_it_lock.sql", dir);
	ck_assert_int_eq(mkdir(fdir, 0700), 0);
	mig_write(file, "ALTER TABLE fleet.bikes ADD COLUMN it_lock integer;\n");

	PGconn *holder = PQconnectdb(url), *reader = PQconnectdb(url);
	ck_assert_int_eq(PQstatus(holder), CONNECTION_OK);
	ck_assert_int_eq(PQstatus(reader), CONNECTION_OK);
	ck_assert(mig_ok(holder, "BEGIN"));
	ck_assert(mig_ok(holder, "SELECT count(*) FROM fleet.bikes"));
	double start = mig_now();
	pid_t pid = fork();
	if (pid == 0)
		_exit(mig_migrate("it_schema_lock", dir));
	ck_assert_int_gt(pid, 0);
	usleep(1500 * 1000); /* the ALTER has waited, given up and queued again by now */
	ck_assert(mig_ok(reader, "SET statement_timeout = '4s'"));
	ck_assert_msg(mig_ok(reader, "SELECT count(*) FROM fleet.bikes"),
		      "a read waited behind the migration's ALTER: %s", PQerrorMessage(reader));
	while (mig_now() - start < 6.0)
		usleep(100 * 1000);
	ck_assert(mig_ok(holder, "COMMIT"));
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "migrate gave up on a lock that was released");
	char *col = it_sql_url(url, "SELECT count(*) FROM information_schema.columns"
				    " WHERE table_schema = 'fleet' AND table_name = 'bikes'"
				    " AND column_name = 'it_lock'");
	ck_assert_str_eq(col, "1");
	PQfinish(reader);
	PQfinish(holder);
	unlink(file);
	rmdir(fdir);
	rmdir(dir);
	free(col);
	free(file);
	free(fdir);
	free(dir);
	free(url);
	mig_dropdb("it_schema_lock");
}
END_TEST

CHECK_SUITE(migrate)
{
	Suite *s = suite_create("migrate");
	TCase *tc = tcase_create("numbered-and-function-files");
	tcase_set_timeout(tc, 120);
	tcase_add_test(
		tc,
		upgrade_from_d73423a_changes_only_changed_functions_and_matches_a_fresh_install);
	tcase_add_test(tc, function_file_reapplied_only_when_changed);
	tcase_add_test(tc, keys_used_before_the_upgrade_still_replay);
	tcase_add_test(tc, a_migration_waiting_for_a_lock_lets_reads_by_and_tries_again);
	suite_add_tcase(s, tc);
	return s;
}
