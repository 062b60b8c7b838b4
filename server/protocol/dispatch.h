/* The protocol core's entry points: load a server description once, then hand it every
 * inbound message of every transport. */
#ifndef BIKAROO_DISPATCH_H
#define BIKAROO_DISPATCH_H

#include "mcp.h"

/* Builds what s's tables need at run time (parsed schemas, documents from resources_dir, prompt
 * templates from prompts_dir) into s->loaded. 0, or -1 (logged, nothing kept). Call once,
 * before serving; s and its tables are borrowed until mcp_server_unload(). */
int mcp_server_load(struct mcp_server *s, const char *resources_dir, const char *prompts_dir)
	__attribute__((warn_unused_result));
void mcp_server_unload(struct mcp_server *s);

/* Handles one message for server. Never fails: every outcome is a response (possibly 202, no
 * body). */
void mcp_handle(const struct mcp_server *server, const struct mcp_request *req,
		struct mcp_response *out);
void mcp_response_free(struct mcp_response *r);

#endif
