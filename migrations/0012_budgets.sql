-- 0012: tools/call budgets for the whole deployment (issue 20 item 1; README "Budgets across
-- instances"). Expand only: a new table and a new function, nothing an earlier release reads.
--
-- One row per token bucket (a subject's or a client application's read or write budget) that
-- any instance drew from lately. Instances do not take one token per call here: each takes a
-- lease of several tokens at once (fleet.budget_take) and spends it in memory, so the table
-- sees one statement per lease, not per call.
--
-- UNLOGGED: a bucket is worth a few seconds of refill, not a WAL record per lease. After a
-- crash of PostgreSQL the table is empty, which is every bucket full: at most one burst more.
-- Not on standbys, not in a restored backup: nothing here is business state.
-- The key is the SHA-256 (hex) of the bucket's kind and holder, computed by the server: no
-- subject or client id is stored here, and the key needs no escaping.
CREATE UNLOGGED TABLE fleet.budgets (
    key     text PRIMARY KEY CHECK (length(key) = 64 AND key ~ '^[0-9a-f]+$'),
    tokens  double precision NOT NULL,
    stamp   timestamptz NOT NULL,        -- when tokens was true
    granted integer NOT NULL,            -- what the last lease took
    full_at timestamptz NOT NULL         -- when the bucket is full again: a row past it is no row
);
CREATE INDEX budgets_full_at_idx ON fleet.budgets (full_at);

-- Row-level security, enabled and forced like every table. The login role holds no privilege on
-- it: rows change only through fleet.budget_take (SECURITY DEFINER, owner fleet_owner).
ALTER TABLE fleet.budgets ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.budgets FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_all ON fleet.budgets TO fleet_owner USING (true) WITH CHECK (true);
REVOKE ALL ON fleet.budgets FROM PUBLIC;
