-- Deletes up to p_limit expired tasks (their ttl_ms lapsed), oldest first, and says how many:
-- fleet.task_open calls it for up to 100 with every task it opens (fleet.task_for never
-- shows an expired task, purged or not). SECURITY DEFINER, owned by the owner role with a fixed search_path: the login role may
-- delete no task row itself. Concurrent purges skip each other's rows.
CREATE OR REPLACE FUNCTION fleet.task_purge(p_limit integer DEFAULT 1000) RETURNS integer
LANGUAGE sql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, fleet, pg_temp
AS $$
    WITH gone AS (
        DELETE FROM tasks
         WHERE task_id IN (SELECT tk.task_id FROM tasks tk
                            WHERE tk.expires_at <= clock_timestamp()
                            ORDER BY tk.expires_at
                            LIMIT greatest(least(coalesce(p_limit, 1000), 100000), 0)
                            FOR UPDATE SKIP LOCKED)
        RETURNING 1
    )
    SELECT count(*)::integer FROM gone
$$;

REVOKE ALL ON FUNCTION fleet.task_purge(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.task_purge(integer) TO fleet_app;
