-- Whether a write must ask its user first, by its capability's confirmation policy
-- (fleet.capabilities, from its declaration): never; always, until confirmed; client, when the
-- caller's client application requires confirmation (client_apps.requires_confirmation), until
-- confirmed; condition, when the write's own condition holds (p_condition), until confirmed.
-- Fails closed: an unknown capability asks always, an unknown client right or condition asks.
-- The write then answers fleet.write_stop(w, 'confirmation_required', region, effect).
CREATE OR REPLACE FUNCTION fleet.write_asks(w fleet.write_state, p_condition boolean DEFAULT false)
RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT NOT coalesce((w.call).confirmed, false)
           AND CASE coalesce((SELECT c.confirmation FROM fleet.capabilities c
                               WHERE c.name = w.capability), 'always')
                   WHEN 'never' THEN false
                   WHEN 'client' THEN coalesce((w.acting).requires_confirmation, true)
                   WHEN 'condition' THEN coalesce(p_condition, true)
                   ELSE true END
$$;

REVOKE ALL ON FUNCTION fleet.write_asks(fleet.write_state, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.write_asks(fleet.write_state, boolean) TO fleet_app;
