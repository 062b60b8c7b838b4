-- A number that no restore of the database hands out twice (report numbers: DR-<number>): the
-- whole seconds since 2026-01-01 UTC on the database's clock (one clock for every instance),
-- times 10,000, plus the next value of the sequence p_seq modulo 10,000.
-- A database restored from any backup hands out numbers from a later second than any number its
-- source handed out before the restore began, hence above all of them, whatever the backup left
-- the sequence at. Within one second the sequence tells up to 10,000 numbers apart (a report is a
-- transaction of its own; this server files far fewer in a second). A clock set back repeats
-- seconds: a number could come again only after 10,000 others within the seconds repeated, and
-- the primary key would then refuse it (the report fails, nothing written), never hand it out.
-- Twelve digits until 2029, thirteen until 2057.
CREATE OR REPLACE FUNCTION fleet.clock_number(p_seq regclass) RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT floor(extract(epoch FROM clock_timestamp() - timestamptz '2026-01-01 00:00:00+00'))::bigint
           * 10000 + nextval(p_seq) % 10000
$$;

REVOKE ALL ON FUNCTION fleet.clock_number(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.clock_number(regclass) TO fleet_app;
