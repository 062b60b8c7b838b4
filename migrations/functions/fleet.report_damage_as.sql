-- The previous releases' report_damaged_bike: kept while a rolling upgrade runs them beside this
-- one on one database (expand now, contract in a later release), as thin wrappers over
-- fleet.report_damaged_bike_as, so that there is one implementation and one key table
-- (fleet.idempotent_calls). The arguments are packed into its p_args (absent when NULL), its
-- columns mapped back to the out_* ones these forms return: the caller's rights, then
-- out_outcome (fleet.report_damaged_bike_as's words), the bike, its region, its status before
-- and after, its open case, the report, its case and when it was recorded.
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
SET search_path = pg_catalog, fleet
AS $$
BEGIN
    RETURN QUERY
    SELECT r.role, r.regions, r.is_human, r.client_may_read, r.client_may_report,
           r.requires_confirmation, r.outcome, r.bike_id, r.region, r.status_before, r.status,
           r.open_case_id, r.report_id, r.case_id, r.recorded_at
      FROM fleet.report_damaged_bike_as(
               p_subject, p_client,
               jsonb_strip_nulls(jsonb_build_object('bikeId', p_bike, 'issue', p_issue,
                                                    'description', p_description,
                                                    'caseId', p_case)),
               p_tool, p_key, p_digest, p_request_id, p_confirmed) r;
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
SET search_path = pg_catalog, fleet
AS $$
    SELECT * FROM fleet.report_damage_as(p_subject, p_client, p_bike, p_issue, p_description,
                                         p_case, p_key, p_digest, p_request_id, p_confirmed,
                                         'report_damaged_bike')
$$;

REVOKE ALL ON FUNCTION fleet.report_damage_as(text, text, text, text, text, text, text, text,
                                              text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.report_damage_as(text, text, text, text, text, text, text, text,
                                                   text, boolean) TO fleet_app;
