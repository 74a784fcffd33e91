"""One redaction for every line FALSIFY prints or logs: secrets never leave the process.

:func:`redact` masks, in any text (an error line, a tool error, a log record, a crash
log, an API answer):

* the password of a ``scheme://user:password@host`` URL, also one holding ``@`` or ``:``
  (everything up to the last ``@`` before the host);
* the credentials of an ``Authorization`` value (``Bearer``, ``Basic``, ``Token`` or none)
  and a lone ``Bearer``/``Basic`` credential, as an endpoint may echo them;
* the value after ``--token``/``--secret``/``--password`` and after ``password=``,
  ``api_key=``, ``token=``, ``"api_key": "..."`` and the like;
* strings shaped like provider keys (``sk-...``, ``sk_live_...``, ``AKIA...``, ``ghp_...``,
  ``xoxb-...``, ``AIza...``, ``hf_...``, JSON web tokens);
* every secret value registered with :func:`register` (the settings register the values of
  ``LLM_API_KEY``, ``FALSIFY_TOKEN``, a database URL's password, ... when they are read; 8
  characters or more), and any run of 8 or more of its characters an endpoint echoes on its
  own (a key's prefix or suffix).

Pure: no I/O; the registered values are what the store layer hands in.
"""

from __future__ import annotations

import re
from typing import Iterable

MASK = "***"
_SECRETS: set[str] = set()
_SHORTEST = 8  # a registered value shorter than this is not masked on its own (it would mask too much)
_PIECE = 8  # an echoed piece of a registered secret this long or longer is masked too

# the password runs to the last "@" that a host follows (a password may hold "@", ":" and even "/"),
# never into the next URL of the line
_URL_PASSWORD = re.compile(
    r"(?i)\b([a-z][a-z0-9+.\-]*://[^:/?#@\s'\"]*):(?:(?!://)[^\s'\"])*@(?=[^@\s/?#'\"]*(?:[/?#'\"\s]|$))"
)
_FLAG = re.compile(r"(--(?:token|secret|password|api-key)(?:=|\s+))(?:'[^']*'|\"[^\"]*\"|\S+)")
_AUTHORIZATION = re.compile(
    r"(?i)(\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|digest|apikey|key)\s+)?)"
    r"[^\s\"',;]+"
)
_SCHEME = re.compile(r"(?i)(\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=\-]{6,}")
_ASSIGNED = re.compile(
    r"(?i)((?<![A-Za-z0-9_])[\"']?(?:password|passwd|pwd|secret|client[_-]?secret|api[_-]?key|apikey|x-api-key|"
    r"access[_-]?token|refresh[_-]?token|auth[_-]?token|token|secret[_-]?key|access[_-]?key|private[_-]?key)"
    r"[\"']?\s*[:=]\s*)(\"[^\"]*\"|'[^']*'|[^\s,;&\"')}\]]+)"
)
_KEY_SHAPED = re.compile(
    r"(?<![A-Za-z0-9])(?:sk-[A-Za-z0-9_\-]{6,}|sk_(?:live|test)_[A-Za-z0-9]{6,}|rk_(?:live|test)_[A-Za-z0-9]{6,}"
    r"|AKIA[0-9A-Z]{12,}|gh[pousr]_[A-Za-z0-9]{10,}|github_pat_[A-Za-z0-9_]{10,}|xox[abposr]-[A-Za-z0-9\-]{8,}"
    r"|AIza[0-9A-Za-z_\-]{20,}|hf_[A-Za-z0-9]{10,}|gsk_[A-Za-z0-9]{10,}|r8_[A-Za-z0-9]{10,}"
    r"|eyJ[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-]{6,}\.[A-Za-z0-9_\-]*)"
)
_TOKEN = re.compile(r"[A-Za-z0-9._~+/=\-]{%d,}" % _PIECE)


def register(values: Iterable[str]) -> None:
    """Remember secret values (a key, a token, a URL's password) to mask wherever they appear.
    Of a URL only its password is a secret (its host and database name are not, and the URL
    pattern masks the password in any URL printed); a value shorter than 8 characters is too
    common a string to mask on its own (a password "falsify" would hide the word everywhere)."""
    for value in values:
        if not isinstance(value, str):
            continue
        value = value.strip()
        if "://" in value:  # a URL: its password only
            userinfo = value.split("://", 1)[1].rsplit("@", 1)[0] if "@" in value else ""
            value = userinfo.partition(":")[2]
        if len(value) >= _SHORTEST:
            _SECRETS.add(value)


def redact(text: str) -> str:
    """``text`` with every secret it may carry masked (see the module's docstring)."""
    if not isinstance(text, str) or not text:
        return text
    for secret in sorted(_SECRETS, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, MASK)
    text = _URL_PASSWORD.sub(rf"\1:{MASK}@", text)
    text = _FLAG.sub(rf"\1{MASK}", text)
    text = _AUTHORIZATION.sub(rf"\1{MASK}", text)
    text = _SCHEME.sub(rf"\1{MASK}", text)
    text = _ASSIGNED.sub(lambda m: m.group(1) + _quoted_mask(m.group(2)), text)
    text = _KEY_SHAPED.sub(MASK, text)
    if _SECRETS:
        text = _TOKEN.sub(_echoed_piece, text)
    return text


def _quoted_mask(value: str) -> str:
    if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) >= 2:
        return value[0] + MASK + value[0]
    return MASK


def _echoed_piece(match: re.Match) -> str:
    """A run of key characters that is a piece of a registered secret (an endpoint echoing a
    key's prefix or suffix), or holds one: masked."""
    word = match.group(0)
    for secret in _SECRETS:
        if word in secret or secret in word:
            return MASK
        # a piece of the secret at either end of the word (``...abcd1234`` echoed as a suffix)
        for piece in (secret[:_PIECE], secret[-_PIECE:]):
            if len(secret) >= 2 * _PIECE and piece in word:
                return MASK
    return word


def redact_argv(argv: list[str]) -> list[str]:
    """A command line with its secrets masked: ``--token T`` -> ``--token ***``."""
    out, hide = [], False
    for arg in argv:
        if hide:
            out.append(MASK)
            hide = False
            continue
        if arg in ("--token", "--secret", "--password", "--api-key"):
            hide = True
            out.append(arg)
            continue
        out.append(redact(arg))
    return out
