/* The commands' shared parts: the settings file (BIKAROO_SETTINGS_FILE) and where a secret came
 * from, passwords hidden from a line, the CSV load's checks, the key ring replaced while others
 * seal and open. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/keyring.h"
#include "common/mem.h"
#include "server/cfg.h"
#include "server/cli/cli.h"
#include "server/cli/load.h"
#include "server/protocol/reqstate.h"
#include "tests/check_main.h"

/* A file of text in a fresh temporary folder; its path (new string). */
static char *cli_file(const char *name, const char *text)
{
	char dir[] = "/tmp/test_cli.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *path = mem_printf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* Removes cli_file()'s file and its folder, frees path. */
static void cli_unfile(char *path)
{
	unlink(path);
	*strrchr(path, '/') = '\0';
	rmdir(path);
	free(path);
}

START_TEST(settings_file_wins_over_the_environment)
{
	char *secret = cli_file("secret", "a-state-secret-of-at-least-32-characters\n");
	char *text = mem_printf("# comment\n; comment too\n\n  BIKAROO_PORT = 9001\n"
				"BIKAROO_LOG_LEVEL=\"warn\"\nBIKAROO_LISTEN='::1'\n"
				"BIKAROO_STATE_SECRET_FILE=%s\nPGAPPNAME=left-to-libpq\n"
				"BIKAROO_THREADS=\n",
				secret);
	char *path = cli_file("bikaroo-mcp.env", text);
	setenv("BIKAROO_SETTINGS_FILE", path, 1);
	setenv("BIKAROO_PORT", "8000", 1);
	setenv("BIKAROO_THREADS", "3", 1);
	struct cfg c;
	char *args[] = {"serve", "--listen=127.0.0.2", NULL};
	ck_assert_int_eq(cfg_load(&c, 2, args), CFG_OK);
	ck_assert_int_eq(c.port, 9001);          /* the file over the environment */
	ck_assert_str_eq(c.log_level, "warn");   /* quotes taken off */
	ck_assert_str_eq(c.listen, "127.0.0.2"); /* a flag over the file */
	ck_assert_int_eq(c.threads, 3);          /* NAME= in the file: as in the environment */
	ck_assert_str_eq(c.state_secret, "a-state-secret-of-at-least-32-characters");
	ck_assert_str_eq(cfg_file_of(&c, "BIKAROO_STATE_SECRET"), secret);
	ck_assert_ptr_null(cfg_file_of(&c, "DATABASE_URL"));
	cfg_free(&c);
	unsetenv("BIKAROO_SETTINGS_FILE");
	unsetenv("BIKAROO_PORT");
	unsetenv("BIKAROO_THREADS");
	cli_unfile(path);
	free(text);
	cli_unfile(secret);
}
END_TEST

START_TEST(settings_file_refusals)
{
	static const char *const bad[] = {
		"BIKAROO_PROT=1\n",     /* a typo of ours: refused, not ignored */
		"just words\n",         /* not NAME=value */
		"BIKAROO_PORT=99999\n", /* out of bounds, as from the environment */
		"BIKAROO_STATE_SECRET=x\nBIKAROO_STATE_SECRET_FILE=/etc/hostname\n", /* both */
		"BIKAROO_TOKEN_FILE=/nonexistent/token\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *path = cli_file("bad.env", bad[i]);
		setenv("BIKAROO_SETTINGS_FILE", path, 1);
		struct cfg c;
		char *args[] = {"serve", NULL};
		ck_assert_msg(cfg_load(&c, 1, args) == CFG_INVALID, "accepted: %s", bad[i]);
		cli_unfile(path);
	}
	setenv("BIKAROO_SETTINGS_FILE", "/nonexistent/bikaroo-mcp.env", 1);
	struct cfg c;
	char *args[] = {"serve", NULL};
	enum cfg_status st = cfg_load(&c, 1, args);
	/* Under valgrind the tests share one process (CK_FORK=no): the environment as found. */
	unsetenv("BIKAROO_SETTINGS_FILE");
	ck_assert_int_eq(st, CFG_INVALID);
}
END_TEST

START_TEST(passwords_hidden)
{
	static const char *const cases[][2] = {
		{"postgresql://fleet_app:s3cret@db/bikaroo",
		 "postgresql://fleet_app:***@db/bikaroo"},
		{"postgresql://fleet_app:s3@cr@t@db:5432/bikaroo?sslmode=require",
		 "postgresql://fleet_app:***@db:5432/bikaroo?sslmode=require"},
		{"postgresql://fleet_app@/bikaroo?host=/tmp&password=xyz&port=5",
		 "postgresql://fleet_app@/bikaroo?host=/tmp&password=***&port=5"},
		{"host=db password = 'a b\\' c' dbname=x", "host=db password=*** dbname=x"},
		{"password=abc host=db", "password=*** host=db"},
		{"postgresql://fleet_app@db/bikaroo?user=x",
		 "postgresql://fleet_app@db/bikaroo?user=x"},
		{"host=db user=password dbname=x", "host=db user=password dbname=x"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char out[256];
		cli_hide_password(cases[i][0], out, sizeof out);
		ck_assert_str_eq(out, cases[i][1]);
		ck_assert(cli_has_password(cases[i][0]) == (strcmp(cases[i][0], cases[i][1]) != 0));
	}
	char tiny[8];
	cli_hide_password("postgresql://u:secret@h", tiny, sizeof tiny);
	ck_assert_ptr_null(strstr(tiny, "sec")); /* cut short, never the secret */
}
END_TEST

START_TEST(load_lines_and_refusals)
{
	static const char ok[] = "\xef\xbb\xbfregion,bike_id,status,last_seen_at\r\n\r\n"
				 "DE-BER,\"VL-7001\",available,2026-11-30T08:00:00Z\n"
				 "\"DE-\nBER\",VL-7002,in_use,2026-11-30T09:00:00.5+01:00\n"
				 "DE-BER,VL-7003,in_use,2026-11-30t09:00:00z\n";
	json_t *rows = NULL;
	unsigned long *lines = NULL;
	struct load_error e;
	ck_assert_int_eq(load_rows("bikes", ok, sizeof ok - 1, &rows, &lines, &e), 0);
	ck_assert_uint_eq(json_array_size(rows), 3);
	ck_assert_uint_eq(lines[0], 3); /* the header on 1, a blank line on 2 */
	ck_assert_uint_eq(lines[1], 4);
	ck_assert_uint_eq(lines[2], 6); /* the record before spans two lines */
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(rows, 1), "region")),
			 "DE-\nBER");
	ck_assert_ptr_null(json_object_get(json_array_get(rows, 0), "battery_pct"));
	json_decref(rows);
	free(lines);
	static const struct {
		const char *kind, *text;
		unsigned long line;
		const char *column, *what;
	} bad[] = {
		{"bikes", "bike_id,region\nVL-1,\xff\n", 1, "status",
		 "the header lacks column status"},
		{"regions", "code,name\nDE-BER,\xc3\n", 2, "name", "is not UTF-8 text"},
		{"regions", "code,name,code\n", 1, "code", "the header names code twice"},
		{"regions", "code,name\nDE-BER,\n", 2, "name", "empty, where it must be"},
		{"stations", "station_id,region,name,x\n", 1, "", "not a column of stations"},
		{"bikes",
		 "bike_id,region,status,last_seen_at,battery_pct\nVL-1,R,s,2026-11-30T08:00:00Z,1."
		 "5\n",
		 2, "battery_pct", "\"1.5\" is not a whole number"},
		{"bikes", "bike_id,region,status,last_seen_at\nVL-1,R,s,2026-11-30T08:00:00\n", 2,
		 "last_seen_at", "is not a date and time with its offset"},
		{"regions", "code,name\nA,B\nA,C\n", 3, "code", "code A is on line 2 already"},
		{"regions", "code,name\nA,\"B\n", 3, "", "not CSV"},
		{"regions", "code,name\nA\n", 2, "", "1 fields, the header names 2"},
		{"regions", "", 0, "", "no header line"},
		{"fleets", "code\n", 0, "", "fleets is not regions, stations or bikes"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_int_eq(
			load_rows(bad[i].kind, bad[i].text, strlen(bad[i].text), &rows, &lines, &e),
			-1);
		ck_assert_ptr_null(rows);
		ck_assert_ptr_null(lines);
		ck_assert_msg(e.line == bad[i].line && strcmp(e.column, bad[i].column) == 0 &&
				      strstr(e.what, bad[i].what),
			      "case %zu: line %lu column %s: %s", i, e.line, e.column, e.what);
	}
	static const char nul[] = "code,name\nDE-BER,B\0x\n";
	ck_assert_int_eq(load_rows("regions", nul, sizeof nul - 1, &rows, &lines, &e), -1);
	ck_assert_uint_eq(e.line, 2);
	ck_assert_ptr_nonnull(strstr(e.what, "NUL"));
}
END_TEST

