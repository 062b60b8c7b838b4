-- Ends a write that wrote: its result recorded under the call's idempotency key (none without a
-- key; row-level security admits it only for the acting subject and client, with the write
-- right, in p_region's perimeter), its audit row (outcome ok, p_detail, the result's report_id
-- if any), and its answer: ok, the object's region, p_result (an object of the write's declared
-- columns, by their column names: what a replay of the key answers) and the task the write
-- opened (p_task: fleet.task_open's, or NULL).
CREATE OR REPLACE FUNCTION fleet.write_done(w fleet.write_state, p_region text, p_result jsonb,
                                            p_detail text DEFAULT NULL,
                                            p_task jsonb DEFAULT NULL)
RETURNS fleet.write_answer
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
BEGIN
    INSERT INTO idempotent_calls (subject, idem_key, tool, args_digest, client_id, region,
                                        result, recorded_at)
    SELECT (w.call).subject, (w.call).key, (w.call).tool, (w.call).digest, (w.call).client,
           p_region, p_result, clock_timestamp()
     WHERE (w.call).key IS NOT NULL;
    PERFORM fleet.audit_record((w.call).tool, (w.call).target, (w.call).digest, 'ok', p_detail,
                               (w.call).request_id, p_result ->> 'report_id');
    RETURN (w.acting, 'ok', p_region, NULL, p_result, p_task, NULL)::fleet.write_answer;
END
$$;

REVOKE ALL ON FUNCTION fleet.write_done(fleet.write_state, text, jsonb, text, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.write_done(fleet.write_state, text, jsonb, text, jsonb)
    TO fleet_app;
