-- The investigation case's workflow as data: which tool, on which branch (its resolution or
-- decision argument; NULL when it has none), takes a case from which step to which, and the
-- event that records the step. fleet.case_step_as follows it; a step from any other state is
-- refused with the outcome 'case_<its state>'. Withdrawals (tasks/cancel) are
-- fleet.task_cancel_as's: inspection_requested -> open, awaiting_approval -> inspected.
CREATE OR REPLACE FUNCTION fleet.case_steps()
RETURNS TABLE (tool text, branch text, step_from text, step_to text, event text)
LANGUAGE sql IMMUTABLE
AS $$
    VALUES ('request_inspection', NULL,             'open',                 'inspection_requested', 'inspection_requested'),
           ('record_inspection',  NULL,             'inspection_requested', 'inspected',            'inspected'),
           ('close_case',         'repaired',       'inspected',            'closed',               'closed'),
           ('close_case',         'no_fault_found', 'inspected',            'closed',               'closed'),
           ('close_case',         'written_off',    'inspected',            'awaiting_approval',    'write_off_requested'),
           ('decide_write_off',   'approve',        'awaiting_approval',    'closed',               'write_off_approved'),
           ('decide_write_off',   'refuse',         'awaiting_approval',    'inspected',            'write_off_refused')
$$;

REVOKE ALL ON FUNCTION fleet.case_steps() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_steps() TO fleet_app;
