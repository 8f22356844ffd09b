#!/bin/bash
for T in rules norules notitle noversion; do
  (cd /work/wt-$T && RAG_STORAGE__COLLECTION=iclr2025 /work/main/.venv/bin/python -m iclr_rag eval --questions /work/scratch/ab-rules/subset.jsonl \
    --corpus seeds/iclr2025.jsonl.gz --data-dir /work/full --split all --scale full --out /work/scratch/ab-rules/sub-$T --no-plots --gate-only \
    > /work/scratch/ab-rules/sub-$T.log 2>&1); echo "$T $(date +%T)"
done; echo ALLDONE
