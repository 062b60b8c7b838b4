-- 0023: work queues of cases (the read list_cases, functions/fleet.list_cases_for.sql): the cases
-- a caller may act on, oldest waiting first, paged by position. A case waits from the moment it
-- reached its step, so that moment is a column, kept by a trigger whatever writes the step (the
-- workflow's tools, a withdrawal through tasks/cancel, a release still serving during the roll),
-- and indexed for the order the queues read in.

-- 1. When the case reached its step: its opening for an open case never moved, else the time of
--    the event that moved it (every event but a report joining it moves it).
ALTER TABLE fleet.cases ADD COLUMN step_at timestamptz;
ALTER TABLE fleet.cases DISABLE TRIGGER cases_resource_change; -- nothing a reader sees changed
UPDATE fleet.cases c
   SET step_at = coalesce((SELECT max(e.at) FROM fleet.case_events e
                            WHERE e.case_id = c.case_id AND e.kind <> 'report_added'),
                          c.opened_at);
ALTER TABLE fleet.cases ENABLE TRIGGER cases_resource_change;
-- The default covers the window of one migrate between this file and the function files (the
-- trigger's body below is a placeholder until then) for a case opened by a serving release.
-- Every row has a time from here on; NOT NULL waits for a contract step (docs/fleet.md), since
-- this file only expands what the previous release reads and writes during the roll.
ALTER TABLE fleet.cases ALTER COLUMN step_at SET DEFAULT now();

-- 2. The trigger: a new case reached its step when it was opened; a change of state moves it to
--    the time of the change. Declared here doing nothing; functions/fleet.case_step_at.sql gives
--    its body.
CREATE FUNCTION fleet.case_step_at() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER cases_step_at BEFORE INSERT OR UPDATE ON fleet.cases
    FOR EACH ROW EXECUTE FUNCTION fleet.case_step_at();

-- 3. The queues' order: the active cases by the time they reached their step, and one bike's
--    cases (closed ones too) in the same order.
CREATE INDEX cases_waiting_idx ON fleet.cases (step_at, case_id) WHERE state <> 'closed';
CREATE INDEX cases_bike_idx ON fleet.cases (bike_id, step_at, case_id);
