#!/usr/bin/env bash
# Checks the documentation (issue 6), as CI runs it from `.ci/run`:
#
#   1. builds the two library products with their symbol graphs, and checks that every public symbol they
#      declare has a doc comment (and every one of PrefsStorageTesting, the conformance kit's product);
#   2. converts Documentation.docc (RVS_PersistentPrefs) and Sources/PrefsEtcd/PrefsEtcd.docc (PrefsEtcd) with
#      the toolchain's `docc convert --warnings-as-errors`, so that a broken symbol link or a malformed page
#      fails, checks that every public symbol is curated and that each landing page curates every article,
#      and merges the two archives into one (`docc merge`);
#   3. compiles every ```swift block of both catalogs and of README.md against the built library, in the Swift 6
#      language mode with warnings as errors (SIL diagnostics included, so data-race checks apply);
#   4. checks that the README's Quick start is identical to the first part of
#      Tests/ConsumerPackage/Sources/QuickStart/main.swift (everything before `// ---- End of the Quick start.`),
#      which CI builds and runs, and to the block in ../shared/SPEC.md §1 when that file exists;
#   5. checks that the README's relative links point at files that exist;
#   6. checks that every case of PrefsError (read from its source) is named in Errors and Recovery;
#   7. regenerates man/prefsctl.1 and man/harness-defaults.1 with `help --man`, fails when it differs from the
#      committed file, and renders it with `man -l` (needs man-db), failing on any warning.
#
# Snippets: the ```swift blocks of one Markdown file are compiled together, in order, as one main.swift, the way
# a reader reads them, so a later block may use what an earlier one declared. Two markers, each an HTML comment
# on the line right before a block's opening fence (DocC and GitHub render neither):
#   <!-- snippet: fragment (REASON) -->   the block is not compiled; REASON (required) says why, for example
#                                         "an excerpt of a package manifest". Keep these rare: the script lists
#                                         them, and fails when fragments outnumber compiled blocks.
#   <!-- snippet: separate -->           the block starts a new compilation unit (for a block that redeclares
#                                         names of an earlier one); later blocks of the file join the new unit.
# Code in other languages (```sh, ```python) is not compiled.
#
# Usage: Scripts/check-docs.sh [--scratch DIR] [--output DIR]
#   --scratch DIR  build and work in DIR, kept afterwards, so that a rerun is incremental (default: a fresh
#                  temporary directory, removed at exit)
#   --output DIR   also keep the combined documentation archive (both modules) in DIR
# Needs the Swift toolchain (swift, swiftc, docc) and python3; no network.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

scratch=""
output=""
while [ $# -gt 0 ]; do
    case "$1" in
        --scratch) scratch=${2:?--scratch needs a directory}; shift 2 ;;
        --output) output=${2:?--output needs a directory}; shift 2 ;;
        -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "check-docs: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
if [ -z "$scratch" ]; then
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/check-docs.XXXXXX")
    # SwiftPM also leaves two lock files named after the scratch path in the temporary directory.
    trap 'rm -rf "$scratch"; rm -f "${TMPDIR:-/tmp}/$(printf %s "$scratch/build" | tr / _)"{.lock,_workspace-state.json.lock}' EXIT
fi
mkdir -p "$scratch"
scratch=$(cd "$scratch" && pwd)
command -v python3 >/dev/null || { echo "check-docs: python3 is needed" >&2; exit 1; }
command -v docc >/dev/null || { echo "check-docs: the toolchain's docc is not on PATH" >&2; exit 1; }

catalog=Documentation.docc
etcd_catalog=Sources/PrefsEtcd/PrefsEtcd.docc
module=RVS_PersistentPrefs
reexported=PrefsStorage,PrefsPropertyList
build="$scratch/build"
symbols="$scratch/symbol-graphs"
mkdir -p "$symbols"

# ── 1. Symbol graphs ─────────────────────────────────────────────────────────────────────────────────────
echo "-- docs 1/7: building $module and extracting its symbol graph (scratch: $build)"
# The library re-exports the storage and codec layers (Sources/RVS_PersistentPrefs/Exports.swift), whose
# public symbols users reach through `import RVS_PersistentPrefs`: they are documented in the same catalog, so
# the symbol graph is extracted for the library with those modules' symbols included.
# -emit-extension-block-symbols documents the library's extensions of Swift types.
# PrefsEtcd, the second library product, is built too: its public symbols are checked below, and the catalog's
# snippets import it.
# PrefsStorageTesting, the conformance kit's product, likewise.
if ! { swift build --target "$module" --scratch-path "$build" && swift build --target PrefsEtcd --scratch-path "$build" \
        && swift build --target PrefsStorageTesting --scratch-path "$build"; } >"$scratch/build.log" 2>&1; then
    cat "$scratch/build.log" >&2
    echo "check-docs: the library does not build" >&2
    exit 1
