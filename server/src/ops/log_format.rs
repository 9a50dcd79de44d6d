//! The text format of the log: tracing-subscriber's `Full` format, byte for byte, with
//! the request's line (`ops::log_answer`, one per request) written without its general
//! machinery. Formatted by `Full`, that line took a fifth of the server's instructions
//! for a cached read: every `&str` field went through `Debug` (a check of each char
//! for escaping), every part through `nu_ansi_term`'s painting with no colours, and
//! the timestamp, level and target through `write!` (docs/PERFORMANCE.md, "What
//! changed"). Everything else, and every line while colours are on, is `Full`'s.

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::FmtContext;
use tracing_subscriber::fmt::format::{Format, FormatEvent, FormatFields, Full, Writer};
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::registry::LookupSpan;

/// The target of the request's line, and of nothing else: its lines are written for
/// that line's shape (a constant message, string and number fields), without `Full`'s
/// escaping of control characters in a message or its chain of an error's sources.
pub(crate) const REQUEST_TARGET: &str = "petstore::request";

/// The log's text format (`--log-format human`).
pub struct TextFormat<T = SystemTime> {
    timer: T,
    full: Format<Full, T>,
}

impl TextFormat<SecondsKept> {
    pub fn new() -> TextFormat<SecondsKept> {
        TextFormat::with_timer(SecondsKept)
    }
}

impl Default for TextFormat<SecondsKept> {
    fn default() -> TextFormat<SecondsKept> {
        TextFormat::new()
    }
}

/// tracing-subscriber's `SystemTime` (RFC 3339 in UTC, to the microsecond), with the
/// part up to the second formatted once a second on each thread rather than on every
/// line (`SystemTime` formatting it was 2,100 of a pet read's instructions).
#[derive(Clone, Copy, Default)]
pub struct SecondsKept;

thread_local! {
    /// The Unix second last formatted on this thread, and its text up to the `.`.
    static SECOND: std::cell::RefCell<(u64, String)> = const { std::cell::RefCell::new((u64::MAX, String::new())) };
}

impl FormatTime for SecondsKept {
    fn format_time(&self, w: &mut Writer<'_>) -> fmt::Result {
        let since_epoch = |time: std::time::SystemTime| time.duration_since(std::time::UNIX_EPOCH).ok();
        let Some(now) = since_epoch(std::time::SystemTime::now()) else { return SystemTime.format_time(w) };
        // `try_with`: a line logged while this thread's locals are being torn down
        // gets `SystemTime`'s text.
        let kept = SECOND.try_with(|kept| {
            let (second, text) = &mut *kept.borrow_mut();
            if *second != now.as_secs() {
                // `SystemTime` formats the time it reads itself: kept only when that was
                // this second (read before and after it).
                let mut full = String::new();
                SystemTime.format_time(&mut Writer::new(&mut full))?;
                let after = since_epoch(std::time::SystemTime::now()).map(|t| t.as_secs());
                match full.find('.') {
                    Some(dot) if after == Some(now.as_secs()) => {
                        text.clear();
                        text.push_str(&full[..=dot]);
                        *second = now.as_secs();
                    }
                    _ => return Ok(false),
                }
            }
            w.write_str(text)?;
            Ok::<_, fmt::Error>(true)
        });
        if !kept.unwrap_or(Ok(false))? {
            return SystemTime.format_time(w);
        }
        let micros = now.subsec_micros();
        let mut digits = *b"000000Z";
        for (place, digit) in digits[..6].iter_mut().rev().zip(std::iter::successors(Some(micros), |m| Some(m / 10))) {
            *place = b'0' + (digit % 10) as u8;
        }
        w.write_str(std::str::from_utf8(&digits).expect("ASCII digits"))
    }
}

impl<T: FormatTime + Clone> TextFormat<T> {
    fn with_timer(timer: T) -> TextFormat<T> {
        TextFormat { full: Format::default().with_timer(timer.clone()), timer }
    }
}

impl<S, N, T> FormatEvent<S, N> for TextFormat<T>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    T: FormatTime,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, mut writer: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        let meta = event.metadata();
        // Colours (a person at a terminal) and spans are `Full`'s business.
        if meta.target() != REQUEST_TARGET || writer.has_ansi_escapes() || ctx.event_scope().is_some() {
            return self.full.format_event(ctx, writer, event);
        }
        // As `Full` writes them: the time, the level five wide, the target.
        if self.timer.format_time(&mut writer).is_err() {
            writer.write_str("<unknown time>")?;
        }
        writer.write_str(match *meta.level() {
            tracing::Level::TRACE => " TRACE ",
            tracing::Level::DEBUG => " DEBUG ",
            tracing::Level::INFO => "  INFO ",
            tracing::Level::WARN => "  WARN ",
            tracing::Level::ERROR => " ERROR ",
        })?;
        writer.write_str(meta.target())?;
        writer.write_str(": ")?;
        // The fields are gathered in a buffer and written to the line at once: each
        // write to `writer` is a `dyn` call, and a field took five or six of them.
        let mut write_fields = |line: &mut String| {
            line.clear();
            let mut fields = Fields { line, first: true, result: Ok(()) };
            event.record(&mut fields);
            fields.result?;
            fields.line.push('\n');
            let written = writer.write_str(fields.line);
            // Not kept at the size of a rare long line (a path of kilobytes).
            if fields.line.capacity() > 4096 {
                *fields.line = String::new();
            }
            written
        };
        // A fresh buffer when this thread's is gone (its locals being torn down) or in
        // use (a line logged while one is formatted).
        match FIELDS.try_with(|kept| kept.try_borrow_mut().ok().map(|mut line| write_fields(&mut line))) {
            Ok(Some(written)) => written,
            _ => write_fields(&mut String::new()),
        }
    }
}

