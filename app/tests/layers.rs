//! The crate's layers point one way (docs/development.md, "Layers"): the storefront's
//! pages (`ui`) call the server functions (`server_fns`), which call the services
//! (`services`), which read and write through the store (`db`), over the domain's
//! types and errors (`reference`, `error`, `model`, `paths`, `request_id`). This test
//! reads every source file of the crate and fails on a path that names a module of its
//! own layer or one above: every import points down, so no two modules import each
//! other, directly or round a circle.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The crate's top modules, each with its layer: a module may name only modules of a
/// lower layer (and its own submodules).
const LAYERS: &[(&str, u8)] = &[
    ("model", 0),
    ("paths", 0),
    ("request_id", 0),
    ("error", 1),
    ("reference", 2),
    ("db", 3),
    ("services", 4),
    ("server_fns", 5),
    ("ui", 6),
];

fn layer_of(module: &str) -> Option<u8> {
    LAYERS.iter().find(|(name, _)| *name == module).map(|(_, layer)| *layer)
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the source folder reads") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
}

/// The top modules a line of code names through `crate::` (`crate::db::…`, and each
/// name of `crate::{db, model}`), comments left out.
fn named(line: &str) -> Vec<String> {
    let code = line.split("//").next().unwrap_or("");
    let mut names = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let list = match rest.strip_prefix('{') {
            Some(inner) => inner.split('}').next().unwrap_or("").split(',').map(str::trim).collect(),
            None => vec![rest],
        };
        for item in list {
            let name: String = item.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            names.push(name);
        }
    }
    names
}

#[test]
fn every_import_points_down_a_layer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut tops: BTreeMap<String, ()> = BTreeMap::new();
    let mut wrong = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&root).unwrap();
        let top =
            relative.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_owned();
        if matches!(top.as_str(), "lib" | "main") {
            continue;
        }
        tops.insert(top.clone(), ());
        let Some(own) = layer_of(&top) else {
            wrong.push(format!("{}: a top module the layers do not name (add it to LAYERS)", relative.display()));
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            for name in named(line) {
                match layer_of(&name) {
                    Some(_) if name == top => {}
                    Some(layer) if layer < own => {}
                    Some(layer) => wrong.push(format!(
                        "{}:{}: {top} (layer {own}) names {name} (layer {layer}): {}",
                        relative.display(),
                        n + 1,
                        line.trim()
                    )),
                    // Macros and items at the crate's root.
                    None => {}
                }
            }
        }
    }
    assert!(wrong.is_empty(), "imports that do not point down:\n{}", wrong.join("\n"));
    assert!(tops.len() >= LAYERS.len() - 1, "the walk found the crate's modules: {tops:?}");
}

#[test]
fn the_reader_sees_every_way_a_module_is_named() {
    assert_eq!(named("use crate::db::Db;"), ["db"]);
    assert_eq!(named("    let x = crate::ui::return_path(next); // crate::services"), ["ui"]);
    assert_eq!(named("pub(crate) use crate::{on_conn, on_pool};"), ["on_conn", "on_pool"]);
    assert_eq!(named("use crate::{db::Db, model::Pet};"), ["db", "model"]);
    assert!(named("/// see crate::ui").is_empty());
}
