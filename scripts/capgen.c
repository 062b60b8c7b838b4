/* capgen OUT_DIR SCHEMA DECLARATION...: the build step that turns the capabilities' declarations
 * (server/capabilities/NAME.json) into the C the server runs. Each is validated against SCHEMA
 * (server/capabilities/declaration.schema.json: the format and the rules between its fields) by
 * the server's own validator (server/protocol/schema.c); here only what a schema cannot say (a
 * name that is a column or an argument, an example that fits its input, a schema the validator
 * implements). A problem fails the build, naming the file, the place and what to write. Writes
 * OUT_DIR/capabilities.c (the rows with their schemas and governance, the reads and writes the
 * generic handlers serve, the list of every capability, the rows migrate keeps in
 * fleet.capabilities) and its header (the list, the C names the declarations give). One
 * emitter per kind of row and per business part. */
#include <ctype.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "server/protocol/schema.h"

/* The schema validated the types: a member is of its type, or absent. */
#define GEN_S(o, k) json_string_value(json_object_get(o, k))
#define GEN_B(o, k) (json_is_true(json_object_get(o, k)) ? "true" : "false")
#define GEN_OR(a, b) ((a) ? (a) : (b))
#define GEN_SCOPE(d)                                                                               \
	(strcmp((d)->scope, "fleet:report") ? "FLEET_SCOPE_READ" : "FLEET_SCOPE_REPORT")

