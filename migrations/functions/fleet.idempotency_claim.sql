-- An idempotency key of the acting subject, for any write: state 'new' (nothing recorded under
-- it: go on, then fleet.idempotency_keep), 'replayed' with the first call's result (the same
-- tool and argument digest: answer it, write nothing), or 'conflict' (the key was used for
-- another call). Takes the key's transaction lock first (advisory, per subject and key, the
-- same lock as the previous release's reports took), so that calls with one key serialize:
-- take it before any row lock, in every write, and no two calls wait on each other in reverse
-- order. A NULL key is 'new', without a lock. Keys are the acting subject's only.
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
