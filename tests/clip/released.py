"""An independent transcription of what jmhessel/clipscore's clipscore.py (and aimagelab/pacscore's pac_score.py)
compute, for checking capeval's port: OpenAI's SimpleTokenizer and ``clip.tokenize(truncate=True)``, torchvision's
Resize(224, BICUBIC) / CenterCrop(224) / RGB / ToTensor / Normalize on PIL images, OpenAI CLIP's ViT forward on an
OpenAI-layout state dict, and the scoring in numpy. Written from the released code's behaviour, not from capeval.

Also the variants the same code paths take: open_clip's ViT (GELU, and pacscore's mean = std = 0.5 for its OpenCLIP
ViT-L/14 checkpoint) and LongCLIP's (248 positions; ``encode_text`` adds ``positional_embedding`` on the first 20
positions and ``positional_embedding_res`` on the others, and ``longclip.tokenize`` cuts at 248)."""

from __future__ import annotations

import collections
import html
import json
import math

import ftfy
import numpy as np
import regex
import torch
import torch.nn.functional as F
from PIL import Image

SPLIT = regex.compile(r"""<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+""",
                      regex.IGNORECASE)


class SimpleTokenizer:
    """OpenAI CLIP's tokenizer over a folder's vocab.json (OpenAI order: the 256 byte symbols first) and merges.txt."""

    def __init__(self, folder: str):
        with open(f"{folder}/vocab.json", encoding="utf-8") as handle:
            self.encoder = json.load(handle)
        with open(f"{folder}/merges.txt", encoding="utf-8") as handle:
            lines = handle.read().split("\n")[1:]
        self.ranks = {tuple(line.split()): rank for rank, line in enumerate(line for line in lines if line)}
        self.byte_symbol = dict(enumerate(sorted(self.encoder, key=self.encoder.get)[:256]))

    def bpe(self, token: str) -> list[str]:
        if token in ("<|startoftext|>", "<|endoftext|>"):
            return [token]
        word = list(token[:-1]) + [token[-1] + "</w>"]
        while len(word) > 1:
            pairs = {(word[i], word[i + 1]) for i in range(len(word) - 1)}
            best = min(pairs, key=lambda pair: self.ranks.get(pair, math.inf))
            if best not in self.ranks:
                break
            merged, i = [], 0
            while i < len(word):
                if i < len(word) - 1 and (word[i], word[i + 1]) == best:
                    merged.append(word[i] + word[i + 1])
                    i += 2
                else:
                    merged.append(word[i])
                    i += 1
            word = merged
        return word

    def encode(self, text: str) -> list[int]:
        text = html.unescape(html.unescape(ftfy.fix_text(text))).strip()
        text = regex.sub(r"\s+", " ", text).strip().lower()
        ids = []
        for token in SPLIT.findall(text):
            symbols = token if token.startswith("<|") else "".join(self.byte_symbol[b] for b in token.encode("utf-8"))
            ids += [self.encoder[piece] for piece in self.bpe(symbols)]
        return ids

    def tokenize(self, texts: list[str], context_length: int = 77) -> torch.Tensor:
        """``clip.tokenize(texts, context_length, truncate=True)``: N × context_length, zero-padded."""
        start, end = self.encoder["<|startoftext|>"], self.encoder["<|endoftext|>"]
        result = torch.zeros(len(texts), context_length, dtype=torch.long)
        for row, text in enumerate(texts):
            ids = [start] + self.encode(text) + [end]
            if len(ids) > context_length:
                ids = ids[:context_length]
                ids[-1] = end
            result[row, : len(ids)] = torch.tensor(ids)
        return result


CLIP_MEAN, CLIP_STD = (0.48145466, 0.4578275, 0.40821073), (0.26862954, 0.26130258, 0.27577711)


def preprocess(image: Image.Image, mean=CLIP_MEAN, std=CLIP_STD) -> torch.Tensor:
    """torchvision's Compose([Resize(224, BICUBIC), CenterCrop(224), convert("RGB"), ToTensor(), Normalize(mean, std)])."""
    w, h = image.size
    short, long = (w, h) if w <= h else (h, w)
    new_short, new_long = 224, int(224 * long / short)
    new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    if (new_w, new_h) != (w, h):
        image = image.resize((new_w, new_h), Image.BICUBIC)
    top, left = int(round((new_h - 224) / 2.0)), int(round((new_w - 224) / 2.0))
    image = image.crop((left, top, left + 224, top + 224)).convert("RGB")
    tensor = torch.from_numpy(np.array(image, np.uint8, copy=True)).view(224, 224, 3).permute(2, 0, 1).float().div(255)
    mean, std = torch.tensor(mean), torch.tensor(std)
    return tensor.sub(mean[:, None, None]).div(std[:, None, None])


def _layer_norm(x, state, name):
    return F.layer_norm(x, x.shape[-1:], state[f"{name}.weight"], state[f"{name}.bias"], eps=1e-5)


