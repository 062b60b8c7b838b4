-- 0020: the investigation case as an explicit workflow, business state every instance shares
-- (functions/fleet.case_step_as.sql holds its rules; docs/domain.md tells it):
--
--   open -> inspection_requested -> inspected -> closed (repaired | no_fault_found)
--                                             -> awaiting_approval -> closed (written_off)
--                                                                  -> inspected (refused)
--
-- An inspection request may be withdrawn (back to open), a write-off waiting for approval too
-- (back to inspected). Who did each step, when, through which client application and why is a
-- case event with its note; the case row holds where it stands.

-- 1. The steps. A case is active until closed: one active case per bike (it was one open case),
--    so a report joins the bike's case at any step before closed.
--    (Each CHECK below is replaced under its name in one statement and admits all the old one
--    did: the previous release keeps writing on this schema during a rolling upgrade.)
ALTER TABLE fleet.cases
    DROP CONSTRAINT cases_state_check,
    ADD CONSTRAINT cases_state_check
        CHECK (state IN ('open', 'inspection_requested', 'inspected', 'awaiting_approval',
                         'closed')),
    -- How a closed case ended (NULL for cases closed before this release).
    ADD COLUMN resolution text CHECK (resolution IN ('repaired', 'no_fault_found', 'written_off')),
    -- What the technician found (their words are the note of the 'inspected' event).
    ADD COLUMN finding text CHECK (finding IN ('repairable', 'no_fault', 'beyond_repair')),
    -- Who asked for the write-off waiting for approval, through which application, when.
    ADD COLUMN write_off_requested_by text,
    ADD COLUMN write_off_requested_via text,
    ADD COLUMN write_off_requested_at timestamptz,
    -- Who closed the case (for a write-off: who approved it), through which application.
    ADD COLUMN closed_by text,
    ADD COLUMN closed_via text,
    ADD CONSTRAINT cases_resolution_closed CHECK (resolution IS NULL OR state = 'closed'),
    ADD CONSTRAINT cases_finding_inspected
        CHECK (finding IS NOT NULL OR state IN ('open', 'inspection_requested', 'closed')),
    ADD CONSTRAINT cases_write_off_requested
        CHECK ((write_off_requested_by IS NULL) = (write_off_requested_via IS NULL)
               AND (write_off_requested_by IS NULL) = (write_off_requested_at IS NULL)
               AND (state <> 'awaiting_approval' OR write_off_requested_by IS NOT NULL)),
    -- A write-off is approved by another person than the one who asked, whatever writes it.
    ADD CONSTRAINT cases_write_off_second_person
        CHECK (resolution IS DISTINCT FROM 'written_off'
               OR (write_off_requested_by IS NOT NULL AND closed_by IS NOT NULL
                   AND closed_by <> write_off_requested_by));
-- It implies the one open case per bike of 0001 (cases_one_open_per_bike), which stays until a
-- later release contracts the schema: dropping it now would be a contract step during the roll.
CREATE UNIQUE INDEX cases_one_active_per_bike ON fleet.cases (bike_id) WHERE state <> 'closed';

-- 2. Each step is an event, with the note that says why (free text, at most 1,000 characters).
ALTER TABLE fleet.case_events
    DROP CONSTRAINT case_events_kind_check,
    ADD CONSTRAINT case_events_kind_check
        CHECK (kind IN ('opened', 'report_added', 'inspection_requested', 'inspection_cancelled',
                        'inspected', 'write_off_requested', 'write_off_approved',
                        'write_off_refused', 'write_off_withdrawn', 'closed')),
    ADD COLUMN note text CHECK (char_length(note) BETWEEN 1 AND 1000);

-- 3. A status change a step makes (the bike back in service, or retired) names its case.
ALTER TABLE fleet.bike_status_history ADD COLUMN case_id text REFERENCES fleet.cases(case_id);

-- 4. The workshop: technicians record what an inspection found.
ALTER TABLE fleet.principals
    DROP CONSTRAINT principals_role_check,
    ADD CONSTRAINT principals_role_check
        CHECK (role IN ('viewer', 'customer_care', 'fleet_operator', 'technician'));

-- 5. The login role changes a case's step through the policies of 0004 (cases_extend: the
--    case's region in the perimeter, with the write right of the call), and nothing else.
GRANT UPDATE (state, resolution, finding, write_off_requested_by, write_off_requested_via,
              write_off_requested_at, closed_at, closed_by, closed_via) ON fleet.cases
      TO fleet_app;

-- 6. Reads whose columns change (functions/ creates their new form in the same migrate):
--    bikaroo://cases/{caseId} shows the step, the resolution, the finding and who asked and
--    approved; get_bike_status the active case's step.
DROP FUNCTION IF EXISTS fleet.case_for(text, text, text[]);
DROP FUNCTION IF EXISTS fleet.bike_status_for(text, text, text[]);
