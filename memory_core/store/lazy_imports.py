"""Packages cognee imports at ``import cognee`` that FALSIFY never calls, imported the first time
they are used rather than when cognee is imported.

cognee 1.6.5 imports, at ``import cognee``, litellm (``cognee.infrastructure.llm.retry_config``
and some thirty other modules), dlt (its CSV loader and ``cognee.tasks.ingestion.dlt_temporal``),
pypdf (its PDF document type), networkx (a graph report retriever) and dateparser (the temporal
hints of its document ingestion, whose ``dateparser.search`` loads every language's data). A
FALSIFY process calls none of them (litellm only with a hosted model); together they cost about
210 MB of resident memory and seconds of start-up. :func:`install`, run just before cognee is
imported, puts a stand-in module in ``sys.modules`` for each one (:data:`DEFERRED`):

* reading any attribute of a stand-in imports the real package, which then takes the stand-in's
  place in ``sys.modules``; the stand-in, still bound in the modules that imported it, forwards
  every later read and write to the real module;
* what cognee takes from a package while it is imported is answered without importing it, as each
  :class:`Deferral` declares: module-level flags it reads (kept for the real module when cognee
  sets them: ``litellm.set_verbose = False``), names it probes that the package does not have,
  functions and classes it only calls (``from pypdf import PdfReader``; ``from dlt.common.time
  import ensure_pendulum_datetime_utc``: a function that imports the package on its first call,
  then calls the real one), and exception classes its decorators name (``retry_if_not_exception_type(
  (litellm.exceptions.NotFoundError, ...))``: placeholders that match, by ``isinstance`` and
  ``issubclass``, exactly what the real classes match once the package is imported -- before that,
  none of its exceptions can exist);
* importing a submodule (``from litellm.exceptions import X``) imports the real package first,
  except a module on the way to a declared callable (``dlt.common.time``), which is a stand-in too.

cognee's files are not changed. ``tests/system/test_lazy_imports.py`` fails loudly when ``import
cognee`` or an offline command starts needing a real package, when cognee uses a declared
callable other than by calling it, or when a declared flag, absent name or exception class stops
matching the real package. A package already imported (by the host, or a launcher's preload) is
left as it is. litellm is deferred only offline: with a hosted model (``LLM_API_KEY``) or hosted
embeddings, :func:`memory_core.store.data_root.import_cognee` lets cognee import it, as before; a key
set later in a process that has the stand-in imports the real module on the first call, and
everything works as with an eager import.

pandas is another case: cognee does not import it, pyarrow does, on its first conversion of a Python
value. :func:`defer_pandas` keeps it out of FALSIFY's own processes until something imports it (see
its docstring for the one thing that stays different).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import sys
import threading
import types
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional


@dataclass(frozen=True)
class Deferral:
    """One package imported on first use, and what cognee's import takes from it meanwhile."""

    name: str
    offline_only: bool = False  # deferred only without a hosted model (the package serves it)
    # module-level flags cognee probes (``hasattr``) and sets while it is imported, with the real
    # package's values (the contract test checks them against the real module)
    flags: Mapping[str, Any] = field(default_factory=dict)
    absent: frozenset = frozenset()  # names cognee probes that the package does not have
    # module -> the names cognee takes from it at import and only ever calls
    callables: Mapping[str, tuple] = field(default_factory=dict)
    exceptions: Optional[str] = None  # the attribute whose exception classes cognee names at import


LITELLM = Deferral(
    "litellm",
    offline_only=True,
    flags={"set_verbose": False, "suppress_debug_info": False},
    absent=frozenset({"turn_off_message"}),
    callables={"litellm": ("_turn_on_debug",)},
    exceptions="exceptions",
)
DEFERRED = (
    LITELLM,
    Deferral("dlt", callables={"dlt.common.time": ("ensure_pendulum_datetime_utc",)}),
    Deferral("pypdf", callables={"pypdf": ("PdfReader",)}),
    Deferral("networkx"),
    # cognee's temporal hints (document ingestion) take dateparser's parser and search at import;
    # importing dateparser.search loads every language's module (240 modules, about 9 MB resident;
    # its first search then loads their data, 40 MB more)
    Deferral(
        "dateparser",
        callables={"dateparser.date": ("DateDataParser",), "dateparser.search": ("search_dates",)},
    ),
)

