/* The declarations' examples (server/capabilities/NAME.json, "example" of a row, read from the
 * declarations themselves) for the suites that walk every row: where a row is declared, its
 * example's fixture, the call it describes, and servers acting as the callers it names. A
 * failure names the declaration and what to change there. */
#ifndef BIKAROO_IT_EXAMPLES_H
#define BIKAROO_IT_EXAMPLES_H

#include <stdbool.h>
#include <stddef.h>

#include "gen/capabilities.h"
#include "harness.h"

/* A row's example: arguments that succeed for caller, on its fixture rows or the demo data. */
struct capability_example {
	const char *kind;      /* tool, resource, template or prompt */
	const char *name;      /* the tool's or prompt's name, the resource's URI, the template */
	const char *arguments; /* JSON object text (a template's: its variable) */
	const char *subject, *client; /* a caller it allows, for whom the example succeeds */
	/* A caller it allows who sees none of the example's objects (outside their perimeter),
	 * or NULL. */
	const char *outside_subject, *outside_client;
	/* A caller its roles refuse, or NULL (every role may). */
	const char *refused_subject, *refused_client;
	const char *fixture; /* SQL the owner runs first (its own rows), or NULL */
};

/* Every row's example, in the order of the declarations' names and their rows; *n how many.
 * Read once, from server/capabilities/ (the tests run from the repository's root). */
const struct capability_example *ex_all(size_t *n);

/* Where row kind/name (kind: tool, resource, template, prompt) is
 * declared, into buf: "server/capabilities/NAME.json: tools[0]" ("(undeclared tool NAME)" when no
 * capability has it). Returns buf. */
const char *ex_where(const char *kind, const char *name, char *buf, size_t cap);

/* The example of row kind/name, or NULL when its declaration gives none. */
const struct capability_example *ex_find(const char *kind, const char *name);

/* Runs e's fixture (when it has one) as the database owner; fails the test naming the
 * declaration when the SQL fails. */
void ex_fixture(const struct capability_example *e);

/* A call of e's row with arguments args (JSON object text; NULL: e's own), JSON-RPC id `id`, on
 * port: tools/call, resources/read of the template's URI with the argument in its {variable},
 * or prompts/get. */
void ex_call(unsigned port, const struct capability_example *e, const char *args, const char *id,
	     struct it_response *r);

/* What the answer r of e's row says went wrong, into buf: "" when it succeeded (a result, not
 * isError), else the error or the tool's text. Returns buf. */
const char *ex_failure(const struct it_response *r, char *buf, size_t cap);

/* Every scope a row needs (the catalogue's scope names), space-separated, except `without`
 * (NULL: none left out), into buf. Returns buf. */
const char *ex_scopes(const char *without, char *buf, size_t cap);

/* Servers acting as callers, each (subject, client, scopes) started once, on first use. */
#define EX_MAX_SERVERS 24
struct ex_servers {
	size_t n;
	struct {
		char key[384];
		struct it_server s;
	} at[EX_MAX_SERVERS];
};
/* The port of a server acting as subject via client with scopes (space-separated). */
unsigned ex_port(struct ex_servers *p, const char *subject, const char *client, const char *scopes);
/* Stops them all; fails the test when one did not stop cleanly. */
void ex_servers_stop(struct ex_servers *p);

#endif
