"""What is asked for: the answer shape and whether a question leans on the chat."""

import pytest


@pytest.mark.parametrize(
    "q, want",
    [
        ("Which papers in this collection are about diffusion models?", "list"),
        ("Which paper proposes a next-token predictor that sees a prefix and a suffix?", "list"),
        ("Is there work on smoothing a policy's actions in continuous control?", "list"),
        ("Are there any studies of LLM fairness over many turns?", "list"),
        ("Any papers on protein inverse folding?", "list"),
        ("Is there a text-to-video generation paper here that uses curricula?", "list"),  # 3 modifiers
        ("How many papers study machine unlearning?", "list"),
        ("How many oral papers are about diffusion?", "list"),
        ("How many baseline methods does SRSA beat?", "explain"),
        ("List the papers about federated learning.", "list"),
        ("Find me works on watermarking language models", "list"),
        ("Papers about spiking neural networks?", "list"),
        ("What recent works study reward hacking?", "list"),
        ("Summarize the work on diffusion models in this collection.", "summary"),
        ("Give me an overview of reinforcement learning papers", "summary"),
        ("Can you give a summary of the graph learning abstracts?", "summary"),
        ("How do DANSM and EvoGen differ?", "compare"),
        ("Compare Lean-STaR with MR.Q.", "compare"),
        ("What is the difference between the two diffusion training methods?", "compare"),
        ("What does Celcomen do?", "explain"),
        ("How many chaotic systems were used to test forecasting?", "explain"),
        ("Why does the randomized midpoint method converge faster?", "explain"),
        ("What datasets did they validate it on?", "explain"),
    ],
)
def test_answer_shape_follows_what_was_asked(q, want):
    from rag.intent import shape

    assert shape(q) == want


