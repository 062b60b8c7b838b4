/* Every tools/call and every resources/read of a template leaves exactly one audit row, whatever
 * the outcome: this suite walks the declarations (server/capabilities/NAME.json: each tool and
 * template row, its scope and its audit policy) and calls each row over HTTP as the real server
 * serves it, as the callers its example names (ex_all()): its caller (ok), its
 * outside caller (not_found), a token without the row's scope, an unknown subject and its
 * refused caller (denied), invalid arguments (invalid). Each call's rows are counted by its
 * JSON-RPC id, with their tool (the row's name: the declaration, the domain and the SQL function
 * must agree) and target (the argument the row's audit policy names). The example's fixture
 * creates its rows first. A new row is covered by being declared; a failure names the
 * declaration and what to change there. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mem.h"
#include "examples.h"
#include "harness.h"
#include "tests/check_main.h"

/* The outcomes every row is called for. */
enum audit_case { AC_OK, AC_OUTSIDE, AC_NO_SCOPE, AC_UNKNOWN, AC_REFUSED, AC_INVALID, AC_N };
static const char *const audit_outcome[AC_N] = {"ok",     "not_found", "denied",
						"denied", "denied",    "invalid"};
/* A list shows another caller nothing of the example's objects: its call ends ok (empty). */
#define AUDIT_LIST_OUTCOME "ok"
static const char *const audit_case_name[AC_N] = {"its caller",
						  "its outside caller",
						  "a token without the row's scope",
						  "an unknown subject",
						  "its refused caller (its roles)",
						  "invalid arguments"};
/* What to change in the declaration when a case goes wrong. */
static const char *const audit_fix[AC_N] = {
	"give the example arguments that succeed for its caller, or a fixture that creates its "
	"rows",
	"name as \"outside\" a caller the roles allow whose perimeter holds none of the "
	"example's objects, or leave \"outside\" out",
	"check the row's \"scope\": a token without it must be refused and audited",
	"the example's caller's client must be registered: an unknown subject is refused "
	"through it",
	"name as \"refused\" a caller whose role the declaration's \"roles\" leave out, or "
	"leave \"refused\" out",
	"the row's input schema must refuse an argument it does not declare "
	"(additionalProperties false)"};

/* The caller of case c for example e: subject, client and scopes; false when e names none. */
static bool audit_caller(const struct capability_example *e, enum audit_case c, const char *scope,
			 const char **subject, const char **client, char *scopes, size_t cap)
{
	*subject = e->subject;
	*client = e->client;
	ex_scopes(c == AC_NO_SCOPE ? scope : NULL, scopes, cap);
	if (c == AC_OUTSIDE) {
		*subject = e->outside_subject;
		*client = e->outside_client;
	} else if (c == AC_UNKNOWN) {
		*subject = "audit-nobody";
	} else if (c == AC_REFUSED) {
		*subject = e->refused_subject;
		*client = e->refused_client;
	}
	return *subject != NULL;
}

/* Calls row kind/name (its scope, its audit target argument) once per case, as the callers of
 * its example, and checks each call's audit rows. Returns the number of calls checked. */
