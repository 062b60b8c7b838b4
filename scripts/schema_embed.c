/* schema-embed OUT_DIR DECLARATION.json...: the build step that turns the capabilities'
 * declarations (server/capabilities/NAME.json, server/capabilities/README.md says what each
 * field means) into C: OUT_DIR/capabilities.c (every row, its governance, the description of
 * its read or write, its input and output schemas, and the list of all capabilities), its
 * header, gen/capabilities.h, gen/schemas.h (the schemas as strings) and the governance table
 * of docs/capabilities.md (written into OUT_DIR; make docs-tables). Each declaration is checked
 * first: valid JSON (UTF-8, no duplicate keys), only the fields this program knows, names and types
 * it can generate, schemas with only the draft 2020-12 keywords the server's validator implements
 * (server/protocol/schema.c), the example's arguments valid against the input schema. Any problem
 * fails the build, naming the file, where in it, and what to write instead. */
#include <ctype.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "server/protocol/schema.h"

#define GEN_MAX_DECLS 64

static const char *gen_file; /* the declaration being read, for messages */
static int gen_bad;

__attribute__((format(printf, 2, 3))) static void gen_fail(const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: %s: ", gen_file, where);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	gen_bad = 1;
}

/* text as a C string literal (NULL: NULL), octal escapes for anything not plainly printable. */
static void gen_literal(FILE *f, const char *text)
{
	if (!text) {
		fputs("NULL", f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f || *p == '?')
			fprintf(f, "\\%03o", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* Whether s is made of lower case letters, digits and _ (and starts with a letter). */
static bool gen_word(const char *s)
{
	if (!s || !islower((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

/* Whether s is a C identifier. */
static bool gen_ident(const char *s)
{
	if (!s || !(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

/* The fields obj may have (NULL-terminated): any other is an error naming them. */
static void gen_keys(json_t *obj, const char *where, const char *const *known)
{
	const char *k;
	json_t *v;
	json_object_foreach (obj, k, v) {
		bool ok = false;
		for (const char *const *n = known; *n && !ok; n++)
			ok = strcmp(*n, k) == 0;
		if (!ok) {
			char list[512] = "";
			for (const char *const *n = known; *n; n++)
				snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
					 n == known ? "" : ", ", *n);
			gen_fail(where, "unknown field \"%s\" (known: %s)", k, list);
		}
	}
}

static const char *gen_str(json_t *obj, const char *key, const char *where, bool required)
{
	json_t *v = json_object_get(obj, key);
	if (!v && !required)
		return NULL;
	if (!json_is_string(v) || !*json_string_value(v)) {
		gen_fail(where, "\"%s\" must be a non-empty string", key);
		return NULL;
	}
	return json_string_value(v);
}

static bool gen_bool(json_t *obj, const char *key)
{
	return json_is_true(json_object_get(obj, key));
}

/* ---- the columns of a read or write ------------------------------------------------------- */

/* An SQL type a column may have, its JSON form and the JSON Schema type it is shown as. */
static const struct {
	const char *sql, *form, *json;
} gen_types[] = {
	{"text", "DECLARED_STRING", "string"},      {"smallint", "DECLARED_INTEGER", "integer"},
	{"integer", "DECLARED_INTEGER", "integer"}, {"bigint", "DECLARED_INTEGER", "integer"},
	{"boolean", "DECLARED_BOOLEAN", "boolean"}, {"json", "DECLARED_JSON", NULL},
	{"jsonb", "DECLARED_JSON", NULL},
};

static int gen_type(const char *sql)
{
	for (size_t i = 0; sql && i < sizeof gen_types / sizeof gen_types[0]; i++)
		if (strcmp(gen_types[i].sql, sql) == 0)
			return (int)i;
	return -1;
}

/* Checks the columns; emits their field table NAME_fields and, for a read, their column map
 * NAME_columns. */
static void gen_columns(FILE *c, const char *name, json_t *cols, const char *where, bool map)
{
	static const char *const known[] = {"column", "type",     "name", "null",
					    "schema", "withheld", NULL};
	if (!json_is_array(cols) || json_array_size(cols) == 0) {
		gen_fail(where, "\"columns\" must list the function's RETURNS TABLE columns, in "
				"order");
		return;
	}
	size_t i;
	json_t *col;
	json_array_foreach (cols, i, col) {
		char at[160];
		snprintf(at, sizeof at, "%s.columns[%zu]", where, i);
		if (!json_is_object(col)) {
			gen_fail(at, "must be an object {column, type, name, schema}");
			continue;
		}
		gen_keys(col, at, known);
		const char *column = gen_str(col, "column", at, true);
		const char *type = gen_str(col, "type", at, true);
		if (column && !gen_word(column))
			gen_fail(at, "column \"%s\" must be lower case letters, digits and _",
				 column);
		if (type && gen_type(type) < 0)
			gen_fail(
				at,
				"type \"%s\" is not one the server reads (text, smallint, integer, "
				"bigint, boolean, json, jsonb): cast it in the function, e.g. to "
				"text",
				type);
		bool withheld = json_object_get(col, "withheld") != NULL;
		if (withheld) {
			gen_str(col, "withheld", at, true);
			if (json_object_get(col, "name") || json_object_get(col, "schema"))
				gen_fail(at, "a withheld column has no name or schema (it is never "
					     "shown)");
			continue;
		}
		const char *jname = gen_str(col, "name", at, true);
		json_t *schema = json_object_get(col, "schema");
		if (!json_is_object(schema)) {
			gen_fail(at,
				 "\"schema\" must be the JSON Schema of the value shown (or mark "
				 "the column \"withheld\" with the reason)");
			continue;
		}
		int t = gen_type(type);
		const char *st = json_string_value(json_object_get(schema, "type"));
		if (t >= 0 && gen_types[t].json && (!st || strcmp(st, gen_types[t].json) != 0))
			gen_fail(at, "a %s column is shown as \"type\": \"%s\", not %s", type,
				 gen_types[t].json, st ? st : "nothing");
		char msg[256];
		if (!schema_check(schema, msg, sizeof msg))
			gen_fail(at, "schema: %s", msg);
		(void)jname;
	}
	fprintf(c, "static const struct declared_field %s_fields[] = {\n", name);
	json_array_foreach (cols, i, col) {
		int t = gen_type(json_string_value(json_object_get(col, "type")));
		fputs("\t{", c);
		gen_literal(c, json_string_value(json_object_get(col, "column")));
		fputs(", ", c);
		gen_literal(c, json_string_value(json_object_get(col, "name")));
		fprintf(c, ", %s, %s},\n", t >= 0 ? gen_types[t].form : "DECLARED_STRING",
			gen_bool(col, "null") ? "true" : "false");
	}
	fputs("};\n", c);
	if (!map)
		return;
	fprintf(c, "static const struct reads_column %s_columns[] = {\n", name);
	json_array_foreach (cols, i, col) {
		fputs("\t{", c);
		gen_literal(c, json_string_value(json_object_get(col, "column")));
		fprintf(c, ", READS_TEXT_NEW, %zu * sizeof(char *), sizeof(char *)},\n", i);
	}
	fputs("};\n", c);
}

/* Whether cols has a column named column. */
static bool gen_has_column(json_t *cols, const char *column)
{
	size_t i;
	json_t *col;
	json_array_foreach (cols, i, col) {
		const char *n = json_string_value(json_object_get(col, "column"));
		if (n && column && strcmp(n, column) == 0)
			return true;
	}
	return false;
}

/* The output schema a tool lists: the shown columns, each required (null allowed where the
 * column may be null), the object left open (docs/capabilities.md). New reference. */
static json_t *gen_output_schema(json_t *cols)
{
	json_t *props = json_object(), *required = json_array();
	size_t i;
	json_t *col;
	json_array_foreach (cols, i, col) {
		const char *jname = json_string_value(json_object_get(col, "name"));
		json_t *schema = json_object_get(col, "schema");
		if (!jname || !json_is_object(schema))
			continue;
		json_t *s = json_deep_copy(schema);
		json_t *type = json_object_get(s, "type");
		if (gen_bool(col, "null") && json_is_string(type)) {
			/* Re-set in place: "type" keeps its position in the object. */
			json_t *both = json_pack("[O, s]", type, "null");
			json_object_set_new(s, "type", both);
		}
		json_object_set_new(props, jname, s);
		json_array_append_new(required, json_string(jname));
	}
	return json_pack("{s:s, s:o, s:o}", "type", "object", "properties", props, "required",
			 required);
}

/* ---- refusals ----------------------------------------------------------------------------- */

static void gen_refusals(FILE *c, const char *name, json_t *refusals, const char *where,
			 json_t *input)
{
	if (refusals && !json_is_object(refusals)) {
		gen_fail(where, "\"refusals\" must be an object {outcome: text}");
		return;
	}
	const char *k;
	json_t *v;
	json_object_foreach (refusals, k, v) {
		if (!gen_word(k) || !json_is_string(v)) {
			gen_fail(where, "refusal \"%s\": an outcome word and its text", k);
			continue;
		}
		/* Every {name} is an argument of the input, or key or why. */
		for (const char *p = strchr(json_string_value(v), '{'); p; p = strchr(p + 1, '{')) {
			const char *e = strchr(p, '}');
			if (!e)
				break;
			char arg[64];
			snprintf(arg, sizeof arg, "%.*s", (int)(e - p - 1), p + 1);
			json_t *props = json_object_get(input, "properties");
			if (strcmp(arg, "key") != 0 && strcmp(arg, "why") != 0 &&
			    !json_object_get(props, arg))
				gen_fail(where,
					 "refusal \"%s\" names {%s}, which is neither an argument "
					 "of the input nor {key} or {why}",
					 k, arg);
		}
	}
	fprintf(c, "static const struct declared_refusal %s_refusals[] = {\n", name);
	json_object_foreach (refusals, k, v) {
		fputs("\t{", c);
		gen_literal(c, k);
		fputs(", ", c);
		gen_literal(c, json_string_value(v));
		fputs("},\n", c);
	}
	fputs("\t{NULL, NULL},\n};\n", c);
}

/* ---- governance --------------------------------------------------------------------------- */

/* Emits the governance of a row as NAME, and its line of the docs' table. */
static void gen_governance(FILE *c, FILE *md, const char *name, json_t *g, const char *where,
			   const char *kind, const char *row, const char *roles)
{
	static const char *const known[] = {"version",   "risk",   "data",        "systems",
					    "audit",     "owner",  "domain",      "confirmation",
					    "lifecycle", "sunset", "replacement", NULL};
	char at[160];
	snprintf(at, sizeof at, "%s.governance", where);
	if (!json_is_object(g)) {
		gen_fail(at, "every row has a governance record {version, risk, data, systems, "
			     "confirmation, audit}");
		return;
	}
	gen_keys(g, at, known);
	const char *version = gen_str(g, "version", at, true);
	const char *risk = gen_str(g, "risk", at, true);
	unsigned a, b, d;
	char tail;
	if (version && sscanf(version, "%u.%u.%u%c", &a, &b, &d, &tail) != 3)
		gen_fail(at, "version \"%s\" must be semver MAJOR.MINOR.PATCH", version);
	if (risk && strcmp(risk, "none") != 0 && strcmp(risk, "low") != 0 &&
	    strcmp(risk, "high") != 0)
		gen_fail(at, "risk \"%s\" must be none, low or high", risk);
	const char *lifecycle = gen_str(g, "lifecycle", at, false);
	if (!lifecycle)
		lifecycle = "stable";
	const char *owner = gen_str(g, "owner", at, false);
	if (!owner)
		owner = "fleet-operations-platform";
	const char *confirmation = gen_str(g, "confirmation", at, true);
	fprintf(c, "static const struct mcp_governance %s = {\n", name);
	static const char *const fields[] = {"version", "risk",         "data",   "systems",
					     "audit",   "confirmation", "sunset", "replacement"};
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		const char *v = gen_str(g, fields[i], at, i < 6);
		if (v) {
			fprintf(c, "\t.%s = ", fields[i]);
			gen_literal(c, v);
			fputs(",\n", c);
		}
	}
	const char *domain = gen_str(g, "domain", at, false);
	fputs("\t.owner = ", c);
	gen_literal(c, owner);
	fputs(",\n\t.domain = ", c);
	gen_literal(c, domain ? domain : "fleet");
	fputs(",\n\t.lifecycle = ", c);
	gen_literal(c, lifecycle);
	fputs(",\n\t.roles = ", c);
	gen_literal(c, roles);
	fputs(",\n};\n", c);
	char shown[256] = "";
	for (const char *p = roles; p && *p; p++)
		snprintf(shown + strlen(shown), sizeof shown - strlen(shown),
			 *p == ',' ? ", " : "%c", *p);
	char life[256];
	if (strcmp(lifecycle, "deprecated") == 0)
		snprintf(life, sizeof life, "deprecated (sunset %s, use %s)",
			 json_string_value(json_object_get(g, "sunset")),
			 json_string_value(json_object_get(g, "replacement")));
	else
		snprintf(life, sizeof life, "%s", lifecycle);
	fprintf(md, "| %s | `%s` | %s | %s | %s | %s | %s | %s |\n", kind, row,
		version ? version : "", risk ? risk : "", owner, shown,
		confirmation ? confirmation : "", life);
}

/* ---- one declaration ---------------------------------------------------------------------- */

struct gen_decl {
	char name[64];
	int ntools, nresources, ntemplates, nprompts;
	char *roles, *scope, *confirm;
	bool people_only, grant; /* grant: it reads or writes the business */
};

/* The C access fields of a row of d. */
static void gen_access(FILE *c, const struct gen_decl *d)
{
	const char *bit =
		strcmp(d->scope, "fleet:report") == 0 ? "FLEET_SCOPE_REPORT" : "FLEET_SCOPE_READ";
	fprintf(c, "\t.scope = %s,\n\t.scope_name = \"%s\",\n\t.roles = ", bit, d->scope);
	gen_literal(c, d->roles);
	fprintf(c, ",\n\t.people_only = %s,\n", d->people_only ? "true" : "false");
}

/* An ext (a struct mcp_ext_meta of the capabilities' shared code, by name). */
static void gen_ext(FILE *c, FILE *h, json_t *row, const char *where)
{
	const char *ext = gen_str(row, "ext", where, false);
	if (!ext)
		return;
	if (!gen_ident(ext)) {
		gen_fail(where, "ext \"%s\" must name a C struct mcp_ext_meta", ext);
		return;
	}
	fprintf(h, "extern const struct mcp_ext_meta %s;\n", ext);
	fprintf(c, "\t.ext = &%s,\n", ext);
}

/* The prototypes of the handlers a declaration may name, by kind: return type, arguments. */
enum gen_proto { GEN_TOOL, GEN_READ, GEN_COMPLETE, GEN_VALID };
static const char *const gen_protos[][2] = {
	[GEN_TOOL] = {"int", "struct mcp_ctx *, json_t *, json_t **, struct mcp_error *"},
	[GEN_READ] =
		{"enum resource_status",
		 "struct mcp_ctx *, const char *, const char *, json_t **, struct mcp_error *"},
	[GEN_COMPLETE] = {"int",
			  "struct mcp_ctx *, const char *, json_t **, long *, struct mcp_error *"},
	[GEN_VALID] = {"bool", "const char *"},
};

/* A handler the declaration names (NULL: none): its prototype in the header, its name in the
 * row's field (NULL: the header only). */
static void gen_handler(FILE *c, FILE *h, const char *field, const char *fn, enum gen_proto kind)
{
	if (!fn)
		return;
	if (!gen_ident(fn)) {
		gen_fail(field ? field : "handler", "\"%s\" must name a C function", fn);
		return;
	}
	fprintf(h, "%s %s(%s);\n", gen_protos[kind][0], fn, gen_protos[kind][1]);
	if (field)
		fprintf(c, "\t.%s = %s,\n", field, fn);
}

/* The examples, for the tests that walk every capability (gen/capabilities.h). */
static FILE *gen_examples;

/* A caller of an example ({subject, client}), as two C strings of the examples table. */
static void gen_caller(json_t *ex, const char *key, const char *where, bool required)
{
	json_t *who = json_object_get(ex, key);
	static const char *const known[] = {"subject", "client", NULL};
	if (!who && !required) {
		fputs(", NULL, NULL", gen_examples);
		return;
	}
	char at[200];
	snprintf(at, sizeof at, "%s.example.%s", where, key);
	if (!json_is_object(who)) {
		gen_fail(at, "must be {\"subject\": ..., \"client\": ...}");
		return;
	}
	gen_keys(who, at, known);
	fputs(", ", gen_examples);
	gen_literal(gen_examples, gen_str(who, "subject", at, true));
	fputs(", ", gen_examples);
	gen_literal(gen_examples, gen_str(who, "client", at, true));
}

/* The example of a row: arguments that succeed for the caller it names (and the callers it
 * refuses or shows nothing), for the docs and the tests that walk the catalogue; a tool's
 * arguments go into its row (.example) too. */
static void gen_example(FILE *c, json_t *row, const char *where, json_t *input, const char *kind,
			const char *name)
{
	json_t *ex = json_object_get(row, "example");
	if (!ex) {
		if (strcmp(kind, "tool") == 0 || strcmp(kind, "template") == 0)
			gen_fail(where,
				 "\"example\" is missing: the arguments of a call that succeeds "
				 "and the caller it succeeds for ({\"arguments\": {...}, "
				 "\"caller\": {\"subject\": ..., \"client\": ...}})");
		return;
	}
	static const char *const known[] = {"arguments", "caller",  "outside",
					    "refused",   "fixture", NULL};
	gen_keys(ex, where, known);
	json_t *args = json_object_get(ex, "arguments");
	if (!json_is_object(args)) {
		gen_fail(where, "example.arguments must be an object");
		return;
	}
	if (input) {
		struct schema_set *set = schema_set_new();
		char msg[256];
		if (schema_set_add(set, input) == 0 &&
		    !schema_validate(set, input, args, msg, sizeof msg))
			gen_fail(where, "example.arguments do not fit the input schema: %s", msg);
		schema_set_free(set);
	}
	char *text = json_dumps(args, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_SORT_KEYS);
	if (c) {
		fputs("\t.example = ", c);
		gen_literal(c, text);
		fputs(",\n", c);
	}
	fprintf(gen_examples, "\t{\"%s\", ", kind);
	gen_literal(gen_examples, name);
	fputs(", ", gen_examples);
	gen_literal(gen_examples, text);
	gen_caller(ex, "caller", where, true);
	gen_caller(ex, "outside", where, false);
	gen_caller(ex, "refused", where, false);
	fputs(", ", gen_examples);
	gen_literal(gen_examples, gen_str(ex, "fixture", where, false));
	fputs("},\n", gen_examples);
	free(text);
}

static void gen_schema_string(FILE *c, FILE *sh, const char *cname, json_t *schema)
{
	char *text = json_dumps(schema, JSON_COMPACT | JSON_PRESERVE_ORDER);
	fprintf(c, "const char %s[] = ", cname);
	gen_literal(c, text);
	fputs(";\n", c);
	fprintf(sh, "extern const char %s[];\n", cname);
	free(text);
}

/* A tool's or resource's C-safe suffix: its index in the declaration. */
static void gen_rows(FILE *c, FILE *h, FILE *sh, FILE *md, struct gen_decl *d, json_t *decl,
		     bool has_read, bool has_write)
{
	static const char *const tool_keys[] = {
		"name",      "title",       "description", "key",   "input",
		"read_only", "destructive", "idempotent",  "audit", "example",
		"ext",       "handler",     "governance",  "tasks", NULL};
	static const char *const res_keys[] = {
		"uri",      "name",    "title", "description", "mime_type",  "file", "ttl_ms",
		"per_user", "handler", "ext",   "example",     "governance", NULL};
	static const char *const tpl_keys[] = {
		"uri_template", "name",       "title",    "description", "mime_type",
		"ttl_ms",       "per_user",   "complete", "handler",     "ext",
		"example",      "governance", NULL};
	static const char *const prompt_keys[] = {"name",      "title",   "description", "file",
						  "arguments", "example", "governance",  NULL};
	static const char *const arg_keys[] = {"name",    "title", "description",     "required",
					       "max_len", "valid", "invalid_message", "complete",
					       NULL};
	char at[160], gov[200], spec[200];
	size_t i;
	json_t *row;
	/* Each table's rows are written into its array (below, after what they point to): an
	 * array's elements must be constant expressions, which a named const object is not. */
	FILE *body = c, *rows[4];
	char *rbuf[4] = {NULL};
	size_t rlen[4] = {0};
	for (int k = 0; k < 4; k++)
		rows[k] = open_memstream(&rbuf[k], &rlen[k]);
	json_t *tools = json_object_get(decl, "tools");
	json_array_foreach (tools, i, row) {
		snprintf(at, sizeof at, "tools[%zu]", i);
		gen_keys(row, at, tool_keys);
		const char *name = gen_str(row, "name", at, true);
		const char *key = gen_str(row, "key", at, false);
		const char *handler = gen_str(row, "handler", at, false);
		json_t *input = json_object_get(row, "input");
		char msg[256];
		if (!json_is_object(input))
			gen_fail(at, "\"input\" must be the tool's input JSON Schema");
		else if (!schema_check(input, msg, sizeof msg))
			gen_fail(at, "input: %s", msg);
		if (!name || !input)
			continue;
		if (!handler && !has_read && !has_write)
			gen_fail(at,
				 "a tool serves a \"read\" or a \"write\" of its declaration, or "
				 "names its C \"handler\"");
		if (has_read && !handler && json_object_get(json_object_get(decl, "read"), "key") &&
		    (!key || !json_object_get(json_object_get(input, "properties"), key)))
			gen_fail(at, "\"key\" must name the input argument that holds the read's "
				     "key");
		char cname[160];
		snprintf(cname, sizeof cname, "schema_%s_input", name);
		for (char *p = cname; *p; p++)
			if (*p == '-' || *p == '.')
				*p = '_';
		gen_schema_string(c, sh, cname, input);
		json_t *cols = json_object_get(json_object_get(decl, has_read ? "read" : "write"),
					       "columns");
		bool output = (has_read || has_write) && !handler;
		if (output) {
			json_t *out = gen_output_schema(cols);
			snprintf(cname, sizeof cname, "schema_%s_output", name);
			for (char *p = cname; *p; p++)
				if (*p == '-' || *p == '.')
					*p = '_';
			gen_schema_string(c, sh, cname, out);
			json_decref(out);
		}
		snprintf(gov, sizeof gov, "%.63s_tool%zu_governance", d->name, i);
		gen_governance(c, md, gov, json_object_get(row, "governance"), at, "tool", name,
			       d->roles);
		snprintf(spec, sizeof spec, "%.63s_tool%zu_spec", d->name, i);
		if (!handler) {
			fprintf(c, "static const struct declared_row %s = {\n", spec);
			fprintf(c, "\t.%s = &%s_%s,\n\t.key = ", has_read ? "read" : "write",
				d->name, has_read ? "read" : "write");
			gen_literal(c, key);
			fputs(",\n};\n", c);
		}
		c = rows[0];
		fputs("\t{\n\t.name = ", c);
		gen_literal(c, name);
		static const char *const texts[] = {"title", "description"};
		for (size_t t = 0; t < 2; t++) {
			fprintf(c, ",\n\t.%s = ", texts[t]);
			gen_literal(c, gen_str(row, texts[t], at, true));
		}
		fprintf(c, ",\n\t.input_schema = schema_%s_input,\n", name);
		if (output)
			fprintf(c, "\t.output_schema = schema_%s_output,\n", name);
		fprintf(c, "\t.read_only = %s,\n\t.destructive = %s,\n\t.idempotent = %s,\n",
			gen_bool(row, "read_only") ? "true" : "false",
			gen_bool(row, "destructive") ? "true" : "false",
			gen_bool(row, "idempotent") ? "true" : "false");
		gen_access(c, d);
		if (handler)
			gen_handler(c, h, "fn", handler, GEN_TOOL);
		else
			fprintf(c, "\t.fn = declared_tool,\n\t.spec = &%s,\n", spec);
		const char *target = gen_str(json_object_get(row, "audit"), "target", at, false);
		fputs("\t.audit = {.target = ", c);
		gen_literal(c, target);
		fputs(", .self = true},\n", c);
		const char *tasks = gen_str(row, "tasks", at, false);
		if (tasks)
			fprintf(c, "\t.tasks = %s,\n",
				strcmp(tasks, "required") == 0   ? "MCP_TASKS_REQUIRED"
				: strcmp(tasks, "optional") == 0 ? "MCP_TASKS_OPTIONAL"
								 : "MCP_TASKS_NEVER");
		gen_example(c, row, at, input, "tool", name);
		fprintf(c, "\t.governance = &%s,\n", gov);
		gen_ext(c, h, row, at);
		fputs("\t},\n", c);
		c = body;
		d->ntools++;
	}
	json_t *resources = json_object_get(decl, "resources");
	json_array_foreach (resources, i, row) {
		snprintf(at, sizeof at, "resources[%zu]", i);
		gen_keys(row, at, res_keys);
		const char *uri = gen_str(row, "uri", at, true);
		const char *file = gen_str(row, "file", at, false);
		const char *handler = gen_str(row, "handler", at, false);
		if (!uri)
			continue;
		if (!!file + !!handler + has_read != 1)
			gen_fail(at, "a resource is a \"file\" shipped with the server, the "
				     "declaration's \"read\", or a C \"handler\": exactly one");
		snprintf(gov, sizeof gov, "%.63s_resource%zu_governance", d->name, i);
		gen_governance(c, md, gov, json_object_get(row, "governance"), at, "resource", uri,
			       d->roles);
		gen_example(NULL, row, at, NULL, "resource", uri);
		snprintf(spec, sizeof spec, "%.63s_resource%zu_spec", d->name, i);
		json_t *ttl = json_object_get(row, "ttl_ms");
		if (has_read && !file && !handler) {
			fprintf(c,
				"static const struct declared_row %s = {\n\t.read = &%s_read,\n"
				"\t.mime_type = ",
				spec, d->name);
			gen_literal(c, gen_str(row, "mime_type", at, true));
			fprintf(c, ",\n\t.ttl_ms = %lld,\n\t.per_user = %s,\n};\n",
				(long long)json_integer_value(ttl),
				gen_bool(row, "per_user") ? "true" : "false");
		}
		c = rows[1];
		fputs("\t{\n\t.uri = ", c);
		gen_literal(c, uri);
		static const char *const texts[] = {"name", "title", "description", "mime_type"};
		for (size_t t = 0; t < 4; t++) {
			fprintf(c, ",\n\t.%s = ", texts[t]);
			gen_literal(c, gen_str(row, texts[t], at, true));
		}
		fputs(",\n", c);
		if (file) {
			fputs("\t.file = ", c);
			gen_literal(c, file);
			fputs(",\n", c);
		} else if (handler) {
			gen_handler(c, h, "read", handler, GEN_READ);
		} else {
			fprintf(c, "\t.read = declared_resource,\n\t.spec = &%s,\n", spec);
		}
		fprintf(c, "\t.ttl_ms = %lld,\n\t.private_scope = %s,\n",
			(long long)json_integer_value(ttl),
			gen_bool(row, "per_user") ? "true" : "false");
		gen_access(c, d);
		fprintf(c, "\t.governance = &%s,\n", gov);
		gen_ext(c, h, row, at);
		fputs("\t},\n", c);
		c = body;
		d->nresources++;
	}
	json_t *templates = json_object_get(decl, "templates");
	json_array_foreach (templates, i, row) {
		snprintf(at, sizeof at, "templates[%zu]", i);
		gen_keys(row, at, tpl_keys);
		const char *tpl = gen_str(row, "uri_template", at, true);
		const char *handler = gen_str(row, "handler", at, false);
		const char *open = tpl ? strchr(tpl, '{') : NULL;
		const char *close = open ? strchr(open, '}') : NULL;
		if (!tpl || !open || !close || strchr(close + 1, '{') || close == open + 1) {
			gen_fail(at,
				 "uri_template must hold exactly one {variable} (RFC 6570 level "
				 "1)");
			continue;
		}
		if (!handler && !has_read)
			gen_fail(at, "a template serves the declaration's \"read\" (with a key) or "
				     "names its C \"handler\"");
		char prefix[256], var[64];
		snprintf(prefix, sizeof prefix, "%.*s", (int)(open - tpl), tpl);
		snprintf(var, sizeof var, "%.*s", (int)(close - open - 1), open + 1);
		snprintf(gov, sizeof gov, "%.63s_template%zu_governance", d->name, i);
		gen_governance(c, md, gov, json_object_get(row, "governance"), at, "template", tpl,
			       d->roles);
		gen_example(NULL, row, at, NULL, "template", tpl);
		snprintf(spec, sizeof spec, "%.63s_template%zu_spec", d->name, i);
		json_t *ttl = json_object_get(row, "ttl_ms");
		if (!handler) {
			fprintf(c,
				"static const struct declared_row %s = {\n\t.read = &%s_read,\n"
				"\t.key = \"%s\",\n\t.mime_type = ",
				spec, d->name, var);
			gen_literal(c, gen_str(row, "mime_type", at, true));
			fprintf(c, ",\n\t.ttl_ms = %lld,\n\t.per_user = %s,\n};\n",
				(long long)json_integer_value(ttl),
				gen_bool(row, "per_user") ? "true" : "false");
		}
		c = rows[2];
		fputs("\t{\n", c);
		fputs("\t.uri_template = ", c);
		gen_literal(c, tpl);
		static const char *const texts[] = {"name", "title", "description", "mime_type"};
		for (size_t t = 0; t < 4; t++) {
			fprintf(c, ",\n\t.%s = ", texts[t]);
			gen_literal(c, gen_str(row, texts[t], at, true));
		}
		fputs(",\n\t.prefix = ", c);
		gen_literal(c, prefix);
		fprintf(c, ",\n\t.var = \"%s\",\n\t.suffix = ", var);
		gen_literal(c, close + 1);
		fputs(",\n", c);
		if (handler)
			gen_handler(c, h, "read", handler, GEN_READ);
		else
			fprintf(c, "\t.read = declared_resource,\n\t.spec = &%s,\n", spec);
		gen_handler(c, h, "complete", gen_str(row, "complete", at, false), GEN_COMPLETE);
		gen_access(c, d);
		fprintf(c, "\t.governance = &%s,\n", gov);
		gen_ext(c, h, row, at);
		fputs("\t},\n", c);
		c = body;
		d->ntemplates++;
	}
	json_t *prompts = json_object_get(decl, "prompts");
	json_array_foreach (prompts, i, row) {
		snprintf(at, sizeof at, "prompts[%zu]", i);
		gen_keys(row, at, prompt_keys);
		const char *name = gen_str(row, "name", at, true);
		if (!name)
			continue;
		snprintf(gov, sizeof gov, "%.63s_prompt%zu_governance", d->name, i);
		gen_governance(c, md, gov, json_object_get(row, "governance"), at, "prompt", name,
			       d->roles);
		gen_example(NULL, row, at, NULL, "prompt", name);
		c = rows[3];
		fputs("\t{\n\t.name = ", c);
		gen_literal(c, name);
		static const char *const texts[] = {"title", "description", "file"};
		for (size_t t = 0; t < 3; t++) {
			fprintf(c, ",\n\t.%s = ", texts[t]);
			gen_literal(c, gen_str(row, texts[t], at, true));
		}
		json_t *args = json_object_get(row, "arguments");
		fprintf(c, ",\n\t.nargs = %zu,\n\t.args = {\n", json_array_size(args));
		if (json_array_size(args) > 4)
			gen_fail(at, "a prompt has at most 4 arguments (PROMPTS_MAX_ARGS)");
		size_t j;
		json_t *arg;
		json_array_foreach (args, j, arg) {
			char aat[200];
			snprintf(aat, sizeof aat, "%s.arguments[%zu]", at, j);
			gen_keys(arg, aat, arg_keys);
			fputs("\t\t{\n\t\t\t.name = ", c);
			gen_literal(c, gen_str(arg, "name", aat, true));
			fputs(",\n\t\t\t.title = ", c);
			gen_literal(c, gen_str(arg, "title", aat, true));
			fputs(",\n\t\t\t.description = ", c);
			gen_literal(c, gen_str(arg, "description", aat, true));
			json_t *max = json_object_get(arg, "max_len");
			if (!json_is_integer(max) || json_integer_value(max) < 1)
				gen_fail(aat, "max_len: the most characters it takes (a number)");
			fprintf(c, ",\n\t\t\t.required = %s,\n\t\t\t.max_len = %lld,\n",
				gen_bool(arg, "required") ? "true" : "false",
				(long long)json_integer_value(max));
			const char *valid = gen_str(arg, "valid", aat, false);
			if (valid) {
				gen_handler(c, h, NULL, valid, GEN_VALID);
				fprintf(c, "\t\t\t.valid = %s,\n\t\t\t.invalid_message = ", valid);
				gen_literal(c, gen_str(arg, "invalid_message", aat, true));
				fputs(",\n", c);
			}
			const char *complete = gen_str(arg, "complete", aat, false);
			if (complete) {
				gen_handler(c, h, NULL, complete, GEN_COMPLETE);
				fprintf(c, "\t\t\t.complete = %s,\n", complete);
			}
			fputs("\t\t},\n", c);
		}
		fputs("\t},\n", c);
		gen_access(c, d);
		fprintf(c, "\t.governance = &%s,\n\t},\n", gov);
		c = body;
		d->nprompts++;
	}
	static const char *const types[] = {"tool_desc", "resource_desc", "resource_template_desc",
					    "prompt_desc"};
	static const char *const tables[] = {"tools", "resources", "templates", "prompts"};
	for (int k = 0; k < 4; k++) {
		fclose(rows[k]);
		if (rlen[k])
			fprintf(c, "static const struct %s %s_%s[] = {\n%s};\n", types[k], d->name,
				tables[k], rbuf[k]);
		free(rbuf[k]);
	}
}

/* The read or write of a declaration. */
static void gen_business(FILE *c, struct gen_decl *d, json_t *decl, json_t *input)
{
	static const char *const read_keys[] = {"function", "key",     "region",   "returns",
						"list",     "columns", "refusals", NULL};
	static const char *const write_keys[] = {
		"function", "columns", "action", "confirmation", "idempotency", "refusals", NULL};
	json_t *read = json_object_get(decl, "read"), *write = json_object_get(decl, "write");
	char name[96];
	if (read) {
		gen_keys(read, "read", read_keys);
		const char *fn = gen_str(read, "function", "read", true);
		size_t n = strlen(fn ? fn : "");
		if (fn && (strncmp(fn, "fleet.", 6) != 0 || !gen_word(fn + 6) || n < 11 ||
			   strcmp(fn + n - 4, "_for") != 0))
			gen_fail("read", "function \"%s\" must be fleet.NAME_for (lower case)", fn);
		json_t *cols = json_object_get(read, "columns");
		snprintf(name, sizeof name, "%.63s_read", d->name);
		gen_columns(c, name, cols, "read", true);
		const char *key = gen_str(read, "key", "read", false);
		const char *region = gen_str(read, "region", "read", false);
		if (key && !gen_has_column(cols, key))
			gen_fail("read", "key \"%s\" is not one of its columns", key);
		if (region && !gen_has_column(cols, region))
			gen_fail("read", "region \"%s\" is not one of its columns", region);
		const char *returns = gen_str(read, "returns", "read", true);
		bool list = returns && strcmp(returns, "list") == 0;
		if (returns && !list && strcmp(returns, "one") != 0)
			gen_fail("read", "returns is \"one\" (an object) or \"list\" (rows)");
		const char *wrap = gen_str(read, "list", "read", list);
		gen_refusals(c, name, json_object_get(read, "refusals"), "read", input);
		fprintf(c, "static const struct declared_read %s = {\n\t.query = {\n", name);
		fputs("\t\t.function = ", c);
		gen_literal(c, fn);
		fprintf(c, ",\n\t\t.columns = %s_columns,\n\t\t.ncolumns = %zu,\n", name,
			json_array_size(cols));
		fputs("\t\t.key_column = ", c);
		gen_literal(c, key);
		fputs(",\n\t\t.region_column = ", c);
		gen_literal(c, region);
		fprintf(c, ",\n\t\t.row_size = %zu * sizeof(char *),\n\t\t.roles = ",
			json_array_size(cols));
		gen_literal(c, d->roles);
		fprintf(c, ",\n\t\t.capability = \"%s\",\n\t\t.list = %s,\n\t},\n", d->name,
			list ? "true" : "false");
		fprintf(c, "\t.fields = %s_fields,\n\t.list = ", name);
		gen_literal(c, wrap);
		fprintf(c, ",\n\t.refusals = %s_refusals,\n\t.nrefusals = %zu,\n};\n", name,
			json_object_size(json_object_get(read, "refusals")));
		d->grant = true;
	}
	if (write) {
		gen_keys(write, "write", write_keys);
		const char *fn = gen_str(write, "function", "write", true);
		size_t n = strlen(fn ? fn : "");
		if (fn && (strncmp(fn, "fleet.", 6) != 0 || !gen_word(fn + 6) || n < 10 ||
			   strcmp(fn + n - 3, "_as") != 0))
			gen_fail("write", "function \"%s\" must be fleet.NAME_as (lower case)", fn);
		json_t *cols = json_object_get(write, "columns");
		snprintf(name, sizeof name, "%.63s_write", d->name);
		gen_columns(c, name, cols, "write", false);
		json_t *conf = json_object_get(write, "confirmation");
		static const char *const conf_keys[] = {"policy", "title", "description", NULL};
		gen_keys(conf, "write.confirmation", conf_keys);
		const char *policy = gen_str(conf, "policy", "write.confirmation", true);
		if (policy && strcmp(policy, "never") != 0 && strcmp(policy, "always") != 0 &&
		    strcmp(policy, "client") != 0 && strcmp(policy, "condition") != 0)
			gen_fail("write.confirmation",
				 "policy \"%s\" must be never, always, client (the client "
				 "application's requires_confirmation) or condition (the function "
				 "says when)",
				 policy);
		bool asks = policy && strcmp(policy, "never") != 0;
		const char *title = gen_str(conf, "title", "write.confirmation", asks);
		const char *desc = gen_str(conf, "description", "write.confirmation", asks);
		free(d->confirm);
		d->confirm = mem_strdup(policy ? policy : "never");
		json_t *idem = json_object_get(write, "idempotency");
		const char *karg =
			idem ? gen_str(idem, "argument", "write.idempotency", true) : NULL;
		if (karg && !json_object_get(json_object_get(input, "properties"), karg))
			gen_fail("write.idempotency",
				 "argument \"%s\" is not an argument of the tool's input", karg);
		gen_refusals(c, name, json_object_get(write, "refusals"), "write", input);
		fprintf(c, "static const struct declared_write %s = {\n\t.query = {\n", name);
		fputs("\t\t.capability = ", c);
		gen_literal(c, d->name);
		fputs(",\n\t\t.function = ", c);
		gen_literal(c, fn);
		fprintf(c, ",\n\t\t.scope = %s,\n\t\t.roles = ",
			strcmp(d->scope, "fleet:report") == 0 ? "FLEET_SCOPE_REPORT"
							      : "FLEET_SCOPE_READ");
		gen_literal(c, d->roles);
		fprintf(c, ",\n\t\t.people_only = %s,\n\t},\n", d->people_only ? "true" : "false");
		fprintf(c, "\t.fields = %s_fields,\n\t.nfields = %zu,\n\t.action = ", name,
			json_array_size(cols));
		gen_literal(c, gen_str(write, "action", "write", true));
		fputs(",\n\t.confirm_title = ", c);
		gen_literal(c, asks ? title : NULL);
		fputs(",\n\t.confirm_description = ", c);
		gen_literal(c, asks ? desc : NULL);
		fputs(",\n\t.key_argument = ", c);
		gen_literal(c, karg);
		fprintf(c, ",\n\t.refusals = %s_refusals,\n\t.nrefusals = %zu,\n", name,
			json_object_size(json_object_get(write, "refusals")));
		fputs("};\n", c);
		d->grant = true;
	}
}

static void gen_decl(FILE *c, FILE *h, FILE *sh, FILE *md, const char *path, struct gen_decl *d)
{
	static const char *const known[] = {"summary",   "roles",   "scope", "people_only",
					    "read",      "write",   "tools", "resources",
					    "templates", "prompts", NULL};
	gen_file = path;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	if (n <= 5 || n - 5 >= sizeof d->name || strcmp(base + n - 5, ".json") != 0) {
		gen_fail("name", "a declaration is server/capabilities/NAME.json");
		return;
	}
	snprintf(d->name, sizeof d->name, "%.*s", (int)(n - 5), base);
	if (!gen_word(d->name)) {
		gen_fail("name", "NAME must be lower case letters, digits and _ (it names the "
				 "capability in fleet.capabilities)");
		return;
	}
	json_error_t e;
	json_t *decl = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
	if (!decl) {
		gen_fail("JSON", "line %d, column %d: %s", e.line, e.column, e.text);
		return;
	}
	gen_keys(decl, "top level", known);
	gen_str(decl, "summary", "top level", true);
	json_t *roles = json_object_get(decl, "roles");
	char list[256] = "";
	size_t i;
	json_t *r;
	if (!json_is_array(roles) || json_array_size(roles) == 0)
		gen_fail("roles", "list the roles that may see and use it, e.g. [\"viewer\", "
				  "\"customer_care\", \"fleet_operator\"]");
	json_array_foreach (roles, i, r) {
		if (!gen_word(json_string_value(r)))
			gen_fail("roles",
				 "a role is a lower case word, as in fleet.principals.role");
		else
			snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
				 i ? "," : "", json_string_value(r));
	}
	d->roles = mem_strdup(list);
	const char *scope = gen_str(decl, "scope", "top level", true);
	if (scope && strcmp(scope, "fleet:read") != 0 && strcmp(scope, "fleet:report") != 0)
		gen_fail("scope",
			 "\"%s\" is not a scope a token carries (fleet:read, fleet:report; "
			 "server/auth/scopes.c)",
			 scope);
	d->scope = mem_strdup(scope ? scope : "fleet:read");
	d->people_only = gen_bool(decl, "people_only");
	d->confirm = mem_strdup("never");
	if (json_object_get(decl, "read") && json_object_get(decl, "write"))
		gen_fail("top level", "a declaration has a read or a write, not both: split it");
	/* The input a refusal may name: the first tool's. */
	json_t *input = json_object_get(json_array_get(json_object_get(decl, "tools"), 0), "input");
	fprintf(c, "\n/* ---- %s ---- */\n", base);
	if (!gen_bad)
		gen_business(c, d, decl, input);
	if (!gen_bad)
		gen_rows(c, h, sh, md, d, decl, json_object_get(decl, "read") != NULL,
			 json_object_get(decl, "write") != NULL);
	static const char *const tables[] = {"tools", "resources", "templates", "prompts"};
	int counts[] = {d->ntools, d->nresources, d->ntemplates, d->nprompts};
	fprintf(c, "const struct mcp_capability capability_%s = {\n\t.name = \"%s\",\n", d->name,
		d->name);
	for (int k = 0; k < 4; k++)
		if (counts[k])
			fprintf(c, "\t.%s = %s_%s,\n\t.n%s = %d,\n", tables[k], d->name, tables[k],
				tables[k], counts[k]);
	fputs("};\n", c);
	json_decref(decl);
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc - 2 > GEN_MAX_DECLS) {
		fprintf(stderr, "usage: schema-embed OUT_DIR DECLARATION.json... (at most %d)\n",
			GEN_MAX_DECLS);
		return 2;
	}
	mem_install_jansson();
	const char *dir = argv[1];
	char path[4][512];
	static const char *const names[] = {"capabilities.c", "capabilities.h", "schemas.h",
					    "capabilities.md"};
	FILE *f[4];
	for (int i = 0; i < 4; i++) {
		snprintf(path[i], sizeof path[i], "%s/%s", dir, names[i]);
		f[i] = fopen(path[i], "w");
		if (!f[i]) {
			perror(path[i]);
			return 1;
		}
	}
	FILE *c = f[0], *h = f[1], *sh = f[2], *md = f[3];
	fputs("/* Generated by scripts/schema_embed.c from server/capabilities/NAME.json: do not "
	      "edit. */\n#include \"gen/capabilities.h\"\n#include \"gen/schemas.h\"\n"
	      "#include \"server/capabilities/declared.h\"\n",
	      c);
	fputs("/* Generated by scripts/schema_embed.c: every capability (server/capabilities/NAME"
	      ".json), the handlers they name, and the rows migrate keeps in fleet.capabilities."
	      " */\n#ifndef BIKAROO_GEN_CAPABILITIES_H\n#define BIKAROO_GEN_CAPABILITIES_H\n"
	      "#include \"domain/pg/migrate.h\"\n#include \"server/capabilities/declared.h\"\n\n",
	      h);
	fputs("/* Generated by scripts/schema_embed.c: the tools' input and output schemas "
	      "(server/capabilities/NAME.json). */\n#ifndef BIKAROO_GEN_SCHEMAS_H\n"
	      "#define BIKAROO_GEN_SCHEMAS_H\n",
	      sh);
	fputs("| kind | name | version | risk | owner | roles | confirmation | lifecycle |\n"
	      "|---|---|---|---|---|---|---|---|\n",
	      md);
	static struct gen_decl decls[GEN_MAX_DECLS];
	char *examples = NULL;
	size_t examples_len = 0;
	gen_examples = open_memstream(&examples, &examples_len);
	int n = argc - 2;
	for (int i = 0; i < n; i++)
		gen_decl(c, h, sh, md, argv[i + 2], &decls[i]);
	fprintf(c, "\nconst struct mcp_capability *const capabilities_all[] = {\n");
	for (int i = 0; i < n; i++)
		fprintf(c, "\t&capability_%s,\n", decls[i].name);
	fprintf(c, "};\nconst size_t capabilities_count = %d;\n", n);
	fclose(gen_examples);
	fprintf(c,
		"\nconst struct capability_example capability_examples[] = {\n%s};\n"
		"const size_t capability_nexamples = sizeof capability_examples / "
		"sizeof capability_examples[0];\n",
		examples);
	free(examples);
	fprintf(c, "\nconst struct migrate_capability migrate_capabilities[] = {\n");
	int grants = 0;
	for (int i = 0; i < n; i++) {
		if (!decls[i].grant)
			continue;
		fprintf(c,
			"\t{.name = \"%s\", .roles = \"%s\", .scope = \"%s\", .people_only = %s, "
			".confirmation = \"%s\"},\n",
			decls[i].name, decls[i].roles, decls[i].scope,
			decls[i].people_only ? "true" : "false", decls[i].confirm);
		grants++;
	}
	fprintf(c, "};\nconst size_t migrate_capabilities_count = %d;\n", grants);
	fputs("\n/* Every capability, in the order of their files' names (the lists' order). */\n"
	      "extern const struct mcp_capability *const capabilities_all[];\n"
	      "extern const size_t capabilities_count;\n"
	      "/* Every row's example, for the tests that walk them all. */\n"
	      "extern const struct capability_example capability_examples[];\n"
	      "extern const size_t capability_nexamples;\n"
	      "/* What migrate keeps in fleet.capabilities, the capabilities with a read or a "
	      "write:\n * migrate_capabilities[], declared in domain/pg/migrate.h. */\n#endif\n",
	      h);
	fputs("#endif\n", sh);
	for (int i = 0; i < n; i++) {
		free(decls[i].roles);
		free(decls[i].scope);
		free(decls[i].confirm);
	}
	int rc = 0;
	for (int i = 0; i < 4; i++)
		rc |= fclose(f[i]) != 0;
	if (rc || gen_bad) {
		if (gen_bad)
			fprintf(stderr, "schema-embed: fix the declarations above "
					"(server/capabilities/README.md says what each field "
					"holds)\n");
		for (int i = 0; i < 4; i++)
			remove(path[i]);
		return 1;
	}
	return 0;
}
