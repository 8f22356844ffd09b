#!/bin/bash
# full-scale gate runs, both trees, file by file (external descriptions first)
PY=/work/main/.venv/bin/python
cd /work/main
FILES="eval/data/external_descriptions.jsonl eval/data/questions.jsonl $(ls eval/data/fresh*_questions.jsonl)"
for F in $FILES; do
  n=$(basename "$F" .jsonl)
  for T in rules norules; do
    OUT=/work/scratch/ab-rules/$T; mkdir -p $OUT
    [ -f "$OUT/$n-full/report.json" ] || (cd /work/wt-$T && RAG_STORAGE__COLLECTION=iclr2025 $PY -m iclr_rag eval --questions "/work/main/$F" \
      --corpus seeds/iclr2025.jsonl.gz --data-dir /work/full --split all --scale full --out "$OUT/$n-full" --no-plots --gate-only \
      > "$OUT/$n-full.log" 2>&1)
  done
  echo "$n done $(date +%T)"
done
echo ALLDONE
