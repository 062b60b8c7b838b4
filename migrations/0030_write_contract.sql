-- 0030: the write contract written once (migrations/README.md, "A write function"). A write
-- function takes its call as one value and answers one value, whatever the write:
--   fleet.write_call   what the server passes: who calls, the arguments, the tool, the
--                      idempotency key, the digest of the arguments, the audit reference,
--                      whether the user confirmed, the audit row's target, and the id and
--                      lifetime of the task the call may answer with (NULL: none offered);
--   fleet.write_answer what it answers: the caller's rights, the outcome, the object's region,
--                      the effect it would have (a confirmation's question), its result (an
--                      object of its declared columns, as recorded under its key) and the task
--                      it opened (or NULL);
--   fleet.write_state  what the helpers pass along (fleet.write_begin makes it).
-- The helpers (fleet.write_begin, fleet.write_stop, fleet.write_asks, fleet.write_done) hold the
-- rights, the idempotency claim and its record, the confirmation policy and the audit row of
-- every outcome; a write function holds its business. Its output columns are its declaration's
-- (server/capabilities/), written once more in the SELECT that makes its result.
CREATE TYPE fleet.write_call AS (
    subject     text,
    client      text,
    args        jsonb,
    tool        text,
    key         text,
    digest      text,
    request_id  text,
    confirmed   boolean,
    target      text,
    task_id     text,
    task_ttl_ms bigint
);
CREATE TYPE fleet.write_answer AS (
    acting  fleet.acting,
    outcome text,
    region  text,
    effect  text,
    result  jsonb,
    task    jsonb
);
CREATE TYPE fleet.write_state AS (
    capability text,
    call       fleet.write_call,
    acting     fleet.acting,
    answer     fleet.write_answer
);

-- The functions whose form changes (functions/ creates the new one in this same migrate: their
-- records are removed so that it does, whatever their checksums) and those that are gone, into
-- the helpers (fleet.idempotency_claim, fleet.idempotency_keep, fleet.needs_confirmation) or into
-- the write's own transaction (fleet.task_create_as: fleet.case_step_as opens its task). The
-- previous release calls none of them (it calls fleet.report_damage_as, whose text this migrate
-- replaces with a wrapper of the new form).
DROP FUNCTION IF EXISTS fleet.report_damaged_bike_as(text, text, jsonb, text, text, text, text,
                                                     boolean);
DROP FUNCTION IF EXISTS fleet.case_step_as(text, text, jsonb, text, text, text, text, boolean);
DROP FUNCTION IF EXISTS fleet.case_steps();
DROP FUNCTION IF EXISTS fleet.case_step_view(text);
DROP FUNCTION IF EXISTS fleet.write_begin(text, text, text);
DROP FUNCTION IF EXISTS fleet.idempotency_claim(text, text, text, text);
DROP FUNCTION IF EXISTS fleet.idempotency_keep(text, text, text, text, text, text, jsonb);
DROP FUNCTION IF EXISTS fleet.needs_confirmation(text, fleet.acting, boolean, boolean);
DROP FUNCTION IF EXISTS fleet.task_create_as(text, text, text, text, text, text, bigint);
DELETE FROM fleet_meta.schema_functions
 WHERE name IN ('fleet.report_damaged_bike_as.sql', 'fleet.case_step_as.sql',
                'fleet.case_steps.sql', 'fleet.case_step_view.sql', 'fleet.write_begin.sql',
                'fleet.idempotency_claim.sql', 'fleet.idempotency_keep.sql',
                'fleet.needs_confirmation.sql', 'fleet.task_create_as.sql');
