#!/bin/bash
# `rag eval --split all` of question files at both scales, with the code at $1 (a checkout), into $2.
# DATA: a folder of question files (default: every question file of eval/data). SEEDS_INDEX, FULL_INDEX: the
# index folders of `rag ingest seeds/` and `rag ingest --conference`; PY: the venv's python.
ROOT=$1; OUT=$2; mkdir -p "$OUT"; cd "$ROOT" || exit 1
PY=${PY:-/work/main/.venv/bin/python}; SEEDS_INDEX=${SEEDS_INDEX:-/work/seedsidx}; FULL_INDEX=${FULL_INDEX:-/work/full}
if [ -n "$DATA" ]; then FILES=$(ls "$DATA"/*.jsonl); else
  FILES="eval/data/questions.jsonl eval/data/external_descriptions.jsonl $(ls eval/data/fresh*_questions.jsonl)"; fi
for F in $FILES; do
  n=$(basename "$F" .jsonl)
  [ -f "$OUT/$n-seeds/report.json" ] || RAG_STORAGE__COLLECTION=iclr $PY -m iclr_rag eval --questions "$F" --corpus seeds \
    --data-dir "$SEEDS_INDEX" --split all --scale seeds --out "$OUT/$n-seeds" --no-plots > "$OUT/$n-seeds.log" 2>&1
  [ -f "$OUT/$n-full/report.json" ] || RAG_STORAGE__COLLECTION=iclr2025 $PY -m iclr_rag eval --questions "$F" \
    --corpus seeds/iclr2025.jsonl.gz --data-dir "$FULL_INDEX" --split all --scale full --out "$OUT/$n-full" --no-plots \
    > "$OUT/$n-full.log" 2>&1
  echo "$n done"
done
echo ALLDONE
