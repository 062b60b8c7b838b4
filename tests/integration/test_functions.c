/* Integration tests of the SQL functions of migrations/functions/, called directly as the
 * server's login role: what the database answers before any C looks at it. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "harness.h"
#include "suites.h"

/* report_damage_as for marie through careful-assistant (which needs confirmation), unconfirmed:
 * "outcome status_before status" (new string). */
static char *fn_unconfirmed_report(const char *bike)
{
	char *sql = mem_printf("SELECT out_outcome || ' ' || out_status_before || ' ' || out_status"
			       " FROM fleet.report_damage_as('marie', 'careful-assistant', '%s', "
			       "'flat_tire', NULL,"
			       " NULL, NULL, repeat('0', 64), 'it-functions', false)",
			       bike);
	char *row = it_sql_as_app(sql);
	free(sql);
	ck_assert_ptr_nonnull(row);
	return row;
}

START_TEST(unconfirmed_report_says_the_status_it_would_leave)
{
	char *reports = it_sql("SELECT count(*) FROM fleet.damage_reports");
	/* The database's one rule: a bike in repair, lost or retired keeps its status ... */
	char *kept = fn_unconfirmed_report("VL-1037");
	ck_assert_str_eq(kept, "confirmation_required in_repair in_repair");
	/* ... any other becomes unavailable. */
	char *taken = fn_unconfirmed_report("VL-2051");
	ck_assert_str_eq(taken, "confirmation_required available unavailable");
	/* Nothing was written. */
	char *reports2 = it_sql("SELECT count(*) FROM fleet.damage_reports");
	ck_assert_str_eq(reports, reports2);
	free(reports2);
	free(taken);
	free(kept);
	free(reports);
}
END_TEST

Suite *functions_suite(void)
{
	Suite *s = suite_create("functions");
	TCase *tc = tcase_create("report_damage_as");
	tcase_add_test(tc, unconfirmed_report_says_the_status_it_would_leave);
	suite_add_tcase(s, tc);
	return s;
}
