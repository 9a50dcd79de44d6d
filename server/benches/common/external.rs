//! What the benchmarks read from outside their own code: wrk (Debian's), the load
//! generator nobody here wrote, and a process's memory.

use std::process::Command;

/// One target as wrk measures it.
#[derive(Clone, Copy, Debug)]
pub struct Wrk {
    pub per_second: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// Whether wrk saw answers other than 2xx or 3xx.
    pub errors: bool,
}

/// `wrk -t<threads> -c<connections> -d<seconds>s --latency [-H header] url`; `None` when
/// wrk is missing or said nothing readable.
pub fn wrk(threads: usize, connections: usize, seconds: u64, header: Option<&str>, url: &str) -> Option<Wrk> {
    let mut command = Command::new("wrk");
    command.args([format!("-t{threads}"), format!("-c{connections}"), format!("-d{seconds}s"), "--latency".into()]);
    if let Some(header) = header {
        command.args(["-H", header]);
    }
    let out = command.arg(url).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |prefix: &str| text.lines().find_map(|l| l.trim().strip_prefix(prefix).map(|r| r.trim().to_owned()));
    let ms = |raw: String| -> Option<f64> {
        let (number, unit) = raw.split_at(raw.find(|c: char| c.is_ascii_alphabetic())?);
        let number: f64 = number.parse().ok()?;
        Some(match unit {
            "us" => number / 1000.0,
            "ms" => number,
            "s" => number * 1000.0,
            _ => return None,
        })
    };
    Some(Wrk {
        per_second: field("Requests/sec:")?.parse().ok()?,
        p50_ms: ms(field("50%")?)?,
        p99_ms: ms(field("99%")?)?,
        errors: text.contains("Non-2xx or 3xx responses"),
    })
}

/// A process's resident set size now, in MiB (0 when it cannot be read).
pub fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}
