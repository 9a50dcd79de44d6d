#!/usr/bin/env bash
# make build-release, last step: the site's built files compressed once, at build time,
# with brotli at quality 11 and gzip at level 9, beside each file (petstore.<hash>.wasm.br
# and .gz). The server sends these to browsers that accept the encoding (leptos_axum's
# ServeDir, precompressed) and compresses nothing for them per request. Only the files
# hash.txt names (scripts/site-files.sh, with the lazy islands' WASM files): their names
# change with their content, so a compressed copy can never be older than the file
# beside it (a `cargo leptos watch` build writes plain names and is compressed per
# request, as before). Copies of files no longer there are removed.
set -euo pipefail
pkg=${1:?usage: precompress.sh PKG_DIR HASH_TXT}
hashes=${2:?usage: precompress.sh PKG_DIR HASH_TXT}

shopt -s nullglob
for copy in "$pkg"/*.br "$pkg"/*.gz "$pkg"/*.part; do
  [[ $copy == *.part || ! -e ${copy%.*} ]] && rm -f "$copy"
done
scripts=$(dirname "$0")
files=$("$scripts/site-files.sh" "$pkg" "$hashes")
while read -r file; do
  [[ -f $file ]] || { echo "hash.txt names $file, which is missing" >&2; exit 1; }
  # Written aside and renamed, so an interrupted build leaves no cut copy behind.
  [[ -f $file.br && -f $file.gz ]] && continue
  brotli --quality=11 --stdout "$file" > "$file.br.part" && mv "$file.br.part" "$file.br"
  gzip -9 --no-name --stdout "$file" > "$file.gz.part" && mv "$file.gz.part" "$file.gz"
  case $file in */petstore.*) echo "compressed $(basename "$file"): $(stat -c %s "$file") B, brotli $(stat -c %s "$file.br") B, gzip $(stat -c %s "$file.gz") B" ;; esac
done <<<"$files"
echo "compressed $(wc -l <<<"$files") files of the site"
