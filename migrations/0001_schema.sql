-- 0001: the fleet's reference data, bikes, principals and client applications.
-- Applied by `bikaroo-mcp migrate` as the owner role (fleet_owner); the server logs in as fleet_app.

CREATE SCHEMA fleet;
REVOKE ALL ON SCHEMA fleet FROM PUBLIC;
GRANT USAGE ON SCHEMA fleet TO fleet_app;

CREATE TABLE fleet.regions (
    code text PRIMARY KEY CHECK (code ~ '^[A-Z]{2}-[A-Z]{3}$'),
    name text NOT NULL
);

CREATE TABLE fleet.status_codes (
    code        text PRIMARY KEY CHECK (code ~ '^[a-z_]{1,32}$'),
    label       text NOT NULL,
    description text NOT NULL,
    rentable    boolean NOT NULL,
    sort_order  integer NOT NULL UNIQUE
);

-- Reference data is part of the schema: the code depends on these values.
INSERT INTO fleet.status_codes (code, label, description, rentable, sort_order) VALUES
  ('available',   'Available',   'Parked at a station or in a zone, ready to be rented.',                 true,  1),
  ('in_use',      'In use',      'Currently rented by a rider.',                                          false, 2),
  ('reserved',    'Reserved',    'Held for a rider who booked it; rentable only by that rider.',          false, 3),
  ('unavailable', 'Unavailable', 'Taken out of service pending an inspection (for example after a damage report).', false, 4),
  ('in_repair',   'In repair',   'At the workshop or with a mechanic.',                                   false, 5),
  ('lost',        'Lost',        'Not seen for a long time or reported stolen.',                          false, 6),
  ('retired',     'Retired',     'Permanently withdrawn from the fleet.',                                 false, 7);

CREATE TABLE fleet.stations (
    station_id text PRIMARY KEY CHECK (station_id ~ '^[A-Z]{3}-[0-9]{3}$'),
    region     text NOT NULL REFERENCES fleet.regions(code),
    name       text NOT NULL
);

CREATE TABLE fleet.bikes (
    bike_id      text PRIMARY KEY CHECK (bike_id ~ '^VL-[0-9]{4,6}$'),
    region       text NOT NULL REFERENCES fleet.regions(code),
    station_id   text REFERENCES fleet.stations(station_id),
    status       text NOT NULL REFERENCES fleet.status_codes(code),
    battery_pct  smallint CHECK (battery_pct BETWEEN 0 AND 100),
    last_seen_at timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX bikes_region_idx ON fleet.bikes (region, bike_id);

-- Who may act, and where. Roles and perimeters live here, never in tokens.
CREATE TABLE fleet.principals (
    subject      text PRIMARY KEY CHECK (length(subject) BETWEEN 1 AND 255),
    display_name text NOT NULL,
    role         text NOT NULL CHECK (role IN ('viewer', 'customer_care', 'fleet_operator')),
    is_human     boolean NOT NULL DEFAULT true,
    active       boolean NOT NULL DEFAULT true
);

CREATE TABLE fleet.principal_regions (
    subject text NOT NULL REFERENCES fleet.principals(subject) ON DELETE CASCADE,
    region  text NOT NULL REFERENCES fleet.regions(code),
    PRIMARY KEY (subject, region)
);

-- Host applications (OAuth clients) and what they may ever do, whoever uses them.
CREATE TABLE fleet.client_apps (
    client_id             text PRIMARY KEY CHECK (length(client_id) BETWEEN 1 AND 255),
    name                  text NOT NULL,
    may_read              boolean NOT NULL DEFAULT true,
    may_report            boolean NOT NULL DEFAULT false,
    requires_confirmation boolean NOT NULL DEFAULT false,
    active                boolean NOT NULL DEFAULT true
);

-- Investigation cases: at most one open case per bike, enforced here.
CREATE TABLE fleet.cases (
    case_id    text PRIMARY KEY CHECK (case_id ~ '^IC-[0-9]{4,9}$'),
    bike_id    text NOT NULL REFERENCES fleet.bikes(bike_id),
    region     text NOT NULL REFERENCES fleet.regions(code),
    state      text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closed')),
    opened_at  timestamptz NOT NULL DEFAULT now(),
    opened_by  text NOT NULL,
    opened_via text NOT NULL,
    closed_at  timestamptz,
    CHECK ((state = 'closed') = (closed_at IS NOT NULL))
);
CREATE UNIQUE INDEX cases_one_open_per_bike ON fleet.cases (bike_id) WHERE state = 'open';
CREATE SEQUENCE fleet.case_seq START 1001;
