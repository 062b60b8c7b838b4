-- The trigger cases_step_at (0023), before a case row is written: when the case reached its step,
-- for the work queues (fleet.list_cases_for) to order by. A new case reached it when it was
-- opened; a change of state, at the time of the change: the row's new updated_at, which the step
-- writes with the time of its event (fleet.case_step_as, fleet.task_cancel_as), or the clock
-- when a writer left updated_at as it was. Any other change keeps the time as it was written
-- (the login role may not name the column; the owner's repairs stay as written).
CREATE OR REPLACE FUNCTION fleet.case_step_at() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, fleet, pg_temp
AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        NEW.step_at := NEW.opened_at;
    ELSIF NEW.state IS DISTINCT FROM OLD.state THEN
        NEW.step_at := CASE WHEN NEW.updated_at IS DISTINCT FROM OLD.updated_at
                            THEN NEW.updated_at ELSE clock_timestamp() END;
    END IF;
    RETURN NEW;
END
$$;

REVOKE ALL ON FUNCTION fleet.case_step_at() FROM PUBLIC;
