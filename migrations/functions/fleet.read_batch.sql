-- A batch of reads in one statement and one transaction (domain/reads.c, issue "One round trip
-- per batch of calls"): element i calls the read function p_fn[i] (a fleet.*_as function: subject
-- and client first, then its own arguments) as p_subject[i] through p_client[i], so each element
-- sets and checks its own identity (fleet.act_as inside the read function) and reads under
-- row-level security as that caller; then the audit rows of the audited elements (p_tool[i] not
-- NULL) go in one fleet.audit_batch INSERT of this very transaction: a read answers only once the
-- batch, its rows included, has committed.
--
-- Generic: a new read function joins the batching without code of its own. The elements of one
-- read (same function, columns, key, prefix and kind) run as one dynamic query, a LATERAL call of
-- the function per element in element order; its text is built once per session from the
-- function's signature (pg_proc: the arguments are cast to their types) and kept in a session
-- setting keyed by the read and the function's oid (a replaced function gets a new text). The
-- caller names the columns it wants, in the order it wants them (p_cols[i], a text array of
-- column names, rights first); each result row carries them as one composite text
-- (ROW(...)::text), which the server reads back by position in that order.
--
-- Element by element, whatever the others do:
--  * outcome 'denied' when the token gave no read right (p_may[i] false: the function is not
--    called, the row's line is NULL) or the function's rights (prefix || role NULL, or
--    client_may_read false) say no: then the line holds the first six columns only (the
--    rights, which p_cols names first), and no other row;
--  * 'not_found' when the key column of the first row is NULL (one-object reads; a list,
--    p_list[i], is 'ok' even when empty);
--  * 'error' with its SQLSTATE when the element raised: a read's group runs in one
--    subtransaction, and when it fails each of its elements is run again in a subtransaction of
--    its own, so the others are answered as if it had not been there.
-- Each row echoes the identity the element ran as (the transaction's app.subject and app.client
-- when the row was produced) and p_ref[i]; the server checks the echo before it answers.
--
-- SECURITY INVOKER: every element reads with the login role's rights under row-level security,
-- the audit rows go through fleet.audit_batch (SECURITY DEFINER), as they did before.
CREATE OR REPLACE FUNCTION fleet.read_batch(p_fn text[], p_cols text[], p_key text[],
                                            p_prefix text[], p_list boolean[], p_may boolean[],
                                            p_subject text[], p_client text[], p_ref text[],
                                            p_args text[], p_tool text[], p_target text[],
                                            p_digest text[], p_request_id text[],
                                            p_trace_id text[], p_token_ref text[])
RETURNS TABLE (elem integer, ord integer, subject text, client_id text, ref text,
               outcome text, sqlstate text, line text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet
AS $$
DECLARE
    n integer := coalesce(cardinality(p_fn), 0);
    o_elem integer[] := '{}';
    o_ord integer[] := '{}';
    o_subject text[] := '{}';
    o_client text[] := '{}';
    o_outcome text[] := '{}';
    o_line text[] := '{}';
    e_outcome text[] := array_fill(NULL::text, ARRAY[n]);
    e_detail text[] := array_fill(NULL::text, ARRAY[n]);
    e_state text[] := array_fill(NULL::text, ARRAY[n]);
    r_elem integer[];
    r_ord integer[];
    r_subject text[];
    r_client text[];
    r_outcome text[];
    r_line text[];
    idx integer[];
    i integer := 1;
    j integer;
    k integer;
    m integer;
    p integer;
    whole boolean;
    fn oid;
    slot text;
    cached text;
    q text;
    audited integer[];
BEGIN
    IF n > 1000 THEN
        RAISE EXCEPTION 'read_batch: at most 1000 elements' USING ERRCODE = '54000';
    END IF;
    IF cardinality(p_cols) <> n OR cardinality(p_key) <> n OR cardinality(p_prefix) <> n
       OR cardinality(p_list) <> n OR cardinality(p_may) <> n OR cardinality(p_subject) <> n
       OR cardinality(p_client) <> n OR cardinality(p_ref) <> n OR cardinality(p_tool) <> n
       OR cardinality(p_target) <> n OR cardinality(p_digest) <> n
       OR cardinality(p_request_id) <> n OR cardinality(p_trace_id) <> n
       OR cardinality(p_token_ref) <> n THEN
        RAISE EXCEPTION 'read_batch: every array as long as p_fn' USING ERRCODE = '22023';
    END IF;
    WHILE i <= n LOOP
        -- A run of elements of the same read (the server sends them together; any order is
        -- served, a mixed one in more runs). Those the token gives no read right are denied
        -- without calling anything.
        j := i;
        idx := '{}';
        LOOP
            IF p_may[j] THEN
                idx := idx || j;
            ELSE
                e_outcome[j] := 'denied';
            END IF;
            EXIT WHEN j = n OR p_fn[j + 1] <> p_fn[i] OR p_cols[j + 1] <> p_cols[i]
                      OR p_key[j + 1] <> p_key[i] OR p_prefix[j + 1] <> p_prefix[i]
                      OR p_list[j + 1] <> p_list[i];
            j := j + 1;
        END LOOP;
        k := i;
        i := j + 1;
        CONTINUE WHEN cardinality(idx) = 0;
        whole := false;
        -- The read's query: built once per session and version of the function.
        BEGIN
            SELECT p.oid INTO STRICT fn FROM pg_proc p
             WHERE p.pronamespace = 'fleet'::regnamespace AND starts_with(p_fn[k], 'fleet.')
               AND p.proname = substr(p_fn[k], 7);
            slot := 'bikaroo_read_batch.q' || md5(concat_ws(E'\x1f', p_fn[k], p_cols[k],
                                                            p_key[k], p_prefix[k], p_list[k]));
            cached := current_setting(slot, true);
            IF cached IS NOT NULL AND starts_with(cached, fn::text || E'\x1f') THEN
                q := substr(cached, length(fn::text) + 2);
            ELSE
                SELECT format(
                    'SELECT array_agg(e.i), array_agg(t.ordinality::integer), array_agg(x.s), '
                    'array_agg(x.c), array_agg(x.o), array_agg(CASE WHEN x.o = ''denied'' THEN '
                    'ROW(%8$s)::text ELSE ROW(%1$s)::text END) '
                    'FROM unnest($1::integer[]) AS e(i) '
                    'CROSS JOIN LATERAL %2$s(%3$s) WITH ORDINALITY AS t '
                    'CROSS JOIN LATERAL (SELECT fleet.current_subject() AS s, '
                    'fleet.current_client() AS c, CASE WHEN t.%4$I IS NULL OR NOT '
                    'coalesce(t.%5$I, false) THEN ''denied'' WHEN %6$L AND t.%7$I IS NULL THEN '
                    '''not_found'' ELSE ''ok'' END AS o) AS x '
                    'WHERE t.ordinality = 1 OR x.o <> ''denied''',
                    (SELECT string_agg('t.' || quote_ident(u.c), ', ' ORDER BY u.o)
                       FROM unnest(p_cols[k]::text[]) WITH ORDINALITY AS u(c, o)),
                    format('%I.%I', 'fleet', p.proname),
                    (SELECT string_agg(CASE a.o WHEN 1 THEN '$2[e.i]' WHEN 2 THEN '$3[e.i]'
                                       ELSE format('$4[e.i][%s]::%s', a.o - 2,
                                                   format_type(a.t, NULL)) END,
                                       ', ' ORDER BY a.o)
                       FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY AS a(t, o)),
                    p_prefix[k] || 'role', p_prefix[k] || 'client_may_read',
                    NOT p_list[k], p_key[k],
                    (SELECT string_agg('t.' || quote_ident(u.c), ', ' ORDER BY u.o)
                       FROM unnest((p_cols[k]::text[])[1:6]) WITH ORDINALITY AS u(c, o)))
                  INTO STRICT q
                  FROM pg_proc p WHERE p.oid = fn;
                PERFORM set_config(slot, fn::text || E'\x1f' || q, false);
            END IF;
        EXCEPTION WHEN OTHERS THEN
            -- No such read (or more than one of that name): each of its elements fails.
            FOREACH j IN ARRAY idx LOOP
                e_outcome[j] := 'error';
                e_state[j] := SQLSTATE;
            END LOOP;
            CONTINUE;
        END;
        -- All the read's elements at once (p = 0), in one subtransaction; if one of them
        -- raises, each again in a subtransaction of its own (p = 1, 2...).
        FOR p IN 0 .. cardinality(idx) LOOP
            EXIT WHEN p > 0 AND whole;
            BEGIN
                EXECUTE q INTO r_elem, r_ord, r_subject, r_client, r_outcome, r_line
                  USING CASE WHEN p = 0 THEN idx ELSE ARRAY[idx[p]] END, p_subject, p_client,
                        p_args;
                whole := p = 0;
            EXCEPTION WHEN OTHERS THEN
                IF p > 0 THEN
                    e_outcome[idx[p]] := 'error';
                    e_state[idx[p]] := SQLSTATE;
                END IF;
                CONTINUE;
            END;
            o_elem := o_elem || r_elem;
            o_ord := o_ord || r_ord;
            o_subject := o_subject || r_subject;
            o_client := o_client || r_client;
            o_outcome := o_outcome || r_outcome;
            o_line := o_line || r_line;
            FOR k IN 1 .. cardinality(r_elem) LOOP
                IF r_ord[k] = 1 THEN
                    e_outcome[r_elem[k]] := r_outcome[k];
                END IF;
            END LOOP;
        END LOOP;
    END LOOP;
    -- Elements without a row of their own (denied by the token, failed, or a read that
    -- returned nothing): one row each, with the caller's identity as given.
    FOR i IN 1 .. n LOOP
        IF e_outcome[i] IS NULL THEN
            e_outcome[i] := 'error';
            e_state[i] := 'P0002';
        END IF;
        IF e_outcome[i] = 'denied' AND NOT p_may[i] OR e_state[i] IS NOT NULL THEN
            o_elem := o_elem || i;
            o_ord := o_ord || 1;
            o_subject := o_subject || p_subject[i];
            o_client := o_client || p_client[i];
            o_outcome := o_outcome || e_outcome[i];
            o_line := o_line || NULL::text;
            e_detail[i] := 'SQLSTATE ' || e_state[i];
        END IF;
    END LOOP;
    -- The audit rows, one per audited element, whatever its outcome. The server sends the
    -- audited elements first: their rows are then slices of the arrays.
    m := coalesce(array_position(p_tool, NULL) - 1, n);
    IF m < n AND EXISTS (SELECT FROM unnest(p_tool[m + 1:n]) t WHERE t IS NOT NULL) THEN
        SELECT array_agg(u.i) INTO audited FROM generate_series(1, n) AS u(i)
         WHERE p_tool[u.i] IS NOT NULL;
        PERFORM fleet.audit_batch(
            ARRAY(SELECT p_subject[x] FROM unnest(audited) x),
            ARRAY(SELECT p_client[x] FROM unnest(audited) x),
            ARRAY(SELECT p_tool[x] FROM unnest(audited) x),
            ARRAY(SELECT p_target[x] FROM unnest(audited) x),
            ARRAY(SELECT p_digest[x] FROM unnest(audited) x),
            ARRAY(SELECT e_outcome[x] FROM unnest(audited) x),
            ARRAY(SELECT e_detail[x] FROM unnest(audited) x),
            ARRAY(SELECT p_request_id[x] FROM unnest(audited) x),
            ARRAY(SELECT p_trace_id[x] FROM unnest(audited) x),
            ARRAY(SELECT p_token_ref[x] FROM unnest(audited) x));
    ELSIF m > 0 THEN
        PERFORM fleet.audit_batch(p_subject[1:m], p_client[1:m], p_tool[1:m], p_target[1:m],
                                  p_digest[1:m], e_outcome[1:m], e_detail[1:m],
                                  p_request_id[1:m], p_trace_id[1:m], p_token_ref[1:m]);
    END IF;
    RETURN QUERY
    SELECT u.e, u.o, u.s, u.c, p_ref[u.e], u.oc, e_state[u.e], u.l
      FROM unnest(o_elem, o_ord, o_subject, o_client, o_outcome, o_line)
           AS u(e, o, s, c, oc, l)
     ORDER BY u.e, u.o;
END
$$;

REVOKE ALL ON FUNCTION fleet.read_batch(text[], text[], text[], text[], boolean[], boolean[],
                                        text[], text[], text[], text[], text[], text[], text[],
                                        text[], text[], text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.read_batch(text[], text[], text[], text[], boolean[], boolean[],
                                           text[], text[], text[], text[], text[], text[],
                                           text[], text[], text[], text[]) TO fleet_app;
