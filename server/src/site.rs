//! Where the built storefront is (the WASM, its JavaScript, the CSS and the public
//! files), and whether it is whole. Every page links these files, so a server without
//! them would answer pages whose scripts and styles are all 404: it refuses to start
//! instead, saying where it looked.
//!
//! Looked for, in order: `LEPTOS_SITE_ROOT` when it is set (and nowhere else then);
//! else `site/` beside the binary (the release bundle, `make dist`); else Leptos's
//! default, `target/site` under the working directory (a checkout). The names the
//! pages link are content-hashed when `hash.txt` beside the binary (written by a
//! release build) names files that are there, else plain. The hashes are read once, at
//! start ([`Site::link`]).

use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use leptos::config::LeptosOptions;

/// A site found whole.
#[derive(Debug, PartialEq, Eq)]
pub struct Site {
    pub root: PathBuf,
    /// The content hashes in the names the pages link (`hash.txt`'s), or none: the
    /// plain names.
    pub hashes: Option<Hashes>,
}

impl Site {
    /// Has the pages link this site's files, for as long as the server runs. Leptos
    /// reads the hash file again for every page it renders (`HydrationScripts`,
    /// `HashedStylesheet`), beside the binary: one replaced or removed while the server
    /// runs (a new release unpacked over it) would have every page link files this
    /// server does not serve, unstyled and dead. So the hashes read at start are kept
    /// in an anonymous in-memory file, which Leptos reads through its `/proc/self/fd`
    /// path (an absolute path is what `hash_file` is joined to the binary's folder as).
    pub fn link(&self, options: &mut LeptosOptions) -> std::io::Result<()> {
        options.site_root = self.root.to_string_lossy().into_owned().into();
        options.hash_files = self.hashes.is_some();
        let Some(hashes) = &self.hashes else { return Ok(()) };
        let memory = rustix::fs::memfd_create("petstore-hashes", rustix::fs::MemfdFlags::CLOEXEC)?;
        let mut file = std::fs::File::from(memory);
        write!(file, "js: {}\nwasm: {}\ncss: {}\n", hashes.js, hashes.wasm, hashes.css)?;
        let fd = OwnedFd::from(file);
        options.hash_file = format!("/proc/self/fd/{}", fd.as_raw_fd()).into();
        // Open for the rest of the process's life: Leptos reads it for every page.
        std::mem::forget(fd);
        Ok(())
    }
}

/// Where to look, and with which hashes.
pub struct Search<'a> {
    /// `LEPTOS_SITE_ROOT`, when set.
    pub explicit_root: Option<PathBuf>,
    /// The folder of the running binary.
    pub exe_dir: Option<PathBuf>,
    pub options: &'a LeptosOptions,
}

impl Search<'_> {
    /// What this process was started with.
    pub fn of_this_process(options: &LeptosOptions) -> Search<'_> {
        Search {
            explicit_root: std::env::var_os("LEPTOS_SITE_ROOT").filter(|root| !root.is_empty()).map(PathBuf::from),
            exe_dir: std::env::current_exe().ok().and_then(|exe| Some(exe.parent()?.to_owned())),
            options,
        }
    }

    /// The first whole site, or why there is none (every place looked at, and what
    /// each lacks).
    pub fn find(&self) -> Result<Site, String> {
        let candidates = match &self.explicit_root {
            Some(root) => vec![root.clone()],
            None => {
                let beside_binary = self.exe_dir.iter().map(|dir| dir.join("site"));
                beside_binary.chain([PathBuf::from(self.options.site_root.as_ref())]).collect()
            }
        };
        let hashes = self.hashes();
        let mut lacks = Vec::new();
        for root in candidates {
            match self.whole(&root, hashes.as_ref()) {
                Ok(hashed) => return Ok(Site { root, hashes: hashes.filter(|_| hashed) }),
                Err(missing) => lacks.push(format!("  {}: {missing}", root.display())),
            }
        }
        let hint = if self.explicit_root.is_some() {
            "LEPTOS_SITE_ROOT names a folder without the built site"
        } else {
            "no built site found"
        };
        Err(format!(
            "{hint}; the server will not serve pages whose scripts and styles are missing.\n{}\n\
             Build it with `make build-release` (or `cargo leptos build --release`) and start the server from the \
             checkout, unpack a bundle of `make dist` whole, or point LEPTOS_SITE_ROOT at the site folder.",
            lacks.join("\n")
        ))
    }

    /// `hash.txt` beside the binary, read as `kind: hash` lines.
    fn hashes(&self) -> Option<Hashes> {
        let text = std::fs::read_to_string(self.exe_dir.as_ref()?.join(self.options.hash_file.as_ref())).ok()?;
        let hash = |kind: &str| {
            text.lines().find_map(|line| line.strip_prefix(kind)?.strip_prefix(':').map(|hash| hash.trim().to_owned()))
        };
        Some(Hashes { js: hash("js")?, wasm: hash("wasm")?, css: hash("css")? })
    }

    /// Whether the site at `root` has the files the pages link: the hashed ones when
    /// the hash file names files that are there (`Ok(true)`), else the plain ones.
    fn whole(&self, root: &Path, hashes: Option<&Hashes>) -> Result<bool, String> {
        let pkg = root.join(self.options.site_pkg_dir.as_ref());
        let name = self.options.output_name.as_ref();
        let missing = |files: &[String]| -> Vec<String> {
            files.iter().filter(|file| !pkg.join(file).is_file()).cloned().collect()
        };
        if let Some(hashes) = hashes {
            let hashed = [
                format!("{name}.{}.js", hashes.js),
                format!("{name}.{}.wasm", hashes.wasm),
                format!("{name}.{}.css", hashes.css),
            ];
            if missing(&hashed).is_empty() {
                return Ok(true);
            }
        }
        let lacking = missing(&plain_files(name));
        if lacking.is_empty() {
            return Ok(false);
        }
        let pkg_shown = pkg.display();
        Err(match hashes {
            Some(_) => format!("neither the files hash.txt names nor {} in {pkg_shown}", lacking.join(", ")),
            // Content-hashed files with no hash file to name them: a bundle missing a part.
            None if has_hashed_files(&pkg, name) => format!(
                "{pkg_shown} holds content-hashed files but no hash.txt beside the binary names them (it lacks {})",
                lacking.join(", ")
            ),
            None => format!("no {} in {pkg_shown}", lacking.join(", ")),
        })
    }
}

