/* capgen OUT_DIR SCHEMA DECLARATION...: the build step that turns the capabilities' declarations
 * (server/capabilities/NAME.json) into the C the server runs. Each is validated against SCHEMA
 * (server/capabilities/declaration.schema.json, the format's one description) by the server's
 * own validator (server/protocol/schema.c); what one field says of another is checked here (a
 * key that is a column, an example that fits its input, a schema the validator implements).
 * A problem fails the build, naming the file, the place and what to write. Written into OUT_DIR
 * (build/gen): gen/capabilities.c (the rows with their schemas and governance, the reads and
 * writes the generic handlers serve, the list of every capability, the rows migrate keeps in
 * fleet.capabilities) and gen/capabilities.h (the list, and the C names the declarations give). One
 * emitter per kind of row (tool, resource, template, prompt) and per business part (read, write).
 */
#include <ctype.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "server/protocol/schema.h"

#define GEN_MAX_DECLS 64
/* The schema validated the types: a member is of its type, or absent. */
#define GEN_S(o, k) json_string_value(json_object_get(o, k))
#define GEN_B(o, k) (json_is_true(json_object_get(o, k)) ? "true" : "false")
#define GEN_OR(a, b) ((a) ? (a) : (b))
#define GEN_WORD "abcdefghijklmnopqrstuvwxyz0123456789_"
#define GEN_SCOPE(d)                                                                               \
	(strcmp((d)->scope, "fleet:report") ? "FLEET_SCOPE_READ" : "FLEET_SCOPE_REPORT")

/* The outputs, the declaration being read, and the literals being written. */
static struct {
	FILE *c, *h, *caps; /* gen/capabilities.c and .h; migrate_capabilities[] (in memory) */
	int ncaps, bad;
	const char *file;
	json_t *schema;  /* the declarations' own (declaration.schema.json) */
	char *lits[256]; /* gen_lit's last ones */
	size_t nlits;
} gen;

__attribute__((format(printf, 2, 3))) static void gen_fail(const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: %s%s", gen.file, where, *where ? ": " : "");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	gen.bad = 1;
}

/* text as a C string literal (NULL: NULL), octal escapes for anything not plainly printable
 * ('?' too: no trigraph); valid for the next 255 calls. */
static const char *gen_lit(const char *text)
{
	if (!text)
		return "NULL";
	char *buf = NULL, **slot = &gen.lits[gen.nlits++ % 256];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
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
	fclose(f);
	free(*slot);
	return *slot = buf;
}

/* The members of row named in keys (NULL-terminated) as the C fields of the same names. */
static void gen_members(FILE *c, json_t *row, const char *const *keys)
{
	for (; *keys; keys++) {
		json_t *v = json_object_get(row, *keys);
		if (json_is_string(v))
			fprintf(c, "\t.%s = %s,\n", *keys, gen_lit(json_string_value(v)));
		else if (json_is_boolean(v))
			fprintf(c, "\t.%s = %s,\n", *keys, json_is_true(v) ? "true" : "false");
		else if (json_is_integer(v))
			fprintf(c, "\t.%s = %lld,\n", *keys, (long long)json_integer_value(v));
	}
}

/* The JSON text of schema as the string schema_NAME_WHAT of gen/capabilities.c. */
static void gen_schema_string(const char *name, const char *what, json_t *schema)
{
	char *text = json_dumps(schema, JSON_COMPACT | JSON_PRESERVE_ORDER);
	fprintf(gen.c, "static const char schema_%s_%s[] = %s;\n", name, what, gen_lit(text));
	free(text);
}

/* A C name a declaration gives (a handler, a completer, a check, an ext), declared in the header
 * as its kind is (its own file defines it). */
enum gen_c { GEN_TOOL_FN, GEN_READ_FN, GEN_COMPLETE_FN, GEN_VALID_FN, GEN_EXT };
static void gen_c_name(const char *name, enum gen_c kind)
{
	static const char *const protos[][2] = {
		[GEN_TOOL_FN] = {"int ",
				 "(struct mcp_ctx *, json_t *, json_t **, struct mcp_error *)"},
		[GEN_READ_FN] = {"enum resource_status ",
				 "(struct mcp_ctx *, const char *, const char *, json_t **, "
				 "struct mcp_error *)"},
		[GEN_COMPLETE_FN] = {"int ", "(struct mcp_ctx *, const char *, json_t **, long *, "
					     "struct mcp_error *)"},
		[GEN_VALID_FN] = {"bool ", "(const char *)"},
		[GEN_EXT] = {"extern const struct mcp_ext_meta ", ""},
	};
	if (name)
		fprintf(gen.h, "%s%s%s;\n", protos[kind][0], name, protos[kind][1]);
}

