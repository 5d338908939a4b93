"""ViLBERTScore end to end against an independent re-statement of the released scoring path.

The reference below uses none of capeval's ViLBERT or scoring code. It builds the inputs as the released
``dataset.py`` does (``encode`` without special tokens, ``[CLS] … [SEP]`` padded or cut to 37, the mean-feature
global region and the 5-d pixel-area location), runs vilbert-multi-task's ``BertModel`` forward pass by hand
from the state dict (one example, one head at a time, TF-style LayerNorm, erf GELU, (1 − m)·(−10000) masks, the
layer order of ``BertEncoder`` with ``output_all_encoded_layers=True``), and scores with the released
``utils.bert_score`` arithmetic: ``sim[:, 1:-1, 1:-1]`` times the outer product of the 37-long input masks cut
with ``[1:]``, maxima over the zeroed matrix, weights ``mask[1:] / sum``, then the mean of P, R and F over the
references. For the checkpoint without task tokens (where the released scorer crashes) the masks are the word
pieces only, cut with ``[1:-1]`` to match ``sim[1:-1, 1:-1]`` of the 37 outputs: capeval's stated assumption.
"""

import math

import numpy as np
import pytest
import torch

from capeval.vision.regions import as_region_features

MAX_LEN = 37
TASK = 7
TOLERANCE = 1e-5

PREDICTIONS = [
    "Two men riding horses in a dirt arena.",
    "a horse",
    # 51 word pieces with the uncased vocabulary: cut to the window, losing [SEP] and (through sim[1:-1]) the last kept piece.
    " ".join(["a man on a brown horse chasing a small calf across the dusty ground while people watch"] * 3),
]
REFERENCES = [
    ["two people ride horses", "Men on horseback in an arena.", "a horse", "cowboys at a rodeo", "two riders and their horses"],
    ["a horse", "an animal in a field", "two men riding horses in a dirt arena", "horses", "a brown horse standing"],
    ["a rodeo", "a cowboy chasing a calf on a horse", "two horses", "men riding horses", "a dusty arena"],
]


def plain_text_input(caption, tokenizer):
    """dataset.py: pieces of the lower-cased caption, [CLS] … [SEP], right-padded with 0 or cut to 37."""
    ids = [tokenizer.cls_token_id] + tokenizer.convert_tokens_to_ids(tokenizer.tokenize(caption.lower())) + [tokenizer.sep_token_id]
    mask = [1] * len(ids)
    if len(ids) < MAX_LEN:
        mask += [0] * (MAX_LEN - len(ids))
        ids += [0] * (MAX_LEN - len(ids))
    return torch.tensor(ids[:MAX_LEN]), torch.tensor(mask[:MAX_LEN])


def plain_image_input(item):
    """dataset.py img_preprocess: global mean region first, 5-d location with the area taken in pixels."""
    feature = torch.from_numpy(np.asarray(item["features"]))
    global_feature = torch.sum(feature, dim=0) / feature.shape[0]
    features = torch.cat([global_feature.view(1, -1), feature], dim=0).float()
    boxes = np.asarray(item["bbox"], dtype=np.float32)
    width, height = float(item["image_width"]), float(item["image_height"])
    location = np.zeros((boxes.shape[0], 5), dtype=np.float32)
    location[:, :4] = boxes
    location[:, 4] = (location[:, 3] - location[:, 1]) * (location[:, 2] - location[:, 0]) / (width * height)
    location[:, 0] /= width
    location[:, 1] /= height
    location[:, 2] /= width
    location[:, 3] /= height
    location = np.concatenate([np.array([[0, 0, 1, 1, 1]], dtype=np.float32), location], axis=0)
    return features, torch.from_numpy(location)


