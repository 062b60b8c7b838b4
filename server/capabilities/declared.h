/* What the build makes of a capability's declaration (server/capabilities/NAME.json, generated
 * by scripts/capgen.c into gen/capabilities.c): the description of its read or write
 * that the generic handlers below serve, each row's .spec (struct declared_row). A read is its
 * SQL function and its declaration; a write, its SQL function, its declaration and, only for
 * behaviour SQL cannot hold, a handler in C that the declaration names. */
#ifndef BIKAROO_DECLARED_H
#define BIKAROO_DECLARED_H

#include "domain/reads.h"
#include "domain/writes.h"
#include "server/protocol/capability.h"

/* A column's JSON form. */
enum declared_json { DECLARED_STRING, DECLARED_INTEGER, DECLARED_BOOLEAN, DECLARED_JSON };

/* One column of the function, in order: its SQL name, its JSON name (NULL: withheld, never
 * shown), form, whether it may be null and whether only some answers carry it (a write's:
 * absent from the others, never filled in as null). */
struct declared_field {
	const char *column;
	const char *name;
	enum declared_json json;
	bool nullable;
	bool optional;
};

/* A refusal's words: the outcome (not_found, forbidden, ... or the function's own word) and
 * its text, where {name} is the argument name's value, {key} the key, {why} the reason. */
struct declared_refusal {
	const char *outcome;
	const char *text;
};

/* A declared read: its query (every column a char * slot of the row) and its JSON. */
struct declared_read {
	struct reads_query query;
	const struct declared_field *fields; /* query.ncolumns of them */
	const char *list;                    /* a list: the document's key for its rows */
	const struct declared_refusal *refusals;
	size_t nrefusals;
	/* A list in pages (0: whole): at most page_size rows a call, then nextCursor, which seals
	 * the column page_after of the last row shown. Its key is the query the server writes:
	 * {"arguments": the call's but cursor, "after": that column's value from the cursor or
	 * null, "limit": page_size + 1} (migrations/README.md, "A read in pages"). */
	size_t page_size;
	int page_after;
};

/* A declared write: its result's columns (an object by column names, writes.h) are fields. */
struct declared_write {
	struct writes_query query;
	const struct declared_field *fields;
	size_t nfields;
	const char *action; /* in words, for refusals: "reporting damage" */
	/* The confirmation asked on the server's side (elicitation) when the function answers
	 * confirmation_required: the form's title and description. */
	const char *confirm_title, *confirm_description;
	const char *key_argument; /* the argument holding the idempotency key, or NULL */
	const struct declared_refusal *refusals;
	size_t nrefusals;
};

/* A row's spec: its read or write, and how a call names the object. */
struct declared_row {
	const struct declared_read *read;
	const struct declared_write *write;
	const char *key; /* a tool's argument, or a template's variable, naming the key */
	const char *mime_type;
	long ttl_ms;
	bool per_user; /* the answer depends on the caller (Cache-Control private) */
};

/* tool_fn of a declared read or write (ctx->spec: its struct declared_row). */
int declared_tool(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err);
/* resource_read_fn of a declared read, for a resource or a template. */
enum resource_status declared_resource(struct mcp_ctx *ctx, const char *uri, const char *value,
				       json_t **result, struct mcp_error *err);

#endif
