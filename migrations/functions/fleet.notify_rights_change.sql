-- Bumps the rights epoch (0008: fleet.act_as()'s cached rights of every connection are then
-- resolved again) and NOTIFYs bikaroo_rights naming whose rights changed, 'subject:<subject>'
-- or 'client:<client_id>', at commit (triggers in 0007 and 0008: principals, their regions,
-- client applications). A statement-level call (TRUNCATE) names nobody: it bumps the epoch and
-- NOTIFYs 'all', so that the servers' rights kept for their lists end too (a truncated table
-- leaves nobody with rights to keep listening with).
-- TG_ARGV: the kind named ('subject' or 'client') and the column that holds it.
CREATE OR REPLACE FUNCTION fleet.notify_rights_change() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, fleet, pg_temp
AS $$
DECLARE
    whose text[] := ARRAY[]::text[];
    w text;
BEGIN
    UPDATE fleet.rights_epoch SET epoch = epoch + 1;
    IF TG_LEVEL = 'STATEMENT' THEN
        PERFORM pg_notify('bikaroo_rights', 'all');
        RETURN NULL;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        whose := whose || (to_jsonb(OLD) ->> TG_ARGV[1]);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        whose := whose || (to_jsonb(NEW) ->> TG_ARGV[1]);
    END IF;
    FOREACH w IN ARRAY whose LOOP
        PERFORM pg_notify('bikaroo_rights', TG_ARGV[0] || ':' || w);
    END LOOP;
    RETURN NULL;
END
$$;