thread_local! {
    /// The request line's fields, gathered before they are written (kept, so that a
    /// line allocates nothing).
    static FIELDS: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// The fields as `DefaultFields` writes them (the message bare, then `name=value`,
/// strings quoted), with a string that needs no escaping copied as it is.
struct Fields<'l> {
    line: &'l mut String,
    first: bool,
    /// A `Debug` implementation's error, if one failed.
    result: fmt::Result,
}

impl Fields<'_> {
    /// The line, after the separator and the field's name.
    fn named(&mut self, field: &Field) -> &mut String {
        if !std::mem::take(&mut self.first) {
            self.line.push(' ');
        }
        if field.name() != "message" {
            let name = field.name();
            self.line.push_str(name.strip_prefix("r#").unwrap_or(name));
            self.line.push('=');
        }
        self.line
    }

    fn debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let written = write!(self.named(field), "{value:?}");
        self.result = self.result.and(written);
    }
}

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.named(field).push_str(value);
        } else if is_plain(value) {
            let line = self.named(field);
            line.push('"');
            line.push_str(value);
            line.push('"');
        } else {
            self.debug(field, &value);
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.named(field).push_str(itoa::Buffer::new().format(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.named(field).push_str(itoa::Buffer::new().format(value));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        match thousandths(value) {
            Some((whole, thousandths)) => write_thousandths(self.named(field), whole, thousandths),
            None => self.debug(field, &value),
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.debug(field, value);
    }
}

/// Whether `Debug` leaves `value` as it is (quoted): printable ASCII but the quote and
/// the backslash. Every byte is looked at, without stopping at the first that is not:
/// the compiler then checks sixteen or more at a time (a request id's 36 bytes one at a
/// time were 300 of a read's instructions).
fn is_plain(value: &str) -> bool {
    value.bytes().fold(true, |plain, b| plain & (b' '..=b'~').contains(&b) & (b != b'"') & (b != b'\\'))
}

/// `value` as whole units and thousandths, when it is exactly the `f64` nearest to
/// such a decimal (as a latency in whole microseconds, counted in milliseconds, is).
/// Such a number's `Debug` text is that decimal, which [`write_thousandths`] writes
/// without the float formatting machinery (800 of a read's instructions).
fn thousandths(value: f64) -> Option<(u64, u16)> {
    // Far below where `Debug` switches to an exponent, and where every thousandth is
    // still its own `f64`; not -0.0, which `Debug` writes with its sign.
    if !(0.0..1e12).contains(&value) || value.is_sign_negative() {
        return None;
    }
    let scaled = (value * 1000.0).round() as u64;
    (scaled as f64 / 1000.0 == value).then_some((scaled / 1000, (scaled % 1000) as u16))
}

/// `12.0`, `0.412`, `1.5`: as `Debug` writes the `f64` of that decimal.
fn write_thousandths(line: &mut String, whole: u64, thousandths: u16) {
    let digits =
        [b'0' + (thousandths / 100) as u8, b'0' + (thousandths / 10 % 10) as u8, b'0' + (thousandths % 10) as u8];
    let mut len = digits.len();
    while len > 1 && digits[len - 1] == b'0' {
        len -= 1;
    }
    line.push_str(itoa::Buffer::new().format(whole));
    line.push('.');
    line.push_str(std::str::from_utf8(&digits[..len]).expect("ASCII digits"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::fmt::MakeWriter;

    /// A fixed time, so that two formats' lines can be compared.
    #[derive(Clone)]
    struct Noon;

    impl FormatTime for Noon {
        fn format_time(&self, w: &mut Writer<'_>) -> fmt::Result {
            w.write_str("2026-11-26T12:00:00.000000Z")
        }
    }

    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Lines {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Lines {
        type Writer = Lines;
        fn make_writer(&'a self) -> Lines {
            self.clone()
        }
    }

    /// What `log` logs, formatted by `format`.
    fn logged<E>(format: E, log: impl FnOnce()) -> String
    where
        E: FormatEvent<tracing_subscriber::Registry, tracing_subscriber::fmt::format::DefaultFields>
            + Send
            + Sync
            + 'static,
    {
        let lines = Lines::default();
        let subscriber =
            tracing_subscriber::fmt().with_ansi(false).with_writer(lines.clone()).event_format(format).finish();
        tracing::subscriber::with_default(subscriber, log);
        String::from_utf8(lines.0.lock().unwrap().clone()).unwrap()
    }

    fn both(log: impl Fn()) -> (String, String) {
        (logged(TextFormat::with_timer(Noon), &log), logged(Format::default().with_timer(Noon), &log))
    }

    #[test]
    fn seconds_kept_writes_what_system_time_writes() {
        let format = |timer: &dyn FormatTime| {
            let mut text = String::new();
            timer.format_time(&mut Writer::new(&mut text)).unwrap();
            text
        };
        let mut compared = 0;
        for _ in 0..2_000 {
            let (ours, theirs) = (format(&SecondsKept), format(&SystemTime));
            assert_eq!(ours.len(), "2026-11-26T12:00:00.000000Z".len(), "{ours}");
            assert!(ours.ends_with('Z') && ours.as_bytes()[19] == b'.', "{ours}");
            // The same second (a line between them may cross one): the same text up
            // to the microseconds, which differ as the clock runs.
            if ours[..20] == theirs[..20] {
                compared += 1;
                assert!(ours[20..26].bytes().all(|b| b.is_ascii_digit()), "{ours}");
                assert!(ours <= theirs, "{ours} after {theirs}");
            }
        }
        assert!(compared > 1_000, "only {compared} formatted in the same second");
    }

    #[test]
    fn the_request_line_is_as_full_writes_it() {
        let (ours, full) = both(|| {
            let took = 0.412;
            tracing::info!(target: REQUEST_TARGET, id = "abc-1", method = "GET", path = "/api/v1/pets/1",
                status = 200u16, latency_ms = took, "answered");
            tracing::info!(target: REQUEST_TARGET, id = "-", method = "POST", path = "/x", status = 503u16,
                latency_ms = 1.0, "answered");
        });
        assert_eq!(ours, full);
        assert_eq!(
            ours.lines().next().unwrap(),
            r#"2026-11-26T12:00:00.000000Z  INFO petstore::request: answered id="abc-1" method="GET" path="/api/v1/pets/1" status=200 latency_ms=0.412"#
        );
    }

    #[test]
    fn numbers_are_written_as_full_writes_them() {
        let (ours, full) = both(|| {
            // Latencies in whole microseconds, as milliseconds, over the range a
            // request's can take, and every number type a field can have.
            for micros in (0..3_000u64).chain([9_999, 10_000, 123_456, 60_000_000, 3_600_000_001]) {
                tracing::info!(target: REQUEST_TARGET, latency_ms = micros as f64 / 1000.0, "answered");
            }
            for value in [
                0.1 + 0.2,
                -0.5,
                -0.0,
                999_999_999_999.999,
                1e12,
                1e15,
                1e21,
                2.5e-7,
                5e-324,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                0.0005,
            ] {
                tracing::info!(target: REQUEST_TARGET, latency_ms = value, "answered");
            }
            tracing::info!(target: REQUEST_TARGET, status = 0u16, n = u64::MAX, i = i64::MIN, j = -7i64, "answered");
        });
        assert_eq!(ours, full);
        assert!(
            ours.contains("latency_ms=0.412\n")
                && ours.contains("latency_ms=10.0\n")
                && ours.contains("latency_ms=3600000.001\n"),
            "{ours}"
        );
    }

    #[test]
    fn strings_that_need_escaping_are_escaped_as_full_escapes_them() {
        let (ours, full) = both(|| {
            tracing::warn!(target: REQUEST_TARGET, id = "a\"b\\c", path = "/caf\u{e9}\t", n = -3i64, ok = true, "answered");
        });
        assert_eq!(ours, full);
        assert!(ours.contains(r#"id="a\"b\\c""#), "{ours}");
        // Each byte at the edges of what is copied as it is, alone and after a plain run
        // longer than the compiler's stride.
        let run = "x".repeat(40);
        for edge in ["", " ", "~", "\u{1f}", "\u{7f}", "\u{80}", "\"", "\\", "\n", "\u{0}"] {
            let after_run = format!("{run}{edge}");
            let (ours, full) = both(|| {
                tracing::info!(target: REQUEST_TARGET, alone = edge, after_run = after_run.as_str(), "answered");
            });
            assert_eq!(ours, full, "{edge:?}");
        }
    }

    #[test]
    fn other_lines_are_fulls_own() {
        let (ours, full) = both(|| {
            tracing::info!(request = "r-1", "a write failed: {}", "disk full");
            let span = tracing::info_span!("job", n = 1);
            let _entered = span.enter();
            tracing::info!(target: REQUEST_TARGET, id = "in-a-span", "answered");
        });
        assert_eq!(ours, full);
    }
}
