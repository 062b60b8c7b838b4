/* What every capability shares: the application settings its handlers read, the views' links, the
 * mapping of domain failures to MCP answers, what a caller is shown of a declared row, a write's
 * result and a workflow task, the audit entry of a call, the id completers, and
 * the hooks the server description gives the protocol core (the caller's effective scopes, the
 * audit row of a tools/call). No capability includes another; they all include this. */
#ifndef BIKAROO_ADAPTER_H
#define BIKAROO_ADAPTER_H

#include "common/mem.h"
#include "domain/audit.h"
#include "domain/types.h"
#include "server/protocol/capability.h"
#include "server/protocol/server.h"

/* The application's settings (struct mcp_server.app), reached by handlers through
 * adapter_settings(). */
struct mcp_app {
	long confirm_ttl_s; /* seconds a report's confirmation request stays valid */
};

/* The settings of ctx's server (never NULL: defaults when the description has none). */
const struct mcp_app *adapter_settings(const struct mcp_ctx *ctx);

/* ---- the views (MCP Apps): their URIs and the links rows carry to them ----------------------- */

#define ADAPTER_UI_EXTENSION "io.modelcontextprotocol/ui"
#define ADAPTER_UI_MIME_TYPE "text/html;profile=mcp-app"
#define ADAPTER_UI_CARD_URI "ui://bikaroo/bike-card"
#define ADAPTER_UI_TIMELINE_URI "ui://bikaroo/case-timeline"
#define ADAPTER_UI_QUEUE_URI "ui://bikaroo/case-queue"

/* A tool's link to the bike card (get_bike_status, report_damaged_bike); the case template's
 * link to the timeline; the work queues' link to the queue (list_cases). Shown only to clients
 * that declared the extension. The views' own documents: their rendering hints
 * (_meta.ui.prefersBorder), rows that exist only for clients that declared the extension.
 * Declarations name them ("ext"). */
extern const struct mcp_ext_meta adapter_card_link;
extern const struct mcp_ext_meta adapter_timeline_link;
extern const struct mcp_ext_meta adapter_queue_link;
extern const struct mcp_ext_meta adapter_view_document;

/* ---- answers ----------------------------------------------------------------------------- */

/* The answer when PostgreSQL is unavailable (or did not answer within the call's deadline) for
 * a read, whatever the method: -32603 "The fleet database is unavailable right now: nothing was
 * done", HTTP 503 + Retry-After; never a result. A write says what it knows instead. */
int adapter_unavailable(struct mcp_error *err);
/* A domain call that failed for want of the database or of a working statement:
 * FLEET_UNAVAILABLE is adapter_unavailable(), anything else -32603 "Internal error". */
int adapter_domain_error(enum fleet_status st, struct mcp_error *err);
/* A failed read behind a resource: no scope -> 403 insufficient_scope on HTTP (like
 * tools/call); no right or not visible -> not found (no existence oracle); the rest ->
 * adapter_domain_error (RESOURCE_FAILED). */
enum resource_status adapter_read_failure(struct mcp_ctx *ctx, enum fleet_status st,
					  struct mcp_error *err);
/* The text of a JSON value as a CallToolResult with structured content (sc stolen). */
json_t *adapter_structured(json_t *sc);

/* ---- rows and tasks as answers: what a caller is shown of a declared row (declared.h) ------ */

struct declared_read;
struct declared_write;
struct case_task;
struct mcp_task;
/* A declared read's rows (n of them, each r->query.ncolumns texts, borrowed, as PostgreSQL sends
 * them) as its document, written into b as JSON text (written once, never a tree): the first
 * row's object of its shown columns by their JSON names and forms, in declared order (withheld
 * columns are never shown), or {list: [objects]}; a list in pages shows at most its page and,
 * when there are more rows, nextCursor, the cursor of the next page (sealed for ctx's caller,
 * tool and args: NULL for a whole list). */
void adapter_document(struct mem_buf *b, const struct mcp_ctx *ctx, const struct declared_read *r,
		      char *const *rows, size_t n, json_t *args);
/* A write's result (JSON text of an object by column names, borrowed) as its tool shows it:
 * the shown columns by their JSON names (new), or NULL, logged, when the result is not what w
 * declares (a column it does not list, a value of another form, a null it does not allow):
 * our bug, in the write function, and never shown. */
json_t *adapter_result(const struct declared_write *w, const char *result);
/* A workflow task (domain/case_tasks.h) as the Tasks extension's (json members new: release
 * with mcp_task_clear): its status, message and times, and once completed the CallToolResult
 * its call returns then, shown as the declared write of the tool that opened it shows its
 * result; isError with the task's message when is_error, or when no tool serves it any more. */
void adapter_task(const struct case_task *f, struct mcp_task *t);

/* ---- audit ------------------------------------------------------------------------------- */

/* The request reference every audit row is written with (the request_id argument of the domain's
 * audited calls): the request's trace id and a space, the token's reference (fleet_actor.
 * token_ref, never the token) and a space, each when there is one, then its JSON-RPC id.
 * fleet.audit_ref splits it into the row's trace_id, token_ref and request_id. */
#define ADAPTER_REF_MAX (33 + FLEET_TOKEN_REF_MAX + 96)
void adapter_request_ref(const struct mcp_ctx *ctx, char *buf, size_t cap);

/* Where an audit entry's texts live while the call runs. */
struct adapter_call {
	char digest[65];             /* SHA-256 hex of the canonical arguments */
	char reqid[ADAPTER_REF_MAX]; /* adapter_request_ref() */
	struct audit_entry entry;    /* tool and target from the row being called (ctx->tool) */
};
/* The audit entry of the tools/call in ctx with args (borrowed, may be NULL): its tool's name
 * and the argument its audit policy names as target, from the row, never written again by the
 * capability; outcome and detail are left for whoever writes the row. */
void adapter_call_entry(struct mcp_ctx *ctx, json_t *args, struct adapter_call *c);

/* The audit entry of a resources/read of an object (uri; value: the template's variable, its
 * target): the template's URI template (ctx->label) as its "tool". */
void adapter_read_entry(struct mcp_ctx *ctx, const char *uri, const char *value,
			struct adapter_call *c);

/* ---- hooks of the server description ------------------------------------------------------ */

/* struct mcp_server.caller: the scopes (token ∩ client application), role and whether a person
 * acts, as PostgreSQL states them (calls still apply the perimeter per object). */
int adapter_caller(struct mcp_ctx *ctx, struct mcp_caller *who, struct mcp_error *err);
/* struct mcp_server.audit: the audit row of one tools/call (who, which tool and target, a
 * digest of the arguments, the outcome, the request id); never the arguments, never a token. */
void adapter_audit(struct mcp_ctx *ctx, const char *tool, json_t *args, const char *outcome,
		   const char *detail);

/* ---- shared business keys ----------------------------------------------------------------- */

/* completion_fn of a bike id (a template's {bikeId}, a prompt's bikeId): the caller's perimeter
 * only, prefix match, id order; nothing for a caller who may not read. */
int adapter_complete_bike_id(struct mcp_ctx *ctx, const char *prefix, json_t **values, long *total,
			     struct mcp_error *err);
/* completion_fn of a case id (a template's {caseId}, a prompt's caseId): the cases the caller
 * may read, as bikaroo://cases/{caseId} reads them; prefix match (with or without IC-), the
 * active cases first, each kind in id order; nothing for a caller who may not read. */
int adapter_complete_case_id(struct mcp_ctx *ctx, const char *prefix, json_t **values, long *total,
			     struct mcp_error *err);

#endif
