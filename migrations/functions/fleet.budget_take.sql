-- Leases from deployment-wide token buckets (0012): for each bucket i, refills p_keys[i] to now
-- at p_per_s[i] tokens a second up to p_burst[i] (a bucket without a row is full), then takes
-- up to p_want[i] whole tokens, as many as it holds. Returns one row per bucket, in order: the
-- tokens granted and the level left (below 1 when fewer than wanted were granted: the instance
-- then asks again only once a token is back, and at most once a second). The clock is the
-- database's: one clock for every instance.
-- Buckets are locked in the order given: the server always gives the subject's before the
-- client application's, so two calls never wait on each other in a cycle.
-- SECURITY DEFINER (fleet_app has no privilege on fleet.budgets). A lock on the table (VACUUM
-- FULL, an administrator's LOCK) fails the call after lock_timeout: the instance then uses its
-- own buckets for a while (README: Budgets across instances) rather than stall every call.
-- Now and then (one call in 1000) rows of buckets that are full again are deleted: a full
-- bucket is the same as none, so the table holds only the buckets drawn from lately.
CREATE OR REPLACE FUNCTION fleet.budget_take(p_keys text[], p_want integer[],
                                             p_per_s double precision[],
                                             p_burst double precision[])
RETURNS TABLE (granted integer, level double precision)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, fleet, pg_temp
SET lock_timeout = '100ms'
AS $$
DECLARE
    t timestamptz := clock_timestamp();
    i integer;
BEGIN
    IF cardinality(p_keys) NOT BETWEEN 1 AND 4 OR cardinality(p_want) <> cardinality(p_keys)
       OR cardinality(p_per_s) <> cardinality(p_keys)
       OR cardinality(p_burst) <> cardinality(p_keys) THEN
        RAISE EXCEPTION 'budget_take: 1 to 4 buckets, every array as long' USING ERRCODE = '22023';
    END IF;
    FOR i IN 1 .. cardinality(p_keys) LOOP
        IF p_want[i] < 1 OR p_want[i] > p_burst[i] OR p_per_s[i] <= 0 THEN
            RAISE EXCEPTION 'budget_take: want in [1, burst], a positive rate' USING ERRCODE = '22023';
        END IF;
        RETURN QUERY
        INSERT INTO fleet.budgets AS b (key, tokens, stamp, granted, full_at)
        VALUES (p_keys[i], p_burst[i] - p_want[i], t, p_want[i],
                t + make_interval(secs => p_want[i] / p_per_s[i]))
        ON CONFLICT (key) DO UPDATE
           SET (tokens, stamp, granted, full_at) =
               (SELECT r.lv - r.take, t, r.take,
                       t + make_interval(secs => (p_burst[i] - r.lv + r.take) / p_per_s[i])
                  FROM (SELECT l.lv, least(p_want[i], floor(l.lv))::integer AS take
                          FROM (SELECT least(p_burst[i],
                                             b.tokens + greatest(0, extract(epoch FROM t - b.stamp)::double precision)
                                                        * p_per_s[i]) AS lv) l) r)
        RETURNING b.granted, b.tokens;
    END LOOP;
    IF random() < 0.001 THEN
        DELETE FROM fleet.budgets WHERE full_at < t;
    END IF;
END
$$;

REVOKE ALL ON FUNCTION fleet.budget_take(text[], integer[], double precision[], double precision[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.budget_take(text[], integer[], double precision[], double precision[]) TO fleet_app;
