/* The resource change feed over LISTEN/NOTIFY (see changes.h). */
#include "changes.h"

#include <stdlib.h>

#include "../common/log.h"
#include "../common/mem.h"
#include "db.h"

struct changes {
	PGconn *pg;
};

struct changes *changes_open(void)
{
	PGconn *pg = db_open();
	if (!pg)
		return NULL;
	PGresult *r = PQexec(pg, "LISTEN bikaroo_resources");
	bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	if (!ok)
		log_error("cannot LISTEN for resource changes: %s", PQresultErrorMessage(r));
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

int changes_drain(struct changes *ch, void (*fn)(const char *uri, void *arg), void *arg)
{
	if (!PQconsumeInput(ch->pg) || PQstatus(ch->pg) != CONNECTION_OK)
		return -1;
	for (PGnotify *n; (n = PQnotifies(ch->pg)) != NULL; PQfreemem(n))
		fn(n->extra, arg);
	return 0;
}

void changes_close(struct changes *ch)
{
	if (!ch)
		return;
	PQfinish(ch->pg);
	free(ch);
}