/// The plain (unhashed) names of the files a page links, in `pkg/`: the JavaScript,
/// the WASM and the CSS. The WASM is `<name>.wasm` in a build by cargo-leptos (which
/// sets `LEPTOS_OUTPUT_NAME` while compiling, as Leptos's own rule for the link reads),
/// `<name>_bg.wasm` otherwise.
pub fn plain_files(name: &str) -> [String; 3] {
    let wasm =
        if option_env!("LEPTOS_OUTPUT_NAME").is_some() { format!("{name}.wasm") } else { format!("{name}_bg.wasm") };
    [format!("{name}.js"), wasm, format!("{name}.css")]
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hashes {
    js: String,
    wasm: String,
    css: String,
}

/// Whether `pkg` holds files named like `<name>.<hash>.wasm`.
fn has_hashed_files(pkg: &Path, name: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(pkg) else { return false };
    entries.filter_map(Result::ok).any(|entry| {
        let file = entry.file_name();
        let file = file.to_string_lossy();
        file.strip_prefix(name).and_then(|rest| rest.strip_prefix('.')).is_some_and(|rest| rest.ends_with(".wasm"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> LeptosOptions {
        LeptosOptions::builder().output_name("petstore").site_root("target/site-not-here").build()
    }

    fn touch(dir: &Path, files: &[impl AsRef<str>]) {
        std::fs::create_dir_all(dir.join("pkg")).unwrap();
        for file in files {
            std::fs::write(dir.join("pkg").join(file.as_ref()), "x").unwrap();
        }
    }

    #[test]
    fn a_bundle_is_found_beside_the_binary_and_hashed_names_need_the_hash_file() {
        let bundle = tempfile::tempdir().unwrap();
        let options = options();
        let search = Search { explicit_root: None, exe_dir: Some(bundle.path().to_owned()), options: &options };
        let refused = search.find().unwrap_err();
        assert!(refused.contains("no built site found") && refused.contains("make build-release"), "{refused}");

        touch(&bundle.path().join("site"), &["petstore.abc.js", "petstore.def.wasm", "petstore.ghi.css"]);
        let refused = search.find().unwrap_err();
        assert!(refused.contains("no hash.txt beside the binary"), "{refused}");

        std::fs::write(bundle.path().join("hash.txt"), "js: abc\nwasm: def\ncss: ghi\n").unwrap();
        let found = search.find().unwrap();
        assert_eq!((found.root.as_path(), found.hashes.is_some()), (bundle.path().join("site").as_path(), true));

        // Linked: the pages name the hashes read now, whatever becomes of the file.
        let mut linked = options.clone();
        found.link(&mut linked).unwrap();
        std::fs::remove_file(bundle.path().join("hash.txt")).unwrap();
        let kept = std::fs::read_to_string(linked.hash_file.as_ref()).unwrap();
        assert_eq!(kept, "js: abc\nwasm: def\ncss: ghi\n");
        assert!(linked.hash_files);
        assert_eq!(linked.site_root.as_ref(), bundle.path().join("site").to_str().unwrap());

        // A hash file naming files that are not there: the plain names, if they are.
        std::fs::write(bundle.path().join("hash.txt"), "js: old\nwasm: old\ncss: old\n").unwrap();
        assert!(search.find().is_err());
        touch(&bundle.path().join("site"), &plain_files("petstore"));
        assert_eq!(search.find().unwrap(), Site { root: bundle.path().join("site"), hashes: None });
    }

    #[test]
    fn an_explicit_root_without_the_site_is_refused_even_when_another_is_there() {
        let (bundle, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        touch(&bundle.path().join("site"), &plain_files("petstore"));
        let options = options();
        let search = Search {
            explicit_root: Some(elsewhere.path().to_owned()),
            exe_dir: Some(bundle.path().to_owned()),
            options: &options,
        };
        let refused = search.find().unwrap_err();
        assert!(refused.starts_with("LEPTOS_SITE_ROOT names a folder without the built site"), "{refused}");
        assert!(refused.contains(&plain_files("petstore")[1]), "{refused}");
        touch(elsewhere.path(), &plain_files("petstore"));
        assert_eq!(search.find().unwrap(), Site { root: elsewhere.path().to_owned(), hashes: None });
    }
}