_lock = threading.RLock()


class _Package:
    """One deferred package's state in this process."""

    def __init__(self, deferral: Deferral):
        self.deferral = deferral
        self.installed = False
        self.loaded_by: Optional[str] = None
        self.pending: dict[str, dict[str, Any]] = {}  # module -> what was set on its stand-in
        self.placeholders: dict[str, type] = {}  # exception class name -> its placeholder
        self.exceptions = _Exceptions(self)
        # the modules on the way to a declared callable (dlt.common, dlt.common.time)
        self.ways = {
            ".".join(module.split(".")[:i])
            for module in deferral.callables
            for i in range(2, module.count(".") + 2)
        }


def installed(name: str = LITELLM.name) -> bool:
    """True when the stand-in for ``name`` was put in place in this process."""
    return _packages[name].installed


def loaded(name: str = LITELLM.name) -> bool:
    """True when the real package ``name`` is imported in this process (by its stand-in or directly)."""
    return _real(name) is not None


def loaded_by(name: str = LITELLM.name) -> Optional[str]:
    """What made the stand-in import the real package (an attribute or submodule name), or None."""
    return _packages[name].loaded_by


def placeholder(name: str, exception: str) -> Optional[type]:
    """The placeholder handed out for exception class ``exception`` of package ``name``, if any."""
    return _packages[name].placeholders.get(exception)


def answered(name: str) -> list[str]:
    """The exception classes of ``name`` cognee's import named (each got a placeholder)."""
    return sorted(_packages[name].placeholders)


def _real(name: str) -> Optional[types.ModuleType]:
    module = sys.modules.get(name)
    if module is None or isinstance(module, _Standin):
        return None
    return module


def _load(package: _Package, why: str) -> types.ModuleType:
    """The real package, imported now if it is not yet (its stand-ins leave sys.modules)."""
    name = package.deferral.name
    with _lock:
        real = _real(name)
        if real is not None:
            return real
        standins = {
            key: module
            for key, module in list(sys.modules.items())
            if isinstance(module, _Standin) and (key == name or key.startswith(name + "."))
        }
        for key in standins:
            del sys.modules[key]
        try:
            real = importlib.import_module(name)
        except BaseException:
            for key, module in standins.items():
                sys.modules.setdefault(key, module)
            raise
        package.loaded_by = why
        for module_name, values in package.pending.items():
            target = importlib.import_module(module_name)
            for key, value in values.items():
                setattr(target, key, value)
        package.pending.clear()
        return real


def _deferred_call(package: _Package, module: str, attribute: str):
    """A function standing for ``module.attribute``: imports the package, then calls the real one."""

    def call(*args, **kwargs):
        _load(package, f"{module}.{attribute}")
        return getattr(importlib.import_module(module), attribute)(*args, **kwargs)

    call.__name__ = call.__qualname__ = attribute
    call.__module__ = module
    return call


class _Deferred(type):
    """The type of a placeholder for one of a package's exception classes: it matches what the
    real class matches once the package is imported, and nothing before (none can exist then)."""

    def _real_class(cls) -> Optional[type]:
        package = _packages[cls.__module__.split(".")[0]]
        real, attribute = _real(package.deferral.name), package.deferral.exceptions
        return None if real is None or attribute is None else getattr(getattr(real, attribute), cls.__name__)

    def __instancecheck__(cls, instance: Any) -> bool:
        real = cls._real_class()
        return real is not None and isinstance(instance, real)

    def __subclasscheck__(cls, subclass: type) -> bool:
        if type.__subclasscheck__(cls, subclass):
            return True
        real = cls._real_class()
        return real is not None and issubclass(subclass, real)


