#!/usr/bin/env bash
# An administrator's task done with the installed prefsctl only (SPEC §13, §14): install an app's schema, set
# a system default and a forced entry, verify a bad file before installing it, see where each value comes
# from, change a user's setting with --user, and watch a change arrive. It prints a transcript, checks each
# outcome, and exits 1 naming the first step that did not behave as it should.
#
#   sudo Scripts/admin-tour.sh          (root: it writes the real /etc and /usr/local/share paths, and makes
#                                        and removes a scratch user; everything it makes is removed at the end)
#
# Files it touches, all named after the domain com.example.prefsctl-tour and removed at exit:
#   /usr/local/share/RVS_PersistentPrefs/schemas/DOMAIN.plist, /etc/xdg/RVS_PersistentPrefs/DOMAIN.plist,
#   /etc/RVS_PersistentPrefs/managed/DOMAIN.plist, and the home of the user prefstour (made and removed).
set -uo pipefail
domain=com.example.prefsctl-tour
key=settings
user=prefstour
schema_file=/usr/local/share/RVS_PersistentPrefs/schemas/$domain.plist
system_file=/etc/xdg/RVS_PersistentPrefs/$domain.plist
managed_file=/etc/RVS_PersistentPrefs/managed/$domain.plist
[ "$(id -u)" = 0 ] || { echo "admin-tour: run as root (it writes /etc and makes a user)" >&2; exit 2; }
command -v prefsctl >/dev/null || { echo "admin-tour: prefsctl is not installed" >&2; exit 2; }
if id "$user" >/dev/null 2>&1; then echo "admin-tour: the user $user exists already; remove it first" >&2; exit 2; fi
for file in "$schema_file" "$system_file" "$managed_file"; do
    [ -e "$file" ] && { echo "admin-tour: $file exists already; remove it first" >&2; exit 2; }
done
# The directories the tour makes are removed again; those that were there stay.
made_directories=()
for directory in /usr/local/share/RVS_PersistentPrefs/schemas /usr/local/share/RVS_PersistentPrefs \
                 /etc/xdg/RVS_PersistentPrefs /etc/RVS_PersistentPrefs/managed /etc/RVS_PersistentPrefs; do
    [ -e "$directory" ] || made_directories+=("$directory")
done
scratch=$(mktemp -d /tmp/prefsctl-tour-XXXXXX)
chmod 0755 "$scratch"
watcher=""
cleanup() {
    if [ -n "$watcher" ]; then kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null; fi
    rm -f "$schema_file" "$system_file" "$managed_file"
    userdel -r "$user" >/dev/null 2>&1
    rm -rf "$scratch"
    for directory in "${made_directories[@]}"; do rmdir "$directory" 2>/dev/null; done
}
trap cleanup EXIT

failed=""
# Runs a command as the transcript shows it, and keeps its output and status for the checks.
run() {
    printf '$ %s\n' "$*"
    output=$("$@" 2>&1); status=$?
    [ -n "$output" ] && printf '%s\n' "$output"
    [ $status -ne 0 ] && echo "[exit status $status]"
    return 0
}
# Fails the tour (at the end) when the last command's status or output is not as expected.
expect() {
    local want_status=$1 want_text=${2:-}
    if [ "$status" != "$want_status" ] || { [ -n "$want_text" ] && ! grep -qF -- "$want_text" <<<"$output"; }; then
        failed="${failed:-$want_text (status $status, expected $want_status)}"
        echo "admin-tour: NOT AS EXPECTED: exit $want_status${want_text:+ and output containing \"$want_text\"}" >&2
    fi
}

echo "# 1. The app's package installs its schema"
cat >"$scratch/schema.plist" <<'PLIST'
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>settings</key>
	<dict>
		<key>port</key>
		<dict>
			<key>type</key><string>integer</string>
			<key>default</key><integer>8080</integer>
			<key>range</key><array><integer>1</integer><integer>65535</integer></array>
			<key>description</key><string>The port the service listens on.</string>
		</dict>
		<key>level</key>
		<dict>
			<key>type</key><string>string</string>
			<key>default</key><string>info</string>
			<key>allowed</key><array><string>debug</string><string>info</string><string>warning</string><string>error</string></array>
			<key>description</key><string>How much the service logs.</string>
		</dict>
	</dict>
</dict>
</plist>
PLIST
run install -D -m 0644 "$scratch/schema.plist" "$schema_file"; expect 0
run prefsctl list-keys $domain $key; expect 0 "port"
run prefsctl describe $domain $key port; expect 0 "The port the service listens on."

echo; echo "# 2. A system default, and a forced entry"
run prefsctl --system write $domain $key port 8443; expect 0
run prefsctl --system write $domain $key port 70000; expect 1 "nothing was written"
run prefsctl --system read-type $domain $key port; expect 0 "integer"
run prefsctl --managed write $domain $key level warning; expect 0
run stat -c '%A %U %n' "$system_file" "$managed_file"; expect 0 "-rw-r--r-- root $managed_file"
run stat -c '%A %U %n' "$(dirname "$system_file")" "$(dirname "$managed_file")"; expect 0 "drwxr-xr-x root $(dirname "$managed_file")"
run ls -a "$(dirname "$managed_file")"; if grep -q '\.lock' <<<"$output"; then status=lock; fi; expect 0

echo; echo "# 3. A bad candidate file is refused before it is installed"
printf 'garbage' >"$scratch/$domain.plist"; chmod 0644 "$scratch/$domain.plist"
run prefsctl verify "$scratch/$domain.plist" --as managed; expect 1
python3 -c 'import plistlib, sys; sys.stdout.buffer.write(plistlib.dumps({"settings": {"port": 99999}}))' >"$scratch/$domain.plist"
run prefsctl verify "$scratch/$domain.plist" --as system; expect 1 "port: it must be from 1 to 65535"

echo; echo "# 4. A user's setting, and where each value comes from"
useradd -m -d "$scratch/home" "$user"
run prefsctl --user $user write $domain $key port 9000; expect 0
run prefsctl --user $user write $domain $key level debug; expect 1 "forced by the administrator"
run prefsctl --user $user read $domain $key; expect 0 "level = warning"
run prefsctl --user $user read --sources $domain $key; expect 0 "shadows 8443"
run stat -c '%A %U %n' "$scratch/home/.config/RVS_PersistentPrefs/$domain.plist"; expect 0 "-rw------- $user"

echo; echo "# 5. Watching a change arrive"
mkfifo "$scratch/watch"
echo "\$ prefsctl --user $user watch $domain $key &"
prefsctl --user $user watch $domain $key >"$scratch/watch" 2>&1 &
watcher=$!
exec 3<"$scratch/watch"
# The first line is the value as it stands; it is printed once the watches are placed.
first=""; read -r -t 30 first <&3; printf '%s\n' "$first"
run prefsctl --user $user delete $domain $key port; expect 0
second=""; read -r -t 30 second <&3; printf '%s\n' "$second"
output="$second"; status=0; expect 0 "port = 8443"
kill "$watcher"; wait "$watcher" 2>/dev/null; watcher=""
exec 3<&-

echo
if [ -n "$failed" ]; then echo "admin-tour: failed at: $failed" >&2; exit 1; fi
echo "admin-tour: every step as expected"
