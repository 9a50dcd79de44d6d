-- `rate_limit_step` (one request a call, 20261125000002) stays for servers of the
-- previous release during an upgrade, as a round of one of `rate_limit_steps`
-- (20261125000003): the rule is written once in the database.
CREATE OR REPLACE FUNCTION rate_limit_step(
    p_subject TEXT, p_now BIGINT, p_per_minute BIGINT, p_per_day BIGINT,
    p_after_refusals BIGINT, p_ban_seconds BIGINT,
    OUT outcome BIGINT, OUT minute_start BIGINT, OUT minute_count BIGINT, OUT day_start BIGINT,
    OUT day_count BIGINT, OUT refusals BIGINT, OUT refusals_until BIGINT, OUT banned_until BIGINT
) LANGUAGE sql AS $$
    SELECT * FROM rate_limit_steps(p_subject, p_now, p_per_minute, p_per_day, p_after_refusals, p_ban_seconds, 1)
$$;