/* ---- one declaration ---------------------------------------------------------------------- */

enum { GEN_TOOL, GEN_RESOURCE, GEN_TEMPLATE, GEN_PROMPT, GEN_KINDS };
static const char *const gen_kinds[GEN_KINDS] = {"tool", "resource", "template", "prompt"};
static const char *const gen_tables[GEN_KINDS] = {"tools", "resources", "templates", "prompts"};

struct gen_decl {
	char name[64], roles[256];
	json_t *decl, *read, *write;
	json_t *input; /* the first tool's input: what a read's refusals may name */
	const char *scope;
	bool people_only, shared; /* shared: a row uses the declaration's roles */
	int counts[GEN_KINDS];
	FILE *rows[GEN_KINDS]; /* each kind's rows, written into its table after what they name */
	char *rbuf[GEN_KINDS];
	size_t rlen[GEN_KINDS];
};

/* A row's roles, "a,b,c": a tool's own into out, else the declaration's; with no row, the
 * declaration's own into out (d->roles). */
static const char *gen_roles(struct gen_decl *d, json_t *row, char *out, size_t cap)
{
	json_t *own = json_object_get(row, "roles"), *r;
	size_t i, n = 0;
	if (!own && row && !*d->roles)
		gen_fail("roles", "a row without roles of its own needs the declaration's");
	d->shared |= row && !own;
	json_array_foreach (own ? own : row ? NULL : json_object_get(d->decl, "roles"), i, r)
		n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s", i ? "," : "",
				      json_string_value(r));
	return own || !row ? out : d->roles;
}

/* One row of fleet.capabilities. */
static void gen_capability_row(const struct gen_decl *d, const char *name, const char *roles,
			       const char *confirmation)
{
	fprintf(gen.caps,
		"\t{.name = \"%s\", .roles = \"%s\", .scope = \"%s\", .people_only = %s, "
		".confirmation = \"%s\"},\n",
		name, roles, d->scope, d->people_only ? "true" : "false", confirmation);
	gen.ncaps++;
}

/* ---- columns, refusals, governance, input -------------------------------------------------- */

/* An SQL type a column may have: its JSON form and the JSON Schema type it is shown as. */
static const struct {
	const char *sql, *form, *json;
} gen_types[] = {
	{"text", "DECLARED_STRING", "string"},      {"smallint", "DECLARED_INTEGER", "integer"},
	{"integer", "DECLARED_INTEGER", "integer"}, {"bigint", "DECLARED_INTEGER", "integer"},
	{"boolean", "DECLARED_BOOLEAN", "boolean"}, {"json", "DECLARED_JSON", NULL},
	{"jsonb", "DECLARED_JSON", NULL},
};

/* The columns' field table NAME_fields and, for a read, their column map NAME_columns. */
static void gen_columns(json_t *cols, const char *name, const char *where, bool map)
{
	size_t i, t;
	json_t *col;
	char at[160], msg[256];
	fprintf(gen.c, "static const struct declared_field %s_fields[] = {\n", name);
	json_array_foreach (cols, i, col) {
		snprintf(at, sizeof at, "%s.columns[%zu]", where, i);
		for (t = 0; strcmp(gen_types[t].sql, GEN_S(col, "type")) != 0; t++)
			; /* the schema's enum is gen_types' */
		json_t *schema = json_object_get(col, "schema");
		const char *shown = GEN_S(schema, "type"), *json = gen_types[t].json;
		if (!GEN_S(col, "withheld") == !(GEN_S(col, "name") && schema))
			gen_fail(at, "a column is shown (\"name\" and \"schema\") or \"withheld\" "
				     "(why it is read but never shown): one of the two");
		else if (schema && json && (!shown || strcmp(shown, json)))
			gen_fail(at, "a %s column is shown as \"type\": \"%s\", not %s",
				 gen_types[t].sql, json, GEN_OR(shown, "nothing"));
		else if (schema && !schema_check(schema, msg, sizeof msg))
			gen_fail(at, "schema: %s", msg);
		else if (map && json_is_true(json_object_get(col, "optional")))
			gen_fail(at,
				 "only a write's column may be \"optional\": every row of a read "
				 "has every column (\"null\": true for one without a value)");
		fprintf(gen.c, "\t{%s, %s, %s, %s, %s},\n", gen_lit(GEN_S(col, "column")),
			gen_lit(GEN_S(col, "name")), gen_types[t].form, GEN_B(col, "null"),
			GEN_B(col, "optional"));
	}
	fputs("};\n", gen.c);
	if (!map)
		return;
	fprintf(gen.c, "static const struct reads_column %s_columns[] = {\n", name);
	json_array_foreach (cols, i, col)
		fprintf(gen.c,
			"\t{\"%s\", READS_TEXT_NEW, %zu * sizeof(char *), sizeof(char *)},\n",
			GEN_S(col, "column"), i);
	fputs("};\n", gen.c);
}

