#!/usr/bin/env bash
# The files of a release build's pkg/, one path a line: the JavaScript, WASM and CSS
# hash.txt names and, for the lazy islands (the staff console's), the split loader and
# manifest hash.txt names and every WASM file the manifest lists (browsers never fetch
# the manifest; it is kept so that this list can be made again from a bundle). Their
# names carry their content's hash. Used wherever the build's files are handled
# (scripts/precompress.sh, scripts/dist.sh, scripts/build-release.sh, make bench).
set -euo pipefail
pkg=${1:?usage: site-files.sh PKG_DIR HASH_TXT}
hashes=${2:?usage: site-files.sh PKG_DIR HASH_TXT}

while read -r kind hash || [[ -n $kind ]]; do
  case ${kind%:} in
    js | wasm | css) echo "$pkg/petstore.$hash.${kind%:}" ;;
    split) echo "$pkg/__wasm_split.$hash.js" ;;
    manifest)
      manifest=$pkg/__wasm_split_manifest.$hash.json
      [[ -f $manifest ]] || { echo "hash.txt names $manifest, which is missing" >&2; exit 1; }
      echo "$manifest"
      # Its values name the WASM files (without .wasm) each lazy island needs.
      grep -oE '"(chunk|split)_[^"]+"' "$manifest" | tr -d '"' | sort -u | sed "s|^|$pkg/|; s|\$|.wasm|"
      ;;
    *) echo "hash.txt has an unknown line: $kind $hash" >&2; exit 1 ;;
  esac
done <"$hashes"
