-- The investigation case's workflow as data, one row per step: which tool takes a case from
-- which step to which, on which branch (the value of the tool's argument that chooses it:
-- close_case's resolution, decide_write_off's decision; NULL for a tool with one way), the case
-- event that records it, and the task kind of a step that waits for someone else (a client that
-- declared the Tasks extension is answered with a task of that kind: fleet.task_open).
-- fleet.case_step_as follows it; a step from any other state is refused with the outcome
-- 'case_<its state>'. Withdrawals (tasks/cancel) are fleet.task_cancel_as's: inspection_requested
-- -> open, awaiting_approval -> inspected. Its states are cases_state_check's (0020) and the
-- state enum of server/capabilities/case_workflow.json (tests/declared checks the three agree).
CREATE OR REPLACE FUNCTION fleet.case_steps()
RETURNS TABLE (tool text, argument text, branch text, step_from text, step_to text, event text,
               task text)
LANGUAGE sql IMMUTABLE
AS $$
    VALUES ('request_inspection', NULL, NULL, 'open', 'inspection_requested',
            'inspection_requested', 'inspection'),
           ('record_inspection', NULL, NULL, 'inspection_requested', 'inspected', 'inspected',
            NULL),
           ('close_case', 'resolution', 'repaired', 'inspected', 'closed', 'closed', NULL),
           ('close_case', 'resolution', 'no_fault_found', 'inspected', 'closed', 'closed', NULL),
           ('close_case', 'resolution', 'written_off', 'inspected', 'awaiting_approval',
            'write_off_requested', 'write_off'),
           ('decide_write_off', 'decision', 'approve', 'awaiting_approval', 'closed',
            'write_off_approved', NULL),
           ('decide_write_off', 'decision', 'refuse', 'awaiting_approval', 'inspected',
            'write_off_refused', NULL)
$$;

REVOKE ALL ON FUNCTION fleet.case_steps() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.case_steps() TO fleet_app;
