/* The integration suites, collected by tests/integration/main.c. */
#ifndef BIKAROO_IT_SUITES_H
#define BIKAROO_IT_SUITES_H

#include <check.h>

Suite *protocol_suite(void);
Suite *server_suite(void);
Suite *catalogue_suite(void);
Suite *stdio_suite(void);
Suite *sse_suite(void);
Suite *auth_suite(void);
Suite *report_suite(void);
Suite *listen_suite(void);
Suite *migrate_suite(void);
Suite *functions_suite(void);
Suite *abuse_suite(void);
Suite *hotpath_suite(void);

#endif
