"""G-VEval end to end against the tests' OpenAI-compatible server on 127.0.0.1: the answers' log-probabilities are a
tiny GPT-2's, teacher-forced."""

import json
import math

import pytest

import capeval
from capeval.judges import JudgeServerError
from capeval.samples import sample_image
from capeval.scoring.gveval import GvevalScorer, gveval_messages, image_payload, score_from_logprobs

PREDICTIONS = ["a dog runs", "a cat"]
REFERENCES = [["a dog running", "a brown dog"], ["a cat sleeps"]]


def score(server, images=None, **options):
    scorer = GvevalScorer(base_url=server.url, **options)
    return scorer.score(PREDICTIONS, REFERENCES, images=images), scorer


def test_the_score_is_the_released_arithmetic_on_the_server_s_log_probabilities(judge_server):
    scores, _ = score(judge_server)
    by_caption = {json.dumps(body["messages"]): answer for body, answer in judge_server.exchanges}
    assert len(by_caption) == 2  # one request per caption
    expected = [score_from_logprobs(by_caption[json.dumps(body["messages"])]["choices"][0]["logprobs"]["content"])
                for body in GvevalScorer(base_url=judge_server.url).bodies(PREDICTIONS, REFERENCES)]
    assert scores["g_veval"] == expected and all(0 <= value <= 100 for value in expected)
    assert judge_server.requests[0]["top_logprobs"] == 5 and judge_server.requests[0]["messages"][0]["role"] == "system"


def test_images_go_into_the_request(judge_server):
    image = str(sample_image())
    scores, _ = score(judge_server, images=[image, image], setting="combined", resolution="high")
    part = judge_server.requests[0]["messages"][0]["content"][1]["image_url"]
    assert part["detail"] == "high" and part["url"].startswith("data:image/jpeg;base64,/9j/")
    assert len(scores["g_veval"]) == 2


def test_ref_free_needs_images():
    with pytest.raises(ValueError, match="setting .ref-free. shows the judge the image: pass images="):
        capeval.evaluate(PREDICTIONS, None, metrics=["g_veval:base_url=http://127.0.0.1:9/v1,setting=ref-free"])


def test_a_backend_without_log_probabilities_is_refused_in_one_line(judge_server):
    judge_server.logprobs = False
    with pytest.raises(JudgeServerError) as error:
        score(judge_server)
    assert str(error.value) == (f"the judge gpt-4o-2024-05-13 at {judge_server.url} returned no log-probabilities: G-VEval reads the "
                                "score token's top log-probabilities; use a backend and model that return them "
                                "(`logprobs`, `top_logprobs`)")


def test_a_score_written_as_several_tokens_is_refused(judge_server):
    judge_server.answer = lambda body: "The final score is $ 8 5 $."
    with pytest.raises(ValueError) as error:
        score(judge_server)
    assert str(error.value) == ("the judge gpt-4o-2024-05-13 writes the score 85 as several tokens: G-VEval's released arithmetic "
                                "reads one token 0..100 (a tokenizer such as GPT-4o's); this judge cannot give it")


def test_an_unreadable_answer_is_asked_three_times_then_nan_and_named(judge_server):
    good = judge_server.answer
    judge_server.answer = lambda body: "no score here" if "a cat" in json.dumps(body) else good(body)
    with pytest.warns(UserWarning, match=r"no score could be read .* 1 caption\(s\) after 3 tries.*#1 'a cat'"):
        scores, _ = score(judge_server)
    assert math.isnan(scores["g_veval"][1]) and scores.corpus["g_veval"] == scores["g_veval"][0]
    assert len(judge_server.requests) == 4


def test_no_readable_answer_at_all_is_an_error(judge_server):
    judge_server.answer = lambda body: "no score here"
    with pytest.raises(ValueError, match="could not read a score from any"):
        score(judge_server)


OTHER_VALUES = [("model", "other-judge"), ("temperature", 0.2), ("seed", 3), ("max_tokens", 64), ("setting", "combined"),
                ("resolution", "high")]


@pytest.mark.parametrize("option, value", OTHER_VALUES, ids=[name for name, _ in OTHER_VALUES])
def test_every_option_changes_the_scores(judge_server, option, value):
    images = [str(sample_image())] * 2
    base, base_scorer = score(judge_server, images=images, setting="ref-free")
    other, other_scorer = score(judge_server, images=images, **{"setting": "ref-free", option: value})
    assert other["g_veval"] != base["g_veval"] and other_scorer.hashcode() != base_scorer.hashcode()


def test_revision_asks_again_and_changes_the_hashcode(judge_server):
    _, base = score(judge_server)
    _, other = score(judge_server, revision="weights-2")
    assert len(judge_server.requests) == 4 and other.hashcode() != base.hashcode()


