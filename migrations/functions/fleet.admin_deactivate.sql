-- Deactivates a principal (p_kind 'subject') or a client application ('client'): its next
-- call gets nothing, its subscriptions end (0007). False when there is none by that name.
-- Audited in fleet.admin_log (also when there was none); owner only.
CREATE OR REPLACE FUNCTION fleet.admin_deactivate(p_kind text, p_id text) RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, fleet, pg_temp
AS $$
DECLARE
    hit boolean; -- not "found": that is PL/pgSQL's FOUND
BEGIN
    IF p_kind = 'subject' THEN
        UPDATE fleet.principals SET active = false WHERE subject = p_id;
    ELSIF p_kind = 'client' THEN
        UPDATE fleet.client_apps SET active = false WHERE client_id = p_id;
    ELSE
        RAISE EXCEPTION 'admin_deactivate: % is not subject or client', p_kind
            USING ERRCODE = '22023';
    END IF;
    hit := FOUND;
    INSERT INTO fleet.admin_log (action, target, detail)
    VALUES ('deactivate', p_kind || ':' || p_id, jsonb_build_object('found', hit));
    RETURN hit;
END
$$;

REVOKE ALL ON FUNCTION fleet.admin_deactivate(text, text) FROM PUBLIC;
