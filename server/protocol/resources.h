/* Resources: the generic registry over a server description's fixed resources and resource
 * templates, read by resources/list, resources/templates/list, resources/read, the
 * subscriptions of both eras, completion and the tests. */
#ifndef BIKAROO_RESOURCES_H
#define BIKAROO_RESOURCES_H

#include "capability.h"

/* Longest URI accepted by resources/read; longer is "Resource not found". */
#define RESOURCES_URI_MAX 2048
/* Longest template variable value; longer is "Resource not found". */
#define RESOURCES_VALUE_MAX 128
/* Largest document loaded from the resources directory. */
#define RESOURCES_FILE_MAX ((size_t)256 * 1024)
/* Most resource URIs one subscriptions/listen request may name. */
#define RESOURCES_MAX_SUBSCRIPTIONS 256

/* Loads the documents of every file row of svc's description from dir (mcp_service_new), each
 * with the parts it includes from dir (<!--#include file="NAME" -->, resources.c) in place; 0
 * on success, -1 (logged, naming the file and why) otherwise. */
int resources_load(struct mcp_service *svc, const char *dir) __attribute__((warn_unused_result));
void resources_unload(struct mcp_service *svc);

/* The loaded text of the fixed file resource uri (borrowed) and its MIME type, or NULL. */
const char *resources_document(const struct mcp_service *svc, const char *uri,
			       const char **mime_type);

/* The template whose uriTemplate is exactly uri_template, or NULL. */
const struct resource_template_desc *resources_template_find(const struct mcp_server *s,
							     const char *uri_template);

/* {contents:[{uri, mimeType, text}], ttlMs, cacheScope} (new). */
json_t *resources_text_result(const char *uri, const char *mime_type, const char *text, long ttl_ms,
			      bool private_scope);

int resources_list(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err);
int resources_templates_list(struct mcp_ctx *ctx, json_t *params, json_t **result,
			     struct mcp_error *err);
int resources_read(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err);

/* resources/subscribe and resources/unsubscribe (2025-era only): a subscription is taken only
 * for a resource the caller can read now (the checks of resources/read), and kept by the
 * request's transport (struct mcp_request.subscriptions, else the server's default). Without
 * one: -32601. */
int resources_subscribe(struct mcp_ctx *ctx, json_t *params, json_t **result,
			struct mcp_error *err);
int resources_unsubscribe(struct mcp_ctx *ctx, json_t *params, json_t **result,
			  struct mcp_error *err);
/* subscriptions/listen (2026-07-28) where the transport can hold the stream
 * (struct mcp_request.listen), for resource URIs and, with a task provider, task ids (tasks.h):
 * the lists never change at run time, so toolsListChanged and the like are not honoured (left
 * out of the acknowledgement). A URI is honoured only when the caller can read it now, a task
 * only when the caller may get it now; the transport follows what the acknowledgement names. An
 * HTTP request whose Accept refuses SSE gets 406; a transport without streams, -32601. Returns
 * MCP_DEFERRED: the transport answers. */
int resources_listen(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err);
/* Whether this request's connection may subscribe (resources.subscribe in initialize or
 * server/discover). */
bool resources_subscribe_offered(const struct mcp_ctx *ctx);

#endif
