/* The Tasks extension's provider (server/protocol/tasks.h) over the business workflow: a task is
 * a row of fleet.tasks bound to its creator, its state the case's step (domain/case_tasks.h), so
 * tasks/get answers the same on every instance and after any restart. A declared write whose
 * step leaves its case waiting for someone else opens such a task in its own transaction, for a
 * client that declared the extension (declared.c); its result, once the step is done, is the
 * call's CallToolResult as the tool would return it then. The provider creates none itself. */
#include "task_provider.h"

#include "adapter.h"
#include "domain/case_tasks.h"
#include "server/protocol/tasks.h"

/* A domain status as the provider's answer. */
static enum mcp_task_rc task_provider_rc(enum fleet_status st, struct mcp_error *err)
{
	if (st == FLEET_OK)
		return MCP_TASK_OK;
	if (st == FLEET_NOT_FOUND || st == FLEET_FORBIDDEN)
		return MCP_TASK_NOT_FOUND; /* never issued, expired, another's: all alike */
	adapter_domain_error(st, err);
	return MCP_TASK_ERROR;
}

static enum mcp_task_rc task_provider_get(const struct mcp_task_provider *p,
					  const struct fleet_actor *who, const char *id,
					  struct mcp_task *out, struct mcp_error *err)
{
	(void)p;
	struct case_task f;
	enum fleet_status st = case_tasks_get(who, id, &f);
	if (st == FLEET_OK)
		adapter_task(&f, out);
	case_tasks_free(&f);
	return task_provider_rc(st, err);
}

/* The workflow asks its callers for nothing through a task (its confirmations are asked before
 * the task exists): every update is ignored, once the task is known to be the caller's. */
static enum mcp_task_rc task_provider_update(const struct mcp_task_provider *p,
					     const struct fleet_actor *who, const char *id,
					     json_t *responses, struct mcp_error *err)
{
	(void)p;
	(void)responses;
	struct case_task f;
	enum fleet_status st = case_tasks_get(who, id, &f);
	case_tasks_free(&f);
	return task_provider_rc(st, err);
}

static enum mcp_task_rc task_provider_cancel(const struct mcp_task_provider *p,
					     const struct fleet_actor *who, const char *id,
					     struct mcp_error *err)
{
	(void)p;
	struct case_task f;
	enum fleet_status st = case_tasks_cancel(who, id, &f);
	case_tasks_free(&f);
	return task_provider_rc(st, err);
}

const struct mcp_task_provider task_provider = {
	.get = task_provider_get,
	.update = task_provider_update,
	.cancel = task_provider_cancel,
};
