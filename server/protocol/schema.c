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
	return schema_prepare_node(set, json_object_get(s, "items"), depth + 1);
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

static bool schema_fail(char *msg, size_t cap, const char *where, const char *what)
{
	snprintf(msg, cap, "%s %s", *where ? where : "The arguments", what);
	return false;
}

static bool schema_node(const struct schema_set *set, const json_t *s, const json_t *v,
			const char *where, char *msg, size_t cap, int depth)
{
	char buf[256];
	if (!json_is_object(s))
		return true;
	if (depth > SCHEMA_MAX_DEPTH)
		return schema_fail(msg, cap, where, "are nested too deeply.");
	const json_t *type = json_object_get(s, "type");
	if (type && !schema_type_ok(type, v)) {
		snprintf(buf, sizeof buf, "must be of type %s, not %s.",
			 json_is_string(type) ? json_string_value(type)
					      : "(one of the listed types)",
			 schema_type_of(v));
		return schema_fail(msg, cap, where, buf);
	}
	const json_t *en = json_object_get(s, "enum");
	if (json_is_array(en)) {
		size_t i;
		json_t *e;
		bool found = false;
		json_array_foreach (en, i, e)
			if (json_equal(e, v))
				found = true;
		if (!found) {
			char list[160] = "";
			size_t used = 0;
			json_array_foreach (en, i, e)
				if (json_is_string(e) && used < sizeof list)
					used += (size_t)snprintf(list + used, sizeof list - used,
								 "%s%s", i ? ", " : "",
								 json_string_value(e));
			snprintf(buf, sizeof buf, "must be one of: %s.", list);
			return schema_fail(msg, cap, where, buf);
		}
	}
	if (json_is_string(v)) {
		size_t len = schema_utf8_len(json_string_value(v), json_string_length(v));
		json_int_t max = json_integer_value(json_object_get(s, "maxLength"));
		json_int_t min = json_integer_value(json_object_get(s, "minLength"));
		if (json_object_get(s, "maxLength") && (json_int_t)len > max) {
			snprintf(buf, sizeof buf, "is too long: at most %lld characters, got %zu.",
				 (long long)max, len);
			return schema_fail(msg, cap, where, buf);
		}
		if (json_object_get(s, "minLength") && (json_int_t)len < min) {
			snprintf(buf, sizeof buf, "is too short: at least %lld characters.",
				 (long long)min);
			return schema_fail(msg, cap, where, buf);
		}
		const char *pat = json_string_value(json_object_get(s, "pattern"));
		if (pat) {
			const regex_t *re = schema_find_pattern(set, pat);
			/* A string with an embedded NUL cannot reach here: the parser refuses them.
			 */
			if (!re || regexec(re, json_string_value(v), 0, NULL, 0) != 0) {
				snprintf(buf, sizeof buf, "does not have the expected form (%s).",
					 pat);
				return schema_fail(msg, cap, where, buf);
			}
		}
	}
	if (json_is_number(v)) {
		const json_t *mn = json_object_get(s, "minimum"),
			     *mx = json_object_get(s, "maximum");
		if ((mn && json_number_value(v) < json_number_value(mn)) ||
		    (mx && json_number_value(v) > json_number_value(mx)))
			return schema_fail(msg, cap, where, "is out of range.");
	}
	if (json_is_object(v)) {
		const json_t *props = json_object_get(s, "properties");
		const json_t *req = json_object_get(s, "required");
		size_t i;
		json_t *r;
		json_array_foreach (req, i, r) {
			const char *name = json_string_value(r);
			if (name && !json_object_get(v, name)) {
				snprintf(buf, sizeof buf, "Missing required argument '%s'.", name);
				snprintf(msg, cap, "%s", buf);
				return false;
			}
		}
		const char *key;
		json_t *val;
		json_object_foreach ((json_t *)v, key, val) {
			const json_t *ps = json_object_get(props, key);
			char sub[128];
			snprintf(sub, sizeof sub, "Argument '%.80s'", key);
			if (!ps) {
				if (json_is_false(json_object_get(s, "additionalProperties"))) {
					snprintf(msg, cap,
						 "Unexpected argument '%.80s': this tool does not "
						 "take it.",
						 key);
					return false;
				}
				continue;
			}
			if (!schema_node(set, ps, val, sub, msg, cap, depth + 1))
				return false;
		}
	}
	const json_t *items = json_object_get(s, "items");
	if (json_is_array(v) && items) {
		size_t i;
		json_t *e;
		json_array_foreach (v, i, e) {
			char sub[160];
			snprintf(sub, sizeof sub, "%s item %zu", *where ? where : "The arguments'",
				 i);
			if (!schema_node(set, items, e, sub, msg, cap, depth + 1))
				return false;
		}
	}
	return true;
}

bool schema_validate(const struct schema_set *set, const json_t *schema, const json_t *instance,
		     char *msg, size_t cap)
{
	return schema_node(set, schema, instance, "", msg, cap, 0);
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

static bool schema_check_node(const json_t *s, const char *at, int depth, char *msg, size_t cap)
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
		} else if (strcmp(key, "properties") == 0) {
			const char *pk;
			json_t *ps;
			if (!json_is_object(val))
				return schema_bad(msg, cap, sub, "must be an object of schemas");
			json_object_foreach (val, pk, ps) {
				char p[256];
				snprintf(p, sizeof p, "%.120s/%.120s", sub, pk);
				if (!schema_check_node(ps, p, depth + 1, msg, cap))
					return false;
			}
		} else if (strcmp(key, "items") == 0) {
			if (!schema_check_node(val, sub, depth + 1, msg, cap))
				return false;
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
			if (!json_is_false(val))
				return schema_bad(msg, cap, sub,
						  "only false is supported (true is the default)");
		} else if (strcmp(key, "minLength") == 0 || strcmp(key, "maxLength") == 0) {
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
	return schema_check_node(schema, "", 0, msg, cap);
}
