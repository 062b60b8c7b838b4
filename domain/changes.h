/* The change feed: PostgreSQL's NOTIFY bikaroo_changes (triggers of migration 0006) carries the
 * key of every business entity whose content changed, and NOTIFY bikaroo_rights (0007) names
 * every caller whose rights changed, both at commit. Entity keys, not MCP URIs: mapping them to
 * resources is the server's business. One listener is one connection of its own, opened only
 * while someone subscribes. */
#ifndef BIKAROO_CHANGES_H
#define BIKAROO_CHANGES_H

#include <stdbool.h>

struct changes;

/* What one notification says; exactly one member is set. */
struct change {
	const char *entity;  /* an entity whose content changed: "bike:VL-2048", "case:IC-1001",
				"status_codes" */
	const char *subject; /* a principal whose role, regions or activity changed */
	const char *client;  /* a client application whose rights changed */
};

/* Connects and LISTENs; NULL (logged) when the database cannot be reached. */
struct changes *changes_open(void);
/* The socket to poll for input. */
int changes_fd(const struct changes *ch);
/* Reads what has arrived and calls fn(change, arg) for each notification (one it cannot read
 * is logged and skipped). Returns 0, or -1 when the connection is lost (close it and open a
 * new one; changes meanwhile are not replayed). */
int changes_drain(struct changes *ch, void (*fn)(const struct change *c, void *arg), void *arg);
void changes_close(struct changes *ch);

#endif