/* The output schema a tool lists: the shown columns, each required but the optional ones (null
 * allowed where the column may be null), the object left open (docs/capabilities.md); a list's
 * rows are such
 * objects under its key (list), with the cursor of the next page when it comes in pages. */
static void gen_output_schema(const char *tool, json_t *cols, const char *list, bool paged)
{
	json_t *props = json_object(), *required = json_array(), *col;
	size_t i;
	json_array_foreach (cols, i, col) {
		if (!GEN_S(col, "name"))
			continue;
		json_t *s = json_deep_copy(json_object_get(col, "schema"));
		json_t *type = json_object_get(s, "type");
		if (json_is_true(json_object_get(col, "null")) && json_is_string(type))
			json_object_set_new(s, "type", json_pack("[O, s]", type, "null"));
		json_object_set_new(props, GEN_S(col, "name"), s);
		if (!json_is_true(json_object_get(col, "optional")))
			json_array_append_new(required, json_string(GEN_S(col, "name")));
	}
	json_t *out = json_pack("{s:s, s:o, s:o}", "type", "object", "properties", props,
				"required", required);
	if (list)
		out = json_pack("{s:s, s:{s:{s:s, s:o}}, s:[s]}", "type", "object", "properties",
				list, "type", "array", "items", out, "required", list);
	if (paged)
		json_object_set_new(json_object_get(out, "properties"), "nextCursor",
				    json_pack("{s:s, s:s}", "type", "string", "description",
					      "There are more: pass it as cursor, with the same "
					      "arguments, for the next page."));
	gen_schema_string(tool, "output", out);
	json_decref(out);
}

/* The refusal table NAME_refusals: the schema's words for every KIND ("read", "write"), the
 * shared ones', then own's, each taking precedence; each {NAME} an argument of input or one the
 * server fills in (declared.c). Returns how many. */
static size_t gen_refusals(const char *name, const char *kind, json_t *shared, json_t *own,
			   json_t *input, const char *where)
{
	static const char vars[] = " key why outcome scope action role roles ";
	json_t *all = json_object(), *v, *defs = json_object_get(gen.schema, "$defs");
	json_t *props = json_object_get(input, "properties");
	defs = json_object_get(json_object_get(json_object_get(defs, kind), "properties"),
			       "refusals");
	json_object_update(all, json_object_get(defs, "default"));
	json_object_update(all, shared);
	json_object_update(all, own);
	const char *k;
	fprintf(gen.c, "static const struct declared_refusal %s_refusals[] = {\n", name);
	json_object_foreach (all, k, v) {
		for (const char *p = strchr(json_string_value(v), '{'); p; p = strchr(p + 1, '{')) {
			char arg[64], spaced[68];
			snprintf(arg, sizeof arg, "%.*s", (int)strcspn(p + 1, "}"), p + 1);
			snprintf(spaced, sizeof spaced, " %s ", arg);
			if (strcmp(k, "unavailable") == 0)
				gen_fail(where, "refusal \"unavailable\" is an error's message: it "
						"names no {...}");
			else if (!strstr(vars, spaced) && !json_object_get(props, arg))
				gen_fail(where,
					 "refusal \"%s\" names {%s}, which is neither an argument "
					 "of the input nor one of {key, why, outcome, scope, "
					 "action, "
					 "role, roles}",
					 k, arg);
		}
		fprintf(gen.c, "\t{%s, %s},\n", gen_lit(k), gen_lit(json_string_value(v)));
	}
	fputs("\t{NULL, NULL},\n};\n", gen.c);
	size_t n = json_object_size(all);
	json_decref(all);
	return n;
}

/* A tool's input: its schema checked and written into the row c, its example's arguments
 * checked against it (the suites that walk every row read the examples from the declarations). */
static void gen_input(FILE *c, json_t *row, const char *at)
{
	json_t *input = json_object_get(row, "input");
	json_t *args = json_object_get(json_object_get(row, "example"), "arguments");
	struct schema_set *set = schema_set_new();
	char msg[256];
	if (!schema_check(input, msg, sizeof msg))
		gen_fail(at, "input: schema: %s", msg);
	else if (schema_set_add(set, input) == 0 &&
		 !schema_validate(set, input, args, msg, sizeof msg))
		gen_fail(at, "example.arguments do not fit the input schema: %s", msg);
	schema_set_free(set);
	gen_schema_string(GEN_S(row, "name"), "input", input);
	fprintf(c, "	.input_schema = schema_%s_input,\n", GEN_S(row, "name"));
}

