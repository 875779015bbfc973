#!/usr/bin/env bash
# Installs rtcc with its test extras, then runs every test: Rust (cargo) and
# Python (pytest). Works on a fresh machine that has Rust and Python.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --upgrade pip
python3 -m pip install --quiet ".[test]"
cargo test --workspace --exclude rtcc-py --release
python3 -m pytest tests/python -q
