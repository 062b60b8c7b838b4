/* Integration tests: the real server binary against the real PostgreSQL of scripts/test.sh. */
#include <check.h>
#include <curl/curl.h>
#include <stdlib.h>

#include "common/mem.h"
#include "suites.h"

int main(void)
{
	mem_install_jansson();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	SRunner *sr = srunner_create(protocol_suite());
	srunner_add_suite(sr, server_suite());
	srunner_add_suite(sr, catalogue_suite());
	srunner_add_suite(sr, stdio_suite());
	srunner_add_suite(sr, sse_suite());
	srunner_add_suite(sr, auth_suite());
	srunner_add_suite(sr, report_suite());
	srunner_add_suite(sr, listen_suite());
	srunner_add_suite(sr, migrate_suite());
	srunner_add_suite(sr, functions_suite());
	srunner_add_suite(sr, abuse_suite());
	srunner_add_suite(sr, hotpath_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	curl_global_cleanup();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
