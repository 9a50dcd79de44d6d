-- The rate limiter's rule (app/src/services/limits/mod.rs, `Usage::step`) in PL/pgSQL,
-- applied `p_count` times in a row: a server counts every request of a subject that
-- arrived while its previous statement for that subject ran in one statement (one
-- round trip and one row update for all of them). The requests are decided one after
-- another, as if they had come one at a time, so a limit stays exact: a busy key whose
-- every request took its own statement queued on the subject's row lock, 6 to 7 % of
-- the bench's ceiling on two cores. A test holds it to the Rust rule
-- (`the_sql_rule_is_the_rust_rule`, batches of several requests included).
--
-- Its commit does not wait for the write-ahead log to reach the disk
-- (`synchronous_commit` off for this transaction only): a crash of the database server
-- may forget the last fraction of a second of counting, as a SQLite server's crash
-- forgets up to a second (its counters are saved every second).
--
-- Returns one row per request, in order: the outcome (0 allowed, 1 limited, 2 banned,
-- 3 banned now) and the counters after it. (`rate_limit_step` of the previous migration,
-- one request a call, stays for servers of the previous release during an upgrade.)
CREATE FUNCTION rate_limit_steps(
    p_subject TEXT, p_now BIGINT, p_per_minute BIGINT, p_per_day BIGINT,
    p_after_refusals BIGINT, p_ban_seconds BIGINT, p_count INTEGER
) RETURNS TABLE (
    outcome BIGINT, minute_start BIGINT, minute_count BIGINT, day_start BIGINT,
    day_count BIGINT, refusals BIGINT, refusals_until BIGINT, banned_until BIGINT
) LANGUAGE plpgsql AS $$
DECLARE
    u rate_limit_usage%ROWTYPE;
    minute_left BIGINT;
    day_left BIGINT;
    blocked_until BIGINT;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    SELECT * INTO u FROM rate_limit_usage AS r WHERE r.subject = p_subject FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO rate_limit_usage VALUES (p_subject, 0, 0, 0, 0, 0, 0, 0) ON CONFLICT DO NOTHING;
        SELECT * INTO u FROM rate_limit_usage AS r WHERE r.subject = p_subject FOR UPDATE;
    END IF;
    FOR i IN 1..p_count LOOP
        -- The windows roll over, forward only (a server whose clock is behind counts in
        -- the window in progress).
        IF u.minute_start < p_now - p_now % 60 THEN
            u.minute_start := p_now - p_now % 60;
            u.minute_count := 0;
        END IF;
        IF u.day_start < p_now - p_now % 86400 THEN
            u.day_start := p_now - p_now % 86400;
            u.day_count := 0;
        END IF;
        IF u.banned_until > p_now THEN
            outcome := 2;
        ELSE
            minute_left := GREATEST(p_per_minute - u.minute_count, 0);
            day_left := GREATEST(p_per_day - u.day_count, 0);
            IF minute_left > 0 AND day_left > 0 THEN
                u.minute_count := u.minute_count + 1;
                u.day_count := u.day_count + 1;
                outcome := 0;
            ELSE
                blocked_until := 0;
                IF minute_left = 0 THEN blocked_until := u.minute_start + 60; END IF;
                IF day_left = 0 THEN blocked_until := GREATEST(blocked_until, u.day_start + 86400); END IF;
                IF u.refusals_until <> blocked_until THEN
                    u.refusals := 0;
                    u.refusals_until := blocked_until;
                END IF;
                IF u.refusals >= p_after_refusals THEN
                    u.banned_until := p_now + p_ban_seconds;
                    outcome := 3;
                ELSE
                    u.refusals := u.refusals + 1;
                    outcome := 1;
                END IF;
            END IF;
        END IF;
        minute_start := u.minute_start; minute_count := u.minute_count; day_start := u.day_start;
        day_count := u.day_count; refusals := u.refusals; refusals_until := u.refusals_until;
        banned_until := u.banned_until;
        RETURN NEXT;
    END LOOP;
    UPDATE rate_limit_usage AS r SET
        minute_start = u.minute_start, minute_count = u.minute_count, day_start = u.day_start,
        day_count = u.day_count, refusals = u.refusals, refusals_until = u.refusals_until,
        banned_until = u.banned_until
    WHERE r.subject = p_subject;
END
$$;
