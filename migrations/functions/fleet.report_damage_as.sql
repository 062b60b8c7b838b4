-- The previous releases' report_damaged_bike: kept while a rolling upgrade runs them beside this
-- one on one database (expand now, contract in a later release), as thin wrappers over
-- fleet.report_damaged_bike_as, so that there is one implementation and one key table
-- (fleet.idempotent_calls). The arguments are packed into its call (absent when NULL), its
-- answer mapped back to the out_* columns these forms return: the caller's rights, then
-- out_outcome (fleet.report_damaged_bike_as's words), the bike, its region, its status before
-- and after (with confirmation_required, the status the report would leave:
-- fleet.report_leaves), its active case, the report, its case and when it was recorded; the
-- bike as it stands is read as the caller, whose identity the write set.
CREATE OR REPLACE FUNCTION fleet.report_damage_as(p_subject text, p_client text, p_bike text, p_issue text,
                                                  p_description text, p_case text, p_key text,
                                                  p_digest text, p_request_id text, p_confirmed boolean,
                                                  p_tool text)
RETURNS TABLE (out_role text, out_regions text[], out_is_human boolean,
               out_client_may_read boolean, out_client_may_report boolean,
               out_requires_confirmation boolean, out_outcome text, out_bike_id text,
               out_region text, out_status_before text, out_status text,
               out_open_case_id text, out_report_id text, out_case_id text,
               out_recorded_at text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
DECLARE
    a fleet.write_answer;
    b record;
BEGIN
    a := fleet.report_damaged_bike_as((p_subject, p_client,
             jsonb_strip_nulls(jsonb_build_object('bikeId', p_bike, 'issue', p_issue,
                                                  'description', p_description, 'caseId', p_case)),
             p_tool, p_key, p_digest, p_request_id, p_confirmed, p_bike, NULL, NULL,
             NULL)::fleet.write_call);
    SELECT bk.bike_id, bk.region, coalesce(dr.status_before, bk.status) AS before,
           fleet.report_leaves(bk.status) AS would,
           (SELECT x.case_id FROM cases x WHERE x.bike_id = bk.bike_id AND x.state <> 'closed')
               AS active
      INTO b
      FROM bikes bk
      LEFT JOIN damage_reports dr ON dr.report_id = a.result ->> 'report_id'
     WHERE bk.bike_id = p_bike;
    RETURN QUERY
    SELECT (a.acting).role, (a.acting).regions, (a.acting).is_human, (a.acting).client_may_read,
           (a.acting).client_may_report, (a.acting).requires_confirmation, a.outcome,
           coalesce(a.result ->> 'bike_id', b.bike_id), coalesce(a.region, b.region), b.before,
           coalesce(a.result ->> 'status',
                    CASE WHEN a.outcome = 'confirmation_required' THEN b.would END),
           b.active, a.result ->> 'report_id', a.result ->> 'case_id',
           a.result ->> 'recorded_at';
END
$$;

REVOKE ALL ON FUNCTION fleet.report_damage_as(text, text, text, text, text, text, text, text,
                                              text, boolean, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.report_damage_as(text, text, text, text, text, text, text, text,
                                                   text, boolean, text) TO fleet_app;

-- The form before p_tool, which names the tool report_damaged_bike.
CREATE OR REPLACE FUNCTION fleet.report_damage_as(p_subject text, p_client text, p_bike text, p_issue text,
                                                  p_description text, p_case text, p_key text,
                                                  p_digest text, p_request_id text, p_confirmed boolean)
RETURNS TABLE (out_role text, out_regions text[], out_is_human boolean,
               out_client_may_read boolean, out_client_may_report boolean,
               out_requires_confirmation boolean, out_outcome text, out_bike_id text,
               out_region text, out_status_before text, out_status text,
               out_open_case_id text, out_report_id text, out_case_id text,
               out_recorded_at text)
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, fleet, pg_temp
AS $$
    SELECT * FROM fleet.report_damage_as(p_subject, p_client, p_bike, p_issue, p_description,
                                         p_case, p_key, p_digest, p_request_id, p_confirmed,
                                         'report_damaged_bike')
$$;

REVOKE ALL ON FUNCTION fleet.report_damage_as(text, text, text, text, text, text, text, text,
                                              text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.report_damage_as(text, text, text, text, text, text, text, text,
                                                   text, boolean) TO fleet_app;
