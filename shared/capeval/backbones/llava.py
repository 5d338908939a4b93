"""LLaVA-1.5 as the released judges (FLEUR, EXPERT) run it, in transformers' ``LlavaForConditionalGeneration``.

What the released code fixes and this module reproduces:

* the conversation (LLaVA's ``conversation.py``: ``llava_v1`` for FLEUR, ``llava_v0`` for EXPERT), rendered by
  :func:`render_prompt` with ``"<image>\\n"`` before the first user message;
* the prompt's token ids as LLaVA's ``tokenizer_image_token`` builds them: the text on each side of ``<image>``
  tokenized on its own (the beginning-of-sequence token only at the start), the image's positions between them;
* LLaVA's ``pad`` preprocessing (:func:`pad_to_square`): the image centred on a square of the image processor's mean
  colour (``int(255·mean)``: (122, 116, 104) for CLIP), then the processor's resize and crop;
* greedy decoding with the per-step scores, stopped at the conversation's separator or the end token.

Several answers are generated in one batch, the prompts padded on the left (the attention mask keeps each row what it
is alone; float rounding aside, a batch gives each row's one-at-a-time answer). Rows of a batch that show the same
image (a benchmark's several captions per image) share their prompt up to the caption: that prefix, image included,
runs once per image and its key/value cache is copied to the rows, which run only their own ends
(:meth:`LlavaJudge.generate`).
"""

from __future__ import annotations

import json
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import torch
from PIL import Image

from ..models import ModelUnavailableError, cached, hub_snapshot, load_pretrained, local_config
from ..settings import offline

#: OpenAI CLIP's normalisation mean (LLaVA-1.5's image processor), whose ``int(255·x)`` is the ``pad`` colour.
OPENAI_CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
IMAGE_TOKEN = "<image>"
#: LLaVA's system message of both conversations (``conv_llava_v0``, ``conv_llava_v1``).
SYSTEM = ("A chat between a curious human and an artificial intelligence assistant. "
          "The assistant gives helpful, detailed, and polite answers to the human's questions.")


@dataclass(frozen=True)
class Template:
    """A LLaVA conversation: the two roles and the separators after a user and an assistant message (one separator
    for both in ``SeparatorStyle.SINGLE``)."""

    roles: tuple[str, str]
    separators: tuple[str, str]

    @property
    def stop(self) -> str:
        """The string that ends an answer (the released ``KeywordsStoppingCriteria``'s keyword)."""
        return self.separators[1]


TEMPLATES = {"llava_v1": Template(("USER", "ASSISTANT"), (" ", "</s>")),
             "llava_v0": Template(("Human", "Assistant"), ("###", "###"))}


def render_prompt(template: str, turns: Sequence[tuple[str, str | None]]) -> str:
    """The prompt LLaVA's ``Conversation.get_prompt`` renders for ``turns`` (user message, assistant answer or
    ``None`` for the one to generate), the image placeholder before the first user message.

    >>> render_prompt("llava_v1", [("Rate it.", None)]).endswith("questions. USER: <image>\\nRate it. ASSISTANT:")
    True
    >>> print(render_prompt("llava_v0", [("Rate it.", "0.5</s>"), ("Why?", None)])[-84:])
    questions.###Human: <image>
    Rate it.###Assistant: 0.5</s>###Human: Why?###Assistant:
    """
    conversation = TEMPLATES[template]
    text = SYSTEM + conversation.separators[0]
    for number, (user, answer) in enumerate(turns):
        for side, message in enumerate((f"{IMAGE_TOKEN}\n{user}" if number == 0 else user, answer)):
            role = conversation.roles[side]
            text += f"{role}: {message}{conversation.separators[side]}" if message else f"{role}:"
    return text