/* A row of kind k: its governance first (the row names it, scripts/doctable.py makes the docs'
 * table of them), then the row's opening. Returns where the row goes; *gov its governance. */
static FILE *gen_row(struct gen_decl *d, int k, size_t i, json_t *row, const char *roles,
		     char gov[160])
{
	json_t *g = json_object_get(row, "governance"), *field;
	json_t *defs = json_object_get(json_object_get(gen.schema, "$defs"), "governance");
	const char *f;
	snprintf(gov, 160, "%.63s_%s%zu_governance", d->name, gen_kinds[k], i);
	fprintf(gen.c, "static const struct mcp_governance %s = {\n", gov);
	json_object_foreach (json_object_get(defs, "properties"), f,
			     field) /* default: the schema's */
		if (GEN_OR(GEN_S(g, f), GEN_S(field, "default")))
			fprintf(gen.c, "\t.%s = %s,\n", f,
				gen_lit(GEN_OR(GEN_S(g, f), GEN_S(field, "default"))));
	fprintf(gen.c, "\t.roles = %s,\n};\n", gen_lit(roles));
	d->counts[k]++;
	fputs("\t{\n", d->rows[k]);
	return d->rows[k];
}

/* The end of a row: its access, governance and extension part. */
static void gen_row_end(FILE *c, const struct gen_decl *d, json_t *row, const char *roles,
			const char *gov)
{
	fprintf(c, "\t.scope = %s, .scope_name = %s, .roles = %s, .people_only = %s,\n",
		GEN_SCOPE(d), gen_lit(d->scope), gen_lit(roles), d->people_only ? "true" : "false");
	fprintf(c, "\t.governance = &%s,\n", gov);
	if (GEN_S(row, "ext"))
		fprintf(c, "\t.ext = &%s,\n", GEN_S(row, "ext"));
	gen_c_name(GEN_S(row, "ext"), GEN_EXT);
	fputs("\t},\n", c);
}

/* ---- reads and writes ---------------------------------------------------------------------- */

/* The declaration's read: NAME_read, what declared_tool and declared_resource serve. */
static void gen_read(struct gen_decl *d)
{
	json_t *r = d->read, *cols = json_object_get(r, "columns"), *col;
	const char *key = GEN_S(r, "key"), *region = GEN_S(r, "region"), *list = GEN_S(r, "list");
	char name[96];
	json_t *page = json_object_get(r, "page");
	const char *after = page ? GEN_S(page, "after") : NULL;
	size_t i, n = json_array_size(cols), found = 0;
	int after_at = -1;
	snprintf(name, sizeof name, "%s_read", d->name);
	gen_columns(cols, name, "read", true);
	json_array_foreach (cols, i, col) {
		found |= (key && strcmp(key, GEN_S(col, "column")) == 0) |
			 (region && strcmp(region, GEN_S(col, "column")) == 0) << 1;
		after_at = after && strcmp(after, GEN_S(col, "column")) == 0 ? (int)i : after_at;
	}
	if (page && (!list || !key || after_at < 0))
		gen_fail("read.page", "a list in pages (returns \"list\", with its key) names as "
				      "\"after\" the column of each row's place in the list");
	if ((key && !(found & 1)) || (region && !(found & 2)))
		gen_fail("read", "%s \"%s\" is not one of its columns",
			 key && !(found & 1) ? "key" : "region",
			 key && !(found & 1) ? key : region);
	if ((strcmp(GEN_S(r, "returns"), "list") == 0) != !!list)
		gen_fail("read", "\"list\" names the rows' key of a read that returns \"list\"");
	size_t refusals =
		gen_refusals(name, "read", json_object_get(r, "refusals"), NULL, d->input, "read");
	fprintf(gen.c,
		"static const struct declared_read %s = {\n\t.query = {.function = %s, .columns = "
		"%s_columns, .ncolumns = %zu, .key_column = %s, .region_column = %s,\n",
		name, gen_lit(GEN_S(r, "function")), name, n, gen_lit(key), gen_lit(region));
	fprintf(gen.c,
		"\t\t.row_size = %zu * sizeof(char *), .roles = %s, .capability = \"%s\", .list = "
		"%s},\n\t.fields = %s_fields, .list = %s, .refusals = %s_refusals, .nrefusals = "
		"%zu,\n\t.page_size = %lld, .page_after = %d,\n};\n",
		n, gen_lit(d->roles), d->name, list ? "true" : "false", name, gen_lit(list), name,
		refusals, (long long)json_integer_value(json_object_get(page, "size")), after_at);
}