class _Exceptions:
    """A package's exception module before the package is imported: each class a placeholder."""

    def __init__(self, package: _Package):
        self._package = package

    def __getattr__(self, name: str) -> Any:
        package = self._package
        attribute = package.deferral.exceptions
        if attribute is None:  # handed out only as that attribute (_Standin.__getattr__)
            raise AttributeError(name)
        where = f"{package.deferral.name}.{attribute}"
        real = _real(package.deferral.name)
        if real is not None:
            return getattr(getattr(real, attribute), name)
        if name.startswith("_") or not name[:1].isupper():
            return getattr(getattr(_load(package, f"{where}.{name}"), attribute), name)
        with _lock:
            if name not in package.placeholders:
                package.placeholders[name] = _Deferred(name, (Exception,), {"__module__": where})
            return package.placeholders[name]


class _Standin(types.ModuleType):
    """``sys.modules[name]`` for a deferred package (or a module on the way to one of its
    declared callables) until the package is first used (see the module's docstring)."""

    def _package(self) -> _Package:
        return _packages[self.__name__.split(".")[0]]

    def __getattr__(self, name: str) -> Any:
        package, module = self._package(), self.__name__
        deferral = package.deferral
        if _real(deferral.name) is None:
            if name in package.pending.get(module, {}):
                return package.pending[module][name]
            if module == deferral.name:
                if name in deferral.flags:
                    return deferral.flags[name]
                if name in deferral.absent:
                    raise AttributeError(f"module {module!r} has no attribute {name!r}")
                if name == deferral.exceptions:
                    return package.exceptions
            if name in deferral.callables.get(module, ()):
                return _deferred_call(package, module, name)
            _load(package, name if module == deferral.name else f"{module}.{name}")
        return getattr(importlib.import_module(module), name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("__") and name.endswith("__"):
            object.__setattr__(self, name, value)
            return
        if isinstance(value, _Standin):
            return  # the import system binding a stand-in submodule to its parent: read through sys.modules
        if _real(self._package().deferral.name) is None:
            self._package().pending.setdefault(self.__name__, {})[name] = value
        else:
            setattr(importlib.import_module(self.__name__), name, value)

    def __delattr__(self, name: str) -> None:
        if _real(self._package().deferral.name) is None:
            self._package().pending.get(self.__name__, {}).pop(name, None)
        else:
            delattr(importlib.import_module(self.__name__), name)

    def __dir__(self):
        _load(self._package(), "__dir__")
        return dir(importlib.import_module(self.__name__))


class _Finder(importlib.abc.MetaPathFinder):
    """A submodule of a deferred package imported while its stand-in holds the name: a stand-in
    too on the way to a declared callable, else the real package first."""

    def find_spec(self, fullname, path, target=None):
        top = fullname.split(".")[0]
        if "." not in fullname or top not in _packages or not isinstance(sys.modules.get(top), _Standin):
            return None
        package = _packages[top]
        if fullname in package.ways:
            return importlib.machinery.ModuleSpec(fullname, _WayLoader(), is_package=True)
        _load(package, fullname)
        module = sys.modules.get(fullname)
        if module is None:
            return None  # not imported by the package itself: found the ordinary way, now under it
        return importlib.machinery.ModuleSpec(
            fullname, _Loaded(module), is_package=hasattr(module, "__path__")
        )


class _WayLoader(importlib.abc.Loader):
    """Makes the stand-in of a module on the way to a declared callable."""

    def create_module(self, spec):
        module = _Standin(spec.name, "imported on first use (memory_core.store.lazy_imports)")
        module.__path__ = []
        return module

    def exec_module(self, module) -> None:
        pass


class _Loaded(importlib.abc.Loader):
    """A loader for a module the real package's import already made."""

    def __init__(self, module: types.ModuleType):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module) -> None:
        pass


_FINDER = _Finder()
_packages = {d.name: _Package(d) for d in DEFERRED}


def install(hosted: bool = False) -> list[str]:
    """Put the stand-ins in place (with ``hosted``: not the offline-only ones), each unless its
    package is imported already (the host's, or a launcher's preload) or cannot be found.
    Returns the packages whose stand-in is in place."""
    out = []
    with _lock:
        for deferral in DEFERRED:
            name = deferral.name
            if hosted and deferral.offline_only:
                continue
            if name in sys.modules:
                if isinstance(sys.modules[name], _Standin):
                    out.append(name)
                continue
            spec = importlib.machinery.PathFinder.find_spec(name)
            if spec is None or not spec.submodule_search_locations:
                continue
            standin = _Standin(name, f"{name}, imported on first use (memory_core.store.lazy_imports)")
            # what the import system gives a package (a submodule is found under its __path__)
            vars(standin).update(
                __spec__=spec,
                __file__=spec.origin,
                __path__=list(spec.submodule_search_locations),
                __package__=name,
                __loader__=spec.loader,
            )
            if _FINDER not in sys.meta_path:
                sys.meta_path.insert(0, _FINDER)
            sys.modules[name] = standin
            _packages[name].installed = True
            out.append(name)
    return out


