-- Whether a write must ask its user first, by the capability's confirmation policy
-- (fleet.capabilities): never; always, until confirmed; client, when the caller's client
-- application requires confirmation (client_apps.requires_confirmation), until confirmed;
-- condition, when the write function's own condition holds (p_condition), until confirmed.
-- Fails closed: an unknown capability asks always, an unknown client right or condition asks.
CREATE OR REPLACE FUNCTION fleet.needs_confirmation(p_capability text, a fleet.acting,
                                                    p_confirmed boolean,
                                                    p_condition boolean DEFAULT false)
RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT NOT coalesce(p_confirmed, false)
           AND CASE coalesce((SELECT c.confirmation FROM fleet.capabilities c
                               WHERE c.name = p_capability), 'always')
                   WHEN 'never' THEN false
                   WHEN 'client' THEN coalesce(a.requires_confirmation, true)
                   WHEN 'condition' THEN coalesce(p_condition, true)
                   ELSE true END
$$;

REVOKE ALL ON FUNCTION fleet.needs_confirmation(text, fleet.acting, boolean, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.needs_confirmation(text, fleet.acting, boolean, boolean) TO fleet_app;
