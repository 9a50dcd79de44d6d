//! A PostgreSQL server of one test's own (Debian's binaries, a cluster in a temporary
//! directory, a free port), for the tests that stop it or fill its disk. As root the
//! cluster belongs to the `postgres` user: PostgreSQL refuses to run as root.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct OwnPostgres {
    bin: PathBuf,
    dir: tempfile::TempDir,
    pub port: u16,
    /// Server settings (`name=value`) it is started with.
    settings: Vec<String>,
}

impl OwnPostgres {
    pub fn start() -> OwnPostgres {
        OwnPostgres::start_with(&[])
    }

    /// A new cluster started with these settings (`archive_mode=on`, …).
    pub fn start_with(settings: &[&str]) -> OwnPostgres {
        let server = OwnPostgres::unstarted(settings);
        let data = server.data();
        server.run("initdb", &["-D", &data, "-A", "trust", "-U", "petstore", "--no-sync"]);
        server.start_again();
        server
    }

    /// A cluster made from the base backup in `base` (plain format), which recovers
    /// with `recovery` settings (`restore_command`, `recovery_target_time`, …) added to
    /// its configuration, on a port of its own. `pg_ctl` returns once it accepts
    /// connections, which may be before its recovery ends.
    pub fn recovered_from(base: &Path, recovery: &[&str]) -> OwnPostgres {
        let server = OwnPostgres::unstarted(&[]);
        let data = server.data();
        as_owner("cp", &["-a", &base.display().to_string(), &data]);
        as_owner("chmod", &["0700", &data]);
        let mut config =
            std::fs::OpenOptions::new().append(true).open(Path::new(&data).join("postgresql.auto.conf")).unwrap();
        for setting in recovery {
            std::io::Write::write_all(&mut config, format!("{setting}\n").as_bytes()).unwrap();
        }
        as_owner("touch", &[&Path::new(&data).join("recovery.signal").display().to_string()]);
        server.start_again();
        server
    }

    fn unstarted(settings: &[&str]) -> OwnPostgres {
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
        OwnPostgres { bin, dir, port, settings: settings.iter().map(|s| (*s).to_owned()).collect() }
    }

    /// One of PostgreSQL's tools (`pg_basebackup`, …) as the cluster's owner: its
    /// standard output.
    pub fn tool(&self, tool: &str, args: &[&str]) -> String {
        self.run(tool, args)
    }

    /// A folder inside the cluster's directory, which its owner may write.
    pub fn owned_folder(&self, name: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        as_owner("mkdir", &["-p", &path.display().to_string()]);
        path
    }

    /// `sql` run by `psql` in its `postgres` database: the rows, unaligned.
    pub fn psql(&self, sql: &str) -> String {
        let port = self.port.to_string();
        self.run("psql", &["-h", "127.0.0.1", "-p", &port, "-U", "petstore", "-d", "postgres", "-Atc", sql])
            .trim()
            .to_owned()
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
        let mut options = format!("-p {} -k {} -c listen_addresses=127.0.0.1", self.port, self.dir.path().display());
        for setting in &self.settings {
            options.push_str(&format!(" -c '{setting}'"));
        }
        let log = self.dir.path().join("postgres.log").display().to_string();
        let program = self.bin.join("pg_ctl").display().to_string();
        if let Err(err) = try_as_owner(&program, &["-D", &self.data(), "-l", &log, "-w", "-o", &options, "start"]) {
            panic!("{err}\nits log:\n{}", std::fs::read_to_string(&log).unwrap_or_default());
        }
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn run(&self, tool: &str, args: &[&str]) -> String {
        as_owner(&self.bin.join(tool).display().to_string(), args)
    }
}

/// `program` run as the clusters' owner (the `postgres` user when this is root, else
/// this user): its standard output.
fn as_owner(program: &str, args: &[&str]) -> String {
    try_as_owner(program, args).unwrap_or_else(|err| panic!("{err}"))
}

fn try_as_owner(program: &str, args: &[&str]) -> Result<String, String> {
    let mut command = if is_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    };
    let out = command.args(args).output().expect("runs");
    if !out.status.success() {
        return Err(format!("{program} {args:?}: {}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
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