# ---- pandas: what pyarrow imports on its first conversion --------------------------------------

PANDAS = "pandas"


class _Hidden(importlib.abc.MetaPathFinder):
    """pandas, not found (for pyarrow's first look only: :func:`defer_pandas`)."""

    def find_spec(self, fullname, path, target=None):
        if fullname == PANDAS:
            raise ModuleNotFoundError(f"No module named {PANDAS!r}", name=PANDAS)
        return None


class _PandasWatch(importlib.abc.MetaPathFinder):
    """Once anything imports pandas, tells pyarrow's pandas shim it is there (then leaves). Only an
    import counts: a look that imports nothing (``importlib.util.find_spec``, as LanceDB's lazy
    modules do) gets the spec it asked for, and the watch stays."""

    watches = PANDAS  # how a second copy of this module (the launcher's) recognises it

    def find_spec(self, fullname, path, target=None):
        if fullname != PANDAS:
            return None
        spec = None
        for finder in list(sys.meta_path):
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        run = loader.exec_module
        watch = self

        def exec_module(module):
            with contextlib.suppress(AttributeError):
                del loader.exec_module  # this loader's own method again
            with _lock:
                if watch in sys.meta_path:
                    sys.meta_path.remove(watch)
            run(module)
            _tell_pyarrow()

        loader.exec_module = exec_module
        return spec


def _tell_pyarrow() -> None:
    """pyarrow's shim, which recorded pandas as absent, imports it now (as it does when a caller
    asks it for pandas explicitly: ``table.to_pandas()``)."""
    lib = sys.modules.get("pyarrow.lib")
    if lib is not None:
        with contextlib.suppress(Exception):  # an unusable pandas: pyarrow says so where it is used
            lib._pandas_api.pd


def pandas_deferred() -> bool:
    """True while pyarrow runs without pandas in this process, told when pandas is imported."""
    return any(getattr(finder, "watches", None) == PANDAS for finder in sys.meta_path)


def defer_pandas() -> bool:
    """Keep pandas out of a process that never uses it (FALSIFY's own: the CLI, the launcher, the
    servers). Returns True when pandas stays unimported until something imports it.

    pyarrow imports pandas (30-45 MB resident, 345 modules) the first time it converts any
    Python value: its pandas shim asks whether pandas is installed, and its C++ converter loads
    pandas' ``NaT``, ``NA``, ``Timestamp``, ``Timedelta`` and ``DateOffset``, once per process.
    Neither FALSIFY nor the parts of cognee and LanceDB it runs hand pyarrow a pandas object. Here
    pyarrow's first conversion runs while pandas cannot be found, so both record it as absent;
    then, the moment anything imports pandas, the shim is told, and DataFrames and Series convert
    as usual (``Table.from_pandas``, ``to_pandas``, NaN as null). What stays is the C++ side's
    once: a pandas ``NaT`` or ``DateOffset`` inside a plain Python list converts as it would
    without pandas installed. A process that has imported pandas already is left as it is."""
    if PANDAS in sys.modules:
        return False
    if pandas_deferred():
        return True
    try:
        import pyarrow
    except ImportError:
        return False
    hidden = _Hidden()
    with _lock:
        sys.meta_path.insert(0, hidden)
        try:
            with contextlib.suppress(Exception):
                pyarrow.scalar(1)  # the shim's question and the C++ converter's, answered "absent"
        finally:
            sys.meta_path.remove(hidden)
        if PANDAS in sys.modules:  # pyarrow had looked before, with pandas there
            return False
        sys.meta_path.insert(0, _PandasWatch())
    return True
