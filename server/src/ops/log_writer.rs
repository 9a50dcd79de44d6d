//! Where the log's lines go: a buffer that requests append to, written to standard
//! error by a thread of its own, a batch at a time.
//!
//! Why not `tracing_appender::non_blocking`, which this replaced: it sends each line
//! through a channel as a `Vec` of its own, and its thread wakes for nearly every line
//! under load (a futex call, an inter-processor interrupt and a context switch on the
//! request's side, the channel's spinning on the writer's). On this 2-core machine that
//! was most of what the request log cost (docs/PERFORMANCE.md, "What the request log
//! costs"). Here a request appends its line to one shared buffer under a mutex held for
//! a copy; only the line that finds the writer asleep wakes it, and the writer then waits
//! a moment (`GATHER`) so that the lines of the next few milliseconds go out together.
//! A line is out `GATHER` after it is logged, or after the batch being written then.
//!
//! A request never waits for standard error: when the buffer holds `MAX_BUFFERED` bytes
//! (standard error slower than the lines come), lines are dropped and the writer says
//! how many, in the log's own format; a line that cannot be written (a log file on a
//! full disk) is lost, never the request's answer. At the end the writer gets
//! `FINAL_FLUSH` to write what is left (a stalled log collector does not keep the
//! process from exiting); a line logged after that (a task dropped with the runtime,
//! after `main`'s body) is written at once by the thread that logs it.

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::config::LogFormat;

/// How long the writer gathers lines after the first one wakes it.
const GATHER: Duration = Duration::from_millis(5);
/// Lines beyond this many buffered bytes are dropped (and counted).
const MAX_BUFFERED: usize = 8 << 20;
/// How long the end of the process waits for the last lines to be written.
const FINAL_FLUSH: Duration = Duration::from_secs(1);

#[derive(Default)]
struct Pending {
    lines: Vec<u8>,
    dropped: u64,
    /// The writer waits for a line (so the next one wakes it).
    asleep: bool,
    closing: bool,
    /// The writer has written everything and stopped.
    done: bool,
}

/// Where the lines go (standard error in the server).
type LogSink = Box<dyn Write + Send>;

#[derive(Default)]
struct Shared {
    pending: Mutex<Pending>,
    wake: Condvar,
    /// The sink, handed back by the writer once it has stopped (`Pending::done`).
    late: Mutex<Option<LogSink>>,
}

