/* JSON Schema subset validator for tool arguments; patterns are compiled once at start-up. */
#include "schema.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

#define SCHEMA_MAX_PATTERNS 32
#define SCHEMA_MAX_DEPTH 16

struct schema_pattern {
	char *source; /* owned copy: schemas may be freed and reloaded */
	regex_t re;
};

struct schema_set {
	struct schema_pattern patterns[SCHEMA_MAX_PATTERNS];
	int npatterns;
};

struct schema_set *schema_set_new(void)
{
	return mem_calloc(1, sizeof(struct schema_set));
}

void schema_set_free(struct schema_set *set)
{
	if (!set)
		return;
	for (int i = 0; i < set->npatterns; i++) {
		regfree(&set->patterns[i].re);
		free(set->patterns[i].source);
	}
	free(set);
}

static const regex_t *schema_find_pattern(const struct schema_set *set, const char *source)
{
	for (int i = 0; set && i < set->npatterns; i++)
		if (strcmp(set->patterns[i].source, source) == 0)
			return &set->patterns[i].re;
	return NULL;
}

static int schema_prepare_node(struct schema_set *set, const json_t *s, int depth)
{
	if (!json_is_object(s) || depth > SCHEMA_MAX_DEPTH)
		return depth > SCHEMA_MAX_DEPTH ? -1 : 0;
	const char *pat = json_string_value(json_object_get(s, "pattern"));
	if (pat && !schema_find_pattern(set, pat)) {
		if (set->npatterns == SCHEMA_MAX_PATTERNS)
			return -1;
		struct schema_pattern *p = &set->patterns[set->npatterns];
		if (regcomp(&p->re, pat, REG_EXTENDED | REG_NOSUB) != 0)
			return -1;
		p->source = mem_strdup(pat);
		set->npatterns++;
	}
	const char *key;
	json_t *sub;
	json_object_foreach ((json_t *)json_object_get(s, "properties"), key, sub)
		if (schema_prepare_node(set, sub, depth + 1) != 0)
			return -1;
	json_object_foreach ((json_t *)json_object_get(s, "$defs"), key, sub)
		if (schema_prepare_node(set, sub, depth + 1) != 0)
			return -1;
	size_t i;
	json_array_foreach ((json_t *)json_object_get(s, "allOf"), i, sub)
		if (schema_prepare_node(set, sub, depth + 1) != 0)
			return -1;
	static const char *const one[] = {
		"additionalProperties", "items", "not", "if", "then", "else"};
	for (i = 0; i < sizeof one / sizeof one[0]; i++)
		if (schema_prepare_node(set, json_object_get(s, one[i]), depth + 1) != 0)
			return -1;
	return 0;
}

int schema_set_add(struct schema_set *set, const json_t *schema)
{
	return schema_prepare_node(set, schema, 0);
}

static const char *schema_type_of(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "number";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	case JSON_NULL: return "null";
	}
	return "unknown";
}

static bool schema_type_ok(const json_t *type, const json_t *v)
{
	if (json_is_array(type)) {
		size_t i;
		json_t *t;
		json_array_foreach (type, i, t)
			if (schema_type_ok(t, v))
				return true;
		return false;
	}
	const char *want = json_string_value(type);
	const char *have = schema_type_of(v);
	if (!want)
		return true;
	if (strcmp(want, have) == 0)
		return true;
	return strcmp(want, "number") == 0 && json_is_integer(v);
}

