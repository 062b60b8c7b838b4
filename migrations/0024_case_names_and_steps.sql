-- bikaroo://cases/{caseId} names the application through which a write-off was asked
-- (write_off_requested_via_name), gives each event the bike's status change it made (the bike
-- back in service, retired), and says what comes next (next_steps) and whether the caller may
-- take it (you_may_act). Its result type changes, so the old form is dropped here and
-- functions/fleet.case_for.sql creates the new one.
DROP FUNCTION IF EXISTS fleet.case_for(text, text, text[]);
