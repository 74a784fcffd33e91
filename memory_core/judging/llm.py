"""cognee's LLM gateway, as FALSIFY calls it (the only place that does).

:func:`structured_output` calls ``LLMGateway.acreate_structured_output`` under a
timeout and turns every failure into :class:`~memory_core.core.errors.JudgeError`
with the reason the endpoint last gave (see :class:`_Witness`).

Every call is metered (:class:`Usage`): calls, and the prompt/completion tokens
and cost the endpoint reported, read from litellm's response (``usage``; the cost
from ``usage.cost`` when the endpoint reports one, else litellm's
``response_cost`` from its price map; ``None`` when neither is known). One
command's calls share a :class:`Meter` (:func:`command_meter`), which enforces
``FALSIFY_LLM_BUDGET_USD``: a call that would pass the budget is not made
(:class:`BudgetExceeded`, exit 5).

The timeout and the budget come from the settings (:mod:`memory_core.store.settings`): those
of the stores a command works on where the caller passes them, else the process's.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import warnings
from dataclasses import dataclass
from typing import Optional

from pydantic import BaseModel

from memory_core.core.errors import JudgeError
from memory_core.store import settings as config
from memory_core.store.streams import silenced


# A call cut by FALSIFY_JUDGE_TIMEOUT before litellm awaited its inner coroutine makes Python
# warn "coroutine ... was never awaited" when that coroutine is collected: noise on stderr
# after the JudgeError has said what happened.
warnings.filterwarnings(
    "ignore", message=r"coroutine '.*(acompletion|completion).*' was never awaited", category=RuntimeWarning
)


def llm_timeout(settings: config.Settings) -> float:
    """Seconds one LLM call may take (``FALSIFY_JUDGE_TIMEOUT``)."""
    return settings.judge_timeout


@dataclass
class Usage:
    """What LLM calls cost: ``None`` for a figure some call did not report."""

    calls: int = 0
    prompt_tokens: Optional[int] = 0
    completion_tokens: Optional[int] = 0
    cost_usd: Optional[float] = 0.0

    def add(self, other: "Usage") -> None:
        self.calls += other.calls
        self.prompt_tokens = (
            None
            if self.prompt_tokens is None or other.prompt_tokens is None
            else self.prompt_tokens + other.prompt_tokens
        )
        self.completion_tokens = (
            None
            if self.completion_tokens is None or other.completion_tokens is None
            else self.completion_tokens + other.completion_tokens
        )
        self.cost_usd = (
            None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd
        )

    def as_dict(self) -> dict:
        cost = None if self.cost_usd is None else round(self.cost_usd, 8)
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": cost,
        }


def usage_of(result) -> Usage:
    """One call's usage from the raw litellm response cognee attaches to the parsed
    model (``_raw_response``)."""
    raw = getattr(result, "_raw_response", None)
    usage = getattr(raw, "usage", None)

    def count(name):
        value = getattr(usage, name, None)
        return int(value) if isinstance(value, (int, float)) else None

    cost = getattr(usage, "cost", None)  # reported by the endpoint (OpenRouter-style usage.cost)
    if not isinstance(cost, (int, float)):
        hidden = getattr(raw, "_hidden_params", None) or {}
        cost = hidden.get("response_cost") if isinstance(hidden, dict) else None  # litellm's price map
    if not isinstance(cost, (int, float)):
        cost = None
    return Usage(1, count("prompt_tokens"), count("completion_tokens"), None if cost is None else float(cost))


def budget_usd(settings: config.Settings) -> Optional[float]:
    """One command's LLM budget in US dollars (``FALSIFY_LLM_BUDGET_USD``; None: no cap). A
    value that is not a number of dollars, 0 or more, is a SettingsError (exit 2) when the
    settings are read."""
    return settings.llm_budget_usd


class BudgetExceeded(JudgeError):
    """The next LLM call would pass ``FALSIFY_LLM_BUDGET_USD``: it was not made."""


class Meter:
    """One command's LLM spend and its budget. Before each call, :meth:`reserve`
    estimates the call's cost as the most expensive call so far in this command
    (while none has finished yet, calls go one at a time) and refuses the call when
    spent + in-flight estimates + this estimate would pass the budget."""

    def __init__(self, budget: Optional[float] = None):
        self.budget = budget
        self.usage = Usage()
        self.reserved = 0.0
        self.inflight = 0
        self.max_call_cost = 0.0
        self._cond: Optional[asyncio.Condition] = None

    def _condition(self) -> asyncio.Condition:
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    def _spent(self) -> str:
        cost = "unknown" if self.usage.cost_usd is None else f"${self.usage.cost_usd:.6g}"
        return f"{cost} spent in {self.usage.calls} LLM call{'s' if self.usage.calls != 1 else ''}"

    async def reserve(self) -> float:
        if self.budget is None:
            return 0.0
        cond = self._condition()
        async with cond:
            await cond.wait_for(lambda: self.usage.calls > 0 or self.inflight == 0)
            if self.usage.calls and self.usage.cost_usd is None:
                raise BudgetExceeded(
                    f"the LLM endpoint reported no cost for a call, so FALSIFY_LLM_BUDGET_USD="
                    f"{self.budget:g} cannot be enforced; stopped before the next call ({self._spent()})"
                )
            estimate = self.max_call_cost
            spent = self.usage.cost_usd or 0.0
            if self.budget <= 0 or spent + self.reserved + estimate > self.budget:
                raise BudgetExceeded(
                    f"the next LLM call (about ${estimate:.6g}) would pass FALSIFY_LLM_BUDGET_USD="
                    f"{self.budget:g} ({self._spent()}); stopped before it"
                )
            self.reserved += estimate
            self.inflight += 1
            return estimate

    async def settle(self, estimate: float, usage: Optional[Usage]) -> None:
        if usage is not None:
            self.usage.add(usage)
            if usage.cost_usd is not None:
                self.max_call_cost = max(self.max_call_cost, usage.cost_usd)
        if self.budget is None:
            return
        cond = self._condition()
        async with cond:
            self.reserved -= estimate
            self.inflight -= 1
            cond.notify_all()


_meter: contextvars.ContextVar[Optional[Meter]] = contextvars.ContextVar("falsify_llm_meter", default=None)


@contextlib.contextmanager
def command_meter(settings: config.Settings):
    """The meter of one command (a ``revise``, a ``revise --file``): reentrant, so a
    command made of others shares one budget: ``FALSIFY_LLM_BUDGET_USD`` of ``settings``
    (the command's stores')."""
    current = _meter.get()
    if current is not None:
        yield current
        return
    meter = Meter(budget_usd(settings))
    token = _meter.set(meter)
    try:
        yield meter
    finally:
        _meter.reset(token)


_process: Optional[Meter] = None


def current_meter(settings: config.Settings) -> Meter:
    """The active command's meter; outside any :func:`command_meter`, the process's own, with
    the budget of ``settings`` (the first caller's: a CLI process runs one command, so its
    budget is the command's; a long-lived process should wrap each command in
    :func:`command_meter`)."""
    global _process
    meter = _meter.get()
    if meter is None:
        if _process is None:
            _process = Meter(budget_usd(settings))
        meter = _process
    return meter


def model_name(settings: config.Settings) -> str:
    """The configured LLM model (part of the verdict cache's key); cognee's, else ``LLM_MODEL``
    of ``settings``."""
    try:
        from cognee.infrastructure.llm import get_llm_config

        return str(get_llm_config().llm_model or "")
    except Exception:
        return settings.llm_model


class _Witness:
    """What the LLM endpoint answered during one judge call, seen through
    litellm's callback hooks. cognee retries failed structured-output calls
    (tenacity, a 240 s floor), so a judge that fails on every attempt only ever
    surfaces as our timeout; the witness lets the error say *why* (HTTP status,
    malformed verdict) instead of just "no answer"."""

    def __init__(self, model: Optional[type[BaseModel]] = None):
        self.attempts = 0
        self.last_problem: Optional[str] = None
        self.model = model

    def failure(self, error) -> None:
        self.attempts += 1
        status = getattr(error, "status_code", None)
        text = " ".join(str(error).split())[:300]
        self.last_problem = (f"HTTP {status} " if status else "") + f"{type(error).__name__}: {text}"

    def success(self, response) -> None:
        self.attempts += 1
        try:
            content = response.choices[0].message.content or ""
        except (AttributeError, IndexError, TypeError):
            self.last_problem = "malformed response: no message content"
            return
        try:
            if self.model is not None:
                self.model.model_validate_json(_strip_fence(content))
        except Exception as error:
            self.last_problem = f"malformed verdict ({_validation_summary(error)}): {content[:120]!r}"
        else:
            self.last_problem = None


# The witness of the call running in this task (calls may run concurrently); litellm's
# async logging tasks are created from the calling task, so they see its context.
_witness: contextvars.ContextVar[Optional[_Witness]] = contextvars.ContextVar(
    "falsify_llm_witness", default=None
)
_inflight: set = set()  # every witness of a call in flight (fallback when the context did not travel)
_callback_installed = False


def _current_witness() -> Optional[_Witness]:
    witness = _witness.get()
    if witness is None and len(_inflight) == 1:
        witness = next(iter(_inflight))
    return witness


def _strip_fence(text: str) -> str:
    text = text.strip()
    if text.startswith("```") and text.endswith("```"):
        text = text[3:-3]
        if text.startswith("json"):
            text = text[4:]
    return text.strip()


def _install_callback() -> None:
    """Register (once per process) a litellm logger that reports to the current witness."""
    global _callback_installed
    if _callback_installed:
        return
    import litellm
    from litellm.integrations.custom_logger import CustomLogger

    class _JudgeWitnessLogger(CustomLogger):
        async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):
            witness = _current_witness()
            if witness is not None:
                witness.success(response_obj)

        async def async_log_failure_event(self, kwargs, response_obj, start_time, end_time):
            witness = _current_witness()
            if witness is not None:
                witness.failure(kwargs.get("exception") or response_obj)

    litellm.callbacks = list(litellm.callbacks or []) + [_JudgeWitnessLogger()]
    _callback_installed = True


def _quiet_litellm() -> None:
    """litellm prints a "Give Feedback / Get Help" banner and a debugging hint to standard output on
    every failed call (a transient HTTP 500 the retry then gets past included), unless told not to."""
    import litellm  # the real package, or its stand-in, which hands the setting on when it loads it

    litellm.suppress_debug_info = True


def _validation_summary(error: BaseException) -> str:
    errors = getattr(error, "errors", None)
    try:
        items = errors() if callable(errors) else []
    except Exception:
        items = []
    if items:
        parts = []
        for item in items[:3]:
            where = ".".join(str(x) for x in item.get("loc", ())) or "verdict"
            parts.append(f"{where}: {item.get('msg', '?')}")
        return "; ".join(parts)
    return " ".join(str(error).split())[:200]


def _describe(error: BaseException) -> str:
    status = getattr(error, "status_code", None)
    text = " ".join(str(error).split())[:300]
    return (f"HTTP {status} " if status else "") + f"{type(error).__name__}: {text}"


async def structured_output(
    text_input: str,
    system_prompt: str,
    response_model: type[BaseModel],
    what: str = "the LLM judge",
    noun: str = "verdict",
    usage: Optional[Usage] = None,
    timeout: Optional[float] = None,
    *,
    settings: config.Settings,
):
    """One structured call through cognee's gateway, bounded by ``timeout`` seconds (default
    FALSIFY_JUDGE_TIMEOUT of ``settings``, the stores' the call is made for).
    Raises :class:`JudgeError` naming what the endpoint last said, or
    :class:`BudgetExceeded` (before calling) when the command's budget would be passed.
    The call's usage is added to ``usage`` (if given) and to the command's meter."""
    from cognee.infrastructure.llm.LLMGateway import LLMGateway

    try:
        _install_callback()
    except Exception:  # diagnostics only: never a reason to fail the call
        pass
    _quiet_litellm()
    timeout = llm_timeout(settings) if timeout is None else timeout
    meter = current_meter(settings)
    estimate = await meter.reserve()
    witness = _Witness(response_model)
    token = _witness.set(witness)
    _inflight.add(witness)
    spent: Optional[Usage] = None
    try:
        # what litellm prints on a failed attempt goes nowhere: standard output is a command's
        # --json (or a host's own), and the error, if the call fails, is the JudgeError below
        with silenced():
            result = await asyncio.wait_for(
                LLMGateway.acreate_structured_output(
                    text_input=text_input, system_prompt=system_prompt, response_model=response_model
                ),
                timeout=timeout,
            )
        spent = usage_of(result)
    except asyncio.TimeoutError:
        why = (
            f"; last answer from the endpoint: {witness.last_problem}"
            if witness.last_problem
            else ("" if witness.attempts else "; no answer arrived from the endpoint")
        )
        raise JudgeError(
            f"{what} gave no usable {noun} within {timeout:g}s (FALSIFY_JUDGE_TIMEOUT){why}"
        ) from None
    except Exception as error:  # provider errors arrive as many types
        raise JudgeError(f"{what} failed: {_describe(error)}") from None
    finally:
        _inflight.discard(witness)
        _witness.reset(token)
        if (
            spent is None and witness.attempts
        ):  # a failed call that reached the endpoint: counted, cost unknown
            spent = Usage(1, None, None, None)
        await meter.settle(estimate, spent)
        if usage is not None and spent is not None:
            usage.add(spent)
    if not isinstance(result, response_model):
        try:
            result = response_model.model_validate(result)
        except Exception as error:
            raise JudgeError(f"{what} returned a malformed {noun}: {_validation_summary(error)}") from None
    return result
