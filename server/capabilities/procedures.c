/* Procedures: what staff do with a damaged bike, as a document (bikaroo://procedures/damaged-bike,
 * resources/damaged-bike.md) and as the prompt investigate-damaged-bike
 * (prompts/investigate-damaged-bike.md) that guides an assistant through it. Both are texts
 * shipped with the server; the prompt's arguments are inserted as literal text. */
#include "adapter.h"
#include "domain/bikes.h"

static const struct mcp_governance procedure_governance = {
	.version = "1.0.0",
	ADAPTER_GOV_STABLE,
	.risk = "none",
	.data = "internal: staff procedure",
	ADAPTER_GOV_READ_ONLY,
	.systems = "none (a document shipped with the server)",
	.audit = "none",
};

static const struct mcp_governance investigate_governance = {
	.version = "1.0.0",
	ADAPTER_GOV_STABLE,
	.risk = "low",
	.data = "internal: staff procedure; the symptom argument is inserted as literal text",
	.roles = ADAPTER_READERS,
	.systems = "none (a template shipped with the server)",
	.confirmation = "none (it only guides; report_damaged_bike has its own)",
	.audit = "none (the tool calls it leads to are audited)",
};

static const struct resource_desc procedures_resources[] = {{
	.uri = "bikaroo://procedures/damaged-bike",
	.name = "damaged-bike-procedure",
	.title = "Procedure: damaged bike",
	.description = "What staff do when a bike is reported damaged: safety first, check the "
		       "bike, report it, follow the case (Markdown).",
	.mime_type = "text/markdown",
	.file = "damaged-bike.md",
	.ttl_ms = ADAPTER_DOC_TTL_MS,
	ADAPTER_SCOPE_READ,
	.governance = &procedure_governance,
}};

static const struct prompt_desc procedures_prompts[] = {{
	.name = "investigate-damaged-bike",
	.title = "Investigate a damaged bike",
	.description = "Guides you through the damaged-bike procedure for one bike: check its "
		       "status, make it safe, report the damage and follow the case.",
	.file = "investigate-damaged-bike.md",
	.nargs = 2,
	.args =
		{
			{
				.name = "bikeId",
				.title = "Bike id",
				.description =
					"The bike's id as printed on its frame, e.g. VL-2048.",
				.required = true,
				.max_len = 16,
				.valid = bikes_id_valid,
				.invalid_message = "Invalid argument bikeId: expected VL- followed "
						   "by 4 to 6 digits, e.g. VL-2048",
				.complete = adapter_complete_bike_id,
			},
			{
				.name = "symptom",
				.title = "Symptom",
				.description = "What the rider or agent observed, in their own "
					       "words (optional, at most 1000 characters).",
				.max_len = 1000,
			},
		},
	ADAPTER_SCOPE_READ,
	.governance = &investigate_governance,
}};

const struct mcp_capability capability_procedures = {
	.name = "procedures",
	.resources = procedures_resources,
	.nresources = MCP_COUNT(procedures_resources),
	.prompts = procedures_prompts,
	.nprompts = MCP_COUNT(procedures_prompts),
};
