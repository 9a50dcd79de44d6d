#!/usr/bin/env bash
# make dist: the release as one archive that runs from any folder:
#   petstore-<version>-<arch>-linux/
#     server       the binary (it finds site/ beside itself; docs/operations.md, "The built site")
#     hash.txt     the assets' content hashes, which the pages link
#     site/        the built WASM, JavaScript, CSS (each with its .br and .gz) and public files
#     deploy/      the systemd unit, its environment file, Prometheus rules, Grafana dashboard, Litestream
#     docs/, README.md, CHANGELOG.md, LICENSE
# written to target/dist/ with its SHA-256 beside it. Needs `make build-release` first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target_dir=${TARGET_DIR:?the cargo target folder holding release/server}
site=$root/target/site

binary=$target_dir/release/server
hashes=$target_dir/release/hash.txt
[[ -x $binary && -f $hashes ]] || { echo "no release build with hashed assets: run make build-release" >&2; exit 1; }

version=$(sed -n 's/^version *= *"\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
name=petstore-$version-$(uname -m)-linux
out=$root/target/dist
stage=$out/$name
# Only this build's archive in the folder (make test-dist takes the one it finds).
rm -rf "$stage" "$out"/petstore-*-linux.tar.gz "$out"/petstore-*-linux.tar.gz.sha256
mkdir -p "$stage/site/pkg"

cp "$binary" "$hashes" "$stage/"
# The site's public files, and of pkg/ only the build's files (scripts/site-files.sh: an
# older build may have left others there).
find "$site" -mindepth 1 -maxdepth 1 ! -name pkg -exec cp -r {} "$stage/site/" \;
files=$("$root/scripts/site-files.sh" "$site/pkg" "$hashes")
while read -r file; do
  for copy in "$file" "$file.br" "$file.gz"; do
    [[ -f $copy ]] || { echo "hash.txt names $file, and $copy is missing: run make build-release" >&2; exit 1; }
    cp "$copy" "$stage/site/pkg/"
  done
done <<<"$files"
cp -r "$root/deploy" "$root/docs" "$stage/"
rm -f "$stage/deploy/"*requirements.txt
cp "$root/README.md" "$root/CHANGELOG.md" "$root/LICENSE" "$stage/"

tar -C "$out" --owner=0 --group=0 -czf "$out/$name.tar.gz" "$name"
(cd "$out" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
rm -rf "$stage"
echo "$out/$name.tar.gz ($(du -h "$out/$name.tar.gz" | cut -f1)): $("$binary" --version)"