class PlainVilbert:
    """vilbert-multi-task's BertModel text stream, written out from the state dict for a single example."""

    def __init__(self, state, config):
        self.w = {key[len("bert."):]: value for key, value in state.items() if key.startswith("bert.")}
        self.c = config
        self.task_tokens = "embeddings.task_embeddings.weight" in self.w

    def linear(self, x, name):
        return x @ self.w[name + ".weight"].t() + self.w[name + ".bias"]

    def layer_norm(self, x, name):
        u = x.mean(-1, keepdim=True)
        s = (x - u).pow(2).mean(-1, keepdim=True)
        return self.w[name + ".weight"] * ((x - u) / torch.sqrt(s + 1e-12)) + self.w[name + ".bias"]

    @staticmethod
    def gelu(x):
        return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))

    def heads(self, queries, keys, values, additive_mask, num_heads):
        size = queries.shape[1] // num_heads
        outputs = []
        for h in range(num_heads):
            q, k, v = (t[:, h * size : (h + 1) * size] for t in (queries, keys, values))
            scores = q @ k.t() / math.sqrt(size) + additive_mask
            outputs.append(torch.softmax(scores, dim=-1) @ v)
        return torch.cat(outputs, dim=1)

    def bert_layer(self, x, additive_mask, name, num_heads):
        context = self.heads(self.linear(x, f"{name}.attention.self.query"), self.linear(x, f"{name}.attention.self.key"),
                             self.linear(x, f"{name}.attention.self.value"), additive_mask, num_heads)
        attention = self.layer_norm(self.linear(context, f"{name}.attention.output.dense") + x, f"{name}.attention.output.LayerNorm")
        hidden = self.gelu(self.linear(attention, f"{name}.intermediate.dense"))
        return self.layer_norm(self.linear(hidden, f"{name}.output.dense") + attention, f"{name}.output.LayerNorm")

    def text_outputs(self, ids, mask, features, locations):
        """The 6 text-stream outputs (one after each co-attention block), as output_all_encoded_layers=True lists them."""
        c = self.c
        embedded = (self.w["embeddings.word_embeddings.weight"][ids] + self.w["embeddings.position_embeddings.weight"][torch.arange(len(ids))]
                    + self.w["embeddings.token_type_embeddings.weight"][torch.zeros_like(ids)])
        if self.task_tokens:
            embedded = torch.cat([embedded[:1], self.w["embeddings.task_embeddings.weight"][TASK].view(1, -1), embedded[1:]], dim=0)
            mask = torch.cat([torch.ones(1, dtype=mask.dtype), mask])
        text = self.layer_norm(embedded, "embeddings.LayerNorm")
        text_mask = (1.0 - mask.float()) * -10000.0
        image = self.layer_norm(self.linear(features, "v_embeddings.image_embeddings") + self.linear(locations, "v_embeddings.image_location_embeddings"),
                                "v_embeddings.LayerNorm")
        image_mask = (1.0 - torch.ones(len(features))) * -10000.0
        outputs, t_start, v_start = [], 0, 0
        for block, (v_end, t_end) in enumerate(zip(c["v_biattention_id"], c["t_biattention_id"])):
            for idx in range(t_start, t_end):
                text = self.bert_layer(text, text_mask, f"encoder.layer.{idx}", c["num_attention_heads"])
            for idx in range(v_start, v_end):
                image = self.bert_layer(image, image_mask, f"encoder.v_layer.{idx}", c["v_num_attention_heads"])
            name = f"encoder.c_layer.{block}"
            bi = c["bi_num_attention_heads"]
            # BertBiAttention: context 1 = text queries over image keys/values, context 2 = image queries over text.
            context1 = self.heads(self.linear(text, f"{name}.biattention.query2"), self.linear(image, f"{name}.biattention.key1"),
                                  self.linear(image, f"{name}.biattention.value1"), image_mask, bi)
            context2 = self.heads(self.linear(image, f"{name}.biattention.query1"), self.linear(text, f"{name}.biattention.key2"),
                                  self.linear(text, f"{name}.biattention.value2"), text_mask, bi)
            # BertBiOutput(bi_output2, image, bi_output1, text)
            image_attended = self.layer_norm(self.linear(context2, f"{name}.biOutput.dense1") + image, f"{name}.biOutput.LayerNorm1")
            text_attended = self.layer_norm(self.linear(context1, f"{name}.biOutput.dense2") + text, f"{name}.biOutput.LayerNorm2")
            image = self.layer_norm(self.linear(self.gelu(self.linear(image_attended, f"{name}.v_intermediate.dense")), f"{name}.v_output.dense")
                                    + image_attended, f"{name}.v_output.LayerNorm")
            text = self.layer_norm(self.linear(self.gelu(self.linear(text_attended, f"{name}.t_intermediate.dense")), f"{name}.t_output.dense")
                                   + text_attended, f"{name}.t_output.LayerNorm")
            outputs.append(text)
            t_start, v_start = t_end, v_end
        return outputs


def released_bert_score(ref_embedding, hyp_embedding, ref_masks, hyp_masks, cut):
    """utils.bert_score on a batch of one: rows = hypothesis (candidate), masked entries 0 inside the max.
    ``cut`` is how the masks are aligned with ``sim[:, 1:-1, 1:-1]``: ``[1:]`` as released, ``[1:-1]`` without task token."""
    ref_embedding = ref_embedding / torch.norm(ref_embedding, dim=-1).unsqueeze(-1)
    hyp_embedding = hyp_embedding / torch.norm(hyp_embedding, dim=-1).unsqueeze(-1)
    sim = torch.bmm(hyp_embedding, ref_embedding.transpose(1, 2))[:, 1:-1, 1:-1]
    masks = torch.bmm(hyp_masks.unsqueeze(2).float(), ref_masks.unsqueeze(1).float())[:, cut, cut]
    sim = sim * masks.view_as(sim)
    word_precision = sim.max(dim=2)[0]
    word_recall = sim.max(dim=1)[0]
    hyp_scale = hyp_masks[:, cut].float() / hyp_masks[:, cut].float().sum(dim=1, keepdim=True)
    ref_scale = ref_masks[:, cut].float() / ref_masks[:, cut].float().sum(dim=1, keepdim=True)
    p = (word_precision * hyp_scale).sum(dim=1)
    r = (word_recall * ref_scale).sum(dim=1)
    return p.item(), r.item(), (2 * p * r / (p + r)).item()