def test_details_are_each_caption_s_own_answer(judge_server):
    scores, _ = score(judge_server)
    by_caption = {json.dumps(body["messages"]): answer for body, answer in judge_server.exchanges}
    answers = [by_caption[json.dumps(body["messages"])]
               for body in GvevalScorer(base_url=judge_server.url).bodies(PREDICTIONS, REFERENCES)]
    assert scores.details["reason"] == [answer["choices"][0]["message"]["content"] for answer in answers]
    assert all("The final score is $" in reason for reason in scores.details["reason"])
    assert scores.details["prompt_tokens"] == [answer["usage"]["prompt_tokens"] for answer in answers]
    assert scores.details["completion_tokens"] == [answer["usage"]["completion_tokens"] for answer in answers]
    assert scores.corpus["g_veval"] == pytest.approx(sum(scores["g_veval"]) / 2, abs=1e-12)


def test_missing_or_null_token_counts_count_zero(judge_server):
    judge_server.usage = lambda body: None if "a dog runs" in json.dumps(body) else {"prompt_tokens": 7, "completion_tokens": None}
    scores, _ = score(judge_server)
    assert scores.details["prompt_tokens"] == [0, 7] and scores.details["completion_tokens"] == [0, 0]
    judge_server.usage = lambda body: {"prompt_tokens": 0, "total_tokens": 5}
    scores, _ = score(judge_server, model="other-judge")
    assert scores.details["prompt_tokens"] == [0, 0] and scores.details["completion_tokens"] == [0, 0]


def test_the_warning_names_the_first_ten_unread_captions_cut_to_sixty_characters(judge_server):
    good = judge_server.answer
    judge_server.answer = lambda body: good(body) if "a dog runs" in json.dumps(body) else "no score here"
    predictions = ["a dog runs", "a long caption " + "x" * 60] + [f"caption {number}" for number in range(2, 12)]
    with pytest.warns(UserWarning) as record:
        scores = GvevalScorer(base_url=judge_server.url).score(predictions, [["a dog"]] * 12)
    assert record[0].filename == __file__  # the warning points at the line that called score
    assert str(record[0].message) == (
        "G-VEval: no score could be read from the judge's answers to 11 caption(s) after 3 tries: their values are NaN "
        "and the corpus mean leaves them out, as the released scorer drops them: "
        + "; ".join(f"#{index} {predictions[index][:60]!r}" for index in range(1, 11)))
    assert "#1 'a long caption " + "x" * 45 + "'; " in str(record[0].message)
    assert scores.corpus["g_veval"] == scores["g_veval"][0] and all(math.isnan(value) for value in scores["g_veval"][1:])


@pytest.mark.parametrize("message", ["absent", None])
def test_an_answer_without_message_text_has_an_empty_reason(judge_server, message):
    complete = judge_server.complete
    judge_server.complete = lambda body: {**complete(body), "choices": [
        {**{key: value for key, value in complete(body)["choices"][0].items() if key != "message"},
         **({} if message == "absent" else {"message": message})}]}
    scores, _ = score(judge_server)
    assert scores.details["reason"] == ["", ""] and all(0 <= value <= 100 for value in scores["g_veval"])


def test_the_request_carries_the_caption_s_own_references(judge_server):
    score(judge_server)
    sent = sorted(json.dumps(body["messages"]) for body in judge_server.requests)
    assert sent == sorted(json.dumps(gveval_messages(caption, refs, "ref-only")) for caption, refs in zip(PREDICTIONS, REFERENCES))


def test_ref_free_needs_no_references(judge_server):
    image = str(sample_image())
    scores = GvevalScorer(base_url=judge_server.url, setting="ref-free").score(PREDICTIONS, None, images=[image, image])
    assert len(scores["g_veval"]) == 2 and all(0 <= value <= 100 for value in scores["g_veval"])


def test_options_name_the_setting_and_the_resolution():
    options = GvevalScorer(base_url="http://127.0.0.1:9/v1", setting="combined", resolution="high").options()
    assert (options["setting"], options["resolution"]) == ("combined", "high")


def test_image_payload_keeps_file_bytes_as_jpeg_and_encodes_a_decoded_image_as_png(tmp_path):
    data = sample_image().read_bytes()
    assert image_payload({"bytes": data, "path": "elsewhere.jpg"}) == (data, "jpeg")
    assert image_payload({"bytes": None, "path": str(sample_image())}) == (data, "jpeg")
    assert image_payload(bytearray(data)) == (data, "jpeg") and image_payload(sample_image()) == (data, "jpeg")
    from PIL import Image

    encoded, kind = image_payload(Image.new("RGB", (3, 2), (200, 10, 10)))
    assert kind == "png" and encoded.startswith(b"\x89PNG")
    from io import BytesIO

    decoded = Image.open(BytesIO(encoded))
    assert decoded.size == (3, 2) and decoded.getpixel((0, 0)) == (200, 10, 10)
    wide = Image.new("RGB", (5000, 1))  # sent at full size: the judge's own `detail` decides the resolution
    assert Image.open(BytesIO(image_payload(wide)[0])).size == (5000, 1)


def test_a_decoded_image_is_sent_as_png(judge_server):
    from PIL import Image

    image = Image.new("RGB", (4, 4), (0, 128, 255))
    score(judge_server, images=[image, image], setting="ref-free")
    assert judge_server.requests[0]["messages"][0]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