/* The outputs, the declaration being read, and the literals being written. */
static struct {
	FILE *c, *h, *caps, *all; /* gen/capabilities.c and .h; migrate_capabilities[] and
				   * capabilities_all[] (in memory) */
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

/* The declaration being written and, while its rows are, the row's place, C name and roles. */
struct gen_decl {
	char name[64], roles[256]; /* roles: the declaration's, "a,b,c" */
	json_t *decl, *read, *write;
	json_t *input; /* the first tool's input: what a read's refusals may name */
	const char *scope;
	bool people_only, shared;      /* shared: a row uses the declaration's roles */
	char at[64], id[96], own[256]; /* "tools[0]", "NAME_tool0", a tool's own roles */
	const char *row_roles;         /* own, or the declaration's */
	FILE *row;                     /* the kind's rows, written after what they name */
};

/* roles (an array) as "a,b,c" into out. */
static void gen_join(json_t *roles, char *out, size_t cap)
{
	json_t *r;
	size_t i, n = 0;
	json_array_foreach (roles, i, r)
		n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s", i ? "," : "",
				      json_string_value(r));
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

/* An SQL type a column may have (the schema's enum) and its JSON form. */
static const char *const gen_types[][2] = {
	{"text", "DECLARED_STRING"},     {"smallint", "DECLARED_INTEGER"},
	{"integer", "DECLARED_INTEGER"}, {"bigint", "DECLARED_INTEGER"},
	{"boolean", "DECLARED_BOOLEAN"}, {"json", "DECLARED_JSON"},
	{"jsonb", "DECLARED_JSON"},
};

/* The columns of the declaration's part ("read", "write") as its field table NAME_PART_fields
 * and, for a read, their column map NAME_read_columns. */
static void gen_columns(const char *name, json_t *cols, const char *where)
{
	size_t i, t;
	json_t *col;
	char at[160], msg[256];
	bool read = strcmp(where, "read") == 0;
	fprintf(gen.c, "static const struct declared_field %s_%s_fields[] = {\n", name, where);
	json_array_foreach (cols, i, col) {
		snprintf(at, sizeof at, "%s.columns[%zu]", where, i);
		for (t = 0; strcmp(gen_types[t][0], GEN_S(col, "type")) != 0; t++)
			;
		json_t *schema = json_object_get(col, "schema");
		if (schema && !schema_check(schema, msg, sizeof msg))
			gen_fail(at, "schema: %s", msg);
		fprintf(gen.c, "\t{%s, %s, %s, %s, %s},\n", gen_lit(GEN_S(col, "column")),
			gen_lit(GEN_S(col, "name")), gen_types[t][1], GEN_B(col, "null"),
			GEN_B(col, "optional"));
	}
	fputs("};\n", gen.c);
	if (!read)
		return;
	fprintf(gen.c, "static const struct reads_column %s_read_columns[] = {\n", name);
	json_array_foreach (cols, i, col)
		fprintf(gen.c,
			"\t{\"%s\", READS_TEXT_NEW, %zu * sizeof(char *), sizeof(char *)},\n",
			GEN_S(col, "column"), i);
	fputs("};\n", gen.c);
}

/* The output schema a tool lists: the shown columns, each required but the optional ones (null
 * allowed where the column may be null), the object left open (docs/capabilities.md); a list's
 * rows are such objects under its key (list), with the cursor of the next page when it comes in
 * pages. */
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
			if (!strstr(vars, spaced) && !json_object_get(props, arg))
				gen_fail(where,
					 "refusal \"%s\" names {%s}, which is neither an "
					 "argument of the input nor one of {%s}",
					 k, arg, "key, why, outcome, scope, action, role, roles");
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

/* A row's governance, ID_governance (the row names it; scripts/doctable.py makes the docs' table
 * of them): the schema's defaults, the row's own values taking their place. */
static void gen_governance(const struct gen_decl *d, json_t *row)
{
	json_t *g = json_object_get(row, "governance"), *field;
	json_t *defs = json_object_get(json_object_get(gen.schema, "$defs"), "governance");
	const char *f, *v;
	fprintf(gen.c, "static const struct mcp_governance %s_governance = {\n", d->id);
	json_object_foreach (json_object_get(defs, "properties"), f, field)
		if ((v = GEN_OR(GEN_S(g, f), GEN_S(field, "default"))))
			fprintf(gen.c, "\t.%s = %s,\n", f, gen_lit(v));
	fprintf(gen.c, "\t.roles = %s,\n};\n", gen_lit(d->row_roles));
}

/* The end of a row: its access, governance and extension part. */
static void gen_row_end(const struct gen_decl *d, json_t *row)
{
	const char *ext = GEN_S(row, "ext");
	fprintf(d->row, "\t.scope = %s, .scope_name = %s, .roles = %s, .people_only = %s,\n",
		GEN_SCOPE(d), gen_lit(d->scope), gen_lit(d->row_roles),
		d->people_only ? "true" : "false");
	fprintf(d->row, "\t.governance = &%s_governance,\n", d->id);
	if (ext)
		fprintf(d->row, "\t.ext = &%s,\n", ext);
	gen_c_name(ext, GEN_EXT);
	fputs("\t},\n", d->row);
}

/* ---- reads and writes ---------------------------------------------------------------------- */

/* Where the column named column is in cols (-1: nowhere, or no name). */
static int gen_column(json_t *cols, const char *column)
{
	size_t i;
	json_t *col;
	json_array_foreach (cols, i, col)
		if (column && strcmp(column, GEN_S(col, "column")) == 0)
			return (int)i;
	return -1;
}

/* The declaration's read: NAME_read, what declared_tool and declared_resource serve. */
static void gen_read(struct gen_decl *d)
{
	json_t *r = d->read, *cols = json_object_get(r, "columns"),
	       *page = json_object_get(r, "page");
	const char *key = GEN_S(r, "key"), *region = GEN_S(r, "region"), *list = GEN_S(r, "list");
	size_t n = json_array_size(cols);
	int after_at = gen_column(cols, GEN_S(page, "after"));
	char name[96];
	snprintf(name, sizeof name, "%s_read", d->name);
	gen_columns(d->name, cols, "read");
	for (int i = 0; i < 3; i++) { /* the columns the read names */
		const char *what[] = {"key", "region", "after"},
			   *c = GEN_S(i < 2 ? r : page, what[i]);
		if (c && gen_column(cols, c) < 0)
			gen_fail(i < 2 ? "read" : "read.page",
				 "%s \"%s\" is not one of its columns", what[i], c);
	}
	size_t refusals =
		gen_refusals(name, "read", json_object_get(r, "refusals"), NULL, d->input, "read");
	fprintf(gen.c,
		"static const struct declared_read %s = {\n\t.query = {.function = %s, .columns = "
		"%s_columns, .ncolumns = %zu, .key_column = %s, .region_column = %s,\n"
		"\t\t.row_size = %zu * sizeof(char *), .roles = %s, .capability = \"%s\", .list = "
		"%s},\n\t.fields = %s_fields, .list = %s, .refusals = %s_refusals, .nrefusals = "
		"%zu,\n\t.page_size = %lld, .page_after = %d,\n};\n",
		name, gen_lit(GEN_S(r, "function")), name, n, gen_lit(key), gen_lit(region), n,
		gen_lit(d->roles), d->name, list ? "true" : "false", name, gen_lit(list), name,
		refusals, (long long)json_integer_value(json_object_get(page, "size")), after_at);
}

/* The write the tool serves, ID_write: the declaration's, with what the tool says of its own (its
 * roles, action, confirmation, refusals); its capability row when the tool is one of its own. */
static void gen_write(struct gen_decl *d, json_t *tool)
{
	json_t *w = d->write, *own = json_object_get(tool, "write");
	json_t *input = json_object_get(tool, "input");
	json_t *conf =
		GEN_OR(json_object_get(own, "confirmation"), json_object_get(w, "confirmation"));
	const char *action = GEN_OR(GEN_S(own, "action"), GEN_S(w, "action"));
	const char *policy = GEN_OR(GEN_S(conf, "policy"), "never");
	const char *key = GEN_S(json_object_get(w, "idempotency"), "argument");
	bool own_cap = json_object_get(tool, "roles");
	const char *cap = own_cap ? GEN_S(tool, "name") : d->name;
	char name[128];
	snprintf(name, sizeof name, "%s_write", d->id);
	if (key && !json_object_get(json_object_get(input, "properties"), key))
		gen_fail(d->at, "idempotency.argument \"%s\" is not an argument of the input", key);
	if (own_cap)
		gen_capability_row(d, cap, d->row_roles, policy);
	size_t n = gen_refusals(name, "write", json_object_get(w, "refusals"),
				json_object_get(own, "refusals"), input, d->at);
	fprintf(gen.c,
		"static const struct declared_write %s = {\n\t.query = {.capability = \"%s\", "
		".function = %s, .scope = %s, .roles = %s, .people_only = %s},\n"
		"\t.fields = %s_write_fields, .nfields = %zu, .action = %s, .confirm_title = %s, "
		".confirm_description = %s,\n\t.key_argument = %s, .refusals = %s_refusals, "
		".nrefusals = %zu,\n};\n",
		name, cap, gen_lit(GEN_S(w, "function")), GEN_SCOPE(d), gen_lit(d->row_roles),
		d->people_only ? "true" : "false", d->name,
		json_array_size(json_object_get(w, "columns")), gen_lit(action),
		gen_lit(GEN_S(conf, "title")), gen_lit(GEN_S(conf, "description")), gen_lit(key),
		name, n);
}

/* ---- the rows: each writes its governance, then its members into d->row -------------------- */

static void gen_tool(struct gen_decl *d, json_t *row)
{
	const char *name = GEN_S(row, "name"), *handler = GEN_S(row, "handler");
	const char *key = GEN_S(row, "key"), *tasks = GEN_OR(GEN_S(row, "tasks"), "never");
	const char *part = d->read ? "read" : "write";
	json_t *args = json_object_get(json_object_get(row, "input"), "properties");
	bool paged = json_object_get(d->read, "page");
	if (d->read && !paged && GEN_S(d->read, "key") && !json_object_get(args, GEN_OR(key, "")))
		gen_fail(d->at, "\"key\" must name the input argument that holds the read's key");
	if (!handler) { /* the schema's rule: then the declaration has a read or a write */
		gen_output_schema(name, json_object_get(GEN_OR(d->read, d->write), "columns"),
				  d->read ? GEN_S(d->read, "list") : NULL, paged);
		if (d->write)
			gen_write(d, row);
		fprintf(gen.c,
			"static const struct declared_row %s_spec = {.%s = &%s_%s, .key = %s};\n",
			d->id, part, d->read ? d->name : d->id, part, gen_lit(key));
	}
	gen_governance(d, row);
	gen_members(d->row, row,
		    (const char *[]){"name", "title", "description", "read_only", "destructive",
				     "idempotent", NULL});
	gen_input(d->row, row, d->at);
	if (!handler)
		fprintf(d->row, "\t.output_schema = schema_%s_output,\n\t.spec = &%s_spec,\n", name,
			d->id);
	fprintf(d->row,
		"\t.fn = %s,\n\t.audit = {.target = %s, .self = true},\n\t.tasks = MCP_TASKS_%s,\n",
		GEN_OR(handler, "declared_tool"),
		gen_lit(GEN_S(json_object_get(row, "audit"), "target")),
		*tasks == 'r'   ? "REQUIRED"
		: *tasks == 'o' ? "OPTIONAL"
				: "NEVER");
	gen_c_name(handler, GEN_TOOL_FN);
}

/* A resource or a template: a "file", the declaration's read (its spec) or a C "handler". */
static void gen_resource(struct gen_decl *d, json_t *row)
{
	const char *file = GEN_S(row, "file"), *handler = GEN_S(row, "handler");
	const char *tpl = GEN_S(row, "uri_template"), *complete = GEN_S(row, "complete");
	const char *open = tpl ? strchr(tpl, '{') : NULL, *close = tpl ? strchr(open, '}') : NULL;
	bool spec = d->read && !file && !handler;
	char var[64], prefix[256];
	if (tpl) /* the schema's form: PREFIX{VAR}SUFFIX */
		snprintf(var, sizeof var, "%.*s", (int)(close - open - 1), open + 1);
	gen_governance(d, row);
	gen_members(d->row, row,
		    tpl ? (const char *[]){"uri_template", NULL}
			: (const char *[]){"uri", "file", "ttl_ms", NULL});
	if (spec)
		fprintf(gen.c,
			"static const struct declared_row %s_spec = {.read = &%s_read, .key = %s, "
			".mime_type = %s, .ttl_ms = %lld, .per_user = %s};\n",
			d->id, d->name, gen_lit(tpl ? var : NULL), gen_lit(GEN_S(row, "mime_type")),
			(long long)json_integer_value(json_object_get(row, "ttl_ms")),
			GEN_B(row, "per_user"));
	gen_members(d->row, row,
		    (const char *[]){"name", "title", "description", "mime_type", NULL});
	if (handler || spec)
		fprintf(d->row, "\t.read = %s,\n", spec ? "declared_resource" : handler);
	if (spec)
		fprintf(d->row, "\t.spec = &%s_spec,\n", d->id);
	gen_c_name(handler, GEN_READ_FN);
	if (!tpl) {
		fprintf(d->row, "\t.private_scope = %s,\n", GEN_B(row, "per_user"));
		return;
	}
	snprintf(prefix, sizeof prefix, "%.*s", (int)(open - tpl), tpl);
	fprintf(d->row, "\t.prefix = %s,\n\t.var = \"%s\",\n\t.suffix = %s,\n\t.complete = %s,\n",
		gen_lit(prefix), var, gen_lit(close + 1), GEN_OR(complete, "NULL"));
	gen_c_name(complete, GEN_COMPLETE_FN);
}

static void gen_prompt(struct gen_decl *d, json_t *row)
{
	json_t *args = json_object_get(row, "arguments"), *a;
	size_t j;
	gen_governance(d, row);
	gen_members(d->row, row, (const char *[]){"name", "title", "description", "file", NULL});
	fprintf(d->row, "\t.nargs = %zu,\n\t.args = {\n", json_array_size(args));
	json_array_foreach (args, j, a) {
		const char *valid = GEN_S(a, "valid"), *complete = GEN_S(a, "complete");
		fputs("\t{\n", d->row);
		gen_members(d->row, a,
			    (const char *[]){"name", "title", "description", "required", "max_len",
					     "invalid_message", NULL});
		fprintf(d->row, "\t.valid = %s,\n\t.complete = %s,\n\t},\n", GEN_OR(valid, "NULL"),
			GEN_OR(complete, "NULL"));
		gen_c_name(valid, GEN_VALID_FN);
		gen_c_name(complete, GEN_COMPLETE_FN);
	}
	fputs("\t},\n", d->row);
}

/* ---- declarations -------------------------------------------------------------------------- */

/* The declaration at path, validated against the declarations' schema (NULL, said, if not). */
static json_t *gen_load(const char *path, struct schema_set *set, char *name)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t n = strlen(base);
	snprintf(name, 64, "%.*s", n > 5 && n < 69 ? (int)(n - 5) : 0, base);
	json_error_t e;
	char msg[512];
	json_t *decl = NULL;
	if (!*name || strcmp(base + n - 5, ".json") != 0 || !islower((unsigned char)*name) ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") < strlen(name))
		gen_fail("name",
			 "a declaration is server/capabilities/NAME.json, NAME lower case "
			 "letters, digits and _ (it names the capability in fleet.capabilities)");
	else if (!(decl = json_load_file(path, JSON_REJECT_DUPLICATES, &e)))
		gen_fail("JSON", "line %d, column %d: %s", e.line, e.column, e.text);
	else if (!schema_validate_document(set, gen.schema, decl, msg, sizeof msg))
		gen_fail("", "%s (server/capabilities/declaration.schema.json)", msg);
	else
		return decl;
	json_decref(decl);
	return NULL;
}

#define GEN_KINDS 4
static const struct {
	const char *kind, *table, *type; /* its rows' name, the declaration's key, the C struct */
	void (*emit)(struct gen_decl *, json_t *);
} gen_kinds[GEN_KINDS] = {{"tool", "tools", "tool_desc", gen_tool},
			  {"resource", "resources", "resource_desc", gen_resource},
			  {"template", "templates", "resource_template_desc", gen_resource},
			  {"prompt", "prompts", "prompt_desc", gen_prompt}};

/* The rows of kind k, each's place, C name and roles set before it is written: into its table
 * after the governance and specs they name (an array's elements are constant expressions). */
static void gen_rows(struct gen_decl *d, int k)
{
	char *rows = NULL;
	size_t len = 0, i;
	json_t *row, *own;
	d->row = open_memstream(&rows, &len);
	json_array_foreach (json_object_get(d->decl, gen_kinds[k].table), i, row) {
		snprintf(d->at, sizeof d->at, "%s[%zu]", gen_kinds[k].table, i);
		snprintf(d->id, sizeof d->id, "%s_%s%zu", d->name, gen_kinds[k].kind, i);
		d->shared |= !(own = json_object_get(row, "roles"));
		gen_join(own, d->own, sizeof d->own);
		d->row_roles = own ? d->own : d->roles;
		fputs("\t{\n", d->row);
		gen_kinds[k].emit(d, row);
		gen_row_end(d, row);
	}
	fclose(d->row);
	if (len)
		fprintf(gen.c, "static const struct %s %s_%s[] = {\n%s};\n", gen_kinds[k].type,
			d->name, gen_kinds[k].table, rows);
	free(rows);
}

/* The business part, every row, the capability itself and its row of fleet.capabilities. */
static void gen_decl(const char *path, struct schema_set *set)
{
	struct gen_decl decl = {0}, *d = &decl;
	if (!(d->decl = gen_load(gen.file = path, set, d->name)))
		return;
	d->read = json_object_get(d->decl, "read");
	d->write = json_object_get(d->decl, "write");
	d->input = json_object_get(json_array_get(json_object_get(d->decl, "tools"), 0), "input");
	d->scope = GEN_S(d->decl, "scope");
	d->people_only = json_is_true(json_object_get(d->decl, "people_only"));
	gen_join(json_object_get(d->decl, "roles"), d->roles, sizeof d->roles);
	fprintf(gen.c, "\n/* ---- %s.json ---- */\n", d->name);
	if (d->read)
		gen_read(d);
	if (d->write)
		gen_columns(d->name, json_object_get(d->write, "columns"), "write");
	for (int k = 0; k < GEN_KINDS; k++)
		gen_rows(d, k);
	const char *policy = GEN_S(json_object_get(d->write, "confirmation"), "policy");
	if (d->shared && (d->read || d->write))
		gen_capability_row(d, d->name, d->roles, GEN_OR(policy, "never"));
	fprintf(gen.c, "const struct mcp_capability capability_%s = {\n\t.name = \"%s\",\n",
		d->name, d->name);
	for (int k = 0; k < GEN_KINDS; k++) {
		const char *t = gen_kinds[k].table;
		size_t n = json_array_size(json_object_get(d->decl, t));
		if (n)
			fprintf(gen.c, "\t.%s = %s_%s,\n\t.n%s = %zu,\n", t, d->name, t, t, n);
	}
	fputs("};\n", gen.c);
	fprintf(gen.all, "\t&capability_%s,\n", d->name);
	json_decref(d->decl);
}

int main(int argc, char **argv)
{
	char c_path[512], h_path[512], *caps = NULL, *all = NULL;
	size_t caps_len = 0, all_len = 0;
	if (argc < 4) {
		fputs("usage: capgen OUT_DIR SCHEMA DECLARATION.json...\n", stderr);
		return 2;
	}
	mem_install_jansson();
	snprintf(c_path, sizeof c_path, "%s/capabilities.c", argv[1]);
	snprintf(h_path, sizeof h_path, "%s/capabilities.h", argv[1]);
	if (!(gen.c = fopen(c_path, "w")) || !(gen.h = fopen(h_path, "w"))) {
		perror(argv[1]);
		return 1;
	}
	gen.caps = open_memstream(&caps, &caps_len);
	gen.all = open_memstream(&all, &all_len);
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
	struct schema_set *set = schema_set_new(); /* the declarations' own schema, validated */
	json_error_t e;
	char msg[256] = "";
	gen.schema = json_load_file(argv[2], JSON_REJECT_DUPLICATES, &e);
	if (!gen.schema || !schema_check(gen.schema, msg, sizeof msg) ||
	    schema_set_add(set, gen.schema) != 0) {
		fprintf(stderr, "%s: not a schema the validator runs: %s\n", argv[2],
			gen.schema ? msg : e.text);
		gen.bad = 1;
	}
	for (int i = 3; !gen.bad && i < argc; i++)
		gen_decl(argv[i], set);
	fclose(gen.caps);
	fclose(gen.all);
	fprintf(gen.c,
		"\nconst struct mcp_capability *const capabilities_all[] = {\n%s};\nconst size_t "
		"capabilities_count = %d;\n\nconst struct migrate_capability "
		"migrate_capabilities[] "
		"= {\n%s};\nconst size_t migrate_capabilities_count = %d;\n",
		all, argc - 3, caps, gen.ncaps);
	fputs("#endif\n", gen.h);
	for (size_t i = 0; i < 256; i++)
		free(gen.lits[i]);
	free(caps);
	free(all);
	json_decref(gen.schema);
	schema_set_free(set);
	if (!((fclose(gen.c) != 0) | (fclose(gen.h) != 0) | gen.bad))
		return 0;
	fputs("capgen: fix the declarations above (their format: "
	      "server/capabilities/declaration.schema.json)\n",
	      stderr);
	remove(c_path);
	remove(h_path);
	return 1;
}