def pad_to_square(image: Image.Image, mean: Sequence[float] = OPENAI_CLIP_MEAN) -> Image.Image:
    """LLaVA's ``expand2square``: ``image`` pasted on a square of its longer side, filled with ``int(255·mean)``,
    at offset ``(side − shorter) // 2`` across the shorter side; a square image as it is.

    >>> padded = pad_to_square(Image.new("RGB", (4, 2), (0, 0, 0)))
    >>> padded.size, padded.getpixel((0, 0)), padded.getpixel((0, 1))
    ((4, 4), (122, 116, 104), (0, 0, 0))
    """
    width, height = image.size
    if width == height:
        return image
    side = max(width, height)
    square = Image.new(image.mode, (side, side), tuple(int(x * 255) for x in mean))
    square.paste(image, (0, (side - height) // 2) if width > height else ((side - width) // 2, 0))
    return square


@dataclass
class Generation:
    """One greedy answer: its token ids, the logits each step chose them from (``[steps, vocab]``, float32) and its
    text decoded with and without the special tokens."""

    ids: list[int]
    logits: torch.Tensor
    text: str
    text_without_special: str


class LlavaJudge:
    """A transformers Llava checkpoint with its tokenizer and image processor, generating greedy answers in batches."""

    def __init__(self, model: Any, tokenizer: Any, image_processor: Any, device: torch.device):
        self.model, self.tokenizer, self.image_processor, self.device = model, tokenizer, image_processor, device
        config = model.config
        vision = config.vision_config
        patches = (vision.image_size // vision.patch_size) ** 2
        #: Positions one image fills: its patch features (plus the class token with strategy "full").
        self.image_positions = patches + (1 if config.vision_feature_select_strategy == "full" else 0)
        self.image_token_id = config.image_token_id
        from transformers import DynamicCache
        from transformers.cache_utils import DynamicLayer

        #: Whether a prefix's cache can be copied to several rows and continued behind holes in the attention mask: a
        #: cache of full-attention layers (a sliding window would count the holes as positions).
        self.shares_prefixes = all(type(layer) is DynamicLayer for layer in DynamicCache(config=config).layers)
        #: The forward's and generate's name of the cache argument (``past_key_values`` before transformers 5.x's rename).
        self.cache_argument = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"

    @property
    def digit_ids(self) -> list[int]:
        """The ids of '0'..'9' as the released code takes them: the last id of ``tokenizer.encode(str(d))``."""
        return [self.tokenizer.encode(str(digit))[-1] for digit in range(10)]

    def prompt_ids(self, prompt: str) -> list[int]:
        """LLaVA's ``tokenizer_image_token``: each side of ``<image>`` tokenized alone (the second without its
        beginning-of-sequence token), the image's positions between them."""
        chunks = [self.tokenizer(chunk).input_ids for chunk in prompt.split(IMAGE_TOKEN)]
        bos = self.tokenizer.bos_token_id
        ids = list(chunks[0])
        for chunk in chunks[1:]:
            ids += [self.image_token_id] * self.image_positions + list(chunk[1:] if chunk and chunk[0] == bos else chunk)
        return ids

    def pixels(self, images: Sequence[Image.Image]) -> torch.Tensor:
        """LLaVA's ``process_images`` with ``image_aspect_ratio="pad"``."""
        mean = self.image_processor.image_mean
        return self.image_processor([pad_to_square(image, mean) for image in images], return_tensors="pt")["pixel_values"]

    def left_padded(self, rows: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        """``rows`` padded on the left to one width, and their attention mask (0 over the padding)."""
        width = max(map(len, rows))
        ids = torch.tensor([[self.pad_id] * (width - len(row)) + list(row) for row in rows], device=self.device)
        mask = torch.tensor([[0] * (width - len(row)) + [1] * len(row) for row in rows], device=self.device)
        return ids, mask

    @property
    def pad_id(self) -> int:
        return self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0

    def shared_prefixes(self, rows: Sequence[Sequence[int]], pixels: torch.Tensor) -> tuple[list[int], list[int]] | None:
        """The rows' groups (rows whose images have equal pixels) as each row's group number, and each group's prefix
        length: the longest common prefix of its rows' ids, short of its shortest row's last id (every row keeps
        one id to run). ``None`` where sharing does not apply: no two rows show one image, a group's prefix ends
        before its image's positions do (the rows' ends run without pixels), or the model's cache cannot be shared
        (:attr:`shares_prefixes`).

        >>> from types import SimpleNamespace
        >>> judge = SimpleNamespace(shares_prefixes=True, image_token_id=9)
        >>> pixels = torch.tensor([[0.0], [1.0], [0.0]])
        >>> LlavaJudge.shared_prefixes(judge, [[1, 9, 5, 6, 7], [1, 9, 5], [1, 9, 5, 6, 8, 2]], pixels)
        ([0, 1, 0], [4, 2])
        >>> LlavaJudge.shared_prefixes(judge, [[1, 9, 5], [1, 9, 5]], torch.tensor([[0.0], [0.0]]))  # one id kept to run
        ([0, 0], [2])
        >>> LlavaJudge.shared_prefixes(judge, [[1, 9, 5], [1, 9, 6]], torch.tensor([[0.0], [1.0]])) is None  # two images
        True
        >>> LlavaJudge.shared_prefixes(judge, [[1, 9, 5], [2, 9, 5]], torch.tensor([[0.0], [0.0]])) is None  # differ before the image
        True
        """
        if not self.shares_prefixes:
            return None
        group_of: list[int] = []
        firsts: list[int] = []
        for index in range(len(rows)):
            group = next((g for g, first in enumerate(firsts) if torch.equal(pixels[first], pixels[index])), len(firsts))
            if group == len(firsts):
                firsts.append(index)
            group_of.append(group)
        if len(firsts) == len(rows):
            return None
        lengths = []
        for group, first in enumerate(firsts):
            members = [rows[i] for i, g in enumerate(group_of) if g == group]
            length = min(map(len, members)) - 1
            length = next((k for k in range(length) if any(row[k] != members[0][k] for row in members)), length)
            image_end = max((k for k, token in enumerate(members[0]) if token == self.image_token_id), default=-1) + 1
            if length < image_end:
                return None
            lengths.append(length)
        return group_of, lengths

    def generate(self, prompts: Sequence[str], images: Sequence[Image.Image], *, stop: str, max_new_tokens: int,
                 dtype: torch.dtype) -> list[Generation]:
        """Greedy answers to ``prompts`` (one image each) in one batch, each cut after its end token or ``stop``.

        Where rows share an image and a prompt prefix (:meth:`shared_prefixes`), each group's prefix runs once (the
        groups' prefixes in one left-padded batch) and its cache is copied to the group's rows; generation goes on
        from there with every row's end left-padded behind its prefix, the holes masked, so that each row's
        positions are those of its prompt alone (generate numbers positions by the mask's cumulative sum). Elsewhere
        the whole prompts run, left-padded, as one batch."""
        rows = [self.prompt_ids(prompt) for prompt in prompts]
        pixels = self.pixels(images)
        groups = self.shared_prefixes(rows, pixels)
        pixels = pixels.to(self.device, dtype)
        with torch.inference_mode():
            if groups is None:
                input_ids, mask = self.left_padded(rows)
                inputs = {"pixel_values": pixels}
            else:
                input_ids, mask, cache = self.prefilled(rows, pixels, *groups)
                inputs = {self.cache_argument: cache}
            out = self.model.generate(input_ids=input_ids, attention_mask=mask, **inputs, do_sample=False, num_beams=1,
                                      max_new_tokens=max_new_tokens, output_scores=True, return_dict_in_generate=True,
                                      stop_strings=[stop], tokenizer=self.tokenizer, pad_token_id=self.pad_id)
        steps = torch.stack(out.scores, 1).float().cpu()
        generated = out.sequences[:, input_ids.shape[1]:].cpu()
        return [self._answer(generated[row].tolist(), steps[row], stop) for row in range(len(rows))]

    def prefilled(self, rows: Sequence[Sequence[int]], pixels: torch.Tensor, group_of: Sequence[int],
                  lengths: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor, Any]:
        """Each group's prefix run once (with its image), its cache copied to the group's rows: the rows' ids and
        attention mask (prefix, then the row's own end, each left-padded) and the cache holding the prefixes."""
        from transformers import DynamicCache

        firsts = [group_of.index(group) for group in range(len(lengths))]
        prefix_ids, prefix_mask = self.left_padded([rows[first][:length] for first, length in zip(firsts, lengths)])
        cache = DynamicCache(config=self.model.config)
        self.model(input_ids=prefix_ids, attention_mask=prefix_mask, position_ids=(prefix_mask.cumsum(-1) - 1).clamp(min=0),
                   pixel_values=pixels[firsts], use_cache=True, logits_to_keep=1, **{self.cache_argument: cache})
        select = torch.tensor(group_of, device=self.device)
        cache.batch_select_indices(select)
        end_ids, end_mask = self.left_padded([row[lengths[group]:] for row, group in zip(rows, group_of)])
        return torch.cat([prefix_ids[select], end_ids], 1), torch.cat([prefix_mask[select], end_mask], 1), cache

    def _answer(self, ids: list[int], logits: torch.Tensor, stop: str) -> Generation:
        """One row of a batch cut where its generation ended: at its end token or once its text holds ``stop``."""
        eos = self.model.generation_config.eos_token_id
        ends = set(eos if isinstance(eos, list) else [eos])
        length = len(ids)
        for step, token in enumerate(ids):
            if token in ends or stop in self.tokenizer.decode(ids[: step + 1]):
                length = step + 1
                break
        kept = ids[:length]
        return Generation(kept, logits[:length], self.tokenizer.decode(kept),
                          self.tokenizer.decode(kept, skip_special_tokens=True))


def _refuse_unloadable(name_or_path: str) -> None:
    """One line for checkpoints this backend cannot load: 4-bit quantized weights, LLaVA's original layout."""
    config = local_config(name_or_path) or {}
    quantization = config.get("quantization_config") or {}
    if quantization.get("load_in_4bit") or quantization.get("bits") == 4 or quantization.get("quant_method") in ("gptq", "awq"):
        raise ValueError(f"{name_or_path} holds 4-bit quantized weights ({quantization.get('quant_method', 'bitsandbytes')}), which "
                         "the in-process LLaVA backend does not load: pass the full-precision checkpoint "
                         "(e.g. llava-hf/llava-1.5-13b-hf) or serve the quantized one behind an OpenAI-compatible server")
    if "LlavaLlamaForCausalLM" in config.get("architectures", []):
        raise ValueError(f"{name_or_path} is in LLaVA's original layout (LlavaLlamaForCausalLM): pass its transformers "
                         "conversion (llava-hf/llava-1.5-13b-hf for liuhaotian/llava-v1.5-13b)")


def lora_target(name: str) -> str:
    """A module of LLaVA's own layout (as a LoRA adapter or ``non_lora_trainables.bin`` names it, prefixes such as
    ``base_model.model.`` removed) under transformers' Llava names.

    >>> lora_target("model.layers.3.self_attn.q_proj"), lora_target("model.mm_projector.2")
    ('model.language_model.layers.3.self_attn.q_proj', 'model.multi_modal_projector.linear_2')
    >>> lora_target("model.vision_tower.vision_tower.vision_model.post_layernorm"), lora_target("lm_head")
    ('model.vision_tower.vision_model.post_layernorm', 'lm_head')
    """
    for old, new in (("model.mm_projector.0", "model.multi_modal_projector.linear_1"),
                     ("model.mm_projector.2", "model.multi_modal_projector.linear_2"),
                     ("model.vision_tower.vision_tower.", "model.vision_tower."),
                     ("model.", "model.language_model.")):
        if name.startswith(old):
            return new + name[len(old):]
    return name


def _released_name(key: str) -> str:
    """A key of LLaVA's saved adapter or trainables without the PEFT wrappers (the released loader strips them)."""
    for prefix in ("base_model.model.", "base_model."):
        if key.startswith(prefix):
            key = key[len(prefix):]
            break
    return key[len("model."):] if key.startswith("model.model.") else key


def _state_file(folder: Path, stem: str) -> dict[str, torch.Tensor] | None:
    if (folder / f"{stem}.safetensors").is_file():
        from safetensors.torch import load_file

        return load_file(str(folder / f"{stem}.safetensors"))
    if (folder / f"{stem}.bin").is_file():
        return torch.load(folder / f"{stem}.bin", map_location="cpu", weights_only=True)
    return None


def _downloaded(repo_id: str) -> Path:
    """A hub repository's files: what ``capeval download`` put in capeval's cache (:func:`~capeval.models.hub_snapshot`),
    else HuggingFace's cache (downloaded unless offline)."""
    from huggingface_hub import snapshot_download

    if (snapshot := hub_snapshot(repo_id)) is not None:
        return snapshot
    try:
        return Path(snapshot_download(repo_id, local_files_only=offline()))
    except Exception as error:  # huggingface_hub's errors for a missing or unreachable repository
        raise ModelUnavailableError(f"The LoRA adapter {repo_id!r} is not available locally"
                                    + (" and offline mode forbids downloading it" if offline() else " and could not be downloaded")
                                    + f" ({type(error).__name__}); pass the folder holding it") from None


def merge_llava_lora(model: Any, adapter: str | Path) -> None:
    """Load LLaVA's released LoRA folder into ``model`` as LLaVA's ``load_pretrained_model`` does: first the
    ``non_lora_trainables`` tensors, then every adapted weight ``W + (alpha / r) · B A``, module names mapped to
    transformers' Llava (:func:`lora_target`). A name the model lacks raises, naming it."""
    folder = Path(adapter) if Path(adapter).is_dir() else _downloaded(str(adapter))
    config = json.loads((folder / "adapter_config.json").read_text())
    scale = config["lora_alpha"] / config["r"]
    modules = dict(model.named_modules())
    parameters = dict(model.named_parameters())
    with torch.no_grad():
        for key, value in (_state_file(folder, "non_lora_trainables") or {}).items():
            target = lora_target(_released_name(key))
            if target not in parameters:
                raise ValueError(f"non_lora_trainables: {key} maps to {target}, which the Llava model lacks")
            parameters[target].copy_(value.to(parameters[target].dtype))
        weights = _state_file(folder, "adapter_model")
        if weights is None:
            raise ValueError(f"{folder} holds no adapter_model.safetensors or adapter_model.bin")
        for key in [k for k in weights if ".lora_A." in k]:
            name = _released_name(key.split(".lora_A.")[0])
            target = lora_target(name)
            if target not in modules:
                raise ValueError(f"LoRA adapter: {name} maps to {target}, which the Llava model lacks")
            down, up = weights[key].float(), weights[key.replace(".lora_A.", ".lora_B.")].float()
            weight = modules[target].weight
            weight.copy_((weight.float() + scale * up @ down).to(weight.dtype))


def load_llava(name_or_path: str, *, adapter: str | None, device: torch.device, dtype: str) -> LlavaJudge:
    """A Llava judge from a transformers checkpoint (hub id or folder), with LLaVA's LoRA ``adapter`` merged,
    cached process-wide."""

    def build() -> LlavaJudge:
        from transformers import AutoImageProcessor, AutoTokenizer, LlavaForConditionalGeneration

        _refuse_unloadable(name_or_path)
        model = load_pretrained(LlavaForConditionalGeneration, name_or_path, what="LLaVA model", dtype=getattr(torch, dtype))
        if adapter is not None:
            merge_llava_lora(model, adapter)
        tokenizer = load_pretrained(AutoTokenizer, name_or_path, what="LLaVA tokenizer")
        image_processor = load_pretrained(AutoImageProcessor, name_or_path, what="LLaVA image processor")
        return LlavaJudge(model.to(device).eval(), tokenizer, image_processor, device)

    return cached(("llava", str(name_or_path), str(adapter), str(device), dtype), build)


#: The scripted judge's greedy path after the prompt's final ':' (:func:`save_scripted_llava`): " 0.7" and the end token.
SCRIPTED_ANSWER = (":", " ", "0", ".", "7", "</s>")


def save_scripted_llava(folder: str | Path, *, seed: int = 0, context: float = 1.0, text_sizes: dict[str, int] | None = None,
                        vision_sizes: dict[str, int] | None = None, dtype: str = "float32", device: str = "cpu") -> str:
    """Save a tiny Llava (CLIP vision tower of 4 patches, one-layer Llama over a character vocabulary) whose greedy
    answer to any prompt ending in ':' is " 0.7" then the end token, loadable like a user's checkpoint (model,
    tokenizer, image processor). Its next-token logits are a table of the current character (one-hot embeddings
    read back by the output layer), plus what attention brings from the caption and the image, scaled by
    ``context``: so the digits' probabilities, and the smoothed score, depend on the caption and the image while
    the answer stays the same. A stand-in for LLaVA-1.5-13B in tests and examples.

    ``text_sizes`` and ``vision_sizes`` replace sizes of the Llama's and the CLIP tower's configs (e.g. LLaVA-1.5-13B's,
    for timings: the layers after the first compute at their full cost and add nothing, so the answer stays
    scripted); the model is built in ``dtype`` on ``device``.

    >>> import tempfile
    >>> from transformers import LlavaForConditionalGeneration
    >>> LlavaForConditionalGeneration.from_pretrained(save_scripted_llava(tempfile.mkdtemp())).config.image_token_id
    4
    """
    import string

    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import (CLIPImageProcessor, CLIPVisionConfig, LlamaConfig, LlavaConfig, LlavaForConditionalGeneration,
                              PreTrainedTokenizerFast)

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    specials = ["<unk>", "<s>", "</s>", "<pad>", IMAGE_TOKEN]
    vocab = {token: i for i, token in enumerate(dict.fromkeys(specials + list(string.printable)))}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    core.decoder = decoders.Fuse()
    core.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", vocab["<s>"])])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                        pad_token="<pad>", additional_special_tokens=[IMAGE_TOKEN], model_max_length=4096)
    tokenizer.save_pretrained(folder)
    text: dict[str, Any] = {"vocab_size": len(vocab), "hidden_size": 128, "intermediate_size": 64, "num_hidden_layers": 1,
                            "num_attention_heads": 4, "num_key_value_heads": 4, **(text_sizes or {})}
    vision: dict[str, Any] = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                              "image_size": 28, "patch_size": 14, "projection_dim": 16, **(vision_sizes or {})}
    side = vision["image_size"]
    CLIPImageProcessor(size={"shortest_edge": side}, crop_size={"height": side, "width": side}, image_mean=list(OPENAI_CLIP_MEAN),
                       image_std=[0.26862954, 0.26130258, 0.27577711]).save_pretrained(folder)
    width = text["hidden_size"]
    torch.manual_seed(seed)
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(**vision),
        text_config=LlamaConfig(**text, max_position_embeddings=4096, bos_token_id=vocab["<s>"], eos_token_id=vocab["</s>"],
                                pad_token_id=vocab["<pad>"]),
        image_token_index=vocab[IMAGE_TOKEN], image_seq_length=(side // vision["patch_size"]) ** 2)
    default_dtype = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, dtype))
    try:
        with torch.device(device):
            model = LlavaForConditionalGeneration(config).eval()
    finally:
        torch.set_default_dtype(default_dtype)
    table = torch.full((len(vocab), len(vocab)), -4.0)
    digits = [vocab[d] for d in "0123456789"]
    table[:, digits] = 2.0  # digits close behind every step's choice, so their probabilities carry the context
    for current, following in zip(SCRIPTED_ANSWER, SCRIPTED_ANSWER[1:]):
        table[vocab[current], vocab[following]] = 6.0
    with torch.no_grad():
        language = model.model.language_model
        language.embed_tokens.weight.copy_(torch.eye(text["vocab_size"], width))
        layer = language.layers[0]
        # What attention adds grows with the width (random projections of a one-hot): scaled to weigh against the
        # one-hot as at the default width 128.
        layer.self_attn.o_proj.weight.mul_(context * 8 * (128 / width) ** 1.5)
        layer.mlp.down_proj.weight.zero_()
        for later in language.layers[1:]:
            later.self_attn.o_proj.weight.zero_()
            later.mlp.down_proj.weight.zero_()
        # After the final RMSNorm a one-hot embedding is sqrt(width) times the one-hot: read back the table's row.
        readback = torch.zeros(text["vocab_size"], width)
        readback[: len(vocab), : len(vocab)] = table.T
        model.lm_head.weight.copy_(readback / width ** 0.5)
    model.save_pretrained(folder)
    return str(folder)
