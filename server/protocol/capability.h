/* What a capability declares: its descriptor rows (tools, resources, resource templates,
 * prompts) with their handlers, governance, extension parts and audit policy, gathered in one
 * value, struct mcp_capability, that its file exports. The server description (server.h) is a
 * list of such values; the generic registries (tools.c, resources.c, prompts.c, completion.c)
 * read the rows. Strings and tables are static: a capability is data. */
#ifndef BIKAROO_CAPABILITY_H
#define BIKAROO_CAPABILITY_H

#include "describe.h"
#include "mcp.h"

/* Who may see and use a row beyond its scope, and what its handler knows of it, in every row
 * table: the roles (comma-separated, e.g. "customer_care,fleet_operator"; NULL: any role) and
 * whether only a person acting in person may (mcp_may); spec, the application's own
 * description of the row for its handler (ctx->spec while the row is served; never read by
 * the core). */
#define MCP_ACCESS_FIELDS                                                                          \
	const char *roles;                                                                         \
	bool people_only;                                                                          \
	const void *spec

/* How a tool's calls are audited (the description's audit hook writes the rows). */
struct mcp_audit_policy {
	/* The argument naming the call's target (e.g. the id of what it reads), for audit rows
	 * and logs; NULL: none. */
	const char *target;
	/* The handler writes the row of every call it handles (where its outcome is decided); the
	 * registry then writes only the rows of the calls it refused before the handler. */
	bool self;
};

/* Whether a tool's calls may be answered with a task (the Tasks extension, tasks.h): never (the
 * default), when the request declared the extension (the handler decides, mcp_task_offered()),
 * or only so (a request that did not declare it is refused with -32021 before the handler). */
enum mcp_task_support { MCP_TASKS_NEVER = 0, MCP_TASKS_OPTIONAL, MCP_TASKS_REQUIRED };

/* tools/call handler: args is the validated arguments object (borrowed); ctx->tool its row. */
typedef int (*tool_fn)(struct mcp_ctx *ctx, json_t *args, json_t **result, struct mcp_error *err);

struct tool_desc {
	const char *name;
	const char *title;
	const char *description;
	const char *input_schema;  /* JSON text (the application's; checked again at load) */
	const char *output_schema; /* JSON text, or NULL */
	bool read_only, destructive, idempotent;
	unsigned scope;         /* enum fleet_scope bit the token must carry (0: none) */
	const char *scope_name; /* its OAuth name, for challenges */
	MCP_ACCESS_FIELDS;
	tool_fn fn;
	struct mcp_audit_policy audit;
	const struct mcp_governance *governance; /* NULL: none published */
	const struct mcp_ext_meta *ext;          /* NULL: none */
	enum mcp_task_support tasks; /* needs the description's task provider (server.h) */
	/* Test fixtures only (the conformance suite's draft 2020-12 probe, with $defs and $ref):
	 * the input schema is listed as given, and arguments are not validated against it, since
	 * the validator lacks its keywords. Product rows never set it (make lint checks): their
	 * schemas pass scripts/capgen.c at build time and schema_check() at load. */
	bool schema_listed_only;
};

/* A completer: values (new array of strings, at most 100, best first) starting with prefix among
 * what the caller may see, and *total how many exist in all. Returns 0, or -1 with err. */
typedef int (*completion_fn)(struct mcp_ctx *ctx, const char *prefix, json_t **values, long *total,
			     struct mcp_error *err);

enum resource_status { RESOURCE_OK = 0, RESOURCE_NOT_FOUND, RESOURCE_FAILED };

/* Reads one resource: uri as asked, value the template variable (NULL for a fixed resource).
 * RESOURCE_OK: *result is new, usually from resources_text_result(). RESOURCE_NOT_FOUND: the
 * core answers "Resource not found" (-32602, legacy -32002). RESOURCE_FAILED: err is filled. */
typedef enum resource_status (*resource_read_fn)(struct mcp_ctx *ctx, const char *uri,
						 const char *value, json_t **result,
						 struct mcp_error *err);

struct resource_desc {
	const char *uri;
	const char *name;
	const char *title;
	const char *description;
	const char *mime_type;
	/* A document under the resources directory, loaded once at start (the name is this
	 * constant, never derived from a URI); NULL when read is set. */
	const char *file;
	resource_read_fn read;
	long ttl_ms;
	bool private_scope;
	/* enum fleet_scope bit the token must carry to list or read it (0: none; without it a
	 * read is 403 insufficient_scope naming scope_name), and the rights behind it are the
	 * database's (a document's are checked by the registry; a row that reads the business
	 * checks them in its read). */
	unsigned scope;
	const char *scope_name;
	MCP_ACCESS_FIELDS;
	const struct mcp_governance *governance;
	const struct mcp_ext_meta *ext; /* NULL: none */
};

/* A template of the form prefix{var}suffix (RFC 6570 level 1, one variable). */
struct resource_template_desc {
	const char *uri_template;
	const char *name;
	const char *title;
	const char *description;
	const char *mime_type;
	const char *prefix;
	const char *var;
	const char *suffix;
	resource_read_fn read;
	completion_fn complete; /* NULL: no completion for var */
	unsigned scope;         /* as in struct resource_desc */
	const char *scope_name;
	MCP_ACCESS_FIELDS;
	const struct mcp_governance *governance;
	const struct mcp_ext_meta *ext; /* NULL: none */
};

#define PROMPTS_MAX_ARGS 4

struct prompt_arg_desc {
	const char *name;
	const char *title;
	const char *description;
	bool required;
	size_t max_len;              /* in characters; longer is -32602 */
	bool (*valid)(const char *); /* NULL: any text */
	const char *invalid_message; /* -32602 message when valid() refuses */
	completion_fn complete;      /* NULL: no completion */
};

struct prompt_desc;

/* Builds a GetPromptResult for a prompt without a template; args are checked already. */
typedef int (*prompt_render_fn)(struct mcp_ctx *ctx, const struct prompt_desc *p, json_t *args,
				json_t **result, struct mcp_error *err);

struct prompt_desc {
	const char *name;
	const char *title;
	const char *description;
	/* Template under the prompts directory (a constant name), or NULL when render is set.
	 * Format: docs/using.md ("Prompt arguments are data"). */
	const char *file;
	prompt_render_fn render;
	size_t nargs;
	struct prompt_arg_desc args[PROMPTS_MAX_ARGS];
	unsigned scope; /* as in struct resource_desc: the registry checks token and rights */
	const char *scope_name;
	MCP_ACCESS_FIELDS;
	const struct mcp_governance *governance;
};

/* One capability: the rows its file declares. Any table may be empty (NULL, 0). */
struct mcp_capability {
	const char *name; /* its file's business noun, for messages */
	const struct tool_desc *tools;
	size_t ntools;
	const struct resource_desc *resources;
	size_t nresources;
	const struct resource_template_desc *templates;
	size_t ntemplates;
	const struct prompt_desc *prompts;
	size_t nprompts;
};

/* The number of rows of a static table: .tools = t, .ntools = MCP_COUNT(t). */
#define MCP_COUNT(table) (sizeof(table) / sizeof((table)[0]))

#endif
