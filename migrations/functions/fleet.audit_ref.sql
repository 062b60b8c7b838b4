-- The parts of the request reference every audit row is written with (server/capabilities/
-- adapter.h: adapter_request_ref): the request's W3C trace id and a space, then the token's
-- reference ("jti:..." or "sha256:...", no space in it) and a space, each only when there is
-- one, then the JSON-RPC id as JSON text (a string id starts with a quote, so it is never read
-- as either prefix). fleet.audit_record and fleet.audit_batch store the three apart.
CREATE OR REPLACE FUNCTION fleet.audit_ref(p_ref text, OUT trace_id text, OUT token_ref text,
                                           OUT request_id text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog
AS $$
    SELECT substring(p_ref FROM '^([0-9a-f]{32}) '),
           substring(p_ref FROM '^(?:[0-9a-f]{32} )?((?:jti|sha256):[!-~]+) '),
           left(regexp_replace(p_ref, '^(?:[0-9a-f]{32} )?(?:(?:jti|sha256):[!-~]+ )?', ''), 128)
$$;

REVOKE ALL ON FUNCTION fleet.audit_ref(text) FROM PUBLIC;
