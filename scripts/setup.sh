#!/usr/bin/env bash
# Installs what stateserver needs on a fresh Debian machine, and nothing when it is all there.
# Runs as root (CI, the team's machines) or through sudo when available.
set -euo pipefail

# node-typescript: `tsc`, which type-checks the Node client's declarations and the generated
# bindings (tests/test_bindings.py). neovim (Debian's 0.7): the Neovim plugin's headless tests
# (tests/test_client_neovim.py). chromium and chromium-driver: the devtools page's browser tests
# (tests/test_devtools.py), headless. binutils: readelf and nm, which check that executables link
# CStartupSignals (make example-test, tests/test_startup_signals_linked.py).
apt_packages=(libjansson-dev libsqlite3-dev pkg-config node-typescript neovim chromium
  chromium-driver binutils)
# tests, the client's one dependency, and mypy (the Python client and the generated bindings
# type-check with --strict), aiohttp (the devtools server) and selenium (its browser tests)
python_packages=(pytest jsonpatch jsonschema referencing mypy aiohttp selenium)

# The Node client's tests need node (20 ships with these machines; Debian's nodejs is the
# fallback on a machine without it).
command -v node >/dev/null 2>&1 || apt_packages+=(nodejs)

missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]} with apt-get" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >&2
fi

python=${PYTHON:-python3}
missing=()
for p in "${python_packages[@]}"; do
  "$python" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('$p') is None)" \
    2>/dev/null || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]} with pip" >&2
  "$python" -m pip install -q "${missing[@]}" >&2
fi
