/* The Tasks extension's provider over the business workflow (task_provider.c): tasks as rows of
 * fleet.tasks (domain/case_tasks.h), their state the case's step. */
#ifndef BIKAROO_TASK_PROVIDER_H
#define BIKAROO_TASK_PROVIDER_H

#include "server/protocol/tasks.h"

/* struct mcp_server.tasks. */
extern const struct mcp_task_provider task_provider;

#endif
