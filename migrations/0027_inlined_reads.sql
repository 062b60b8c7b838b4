-- 0027: reads at the database's pace (issue "The hot read at the database's pace").
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

-- 2. No index leads with bikes.region. A read's plan is made once per connection, generic,
--    and pinned; row-level security's condition (region = ANY (fleet.current_regions())) is
--    estimated with the perimeter of whoever the plan was made for. With an index on region
--    first, a perimeter with no bikes yet (a new region) made the planner take that index and
--    filter the keys, a scan of a whole region for every later read of that connection. No read
--    lists bikes by region; the primary key serves reads by id and the completion by prefix.
DROP INDEX IF EXISTS fleet.bikes_region_idx;
