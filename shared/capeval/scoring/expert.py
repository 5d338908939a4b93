"""EXPERT (Kim et al., ACL 2025 Findings): LLaVA-1.5-13B with a LoRA fine-tuned on structured explanations rates a
caption 0.0–1.0 and, on request, explains the rating by fluency, relevance and descriptiveness; the rating is
smoothed as FLEUR smooths it (:func:`capeval.scoring.fleur.smoothed_score`), as the released code
(hjkim811/EXPERT ``expert.py``) computes it.

The released code renders its prompt with the ``llava_v0`` conversation (``###Human:``): with its default model path
(``hjkim811/EXPERT-llava-13b-lora``, no "v1" in the name) its own code picks ``llava_v0`` and ``--conv-mode`` only
warns. It decodes without special tokens and looks for the rating's digits among the generated ids after the first
(``output_ids[0, 1:]``), using the position found there as the step: with LLaVA's ``inputs_embeds`` generation
(transformers 4.37.2 returns only the generated ids) that is the step before the digit's own.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Sequence

from ..backbones.llava import Generation
from ..declaration import Opt
from ..inputs import path_option
from ..needs import HubModel
from .fleur import DEFAULT_LLAVA, MAX_NEW_TOKENS, AnswerCache, LlavaJudgeScorer, MaxNewTokens, WeightDtype
from .options import Device

#: The released scoring prompt (hjkim811/EXPERT ``expert.py`` at 74bbef41, ``get_scoring_prompt``).
EXPERT_PROMPT = "Evaluate the caption and assign a score on a scale of 0.0 to 1.0.\n\nCaption: {caption}\n\nScore (0.0~1.0):"
#: The released explanation prompt (``get_explanation_prompt``).
EXPERT_EXPLANATION_PROMPT = (
    "Provide a brief explanation for the score based on three criteria: Fluency, Relevance, and Descriptiveness.\n\n"
    "Caption: {caption}\n\nEvaluation Criteria:\n- Fluency: Whether the caption is fluent, natural, and grammatically correct.\n"
    "- Relevance: Whether the sentence correctly describes the visual content and be closely relevant to the image.\n"
    "- Descriptiveness: Whether the sentence is a precise, informative caption that describes important details of the image."
    "\n\nOutput Format:\nFluency: {{Provide explanation here.}}\nRelevance: {{Provide explanation here.}}\n"
    "Descriptiveness: {{Provide explanation here.}}")
#: The released LoRA (on liuhaotian/llava-v1.5-13b).
DEFAULT_ADAPTER = "hjkim811/EXPERT-llava-13b-lora"
_EXPLANATION = re.compile(r"Fluency:\s*(.*?)\nRelevance:\s*(.*?)\nDescriptiveness:\s*(.*)", re.DOTALL)


def parse_explanation(text: str) -> dict[str, str] | None:
    """The released ``parse_explanation``: the three criteria's texts, or ``None`` when the answer lacks the format.

    >>> parse_explanation("Fluency: fine.\\nRelevance: on topic.\\nDescriptiveness: brief.")
    {'fluency': 'fine.', 'relevance': 'on topic.', 'descriptiveness': 'brief.'}
    >>> parse_explanation("Relevance: only this") is None
    True
    """
    match = _EXPLANATION.search(text)
    if match is None:
        return None
    return {"fluency": match.group(1).strip(), "relevance": match.group(2).strip(), "descriptiveness": match.group(3).strip()}


class ExpertScorer(LlavaJudgeScorer):
    """EXPERT: LLaVA-1.5 with the released LoRA merged (its module names mapped to transformers' Llava), the
    released prompts in the ``llava_v0`` conversation, the rating smoothed over its digits' probabilities.

    Example (a tiny Llava stands in for LLaVA-1.5-13B, without the LoRA; ``metrics/expert`` has the module):
        >>> import tempfile
        >>> from capeval.backbones.llava import save_scripted_llava
        >>> from capeval.samples import sample_image
        >>> model = save_scripted_llava(tempfile.mkdtemp())
        >>> out = ExpertScorer(model, adapter=None, device="cpu").score(["a dog runs"], images=[str(sample_image())])
        >>> round(out["expert"][0], 4), out.details["answer"]
        (0.2147, ['0.7'])
    """

    metric, title = "expert", "EXPERT"
    name = primary = "expert"
    default_models = ("LLaVA-1.5-13B (llava-hf/llava-1.5-13b-hf) with the EXPERT LoRA (hjkim811/EXPERT-llava-13b-lora, "
                      "a local folder)")
    faithful_to = ("hjkim811/EXPERT `expert.py` at 74bbef41: prompts, llava_v0 conversation, padding and score smoothing "
                   "(to 1e-6 on synthetic answers)")
    needs_references = False
    template = "llava_v0"
    search_start = 1
    needs = (HubModel(DEFAULT_LLAVA), HubModel(DEFAULT_ADAPTER))

    def __init__(self, model: Annotated[str, Opt("hub id or folder of a transformers Llava checkpoint: the LoRA's base, "
                                                 "LLaVA-1.5-13B in the paper", check=path_option)] = DEFAULT_LLAVA,
                 *, adapter: Annotated[str | None, Opt("folder of the released LoRA in LLaVA's layout (adapter_config.json, "
                                                       "adapter_model, non_lora_trainables.bin); None: the base model alone, "
                                                       "not EXPERT", check=path_option)] = DEFAULT_ADAPTER,
                 explain: Annotated[bool, Opt("ask the released second turn and put its parsed fluency / relevance / "
                                              "descriptiveness in the details' `explanation`")] = False,
                 max_new_tokens: MaxNewTokens = MAX_NEW_TOKENS, cache: AnswerCache = True, device: Device = None,
                 dtype: WeightDtype = None):
        super().__init__(model, adapter, explain, max_new_tokens, cache, device, dtype)

    def instruction(self, candidate: str, references: Sequence[str] | None) -> str:
        return EXPERT_PROMPT.format(caption=candidate)

    def explanation_prompt(self, candidate: str) -> str:
        return EXPERT_EXPLANATION_PROMPT.format(caption=candidate)

    def answer_text(self, generation: Generation) -> str:
        return generation.text_without_special.strip()

    def explanation(self, generation: Generation) -> Any:
        return parse_explanation(generation.text_without_special.strip())
