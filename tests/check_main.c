/* The main of every Check test program. `PROGRAM` runs every suite; `PROGRAM NAME` or
 * SUITE=NAME (or Check's own CK_RUN_SUITE=NAME) runs one; `PROGRAM --list` prints the names. A
 * name that is no suite of the program fails with the list, instead of running nothing. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/mem.h"
#include "tests/check_main.h"

static void check_list(FILE *out)
{
	for (const struct check_suite *s = check_suites; s->name; s++)
		fprintf(out, "%s\n", s->name);
}

void check_aborts(void (*breach)(void), const char *what)
{
	int out[2];
	ck_assert_int_eq(pipe(out), 0);
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(out[1], STDERR_FILENO);
		close(out[0]);
		breach();
		_exit(0); /* a breach that returns did not abort */
	}
	close(out[1]);
	char said[4096];
	size_t n = 0;
	ssize_t got;
	while (n + 1 < sizeof said && (got = read(out[0], said + n, sizeof said - 1 - n)) > 0)
		n += (size_t)got;
	said[n] = '\0';
	close(out[0]);
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
		      "the breach did not abort (status %d); it said: %s", status, said);
	ck_assert_msg(strstr(said, what), "the abort did not say \"%s\"; it said: %s", what, said);
}

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : getenv("SUITE");
	if (!only || !*only)
		only = getenv("CK_RUN_SUITE");
	if (only && strcmp(only, "--list") == 0) {
		check_list(stdout);
		return EXIT_SUCCESS;
	}
	if (only && !*only)
		only = NULL;
	SRunner *sr = NULL;
	for (const struct check_suite *s = check_suites; s->name; s++) {
		if (only && strcmp(only, s->name) != 0)
			continue;
		if (!sr)
			sr = srunner_create(s->make());
		else
			srunner_add_suite(sr, s->make());
	}
	if (!sr) {
		fprintf(stderr, "%s: no suite named '%s'; the suites are:\n", argv[0],
			only ? only : "");
		check_list(stderr);
		return 2;
	}
	/* The selection is made above: Check must not filter the runner again. */
	unsetenv("CK_RUN_SUITE");
	mem_install_jansson();
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