/* The write a tool serves, as NAME: the declaration's, with what the tool says of its own (its
 * roles, action, confirmation, refusals); its capability row when the tool is one of its own. */
static void gen_write(struct gen_decl *d, json_t *tool, const char *name, const char *roles,
		      const char *at)
{
	json_t *w = d->write, *own = json_object_get(tool, "write");
	json_t *input = json_object_get(tool, "input");
	json_t *conf =
		GEN_OR(json_object_get(own, "confirmation"), json_object_get(w, "confirmation"));
	const char *action = GEN_OR(GEN_S(own, "action"), GEN_S(w, "action"));
	const char *policy = GEN_OR(GEN_S(conf, "policy"), "never");
	const char *key = GEN_S(json_object_get(w, "idempotency"), "argument");
	const char *cap = json_object_get(tool, "roles") ? GEN_S(tool, "name") : d->name;
	bool asks = strcmp(policy, "never") != 0;
	if (!action)
		gen_fail(at, "a write says what it does, for refusals (\"action\": \"reporting\")");
	if (asks && !(GEN_S(conf, "title") && GEN_S(conf, "description")))
		gen_fail(at, "a write that asks (%s) has the form's \"title\" and \"description\"",
			 policy);
	if (key && !json_object_get(json_object_get(input, "properties"), key))
		gen_fail(at, "idempotency.argument \"%s\" is not an argument of the input", key);
	if (json_object_get(tool, "roles"))
		gen_capability_row(d, cap, roles, policy);
	size_t n = gen_refusals(name, "write", json_object_get(w, "refusals"),
				json_object_get(own, "refusals"), input, at);
	fprintf(gen.c,
		"static const struct declared_write %s = {\n\t.query = {.capability = \"%s\", "
		".function = %s, .scope = %s, .roles = %s, .people_only = %s},\n",
		name, cap, gen_lit(GEN_S(w, "function")), GEN_SCOPE(d), gen_lit(roles),
		d->people_only ? "true" : "false");
	fprintf(gen.c,
		"\t.fields = %s_write_fields, .nfields = %zu, .action = %s, .confirm_title = %s, "
		".confirm_description = %s,\n\t.key_argument = %s, .refusals = %s_refusals, "
		".nrefusals = %zu,\n};\n",
		d->name, json_array_size(json_object_get(w, "columns")), gen_lit(action),
		gen_lit(asks ? GEN_S(conf, "title") : NULL),
		gen_lit(asks ? GEN_S(conf, "description") : NULL), gen_lit(key), name, n);
}

/* ---- the rows ------------------------------------------------------------------------------ */

static void gen_tool(struct gen_decl *d, json_t *row, size_t i)
{
	char at[64], gov[160], spec[160], own[256];
	snprintf(at, sizeof at, "tools[%zu]", i);
	const char *name = GEN_S(row, "name"), *handler = GEN_S(row, "handler");
	const char *key = GEN_S(row, "key"), *roles = gen_roles(d, row, own, sizeof own);
	const char *tasks = GEN_OR(GEN_S(row, "tasks"), "never");
	json_t *business = GEN_OR(d->read, d->write);
	if (!handler == !business)
		gen_fail(at,
			 "a tool serves its declaration's \"read\" or \"write\", or names its C "
			 "\"handler\": one of them");
	json_t *args = json_object_get(json_object_get(row, "input"), "properties");
	bool paged = d->read && json_object_get(d->read, "page");
	if (d->read && !handler && !paged && GEN_S(d->read, "key") &&
	    !json_object_get(args, GEN_OR(key, "")))
		gen_fail(at, "\"key\" must name the input argument that holds the read's key");
	if (paged && !handler && (key || !json_object_get(args, "cursor")))
		gen_fail(at, "a tool over a read in pages has no \"key\" (its arguments are its "
			     "query) and takes the argument \"cursor\"");
	if ((json_object_get(row, "write") || json_object_get(row, "roles")) && !d->write)
		gen_fail(at, "a tool's own \"roles\" and \"write\" are of a tool over a write");
	if (business && !handler) {
		gen_output_schema(name, json_object_get(business, "columns"),
				  d->read ? GEN_S(d->read, "list") : NULL, paged);
		snprintf(spec, sizeof spec, "%s_tool%zu_write", d->name, i);
		if (d->write)
			gen_write(d, row, spec, roles, at);
		else
			snprintf(spec, sizeof spec, "%s_read", d->name);
		fprintf(gen.c,
			"static const struct declared_row %s_tool%zu_spec = {.%s = &%s, "
			".key = %s};\n",
			d->name, i, d->read ? "read" : "write", spec, gen_lit(key));
	}
	FILE *c = gen_row(d, GEN_TOOL, i, row, roles, gov);
	gen_members(c, row,
		    (const char *[]){"name", "title", "description", "read_only", "destructive",
				     "idempotent", NULL});
	gen_input(c, row, at);
	if (!handler)
		fprintf(c, "\t.output_schema = schema_%s_output,\n\t.spec = &%s_tool%zu_spec,\n",
			name, d->name, i);
	fprintf(c, "\t.fn = %s,\n\t.audit = {.target = %s, .self = true},\n",
		GEN_OR(handler, "declared_tool"),
		gen_lit(GEN_S(json_object_get(row, "audit"), "target")));
	fprintf(c, "\t.tasks = MCP_TASKS_%s,\n",
		*tasks == 'r'   ? "REQUIRED"
		: *tasks == 'o' ? "OPTIONAL"
				: "NEVER");
	gen_c_name(handler, GEN_TOOL_FN);
	gen_row_end(c, d, row, roles, gov);
}

