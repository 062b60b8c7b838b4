/* The unit suites, collected by tests/unit/main.c. */
#ifndef BIKAROO_UNIT_SUITES_H
#define BIKAROO_UNIT_SUITES_H

#include <check.h>

Suite *b64_suite(void);
Suite *schema_suite(void);
Suite *misc_suite(void);
Suite *prompts_suite(void);
Suite *jwt_suite(void);
Suite *tokcache_suite(void);
Suite *ratelimit_suite(void);
Suite *ops_suite(void);
Suite *jsonw_suite(void);

#endif
