# tools/deb-src.sh: the deb-src entry for Debian's source packages, sourced by
# tools/ensure-deps.sh (QEMU's plugin header) and contrib/memcached/deps.sh
# (memcached's source). Defines functions only.

# True when apt has any deb-src entry (one-line or deb822 format).
have_deb_src() {
    grep -rqsE '^(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/
}

# This system's suite (VERSION_CODENAME of /etc/os-release, e.g. bookworm),
# or nothing.
deb_src_suite() {
    (. /etc/os-release && echo "${VERSION_CODENAME:-}")
}

# deb_src_entry SUITE: prints the deb822 entry for SUITE, SUITE-updates and
# SUITE-security.
deb_src_entry() {
    local suite=$1
    cat <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
}

# write_deb_src FILE SUITE COMMENT...: writes the entry for SUITE to FILE
# after one "# COMMENT" line per argument, then apt-get update (as root).
write_deb_src() {
    local file=$1 suite=$2
    shift 2
    { printf '# %s\n' "$@"; deb_src_entry "$suite"; } > "$file"
    apt-get update -q >/dev/null
}
