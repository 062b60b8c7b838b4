-- The version of a case a question about it names: its last event ("<event id>@<its time>"),
-- since every step, withdrawal and report on it writes one, under the lock of its bike's row.
CREATE OR REPLACE FUNCTION fleet.case_version(p_case text)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
    SELECT e.event_id || '@' || extract(epoch FROM e.at)
      FROM case_events e
     WHERE e.case_id = p_case
     ORDER BY e.event_id DESC
     LIMIT 1
$$;

REVOKE ALL ON FUNCTION fleet.case_version(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_version(text) TO fleet_app;