/* Counts UTF-8 code points (JSON Schema lengths are in characters, not bytes). */
static size_t schema_utf8_len(const char *s, size_t bytes)
{
	size_t n = 0;
	for (size_t i = 0; i < bytes; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			n++;
	return n;
}

/* One validation: what it needs besides the node and the value at hand. */
struct schema_walk {
	const struct schema_set *set;
	const json_t *root; /* the schema "#/$defs/x" refers into */
	bool doc;           /* a document's fields named by path, not a tool's arguments */
	bool ruled;         /* msg names the rule that failed (an allOf entry's description) */
	bool deep;          /* past SCHEMA_MAX_DEPTH: a failure no "not" or "if" turns around */
	char *msg;
	size_t cap;
};

/* The schema a "$ref" names ("#/$defs/NAME", the only form), or NULL. */
static const json_t *schema_ref(const json_t *root, const json_t *ref)
{
	const char *r = json_string_value(ref);
	if (!r || strncmp(r, "#/$defs/", 8) != 0)
		return NULL;
	return json_object_get(json_object_get(root, "$defs"), r + 8);
}

static bool schema_fail(struct schema_walk *w, const char *where, const char *what)
{
	if (w->doc)
		snprintf(w->msg, w->cap, "%s: %s", *where ? where : "top level", what);
	else
		snprintf(w->msg, w->cap, "%s %s", *where ? where : "The arguments", what);
	return false;
}

/* Where a member or an item of where is, in the walk's words. */
static void schema_sub(const struct schema_walk *w, const char *where, const char *key, size_t i,
		       char *out, size_t cap)
{
	if (w->doc && key)
		snprintf(out, cap, "%.200s%s%.80s", where, *where ? "." : "", key);
	else if (w->doc)
		snprintf(out, cap, "%.200s[%zu]", where, i);
	else if (key)
		snprintf(out, cap, "Argument '%.80s'", key);
	else
		snprintf(out, cap, "%.200s item %zu", *where ? where : "The arguments'", i);
}

static bool schema_node(struct schema_walk *w, const json_t *s, const json_t *v, const char *where,
			int depth);

/* An object's members: the required ones there, none it does not name unless allowed. */
static bool schema_members(struct schema_walk *w, const json_t *s, const json_t *v,
			   const char *where, int depth)
{
	const json_t *props = json_object_get(s, "properties");
	const json_t *more = json_object_get(s, "additionalProperties");
	size_t i;
	json_t *r;
	json_array_foreach (json_object_get(s, "required"), i, r) {
		const char *name = json_string_value(r);
		if (!name || json_object_get(v, name))
			continue;
		if (!w->doc) {
			snprintf(w->msg, w->cap, "Missing required argument '%s'.", name);
			return false;
		}
		char what[160];
		snprintf(what, sizeof what, "\"%.80s\" is missing", name);
		return schema_fail(w, where, what);
	}
	const char *key;
	json_t *val;
	json_object_foreach ((json_t *)v, key, val) {
		const json_t *ps = json_object_get(props, key);
		char sub[320];
		schema_sub(w, where, key, 0, sub, sizeof sub);
		if (!ps && json_is_false(more)) {
			if (!w->doc) {
				snprintf(w->msg, w->cap,
					 "Unexpected argument '%.80s': this tool does not take it.",
					 key);
				return false;
			}
			char what[512];
			int n = snprintf(what, sizeof what,
					 "unknown field \"%.80s\" (known: ", key);
			const char *k;
			json_t *x;
			const char *sep = "";
			json_object_foreach ((json_t *)props, k, x)
				if (n > 0 && (size_t)n < sizeof what) {
					n += snprintf(what + n, sizeof what - (size_t)n, "%s%s",
						      sep, k);
					sep = ", ";
				}
			if (n > 0 && (size_t)n < sizeof what)
				snprintf(what + n, sizeof what - (size_t)n, ")");
			return schema_fail(w, where, what);
		}
		if (!schema_node(w, ps ? ps : more, val, sub, depth + 1))
			return false;
	}
	return true;
}

/* A string's length in characters and its pattern. */
static bool schema_string(struct schema_walk *w, const json_t *s, const json_t *v,
			  const char *where)
{
	char buf[256];
	size_t len = schema_utf8_len(json_string_value(v), json_string_length(v));
	json_int_t max = json_integer_value(json_object_get(s, "maxLength"));
	json_int_t min = json_integer_value(json_object_get(s, "minLength"));
	if (json_object_get(s, "maxLength") && (json_int_t)len > max) {
		snprintf(buf, sizeof buf, "is too long: at most %lld characters, got %zu.",
			 (long long)max, len);
		return schema_fail(w, where, buf);
	}
	if (json_object_get(s, "minLength") && (json_int_t)len < min) {
		snprintf(buf, sizeof buf, "is too short: at least %lld characters.",
			 (long long)min);
		return schema_fail(w, where, buf);
	}
	const char *pat = json_string_value(json_object_get(s, "pattern"));
	if (pat) {
		const regex_t *re = schema_find_pattern(w->set, pat);
		/* A string with an embedded NUL cannot reach here: the parser refuses them. */
		if (!re || regexec(re, json_string_value(v), 0, NULL, 0) != 0) {
			snprintf(buf, sizeof buf, "does not have the expected form (%s).", pat);
			return schema_fail(w, where, buf);
		}
	}
	return true;
}

/* An array's length and items. */
static bool schema_array(struct schema_walk *w, const json_t *s, const json_t *v, const char *where,
			 int depth)
{
	char buf[160];
	json_int_t n = (json_int_t)json_array_size(v);
	const json_t *mn = json_object_get(s, "minItems"), *mx = json_object_get(s, "maxItems");
	const json_t *bound = mn && n < json_integer_value(mn)   ? mn
			      : mx && n > json_integer_value(mx) ? mx
								 : NULL;
	if (bound) {
		snprintf(buf, sizeof buf, "must have %s %lld item%s, not %lld.",
			 bound == mn ? "at least" : "at most", (long long)json_integer_value(bound),
			 json_integer_value(bound) == 1 ? "" : "s", (long long)n);
		return schema_fail(w, where, buf);
	}
	const json_t *items = json_object_get(s, "items");
	size_t i;
	json_t *e;
	json_array_foreach (items ? v : NULL, i, e) {
		char sub[320];
		schema_sub(w, where, NULL, i, sub, sizeof sub);
		if (!schema_node(w, items, e, sub, depth + 1))
			return false;
	}
	return true;
}

/* Whether v is one of en's values, else the message listing them. */
static bool schema_enum(struct schema_walk *w, const json_t *en, const json_t *v, const char *where)
{
	size_t i;
	json_t *e;
	json_array_foreach (en, i, e)
		if (json_equal(e, v))
			return true;
	char list[160] = "", buf[256];
	size_t used = 0;
	json_array_foreach (en, i, e)
		if (json_is_string(e) && used < sizeof list)
			used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
						 i ? ", " : "", json_string_value(e));
	snprintf(buf, sizeof buf, "must be one of: %s.", list);
	return schema_fail(w, where, buf);
}

