-- The statement of a batch of one read (domain/reads_batch.c, issue "One round trip per batch of
-- calls"), built from one template and the read function's signature: the server asks for it
-- once per read, prepares it on each of its connections, and runs it for every batch of that
-- read. Its parameters are arrays with one element per call: $1 the subjects, $2 the client
-- applications, $3 the calls' references (echoed), $4 their arguments (a two-dimensional text
-- array: row i holds call i's arguments after subject and client, cast here to the function's
-- argument types), then the audit columns of fleet.audit_batch ($5 tool, NULL for a call without
-- an audit row, $6 target, $7 digest, $8 JSON-RPC id, $9 trace id, $10 token reference). Per call,
-- p_fn(subject, client, arguments...) sets and checks the caller's identity (fleet.act_as) and
-- reads under row-level security as that caller, one call after the other (a LATERAL call per
-- element of a materialised CTE); the audit rows of the audited calls go in one fleet.audit_batch
-- INSERT of the same statement, so the reads and their rows commit together. The result has the
-- columns of fleet.read_batch, which does the same for any mix of reads with one subtransaction
-- per read and per failing call: the server falls back to it when a batch of this statement
-- fails (a call that raises fails this statement whole, and nothing of it committed).
-- The outcome of each call: 'denied' when the rights (p_prefix || role NULL, or
-- client_may_read false) say no, and then the line holds the six rights columns only (p_cols
-- names them first); 'not_found' when the key column of the first row is NULL (one-object reads;
-- a list, p_list, is 'ok' even empty); 'error' when the function returned no row; else 'ok'.
-- Each row echoes the identity the call ran as (app.subject and app.client when the row was
-- produced) and its reference, which the server checks before it answers.
-- Only text: it grants nothing (the statement runs with the caller's rights).
CREATE OR REPLACE FUNCTION fleet.read_batch_sql(p_fn text, p_cols text[], p_key text, p_prefix text,
                                                p_list boolean)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, fleet
AS $$
DECLARE
    q text;
BEGIN
    SELECT format(
        'WITH e AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $5::text[]) '
        'WITH ORDINALITY AS e(s, c, r, tool, i)), '
        'r AS (SELECT e.i::integer AS elem, coalesce(t.ordinality, 1)::integer AS ord, x.s, x.c, '
        'e.r, x.o, CASE WHEN x.o = ''denied'' THEN ROW(%1$s)::text WHEN x.o <> ''error'' THEN '
        'ROW(%2$s)::text END AS line '
        'FROM e LEFT JOIN LATERAL %3$I.%4$I(%5$s) WITH ORDINALITY AS t ON true '
        'CROSS JOIN LATERAL (SELECT coalesce(fleet.current_subject(), e.s) AS s, '
        'coalesce(fleet.current_client(), e.c) AS c, CASE WHEN t.ordinality IS NULL THEN '
        '''error'' WHEN t.%6$I IS NULL OR NOT coalesce(t.%7$I, false) THEN ''denied'' WHEN '
        '%8$L AND t.%9$I IS NULL THEN ''not_found'' ELSE ''ok'' END AS o) AS x '
        'WHERE coalesce(t.ordinality, 1) = 1 OR x.o <> ''denied''), '
        'a AS (SELECT fleet.audit_batch(array_agg(e.s ORDER BY e.i), array_agg(e.c ORDER BY e.i), '
        'array_agg(e.tool ORDER BY e.i), array_agg(($6::text[])[e.i] ORDER BY e.i), '
        'array_agg(($7::text[])[e.i] ORDER BY e.i), array_agg(r.o ORDER BY e.i), '
        'array_agg(CASE WHEN r.o = ''error'' THEN ''no row'' END ORDER BY e.i), '
        'array_agg(($8::text[])[e.i] ORDER BY e.i), array_agg(($9::text[])[e.i] ORDER BY e.i), '
        'array_agg(($10::text[])[e.i] ORDER BY e.i)) AS n '
        'FROM e JOIN r ON r.elem = e.i AND r.ord = 1 WHERE e.tool IS NOT NULL) '
        'SELECT r.elem, r.ord, r.s AS subject, r.c AS client_id, r.r AS ref, r.o AS outcome, '
        'CASE WHEN r.o = ''error'' THEN ''P0002'' END AS sqlstate, r.line FROM r LEFT JOIN a ON true '
        'ORDER BY r.elem, r.ord',
        (SELECT string_agg('t.' || quote_ident(u.c), ', ' ORDER BY u.o)
           FROM unnest(p_cols[1:6]) WITH ORDINALITY AS u(c, o)),
        (SELECT string_agg('t.' || quote_ident(u.c), ', ' ORDER BY u.o)
           FROM unnest(p_cols) WITH ORDINALITY AS u(c, o)),
        n.nspname, p.proname,
        (SELECT string_agg(CASE a.o WHEN 1 THEN 'e.s' WHEN 2 THEN 'e.c'
                           ELSE format('($4::text[])[e.i][%s]::%s', a.o - 2,
                                       format_type(a.t, NULL)) END,
                           ', ' ORDER BY a.o)
           FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY AS a(t, o)),
        p_prefix || 'role', p_prefix || 'client_may_read', NOT p_list, p_key)
      INTO STRICT q
      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = 'fleet' AND starts_with(p_fn, 'fleet.') AND p.proname = substr(p_fn, 7);
    RETURN q;
END
$$;

REVOKE ALL ON FUNCTION fleet.read_batch_sql(text, text[], text, text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.read_batch_sql(text, text[], text, text, boolean) TO fleet_app;
