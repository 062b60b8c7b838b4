-- Adds a client application (client_id = the tokens' client_id) or changes what it may do:
-- read, report, and whether each report needs the user's confirmation on the server's side;
-- active again if it was not. Audited in fleet.admin_log; owner only.
CREATE OR REPLACE FUNCTION fleet.admin_client(p_client_id text, p_name text, p_may_read boolean,
                                              p_may_report boolean,
                                              p_requires_confirmation boolean) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, fleet, pg_temp
AS $$
BEGIN
    INSERT INTO fleet.client_apps (client_id, name, may_read, may_report, requires_confirmation,
                                   active)
    VALUES (p_client_id, p_name, p_may_read, p_may_report, p_requires_confirmation, true)
    ON CONFLICT (client_id) DO UPDATE
       SET name = EXCLUDED.name, may_read = EXCLUDED.may_read,
           may_report = EXCLUDED.may_report,
           requires_confirmation = EXCLUDED.requires_confirmation, active = true;
    INSERT INTO fleet.admin_log (action, target, detail)
    VALUES ('client', 'client:' || p_client_id,
            jsonb_build_object('name', p_name, 'may_read', p_may_read, 'may_report', p_may_report,
                               'requires_confirmation', p_requires_confirmation));
    RETURN p_client_id;
END
$$;

REVOKE ALL ON FUNCTION fleet.admin_client(text, text, boolean, boolean, boolean) FROM PUBLIC;
