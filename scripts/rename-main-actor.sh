#!/usr/bin/env bash
# Issue 27: stores and the server run on StateActor (Sources/StateKit/Runtime/StateActor.swift),
# not on the main actor. This rewrites every `@MainActor` (and `MainActor.` call) in the Swift
# sources, tests and examples to StateActor, and "main actor" in their comments and in the
# guides to "state actor". Mechanical and idempotent: re-run it after merging a branch that
# adds `@MainActor` code. The two files that define the actor mention the main actor on
# purpose and are left alone; docs/architecture.md is edited by hand (it keeps history).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
files=$(grep -rlE --include='*.swift' --include='*.md' 'MainActor|[Mm]ain( actor|$)' \
  Sources Tests Examples docs/guide docs/reference README.md 2>/dev/null |
  grep -vE '^Sources/StateKit/Runtime/State(Actor|Executor)\.swift$' || true)
for file in $files; do
  perl -pi -e '
    s/\@MainActor\b/\@StateActor/g;
    s/\bMainActor\./StateActor./g;
    s/\bmain actor\b/state actor/g;
    s/\bMain actor\b/State actor/g;
  ' "$file"
  # "main" and "actor" on two lines of one comment.
  perl -0pi -e 's{\bmain(\n[ \t]*(?:///?[ \t]*)?)actor\b}{state$1actor}g' "$file"
done
# A file that now names StateActor must import StateKit (each module here depends on it): add
# the import, in order among the file's first block of plain imports.
for file in $(grep -rlE --include='*.swift' '@StateActor|StateActor\.' Sources Tests Examples); do
  [[ "$file" == Sources/StateKit/* ]] && continue
  grep -qE '^ *(@[A-Za-z_]+(\([A-Za-z_]+\))? +)?import +StateKit$' "$file" && continue
  python3 - "$file" <<'PY'
import re, sys
path = sys.argv[1]
lines = open(path).read().split("\n")
plain = [i for i, line in enumerate(lines) if re.fullmatch(r"import [A-Za-z_]+", line)]
if plain:
    block = [plain[0]]
    while block[-1] + 1 < len(lines) and re.fullmatch(r"import [A-Za-z_]+", lines[block[-1] + 1]):
        block.append(block[-1] + 1)
    at = next((i for i in block if lines[i] > "import StateKit"), block[-1] + 1)
    lines.insert(at, "import StateKit")
else:
    # After the file's leading plain comments (not a declaration's doc comment).
    first = next(i for i, line in enumerate(lines)
                 if not (line.startswith("//") and not line.startswith("///")))
    while first < len(lines) and lines[first] == "":
        first += 1
    lines[first:first] = ["import StateKit", ""]
open(path, "w").write("\n".join(lines))
PY
done
