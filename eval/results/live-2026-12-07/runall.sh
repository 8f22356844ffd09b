#!/bin/bash
# every question file at each scale, for one code root ($1) into $2
ROOT=$1; OUT=$2; mkdir -p $OUT; cd $ROOT
for F in /work/main/eval/data/questions.jsonl /work/main/eval/data/external_descriptions.jsonl /work/main/eval/data/fresh*_questions.jsonl; do
  n=$(basename $F .jsonl)
  [ -f $OUT/$n-seeds/report.json ] || RAG_STORAGE__COLLECTION=iclr /work/main/.venv/bin/python -m iclr_rag eval --questions $F --corpus seeds --data-dir /work/seedsidx --split all --scale seeds --out $OUT/$n-seeds --no-plots > $OUT/$n-seeds.log 2>&1
  [ -f $OUT/$n-full/report.json ] || RAG_STORAGE__COLLECTION=iclr2025 /work/main/.venv/bin/python -m iclr_rag eval --questions $F --corpus /work/main/seeds/iclr2025.jsonl.gz --data-dir /work/full --split all --scale full --out $OUT/$n-full --no-plots > $OUT/$n-full.log 2>&1
  echo "$n done"
done
echo ALLDONE
