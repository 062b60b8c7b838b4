-- A write function's first statement (migrations/README.md, "A write function"): who calls,
-- whether they may, whether the arguments hold, what the call's idempotency key says.
-- It acts as the caller (fleet.act_as) and fixes the write right for the rest of the
-- transaction: app.may_report is 'on' only when fleet.may_use allows p_capability (its declared
-- roles, people only, the client application's right). Every write policy requires
-- fleet.current_may_report(), so a bug in a write function cannot write what the capability
-- refuses. Then the key (c.key; NULL: none) under its transaction lock (advisory, per subject
-- and key), taken before any row lock in every write: calls with one key serialize, and no two
-- calls wait on each other in reverse order. A key is its subject's only.
-- Returns the write's state. Its answer is set already (the write returns it at once) when the
-- caller may not (forbidden), the arguments do not hold (p_valid false or NULL:
-- invalid_arguments; the server checked them against the tool's input schema, a direct caller
-- gets the same shapes held), the key was used for another call (key_conflict), or for this
-- very call (replayed: the first call's result, unless its object's region has left the
-- caller's perimeter since, which reads as not_found). Each leaves its audit row.
-- A key of a report filed by an earlier release's text (fleet.idempotency_keys, copied by 0018)
-- is read there too, its result as fleet.report_damaged_bike_as's columns, until a later
-- release drops that table.
CREATE OR REPLACE FUNCTION fleet.write_begin(p_capability text, c fleet.write_call,
                                             p_valid boolean DEFAULT true)
RETURNS fleet.write_state
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
DECLARE
    w fleet.write_state;
    k record;
BEGIN
    w.capability := p_capability;
    w.call := c;
    w.acting := fleet.act_as(c.subject, c.client);
    PERFORM set_config('app.may_report',
                       CASE WHEN fleet.may_use(p_capability, w.acting) THEN 'on' ELSE '' END,
                       true);
    IF NOT fleet.current_may_report() THEN
        w.answer := fleet.write_stop(w, 'forbidden');
        RETURN w;
    ELSIF NOT coalesce(p_valid, false) THEN
        w.answer := fleet.write_stop(w, 'invalid_arguments');
        RETURN w;
    ELSIF c.key IS NULL THEN
        RETURN w;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtextextended('idem/' || c.subject || '/' || c.key, 0));
    SELECT i.tool, i.args_digest, i.region, i.result INTO k
      FROM idempotent_calls i
     WHERE i.subject = c.subject AND i.idem_key = c.key;
    IF NOT FOUND THEN
        SELECT ik.tool, ik.args_digest, ik.region,
               jsonb_build_object('bike_id', ik.bike_id, 'status', ik.status,
                                  'report_id', ik.report_id, 'case_id', ik.case_id,
                                  'recorded_at', to_char(ik.recorded_at AT TIME ZONE 'UTC',
                                                         'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                 AS result INTO k
          FROM idempotency_keys ik
         WHERE ik.subject = c.subject AND ik.idem_key = c.key;
    END IF;
    IF NOT FOUND THEN
        RETURN w;
    ELSIF k.tool IS DISTINCT FROM c.tool OR k.args_digest IS DISTINCT FROM c.digest THEN
        w.answer := fleet.write_stop(w, 'key_conflict');
    ELSIF NOT coalesce(k.region = ANY ((w.acting).regions), false) THEN
        w.answer := fleet.write_stop(w, 'not_found');
    ELSE
        w.answer := fleet.write_stop(w, 'replayed', k.region, NULL, k.result);
    END IF;
    RETURN w;
END
$$;

REVOKE ALL ON FUNCTION fleet.write_begin(text, fleet.write_call, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.write_begin(text, fleet.write_call, boolean) TO fleet_app;
