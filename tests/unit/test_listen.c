/* The listen hub (transport/listen.c) and task changes: notifications/tasks, the DetailedTask
 * with the stream's subscriptionId, go to the listens whose acknowledgement named the task and
 * whose caller owns it, and to no other stream. */
#include <check.h>
#include <string.h>

#include "server/protocol/tasks.h"
#include "server/transport/listen.h"
#include "tests/check_main.h"

/* The feed: the hub's sink, kept to tell it of changes by hand. */
static struct mcp_change_sink *heard;

static void feed_add(struct mcp_change_sink *s)
{
	heard = s;
}

static void feed_remove(struct mcp_change_sink *s)
{
	if (heard == s)
		heard = NULL;
}

static const struct mcp_change_feed feed = {feed_add, feed_remove};

/* One stream: what was written to it. */
struct out {
	json_t *msgs;
};

static void *out_write(void *o, const json_t *msg)
{
	json_array_append_new(((struct out *)o)->msgs, json_deep_copy(msg));
	return NULL;
}

static const struct listen_out_ops ops = {.write = out_write};

static struct fleet_actor marie = {"marie", "customer-care-assistant", FLEET_SCOPE_READ, false, 0,
				   ""};
static struct fleet_actor paul = {"paul", "customer-care-assistant", FLEET_SCOPE_READ, false, 0,
				  ""};

/* Opens listen id for who on o, its acknowledgement naming task_ids (a JSON array text, or
 * NULL: none), and forgets the acknowledgement written. */
static void open_listen(struct listen_hub *h, const struct fleet_actor *who, const char *id,
			const char *task_ids, struct out *o)
{
	json_t *jid = json_string(id);
	json_t *ack = json_pack("{s:s, s:s, s:{s:{s:O}, s:{}}}", "jsonrpc", "2.0", "method",
				"notifications/subscriptions/acknowledged", "params", "_meta",
				"io.modelcontextprotocol/subscriptionId", jid, "notifications");
	if (task_ids)
		json_object_set_new(
			json_object_get(json_object_get(ack, "params"), "notifications"), "taskIds",
			json_loads(task_ids, 0, NULL));
	ck_assert_int_eq(listen_hub_open(h, who, jid, ack, NULL, 0, &ops, o), MCP_LISTEN_OK);
	ck_assert_uint_eq(json_array_size(o->msgs), 1);
	json_array_clear(o->msgs);
	json_decref(ack);
	json_decref(jid);
}

START_TEST(a_task_change_reaches_the_owners_listens_that_named_it)
{
	struct listen_hub *h = listen_hub_new(&feed, 16, 0, 0);
	struct out named = {json_array()}, other_task = {json_array()}, not_named = {json_array()},
		   pauls = {json_array()}, set = {json_array()};
	open_listen(h, &marie, "named", "[\"T1\",\"T2\"]", &named);
	open_listen(h, &marie, "other", "[\"T9\"]", &other_task);
	open_listen(h, &marie, "plain", NULL, &not_named);
	open_listen(h, &paul, "pauls", "[\"T1\"]", &pauls); /* named it, does not own it */
	ck_assert_int_eq(listen_hub_subscribe(h, &marie, "t://x", true, &ops, &set), 0);
	ck_assert_ptr_nonnull(heard);

	struct mcp_task t = {.status = MCP_TASK_COMPLETED,
			     .created_ms = 1000,
			     .updated_ms = 2000,
			     .ttl_ms = 60000,
			     .result = json_pack("{s:[], s:b}", "content", "isError", 1)};
	snprintf(t.id, sizeof t.id, "T1");
	json_t *detail = mcp_task_detail(&t);
	struct mcp_task_change tc = {.id = "T1",
				     .subject = "marie",
				     .client = "customer-care-assistant",
				     .detail = detail};
	struct mcp_change c = {.task = &tc};
	heard->changed(&c, heard->arg);

	ck_assert_uint_eq(json_array_size(named.msgs), 1);
	json_t *n = json_array_get(named.msgs, 0);
	ck_assert_str_eq(json_string_value(json_object_get(n, "method")), "notifications/tasks");
	ck_assert_ptr_null(json_object_get(n, "id"));
	json_t *params = json_deep_copy(json_object_get(n, "params"));
	json_t *meta = json_object_get(params, "_meta");
	ck_assert_str_eq(
		json_string_value(json_object_get(meta, "io.modelcontextprotocol/subscriptionId")),
		"named");
	json_object_del(params, "_meta");
	ck_assert(json_equal(params, detail)); /* the DetailedTask tasks/get answers */
	json_decref(params);
	ck_assert_uint_eq(json_array_size(other_task.msgs), 0);
	ck_assert_uint_eq(json_array_size(not_named.msgs), 0);
	ck_assert_uint_eq(json_array_size(pauls.msgs), 0);
	ck_assert_uint_eq(json_array_size(set.msgs), 0);

	/* A resource change is no task change: nothing for the task listens. */
	struct mcp_change rc = {.uri = "t://y"};
	heard->changed(&rc, heard->arg);
	ck_assert_uint_eq(json_array_size(named.msgs), 1);

	listen_hub_free(h);
	ck_assert_ptr_null(heard);
	json_decref(detail);
	mcp_task_clear(&t);
	json_decref(named.msgs);
	json_decref(other_task.msgs);
	json_decref(not_named.msgs);
	json_decref(pauls.msgs);
	json_decref(set.msgs);
}
END_TEST

CHECK_SUITE(listen)
{
	Suite *s = suite_create("listen");
	TCase *tc = tcase_create("listen");
	tcase_add_test(tc, a_task_change_reaches_the_owners_listens_that_named_it);
	suite_add_tcase(s, tc);
	return s;
}
