#!/bin/bash
# The repository stands on its own: every link in the README and docs/
# resolves to a file in the repository, none leaves it, no page or code
# comment names a file outside it, and the licence the README states is the
# one in LICENSE.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1

# Markdown links [text](target) outside code spans and fenced blocks, one
# "FILE<TAB>TARGET" per line.
links() {
    awk '
        FNR == 1 { fence = 0 }
        /^```/ { fence = !fence; next }
        fence { next }
        {
            line = $0
            gsub(/`[^`]*`/, "", line)
            while (match(line, /\]\([^) ]+\)/)) {
                print FILENAME "\t" substr(line, RSTART + 2, RLENGTH - 3)
                line = substr(line, RSTART + RLENGTH)
            }
        }' "$@"
}

pages=(README.md docs/*.md tests/fuzz/README.md)
bad=""
n=0
while IFS=$'\t' read -r file target; do
    n=$((n + 1))
    path=${target%%#*}
    case $target in
    *://* | mailto:*) bad+="$file: $target leaves the repository"$'\n' ;;
    "#"*) ;;
    *)
        resolved=$(realpath -m "$(dirname "$file")/$path")
        case $resolved/ in
        "$top"/*) [ -e "$resolved" ] || bad+="$file: $target does not exist"$'\n' ;;
        *) bad+="$file: $target leaves the repository"$'\n' ;;
        esac
        ;;
    esac
done < <(links "${pages[@]}")
if [ -z "$bad" ] && [ "$n" -gt 20 ]; then
    ok "all $n links in README.md and docs/ resolve inside the repository"
else
    notok "links in README.md and docs/ resolve inside the repository ($n checked)" "$bad"
fi

# Files that sit beside the repository in the developers' workplace, not in
# a clone: no page, example or comment may send a reader there.
outside=$(git grep -nE '\.\./shared|REFERENCE\.md|DESIGN\.md|specs/[a-z0-9-]+\.txt' -- \
    ':!tests/e2e/test_docs.sh' ':!tests/fuzz/corpus' 2>/dev/null)
same "nothing names REFERENCE.md, DESIGN.md or the spec files beside the repository" "$outside" ""

for f in docs/architecture.md docs/registers.md; do
    if [ -s "$f" ]; then ok "$f exists"; else notok "$f exists"; fi
done

has "LICENSE is the GNU GPL version 2" LICENSE '^ *Version 2, June 1991$'
has "README states GPL-2.0-or-later" README.md 'GPL-2\.0-or-later'
