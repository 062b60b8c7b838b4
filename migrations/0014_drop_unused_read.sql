-- 0014, named 0013_drop_unused_read.sql until two files shared the number 0013: migrate knows
-- both names (domain/pg/migrate.c) and applies it once.
-- fleet.bike_status_audited_as (the audit row inside the read's transaction) has been applied and
-- granted but called by no release since the group-commit audit (0008): removed, with its record,
-- as migrations/README.md "Removing a function" says.
DROP FUNCTION IF EXISTS fleet.bike_status_audited_as(text, text, text, text, text);
DELETE FROM fleet_meta.schema_functions WHERE name = 'fleet.bike_status_audited_as.sql';
