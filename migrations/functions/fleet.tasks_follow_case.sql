-- The trigger case_events_tasks (0021), at the commit of a transaction that added a step's event
-- to a case: each task of the case still working in its row whose step that event may end is
-- settled as fleet.task_state finds it (completed or cancelled, its message, result and error
-- kept as they are now: a finished task never changes again), and every unexpired task of the
-- case is named to listeners: NOTIFY bikaroo_changes 'task:<task_id>' (the change feed's
-- entity keys; the server maps them to task notifications). SECURITY DEFINER, owned by the
-- owner role with a fixed search_path: a technician's step settles the task of the agent who
-- asked for it, which row-level security keeps from everyone but that agent.
CREATE OR REPLACE FUNCTION fleet.tasks_follow_case() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, fleet, pg_temp
AS $$
DECLARE
    t record;
    s record;
BEGIN
    FOR t IN SELECT tk.task_id, tk.kind, tk.status, tk.since_event, tk.created_at
               FROM tasks tk
              WHERE tk.case_id = NEW.case_id AND tk.expires_at > clock_timestamp()
              ORDER BY tk.task_id
    LOOP
        IF t.status = 'working' AND NEW.event_id > t.since_event THEN
            SELECT * INTO s FROM fleet.task_state(t.kind, NEW.case_id, t.since_event);
            IF s.status <> 'working' THEN
                UPDATE tasks tk
                   SET status = s.status, message = s.message, is_error = s.is_error,
                       result = s.result, updated_at = greatest(s.changed_at, t.created_at),
                       cancelled_at = CASE WHEN s.status = 'cancelled' THEN s.changed_at END
                 WHERE tk.task_id = t.task_id;
            END IF;
        END IF;
        PERFORM pg_notify('bikaroo_changes', 'task:' || t.task_id);
    END LOOP;
    RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION fleet.tasks_follow_case() FROM PUBLIC;
