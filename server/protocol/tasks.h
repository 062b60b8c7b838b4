/* The Tasks extension (io.modelcontextprotocol/tasks, SEP-2663) in the protocol core. A tools/call
 * may be answered with a durable task handle (CreateTaskResult, resultType "task") instead of its
 * result; the client then polls tasks/get, answers the task's input requests with tasks/update,
 * asks tasks/cancel, or names the task in a subscriptions/listen filter (taskIds) to be told of
 * its changes (notifications/tasks).
 *
 * The core keeps no task. The application hands it a task provider (struct mcp_task_provider, in
 * the server description): callbacks that create, read, update and cancel tasks where the
 * application keeps them (a database, memory), each given the caller's principal. A provider
 * binds a task to whoever created it and answers MCP_TASK_NOT_FOUND to anyone else, exactly as
 * for an id it never issued: the core then answers both with the same -32602. The core also
 * asks, on every task method and listen, for the scope of the tool whose call created the task
 * (mcp_task.tool): a token without it gets the same -32602 after the same read, and every
 * refusal leaves the audit row of a refused read (the description's audit hook). The provider tells
 * listeners of a change through the application's change feed (changes.h, struct
 * mcp_task_change, its detail made by mcp_task_detail()).
 *
 * The core does the protocol: the extension advertised in server/discover when there is a
 * provider; the client's declaration checked on every request (never inferred from an earlier
 * one), -32021 where the spec says; tasks/get, tasks/update, tasks/cancel (2026-07-28 only, with
 * the Mcp-Name = taskId header rule; tasks/result and tasks/list stay -32601); the shapes of
 * CreateTaskResult and DetailedTask; task ids in listen filters. */
#ifndef BIKAROO_TASKS_H
#define BIKAROO_TASKS_H

#include "mcp.h"

#define MCP_TASKS_EXTENSION "io.modelcontextprotocol/tasks"

/* Longest task id a provider hands out (bytes); a longer one asked for is an unknown task. */
#define MCP_TASK_ID_MAX 128
/* Longest tool name a task names (bytes, NUL included). */
#define MCP_TASK_TOOL_MAX 129
/* Longest statusMessage (bytes, NUL included); longer is cut. */
#define MCP_TASK_MESSAGE_MAX 512
/* Most task ids one subscriptions/listen request may name. */
#define MCP_TASKS_LISTEN_MAX 64

enum mcp_task_status {
	MCP_TASK_WORKING = 0,
	MCP_TASK_INPUT_REQUIRED,
	MCP_TASK_COMPLETED, /* terminal, with the tool's result (isError true included) */
	MCP_TASK_FAILED,    /* terminal, with a JSON-RPC error: only for protocol-level failures */
	MCP_TASK_CANCELLED, /* terminal */
};

/* One task as its provider reports it. The json members are new references (or NULL) that
 * mcp_task_clear() releases. */
struct mcp_task {
	char id[MCP_TASK_ID_MAX + 1];
	/* The tool whose call created it (the name create() was given): its row's scope guards
	 * every method and listen on the task; a task naming no tool served is nobody's. */
	char tool[MCP_TASK_TOOL_MAX];
	enum mcp_task_status status;
	char message[MCP_TASK_MESSAGE_MAX]; /* statusMessage; "" for none */
	long long created_ms, updated_ms;   /* milliseconds since the epoch */
	long long ttl_ms;                   /* lifetime from creation; < 0: unlimited (null) */
	long poll_ms;                       /* suggested polling interval; 0: none */
	json_t *input_requests; /* input_required: key -> {method, params}, every one outstanding */
	json_t *result;         /* completed: the CallToolResult, exactly as the call returns it */
	json_t *error;          /* failed: {code, message, data?} */
};

void mcp_task_clear(struct mcp_task *t);

/* What a provider's callback answers. */
enum mcp_task_rc {
	MCP_TASK_OK = 0,
	MCP_TASK_NOT_FOUND, /* never issued, expired and purged, or not the caller's: all alike */
	MCP_TASK_ERROR,     /* err is filled (e.g. mcp_unavailable()) */
};

/* Where tasks live: the application's. Every callback may be called from any worker thread at
 * once; who is the caller (borrowed). What it keeps of its arguments (work, responses: the
 * call's) it copies, never holds by reference. */