def _transformer(x, state, prefix, heads, causal, gelu=False):
    """OpenAI's Transformer on N × L × D (batch first; OpenAI runs L × N × D, the same arithmetic)."""
    layers = len({key.split(".")[len(prefix.split(".")) + 1] for key in state if key.startswith(prefix + "transformer.resblocks.")})
    n, length, width = x.shape
    mask = torch.full((length, length), float("-inf")).triu(1) if causal else None
    for i in range(layers):
        block = f"{prefix}transformer.resblocks.{i}."
        y = _layer_norm(x, state, block + "ln_1")
        q, k, v = (y @ state[block + "attn.in_proj_weight"].T + state[block + "attn.in_proj_bias"]).chunk(3, dim=-1)
        q, k, v = (t.reshape(n, length, heads, width // heads).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-1, -2) / math.sqrt(width // heads)
        if mask is not None:
            scores = scores + mask
        attended = (scores.softmax(-1) @ v).transpose(1, 2).reshape(n, length, width)
        x = x + attended @ state[block + "attn.out_proj.weight"].T + state[block + "attn.out_proj.bias"]
        y = _layer_norm(x, state, block + "ln_2") @ state[block + "mlp.c_fc.weight"].T + state[block + "mlp.c_fc.bias"]
        y = F.gelu(y) if gelu else y * torch.sigmoid(1.702 * y)  # open_clip's nn.GELU; OpenAI's QuickGELU
        x = x + y @ state[block + "mlp.c_proj.weight"].T + state[block + "mlp.c_proj.bias"]
    return x


@torch.no_grad()
def encode_text(state, ids: torch.Tensor, heads: int, gelu: bool = False) -> np.ndarray:
    positions = state["positional_embedding"]
    if "positional_embedding_res" in state:  # LongCLIP: x + pos * mask1 + pos_res * mask2
        first = (torch.arange(len(positions)) < 20).float()[:, None]
        positions = positions * first + state["positional_embedding_res"] * (1 - first)
    x = state["token_embedding.weight"][ids] + positions
    x = _layer_norm(_transformer(x, state, "", heads, causal=True, gelu=gelu), state, "ln_final")
    return (x[torch.arange(len(ids)), ids.argmax(dim=-1)] @ state["text_projection"]).numpy()


@torch.no_grad()
def encode_image(state, pixels: torch.Tensor, heads: int, gelu: bool = False) -> np.ndarray:
    conv = state["visual.conv1.weight"]
    x = F.conv2d(pixels, conv, stride=conv.shape[-1])
    x = x.reshape(x.shape[0], x.shape[1], -1).permute(0, 2, 1)
    cls = state["visual.class_embedding"].expand(x.shape[0], 1, -1)
    x = torch.cat([cls, x], dim=1) + state["visual.positional_embedding"]
    x = _transformer(_layer_norm(x, state, "visual.ln_pre"), state, "visual.", heads, causal=False, gelu=gelu)
    return (_layer_norm(x[:, 0], state, "visual.ln_post") @ state["visual.proj"]).numpy()


def clip_scores(state, tokenizer: SimpleTokenizer, images: list[Image.Image], candidates: list[str], references=None, *,
                heads: int, w: float = 2.5, prefix: str = "A photo depicts ", vision_heads: int | None = None,
                gelu: bool = False, mean=CLIP_MEAN, std=CLIP_STD, context_length: int = 77):
    """(per-caption CLIP-S, per-caption RefCLIP-S or None) as clipscore.py's main computes them."""
    image_feats = encode_image(state, torch.stack([preprocess(image, mean, std) for image in images]), vision_heads or heads, gelu)
    cand_feats = encode_text(state, tokenizer.tokenize([prefix + c for c in candidates], context_length), heads, gelu)
    image_feats = image_feats / np.sqrt(np.sum(image_feats ** 2, axis=1, keepdims=True))
    cand_feats = cand_feats / np.sqrt(np.sum(cand_feats ** 2, axis=1, keepdims=True))
    per = w * np.clip(np.sum(image_feats * cand_feats, axis=1), 0, None)
    if references is None:
        return per, None
    flat = [r for refs in references for r in refs]
    owner = [i for i, refs in enumerate(references) for _ in refs]
    ref_feats = encode_text(state, tokenizer.tokenize([prefix + r for r in flat], context_length), heads, gelu)
    ref_feats = ref_feats / np.sqrt(np.sum(ref_feats ** 2, axis=1, keepdims=True))
    by_candidate = collections.defaultdict(list)
    for feats, i in zip(ref_feats, owner):
        by_candidate[i].append(feats)
    text_text = [np.max(cand.dot(np.vstack(by_candidate[i]).transpose())) for i, cand in enumerate(cand_feats)]
    return per, 2 * per * text_text / (per + text_text)