def scoring_mask(ids, mask, task_tokens, tokenizer):
    """The released input mask with task tokens; the word pieces only (no [CLS], no [SEP]) without."""
    if task_tokens:
        return mask
    return mask * (ids != tokenizer.cls_token_id) * (ids != tokenizer.sep_token_id)


@pytest.fixture(scope="module")
def reference_setup(tiny_checkpoints, tiny_vilbert_config_path, vilbert_tokenizer_dir, sample_vilbert_features, random_vilbert_features):
    import json

    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(vilbert_tokenizer_dir)
    with open(tiny_vilbert_config_path) as handle:
        config = json.load(handle)
    images = [sample_vilbert_features, random_vilbert_features, sample_vilbert_features]
    return tokenizer, config, images


def reference_scores(kind, setup, checkpoints):
    """P, R, F per prediction at each of the 6 layers, one forward pass per (caption, image) as released."""
    tokenizer, config, images = setup
    model = PlainVilbert(torch.load(checkpoints[kind], weights_only=True), config)
    cut = slice(1, None) if model.task_tokens else slice(1, -1)
    per_layer = {layer: [] for layer in range(1, 7)}
    with torch.no_grad():
        for prediction, refs, image in zip(PREDICTIONS, REFERENCES, images):
            features, locations = plain_image_input(image)
            encoded = []
            for caption in [prediction, *refs]:
                ids, mask = plain_text_input(caption, tokenizer)
                encoded.append((model.text_outputs(ids, mask, features, locations), scoring_mask(ids, mask, model.task_tokens, tokenizer)))
            (candidate, candidate_mask), references = encoded[0], encoded[1:]
            for layer in per_layer:
                values = [released_bert_score(ref[layer - 1][None], candidate[layer - 1][None], ref_mask[None], candidate_mask[None], cut)
                          for ref, ref_mask in references]
                per_layer[layer].append(np.mean(values, axis=0))
    return per_layer


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["multi_task", "pretrained"])
def test_code_mode_matches_the_released_scoring_path_at_every_layer(kind, reference_setup, tiny_checkpoints, tiny_vilbert):
    expected = reference_scores(kind, reference_setup, tiny_checkpoints)
    _, _, images = reference_setup
    worst = 0.0
    for layer, values in expected.items():
        scores = tiny_vilbert(kind, layer=layer).score(PREDICTIONS, REFERENCES, region_features=images)
        got = np.array([scores["precision"], scores["recall"], scores["f1"]]).T
        worst = max(worst, float(np.abs(got - np.array(values)).max()))
        assert np.abs(got - np.array(values)).max() <= TOLERANCE, f"layer {layer}"
    # the layers differ, so the comparison above would have caught a wrong layer
    assert not np.allclose(expected[1], expected[6], atol=1e-3)
    print(f"{kind}: max |diff| over layers 1-6 = {worst:.1e}")


@pytest.mark.parametrize("kind", ["multi_task", "pretrained"])
def test_port_hidden_states_match_the_plain_forward_pass(kind, reference_setup, tiny_checkpoints, tiny_vilbert_config_path):
    from capeval.backbones.vilbert import load_vilbert

    tokenizer, config, images = reference_setup
    plain = PlainVilbert(torch.load(tiny_checkpoints[kind], weights_only=True), config)
    port = load_vilbert(tiny_checkpoints[kind], config=tiny_vilbert_config_path, device="cpu")
    for caption, image in zip(PREDICTIONS, images):
        ids, mask = plain_text_input(caption, tokenizer)
        features, locations = plain_image_input(image)
        with torch.no_grad():
            expected = plain.text_outputs(ids, mask, features, locations)
        # the port takes the released 37-id window, padding included, and a region mask
        regions = as_region_features(image)
        port_features, port_locations = (torch.from_numpy(a)[None] for a in regions.vilbert_inputs())
        with torch.inference_mode():
            got = port(ids[None], mask[None], port_features, port_locations, torch.ones(1, len(port_features[0])),
                       task_id=TASK if plain.task_tokens else None)
        assert len(got) == len(expected) == 6
        for block, (a, b) in enumerate(zip(got, expected), start=1):
            assert (a[0] - b).abs().max() <= TOLERANCE, f"block {block}"
