-- The parts of the request reference every audit row is written with (server/capabilities/
-- adapter.h: adapter_request_ref): the request's W3C trace id and a space, then the token's
-- reference ("jti:..." or "sha256:...", no space in it) and a space, each only when there is
-- one, then the JSON-RPC id as JSON text (a string id starts with a quote, so it is never read
-- as either prefix). fleet.audit_record stores the three apart; fleet.audit_reads gets them
-- apart from the server (domain/audit.c, audit_ref_split: the same split).
-- No regular expression with a bounded repetition ({32}): PostgreSQL's engine expands those
-- into large automata, and this runs for every single-row audit (0011).
CREATE OR REPLACE FUNCTION fleet.audit_ref(p_ref text, OUT trace_id text, OUT token_ref text,
                                           OUT request_id text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT t.trace_id, k.token_ref,
           left(substr(t.rest, coalesce(length(k.token_ref) + 2, 1)), 128)
      FROM (SELECT CASE WHEN substr(p_ref, 33, 1) = ' ' AND substr(p_ref, 1, 32) ~ '^[0-9a-f]+$'
                        THEN substr(p_ref, 1, 32) END AS trace_id,
                   CASE WHEN substr(p_ref, 33, 1) = ' ' AND substr(p_ref, 1, 32) ~ '^[0-9a-f]+$'
                        THEN substr(p_ref, 34) ELSE p_ref END AS rest) AS t,
           LATERAL (SELECT substring(t.rest FROM '^((?:jti|sha256):[!-~]+) ') AS token_ref) AS k
$$;

REVOKE ALL ON FUNCTION fleet.audit_ref(text) FROM PUBLIC;
