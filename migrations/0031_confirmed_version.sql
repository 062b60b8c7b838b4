-- 0031: a confirmation is bound to the version of what its question names
-- (migrations/README.md, "A write function"). A write that asks answers, beside its question,
-- the version of what the question describes (fleet.write_answer.version: for a case step the
-- case's last event, for a report the bike's status and its active case); the server seals it
-- with the question, and the user's answer brings it back (fleet.write_call.version). The write
-- compares it with the row locked: an answer to a question whose object has changed since is
-- never applied; the write asks again, saying what changed (fleet.write_asks, fleet.write_stop).
-- Both attributes are added at the end: the previous release builds neither type (it calls
-- fleet.report_damage_as, whose text packs the call of this release's form).
ALTER TYPE fleet.write_call ADD ATTRIBUTE version text;
ALTER TYPE fleet.write_answer ADD ATTRIBUTE version text;

-- The helpers and the question whose arguments change (functions/ creates the new forms in this
-- same migrate: their records are removed so that it does, whatever their checksums). No
-- release before this one calls them from its C.
DROP FUNCTION IF EXISTS fleet.write_asks(fleet.write_state, boolean);
DROP FUNCTION IF EXISTS fleet.write_stop(fleet.write_state, text, text, text, jsonb, text);
DROP FUNCTION IF EXISTS fleet.case_step_question(text, text, text, text, text, text, text, text);
DELETE FROM fleet_meta.schema_functions
 WHERE name IN ('fleet.write_asks.sql', 'fleet.write_stop.sql', 'fleet.write_done.sql',
                'fleet.case_step_question.sql');
