-- Reads by caller (issue "A call lives on one thread"): a read function takes the caller and an
-- array of keys and returns one row set for all of them (functions/fleet.*_for.sql), a batch sets
-- each caller once and writes its audit rows with one INSERT (fleet.audit_reads). The batch
-- statements written by SQL at run time, and their per-call fallback, are gone: no release since
-- 68427ec calls them but the one that built them, which never ran against this schema.
DROP FUNCTION IF EXISTS fleet.read_batch_sql(text, text[], text, text, boolean);
DELETE FROM fleet_meta.schema_functions WHERE name = 'fleet.read_batch_sql.sql';
DROP FUNCTION IF EXISTS fleet.read_batch(text[], text[], text[], text[], boolean[], boolean[],
                                         text[], text[], text[], text[], text[], text[], text[],
                                         text[], text[], text[]);
DELETE FROM fleet_meta.schema_functions WHERE name = 'fleet.read_batch.sql';
