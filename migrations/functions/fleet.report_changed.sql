-- What changed about a bike since a question about reporting it was asked, in one sentence the
-- user reads before the question asked again (fleet.report_damaged_bike_as: an answer to a
-- question about an earlier version is never applied). p_since is the version the question
-- named, "<status>|<active case>|<its step>" (empty when none); p_status, p_case and p_state are
-- the bike's now, with its row locked. Statuses said by their labels, steps in words. NULL when
-- p_since is.
CREATE OR REPLACE FUNCTION fleet.report_changed(p_bike text, p_since text, p_status text,
                                                p_case text, p_state text)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
    WITH was AS (
        SELECT split_part(p_since, '|', 1) AS status,
               nullif(split_part(p_since, '|', 2), '') AS case_id,
               split_part(p_since, '|', 3) AS state
    ), said AS (
        SELECT CASE WHEN was.status IS DISTINCT FROM p_status
                    THEN format('bike %s became %s (it was %s)', p_bike,
                                lower(coalesce((SELECT s.label FROM status_codes s
                                                 WHERE s.code = p_status), p_status)),
                                lower(coalesce((SELECT s.label FROM status_codes s
                                                 WHERE s.code = was.status), was.status)))
               END AS status,
               CASE WHEN was.case_id IS NULL AND p_case IS NOT NULL
                    THEN format('case %s was opened for it', p_case)
                    WHEN was.case_id IS NOT NULL AND p_case IS NULL
                    THEN format('case %s was closed', was.case_id)
                    WHEN was.case_id <> p_case
                    THEN format('case %s was closed and case %s opened', was.case_id, p_case)
                    WHEN was.state IS DISTINCT FROM coalesce(p_state, '')
                    THEN format('case %s moved on: it %s', p_case,
                                CASE p_state
                                    WHEN 'inspection_requested' THEN 'is waiting for an inspection'
                                    WHEN 'inspected' THEN 'has been inspected'
                                    WHEN 'awaiting_approval'
                                        THEN 'has a write-off waiting for approval'
                                    ELSE 'is open' END)
               END AS kase
          FROM was
    )
    SELECT CASE WHEN p_since IS NULL THEN NULL
                WHEN said.status IS NULL AND said.kase IS NULL
                THEN format('Bike %s has changed since you were asked.', p_bike)
                ELSE 'Since you were asked, ' || concat_ws(' and ', said.status, said.kase) || '.'
           END
      FROM said
$$;

REVOKE ALL ON FUNCTION fleet.report_changed(text, text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.report_changed(text, text, text, text, text) TO fleet_app;