/* Whether v is valid against s, where the outcome is only a condition (of "if", "not"): its
 * message is not the walk's. */
static bool schema_matches(struct schema_walk *w, const json_t *s, const json_t *v,
			   const char *where, int depth)
{
	bool ruled = w->ruled, ok = schema_node(w, s, v, where, depth);
	w->ruled = ruled;
	return ok;
}

/* The keywords over other schemas: const, allOf (an entry's description is the rule it states:
 * its words follow what failed under it), not, if/then/else. */
static bool schema_logic(struct schema_walk *w, const json_t *s, const json_t *v, const char *where,
			 int depth)
{
	const json_t *c = json_object_get(s, "const"), *x;
	char buf[160], text[120];
	if (c && !json_equal(c, v)) {
		size_t n = json_dumpb(c, text, sizeof text - 1, JSON_ENCODE_ANY | JSON_COMPACT);
		bool fits = n && n < sizeof text;
		text[fits ? n : 0] = 0;
		snprintf(buf, sizeof buf, "must be %s.", fits ? text : "the schema's const");
		return schema_fail(w, where, buf);
	}
	size_t i;
	json_array_foreach (json_object_get(s, "allOf"), i, x) {
		const char *rule = json_string_value(json_object_get(x, "description"));
		if (schema_node(w, x, v, where, depth + 1))
			continue;
		size_t used = w->cap ? strnlen(w->msg, w->cap) : 0;
		if (rule && !w->ruled && !w->deep && used + 1 < w->cap) {
			snprintf(w->msg + used, w->cap - used, " (%s)", rule);
			w->ruled = true;
		}
		return false;
	}
	x = json_object_get(s, "not");
	if (x && schema_matches(w, x, v, where, depth + 1))
		return schema_fail(w, where, "must not match the \"not\" schema.");
	if (w->deep || !(x = json_object_get(s, "if")))
		return !w->deep;
	x = json_object_get(s, schema_matches(w, x, v, where, depth + 1) ? "then" : "else");
	return !w->deep && (!x || schema_node(w, x, v, where, depth + 1));
}

