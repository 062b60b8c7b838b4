-- 0017: report numbers that no restore hands out twice. A restored database's sequence is where
-- the backup left it, behind the numbers the source handed out after the backup; the reports
-- filed since (functions/fleet.report_damage_as.sql) take their number from the database's clock
-- and the sequence (functions/fleet.clock_number.sql), twelve digits and more instead of four
-- to nine. The check is replaced by a wider one in one statement, NOT VALID: every row holds a
-- number the narrower check admitted, so there is nothing to scan under the table's lock (the
-- previous release keeps serving during a rolling upgrade).
ALTER TABLE fleet.damage_reports
    DROP CONSTRAINT damage_reports_report_id_check,
    ADD CONSTRAINT damage_reports_report_id_check CHECK (report_id ~ '^DR-[0-9]{4,18}$') NOT VALID;
