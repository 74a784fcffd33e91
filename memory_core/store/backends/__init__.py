"""The backends FALSIFY keeps a data root's beliefs in, and the one place that picks one.

* :mod:`.base`: what every backend provides (:class:`~.base.Backend`).
* :mod:`.embedded`: cognee's Ladybug graph + LanceDB vectors in the data root (the default),
  with its engine housekeeping in :mod:`.housekeeping`.
* :mod:`.postgres`: PostgreSQL + pgvector (``FALSIFY_BACKEND=postgres``).

:func:`choose` decides from the settings, once per opening; everything else receives the
object it returned.
"""

from __future__ import annotations

from memory_core.store import settings as config
from memory_core.store.backends.base import Backend
from memory_core.store.backends.embedded import EmbeddedBackend
from memory_core.store.backends.postgres import PostgresBackend

__all__ = ["Backend", "EmbeddedBackend", "PostgresBackend", "choose"]

_BY_NAME = {EmbeddedBackend.name: EmbeddedBackend, PostgresBackend.name: PostgresBackend}


def choose(settings: config.Settings) -> Backend:
    """The backend ``settings.backend`` names."""
    return _BY_NAME[settings.backend](settings)