static bool schema_node(struct schema_walk *w, const json_t *s, const json_t *v, const char *where,
			int depth)
{
	char buf[256];
	if (!json_is_object(s))
		return true;
	if (depth > SCHEMA_MAX_DEPTH) {
		w->deep = true;
		return schema_fail(w, where, "are nested too deeply.");
	}
	const json_t *ref = json_object_get(s, "$ref");
	if (ref && !schema_node(w, schema_ref(w->root, ref), v, where, depth + 1))
		return false;
	const json_t *type = json_object_get(s, "type");
	if (type && !schema_type_ok(type, v)) {
		snprintf(buf, sizeof buf, "must be of type %s, not %s.",
			 json_is_string(type) ? json_string_value(type)
					      : "(one of the listed types)",
			 schema_type_of(v));
		return schema_fail(w, where, buf);
	}
	const json_t *en = json_object_get(s, "enum");
	if (json_is_array(en) && !schema_enum(w, en, v, where))
		return false;
	if (json_is_string(v) && !schema_string(w, s, v, where))
		return false;
	if (json_is_number(v)) {
		const json_t *mn = json_object_get(s, "minimum"),
			     *mx = json_object_get(s, "maximum");
		if ((mn && json_number_value(v) < json_number_value(mn)) ||
		    (mx && json_number_value(v) > json_number_value(mx)))
			return schema_fail(w, where, "is out of range.");
	}
	if (json_is_object(v) && !schema_members(w, s, v, where, depth))
		return false;
	if (json_is_array(v) && !schema_array(w, s, v, where, depth))
		return false;
	return schema_logic(w, s, v, where, depth);
}

bool schema_validate(const struct schema_set *set, const json_t *schema, const json_t *instance,
		     char *msg, size_t cap)
{
	struct schema_walk w = {.set = set, .root = schema, .msg = msg, .cap = cap};
	return schema_node(&w, schema, instance, "", 0);
}

bool schema_validate_document(const struct schema_set *set, const json_t *schema,
			      const json_t *instance, char *msg, size_t cap)
{
	struct schema_walk w = {.set = set, .root = schema, .doc = true, .msg = msg, .cap = cap};
	return schema_node(&w, schema, instance, "", 0);
}

/* ---- checking a schema: the draft 2020-12 subset schema_validate() implements ------------ */

static bool schema_bad(char *msg, size_t cap, const char *at, const char *what)
{
	snprintf(msg, cap, "%s: %s", *at ? at : "(root)", what);
	return false;
}

static bool schema_type_name(const json_t *t)
{
	static const char *const names[] = {"object", "array",   "string", "integer",
					    "number", "boolean", "null"};
	for (size_t i = 0; json_is_string(t) && i < sizeof names / sizeof names[0]; i++)
		if (strcmp(json_string_value(t), names[i]) == 0)
			return true;
	return false;
}

static bool schema_check_node(const json_t *root, const json_t *s, const char *at, int depth,
			      char *msg, size_t cap);

/* Whether key holds schemas: properties, $defs (the root's), allOf, items, not, if, then, else. */
static bool schema_applicator(const char *key, int depth)
{
	static const char *const keys[] = {"properties", "allOf", "items", "not",
					   "if",         "then",  "else"};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (strcmp(key, keys[i]) == 0)
			return true;
	return depth == 0 && strcmp(key, "$defs") == 0;
}

/* The schemas under the applicator key of s (at sub), each checked; if, then and else only
 * together, as neither has an effect alone. */
static bool schema_check_under(const json_t *root, const json_t *s, const char *key,
			       const json_t *val, const char *sub, int depth, char *msg, size_t cap)
{
	char p[400];
	const char *k;
	json_t *e;
	size_t i;
	if (strcmp(key, "properties") == 0 || strcmp(key, "$defs") == 0) {
		if (!json_is_object(val))
			return schema_bad(msg, cap, sub, "must be an object of schemas");
		json_object_foreach ((json_t *)val, k, e) {
			snprintf(p, sizeof p, "%.250s/%.120s", sub, k);
			if (!schema_check_node(root, e, p, depth + 1, msg, cap))
				return false;
		}
		return true;
	}
	if (strcmp(key, "allOf") == 0) {
		if (!json_array_size(val))
			return schema_bad(msg, cap, sub, "must be a non-empty array of schemas");
		json_array_foreach (val, i, e) {
			snprintf(p, sizeof p, "%.360s/%zu", sub, i);
			if (!schema_check_node(root, e, p, depth + 1, msg, cap))
				return false;
		}
		return true;
	}
	if (strcmp(key, "if") == 0 && !json_object_get(s, "then") && !json_object_get(s, "else"))
		return schema_bad(msg, cap, sub,
				  "without \"then\" or \"else\" it would be ignored");
	if ((strcmp(key, "then") == 0 || strcmp(key, "else") == 0) && !json_object_get(s, "if"))
		return schema_bad(msg, cap, sub, "without \"if\" it would be ignored");
	return schema_check_node(root, val, sub, depth + 1, msg, cap);
}

