/* A small JSON Schema (draft 2020-12) validator for the subset our schemas use: type,
 * properties, required, additionalProperties (false, or the schema of the members properties
 * does not name), items, minItems, maxItems, enum, minLength, maxLength, pattern (POSIX
 * extended), minimum, maximum, $ref to the root's $defs ("#/$defs/NAME"), and the keywords that
 * state what one member says of another: const (equal as jansson compares: 1 is not 1.0), allOf,
 * not, if/then/else. An allOf entry's description is the rule it states: when the entry fails,
 * the message names what failed and then the rule, in parentheses. title, description, format,
 * examples, default, $comment and $schema are annotations. schema_check() refuses any
 * other keyword, so a schema cannot rely on one that would be ignored: the build runs it on
 * every schema of the declarations and on the declarations' own schema
 * (server/capabilities/declaration.schema.json), the server again when it loads them. */
#ifndef BIKAROO_SCHEMA_H
#define BIKAROO_SCHEMA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define SCHEMA_DIALECT "https://json-schema.org/draft/2020-12/schema"

/* The compiled patterns of a set of schemas (a loaded server's tools). */
struct schema_set;
struct schema_set *schema_set_new(void);
void schema_set_free(struct schema_set *set);
/* Compiles the patterns of schema (borrowed) into set; 0, or -1 (a pattern that does not
 * compile, too many patterns, too deep). */
int schema_set_add(struct schema_set *set, const json_t *schema)
	__attribute__((warn_unused_result));

/* Validates instance against schema, whose patterns set holds. On failure writes a one-sentence,
 * actionable message naming the offending property into msg and returns false. */
bool schema_validate(const struct schema_set *set, const json_t *schema, const json_t *instance,
		     char *msg, size_t cap);

/* The same for a document (a capability's declaration): the message names the place by its
 * path (tools[0].governance: unknown field "x" (known: ...)), not a tool's argument. */
bool schema_validate_document(const struct schema_set *set, const json_t *schema,
			      const json_t *instance, char *msg, size_t cap);

/* True when schema uses only the keywords above, each well formed; otherwise false, with the
 * first problem and where it is (a JSON pointer) in msg. */
bool schema_check(const json_t *schema, char *msg, size_t cap);

#endif
