/* The server description, for the composition root (and tests) that build one: what the
 * application serves (its capabilities' rows, flattened into tables), the hooks for the caller's
 * rights and the audit, the change feed; immutable once built. Loading it (documents, parsed
 * schemas, prompt templates) makes a struct mcp_service, kept apart, which transports serve. */
#ifndef BIKAROO_SERVER_H
#define BIKAROO_SERVER_H

#include "capability.h"
#include "changes.h"
#include "mcp.h"

enum mcp_era { MCP_ERA_MODERN = 1, MCP_ERA_LEGACY = 2 };

struct mcp_method {
	const char *name;
	unsigned eras;          /* enum mcp_era bits */
	const char *name_param; /* params key mirrored in the Mcp-Name header, or NULL */
	mcp_handler_fn fn;
	/* It answers from the description alone: no database, no wait of any kind. A transport
	 * may run it where waiting is not allowed (mcp_request.local_only). */
	bool local;
};

struct mcp_task_provider; /* tasks.h */

/* The application's own settings for its handlers, defined by the application; the core never
 * reads them. */
struct mcp_app;

/* The server description. Built once (by the application, or a test), then only read; its tables
 * and everything it points to are borrowed by the core for the server's life. */
/* Who calls, for the lists and the rows' access (MCP_ACCESS_FIELDS). */
struct mcp_caller {
	unsigned scopes; /* the scope bits the caller may use (token and rights together) */
	char role[32];   /* the caller's role, "" when none is known */
	bool person;     /* a person acting in person (not a machine client or principal) */
	bool any_role;   /* no caller hook: roles are not judged (tests, contract dumps) */
};

struct mcp_server {
	const char *name, *title, *version; /* serverInfo */
	const char *instructions;
	/* Methods beyond the standard MCP ones (tests' fixtures), consulted after them. */
	const struct mcp_method *methods;
	size_t nmethods;
	const struct tool_desc *tools;
	size_t ntools;
	const struct resource_desc *resources;
	size_t nresources;
	const struct resource_template_desc *templates;
	size_t ntemplates;
	const struct prompt_desc *prompts;
	size_t nprompts;
	/* The logger name of the outcome messages tools/call sends (notifications/message). */
	const char *tools_logger;
	/* _meta key under which each descriptor's governance is listed (NULL: not listed). */
	const char *governance_key;
	/* JSON object text: the extensions the server supports, listed under capabilities in
	 * server/discover (NULL: none). */
	const char *extensions;
	/* Who the caller is, as the application's rights state it (struct mcp_caller), for
	 * filtering every list and refusing what a role may not use; 0, or -1 with *err filled
	 * when it cannot be said. Called for every request that lists (a local identity's too:
	 * its rights are the database's); NULL: the actor's scopes, roles not judged. */
	int (*caller)(struct mcp_ctx *ctx, struct mcp_caller *who, struct mcp_error *err);
	/* Leaves the audit row of a tools/call that its tool does not record itself (arguments
	 * borrowed, may be NULL; ctx->tool is the row, NULL for an unknown tool), or of a
	 * template's resources/read refused before its read (tool: the template, ctx->tool NULL,
	 * args {"uri": the URI, "value": its variable's value}), or of a task refused to a task
	 * method or listen (tool: the method, args {"taskId": the id}). NULL: no audit (unit tests,
	 * the conformance fixtures). */
	void (*audit)(struct mcp_ctx *ctx, const char *tool, json_t *args, const char *outcome,
		      const char *detail);
	/* The Tasks extension (tasks.h): where tasks live, the application's (NULL: the extension
	 * is neither advertised nor served, and no tool row may declare task support). */
	const struct mcp_task_provider *tasks;
	/* Where subscriptions hear of changes (NULL: no change feed; listens stay silent). */
	const struct mcp_change_feed *changes;
	/* Subscriptions for requests whose transport keeps none (NULL: none). */
	const struct mcp_subscriptions *default_subscriptions;
	/* Legacy requests without a per-connection logging/setLevel: send notifications/message at
	 * this level and above ("info"...), or none when NULL. */
	const char *legacy_log_level;
	/* The application's settings, for its handlers (ctx->server->app). */
	const struct mcp_app *app;
};

/* The caller of ctx (the description's caller hook, or the actor's scopes and no role). */
int mcp_caller(struct mcp_ctx *ctx, struct mcp_caller *who, struct mcp_error *err)
	__attribute__((warn_unused_result));
/* Whether who may see and use a row of this scope (0: any), roles (comma-separated; NULL:
 * any) and people_only (MCP_ACCESS_FIELDS). */
bool mcp_may(const struct mcp_caller *who, unsigned scope, const char *roles, bool people_only);
#define MCP_MAY(who, row) mcp_may((who), (row)->scope, (row)->roles, (row)->people_only)

/* Fills out's four tables with the rows of caps[0..n-1], in that order (new arrays: release
 * them with mcp_server_release()); the rest of out is left as it is. -1 (logged, nothing kept)
 * when two rows of one kind share a name or URI. */
int mcp_server_compose(struct mcp_server *out, const struct mcp_capability *const *caps, size_t n)
	__attribute__((warn_unused_result));
void mcp_server_release(struct mcp_server *s);

struct ratelimit; /* ratelimit.h */

struct mcp_service_config {
	const char *resources_dir; /* the documents of the file resources */
	const char *prompts_dir;   /* the prompt templates */
	struct ratelimit *limits;  /* volume limits (borrowed), or NULL: none */
};

/* Loads what s's tables need at run time (parsed schemas, documents, prompt templates) into a
 * new service; NULL (logged) when something is missing or malformed. s is borrowed for the
 * service's life. */
struct mcp_service *mcp_service_new(const struct mcp_server *s,
				    const struct mcp_service_config *cfg);
void mcp_service_free(struct mcp_service *svc);
/* The description svc serves (borrowed). */
const struct mcp_server *mcp_service_server(const struct mcp_service *svc);

#endif
