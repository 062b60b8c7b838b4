/* Integration tests of fleet.capabilities, the rows of who may use each capability: `migrate`
 * makes them the declared rows, deleting the rows of capabilities no longer declared, and a
 * change of them bumps the rights epoch. */
#include <check.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "harness.h"
#include "tests/check_main.h"

/* Capability rows of these tests' own (deleted by the fixture). */
#define WR_CAPS "it_writes_%%" /* a LIKE pattern, in printf formats */

static char *wr_vsql(bool app, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static char *wr_vsql(bool app, const char *fmt, va_list ap)
{
	char *sql = mem_alloc(8192);
	vsnprintf(sql, 8192, fmt, ap);
	char *v = app ? it_sql_as_app(sql) : it_sql(sql);
	free(sql);
	return v;
}

/* As the superuser, for setting up and looking: fails the test when the database refuses. */
static char *wr_super(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *wr_super(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *v = wr_vsql(false, fmt, ap);
	va_end(ap);
	ck_assert_msg(v != NULL, "the superuser's SQL failed (%s)", fmt);
	return v;
}

/* The rows of fleet.capabilities as migrate left them, as statements that give them back: taken
 * once before the tests (in the parent process, so that every test's process has them), run
 * before each test and after the last, also when a test failed half-way. */
static char *wr_restore;

static void wr_clean(void)
{
	if (wr_restore && *wr_restore)
		free(wr_super("%s", wr_restore));
	free(wr_super("DELETE FROM fleet.capabilities WHERE name LIKE '" WR_CAPS "'"));
}

static void wr_suite_setup(void)
{
	wr_restore =
		wr_super("SELECT string_agg(format('UPDATE fleet.capabilities SET roles = %%L,"
			 " scope = %%L, people_only = %%L, confirmation = %%L WHERE name = %%L',"
			 " roles, scope, people_only, confirmation, name), ';')"
			 " FROM fleet.capabilities WHERE name NOT LIKE '" WR_CAPS "'");
}

static void wr_suite_teardown(void)
{
	wr_clean();
	free(wr_restore);
	wr_restore = NULL;
}

/* ---- migrate records the declared capabilities ------------------------------------------- */

START_TEST(migrate_makes_the_capabilities_the_declared_rows)
{
	/* What the suite's database was migrated with (scripts/test.sh): the declared rows. */
	char *declared = wr_super("SELECT string_agg(concat_ws(' ', name, roles, scope,"
				  " people_only, confirmation), ', ' ORDER BY name) FROM"
				  " fleet.capabilities WHERE name NOT LIKE '" WR_CAPS "'");
	free(wr_super("INSERT INTO fleet.capabilities (name, roles, scope, people_only,"
		      " confirmation) VALUES ('it_writes_gone', '{viewer}', 'fleet:read', false,"
		      " 'never');"
		      " UPDATE fleet.capabilities SET roles = '{viewer}', confirmation = 'always'"
		      " WHERE name = 'damage_report'"));
	char *epoch = wr_super("SELECT epoch FROM fleet.rights_epoch");
	char *url = mem_printf("BIKAROO_MIGRATE_URL=%s", it_env("BIKAROO_MIGRATE_URL"));
	const char *env[] = {url, NULL};
	ck_assert_int_eq(it_run("migrate", env), 0);
	char *now = wr_super("SELECT string_agg(concat_ws(' ', name, roles, scope, people_only,"
			     " confirmation), ', ' ORDER BY name) FROM fleet.capabilities");
	ck_assert_str_eq(now, declared);
	ck_assert_ptr_nonnull(strstr(declared, "damage_report {customer_care,fleet_operator}"));
	/* Changed rows are changed rights: cached rights are resolved again. */
	char *epoch2 = wr_super("SELECT epoch FROM fleet.rights_epoch");
	ck_assert_str_ne(epoch, epoch2);
	free(epoch2);
	free(now);
	free(url);
	free(epoch);
	free(declared);
}
END_TEST

CHECK_SUITE(writes)
{
	Suite *s = suite_create("writes");
	TCase *tc = tcase_create("write-pattern");
	tcase_set_timeout(tc, 60);
	tcase_add_unchecked_fixture(tc, wr_suite_setup, wr_suite_teardown);
	tcase_add_checked_fixture(tc, wr_clean, NULL);
	tcase_add_test(tc, migrate_makes_the_capabilities_the_declared_rows);
	suite_add_tcase(s, tc);
	return s;
}
