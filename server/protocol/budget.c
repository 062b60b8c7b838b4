/* The caller's volume budget for one request (see budget.h). */
#include "budget.h"

#include "common/log.h"
#include "common/metrics.h"
#include "ratelimit.h"
#include "service.h"

int mcp_budget_take(struct mcp_ctx *ctx, bool write, const char *what, struct mcp_error *err)
{
	long wait = 0;
	const struct fleet_actor *who = ctx->req->actor;
	if (ratelimit_take(ctx->service->limits, who->subject, who->client_id, write, &wait) ==
	    RATELIMIT_OK)
		return 0;
	log_msg(LOG_WARN, ctx->req->reqid, "%s refused: %s limit, retry in %lds", what,
		write ? "write" : "read", wait);
	const char *reason[] = {write ? "write" : "read"};
	metrics_add(&metrics_rate_limited, reason, 1);
	ctx->outcome = "rate_limited";
	return mcp_limited(err, wait);
}
