-- Whether a write must ask its user first, by its capability's confirmation policy
-- (fleet.capabilities, from its declaration): never; always, until confirmed; client, when the
-- caller's client application requires confirmation (client_apps.requires_confirmation), until
-- confirmed; condition, when the write's own condition holds (p_condition), until confirmed.
-- Fails closed: an unknown capability asks always, an unknown client right or condition asks.
-- And again, whatever the policy, when the user confirmed a question about another version of
-- what the write would change: p_version is the write's version of what its question names,
-- read with its rows locked, and the call's (c.version) the one sealed with the question the
-- user answered. A call confirmed without a version (a question that named none, or a direct
-- caller of the function) is taken as confirmed.
-- The write then answers fleet.write_stop(w, 'confirmation_required', region, effect,
-- p_version => ..., p_changed => ...).
CREATE OR REPLACE FUNCTION fleet.write_asks(w fleet.write_state, p_condition boolean DEFAULT false,
                                            p_version text DEFAULT NULL)
RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT CASE WHEN coalesce((w.call).confirmed, false)
                THEN (w.call).version IS NOT NULL
                     AND (w.call).version IS DISTINCT FROM p_version
                ELSE CASE coalesce((SELECT c.confirmation FROM fleet.capabilities c
                                     WHERE c.name = w.capability), 'always')
                         WHEN 'never' THEN false
                         WHEN 'client' THEN coalesce((w.acting).requires_confirmation, true)
                         WHEN 'condition' THEN coalesce(p_condition, true)
                         ELSE true END END
$$;

REVOKE ALL ON FUNCTION fleet.write_asks(fleet.write_state, boolean, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.write_asks(fleet.write_state, boolean, text) TO fleet_app;