/* A resource's or template's read spec (NULL: none) and the fields their rows share. */
static void gen_resource_common(struct gen_decl *d, FILE *c, json_t *row, const char *spec,
				const char *var)
{
	if (spec)
		fprintf(gen.c,
			"static const struct declared_row %s = {.read = &%s_read, .key = %s, "
			".mime_type = %s, .ttl_ms = %lld, .per_user = %s};\n",
			spec, d->name, gen_lit(var), gen_lit(GEN_S(row, "mime_type")),
			(long long)json_integer_value(json_object_get(row, "ttl_ms")),
			GEN_B(row, "per_user"));
	gen_members(c, row, (const char *[]){"name", "title", "description", "mime_type", NULL});
	if (GEN_S(row, "handler") || spec)
		fprintf(c, "\t.read = %s,\n", spec ? "declared_resource" : GEN_S(row, "handler"));
	if (spec)
		fprintf(c, "\t.spec = &%s,\n", spec);
	gen_c_name(GEN_S(row, "handler"), GEN_READ_FN);
}

static void gen_resource(struct gen_decl *d, json_t *row, size_t i)
{
	char at[64], gov[160], spec[160];
	snprintf(at, sizeof at, "resources[%zu]", i);
	snprintf(spec, sizeof spec, "%s_resource%zu_spec", d->name, i);
	const char *file = GEN_S(row, "file"), *handler = GEN_S(row, "handler");
	const char *roles = gen_roles(d, row, NULL, 0); /* a resource has no roles of its own */
	if (!!file + !!handler + !!d->read != 1)
		gen_fail(at, "a resource is a \"file\" shipped with the server, the declaration's "
			     "\"read\", or a C \"handler\": exactly one");
	FILE *c = gen_row(d, GEN_RESOURCE, i, row, roles, gov);
	gen_members(c, row, (const char *[]){"uri", "file", "ttl_ms", NULL});
	gen_resource_common(d, c, row, d->read && !file && !handler ? spec : NULL, NULL);
	fprintf(c, "\t.private_scope = %s,\n", GEN_B(row, "per_user"));
	gen_row_end(c, d, row, roles, gov);
}

static void gen_template(struct gen_decl *d, json_t *row, size_t i)
{
	char at[64], gov[160], spec[160], var[64], prefix[256];
	snprintf(at, sizeof at, "templates[%zu]", i);
	snprintf(spec, sizeof spec, "%s_template%zu_spec", d->name, i);
	const char *tpl = GEN_S(row, "uri_template"), *handler = GEN_S(row, "handler");
	const char *open = strchr(tpl, '{'), *close = strchr(open, '}'); /* the schema's form */
	const char *roles = gen_roles(d, row, NULL, 0), *complete = GEN_S(row, "complete");
	if (!handler && !d->read)
		gen_fail(at, "a template serves the declaration's \"read\", or names its C "
			     "\"handler\"");
	if (!handler && json_object_get(d->read, "page"))
		gen_fail(at, "a read in pages is served by tools: a template has no cursor");
	snprintf(var, sizeof var, "%.*s", (int)(close - open - 1), open + 1);
	snprintf(prefix, sizeof prefix, "%.*s", (int)(open - tpl), tpl);
	FILE *c = gen_row(d, GEN_TEMPLATE, i, row, roles, gov);
	gen_members(c, row, (const char *[]){"uri_template", NULL});
	gen_resource_common(d, c, row, handler ? NULL : spec, var);
	fprintf(c, "\t.prefix = %s,\n\t.var = \"%s\",\n\t.suffix = %s,\n\t.complete = %s,\n",
		gen_lit(prefix), var, gen_lit(close + 1), GEN_OR(complete, "NULL"));
	gen_c_name(complete, GEN_COMPLETE_FN);
	gen_row_end(c, d, row, roles, gov);
}

