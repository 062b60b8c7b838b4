/* A small JSON Schema (2020-12) validator for the subset our own tool schemas use:
 * type, properties, required, additionalProperties:false, enum, minLength, maxLength,
 * pattern (POSIX extended), minimum, maximum. Unknown keywords are ignored, so keep
 * our schemas inside this subset (tests/unit checks every registered schema). */
#ifndef BIKAROO_SCHEMA_H
#define BIKAROO_SCHEMA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Compiles the patterns of schema (borrowed; the compiled patterns are kept, keyed by their
 * text, until schema_cleanup()). 0 on success. */
int schema_prepare(const json_t *schema) __attribute__((warn_unused_result));

/* Validates instance against schema. On failure writes a one-sentence, actionable message
 * naming the offending property into msg and returns false. */
bool schema_validate(const json_t *schema, const json_t *instance, char *msg, size_t cap);

/* True when schema uses only keywords this validator implements (for tests). */
bool schema_supported(const json_t *schema);

/* Frees compiled patterns. */
void schema_cleanup(void);

#endif
