"""cognee's LLM gateway, as FALSIFY calls it (the only place that does).

:func:`structured_output` calls ``LLMGateway.acreate_structured_output`` under a
timeout and turns every failure into :class:`~memory_core.core.errors.JudgeError`
with the reason the endpoint last gave (see :class:`_Witness`).
"""

from __future__ import annotations

import asyncio
import os
from typing import Optional

from pydantic import BaseModel

from memory_core.core.errors import JudgeError


def llm_timeout() -> float:
    try:
        return float(os.environ.get("FALSIFY_JUDGE_TIMEOUT", "60"))
    except ValueError:
        return 60.0


class _Witness:
    """What the LLM endpoint answered during one judge call, seen through
    litellm's callback hooks. cognee retries failed structured-output calls
    (tenacity, a 240 s floor), so a judge that fails on every attempt only ever
    surfaces as our timeout; the witness lets the error say *why* (HTTP status,
    malformed verdict) instead of just "no answer"."""

    def __init__(self):
        self.attempts = 0
        self.last_problem: Optional[str] = None

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
            if _current_model is not None:
                _current_model.model_validate_json(_strip_fence(content))
        except Exception as error:
            self.last_problem = f"malformed verdict ({_validation_summary(error)}): {content[:120]!r}"
        else:
            self.last_problem = None


_current_witness: Optional[_Witness] = None
_callback_installed = False


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
            if _current_witness is not None:
                _current_witness.success(response_obj)

        async def async_log_failure_event(self, kwargs, response_obj, start_time, end_time):
            if _current_witness is not None:
                _current_witness.failure(kwargs.get("exception") or response_obj)

    litellm.callbacks = list(litellm.callbacks or []) + [_JudgeWitnessLogger()]
    _callback_installed = True


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




_current_model: Optional[type] = None


async def structured_output(text_input: str, system_prompt: str, response_model: type[BaseModel], what: str = "the LLM judge",
                            noun: str = "verdict"):
    """One structured call through cognee's gateway, bounded by FALSIFY_JUDGE_TIMEOUT.
    Raises :class:`JudgeError` naming what the endpoint last said."""
    global _current_witness, _current_model
    from cognee.infrastructure.llm.LLMGateway import LLMGateway

    try:
        _install_callback()
    except Exception:  # diagnostics only: never a reason to fail the call
        pass
    witness = _current_witness = _Witness()
    _current_model = response_model
    timeout = llm_timeout()
    try:
        result = await asyncio.wait_for(
            LLMGateway.acreate_structured_output(text_input=text_input, system_prompt=system_prompt,
                                                 response_model=response_model),
            timeout=timeout)
    except asyncio.TimeoutError:
        why = f"; last answer from the endpoint: {witness.last_problem}" if witness.last_problem else \
            ("" if witness.attempts else "; no answer arrived from the endpoint")
        raise JudgeError(f"{what} gave no usable {noun} within {timeout:g}s (FALSIFY_JUDGE_TIMEOUT){why}") from None
    except Exception as error:  # provider errors arrive as many types
        raise JudgeError(f"{what} failed: {_describe(error)}") from None
    finally:
        _current_witness = None
        _current_model = None
    if not isinstance(result, response_model):
        try:
            result = response_model.model_validate(result)
        except Exception as error:
            raise JudgeError(f"{what} returned a malformed {noun}: {_validation_summary(error)}") from None
    return result