@pytest.mark.parametrize(
    "q, turns, want",
    [
        ("What does Lean-STaR do?", ["What does EvoGen do?"], None),  # names its own subject: a switch
        ("Which papers are about diffusion?", ["What does Celcomen do?"], None),
        ("How does the method that uses prefixes work?", ["What does EvoGen do?"], None),
        ("What datasets did they validate it on?", ["What does Celcomen do?"], 0),
        ("And on SUN RGB-D?", ["What AP50 gains does DEST report on ScanNet V2?"], 0),
        ("How does this method scale?", ["What does EvoGen do?"], 0),
        ("What about its limitations?", ["Q1", "What does EvoGen do?"], 1),
        ("In the first one, what data was used?", ["What does Celcomen do?", "What does EvoGen do?"], 0),
        ("Going back to the first paper, who benefits?", ["A?", "B?", "C?"], 0),
        ("What did the second one find?", ["A?", "B?", "C?"], 1),
        ("And the latter?", ["What does Celcomen do?", "What does EvoGen do?"], 1),
        ("What limitations does the latter have?", ["What does Celcomen do?", "What does EvoGen do?"], 1),
        ("Can the second handle video?", ["A?", "B?", "C?"], 1),
        ("Does the first outperform the second?", ["A?", "B?", "C?"], 0),  # the first pointer leads
        ("What about the first’s limitations?", ["A?", "B?", "C?"], 0),
        # the turn before the last one
        ("the one before that: does it scale?", ["A?", "B?", "C?"], 1),
        ("And the paper before the last one, what data?", ["A?", "B?", "C?"], 1),
        # an ordinal of something else is no pointer to a turn: the question names its own subject
        (
            "OK, different topic: the paper on bandits with delays - what do they prove for the first time?",
            ["What does EvoGen do?"],
            None,
        ),
        ("Which paper beats the previous state of the art on ImageNet?", ["What does EvoGen do?"], None),
        ("What happens in the first stage of MR.Q training?", ["What does EvoGen do?"], None),
        (
            "Which paper is the first method to unify audio and video tokenizers?",
            ["What does EvoGen do?"],
            None,
        ),
        (
            "Is there work that was the first to prove convergence for transformers?",
            ["What does EvoGen do?"],
            None,
        ),
        ("What is the first paper that studies reward hacking in agents?", ["What does EvoGen do?"], None),
        ("Back to the first paper: what data did they use?", ["A?", "B?"], 0),  # a pointer still points
        ("Datasets used?", ["What does Celcomen do?"], 0),
        ("What does Celcomen do?", [], None),
        ("And what does Topograph do for segmentation?", ["What does EvoGen do?"], None),  # new subject
        ("What about SmODE: how does it bound its Lipschitz constant?", ["What does MR.Q do?"], None),
        ("Let's move to the video retrieval paper. How does it scale?", ["What does EvoGen do?"], None),
        ("Which examples stay memorized according to that paper?", ["Q?", "What does EvoGen do?"], 1),
        ("And on SUN RGB-D?", ["What AP50 gains does DEST report on ScanNet V2?"], 0),
        ("How does EvoGen's curriculum work?", ["What does EvoGen do?"], None),
        # a pronoun before the new name points back: the name is a detail of the earlier subject
        ("How does it compare to MorphoDiff?", ["What does EvoGen do?"], 0),
        ("Does it report PSNR on the benchmark, and how much?", ["Tell me about UniG."], 0),
        ("Now SRSA: how does it pick skills?", ["What does EvoGen do?"], None),  # the name comes first
        ("Do those gains hold for larger models?", ["What does EvoGen do?"], 0),  # these/those + any noun
        ("Where do these thoughts come from?", ["What is Lean-STaR?"], 0),
        # a subject described in words of its own stands alone
        ("Now the paper on grade-school math: what does it find?", ["What does EvoGen do?"], None),
        ("And the one on rectified flow?", ["Which papers are about diffusion?"], None),
        ("What about vehicle routing at scale — how is it solved?", ["What does EvoGen do?"], None),
        ("What about speed — is it faster?", ["What does EvoGen do?"], 0),  # one generic word: same paper
        ("What about on SUN RGB-D?", ["What AP50 gains does DEST report on ScanNet V2?"], 0),
        ("Does the paper on it say more?", ["What does EvoGen do?"], 0),
        # "and for <a description of its own>, …": three new words make a subject; fewer ask the same paper
        (
            "And for the graph-based protein folding planner, which tasks did they test?",
            ["What is UniG?"],
            None,
        ),
        ("And for the ablation, what did they remove?", ["What does EvoGen do?"], 0),
        ("And for the larger variant, what is the accuracy?", ["What does EvoGen do?"], 0),
        ("new q: the bandit paper with delayed feedback — what regret does it get?", ["What is UniG?"], None),
        # a topic set off before the question (a dash, a colon, "In the … paper that …,") is a subject
        ("Switching gears — how does SmODE bound its Lipschitz constant?", ["What does EvoGen do?"], None),
        (
            "the scaling-law analysis of retrieval corpora — do they find a plateau?",
            ["What is UniG?", "What does it cite?"],
            None,
        ),
        (
            "In the protein paper that predicts binding pockets, which data do they use?",
            ["What is UniG?"],
            None,
        ),
        ("On the speech one that distills teachers, what WER do they get?", ["What does EvoGen do?"], None),
        # … but a part of the paper in talk ("the results on …") or a generic phrase asks the same paper
        ("The results with heavy label noise — are they better?", ["What does EvoGen do?"], 0),
        ("In the experiments with long contexts, how fast is it?", ["What does EvoGen do?"], 0),
        ("The larger model — how does it do?", ["What does EvoGen do?"], 0),
        ("OK then, how many LLMs did they evaluate?", ["What does EvoGen do?"], 0),  # a field, no name
    ],
)
def test_history_is_used_only_when_the_question_depends_on_it(q, turns, want):
    from rag.intent import referent, standalone

    assert referent(q, turns) == want
    out = standalone(q, turns)
    assert out == q if want is None else turns[want] in out


@pytest.mark.parametrize(
    "q, want",
    [
        (
            "Which paper proposes a sparse attention kernel for long videos?",
            "proposes a sparse attention kernel for long videos",
        ),
        ("Is there work on pruning vision transformers?", "on pruning vision transformers"),
        ("OK, is there a paper here on tabular foundation models?", "on tabular foundation models"),
        ("Which papers in this collection are about speculative decoding?", "are about speculative decoding"),
        ("List papers on tokenizer-free language models", "on tokenizer-free language models"),
        # the frame's own modifiers describe the paper too
        (
            "is there a text-to-video generation paper that uses curricula?",
            "text-to-video generation that uses curricula",
        ),
        ("Which diffusion papers study guidance?", "diffusion study guidance"),
        ("Find me three recent robotics papers about grasping", "robotics about grasping"),
        # what the papers said is asked, not described; a noun of the topic stays
        ("What do the papers on grokking report?", "on grokking"),
        ("Which papers study radiology report generation?", "study radiology report generation"),
        ("Is there a paper on scientific claim verification?", "on scientific claim verification"),
    ],
)
def test_described_drops_the_question_frame(q, want):
    from rag.intent import described

    assert described(q) == want


