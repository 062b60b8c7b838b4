/* Unit tests of the protocol core (Check), built from server/protocol/, the SSE framing and
 * common/ alone: no capability, no domain code, no libpq (make core-tests shows the link). */
#include <check.h>
#include <stdlib.h>

#include "common/mem.h"
#include "suites.h"

int main(void)
{
	mem_install_jansson();
	SRunner *sr = srunner_create(pager_suite());
	srunner_add_suite(sr, mcp_suite());
	srunner_add_suite(sr, reqstate_suite());
	srunner_add_suite(sr, mrtr_suite());
	srunner_add_suite(sr, ext_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
