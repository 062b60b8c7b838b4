/* The protocol core's suites, collected by tests/core/main.c. */
#ifndef BIKAROO_CORE_SUITES_H
#define BIKAROO_CORE_SUITES_H

#include <check.h>

Suite *pager_suite(void);
Suite *mcp_suite(void);
Suite *reqstate_suite(void);
Suite *mrtr_suite(void);
Suite *ext_suite(void);

#endif
