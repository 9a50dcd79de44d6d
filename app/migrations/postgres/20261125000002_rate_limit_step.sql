-- The rate limiter's rule (app/src/services/limits/mod.rs, `Usage::step`) in PL/pgSQL,
-- for servers that count in PostgreSQL: one statement a request, the subject's row
-- locked only while the function runs (a transaction around a locked read, the
-- decision in Rust and a write held the lock for four round trips, and one busy key's
-- requests, which all wait for that row, went 2,500 a second). A test holds it to the
-- Rust rule, as the Lua one for Redis (`the_sql_rule_is_the_rust_rule`).
--
-- Its commit does not wait for the write-ahead log to reach the disk
-- (`synchronous_commit` off for this transaction only): a crash of the database server
-- may forget the last fraction of a second of counting, as a SQLite server's crash
-- forgets up to a second (its counters are saved every second), and every request no
-- longer waits for a disk flush behind the others of its key.
--
-- Returns the outcome (0 allowed, 1 limited, 2 banned, 3 banned now) and the counters
-- after it.
CREATE FUNCTION rate_limit_step(
    p_subject TEXT, p_now BIGINT, p_per_minute BIGINT, p_per_day BIGINT,
    p_after_refusals BIGINT, p_ban_seconds BIGINT,
    OUT outcome BIGINT, OUT minute_start BIGINT, OUT minute_count BIGINT, OUT day_start BIGINT,
    OUT day_count BIGINT, OUT refusals BIGINT, OUT refusals_until BIGINT, OUT banned_until BIGINT
) LANGUAGE plpgsql AS $$
DECLARE
    u rate_limit_usage%ROWTYPE;
    minute_left BIGINT;
    day_left BIGINT;
    blocked_until BIGINT;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    SELECT * INTO u FROM rate_limit_usage WHERE subject = p_subject FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO rate_limit_usage VALUES (p_subject, 0, 0, 0, 0, 0, 0, 0) ON CONFLICT (subject) DO NOTHING;
        SELECT * INTO u FROM rate_limit_usage WHERE subject = p_subject FOR UPDATE;
    END IF;
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
    UPDATE rate_limit_usage SET
        minute_start = u.minute_start, minute_count = u.minute_count, day_start = u.day_start,
        day_count = u.day_count, refusals = u.refusals, refusals_until = u.refusals_until,
        banned_until = u.banned_until
    WHERE subject = p_subject;
    minute_start := u.minute_start; minute_count := u.minute_count; day_start := u.day_start;
    day_count := u.day_count; refusals := u.refusals; refusals_until := u.refusals_until;
    banned_until := u.banned_until;
END
$$;
