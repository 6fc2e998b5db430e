#!/usr/bin/env bash
# Builds the Debian package of prefsctl, the administrator's tool (SPEC §13): prefsctl_<version>_<arch>.deb.
#
#   Scripts/package-deb.sh [OUTPUT_DIRECTORY]      (default: the repository's root)
#
# What it holds, all made from the release binary itself so that nothing can drift from it:
#   /usr/bin/prefsctl                                   a release build with the Swift runtime linked in statically,
#                                                       so that the machine needs no Swift toolchain
#   /usr/share/man/man1/prefsctl.1.gz                   `prefsctl help --man`: the same text as --help
#   /usr/share/bash-completion/completions/prefsctl     `prefsctl completion bash`
#   /usr/share/zsh/vendor-completions/_prefsctl         `prefsctl completion zsh`
#   /usr/share/fish/vendor_completions.d/prefsctl.fish  `prefsctl completion fish`
#   /usr/share/doc/prefsctl/copyright                   LICENSE
# Depends: the Debian packages that ship the shared libraries the binary still loads (libc, libstdc++, OpenSSL…),
# found with ldd and dpkg -S. Install with `apt-get install ./prefsctl_*.deb`; `apt-get remove prefsctl` removes
# every file (the package has no maintainer scripts and creates nothing at run time). Compressed with gzip: xz takes
# minutes over the 60 MB binary on a small machine.
#
# Maintainer: the project, "RVS_PersistentPrefs for Linux maintainers", at the address its commits are made under
# (the author address of the commit being packaged), unless DEBFULLNAME and DEBEMAIL (Debian's own variables, as dch
# reads them) name whoever distributes the package. No address is made up: outside a git checkout and without
# DEBEMAIL, the script stops and asks for it.
set -euo pipefail
cd "$(dirname "$0")/.."

maintainer_name=${DEBFULLNAME:-RVS_PersistentPrefs for Linux maintainers}
maintainer_email=${DEBEMAIL:-$(git log -1 --format=%ae 2>/dev/null || true)}
if [[ ! $maintainer_email =~ ^[^[:space:]\<\>@]+@[^[:space:]\<\>@]+$ ]]; then
    echo "package-deb: no maintainer address: set DEBEMAIL (and DEBFULLNAME) to whoever distributes the package" >&2
    exit 1
fi
output=$(cd "${1:-.}" && pwd)

for tool in dpkg-deb dpkg ldd gzip strip; do
    command -v "$tool" >/dev/null || { echo "package-deb: $tool is needed" >&2; exit 1; }
done

echo "== package-deb: release build of prefsctl (Swift runtime linked statically)"
swift build -c release --product prefsctl --static-swift-stdlib
binary="$(swift build -c release --product prefsctl --static-swift-stdlib --show-bin-path)/prefsctl"

version=$("$binary" --version | awk '{ print $2 }')
arch=$(dpkg --print-architecture)
[[ $version =~ ^[0-9][0-9A-Za-z.+~-]*$ ]] || { echo "package-deb: '$version' is not a Debian version" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/prefsctl_${version}_${arch}"
install -d -m 0755 "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/man/man1" "$root/usr/share/bash-completion/completions" \
    "$root/usr/share/zsh/vendor-completions" "$root/usr/share/fish/vendor_completions.d" "$root/usr/share/doc/prefsctl"
install -m 0755 "$binary" "$root/usr/bin/prefsctl"
strip --strip-unneeded "$root/usr/bin/prefsctl"
# The manual and the completions come from the packaged binary, run under its installed name.
packaged="$root/usr/bin/prefsctl"
"$packaged" help --man | gzip -9n >"$root/usr/share/man/man1/prefsctl.1.gz"
"$packaged" completion bash >"$root/usr/share/bash-completion/completions/prefsctl"
"$packaged" completion zsh >"$root/usr/share/zsh/vendor-completions/_prefsctl"
"$packaged" completion fish >"$root/usr/share/fish/vendor_completions.d/prefsctl.fish"
cp LICENSE "$root/usr/share/doc/prefsctl/copyright"
find "$root/usr/share" -type f -exec chmod 0644 {} +

# The packages that ship each shared library the binary loads. With merged /usr, dpkg may know a library under
# /lib or under /usr/lib: both are asked.
depends=()
while read -r library; do
    package=""
    for candidate in "$library" "$(readlink -f "$library")" "/usr${library#/usr}" "${library#/usr}"; do
        package=$(dpkg -S "$candidate" 2>/dev/null | head -n 1 | cut -d: -f1) && [ -n "$package" ] && break
    done
    if [ -z "$package" ]; then
        echo "package-deb: $library, which prefsctl loads, belongs to no Debian package; it cannot be a dependency" >&2
        exit 1
    fi
    depends+=("$package")
done < <(ldd "$packaged" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $1 !~ /ld-linux/ { print $1 }' | sort -u)
depends_line=$(printf '%s\n' "${depends[@]}" | sort -u | paste -sd, - | sed 's/,/, /g')

cat >"$root/DEBIAN/control" <<CONTROL
Package: prefsctl
Version: $version
Architecture: $arch
Maintainer: $maintainer_name <$maintainer_email>
Installed-Size: $(du -sk "$root/usr" | cut -f1)
Depends: $depends_line
Section: admin
Priority: optional
Description: administrator's tool for RVS_PersistentPrefs preferences
 Reads and writes the defaults domains of programs that use RVS_PersistentPrefs:
 a user's own domains, system-wide defaults under /etc/xdg, entries an
 administrator forces under /etc/RVS_PersistentPrefs/managed, and domains kept
 in an etcd cluster, with the same locking and validation as the library.
 Includes prefsctl(1) and bash, zsh and fish completions.
CONTROL

mkdir -p "$output"
deb="$output/prefsctl_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zgzip --build "$root" "$deb" >/dev/null
echo "== package-deb: $deb ($(du -h "$deb" | cut -f1)), Depends: $depends_line"