struct mcp_task_provider {
	/* Creates a task for who, asked by the tool named tool, doing work (the application's own
	 * description of the job: what its handler passed to mcp_task_start(), borrowed). *out is
	 * the task as created, durable already: a get of its id succeeds from the return on.
	 * MCP_TASK_OK or MCP_TASK_ERROR. NULL for a provider whose handlers create their tasks
	 * themselves (then mcp_task_created()). */
	enum mcp_task_rc (*create)(const struct mcp_task_provider *p, const struct fleet_actor *who,
				   const char *tool, json_t *work, struct mcp_task *out,
				   struct mcp_error *err);
	/* The task id as who may see it, into *out. */
	enum mcp_task_rc (*get)(const struct mcp_task_provider *p, const struct fleet_actor *who,
				const char *id, struct mcp_task *out, struct mcp_error *err);
	/* Hands who's responses (borrowed: an object of result objects) to the task id: a key it
	 * is not waiting for (never asked, answered already, superseded) is ignored, and so is the
	 * whole update of a task that waits for none. */
	enum mcp_task_rc (*update)(const struct mcp_task_provider *p, const struct fleet_actor *who,
				   const char *id, json_t *responses, struct mcp_error *err);
	/* Asks the task id of who to stop. Cooperative: a terminal task stays as it is, the work
	 * may still complete or fail. */
	enum mcp_task_rc (*cancel)(const struct mcp_task_provider *p, const struct fleet_actor *who,
				   const char *id, struct mcp_error *err);
	void *state; /* the provider's own (its store); never read by the core */
};

/* ---- for tools/call handlers ---------------------------------------------------------------- */

/* Whether this tools/call may be answered with a task: the server has a provider, the tool's row
 * declares task support, and this request (2026-07-28) declared the extension. */
bool mcp_task_offered(const struct mcp_ctx *ctx);
/* Creates a task doing work (borrowed) through the provider, for the caller, and answers it:
 * *result is the CreateTaskResult. Only when mcp_task_offered() and the provider creates
 * (else -32603, our bug). 0, or -1 with err. */
int mcp_task_start(struct mcp_ctx *ctx, json_t *work, json_t **result, struct mcp_error *err)
	__attribute__((warn_unused_result));
/* The CreateTaskResult of a task the handler created itself (durable already), into *result
 * (new). Only when mcp_task_offered() (else -32603, our bug). 0, or -1 with err. */
int mcp_task_created(struct mcp_ctx *ctx, const struct mcp_task *t, json_t **result,
		     struct mcp_error *err) __attribute__((warn_unused_result));
/* -32021 naming the extension, for a request that can only be served with a task. */
int mcp_tasks_missing(struct mcp_error *err);

/* ---- for providers ------------------------------------------------------------------------ */

/* The DetailedTask of t (new): the Task fields, and inputRequests, result (a complete
 * CallToolResult: resultType "complete" added) or error as its status has them; what tasks/get
 * answers (without its own resultType) and notifications/tasks carry. */
json_t *mcp_task_detail(const struct mcp_task *t);
/* A new unguessable task id (a random UUID, 122 bits of entropy) into out. */
void mcp_task_id_new(char out[MCP_TASK_ID_MAX + 1]);
/* Now, in milliseconds since the epoch. */
long long mcp_task_now_ms(void);

/* ---- inside the core ------------------------------------------------------------------------ */

/* Checks svc's description (rows declaring task support need a provider; the extension is not
 * listed without one) and lists the extension among svc's when there is a provider. 0 or -1. */
struct mcp_service;
int tasks_load(struct mcp_service *svc) __attribute__((warn_unused_result));
/* tasks/get, tasks/update, tasks/cancel (method handlers, 2026-07-28). */
int tasks_get(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err);
int tasks_update(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err);
int tasks_cancel(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err);
/* The task ids of a subscriptions/listen filter (borrowed) that the caller may hear of, into
 * *honoured (new array; NULL when none was asked or the server has no provider); -32021 when the
 * request did not declare the extension. 0, or -1 with err. */
int tasks_listen(struct mcp_ctx *ctx, json_t *filter, json_t **honoured, struct mcp_error *err)
	__attribute__((warn_unused_result));
/* On every result: a "task" result anywhere but from a tools/call that may answer one is -32603
 * (our bug, logged). 0 or -1. */
int tasks_check_result(const struct mcp_ctx *ctx, json_t *result, struct mcp_error *err)
	__attribute__((warn_unused_result));

#endif