/* The ring replaced again and again (K1, then K2 with K1 accepted, and back) while other threads
 * seal and open: a state always opens with the ring it finds, never half a ring. */
#define K1 "a first state secret of more than thirty-two characters"
#define K2 "a second state secret of more than thirty-two characters"

static atomic_bool cli_stop;

static void *cli_sealer(void *arg)
{
	long *failures = arg;
	const struct fleet_actor marie = {.subject = "marie", .client_id = "app"};
	char d[65];
	json_t *p = json_object();
	reqstate_digest(p, d);
	while (!atomic_load(&cli_stop)) {
		char *s = reqstate_seal(&marie, "tools/call", d, p, 60, NULL);
		json_t *out = NULL;
		if (reqstate_open(s, &marie, "tools/call", d, &out, NULL) != REQSTATE_OK)
			(*failures)++;
		json_decref(out);
		free(s);
	}
	json_decref(p);
	return NULL;
}

START_TEST(key_ring_replaced_under_load)
{
	ck_assert_int_eq(keyring_init(K1, K2), KEYRING_OK);
	pthread_t t[2];
	long failures[2] = {0, 0};
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, cli_sealer, &failures[i]);
	for (int i = 0; i < 2000; i++) /* each ring accepts both keys: every state opens */
		ck_assert_int_eq(i % 2 ? keyring_init(K1, K2) : keyring_init(K2, K1), KEYRING_OK);
	atomic_store(&cli_stop, true);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ck_assert_int_eq(failures[0] + failures[1], 0);
}
END_TEST

CHECK_SUITE(cli)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("core");
	unsetenv("BIKAROO_SETTINGS_FILE");
	tcase_add_test(tc, settings_file_wins_over_the_environment);
	tcase_add_test(tc, settings_file_refusals);
	tcase_add_test(tc, passwords_hidden);
	tcase_add_test(tc, load_lines_and_refusals);
	tcase_add_test(tc, key_ring_replaced_under_load);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