fi
grep -E 'warning:' "$scratch/build.log" | sed 's/^/   /' || true
bin_path=$(swift build --target "$module" --scratch-path "$build" --show-bin-path)
modules="$bin_path/Modules"
rm -rf "$symbols"
mkdir -p "$symbols"
# The C shim (Sources/CPrefsLinux) is a Clang module the storage layer imports: its generated module map
# must be given, as the compiler is given it.
c_module_maps=()
for map in "$bin_path"/*.build/module.modulemap; do
    [ -f "$map" ] && c_module_maps+=(-Xcc "-fmodule-map-file=$map")
done
if ! swift-symbolgraph-extract -module-name "$module" -I "$modules" "${c_module_maps[@]}" -target "$(uname -m)-unknown-linux-gnu" \
        -minimum-access-level public -output-dir "$symbols" -emit-extension-block-symbols \
        -experimental-allowed-reexported-modules="$reexported" >"$scratch/extract.log" 2>&1; then
    cat "$scratch/extract.log" >&2
    echo "check-docs: swift-symbolgraph-extract failed" >&2
    exit 1
fi
if [ ! -f "$symbols/$module.symbols.json" ]; then
    echo "check-docs: no symbol graph was extracted (see the output above)" >&2
    exit 1
fi
# PrefsEtcd's symbols get the same doc-comment check, from a graph of their own, which its own catalog documents.
etcd_symbols="$scratch/symbol-graphs-PrefsEtcd"
rm -rf "$etcd_symbols"
mkdir -p "$etcd_symbols"
# PrefsEtcd's module needs the module map of the system's OpenSSL (Sources/COpenSSL) wherever it is loaded.
if ! swift-symbolgraph-extract -module-name PrefsEtcd -I "$modules" "${c_module_maps[@]}" -I "$root/Sources/COpenSSL" -target "$(uname -m)-unknown-linux-gnu" \
        -minimum-access-level public -output-dir "$etcd_symbols" -emit-extension-block-symbols >"$scratch/extract-etcd.log" 2>&1; then
    cat "$scratch/extract-etcd.log" >&2
    echo "check-docs: swift-symbolgraph-extract failed for PrefsEtcd" >&2
    exit 1
fi

# And PrefsStorageTesting's, the conformance kit (no C module of its own).
testing_symbols="$scratch/symbol-graphs-PrefsStorageTesting"
rm -rf "$testing_symbols"
mkdir -p "$testing_symbols"
if ! swift-symbolgraph-extract -module-name PrefsStorageTesting -I "$modules" "${c_module_maps[@]}" -target "$(uname -m)-unknown-linux-gnu" \
        -minimum-access-level public -output-dir "$testing_symbols" -emit-extension-block-symbols >"$scratch/extract-testing.log" 2>&1; then
    cat "$scratch/extract-testing.log" >&2
    echo "check-docs: swift-symbolgraph-extract failed for PrefsStorageTesting" >&2
    exit 1
fi

for graph in "$symbols $module $reexported" "$etcd_symbols PrefsEtcd PrefsEtcd" "$testing_symbols PrefsStorageTesting PrefsStorageTesting"; do
# shellcheck disable=SC2086
python3 - $graph <<'PY'
# Every symbol the library and its re-exported layers declare must have a doc comment of its own. Symbols that the compiler
# synthesizes or inherits from standard protocols (OptionSet's methods, Equatable's !=, RawRepresentable's
# init(rawValue:)) have no declaration in the library and are skipped.
import glob, json, os, sys
directory, module = sys.argv[1], sys.argv[2]
own_modules = {module, *sys.argv[3].split(",")}
checked, missing = 0, []
for path in sorted(glob.glob(os.path.join(directory, "*.symbols.json"))):
    for symbol in json.load(open(path))["symbols"]:
        if symbol["kind"]["identifier"] == "swift.extension":
            continue
        location = symbol.get("location", {}).get("uri", "")
        if "::SYNTHESIZED::" in symbol["identifier"]["precise"] or "/Sources/" not in location:
            continue
        checked += 1
        comment = symbol.get("docComment")
        text = " ".join(line["text"] for line in comment["lines"]).strip() if comment else ""
        if not text or comment.get("module", module) not in own_modules:
            where = location.split("/Sources/", 1)[-1]
            missing.append(f"{'/'.join(symbol['pathComponents'])} ({where}:{symbol['location']['position']['line'] + 1})")
print(f"   {checked} public symbols of {module} declared in Sources/, each with a doc comment: "
      + ("yes" if not missing else f"NO, {len(missing)} without"))
for entry in missing:
    print(f"   missing doc comment: {entry}")
sys.exit(1 if missing else 0)
PY
done

# ── 2. DocC ──────────────────────────────────────────────────────────────────────────────────────────────
# Two catalogs, one per library product: Documentation.docc for RVS_PersistentPrefs (with the layers it
# re-exports), and Sources/PrefsEtcd/PrefsEtcd.docc for PrefsEtcd. The first is converted with its link metadata
# (--enable-experimental-external-link-support), so that the second, converted with it as a --dependency, links
# to its symbols with absolute links (``/RVS_PersistentPrefs/PrefsError``). `docc merge` then combines the two
# into the one archive a reader browses.
echo "-- docs 2/7: docc convert $catalog and $etcd_catalog --warnings-as-errors, docc merge"
archive="$scratch/$module.doccarchive"
etcd_archive="$scratch/PrefsEtcd.doccarchive"
combined="$scratch/combined.doccarchive"
rm -rf "$archive" "$etcd_archive" "$combined"
# convert NAME CATALOG SYMBOLS ARCHIVE BUNDLE-ID [docc options]: converts one catalog, failing on any diagnostic.
convert() {
    local name=$1 source=$2 graphs=$3 destination=$4 identifier=$5
    shift 5
    local log="$scratch/docc-$name.log"
    if ! docc convert "$source" \
            --additional-symbol-graph-dir "$graphs" \
            --warnings-as-errors \
            --output-dir "$destination" \
            --fallback-display-name "$name" \
            --fallback-bundle-identifier "$identifier" \
            "$@" >"$log" 2>&1; then
        cat "$log" >&2
        echo "check-docs: docc convert $source failed" >&2
        exit 1
    fi
    # Some docc versions print a diagnostic and still exit 0: any warning or error fails the check.
    if grep -Eiq '(^|[[:space:]])(warning|error):' "$log"; then
        cat "$log" >&2
        echo "check-docs: docc convert $source reported diagnostics" >&2
        exit 1
    fi
    echo "   $source converted with no warnings: $(find "$destination/data/documentation" -name '*.json' | wc -l) pages"
}
convert "$module" "$catalog" "$symbols" "$archive" com.riftvalleysoftware.RVS_PersistentPrefs \
    --enable-experimental-external-link-support
convert PrefsEtcd "$etcd_catalog" "$etcd_symbols" "$etcd_archive" com.riftvalleysoftware.PrefsEtcd \
    --dependency "$archive" --enable-experimental-external-link-support
if ! docc merge "$archive" "$etcd_archive" --output-path "$combined" \
        --synthesized-landing-page-name "$module" >"$scratch/docc-merge.log" 2>&1 \
        || grep -Eiq '(^|[[:space:]])(warning|error):' "$scratch/docc-merge.log"; then
    cat "$scratch/docc-merge.log" >&2
    echo "check-docs: docc merge failed" >&2
    exit 1
fi
if [ -n "$output" ]; then
    rm -rf "$output"
    cp -R "$combined" "$output"
fi
echo "   merged: both modules in one archive -> ${output:-$combined}"

for converted in "$archive" "$etcd_archive"; do
python3 - "$converted" <<'PY'
# Every public symbol must be curated: listed in a topic group that a person wrote (with a sentence on when
# to reach for it), never only in a group DocC generates. Generated groups of conformances ("Default
# Implementations", and the "… Implementations" pages under them) may list what the standard library provides;
# a method the package's own protocol extensions give a type (the typed-entry API that `RVS_PersistentPrefs`
# gets from `PrefsObserving`) must also be in a written group, where a reader of the type looks.
import glob, json, os, sys
archive = sys.argv[1]
root = os.path.join(archive, "data", "documentation")
own_modules = [f"s:{len(name)}{name}" for name in ("RVS_PersistentPrefs", "PrefsStorage", "PrefsPropertyList", "PrefsEtcd")]
uncurated, written, inherited = [], set(), {}
for path in sorted(glob.glob(os.path.join(root, "**", "*.json"), recursive=True)):
    relative = os.path.relpath(path, root)
    page = json.load(open(path))
    for section in page.get("topicSections", []):
        if not section.get("generated"):
            written.update(section.get("identifiers", []))
        elif "-implementations" in relative:
            for identifier in section.get("identifiers", []):
                inherited[identifier] = relative[:-5]
        elif section.get("title") != "Default Implementations":
            for identifier in section.get("identifiers", []):
                uncurated.append(f"{identifier.split('documentation/', 1)[-1]} (in a generated '{section.get('title')}' group of {relative[:-5]})")
for identifier, where in sorted(inherited.items()):
    if identifier in written:
        continue
    target = os.path.join(root, identifier.split("/documentation/", 1)[-1].lower() + ".json")
    external = json.load(open(target)).get("metadata", {}).get("externalID", "") if os.path.exists(target) else ""
    if any(external.startswith(prefix) for prefix in own_modules):
        uncurated.append(f"{identifier.split('documentation/', 1)[-1]} (only in the generated {where})")
print(f"   every public symbol of {os.path.basename(archive)} curated in a written topic group: " + ("yes" if not uncurated else f"NO, {len(uncurated)} not"))
for entry in uncurated:
    print(f"   not curated: {entry}")
sys.exit(1 if uncurated else 0)
PY
done

for pair in "$catalog $module" "$etcd_catalog PrefsEtcd"; do
# shellcheck disable=SC2086
python3 - $pair <<'PY'
# Every article of the catalog must be curated from the landing page, so that none is orphaned.
import os, re, sys
catalog, module = sys.argv[1], sys.argv[2]
landing = open(os.path.join(catalog, module + ".md")).read()
articles = sorted(name[:-3] for folder, _, names in os.walk(catalog) for name in names
                  if name.endswith(".md") and name != module + ".md"
                  and not open(os.path.join(folder, name)).read().lstrip().startswith("# ``"))
curated = set(re.findall(r"<doc:([A-Za-z0-9_-]+)>", landing))
orphans = [name for name in articles if name not in curated]
print(f"   {len(articles)} articles in {catalog}, all curated from the landing page: " + ("yes" if not orphans else "NO"))
for name in orphans:
    print(f"   not curated from {module}.md: <doc:{name}>")
sys.exit(1 if orphans else 0)
PY
done

# ── 3. Snippets ──────────────────────────────────────────────────────────────────────────────────────────
echo "-- docs 3/7: compiling the Swift snippets of $catalog, $etcd_catalog and README.md (Swift 6, warnings as errors)"
units="$scratch/snippets"
rm -rf "$units"
mkdir -p "$units"
markdown_files=()
while IFS= read -r file; do markdown_files+=("$file"); done < <(find "$catalog" "$etcd_catalog" -name '*.md' | LC_ALL=C sort)
python3 - "$units" README.md "${markdown_files[@]}" >"$units/list" <<'PY'
# Writes one main.swift-style file per compilation unit, with #sourceLocation so that diagnostics point at the
# Markdown lines, and prints "UNIT<TAB>FILE<TAB>BLOCKS<TAB>FIRST LINE" per unit for the shell to compile.
import os, re, sys
out_dir, files = sys.argv[1], sys.argv[2:]
fence = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([A-Za-z0-9_+-]*)")
marker = re.compile(r"^\s*<!--\s*snippet:\s*(fragment|separate)\b(.*?)-->\s*$")
compiled = fragments = 0
fragment_list, bad = [], []
index = 0
for path in files:
    lines = open(path).read().split("\n")
    unit, unit_blocks, unit_line = [], 0, 0
    def flush():
        global index
        if unit_blocks:
            index += 1
            name = f"unit{index:02d}"
            os.makedirs(os.path.join(out_dir, name))
            with open(os.path.join(out_dir, name, "main.swift"), "w") as f:
                f.write("\n".join(unit) + "\n")
            print(f"{name}\t{path}\t{unit_blocks}\t{unit_line}")
    i = 0
    while i < len(lines):
        m = fence.match(lines[i])
        if not m:
            if marker.match(lines[i]):
                j = i + 1
                if j >= len(lines) or not (fm := fence.match(lines[j])) or fm.group(3) != "swift":
                    bad.append(f"{path}:{i + 1}: a snippet marker must be on the line right before a ```swift fence")
            i += 1
            continue
        indent, ticks, language = m.groups()
        start = i + 1
        end = start
        while end < len(lines) and not lines[end].strip().startswith(ticks):
            end += 1
        if language == "swift":
            previous = marker.match(lines[i - 1]) if i > 0 else None
            kind = previous.group(1) if previous else None
            if kind == "fragment":
                reason = previous.group(2).strip()
                if not re.fullmatch(r"\(.+\)", reason):
                    bad.append(f"{path}:{i}: a fragment marker needs a reason: <!-- snippet: fragment (why) -->")
                fragments += 1
                fragment_list.append(f"{path}:{start} {reason}")
            else:
                if kind == "separate":
                    flush()
                    unit, unit_blocks = [], 0
                if not unit_blocks:
                    unit_line = start + 1
                body = [line[len(indent):] if line.startswith(indent) else line for line in lines[start:end]]
                unit.append(f'#sourceLocation(file: "{path}", line: {start + 1})')
                unit.extend(body)
                unit.append("#sourceLocation()")
                unit_blocks += 1
                compiled += 1
        i = end + 1
    flush()
with open(os.path.join(out_dir, "summary"), "w") as f:
    f.write(f"{compiled}\t{fragments}\n")
    for entry in fragment_list:
        f.write(entry + "\n")
for message in bad:
    print(message, file=sys.stderr)
if bad:
    sys.exit(1)
if fragments > compiled:
    print(f"{fragments} fragments against {compiled} compiled snippets: most snippets must compile", file=sys.stderr)
    sys.exit(1)
PY
IFS=$'\t' read -r compiled fragments < <(head -n 1 "$units/summary")
while IFS=$'\t' read -r unit file blocks line; do
    if ! swiftc -emit-sil -o /dev/null -swift-version 6 -warnings-as-errors \
            -I "$modules" "${c_module_maps[@]}" -I "$root/Sources/COpenSSL" -module-name "DocSnippet_$unit" "$units/$unit/main.swift" \
            >"$units/$unit/log" 2>&1; then
        cat "$units/$unit/log" >&2
        echo "check-docs: the snippets of $file (from line $line) do not compile warning-free" >&2
        echo "            (the unit as compiled: $units/$unit/main.swift)" >&2
        exit 1
    fi
    echo "   compiled: $file ($blocks block$([ "$blocks" = 1 ] || echo s), from line $line)"
done <"$units/list"
echo "   $compiled snippets compiled; $fragments marked as fragments, not compiled:"
tail -n +2 "$units/summary" | sed 's/^/     /'

# ── 4. The Quick start ───────────────────────────────────────────────────────────────────────────────────
echo "-- docs 4/7: the README's Quick start is the consumer package's (and SPEC §1's, when present)"
python3 - README.md Tests/ConsumerPackage/Sources/QuickStart/main.swift ../shared/SPEC.md <<'PY'
import difflib, os, re, sys
readme_path, consumer_path, spec_path = sys.argv[1:4]

def first_swift_block_after(path, heading_pattern):
    lines = open(path).read().split("\n")
    for number, line in enumerate(lines):
        if re.match(heading_pattern, line):
            break
    else:
        sys.exit(f"check-docs: no heading matching {heading_pattern!r} in {path}")
    for start in range(number + 1, len(lines)):
        if re.match(r"^#{1,2} ", lines[start]):
            break
        if lines[start].strip() == "```swift":
            end = start + 1
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            return lines[start + 1:end]
    sys.exit(f"check-docs: no ```swift block under {heading_pattern!r} in {path}")

def trimmed(lines):
    lines = list(lines)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines

readme = trimmed(first_swift_block_after(readme_path, r"^## Quick start\s*$"))
consumer_lines = open(consumer_path).read().split("\n")
end_marker = [i for i, line in enumerate(consumer_lines) if line.startswith("// ---- End of the Quick start.")]
if not end_marker:
    sys.exit(f"check-docs: {consumer_path} has no line beginning '// ---- End of the Quick start.'")
consumer = trimmed(consumer_lines[:end_marker[0]])
failed = False
comparisons = [(consumer_path + " (before its end marker)", consumer)]
if os.path.exists(spec_path):
    comparisons.append((spec_path + " §1", trimmed(first_swift_block_after(spec_path, r"^## 1\."))))
else:
    print(f"   {spec_path} is absent: compared with the consumer package only")
for name, other in comparisons:
    if other == readme:
        print(f"   identical ({len(readme)} lines): README.md Quick start = {name}")
    else:
        failed = True
        print(f"check-docs: the README's Quick start differs from {name}:", file=sys.stderr)
        sys.stderr.writelines(line + "\n" for line in difflib.unified_diff(readme, other, "README.md", name, lineterm=""))
sys.exit(1 if failed else 0)
PY

# ── 5. README links ──────────────────────────────────────────────────────────────────────────────────────
echo "-- docs 5/7: the README's relative links"
python3 - README.md <<'PY'
import os, re, sys
path = sys.argv[1]
text = open(path).read()
targets = [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:|#", t)]
broken = [t for t in targets if not os.path.exists(os.path.join(os.path.dirname(path) or ".", t.split("#")[0]))]
print(f"   {len(targets)} relative links, all to existing files: " + ("yes" if not broken else "NO"))
for target in broken:
    print(f"   broken link in {path}: {target}", file=sys.stderr)
sys.exit(1 if broken else 0)
PY

# ── 6. Every PrefsError case in Errors and Recovery ──────────────────────────────────────────────────────
echo "-- docs 6/7: every PrefsError case is named in Errors and Recovery"
python3 - Sources/PrefsStorage/Errors/PrefsError.swift Documentation.docc/ErrorsAndRecovery.md <<'PY'
# The cases are read from the enum's source, so that a case added later must be documented too.
import re, sys
source, article_path = sys.argv[1], sys.argv[2]
text = open(source).read()
body = text[text.index("public enum PrefsError"):]
depth, end = 0, 0
for index, char in enumerate(body):
    if char == "{":
        depth += 1
    elif char == "}":
        depth -= 1
        if depth == 0:
            end = index
            break
# Only the enum's own level: nested types (Step) have cases of their own.
level, own = 0, []
for line in body[:end].split("\n"):
    if level == 1:
        own.append(line)
    level += line.count("{") - line.count("}")
cases = [m.group(1) for line in own for m in [re.match(r"\s*case\s+(\w+)", line)] if m]
article = open(article_path).read()
missing = [name for name in cases if not re.search(r"``PrefsError/" + name + r"[(`]", article)]
print(f"   {len(cases)} cases in {source}, each named as ``PrefsError/case(...)`` in {article_path}: " + ("yes" if not missing else "NO"))
for name in missing:
    print(f"   not in Errors and Recovery: PrefsError.{name}", file=sys.stderr)
sys.exit(1 if missing or not cases else 0)
PY

# ── 7. The manual pages ──────────────────────────────────────────────────────────────────────────────────
echo "-- docs 7/7: man/prefsctl.1 and man/harness-defaults.1 are what \`help --man\` generates, and render"
command -v man >/dev/null || { echo "check-docs: man is needed to render the manual page (apt-get install man-db)" >&2; exit 1; }
if ! { swift build --product harness --scratch-path "$build" && swift build --product prefsctl --scratch-path "$build"; } >"$scratch/harness-build.log" 2>&1; then
    cat "$scratch/harness-build.log" >&2
    echo "check-docs: the harness or prefsctl does not build" >&2
    exit 1
fi
# The same text, named for each program: prefsctl(1), installed by Scripts/package-deb.sh, and harness-defaults(1).
for page in prefsctl harness-defaults; do
    if [ "$page" = prefsctl ]; then generate=("$bin_path/prefsctl" help --man); else generate=("$bin_path/harness" defaults help --man); fi
    "${generate[@]}" >"$scratch/$page.1"
    if ! diff -u "man/$page.1" "$scratch/$page.1" >&2; then
        echo "check-docs: man/$page.1 is stale; regenerate it: swift run ${generate[*]#"$bin_path/"} > man/$page.1" >&2
        exit 1
    fi
    # man -l renders the committed file; --warnings passes groff's warnings on, and any of them fails.
    if ! MANWIDTH=80 man --warnings -l "man/$page.1" >"$scratch/$page.txt" 2>"$scratch/man.log" || [ -s "$scratch/man.log" ]; then
        cat "$scratch/man.log" >&2
        echo "check-docs: man -l man/$page.1 reported problems" >&2
        exit 1
    fi
    echo "   man/$page.1 is identical to the generated page; renders with man -l: $(wc -l <"$scratch/$page.txt") lines, no warnings"
done

echo "-- docs: all checks passed"
