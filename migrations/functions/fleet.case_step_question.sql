-- The question the user confirms before a step of the case workflow (fleet.case_step_as, outcome
-- confirmation_required; the server asks it word for word): the step, the bike, the case and
-- its region by name, then what follows, in the words of the people who work the case: never a
-- tool, a code or a client id. p_event: the step's event (fleet.case_steps); p_choice: its
-- finding, resolution or decision; p_status, p_status_after: the bike's status now and after
-- the step (fleet.status_codes, said by their labels); p_asked_by: who asked for the write-off
-- being decided (named by fleet.case_names) and p_asked_note, the note they asked it with.
-- Read under the caller's identity.
CREATE OR REPLACE FUNCTION fleet.case_step_question(p_event text, p_choice text, p_case text,
                                                    p_bike text, p_region text, p_status text,
                                                    p_status_after text, p_asked_by text,
                                                    p_asked_note text)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
    WITH w AS (
        SELECT format('bike %s (case %s, %s)', p_bike, p_case, rg.name) AS bike, rg.name AS region,
               lower(coalesce((SELECT s.label FROM status_codes s WHERE s.code = p_status),
                              p_status)) AS now,
               lower(coalesce((SELECT s.label FROM status_codes s WHERE s.code = p_status_after),
                              p_status_after)) AS after,
               coalesce((SELECT n.name FROM case_names(p_case) n
                          WHERE n.kind = 'subject' AND n.id = p_asked_by),
                        p_asked_by, 'another fleet operator') AS asker,
               CASE WHEN p_asked_note IS NOT NULL THEN format(', noting "%s"', p_asked_note)
                    ELSE '' END AS noting
          FROM (SELECT coalesce((SELECT r.name FROM regions r WHERE r.code = p_region),
                                p_region) AS name) rg
    )
    SELECT CASE p_event
        WHEN 'inspection_requested' THEN
            format('Ask the workshop to inspect %s? The case then waits for a technician to '
                   'record what they find, and the bike stays %s.', w.bike, w.now)
        WHEN 'inspected' THEN
            format('Record that %s is %s? The case then waits for a fleet operator to close '
                   'it; the bike stays %s.', w.bike,
                   CASE p_choice WHEN 'repairable' THEN 'repairable'
                                 WHEN 'no_fault' THEN 'without fault'
                                 ELSE 'beyond repair' END, w.now)
        WHEN 'closed' THEN
            format('Close case %s of bike %s (%s) as %s? %s', p_case, p_bike, w.region,
                   CASE p_choice WHEN 'repaired' THEN 'repaired' ELSE 'no fault found' END,
                   CASE WHEN p_status_after = 'available' AND p_status <> 'available'
                        THEN 'The bike is back in service: it becomes available to rent.'
                        ELSE format('The bike stays %s.', w.after) END)
        WHEN 'write_off_requested' THEN
            format('Ask for %s to be written off? The case then waits for a second fleet '
                   'operator to approve or refuse it, and the bike stays %s until then; once '
                   'approved, it is retired for good.', w.bike, w.now)
        WHEN 'write_off_approved' THEN
            format('Approve the write-off of %s that %s asked for%s? The case is closed and the '
                   'bike is retired for good.', w.bike, w.asker, w.noting)
        ELSE
            format('Refuse the write-off of %s that %s asked for%s? The case goes back to '
                   'inspected, for a fleet operator to close it another way, and the bike '
                   'stays %s.', w.bike, w.asker, w.noting, w.now)
    END
    FROM w
$$;

REVOKE ALL ON FUNCTION fleet.case_step_question(text, text, text, text, text, text, text, text,
                                              text)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_step_question(text, text, text, text, text, text, text, text,
                                              text)
    TO fleet_app;
