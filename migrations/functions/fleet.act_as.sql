-- Sets the acting identity for the rest of the current transaction and returns its rights.
-- An unknown or inactive subject or client gets an empty perimeter and no rights.
-- The settings: app.subject, app.client, app.role (for the read functions' rules by role,
-- fleet.current_fleet_role), app.regions (the perimeter, for the policies), app.may_use (the
-- capabilities the caller may use, fleet.may_use over fleet.capabilities, as a comma list, for
-- fleet.may_read), and app.may_report cleared (a new identity writes nothing until
-- fleet.write_begin says it may).
--
-- Rights at the cost of a probe (0008): the rights resolved here (three lookups under RLS) are
-- kept for the rest of the backend's session in one of 64 session settings
-- bikaroo_rights.sN (N from a hash of subject and client; a collision only evicts), as
-- epoch, subject, client, role, is_human, the client's three rights, the regions and the
-- capabilities it may use, separated by U+001F (an earlier release's entry, without the last,
-- is resolved again). A later call uses the entry only when its subject and client are the
-- caller's and its epoch is fleet.rights_epoch's current one (one primary-key probe), else
-- resolves again. A change of fleet.capabilities bumps the epoch too (0018).
-- The epoch is read *before* the lookups: rights read after it are at least as new as the
-- epoch they are stored with, so an entry is never newer-looking than what it holds. The
-- cache holds only what the tables say for that subject and client, so it is the same for
-- whoever shares the backend (a transaction pooler): identity itself stays transaction-local.
-- A subject or client containing U+001F is never cached.
-- Every table is named with its schema: PostgreSQL searches a session's temporary tables before
-- any schema of search_path, so a bare name would let a temporary `principals` of the session
-- stand in for the real one (forged rights, then cached for whoever shares the backend).
CREATE OR REPLACE FUNCTION fleet.act_as(p_subject text, p_client text) RETURNS fleet.acting
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
DECLARE
    a fleet.acting;
    e bigint;
    slot text := 'bikaroo_rights.s' || (hashtext(coalesce(p_subject, '') || E'\x1f'
                                                 || coalesce(p_client, '')) & 63);
    c text[] := string_to_array(current_setting(slot, true), E'\x1f');
    v_may text := '';
BEGIN
    a.subject := p_subject;
    a.client_id := p_client;
    IF c[2] = p_subject AND c[3] = p_client AND c[10] IS NOT NULL
       AND EXISTS (SELECT FROM fleet.rights_epoch r WHERE r.epoch = c[1]::bigint) THEN
        a.role := NULLIF(c[4], '');
        a.is_human := c[5]::boolean;
        a.client_may_read := c[6]::boolean;
        a.client_may_report := c[7]::boolean;
        a.requires_confirmation := c[8]::boolean;
        a.regions := string_to_array(c[9], ',');
        PERFORM set_config('app.subject', p_subject, true) || set_config('app.client', p_client, true)
                || set_config('app.role', c[4], true) || set_config('app.regions', c[9], true)
                || set_config('app.may_use', c[10], true) || set_config('app.may_report', '', true);
        RETURN a;
    END IF;
    SELECT r.epoch INTO e FROM fleet.rights_epoch r;
    -- Clear any earlier identity first: the lookups below run under RLS as the new subject.
    PERFORM set_config('app.regions', '', true);
    PERFORM set_config('app.role', '', true);
    PERFORM set_config('app.may_use', '', true);
    PERFORM set_config('app.may_report', '', true);
    PERFORM set_config('app.subject', coalesce(p_subject, ''), true);
    PERFORM set_config('app.client', coalesce(p_client, ''), true);
    SELECT p.role, p.is_human,
           coalesce((SELECT array_agg(r.region ORDER BY r.region)
                       FROM fleet.principal_regions r WHERE r.subject = p.subject), '{}')
      INTO a.role, a.is_human, a.regions
      FROM fleet.principals p
     WHERE p.subject = p_subject AND p.active;
    SELECT k.may_read, k.may_report, k.requires_confirmation
      INTO a.client_may_read, a.client_may_report, a.requires_confirmation
      FROM fleet.client_apps k
     WHERE k.client_id = p_client AND k.active;
    IF a.role IS NULL OR a.client_may_read IS NULL THEN
        a.role := NULL;
        a.regions := '{}';
        a.is_human := false;
        a.client_may_read := false;
        a.client_may_report := false;
        a.requires_confirmation := false;
    ELSE
        SELECT coalesce(string_agg(k.name, ',' ORDER BY k.name), '') INTO v_may
          FROM fleet.capabilities k WHERE fleet.may_use(k.name, a);
    END IF;
    IF e IS NOT NULL AND strpos(p_subject || p_client, E'\x1f') = 0 THEN
        PERFORM set_config(slot, concat_ws(E'\x1f', e, p_subject, p_client, coalesce(a.role, ''),
                                           a.is_human, a.client_may_read, a.client_may_report,
                                           a.requires_confirmation,
                                           array_to_string(a.regions, ','), v_may), false);
    END IF;
    PERFORM set_config('app.regions', array_to_string(a.regions, ','), true);
    PERFORM set_config('app.role', coalesce(a.role, ''), true);
    PERFORM set_config('app.may_use', v_may, true);
    RETURN a;
END
$$;

REVOKE ALL ON FUNCTION fleet.act_as(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.act_as(text, text) TO fleet_app;
