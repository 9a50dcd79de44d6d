//! A PostgreSQL server of one test's own (Debian's binaries, a cluster in a temporary
//! directory, a free port), for the tests that stop it or fill its disk. As root the
//! cluster belongs to the `postgres` user: PostgreSQL refuses to run as root.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct OwnPostgres {
    bin: PathBuf,
    dir: tempfile::TempDir,
    pub port: u16,
}

impl OwnPostgres {
    pub fn start() -> OwnPostgres {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL is installed (make db-tools)")
            .filter_map(Result::ok)
            .map(|version| version.path().join("bin"))
            .filter(|bin| bin.join("initdb").exists())
            .max()
            .expect("an initdb");
        let dir = tempfile::tempdir().unwrap();
        if is_root() {
            assert!(Command::new("chown").arg("postgres").arg(dir.path()).status().unwrap().success());
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let server = OwnPostgres { bin, dir, port };
        let data = server.data();
        server.run("initdb", &["-D", &data, "-A", "trust", "-U", "petstore", "--no-sync"]);
        server.start_again();
        server
    }

    /// The URL of its `postgres` database.
    pub fn url(&self) -> String {
        format!("postgres://petstore@127.0.0.1:{}/postgres", self.port)
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `pg_ctl stop -m immediate`: as a crash, no shutdown checkpoint.
    pub fn stop_immediately(&self) {
        self.run("pg_ctl", &["-D", &self.data(), "stop", "-m", "immediate"]);
    }

    pub fn start_again(&self) {
        let options = format!("-p {} -k {} -c listen_addresses=127.0.0.1", self.port, self.dir.path().display());
        let log = self.dir.path().join("postgres.log").display().to_string();
        self.run("pg_ctl", &["-D", &self.data(), "-l", &log, "-w", "-o", &options, "start"]);
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn run(&self, tool: &str, args: &[&str]) {
        let program = self.bin.join(tool);
        let mut command = if is_root() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(program);
            command
        } else {
            Command::new(program)
        };
        let out = command.args(args).output().expect("runs");
        assert!(out.status.success(), "{tool} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let program = self.bin.join("pg_ctl");
        let data = self.data();
        let _ = if is_root() {
            Command::new("runuser")
                .args(["-u", "postgres", "--"])
                .arg(program)
                .args(["-D", &data, "stop", "-m", "immediate"])
                .output()
        } else {
            Command::new(program).args(["-D", &data, "stop", "-m", "immediate"]).output()
        };
    }
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|out| out.stdout == b"0\n").unwrap_or(false)
}
