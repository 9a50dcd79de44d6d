//! The docs and the binary agree (docs/development.md, "Tests"): every flag `server`
//! takes is in docs/operations.md and every flag documented there exists; every error
//! code of the OpenAPI document is in docs/api.md; every metric the code records is in
//! docs/operations.md; every relative link of the docs leads to a file that exists.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(root().join(relative)).unwrap_or_else(|err| panic!("{relative}: {err}"))
}

/// The `--flags` named in a text (`--max-connections-per-address`, not `--` alone).
fn flags(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (at, _) in text.match_indices("--") {
        if at > 0 && !text[..at].ends_with([' ', '`', '(', '[', '|', '\n', ',']) {
            continue;
        }
        let name: String =
            text[at + 2..].chars().take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-').collect();
        if name.len() > 1 && name.starts_with(|c: char| c.is_ascii_lowercase()) {
            found.insert(format!("--{}", name.trim_end_matches('-')));
        }
    }
    found
}

/// What `server <args> --help` prints.
fn help(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_server")).args(args).arg("--help").output().unwrap();
    assert!(out.status.success(), "server {args:?} --help: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The guide's prose, plus those lines of its code blocks that run `server` (a block's
/// `redis-server --daemonize yes` is another program's flag).
fn about_the_server(guide: &str) -> String {
    let mut in_block = false;
    let mut kept = String::new();
    for line in guide.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
        } else if !in_block || line.contains("/server ") || line.trim_start().starts_with("server ") {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept
}

#[test]
fn every_flag_is_documented_and_every_documented_flag_exists() {
    let documented = flags(&about_the_server(&read("docs/operations.md")));
    let served = flags(&help(&[]));
    let mut every = served.clone();
    for subcommand in [
        &["serve"][..],
        &["keys", "create"],
        &["keys", "list"],
        &["keys", "revoke"],
        &["migrate-data"],
        &["backup"],
        &["restore"],
    ] {
        every.extend(flags(&help(subcommand)));
    }
    let not_documented: Vec<_> =
        served.iter().filter(|flag| *flag != "--help" && !documented.contains(*flag)).collect();
    assert!(not_documented.is_empty(), "flags of `server --help` missing from docs/operations.md: {not_documented:?}");
    let unknown: Vec<_> = documented.iter().filter(|flag| !every.contains(*flag)).collect();
    assert!(unknown.is_empty(), "flags docs/operations.md names that `server` does not take: {unknown:?}");
    assert!(served.contains("--max-connections") && documented.len() > 15, "{served:?}");
}

#[test]
fn every_error_code_is_in_the_api_guide() {
    let document = server::api::openapi::document(&server::Config::default());
    let codes = document["components"]["schemas"]["ErrorCode"]["enum"].as_array().expect("ErrorCode's values");
    let guide = read("docs/api.md");
    let missing: Vec<_> =
        codes.iter().filter_map(|code| code.as_str()).filter(|code| !guide.contains(&format!("`{code}`"))).collect();
    assert!(codes.len() > 20, "{codes:?}");
    assert!(missing.is_empty(), "error codes missing from docs/api.md: {missing:?}");
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn every_metric_is_in_the_operations_guide() {
    let mut files = Vec::new();
    for dir in ["app/src", "server/src"] {
        sources(&root().join(dir), &mut files);
    }
    let mut metrics = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for kind in ["counter!(", "gauge!(", "histogram!("] {
            for (at, _) in text.match_indices(kind) {
                let rest = text[at + kind.len()..].trim_start();
                if let Some(name) = rest.strip_prefix('"').and_then(|rest| rest.split('"').next()) {
                    metrics.insert(name.to_owned());
                }
            }
        }
    }
    let guide = read("docs/operations.md");
    let missing: Vec<_> = metrics.iter().filter(|name| !guide.contains(&format!("`{name}`"))).collect();
    assert!(metrics.len() > 15, "{metrics:?}");
    assert!(missing.is_empty(), "metrics missing from docs/operations.md: {missing:?}");
}

#[test]
fn every_relative_link_of_the_docs_resolves() {
    let mut pages = vec![root().join("README.md"), root().join("CHANGELOG.md"), root().join("CONTRIBUTING.md")];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "md") {
            pages.push(path);
        }
    }
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap_or_else(|err| panic!("{}: {err}", page.display()));
        for (at, _) in text.match_indices("](") {
            let target = text[at + 2..].split(')').next().unwrap_or("");
            let target = target.split_whitespace().next().unwrap_or("");
            if target.is_empty() || target.starts_with('#') || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let file = target.split('#').next().unwrap();
            checked += 1;
            if !page.parent().unwrap().join(file).exists() {
                broken.push(format!("{}: {target}", page.strip_prefix(root()).unwrap().display()));
            }
        }
    }
    assert!(checked > 10, "only {checked} links found");
    assert!(broken.is_empty(), "links that lead nowhere: {broken:?}");
}

#[test]
fn the_flag_reader_sees_flags_and_nothing_else() {
    let text = "| `--max-connections` | x --ban-after 0, (`--public-url https://…`) a-- b --x and --";
    let found: Vec<_> = flags(text).into_iter().collect();
    assert_eq!(found, ["--ban-after", "--max-connections", "--public-url"]);
    let guide = "Use `--addr`.\n```sh\nredis-server --daemonize yes\ntarget/release/server --data-dir d\n```\n";
    let found: Vec<_> = flags(&about_the_server(guide)).into_iter().collect();
    assert_eq!(found, ["--addr", "--data-dir"]);
}
