"""litellm, imported the first time it is used rather than when cognee is imported.

cognee 1.6.5 imports litellm at ``import cognee`` (``cognee.infrastructure.llm.retry_config``
and some thirty other modules), although a FALSIFY process without a hosted model never calls
it: the import costs about 150 MB of resident memory and seconds of start-up. :func:`install`,
run just before cognee is imported, puts a stand-in module in ``sys.modules["litellm"]``:

* reading any attribute of it imports the real litellm, which then takes the stand-in's place
  in ``sys.modules``; the stand-in, still bound in the modules that imported it, forwards every
  later read and write to the real module;
* what cognee does to litellm while it is imported is kept for the real module: flags it sets
  (``litellm.set_verbose = False``) are recorded and applied when the real module is imported,
  and the exception classes its decorators name (``retry_if_not_exception_type(
  (litellm.exceptions.NotFoundError, ...))``) are placeholders that match, by ``isinstance``
  and ``issubclass``, exactly what the real classes match once litellm is imported (before
  that, no litellm exception can exist);
* importing a submodule (``from litellm.exceptions import X``) imports the real litellm first.

cognee's files are not changed; ``tests/integration/test_lazy_litellm.py`` fails loudly when
``import cognee`` or an offline command starts needing the real module. With a hosted model
(``LLM_API_KEY``) or hosted embeddings, :func:`memory_core.store.data_root.import_cognee` does not
install it (litellm is imported with cognee, as before); a key set later in a process that has the
stand-in imports the real module on the first call, and everything works as with an eager import.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import threading
import types
from typing import Any, Optional

NAME = "litellm"
_lock = threading.RLock()
_state: dict = {"installed": False, "loaded_by": None}
# what cognee's import sets on litellm (set before the real module exists): applied to it on import
_pending: dict = {}
_placeholders: dict = {}
# litellm's module-level flags cognee probes (``hasattr``) and sets while it is imported
# (cognee.shared.logging_utils), with the real module's values, and the names it probes that
# litellm does not have: answered without importing it (the contract test checks both against
# the real module)
FLAGS: dict = {"set_verbose": False, "suppress_debug_info": False}
ABSENT = frozenset({"turn_off_message"})


def installed() -> bool:
    """True when the stand-in was put in place in this process."""
    return bool(_state["installed"])


def loaded() -> bool:
    """True when the real litellm is imported in this process (by the stand-in or directly)."""
    module = sys.modules.get(NAME)
    return module is not None and not isinstance(module, _Standin)


def loaded_by() -> Optional[str]:
    """What made the stand-in import the real litellm (an attribute or submodule name), or None."""
    return _state["loaded_by"]


def _real() -> Optional[types.ModuleType]:
    module = sys.modules.get(NAME)
    if module is None or isinstance(module, _Standin):
        return None
    return module


def _load(why: str) -> types.ModuleType:
    """The real litellm, imported now if it is not yet (the stand-in leaves sys.modules)."""
    with _lock:
        module = sys.modules.get(NAME)
        if module is not None and not isinstance(module, _Standin):
            return module
        standin = module
        if standin is not None:
            del sys.modules[NAME]
        try:
            real = importlib.import_module(NAME)
        except BaseException:
            if standin is not None and NAME not in sys.modules:
                sys.modules[NAME] = standin
            raise
        _state["loaded_by"] = why
        for key, value in _pending.items():
            setattr(real, key, value)
        _pending.clear()
        return real


class _Deferred(type):
    """The type of a placeholder for one of litellm's exception classes: it matches what the
    real class matches once litellm is imported, and nothing before (none can exist then)."""

    def __instancecheck__(cls, instance: Any) -> bool:
        real = _real()
        return real is not None and isinstance(instance, getattr(real.exceptions, cls.__name__))

    def __subclasscheck__(cls, subclass: type) -> bool:
        if type.__subclasscheck__(cls, subclass):
            return True
        real = _real()
        return real is not None and issubclass(subclass, getattr(real.exceptions, cls.__name__))


class _Exceptions:
    """``litellm.exceptions`` before litellm is imported: each class a placeholder."""

    def __getattr__(self, name: str) -> Any:
        real = _real()
        if real is not None:
            return getattr(real.exceptions, name)
        if name.startswith("_") or not name[:1].isupper():
            return getattr(_load(f"exceptions.{name}").exceptions, name)
        with _lock:
            if name not in _placeholders:
                _placeholders[name] = _Deferred(name, (Exception,), {"__module__": "litellm.exceptions"})
            return _placeholders[name]


_EXCEPTIONS = _Exceptions()


def _turn_on_debug(*args, **kwargs):
    """``litellm._turn_on_debug`` before litellm is imported: imports it, then calls it."""
    return _load("_turn_on_debug")._turn_on_debug(*args, **kwargs)


class _Standin(types.ModuleType):
    """``sys.modules["litellm"]`` until litellm is first used (see the module's docstring)."""

    def __getattr__(self, name: str) -> Any:
        real = _real()
        if real is None:
            if name in _pending:
                return _pending[name]
            if name in FLAGS:
                return FLAGS[name]
            if name in ABSENT:
                raise AttributeError(f"module {NAME!r} has no attribute {name!r}")
            if name == "_turn_on_debug":
                return _turn_on_debug
            if name == "exceptions":
                return _EXCEPTIONS
            real = _load(name)
        return getattr(real, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("__") and name.endswith("__"):
            object.__setattr__(self, name, value)
            return
        real = _real()
        if real is None:
            _pending[name] = value
        else:
            setattr(real, name, value)

    def __delattr__(self, name: str) -> None:
        real = _real()
        if real is None:
            _pending.pop(name, None)
        else:
            delattr(real, name)

    def __dir__(self):
        return dir(_load("__dir__"))


class _Finder(importlib.abc.MetaPathFinder):
    """A submodule of litellm imported while the stand-in holds its name: the real package first."""

    def find_spec(self, fullname, path, target=None):
        if not fullname.startswith(NAME + ".") or not isinstance(sys.modules.get(NAME), _Standin):
            return None
        _load(fullname)
        module = sys.modules.get(fullname)
        if module is None:
            return None  # not imported by the package itself: found the ordinary way, now under it
        return importlib.machinery.ModuleSpec(
            fullname, _Loaded(module), is_package=hasattr(module, "__path__")
        )


class _Loaded(importlib.abc.Loader):
    """A loader for a module the real package's import already made."""

    def __init__(self, module: types.ModuleType):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module) -> None:
        pass


_FINDER = _Finder()


def install() -> bool:
    """Put the stand-in in place, unless litellm is imported already (the host's, or a
    launcher's preload) or cannot be found. True when it is in place."""
    with _lock:
        if NAME in sys.modules:
            return isinstance(sys.modules[NAME], _Standin)
        spec = importlib.machinery.PathFinder.find_spec(NAME)
        if spec is None or not spec.submodule_search_locations:
            return False
        standin = _Standin(NAME, "litellm, imported on first use (memory_core.store.lazy_litellm)")
        # what the import system gives a package (a submodule is found under its __path__)
        vars(standin).update(
            __spec__=spec,
            __file__=spec.origin,
            __path__=list(spec.submodule_search_locations),
            __package__=NAME,
            __loader__=spec.loader,
        )
        if _FINDER not in sys.meta_path:
            sys.meta_path.insert(0, _FINDER)
        sys.modules[NAME] = standin
        _state["installed"] = True
        return True
