/* The shared main of the Check test programs (unit, core, integration): the program's suites,
 * listed by scripts/check-suites.sh from the `Suite *NAME_suite(void)` functions its files
 * define. */
#ifndef BIKAROO_CHECK_MAIN_H
#define BIKAROO_CHECK_MAIN_H

#include <check.h>

struct check_suite {
	const char *name; /* NAME, also the name the suite gives suite_create() */
	Suite *(*make)(void);
};

/* Defines the suite NAME of a test file: `CHECK_SUITE(name) { ... return s; }`. Defining it is
 * all it takes for the program to run it. */
#define CHECK_SUITE(name)                                                                          \
	Suite *name##_suite(void);                                                                 \
	Suite *name##_suite(void)

/* Ends with {NULL, NULL}. */
extern const struct check_suite check_suites[];

/* Fails the test unless breach() aborts its process (SIGABRT) with a line on stderr that says
 * what: the test of a rule that is a check. breach() runs in a child of its own, forked here,
 * so that the rest of the program goes on whether Check forks or not (CK_FORK=no under
 * valgrind). */
void check_aborts(void (*breach)(void), const char *what);

#endif