static void gen_prompt(struct gen_decl *d, json_t *row, size_t i)
{
	char at[64], gov[160];
	snprintf(at, sizeof at, "prompts[%zu]", i);
	const char *roles = gen_roles(d, row, NULL, 0);
	json_t *args = json_object_get(row, "arguments"), *a;
	FILE *c = gen_row(d, GEN_PROMPT, i, row, roles, gov);
	gen_members(c, row, (const char *[]){"name", "title", "description", "file", NULL});
	fprintf(c, "\t.nargs = %zu,\n\t.args = {\n", json_array_size(args));
	size_t j;
	json_array_foreach (args, j, a) {
		const char *valid = GEN_S(a, "valid"), *complete = GEN_S(a, "complete");
		if (valid && !GEN_S(a, "invalid_message"))
			gen_fail(at,
				 "arguments[%zu]: a \"valid\" check has its \"invalid_message\"",
				 j);
		fputs("\t{\n", c);
		gen_members(c, a,
			    (const char *[]){"name", "title", "description", "required", "max_len",
					     "invalid_message", NULL});
		fprintf(c, "\t.valid = %s,\n\t.complete = %s,\n\t},\n", GEN_OR(valid, "NULL"),
			GEN_OR(complete, "NULL"));
		gen_c_name(valid, GEN_VALID_FN);
		gen_c_name(complete, GEN_COMPLETE_FN);
	}
	fputs("\t},\n", c);
	gen_row_end(c, d, row, roles, gov);
}

/* ---- declarations -------------------------------------------------------------------------- */

/* The declaration at path, validated against the declarations' schema (NULL, said, if not). */
static json_t *gen_load(const char *path, json_t *schema, struct schema_set *set, char *name)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t n = strlen(base);
	snprintf(name, 64, "%.*s", n > 5 && n < 69 ? (int)(n - 5) : 0, base);
	json_error_t e;
	char msg[512];
	json_t *decl = NULL;
	if (!*name || strcmp(base + n - 5, ".json") != 0 || !islower((unsigned char)*name) ||
	    strspn(name, GEN_WORD) < strlen(name))
		gen_fail("name",
			 "a declaration is server/capabilities/NAME.json, NAME lower case "
			 "letters, digits and _ (it names the capability in fleet.capabilities)");
	else if (!(decl = json_load_file(path, JSON_REJECT_DUPLICATES, &e)))
		gen_fail("JSON", "line %d, column %d: %s", e.line, e.column, e.text);
	else if (!schema_validate_document(set, schema, decl, msg, sizeof msg))
		gen_fail("", "%s (server/capabilities/declaration.schema.json)", msg);
	else
		return decl;
	json_decref(decl);
	return NULL;
}

/* The business part, every row (each kind's into its table: an array's elements must be
 * constant expressions, so the rows come after the governance and specs they name), the
 * capability itself and its row of fleet.capabilities. */
static void gen_decl(const char *path, json_t *schema, struct schema_set *set, struct gen_decl *d)
{
	static void (*const emit[GEN_KINDS])(struct gen_decl *, json_t *, size_t) = {
		gen_tool, gen_resource, gen_template, gen_prompt};
	static const char *const structs[GEN_KINDS] = {"tool_desc", "resource_desc",
						       "resource_template_desc", "prompt_desc"};
	if (!(d->decl = gen_load(gen.file = path, schema, set, d->name)))
		return;
	d->read = json_object_get(d->decl, "read");
	d->write = json_object_get(d->decl, "write");
	d->input = json_object_get(json_array_get(json_object_get(d->decl, "tools"), 0), "input");
	d->scope = GEN_S(d->decl, "scope");
	d->people_only = json_is_true(json_object_get(d->decl, "people_only"));
	gen_roles(d, NULL, d->roles, sizeof d->roles);
	if (d->read && d->write)
		gen_fail("top level", "a declaration has a read or a write, not both: split it");
	fprintf(gen.c, "\n/* ---- %s.json ---- */\n", d->name);
	char fields[96];
	snprintf(fields, sizeof fields, "%s_write", d->name);
	if (d->read)
		gen_read(d);
	if (d->write)
		gen_columns(json_object_get(d->write, "columns"), fields, "write", false);
	for (int k = 0; k < GEN_KINDS; k++) {
		size_t i;
		json_t *row;
		d->rows[k] = open_memstream(&d->rbuf[k], &d->rlen[k]);
		json_array_foreach (json_object_get(d->decl, gen_tables[k]), i, row)
			emit[k](d, row, i);
		fclose(d->rows[k]);
		if (d->rlen[k])
			fprintf(gen.c, "static const struct %s %s_%s[] = {\n%s};\n", structs[k],
				d->name, gen_tables[k], d->rbuf[k]);
		free(d->rbuf[k]);
	}
	const char *policy = GEN_S(json_object_get(d->write, "confirmation"), "policy");
	if (d->shared && (d->read || d->write))
		gen_capability_row(d, d->name, d->roles, GEN_OR(policy, "never"));
	fprintf(gen.c, "const struct mcp_capability capability_%s = {\n\t.name = \"%s\",\n",
		d->name, d->name);
	for (int k = 0; k < GEN_KINDS; k++)
		if (d->counts[k])
			fprintf(gen.c, "\t.%s = %s_%s,\n\t.n%s = %d,\n", gen_tables[k], d->name,
				gen_tables[k], gen_tables[k], d->counts[k]);
	fputs("};\n", gen.c);
}

