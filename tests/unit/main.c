/* Unit tests (Check): modules tested alone, without PostgreSQL or a network. */
#include <check.h>
#include <stdlib.h>

#include "common/mem.h"
#include "suites.h"

int main(void)
{
	mem_install_jansson();
	SRunner *sr = srunner_create(b64_suite());
	srunner_add_suite(sr, schema_suite());
	srunner_add_suite(sr, misc_suite());
	srunner_add_suite(sr, prompts_suite());
	srunner_add_suite(sr, jwt_suite());
	srunner_add_suite(sr, tokcache_suite());
	srunner_add_suite(sr, ratelimit_suite());
	srunner_add_suite(sr, ops_suite());
	srunner_add_suite(sr, jsonw_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
