#!/usr/bin/env bash
# System tools memdir uses: bubblewrap (the shell tool's sandbox), the distribution's python3
# (the interpreter inside that sandbox, which sees only /usr) and ripgrep (fast grep).
# Installed with apt where we are root; otherwise say what is missing and carry on.
set -u
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
[ -x /usr/bin/python3 ] || missing+=(python3)
# cmake and g++ build the PDDL planner (fast-downward-textworld) that the alfworld extra compiles.
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
# Headless chromium and its driver for the UI's browser tests (tests/ui/test_ui_browser.py).
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
[ ${#missing[@]} -eq 0 ] && exit 0
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "setup: installing ${missing[*]} with apt-get"
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null \
    || echo "setup: apt-get could not install ${missing[*]}; continuing without them"
else
  echo "setup: ${missing[*]} not installed and no root apt-get here; grep falls back to Python," \
       "and the shell tool refuses to run without bubblewrap. Install them to enable both."
fi
exit 0
