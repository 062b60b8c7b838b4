-- What happened to a case since a question about it was asked, in one sentence the user reads
-- before the question asked again (fleet.case_step_as: an answer to a question about an earlier
-- version of the case is never applied). p_since is the version the question named,
-- fleet.case_version's: the case's events after it, in order, each by its person's name
-- (fleet.case_names) with what they did, a write-off request with its note. NULL when p_since
-- is. Read under the caller's identity, for a case the caller sees.
CREATE OR REPLACE FUNCTION fleet.case_changed(p_case text, p_since text)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
    SELECT CASE WHEN p_since IS NULL THEN NULL
                WHEN count(e.event_id) = 0
                THEN format('Case %s has changed since you were asked.', p_case)
                ELSE 'Since you were asked, ' || string_agg(format(
                    CASE e.kind
                        WHEN 'opened' THEN '%s opened the case'
                        WHEN 'report_added' THEN '%s filed damage report %s'
                        WHEN 'inspection_requested' THEN '%s asked for an inspection'
                        WHEN 'inspection_cancelled' THEN '%s withdrew the inspection request'
                        WHEN 'inspected' THEN '%s recorded the inspection'
                        WHEN 'write_off_requested' THEN '%s asked for a write-off'
                        WHEN 'write_off_approved' THEN '%s approved the write-off'
                        WHEN 'write_off_refused' THEN '%s refused the write-off'
                        WHEN 'write_off_withdrawn' THEN '%s withdrew the write-off request'
                        WHEN 'closed' THEN '%s closed the case'
                        ELSE '%s changed the case' END,
                    coalesce((SELECT n.name FROM case_names(p_case) n
                               WHERE n.kind = 'subject' AND n.id = e.actor_subject),
                             'another fleet operator'),
                    e.report_id)
                    || CASE WHEN e.kind = 'write_off_requested' AND e.note IS NOT NULL
                            THEN format(', noting "%s"', e.note) ELSE '' END,
                    ', then ' ORDER BY e.event_id) || '.' END
      FROM case_events e
     WHERE e.case_id = p_case
       AND e.event_id > coalesce(substring(p_since FROM '^([0-9]{1,18})@')::bigint, 0)
$$;

REVOKE ALL ON FUNCTION fleet.case_changed(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_changed(text, text) TO fleet_app;