@pytest.mark.parametrize(
    "q, many",
    [
        ("Which papers use contrastive pretraining for robotics?", True),
        ("Are there studies on tokenizer-free language models?", True),
        ("Is there any work on pruning vision transformers?", True),
        ("Papers about speculative decoding", True),
        # one paper asked for, whatever plural word the description holds (a verb, "methods")
        ("Which paper studies the calibration of reward models?", False),
        ("OK, which work compares methods for test-time adaptation?", False),
        ("Is there a paper that studies approaches to model merging?", False),
        ("Which one of the papers studies sparse autoencoders?", False),
    ],
)
def test_one_paper_or_many_is_read_from_the_frame(q, many):
    from rag.intent import wants_many

    assert wants_many(q) is many


@pytest.mark.parametrize(
    "q, want",
    [
        ("Unrelated: how does PSR-SCI adapt RGB models?", "How does PSR-SCI adapt RGB models?"),
        ("Fine — what does MorphoDiff condition on, then?", "What does MorphoDiff condition on, then?"),
        ("OK, so, what is it?", "What is it?"),
        ("Now, SRSA: how does it work?", "SRSA: how does it work?"),
        ("Thanks - and which datasets?", "And which datasets?"),
        ("Fine-tuning LLMs with DP: which paper?", "Fine-tuning LLMs with DP: which paper?"),
        ("Next-token prediction: what does it miss?", "Next-token prediction: what does it miss?"),
        ("So-called grokking: is it studied?", "So-called grokking: is it studied?"),
        ("What does Celcomen do?", "What does Celcomen do?"),
        ("Thank you, what datasets did they use?", "What datasets did they use?"),
        ("OK so which paper is it?", "Which paper is it?"),
        # an opener word that starts the question's own words stays
        ("Right whale detection: which paper?", "Right whale detection: which paper?"),
        (
            "Fine grained classification with CLIP: which paper?",
            "Fine grained classification with CLIP: which paper?",
        ),
        ("Next token prediction: what does it miss?", "Next token prediction: what does it miss?"),
        ("So far, what results hold?", "So far, what results hold?"),
        ("Great Lakes ice modelling: any work?", "Great Lakes ice modelling: any work?"),
        ("mRNA design: which paper?", "mRNA design: which paper?"),
        ("Unrelated: mRNA design?", "mRNA design?"),
    ],
)
def test_the_generator_is_asked_without_chat_openers(q, want):
    from rag.intent import for_generator

    assert for_generator(q, q) == want


def test_the_generator_is_asked_the_standalone_question_or_the_users_words():
    from rag.intent import for_generator, standalone

    turns = ["What does Celcomen do?"]
    q = "OK, what datasets did they validate it on?"
    query = standalone(q, turns)
    assert query != q  # it leans on the last turn
    assert (
        for_generator(q, query, "standalone")
        == "What datasets did they validate it on? (What does Celcomen do?)"
    )
    assert for_generator(q, query, "asked") == "What datasets did they validate it on?"
    # the earlier turn in brackets loses its opener too
    turns = ["Unrelated: what does Celcomen do?"]
    query = standalone("How does it compare to SRSA?", turns)
    assert (
        for_generator("How does it compare to SRSA?", query)
        == "How does it compare to SRSA? (What does Celcomen do?)"
    )


@pytest.mark.parametrize(
    "q, want",
    [
        # described by what it does, after a demonstrative and a field word
        (
            "How large was the test set of that vision model fusing radar and lidar depth maps, and what did they beat?",
            None,
        ),
        # a described paper after the pronoun is the question's subject ...
        ("What bound did they prove, in the work on decentralized bandits with delayed feedback?", None),
        ("Which loss do they use, for the paper about protein docking with equivariant flows?", None),
        # ... unless the question compares with it, or the description is too thin
        ("How does it compare to the work on decentralized bandits with delayed feedback?", 0),
        ("What did they prove, in the work on bandits?", 0),
        # a pronoun in the description's own clause is the description's
        ("For the setup where clients keep their gradients private, what does the server estimate?", None),
        ("For the paper, what do they estimate?", 0),
        ("Does that method using it need labels?", 0),
    ],
)
def test_a_subject_described_after_a_pronoun_or_by_what_it_does(q, want):
    from rag.intent import referent

    assert referent(q, ["What does JEPT learn?"]) == want
