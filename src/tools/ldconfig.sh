#!/bin/sh
# Run by `meson install` under /usr or /usr/local: refreshes the dynamic
# loader's cache so that installed programs find libxcomm.so.1 at once.
# Does nothing for a staged install (DESTDIR: the packager runs ldconfig) or
# without root (the cache is root's; `sudo ldconfig` then, as the README says).
[ -n "${DESTDIR:-}" ] && exit 0
[ "$(id -u)" -ne 0 ] && exit 0
command -v ldconfig >/dev/null 2>&1 || PATH="$PATH:/sbin:/usr/sbin"
exec ldconfig
