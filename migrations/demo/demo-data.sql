-- Demo data for `make run` and the tests (never applied by migrations). Idempotent.
-- Bikes VL-1000..VL-4999 spread over three regions; VL-2048 is in FR-PAR, VL-2047 in FR-LYO,
-- VL-2046 in BE-BRU.
BEGIN;

INSERT INTO fleet.regions (code, name) VALUES
  ('FR-PAR', 'Paris'), ('FR-LYO', 'Lyon'), ('BE-BRU', 'Brussels')
ON CONFLICT (code) DO NOTHING;

INSERT INTO fleet.stations (station_id, region, name)
SELECT r.prefix || '-' || lpad(i::text, 3, '0'), r.code, r.city || ' station ' || i
  FROM (VALUES ('PAR', 'FR-PAR', 'Paris'), ('LYO', 'FR-LYO', 'Lyon'), ('BRU', 'BE-BRU', 'Brussels'))
       AS r(prefix, code, city),
       generate_series(1, 12) AS i
ON CONFLICT (station_id) DO NOTHING;

INSERT INTO fleet.bikes (bike_id, region, station_id, status, battery_pct, last_seen_at)
SELECT 'VL-' || n,
       (ARRAY['BE-BRU', 'FR-LYO', 'FR-PAR'])[n % 3 + 1],
       CASE WHEN n % 23 = 0 THEN NULL
            ELSE (ARRAY['BRU', 'LYO', 'PAR'])[n % 3 + 1] || '-' || lpad((n % 12 + 1)::text, 3, '0') END,
       CASE WHEN n % 23 = 0 THEN 'in_use'
            WHEN n % 17 = 0 THEN 'in_repair'
            WHEN n % 29 = 0 THEN 'reserved'
            WHEN n % 97 = 0 THEN 'lost'
            WHEN n % 101 = 0 THEN 'retired'
            ELSE 'available' END,
       CASE WHEN n % 11 = 0 THEN NULL ELSE (n * 37) % 101 END,
       timestamptz '2026-11-29 08:00:00+00' - make_interval(mins => (n * 7) % 1440)
  FROM generate_series(1000, 4999) AS n
ON CONFLICT (bike_id) DO NOTHING;

INSERT INTO fleet.principals (subject, display_name, role, is_human) VALUES
  ('marie',  'Marie Dupont',  'customer_care',  true),
  ('paul',   'Paul Martin',   'customer_care',  true),
  ('olivia', 'Olivia Leroy',  'fleet_operator', true),
  ('nadia',  'Nadia Benali',  'fleet_operator', true),
  ('tom',    'Tom Garnier',   'technician',     true),
  ('bram',   'Bram Peeters',  'fleet_operator', true),
  ('lena',   'Lena Claes',    'technician',     true),
  ('dev',    'Dev Sandbox',   'viewer',         true),
  ('fleet-sync', 'Fleet sync job (machine)', 'customer_care', false)
ON CONFLICT (subject) DO NOTHING;

INSERT INTO fleet.principal_regions (subject, region) VALUES
  ('marie', 'FR-PAR'), ('paul', 'FR-LYO'), ('olivia', 'FR-PAR'), ('olivia', 'FR-LYO'),
  ('nadia', 'FR-PAR'), ('nadia', 'FR-LYO'), ('tom', 'FR-PAR'), ('tom', 'FR-LYO'),
  ('bram', 'BE-BRU'), ('lena', 'BE-BRU'),
  ('dev', 'FR-PAR'), ('fleet-sync', 'FR-PAR')
ON CONFLICT DO NOTHING;

INSERT INTO fleet.client_apps (client_id, name, may_read, may_report, requires_confirmation) VALUES
  ('customer-care-assistant', 'Customer-care assistant', true, true,  false),
  ('ops-assistant',           'Operations assistant',    true, true,  false),
  ('developer-ide',           'Developer IDE',           true, false, false),
  ('careful-assistant',       'Careful assistant (asks before every change)', true, true, true),
  ('fleet-sync',              'Fleet sync job (client credentials)', true, true, false)
ON CONFLICT (client_id) DO NOTHING;

-- A development database: stdio may act as a configured local identity without a token here.
INSERT INTO fleet.settings (name, value) VALUES ('environment', 'development')
ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value;

COMMIT;
