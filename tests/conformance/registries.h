/* Registers the conformance server's resource, template, prompt and completion fixtures
 * (fixtures.h) with the resources and prompts registries' extension hooks. */
#ifndef BIKAROO_CONF_REGISTRIES_H
#define BIKAROO_CONF_REGISTRIES_H

/* Call once, before resources_init() and prompts_init(). */
void conf_register_catalog(void);

#endif
