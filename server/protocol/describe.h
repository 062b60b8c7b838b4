/* What a descriptor row may carry beside its protocol fields: its governance record (listed in
 * its _meta under the description's governance key) and an extension's part (listed only to a
 * client that declared the extension). Used by the rows (capability.h) and the registries. */
#ifndef BIKAROO_DESCRIBE_H
#define BIKAROO_DESCRIBE_H

#include <jansson.h>
#include <stdbool.h>

struct mcp_ctx;

/* Governance of one capability (a tool, resource, template or prompt), served in its
 * descriptor's _meta under the server's governance_key. Strings are static; NULL is left out. */
struct mcp_governance {
	const char *version;      /* semver of the capability's public contract */
	const char *owner;        /* the team answerable for it */
	const char *domain;       /* the business domain it belongs to */
	const char *risk;         /* none | low | high */
	const char *data;         /* classification of what it reads or writes */
	const char *roles;        /* roles allowed, comma-separated */
	const char *systems;      /* systems it calls, comma-separated */
	const char *confirmation; /* confirmation policy */
	const char *audit;        /* what is recorded */
	const char *lifecycle;    /* stable | deprecated */
	const char *sunset;       /* deprecated: the date it stops working (YYYY-MM-DD) */
	const char *replacement;  /* deprecated: what to use instead */
};

/* An extension's part of a descriptor (a tool, resource or template row), shown only to a
 * request whose client declared that extension (mcp_ctx.client_extensions). */
struct mcp_ext_meta {
	const char *extension; /* its identifier, e.g. "vendor.example/name" */
	/* When set, the declaration's settings must hold an array under setting_key listing
	 * setting_value (e.g. the content types the client can show); NULL: any declaration. */
	const char *setting_key;
	const char *setting_value;
	/* JSON object text merged into the descriptor's _meta and, for a document resource, into
	 * its contents' _meta; checked at load. */
	const char *meta;
	/* The row exists only for such clients: not listed and not read otherwise. */
	bool exclusive;
};

/* A governance record as a JSON object (new; NULL fields left out). */
json_t *mcp_governance_json(const struct mcp_governance *g);
/* Adds descriptor's governance under key (the description's governance_key) to o's _meta, when
 * both are set and the request's revision lists _meta (2025-06-18 on). */
void mcp_describe_governance(const struct mcp_ctx *ctx, const char *key, json_t *o,
			     const struct mcp_governance *g);

/* True when the request's client declared ext's extension (with its required setting). */
bool mcp_ext_declared(const struct mcp_ctx *ctx, const struct mcp_ext_meta *ext);
/* Whether a row with ext (NULL: none) exists for this request: not an exclusive row of an
 * extension the client did not declare. */
bool mcp_ext_offered(const struct mcp_ctx *ctx, const struct mcp_ext_meta *ext);
/* Merges ext's meta into o's _meta when the client declared it (and ext is not NULL). */
void mcp_describe_ext(const struct mcp_ctx *ctx, json_t *o, const struct mcp_ext_meta *ext);
/* 0 when ext (NULL: none) is well formed: an identifier and meta a JSON object; else -1. */
int mcp_ext_check(const struct mcp_ext_meta *ext) __attribute__((warn_unused_result));

#endif
