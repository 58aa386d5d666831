#!/bin/sh
# Copies every .strata file of the repository into fuzz/corpus/parse (the seed corpus).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$root/fuzz/corpus/parse"
find "$root/tests" "$root/examples" -name '*.strata' -type f 2>/dev/null | while read -r f; do
    cp "$f" "$root/fuzz/corpus/parse/seed_$(basename "$f")"
done
ls "$root/fuzz/corpus/parse" | wc -l
