-- The audit rows of a batch of reads in one INSERT (audit by group commit, 0008): element i of
-- every array is row i. The server calls it once per batch, after the reads themselves; the
-- reads answer only once this statement has committed, and all of them fail if it fails.
-- SECURITY DEFINER like fleet.audit_record (fleet_app holds no privilege on fleet.audit_log);
-- unlike it, the rows name their own subject and client (one batch carries many callers), as
-- fleet.audit_as already lets the login role name any. Time from the clock, lengths capped.
-- The request reference comes in its parts (0011): the JSON-RPC id, the request's W3C trace id
-- and the token's reference, split by the server as fleet.audit_ref splits it; the columns'
-- types (domains, 0027) refuse a malformed trace id or token reference.
-- A lock on audit_log (an administrator's LOCK TABLE, ALTER TABLE, VACUUM FULL) fails the batch
-- after lock_timeout instead of stalling it: every read of the instance waits for the batch in
-- flight, and they answer 503 (retry) rather than hang behind the lock.
CREATE OR REPLACE FUNCTION fleet.audit_batch(p_subject text[], p_client text[], p_tool text[],
                                             p_target text[], p_digest text[], p_outcome text[],
                                             p_detail text[], p_request_id text[],
                                             p_trace_id text[], p_token_ref text[])
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, fleet, pg_temp
SET lock_timeout = '2s'
AS $$
DECLARE
    n integer;
BEGIN
    IF cardinality(p_subject) > 1000 THEN
        RAISE EXCEPTION 'audit_batch: at most 1000 rows' USING ERRCODE = '54000';
    END IF;
    INSERT INTO fleet.audit_log (subject, client_id, tool, target, args_digest, outcome, detail,
                                 request_id, trace_id, token_ref)
    SELECT u.s, u.c, left(u.t, 128), left(u.g, 64), u.d, u.o, left(u.x, 500), left(u.q, 128),
           u.tr, u.tk
      FROM unnest(p_subject, p_client, p_tool, p_target, p_digest, p_outcome, p_detail,
                  p_request_id, p_trace_id, p_token_ref) AS u(s, c, t, g, d, o, x, q, tr, tk);
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

REVOKE ALL ON FUNCTION fleet.audit_batch(text[], text[], text[], text[], text[], text[], text[], text[], text[], text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.audit_batch(text[], text[], text[], text[], text[], text[], text[], text[], text[], text[]) TO fleet_app;
