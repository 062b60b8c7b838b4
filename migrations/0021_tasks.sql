-- 0021: durable tasks (the MCP Tasks extension, io.modelcontextprotocol/tasks) as business rows:
-- a task follows one step of an investigation case that waits for someone else (an inspection
-- waiting for a technician, a write-off waiting for another fleet operator's approval), so that
-- any instance answers for it after any restart. The server generates each task's id
-- (unguessable) and creates it with fleet.task_create_as right after the tool call that asked
-- for the step; fleet.task_for reads it, fleet.task_cancel_as withdraws the step it waits on,
-- fleet.task_purge deletes the expired ones. A task belongs to the subject AND the client
-- application that created it: nobody else reads it, not even the same person through another
-- application.
CREATE TABLE fleet.tasks (
    task_id      text PRIMARY KEY
                 CHECK (length(task_id) BETWEEN 22 AND 128 AND task_id ~ '^[A-Za-z0-9_-]+$'),
    subject      text NOT NULL,
    client_id    text NOT NULL,
    case_id      text NOT NULL REFERENCES fleet.cases(case_id),
    region       text NOT NULL REFERENCES fleet.regions(code),
    kind         text NOT NULL CHECK (kind IN ('inspection', 'write_off')),
    tool         text NOT NULL CHECK (length(tool) BETWEEN 1 AND 128),
    -- The case event that asked for the step (inspection_requested, write_off_requested): the
    -- task ends with the first event after it that ends the step.
    since_event  bigint NOT NULL REFERENCES fleet.case_events(event_id),
    status       text NOT NULL CHECK (status IN ('working', 'completed', 'cancelled')),
    message      text NOT NULL CHECK (length(message) BETWEEN 1 AND 2000),
    is_error     boolean NOT NULL DEFAULT false,
    result       jsonb CHECK (jsonb_typeof(result) = 'object'),
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    ttl_ms       bigint NOT NULL CHECK (ttl_ms BETWEEN 1000 AND 2592000000),
    expires_at   timestamptz NOT NULL,
    poll_ms      integer NOT NULL CHECK (poll_ms BETWEEN 1000 AND 3600000),
    cancelled_at timestamptz,
    CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL)),
    CHECK ((status = 'completed') = (result IS NOT NULL)),
    CHECK (NOT is_error OR status = 'completed'),
    CHECK (updated_at >= created_at AND expires_at > created_at)
);
CREATE INDEX tasks_case_idx ON fleet.tasks (case_id);
CREATE INDEX tasks_expires_idx ON fleet.tasks (expires_at);

-- Row-level security: a caller reads and creates only its own tasks (subject and client
-- application), in its perimeter. Only the owner's functions change or delete them: the
-- trigger below (a step done) and fleet.task_purge (expired).
ALTER TABLE fleet.tasks ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.tasks FORCE ROW LEVEL SECURITY;
CREATE POLICY tasks_own ON fleet.tasks FOR SELECT
    USING (subject = fleet.current_subject() AND client_id = fleet.current_client()
           AND region = ANY (fleet.current_regions()));
CREATE POLICY tasks_create ON fleet.tasks FOR INSERT
    WITH CHECK (subject = fleet.current_subject() AND client_id = fleet.current_client()
                AND region = ANY (fleet.current_regions()));
CREATE POLICY owner_all ON fleet.tasks TO fleet_owner USING (true) WITH CHECK (true);
GRANT SELECT, INSERT ON fleet.tasks TO fleet_app;

-- A step's event settles the tasks that wait on it (completed or cancelled, with the result the
-- tool call would now return) and tells listeners: NOTIFY bikaroo_changes 'task:<task_id>' for
-- every task of the case, as the change feed names entities (0006). At commit (deferred), so
-- the result shows the case and bike as the transaction leaves them. The trigger's function is
-- declared here doing nothing; functions/fleet.tasks_follow_case.sql gives its body.
CREATE FUNCTION fleet.tasks_follow_case() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
CREATE CONSTRAINT TRIGGER case_events_tasks AFTER INSERT ON fleet.case_events
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.kind NOT IN ('opened', 'report_added'))
    EXECUTE FUNCTION fleet.tasks_follow_case();
