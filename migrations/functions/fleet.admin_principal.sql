-- Adds a principal (subject = the tokens' sub) or changes it: display name, role (viewer,
-- customer_care, fleet_operator, technician), human or machine, and exactly these regions (which must
-- exist); active again if it was not. Audited in fleet.admin_log; owner only. The triggers of
-- 0007 end the principal's subscriptions when its rights change.
CREATE OR REPLACE FUNCTION fleet.admin_principal(p_subject text, p_display_name text,
                                                 p_role text, p_is_human boolean,
                                                 p_regions text[]) RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, fleet, pg_temp
AS $$
DECLARE
    missing text;
BEGIN
    SELECT string_agg(r, ', ') INTO missing
      FROM unnest(p_regions) AS r WHERE NOT EXISTS (SELECT 1 FROM fleet.regions WHERE code = r);
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'no such region: % (add it first: bikaroo-mcp admin region CODE NAME)', missing
            USING ERRCODE = '23503';
    END IF;
    INSERT INTO fleet.principals (subject, display_name, role, is_human, active)
    VALUES (p_subject, p_display_name, p_role, p_is_human, true)
    ON CONFLICT (subject) DO UPDATE
       SET display_name = EXCLUDED.display_name, role = EXCLUDED.role,
           is_human = EXCLUDED.is_human, active = true;
    DELETE FROM fleet.principal_regions WHERE subject = p_subject AND region <> ALL (p_regions);
    INSERT INTO fleet.principal_regions (subject, region)
    SELECT p_subject, r FROM unnest(p_regions) AS r ON CONFLICT DO NOTHING;
    INSERT INTO fleet.admin_log (action, target, detail)
    VALUES ('principal', 'subject:' || p_subject,
            jsonb_build_object('display_name', p_display_name, 'role', p_role,
                               'is_human', p_is_human, 'regions', to_jsonb(p_regions)));
    RETURN p_subject;
END
$$;

REVOKE ALL ON FUNCTION fleet.admin_principal(text, text, text, boolean, text[]) FROM PUBLIC;
