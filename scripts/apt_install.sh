#!/usr/bin/env bash
# apt_install.sh WHAT COMMAND PACKAGE...: install Debian PACKAGEs (for WHAT) unless COMMAND is already on PATH.
# Needs root and apt-get; elsewhere, or when apt-get fails, it says so and the tests that need WHAT skip with the reason.
set -uo pipefail
what=$1 command=$2
shift 2
if command -v "$command" >/dev/null; then
    exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "apt_install.sh: not root with apt-get; the tests that need $what will be skipped" >&2
    exit 0
fi
if ! (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@") >/dev/null; then
    echo "apt_install.sh: apt-get could not install $*; the tests that need $what will be skipped" >&2
fi
exit 0
