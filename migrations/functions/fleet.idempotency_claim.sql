-- An idempotency key of the acting subject, for any write: state 'new' (nothing recorded under
-- it: go on, then fleet.idempotency_keep), 'replayed' with the first call's result (the same
-- tool and argument digest: answer it, write nothing), or 'conflict' (the key was used for
-- another call). Takes the key's transaction lock first (advisory, per subject and key, the
-- same lock as the previous release's reports took), so that calls with one key serialize:
-- take it before any row lock, in every write, and no two calls wait on each other in reverse
-- order. A NULL key is 'new', without a lock. Keys are the acting subject's only.
-- A key of a report filed by the previous release's text (fleet.idempotency_keys, copied here by
-- 0018, but written by that text until migrate applies this release's function files) is read
-- there too, its result as fleet.report_damaged_bike_as's columns, until a later release drops
-- that table.
CREATE OR REPLACE FUNCTION fleet.idempotency_claim(p_subject text, p_key text, p_tool text,
                                                   p_digest text)
RETURNS TABLE (state text, result jsonb)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
AS $$
DECLARE
    k record;
BEGIN
    state := 'new';
    IF p_key IS NULL THEN
        RETURN NEXT;
        RETURN;
    END IF;
    IF p_subject IS NULL OR p_subject IS DISTINCT FROM fleet.current_subject() THEN
        RAISE EXCEPTION 'idempotency_claim: a key is claimed by the acting subject (fleet.act_as)'
              USING ERRCODE = '42501';
    END IF;
    PERFORM pg_advisory_xact_lock(hashtextextended('idem/' || p_subject || '/' || p_key, 0));
    SELECT ic.tool, ic.args_digest, ic.result INTO k
      FROM idempotent_calls ic
     WHERE ic.subject = p_subject AND ic.idem_key = p_key;
    IF NOT FOUND THEN
        SELECT ik.tool, ik.args_digest,
               jsonb_build_object('bike_id', ik.bike_id, 'status', ik.status,
                                  'report_id', ik.report_id, 'case_id', ik.case_id,
                                  'recorded_at', to_char(ik.recorded_at AT TIME ZONE 'UTC',
                                                         'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                 AS result INTO k
          FROM idempotency_keys ik
         WHERE ik.subject = p_subject AND ik.idem_key = p_key;
    END IF;
    IF FOUND THEN
        IF k.tool = p_tool AND k.args_digest = p_digest THEN
            state := 'replayed';
            result := k.result;
        ELSE
            state := 'conflict';
        END IF;
    END IF;
    RETURN NEXT;
END
$$;

REVOKE ALL ON FUNCTION fleet.idempotency_claim(text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.idempotency_claim(text, text, text, text) TO fleet_app;
