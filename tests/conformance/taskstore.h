/* The conformance server's task provider (server/protocol/tasks.h): tasks kept in this process's
 * memory, each bound to the subject and client application that created it, purged once its
 * lifetime is over; and the change feed that tells listens of their changes. A task runs one
 * job, described by the fixture that started it (its work object):
 *   {"askAfterMs": N, "ask": {KEY: inputRequest, ...}}  optional: after N ms of work the task
 *       asks these (input_required) and waits until every one is answered (tasks/update);
 *   {"runMs": N}  then N ms of work, after which the fixtures' finish() says how it ended.
 * A worker thread moves tasks along in time and publishes each change; reads move them too, so
 * that a tasks/get never sees a task later than the clock says. Never linked into bikaroo-mcp. */
#ifndef BIKAROO_CONF_TASKSTORE_H
#define BIKAROO_CONF_TASKSTORE_H

#include <jansson.h>

#include "server/protocol/changes.h"
#include "server/protocol/tasks.h"

/* Most live tasks; past it a create is refused (503, retry later). */
#define TASKSTORE_MAX 1024
/* Each task's lifetime from creation (ttlMs) and the polling interval suggested. */
#define TASKSTORE_TTL_MS 300000
#define TASKSTORE_POLL_MS 500

/* How a task's job ended, once its work is done: the tool's result (*result, a CallToolResult)
 * or a JSON-RPC error (*error), both new, from its work and the client's answers (borrowed). */
typedef void (*taskstore_finish_fn)(json_t *work, json_t *answers, json_t **result, json_t **error);

struct taskstore;

/* A new store whose jobs end with finish; its changes go to the sinks of taskstore_feed. Starts
 * the worker thread. */
struct taskstore *taskstore_new(taskstore_finish_fn finish);
/* Stops the worker and forgets every task (call it once nothing can reach the store). */
void taskstore_free(struct taskstore *s);
/* The provider to put in the server description (borrowed, the store's life). */
const struct mcp_task_provider *taskstore_provider(const struct taskstore *s);

/* The change feed of the conformance server: the store's task changes (process-wide: struct
 * mcp_change_feed takes no context). */
extern const struct mcp_change_feed taskstore_feed;

#endif
