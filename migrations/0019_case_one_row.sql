-- bikaroo://cases/{caseId} is a declared read (server/capabilities/cases.json): fleet.case_for
-- returns one row per case, its reports and events as JSON arrays, instead of a 'case' row
-- followed by 'report' and 'event' rows that C put together. Its result type changes, so the
-- old form is dropped here and functions/fleet.case_for.sql creates the new one.
DROP FUNCTION IF EXISTS fleet.case_for(text, text, text[]);