impl Shared {
    /// The buffer, whatever a thread that panicked while holding it left: bytes.
    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The handle `tracing_subscriber::fmt` writes each formatted line through (one
/// `write` a line).
#[derive(Clone)]
pub struct LogWriter {
    shared: Arc<Shared>,
}

/// Held for the process's life: dropping it writes out what is buffered (for up to
/// `FINAL_FLUSH`) and stops the writer.
pub struct FlushOnDrop {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// The writer for `sink` (standard error in the server), whose lines are in `format`,
/// and its guard.
pub fn spawn(sink: impl Write + Send + 'static, format: LogFormat) -> (LogWriter, FlushOnDrop) {
    let shared = Arc::new(Shared::default());
    let mut sink: LogSink = Box::new(sink);
    let thread = std::thread::Builder::new()
        .name("log-writer".into())
        .spawn({
            let shared = shared.clone();
            move || {
                write_out(&shared, &mut sink, format);
                // Before `done`: a line that finds the writer done finds the sink here.
                *shared.late.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(sink);
                shared.pending().done = true;
                shared.wake.notify_all();
            }
        })
        .expect("starting the log writer");
    (LogWriter { shared: shared.clone() }, FlushOnDrop { shared, thread: Some(thread) })
}

/// The line saying `dropped` lines were dropped, in the log's `format`.
fn dropped_note(format: LogFormat, dropped: u64) -> String {
    let message = "log lines dropped: standard error was slower than they came";
    match format {
        LogFormat::Human => format!("WARN petstore::log: {message} dropped={dropped}\n"),
        LogFormat::Json => format!(
            "{{\"level\":\"WARN\",\"target\":\"petstore::log\",\"message\":\"{message}\",\"dropped\":{dropped}}}\n"
        ),
    }
}

/// The writer's thread: sleeps until a line comes, gathers for `GATHER`, writes the
/// batch; until closed and empty.
fn write_out(shared: &Shared, sink: &mut LogSink, format: LogFormat) {
    let mut batch = Vec::new();
    loop {
        let mut pending = shared.pending();
        while pending.lines.is_empty() && pending.dropped == 0 && !pending.closing {
            pending.asleep = true;
            pending = shared.wake.wait(pending).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        if !pending.closing {
            drop(pending);
            std::thread::sleep(GATHER);
            pending = shared.pending();
        }
        std::mem::swap(&mut batch, &mut pending.lines);
        let dropped = std::mem::take(&mut pending.dropped);
        let closing = pending.closing;
        drop(pending);
        if dropped > 0 {
            batch.extend_from_slice(dropped_note(format, dropped).as_bytes());
        }
        // A failed write loses these lines, nothing else.
        let _ = sink.write_all(&batch).and_then(|()| sink.flush());
        batch.clear();
        if closing && shared.pending().lines.is_empty() {
            return;
        }
    }
}

/// One `write` a line, from any thread (through `&LogWriter`: no reference count
/// touched per line).
impl Write for &LogWriter {
    fn write(&mut self, line: &[u8]) -> std::io::Result<usize> {
        let mut pending = self.shared.pending();
        if pending.done {
            // The end of the process: nothing to batch for, and no writer to wake.
            drop(pending);
            if let Some(sink) = self.shared.late.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).as_mut() {
                let _ = sink.write_all(line).and_then(|()| sink.flush());
            }
            return Ok(line.len());
        }
        if pending.lines.len() + line.len() > MAX_BUFFERED {
            pending.dropped += 1;
        } else {
            pending.lines.extend_from_slice(line);
        }
        if std::mem::take(&mut pending.asleep) {
            self.shared.wake.notify_one();
        }
        Ok(line.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = &'a LogWriter;

    fn make_writer(&'a self) -> &'a LogWriter {
        self
    }
}

impl Drop for FlushOnDrop {
    fn drop(&mut self) {
        let mut pending = self.shared.pending();
        pending.closing = true;
        self.shared.wake.notify_all();
        let (pending, _) = self
            .shared
            .wake
            .wait_timeout_while(pending, FINAL_FLUSH, |pending| !pending.done)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let done = pending.done;
        drop(pending);
        // Joined only once it is done; else left behind (standard error is stuck).
        if let Some(thread) = self.thread.take().filter(|_| done) {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink the test can read while the writer holds it.
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn every_line_is_written_whole_and_in_order_from_each_thread() {
        let sink = Sink::default();
        let (writer, guard) = spawn(sink.clone(), LogFormat::Json);
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let writer = writer.clone();
                std::thread::spawn(move || {
                    for n in 0..5_000 {
                        (&writer).write_all(format!("thread {t} line {n}\n").as_bytes()).unwrap();
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        drop(guard);
        let written = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        for t in 0..4 {
            let mine: Vec<&str> = written.lines().filter(|l| l.starts_with(&format!("thread {t} "))).collect();
            let expected: Vec<String> = (0..5_000).map(|n| format!("thread {t} line {n}")).collect();
            assert_eq!(mine, expected, "thread {t}'s lines, whole and in order");
        }
    }

    #[test]
    fn a_line_logged_after_the_writer_stopped_is_written_at_once() {
        let sink = Sink::default();
        let (writer, guard) = spawn(sink.clone(), LogFormat::Human);
        (&writer).write_all(b"before the end\n").unwrap();
        drop(guard);
        (&writer).write_all(b"after the end\n").unwrap();
        let written = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        assert_eq!(written, "before the end\nafter the end\n");
    }

    #[test]
    fn a_quiet_servers_line_is_out_within_moments() {
        let sink = Sink::default();
        let (writer, _guard) = spawn(sink.clone(), LogFormat::Json);
        for round in 0..3 {
            // The writer is asleep by now (or soon): the line must wake it.
            std::thread::sleep(Duration::from_millis(20));
            (&writer).write_all(format!("line {round}\n").as_bytes()).unwrap();
            let deadline = std::time::Instant::now() + Duration::from_secs(2);
            while !String::from_utf8_lossy(&sink.0.lock().unwrap()).contains(&format!("line {round}\n")) {
                assert!(std::time::Instant::now() < deadline, "line {round} not written within 2 s");
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }

    #[test]
    fn a_stuck_standard_error_does_not_keep_the_process_from_ending() {
        /// Standard error whose reader never reads.
        struct Stalled;
        impl Write for Stalled {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                std::thread::sleep(Duration::from_secs(3600));
                Ok(0)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let (writer, guard) = spawn(Stalled, LogFormat::Human);
        (&writer).write_all(b"a line nobody reads\n").unwrap();
        std::thread::sleep(2 * GATHER);
        let started = std::time::Instant::now();
        drop(guard);
        let waited = started.elapsed();
        assert!(waited >= FINAL_FLUSH && waited < 10 * FINAL_FLUSH, "waited {waited:?}");
    }

    #[test]
    fn lines_beyond_the_buffer_are_dropped_and_counted_never_waited_for() {
        /// Standard error that does not move until the test lets it (`open`), and says
        /// when a write reached it (`entered`).
        #[derive(Default)]
        struct Gate {
            entered: bool,
            open: bool,
        }
        struct Stuck(Arc<(Mutex<Gate>, Condvar)>, Sink);
        impl Write for Stuck {
            fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
                let (gate, turned) = &*self.0;
                let mut state = gate.lock().unwrap();
                state.entered = true;
                turned.notify_all();
                let _open = turned.wait_while(state, |state| !state.open).unwrap();
                self.1.write(bytes)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let gate = Arc::new((Mutex::new(Gate::default()), Condvar::new()));
        let sink = Sink::default();
        let (writer, guard) = spawn(Stuck(gate.clone(), sink.clone()), LogFormat::Json);
        let line = [vec![b'x'; 1023], vec![b'\n']].concat();
        // The writer takes a first line and is stuck writing it…
        (&writer).write_all(&line).unwrap();
        drop(gate.1.wait_while(gate.0.lock().unwrap(), |state| !state.entered).unwrap());
        // …while twice what the buffer holds comes: every write returns at once.
        let sent = 2 * MAX_BUFFERED / line.len();
        for _ in 0..sent {
            (&writer).write_all(&line).unwrap();
        }
        gate.0.lock().unwrap().open = true;
        gate.1.notify_all();
        drop(guard);
        let written = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        let kept = written.lines().filter(|l| l.starts_with('x')).count();
        assert_eq!(kept, 1 + MAX_BUFFERED / line.len(), "the first line and a full buffer");
        let note = written.lines().find(|l| l.contains("log lines dropped")).expect("the drop is reported");
        let note: serde_json::Value = serde_json::from_str(note).expect("in the log's format (JSON here)");
        assert_eq!(note["level"], "WARN");
        assert_eq!(kept + note["dropped"].as_u64().unwrap() as usize, 1 + sent, "{note}");
    }
}
