-- Whether a caller (rights as fleet.act_as returns them) may use a capability, by its row of
-- fleet.capabilities (filled by `bikaroo-mcp migrate` from the declarations): the caller's role
-- is one of the capability's roles, the caller is a person when the capability is for people
-- only, and the client application holds the right of the capability's scope (fleet:read: may
-- read, fleet:report: may report). An unknown capability or an unknown caller (no role): false.
CREATE OR REPLACE FUNCTION fleet.may_use(p_capability text, a fleet.acting) RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT coalesce((SELECT a.role = ANY (c.roles)
                            AND (NOT c.people_only OR a.is_human)
                            AND CASE c.scope WHEN 'fleet:read' THEN a.client_may_read
                                             WHEN 'fleet:report' THEN a.client_may_report END
                       FROM fleet.capabilities c
                      WHERE c.name = p_capability), false)
$$;

REVOKE ALL ON FUNCTION fleet.may_use(text, fleet.acting) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.may_use(text, fleet.acting) TO fleet_app;
