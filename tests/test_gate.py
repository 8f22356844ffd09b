"""eval/gate.py: the gate replay (`rag eval --gate-only`) through main() with the copying stand-in."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_gate_replay_copies_the_first_evidence_sentence_and_keeps_the_engines_decisions(
    tmp_path, seed_data_dir
):
    """`rag eval --gate-only`: no model; each draft is the prompt's first evidence sentence, cited, so the
    engine's refusals and citations are its rules' alone, and the report names the stand-in."""
    import shutil

    from eval.gate import CopyingLLM
    from eval.run import main
    from rag.settings import Settings

    llm = CopyingLLM()
    prompt = [
        {"role": "user", "content": "Evidence:\n[2] Celcomen\n- It models tissues.\n- More.\n\nQuestion: q"}
    ]
    assert llm.generate(prompt) == "It models tissues [2]." and llm.generate([]) == "[1]."
    data = tmp_path / "data"
    shutil.copytree(seed_data_dir, data)
    qfile = tmp_path / "q.jsonl"
    picked = [
        json.loads(x)
        for x in (ROOT / "eval" / "data" / "questions.jsonl").read_text().splitlines()
        if x.strip() and json.loads(x)["type"] in ("factoid", "unanswerable")
    ]
    keep = [q for q in picked if q["type"] == "factoid"][:2] + [
        q for q in picked if q["type"] == "unanswerable"
    ][:2]
    qfile.write_text("".join(json.dumps(q) + "\n" for q in keep))
    out = tmp_path / "out"
    main(
        qfile,
        "seeds",
        out,
        "hybrid",
        None,
        Settings(),
        data_dir=data,
        progress=False,
        plots=False,
        llm=llm,
        split="all",
    )
    saved = json.loads((out / "report.json").read_text())
    assert saved["config"]["models"]["llm"] == CopyingLLM.name and not saved["config"]["models"]["int8"]
    rows = [json.loads(x) for x in (out / "rows.jsonl").read_text().splitlines()]
    answered = [r for r in rows if not r["refused"]]
    assert llm.calls >= len([r for r in answered if r["generated"]]) > 0
    for r in answered:  # every answer is a verified copy of a quoted evidence sentence
        assert r["cited"] and all(c["quote"] for c in r["cited"])
