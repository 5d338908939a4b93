"""Textual scene graphs as the FACTUAL parser writes them (Li et al., Findings of ACL 2023; pip ``FactualSceneGraph``),
and that parser batched over many sentences.

The parser (``lizhuang144/flan-t5-base-VG-factual-sg``, a Flan-T5) reads ``"Generate Scene Graph: " + sentence`` and
writes facts ``( subject , relation , object )``; a relation ``is`` gives an attribute, or a quantity when the object
is a number; a lone ``( entity )`` is an entity without facts. The package's ``SceneGraphParser.parse`` decodes with
beam search (5 beams, at most 128 tokens, ``early_stopping``), drops the prompt and special tokens, spaces out the
brackets and commas, drops a fact cut off at the end, removes repeated facts and **sorts the facts as strings**
(:func:`clean_graph_text`), then reads the entities and relations (:func:`graph_from_text`).

Inputs are cut to 64 T5 pieces, ``</s>`` included. From FactualSceneGraph 0.7.0 on, the limit of each batch (at most
32 sentences of one ``parse`` call) is instead the length *without* ``</s>`` of its longest prompt, so that prompt
and any as long lose their last piece, usually the full stop (:func:`input_limits`, ``release="0.7"``).

:class:`SceneGraphParser` runs every sentence of a call in length-sorted batches on one device; the inputs of each
sentence are those the package's per-caption call would give it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

PROMPT = "Generate Scene Graph: "
MAX_INPUT_PIECES = 64
MAX_OUTPUT_LENGTH = 128
NUM_BEAMS = 5
#: Sentences per ``parse`` batch in the package (its ``batch_size`` default): the 0.7 input limit is per such batch.
PACKAGE_BATCH = 32
#: FactualSceneGraph releases whose input truncation differs (see the module docstring).
RELEASES = ("0.5", "0.7")
#: Sentences per generation batch on each device type (each is searched with 5 beams).
GPU_BATCH_SIZE, CPU_BATCH_SIZE = 256, 16


@dataclass
class Entity:
    """One entity of a scene graph: its head words, a quantity (digits) and its attributes in order of appearance."""

    head: str
    quantity: str = ""
    attributes: list[str] = field(default_factory=list)


@dataclass
class SceneGraph:
    """Entities (unique heads, in order of appearance) and relations ``(subject index, relation, object index)``."""

    entities: list[Entity] = field(default_factory=list)
    relations: list[tuple[int, str, int]] = field(default_factory=list)

    def entity_index(self, head: str) -> int:
        """The index of the entity ``head``, added at the end when new."""
        for index, entity in enumerate(self.entities):
            if entity.head == head:
                return index
        self.entities.append(Entity(head))
        return len(self.entities) - 1


def space_out_symbols(text: str) -> str:
    """Brackets and commas as separate words, single spaces.

    >>> space_out_symbols("(man,ride, horse)  ")
    '( man , ride , horse )'
    """
    for symbol in "(),":
        text = text.replace(symbol, f" {symbol} ")
    return " ".join(text.split())


def clean_graph_text(text: str) -> str:
    """FACTUAL's clean-up of a spaced-out graph: a last fact without its ``)`` is dropped (the first field of a lone
    unfinished fact is kept), repeated facts are removed and the facts are sorted as strings.

    >>> clean_graph_text("( sky , is , blue ) , ( dog , on , grass ) , ( sky , is , blue ) , ( cat , is")
    '( dog , on , grass ) , ( sky , is , blue )'
    >>> clean_graph_text("( dog , on"), clean_graph_text("")
    ('( dog )', '')
    """
    facts = text.strip().split(") ,")
    if not text.endswith(")"):
        facts = facts[:-1] if len(facts) > 1 else [facts[0].split(",")[0]]
    kept = {fact.strip().strip("()").strip() for fact in facts}
    return " , ".join(f"( {fact} )" for fact in sorted(kept - {""}))


def graph_text_from_decoded(decoded: str) -> str:
    """The cleaned graph text of one decoded parser output (the prompt removed where the model repeats it).

    >>> graph_text_from_decoded("Generate Scene Graph: (dog,is,brown), (dog, on,grass)")
    '( dog , is , brown ) , ( dog , on , grass )'
    """
    return clean_graph_text(space_out_symbols(decoded.replace(PROMPT.strip(), "").strip()))


def graph_from_text(text: str) -> SceneGraph:
    """The entities and relations of a cleaned graph text, as FACTUAL's ``graph_string_to_object`` reads them: a
    fact of three fields adds its subject (and object), an ``is`` fact sets a quantity (digits) or adds an attribute;
    a fact of another length is skipped, unless it is the only one, when its first field is an entity.

    >>> graph = graph_from_text("( dog , is , 2 ) , ( dog , is , brown ) , ( dog , on , grass ) , ( bad )")
    >>> [(e.head, e.quantity, e.attributes) for e in graph.entities], graph.relations
    ([('dog', '2', ['brown']), ('grass', '', [])], [(0, 'on', 1)])
    >>> [e.head for e in graph_from_text("( bicycle )").entities], [e.head for e in graph_from_text("").entities]
    (['bicycle'], [''])
    """
    graph = SceneGraph()
    facts = text.strip().split(") ,")
    for fact in facts:
        fields = [part.strip() for part in fact.strip().strip("()").split(",")]
        if len(fields) != 3:
            if len(facts) == 1:
                graph.entity_index(fields[0])
            continue
        subject, relation, obj = fields
        subject_index = graph.entity_index(subject)
        entity = graph.entities[subject_index]
        if relation != "is":
            graph.relations.append((subject_index, relation, graph.entity_index(obj)))
        elif obj.isdigit():
            entity.quantity = obj
        elif obj not in entity.attributes:
            entity.attributes.append(obj)
    return graph


def input_limits(piece_counts: Sequence[int], release: str) -> list[int]:
    """The truncation length (``</s>`` included) of each prompt of one ``parse`` call, from the prompts' piece counts
    without ``</s>``: 64 for every prompt with FactualSceneGraph 0.5; with 0.7, per batch of 32, the longest count in
    the batch (at most 64), which leaves that prompt one piece short.

    >>> input_limits([10, 12, 70], "0.5"), input_limits([10, 12, 9], "0.7"), input_limits([10, 70], "0.7")
    ([64, 64, 64], [12, 12, 12], [64, 64])
    >>> input_limits([5] * 32 + [3], "0.7")[-2:]
    [5, 3]
    """
    if release == "0.5":
        return [MAX_INPUT_PIECES] * len(piece_counts)
    limits: list[int] = []
    for start in range(0, len(piece_counts), PACKAGE_BATCH):
        batch = piece_counts[start:start + PACKAGE_BATCH]
        limits += [min(MAX_INPUT_PIECES, max(batch))] * len(batch)
    return limits


def load_parser_model(name_or_path: str, device: Any) -> Any:
    """The parser's T5, through capeval's T5 loader (the model cache, fp32, eval mode): the one place CAPTURE
    loads a T5."""
    from ..backbones.t5 import load_t5

    return load_t5(name_or_path, device=device)


class SceneGraphParser:
    """FACTUAL's parser over many sentences at once (see the module docstring).

    ``release``: whose input truncation to reproduce (:data:`RELEASES`); ``device``: ``None`` = CUDA when available.
    :meth:`parse` takes the sentences of each text (what the package's ``parse`` is called with, one text per call)
    and returns each sentence's cleaned graph text.
    """

    def __init__(self, name_or_path: str, *, release: str = "0.5", device: Any = None):
        from ..models import load_hf_tokenizer, resolve_device

        self.name_or_path = str(name_or_path)
        self.release = release
        self.device = resolve_device(device)
        self.model = load_parser_model(self.name_or_path, self.device)
        self.tokenizer = load_hf_tokenizer(self.name_or_path)

    def input_ids(self, sentences_per_text: Sequence[Sequence[str]]) -> list[list[list[int]]]:
        """Per text, per sentence: the encoder input ids the package's call for that text would build."""
        result: list[list[list[int]]] = []
        for sentences in sentences_per_text:
            prompts = [PROMPT + sentence.strip() for sentence in sentences]
            if not prompts:
                result.append([])
                continue
            counts = [len(ids) for ids in self.tokenizer(prompts, add_special_tokens=False)["input_ids"]]
            ids = []
            for prompt, limit in zip(prompts, input_limits(counts, self.release)):
                ids.append(self.tokenizer(prompt, max_length=limit, truncation=True)["input_ids"])
            result.append(ids)
        return result

    def parse(self, sentences_per_text: Sequence[Sequence[str]], *, batch_size: int | None = None,
              show_progress: bool | None = None) -> list[list[str]]:
        """Per text, per sentence: the cleaned graph text (each distinct input is generated once)."""
        import torch

        from ..backbones.common import device_batch_size, length_batches, pad_ids
        from ..progress import progress

        ids = self.input_ids(sentences_per_text)
        distinct = list(dict.fromkeys(tuple(row) for rows in ids for row in rows))
        batch_size = device_batch_size(batch_size, self.device, gpu=GPU_BATCH_SIZE, cpu=CPU_BATCH_SIZE)
        graphs: dict[tuple[int, ...], str] = {}
        pad = self.tokenizer.pad_token_id
        with torch.inference_mode():
            for batch in progress(length_batches(range(len(distinct)), batch_size, lambda i: len(distinct[i])),
                                  desc="CAPTURE scene graphs", show=show_progress):
                input_ids, mask = pad_ids([distinct[i] for i in batch], pad_id=pad)
                generated = self.model.generate(input_ids.to(self.device), attention_mask=mask.to(self.device), use_cache=True,
                                                decoder_start_token_id=pad, num_beams=NUM_BEAMS, max_length=MAX_OUTPUT_LENGTH,
                                                early_stopping=True, num_return_sequences=1)
                decoded = self.tokenizer.batch_decode(generated, skip_special_tokens=True, clean_up_tokenization_spaces=True)
                graphs.update({distinct[i]: graph_text_from_decoded(text) for i, text in zip(batch, decoded)})
        return [[graphs[tuple(row)] for row in rows] for rows in ids]
