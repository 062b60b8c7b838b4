-- 0009: what an operator watches. GET /readyz reads the schema version as the login role (the
-- highest numbered file applied), and every audit row can carry the W3C trace id of its request.
GRANT USAGE ON SCHEMA fleet_meta TO fleet_app;
GRANT SELECT ON fleet_meta.schema_migrations TO fleet_app;

ALTER TABLE fleet.audit_log ADD COLUMN trace_id text CHECK (trace_id ~ '^[0-9a-f]{32}$');
