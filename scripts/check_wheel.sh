#!/usr/bin/env bash
# Builds rtcc's wheel with maturin and checks that it installs and runs where no Rust
# toolchain is on the PATH: a fresh venv, the wheel (its Python dependencies from PyPI),
# then `rtcc run` (the built-in demo) and `rtcc validate` on every shipped scenario with
# PATH cut down to the venv and the system's bin folders. The wheel links the system's
# libvpx and OpenH264 dynamically, so they must be installed (scripts/test.sh does).
# Exits non-zero, naming what failed, on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "check_wheel: $*" >&2
    exit 1
}

[ -d python/rtcc/data/traces ] || fail "python/rtcc/data/traces: no such folder"
bundled=$(find python/rtcc/data/traces -type f | sort)
[ -n "$bundled" ] || fail "python/rtcc/data/traces: no trace to bundle"

python3 -m venv "$tmp/tools"
"$tmp/tools/bin/pip" install --quiet "maturin>=1.5,<2" || fail "pip could not install maturin"
start=$SECONDS
"$tmp/tools/bin/maturin" build --release --out "$tmp/dist" || fail "maturin build --release failed"
echo "check_wheel: wheel built in $((SECONDS - start)) s"
shopt -s nullglob
wheels=("$tmp"/dist/rtcc-*.whl)
shopt -u nullglob
[ "${#wheels[@]}" -eq 1 ] || fail "expected one rtcc wheel in $tmp/dist, found ${#wheels[@]}"
wheel=${wheels[0]}

# Every bundled trace (python/rtcc/data/traces) must travel in the wheel.
# The wheel's names as `unzip -Z1` lists them (zipfile: unzip may not be installed).
listing=$(python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$wheel")
while IFS= read -r file; do
    grep -qxF "${file#python/}" <<<"$listing" || fail "$(basename "$wheel"): lacks ${file#python/}"
done <<<"$bundled"

python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet "$wheel" || fail "pip could not install $(basename "$wheel") into a fresh venv"
# Only the venv and the system's folders: no cargo, rustc or the checkout's sources.
bare=(env -u PYTHONPATH -u CARGO_HOME -u RUSTUP_HOME PATH="$tmp/venv/bin:/usr/bin:/bin")
if "${bare[@]}" bash -c 'command -v cargo || command -v rustc'; then
    fail "cargo or rustc is on the stripped PATH; the check would not show the wheel needs no Rust"
fi
cd "$tmp"
module=$("${bare[@]}" python -c 'import rtcc._rtcc as m; print(m.__file__)')
[[ $module == "$tmp/venv/"* ]] || fail "rtcc._rtcc imported from $module, not from the venv"

"${bare[@]}" rtcc run --out "$tmp/demo" || fail "rtcc run (the demo) failed"
[ -s "$tmp/demo/summary.json" ] || fail "rtcc run wrote no $tmp/demo/summary.json"
"${bare[@]}" python - "$tmp/demo/summary.json" <<'EOF' || fail "summary.json has no flow with goodput"
import json, sys
flows = json.load(open(sys.argv[1]))["flows"]
sys.exit(0 if flows and flows[0]["goodput_kbps"] > 0 else 1)
EOF
for scenario in "$root"/scenarios/*.toml; do
    "${bare[@]}" rtcc validate "$scenario" || fail "rtcc validate $scenario failed"
done
echo "check_wheel: $(basename "$wheel") installs and runs without Rust"