static bool schema_check_node(const json_t *root, const json_t *s, const char *at, int depth,
			      char *msg, size_t cap)
{
	if (!json_is_object(s))
		return schema_bad(msg, cap, at, "a schema must be an object");
	if (depth > SCHEMA_MAX_DEPTH)
		return schema_bad(msg, cap, at, "nested too deeply");
	const char *key;
	json_t *val;
	char sub[384];
	json_object_foreach ((json_t *)s, key, val) {
		snprintf(sub, sizeof sub, "%.250s/%.120s", at, key);
		if (strcmp(key, "type") == 0) {
			size_t i;
			json_t *t;
			bool ok = schema_type_name(val) ||
				  (json_is_array(val) && json_array_size(val));
			json_array_foreach (val, i, t)
				ok = ok && schema_type_name(t);
			if (!ok)
				return schema_bad(msg, cap, sub,
						  "not a type name or a list of them");
		} else if (schema_applicator(key, depth)) {
			if (!schema_check_under(root, s, key, val, sub, depth, msg, cap))
				return false;
		} else if (strcmp(key, "const") == 0) {
			continue; /* any JSON value */
		} else if (strcmp(key, "$ref") == 0) {
			if (!json_is_object(schema_ref(root, val)))
				return schema_bad(
					msg, cap, sub,
					"must name one of the root's $defs: #/$defs/NAME");
		} else if (strcmp(key, "required") == 0 || strcmp(key, "enum") == 0 ||
			   strcmp(key, "examples") == 0) {
			size_t i;
			json_t *e;
			if (!json_is_array(val))
				return schema_bad(msg, cap, sub, "must be an array");
			json_array_foreach (val, i, e)
				if (key[0] == 'r' && !json_is_string(e))
					return schema_bad(msg, cap, sub,
							  "must list property names");
		} else if (strcmp(key, "additionalProperties") == 0) {
			if (!json_is_false(val) &&
			    !schema_check_node(root, val, sub, depth + 1, msg, cap))
				return false;
		} else if (strcmp(key, "minLength") == 0 || strcmp(key, "maxLength") == 0 ||
			   strcmp(key, "minItems") == 0 || strcmp(key, "maxItems") == 0) {
			if (!json_is_integer(val) || json_integer_value(val) < 0)
				return schema_bad(msg, cap, sub, "must be a non-negative integer");
		} else if (strcmp(key, "minimum") == 0 || strcmp(key, "maximum") == 0) {
			if (!json_is_number(val))
				return schema_bad(msg, cap, sub, "must be a number");
		} else if (strcmp(key, "pattern") == 0) {
			regex_t re;
			if (!json_is_string(val) ||
			    regcomp(&re, json_string_value(val), REG_EXTENDED | REG_NOSUB) != 0)
				return schema_bad(msg, cap, sub,
						  "not a POSIX extended regular expression");
			regfree(&re);
		} else if (strcmp(key, "description") == 0 || strcmp(key, "title") == 0 ||
			   strcmp(key, "format") == 0 || strcmp(key, "$comment") == 0) {
			if (!json_is_string(val))
				return schema_bad(msg, cap, sub, "must be a string");
		} else if (strcmp(key, "$schema") == 0) {
			if (!json_is_string(val) ||
			    strcmp(json_string_value(val), SCHEMA_DIALECT) != 0)
				return schema_bad(msg, cap, sub, "must be " SCHEMA_DIALECT);
		} else if (strcmp(key, "default") != 0) {
			return schema_bad(msg, cap, sub,
					  "a keyword this server's validator does not implement "
					  "(it would be ignored)");
		}
	}
	return true;
}

bool schema_check(const json_t *schema, char *msg, size_t cap)
{
	return schema_check_node(schema, schema, "", 0, msg, cap);
}
