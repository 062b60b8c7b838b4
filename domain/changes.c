/* The change feed over LISTEN/NOTIFY (see changes.h). */
#include "changes.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "domain/pg/db.h"

struct changes {
	PGconn *pg;
};

struct changes *changes_open(void)
{
	PGconn *pg = db_open_listen();
	if (!pg)
		return NULL;
	PGresult *r = PQexec(pg, "LISTEN bikaroo_changes; LISTEN bikaroo_rights");
	bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	if (!ok)
		log_error("cannot LISTEN for changes: %s", PQresultErrorMessage(r));
	PQclear(r);
	if (!ok) {
		PQfinish(pg);
		return NULL;
	}
	struct changes *ch = mem_alloc(sizeof *ch);
	ch->pg = pg;
	return ch;
}

int changes_fd(const struct changes *ch)
{
	return PQsocket(ch->pg);
}

/* A notification as a change; false when it is not one of ours. */
static bool changes_read(const PGnotify *n, struct change *c)
{
	*c = (struct change){0};
	if (strcmp(n->relname, "bikaroo_changes") == 0)
		c->entity = n->extra;
	else if (strcmp(n->relname, "bikaroo_rights") == 0 && strncmp(n->extra, "subject:", 8) == 0)
		c->subject = n->extra + 8;
	else if (strcmp(n->relname, "bikaroo_rights") == 0 && strncmp(n->extra, "client:", 7) == 0)
		c->client = n->extra + 7;
	return (c->entity || c->subject || c->client) && *n->extra;
}

int changes_drain(struct changes *ch, void (*fn)(const struct change *c, void *arg), void *arg)
{
	if (!PQconsumeInput(ch->pg) || PQstatus(ch->pg) != CONNECTION_OK)
		return -1;
	for (PGnotify *n; (n = PQnotifies(ch->pg)) != NULL; PQfreemem(n)) {
		struct change c;
		if (changes_read(n, &c))
			fn(&c, arg);
		else
			log_warn("change feed: unreadable notification on %s", n->relname);
	}
	return 0;
}

void changes_close(struct changes *ch)
{
	if (!ch)
		return;
	PQfinish(ch->pg);
	free(ch);
}
