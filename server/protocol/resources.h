/* The resource registry: fixed resources and resource templates, one descriptor row each, read
 * by resources/list, resources/templates/list, resources/read, completion and the tests. */
#ifndef BIKAROO_RESOURCES_H
#define BIKAROO_RESOURCES_H

#include "completion.h"
#include "mcp.h"

/* Longest URI accepted by resources/read; longer is "Resource not found". */
#define RESOURCES_URI_MAX 2048
/* Longest template variable value (e.g. a bikeId); longer is "Resource not found". */
#define RESOURCES_VALUE_MAX 128
/* Largest document loaded from the resources directory. */
#define RESOURCES_FILE_MAX ((size_t)256 * 1024)

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
};

/* Registers extra rows after the built-in ones (a test-only server's fixtures). Tables are
 * borrowed and must outlive the server; call before resources_init(). */
void resources_set_extra(const struct resource_desc *res, size_t nres,
			 const struct resource_template_desc *tpl, size_t ntpl);

/* Loads the documents of every file row from dir; 0 on success, -1 (logged) otherwise. */
int resources_init(const char *dir) __attribute__((warn_unused_result));
void resources_cleanup(void);

/* The loaded text of the fixed file resource uri (borrowed) and its MIME type, or NULL. */
const char *resources_document(const char *uri, const char **mime_type);

/* The template whose uriTemplate is exactly uri_template, or NULL. */
const struct resource_template_desc *resources_template_find(const char *uri_template);

/* {contents:[{uri, mimeType, text}], ttlMs, cacheScope} (new). */
json_t *resources_text_result(const char *uri, const char *mime_type, const char *text, long ttl_ms,
			      bool private_scope);

int resources_list(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err);
int resources_templates_list(struct mcp_ctx *ctx, json_t *params, json_t **result,
			     struct mcp_error *err);
int resources_read(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err);

/* resources/subscribe and resources/unsubscribe (2025-era only): a subscription is taken only
 * for a resource the caller can read now (the checks of resources/read), and kept by the
 * request's transport (struct mcp_request.subscriptions). Without one: -32601. */
int resources_subscribe(struct mcp_ctx *ctx, json_t *params, json_t **result,
			struct mcp_error *err);
int resources_unsubscribe(struct mcp_ctx *ctx, json_t *params, json_t **result,
			  struct mcp_error *err);
/* subscriptions/listen (2026-07-28) where the transport can hold the stream
 * (struct mcp_request.listen), for resource URIs only: the lists never change at run time, so
 * toolsListChanged and the like are not honoured (left out of the acknowledgement). A URI is
 * honoured only when the caller can read it now. An HTTP request whose Accept refuses SSE gets
 * 406; a transport without streams, -32601. */
int resources_listen(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err);
/* Whether this request's connection may subscribe (resources.subscribe in initialize or
 * server/discover). */
bool resources_subscribe_offered(const struct mcp_ctx *ctx);
/* Subscriptions for requests whose transport keeps none (the test-only conformance server over
 * HTTP). Borrowed; call before serving. */
void resources_set_default_subscriptions(const struct mcp_subscriptions *subs);

#endif
