/* libFuzzer target: the protocol core (mcp_handle) on arbitrary messages, as HTTP or stdio hand
 * them over. The first byte chooses the transport, which metadata headers are present, whether
 * notifications can be delivered and whether a legacy session exists; the headers follow as
 * NUL-terminated strings, and the rest is the body. No database: every domain call fails as
 * "unavailable", which is a path to fuzz as well. Build and run: make fuzz. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "domain/pg/db.h"
#include "server/capabilities/catalog.h"
#include "server/protocol/dispatch.h"
#include "server/protocol/reqstate.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct fleet_actor fuzz_actor = {
	"marie", "customer-care-assistant", FLEET_SCOPE_READ | FLEET_SCOPE_REPORT, false, 0, ""};

static struct mcp_server fuzz_server;
static struct mcp_service *fuzz_svc;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	mem_install_jansson();
	log_set_level(
		(enum log_level)(LOG_ERROR + 1)); /* quiet: every refused database call would log */
	db_configure(&(struct db_settings){
		.conninfo = "host=/nonexistent-bikaroo-fuzz dbname=none connect_timeout=1"});
	if (catalog_describe(&fuzz_server, NULL) != 0)
		abort();
	fuzz_server.audit = NULL;  /* no database: no audit rows to write */
	fuzz_server.caller = NULL; /* nor rights to read: lists follow the scopes */
	fuzz_server.changes = NULL;
	if (reqstate_init("a fuzzing secret that is long enough for hmac") != 0 ||
	    (fuzz_svc = mcp_service_new(
		     &fuzz_server, &(struct mcp_service_config){.resources_dir = "resources",
								.prompts_dir = "prompts"})) == NULL)
		abort();
	return 0;
}

/* Notifications are serialized, as a transport would. */
static void fuzz_emit(void *ctx, const json_t *msg)
{
	(void)ctx;
	free(json_dumps(msg, JSON_COMPACT));
}

/* Takes the next NUL-terminated string from the input, or NULL when none is left. */
static const char *fuzz_take(const uint8_t **p, const uint8_t *end)
{
	const uint8_t *nul = memchr(*p, '\0', (size_t)(end - *p));
	if (!nul)
		return NULL;
	const char *s = (const char *)*p;
	*p = nul + 1;
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t flags = data[0];
	const uint8_t *p = data + 1, *end = data + size;
	const char *hv = (flags & 0x02) ? fuzz_take(&p, end) : NULL;
	const char *hm = (flags & 0x04) ? fuzz_take(&p, end) : NULL;
	const char *hn = (flags & 0x08) ? fuzz_take(&p, end) : NULL;
	int level = (flags >> 5) & 0x07;
	struct mcp_request req = {
		.transport = (flags & 0x01) ? MCP_TRANSPORT_STDIO : MCP_TRANSPORT_HTTP,
		.body = (const char *)p,
		.body_len = (size_t)(end - p),
		.h_protocol_version = hv,
		.h_method = hm,
		.h_name = hn,
		.actor = &fuzz_actor,
		.reqid = "fuzz",
		.session_version = (flags & 0x10) ? mcp_legacy_version(level % 3) : NULL,
		.session_log_level = (flags & 0x10) ? &level : NULL,
		.per_principal = false,
		.emit = (flags & 0x80) ? fuzz_emit : NULL,
	};
	struct mcp_response out;
	mcp_handle(fuzz_svc, &req, &out);
	mcp_response_free(&out);
	return 0;
}