static int audit_row(struct ex_servers *servers, const char *kind, const char *name,
		     const char *scope, const char *target_arg, int row)
{
	char where[256], why[512];
	ex_where(kind, name, where, sizeof where);
	const struct capability_example *e = ex_find(kind, name);
	ck_assert_msg(e != NULL,
		      "%s: no \"example\": give the row {\"arguments\": {...}, \"caller\": "
		      "{\"subject\": ..., \"client\": ...}} of a call that succeeds",
		      where);
	ex_fixture(e);
	json_t *example = json_loads(e->arguments, 0, NULL);
	int checked = 0;
	for (int c = 0; c < AC_N; c++) {
		const char *subject, *client;
		char scopes[256];
		if (!audit_caller(e, c, scope, &subject, &client, scopes, sizeof scopes))
			continue;
		/* A template's invalid argument is a URI no read serves: nothing to audit. */
		if (c == AC_INVALID && strcmp(kind, "tool") != 0)
			continue;
		unsigned port = ex_port(servers, subject, client, scopes);
		const char *target =
			c != AC_INVALID && target_arg
				? json_string_value(json_object_get(example, target_arg))
				: NULL;
		char id[96];
		snprintf(id, sizeof id, "audit-%d-%d-%d", (int)getpid(), row, c);
		struct it_response r;
		ex_call(port, e, c == AC_INVALID ? "{\"notAnArgument\":1}" : NULL, id, &r);
		ex_failure(&r, why, sizeof why);
		/* A write its user confirms on the server's side asks first (the calls declare
		 * form elicitation): that first call's row is confirmation_required. */
		const char *rt = json_string_value(
			json_object_get(json_object_get(r.json, "result"), "resultType"));
		const char *outcome = c == AC_OK && rt && strcmp(rt, "input_required") == 0
					      ? "confirmation_required"
					      : audit_outcome[c];
		ck_assert_msg(c != AC_OK || !*why,
			      "%s.example: the call as %s via %s answered %s: %s", where, subject,
			      client, why, audit_fix[c]);
		ck_assert_msg(c == AC_OK || c == AC_OUTSIDE || *why,
			      "%s.example: the call (%s: %s via %s) succeeded: %s", where,
			      audit_case_name[c], subject, client, audit_fix[c]);
		it_response_free(&r);
		char *sql = mem_printf(
			"SELECT count(*) || '|' || coalesce(min(tool), '') || '|' || "
			"coalesce(min(target), '') || '|' || coalesce(min(outcome), '') || '|' "
			"|| count(DISTINCT tool) FROM fleet.audit_log WHERE request_id = '\"%s\"'",
			id);
		char *got = it_sql(sql);
		char *want = mem_printf("1|%s|%s|%s|1", name, target ? target : "", outcome);
		char *list =
			mem_printf("1|%s|%s|%s|1", name, target ? target : "", AUDIT_LIST_OUTCOME);
		bool matches = got && (strcmp(got, want) == 0 ||
				       (c == AC_OUTSIDE && strcmp(got, list) == 0));
		ck_assert_msg(matches,
			      "%s: the call (%s: %s via %s) left the audit rows "
			      "(count|tool|target|outcome|tools) %s, expected %s: %s",
			      where, audit_case_name[c], subject, client,
			      got ? got : "(query failed)", want, audit_fix[c]);
		free(list);
		free(want);
		free(got);
		free(sql);
		checked++;
	}
	json_decref(example);
	return checked;
}

START_TEST(every_row_and_outcome_leaves_exactly_one_audit_row)
{
	static struct ex_servers servers;
	int rows = 0, checked = 0;
	for (size_t c = 0; c < capabilities_count; c++) {
		const struct mcp_capability *cap = capabilities_all[c];
		for (size_t i = 0; i < cap->ntools; i++, rows++)
			checked += audit_row(&servers, "tool", cap->tools[i].name,
					     cap->tools[i].scope_name, cap->tools[i].audit.target,
					     rows);
		for (size_t i = 0; i < cap->ntemplates; i++, rows++)
			checked += audit_row(&servers, "template", cap->templates[i].uri_template,
					     cap->templates[i].scope_name, cap->templates[i].var,
					     rows);
	}
	ck_assert_int_gt(rows, 0);
	/* Every row: its caller, a token without its scope, an unknown subject. */
	ck_assert_int_ge(checked, rows * 3);
	ex_servers_stop(&servers);
}
END_TEST

CHECK_SUITE(audit)
{
	Suite *s = suite_create("audit");
	TCase *tc = tcase_create("one-row-per-call");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, every_row_and_outcome_leaves_exactly_one_audit_row);
	suite_add_tcase(s, tc);
	return s;
}
