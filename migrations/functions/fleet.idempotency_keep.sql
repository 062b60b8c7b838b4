-- Records a write's result under its idempotency key (after fleet.idempotency_claim said 'new',
-- in the same transaction, which holds the key's lock): a later call with the key and the same
-- tool and digest replays p_result. A NULL key records nothing. Row-level security admits the
-- row only for the acting subject and client, with the write right, in their perimeter.
CREATE OR REPLACE FUNCTION fleet.idempotency_keep(p_subject text, p_client text, p_key text,
                                                  p_tool text, p_digest text, p_region text,
                                                  p_result jsonb)
RETURNS void
LANGUAGE sql VOLATILE
AS $$
    INSERT INTO fleet.idempotent_calls (subject, idem_key, tool, args_digest, client_id, region,
                                        result, recorded_at)
    SELECT p_subject, p_key, p_tool, p_digest, p_client, p_region, p_result,
           pg_catalog.clock_timestamp()
     WHERE p_key IS NOT NULL
$$;

REVOKE ALL ON FUNCTION fleet.idempotency_keep(text, text, text, text, text, text, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.idempotency_keep(text, text, text, text, text, text, jsonb) TO fleet_app;
