-- 0027: reads and their audit rows at the database's pace (issue "The hot read at the database's
-- pace").
--
-- 1. A read function is plain SQL (LANGUAGE sql, STABLE, no SET clause, not SECURITY DEFINER)
--    that PostgreSQL inlines into the server's statement, instead of plpgsql entered through
--    fmgr_security_definer on every call. It no longer sets the identity nor judges the
--    capability: the unit's fleet.act_as has set the identity (once per caller), and the
--    server's statement judges the capability (fleet.may_read) once. Its arguments are only
--    its keys, so the old signatures go here and functions/ creates the new ones in the same
--    run (migrations/README.md, "Changing a function").
DROP FUNCTION IF EXISTS fleet.bike_status_for(text, text, text[]);
DROP FUNCTION IF EXISTS fleet.case_for(text, text, text[]);
DROP FUNCTION IF EXISTS fleet.bike_ids_for(text, text, text[]);
DROP FUNCTION IF EXISTS fleet.status_codes_for(text, text);
DROP FUNCTION IF EXISTS fleet.regions_for(text, text);
DROP FUNCTION IF EXISTS fleet.case_ids_for(text, text, text[]);
DROP FUNCTION IF EXISTS fleet.list_cases_for(text, text, text[]);

-- 2. No index leads with bikes.region. A read's plan is made once per connection, generic,
--    and pinned; row-level security's condition (region = ANY (fleet.current_regions())) is
--    estimated with the perimeter of whoever the plan was made for. With an index on region
--    first, a perimeter with no bikes yet (a new region) made the planner take that index and
--    filter the keys, a scan of a whole region for every later read of that connection. No read
--    lists bikes by region; the primary key serves reads by id and the completion by prefix.
DROP INDEX IF EXISTS fleet.bikes_region_idx;

-- 3. An audit row costs what it stores: its formats are domains, not CHECK constraints of the
--    table. A table's CHECKs are read back from their stored text (stringToNode) and planned for
--    every statement that inserts (ExecConstraints): four of them cost more than inserting the
--    rows of a read's batch. A domain's checks are read once per connection (the type cache) and
--    hold for every column of that type, whoever writes it: the same guarantee, the same
--    expressions as 0011's (each accepts exactly what it accepted, NULL included). The columns
--    take the domains before the domains take their checks: a change of type to a domain
--    without checks rewrites nothing, and adding each check then reads the table once, as
--    0011's did.
CREATE DOMAIN fleet.sha256_hex AS text;
CREATE DOMAIN fleet.trace_id AS text;
CREATE DOMAIN fleet.token_ref AS text;
CREATE DOMAIN fleet.audit_outcome AS text;
ALTER TABLE fleet.audit_log
    DROP CONSTRAINT audit_log_args_digest_check,
    DROP CONSTRAINT audit_log_trace_id_check,
    DROP CONSTRAINT audit_log_token_ref_check,
    DROP CONSTRAINT audit_log_outcome_check,
    ALTER COLUMN args_digest TYPE fleet.sha256_hex,
    ALTER COLUMN trace_id TYPE fleet.trace_id,
    ALTER COLUMN token_ref TYPE fleet.token_ref,
    ALTER COLUMN outcome TYPE fleet.audit_outcome;
-- The hex digest of SHA-256: 64 lower-case hex digits.
ALTER DOMAIN fleet.sha256_hex ADD CONSTRAINT sha256_hex_check
    CHECK (length(VALUE) = 64 AND VALUE ~ '^[0-9a-f]+$');
-- A W3C trace id: 32 lower-case hex digits.
ALTER DOMAIN fleet.trace_id ADD CONSTRAINT trace_id_check
    CHECK (length(VALUE) = 32 AND VALUE ~ '^[0-9a-f]+$');
-- The token a call was made with, never the token: "jti:" and 1 to 128 printable characters, or
-- "sha256:" and the hex digest of the token.
ALTER DOMAIN fleet.token_ref ADD CONSTRAINT token_ref_check
    CHECK (CASE WHEN VALUE LIKE 'jti:%'
                THEN length(VALUE) BETWEEN 5 AND 132 AND VALUE ~ '^[!-~]+$'
                WHEN VALUE LIKE 'sha256:%'
                THEN length(VALUE) = 71 AND substr(VALUE, 8) ~ '^[0-9a-f]+$'
                ELSE VALUE IS NULL END);
ALTER DOMAIN fleet.audit_outcome ADD CONSTRAINT audit_outcome_check
    CHECK (VALUE IN ('ok', 'replayed', 'denied', 'invalid', 'not_found', 'conflict', 'failed',
                     'error', 'declined', 'confirmation_required', 'rejected'));
