#!/usr/bin/env bash
# The Python package's tests: builds and installs it (`pip install
# ./python[test]`, maturin compiling the Rust) into a fresh virtual
# environment, then runs its pytest suite, which also runs the docs'
# example notebook. `cargo test --workspace` runs this script
# (tests/tests/python.rs); KSWEEP_BIN names the ksweep binary the tests
# compare with (default: target/release/ksweep).
#
#     python/test.sh [VENV_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${1:-$(mktemp -d)/venv}
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
echo "building and installing $here into $venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "$here[test]"
# From the tests' folder, so `import knight_sweep` is the installed package,
# not the source folder beside them (which lacks the compiled module).
cd "$here/tests"
"$venv/bin/python" -m pytest -q -p no:cacheprovider .
