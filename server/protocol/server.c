/* The server description (see server.h): composing one from capabilities, and the caller's
 * caller every list filters by. Loading it is dispatch.c's (mcp_service_new). */
#include "server.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/csv.h"
#include "common/log.h"
#include "common/mem.h"

int mcp_caller(struct mcp_ctx *ctx, struct mcp_caller *who, struct mcp_error *err)
{
	*who = (struct mcp_caller){.scopes = ctx->req->actor->scopes,
				   .person = !ctx->req->actor->machine,
				   .any_role = !ctx->server->caller};
	return who->any_role ? 0 : ctx->server->caller(ctx, who, err);
}

bool mcp_may(const struct mcp_caller *who, unsigned scope, const char *roles, bool people_only)
{
	if ((scope && !(scope & who->scopes)) || (people_only && !who->person))
		return false;
	return !roles || who->any_role || csv_list_has(roles, who->role);
}

/* ---- composing a description from capabilities ---------------------------------------- */

/* Appends n rows of size sz at src to the table *dst of *len rows (new memory). */
static void *mcp_rows_append(const void *dst, size_t *len, const void *src, size_t n, size_t sz)
{
	char *t = mem_alloc((*len + n) * sz + 1);
	if (*len)
		memcpy(t, dst, *len * sz);
	if (n)
		memcpy(t + *len * sz, src, n * sz);
	free((void *)dst);
	*len += n;
	return t;
}

/* 0 when no two of the n names (at stride sz from first) are equal; else logs the first. */
static int mcp_rows_unique(const char *kind, const void *rows, size_t n, size_t sz, size_t off)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			const char *a = *(const char *const *)((const char *)rows + i * sz + off);
			const char *b = *(const char *const *)((const char *)rows + j * sz + off);
			if (strcmp(a, b) == 0) {
				log_error("server description: two %s rows are named %s", kind, a);
				return -1;
			}
		}
	return 0;
}

int mcp_server_compose(struct mcp_server *out, const struct mcp_capability *const *caps, size_t n)
{
	out->tools = NULL;
	out->resources = NULL;
	out->templates = NULL;
	out->prompts = NULL;
	out->ntools = out->nresources = out->ntemplates = out->nprompts = 0;
	for (size_t i = 0; i < n; i++) {
		const struct mcp_capability *c = caps[i];
		out->tools = mcp_rows_append(out->tools, &out->ntools, c->tools, c->ntools,
					     sizeof *c->tools);
		out->resources = mcp_rows_append(out->resources, &out->nresources, c->resources,
						 c->nresources, sizeof *c->resources);
		out->templates = mcp_rows_append(out->templates, &out->ntemplates, c->templates,
						 c->ntemplates, sizeof *c->templates);
		out->prompts = mcp_rows_append(out->prompts, &out->nprompts, c->prompts,
					       c->nprompts, sizeof *c->prompts);
	}
	if (mcp_rows_unique("tool", out->tools, out->ntools, sizeof *out->tools,
			    offsetof(struct tool_desc, name)) != 0 ||
	    mcp_rows_unique("resource", out->resources, out->nresources, sizeof *out->resources,
			    offsetof(struct resource_desc, uri)) != 0 ||
	    mcp_rows_unique("resource template", out->templates, out->ntemplates,
			    sizeof *out->templates,
			    offsetof(struct resource_template_desc, uri_template)) != 0 ||
	    mcp_rows_unique("prompt", out->prompts, out->nprompts, sizeof *out->prompts,
			    offsetof(struct prompt_desc, name)) != 0) {
		mcp_server_release(out);
		return -1;
	}
	return 0;
}

void mcp_server_release(struct mcp_server *s)
{
	free((void *)s->tools);
	free((void *)s->resources);
	free((void *)s->templates);
	free((void *)s->prompts);
	s->tools = NULL;
	s->resources = NULL;
	s->templates = NULL;
	s->prompts = NULL;
	s->ntools = s->nresources = s->ntemplates = s->nprompts = 0;
}