/* The declarations' own schema into set (NULL, said, when it is not one the validator runs). */
static json_t *gen_schema(const char *path, struct schema_set *set)
{
	json_error_t e;
	char msg[256] = "";
	json_t *s = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
	if (s && schema_check(s, msg, sizeof msg) && schema_set_add(set, s) == 0)
		return s;
	fprintf(stderr, "%s: not a schema the validator runs: %s\n", path, s ? msg : e.text);
	json_decref(s);
	gen.bad = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	static struct gen_decl decls[GEN_MAX_DECLS];
	char c_path[512], h_path[512], *caps = NULL;
	size_t len = 0;
	int n = argc - 3, rc = 0;
	if (argc < 4 || n > GEN_MAX_DECLS) {
		fprintf(stderr, "usage: capgen OUT_DIR SCHEMA DECLARATION.json... (at most %d)\n",
			GEN_MAX_DECLS);
		return 2;
	}
	mem_install_jansson();
	snprintf(c_path, sizeof c_path, "%s/capabilities.c", argv[1]);
	snprintf(h_path, sizeof h_path, "%s/capabilities.h", argv[1]);
	if (!(gen.c = fopen(c_path, "w")) || !(gen.h = fopen(h_path, "w"))) {
		perror(argv[1]);
		return 1;
	}
	gen.caps = open_memstream(&caps, &len);
	fputs("/* Generated by scripts/capgen.c from server/capabilities/NAME.json: do not edit. "
	      "*/\n"
	      "#include \"gen/capabilities.h\"\n",
	      gen.c);
	fputs("/* Generated by scripts/capgen.c: every capability (server/capabilities/NAME.json) "
	      "in "
	      "the order of their files' names, the C names they give, and the rows migrate keeps "
	      "in fleet.capabilities (migrate_capabilities[], domain/pg/migrate.h). */\n"
	      "#ifndef BIKAROO_GEN_CAPABILITIES_H\n#define BIKAROO_GEN_CAPABILITIES_H\n"
	      "#include \"domain/pg/migrate.h\"\n#include \"server/capabilities/declared.h\"\n"
	      "extern const struct mcp_capability *const capabilities_all[];\n"
	      "extern const size_t capabilities_count;\n",
	      gen.h);
	struct schema_set *set = schema_set_new();
	json_t *schema = gen.schema = gen_schema(argv[2], set);
	for (int i = 0; !gen.bad && i < n; i++)
		gen_decl(argv[i + 3], schema, set, &decls[i]);
	fclose(gen.caps);
	fputs("\nconst struct mcp_capability *const capabilities_all[] = {\n", gen.c);
	for (int i = 0; i < n; i++) {
		fprintf(gen.c, "\t&capability_%s,\n", decls[i].name);
		json_decref(decls[i].decl);
	}
	fprintf(gen.c,
		"};\nconst size_t capabilities_count = %d;\n\nconst struct migrate_capability "
		"migrate_capabilities[] = {\n%s};\nconst size_t migrate_capabilities_count = %d;\n",
		n, caps, gen.ncaps);
	fputs("#endif\n", gen.h);
	for (size_t i = 0; i < 256; i++)
		free(gen.lits[i]);
	free(caps);
	json_decref(schema);
	schema_set_free(set);
	rc = (fclose(gen.c) != 0) | (fclose(gen.h) != 0);
	if (!rc && !gen.bad)
		return 0;
	fprintf(stderr, "capgen: fix the declarations above (their format: "
			"server/capabilities/declaration.schema.json)\n");
	remove(c_path);
	remove(h_path);
	return 1;
}
