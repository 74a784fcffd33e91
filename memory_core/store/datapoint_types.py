"""What a type checker knows of cognee's ``DataPoint`` (cognee 1.6.5 ships no type
information, so to mypy its classes are ``Any``): the public fields and the class methods
FALSIFY's node classes (:mod:`memory_core.store.models`) inherit, on pydantic's
``BaseModel``, so a host program constructing ``Evidence(key=..., claim=...)`` is checked
field by field. Read by type checkers only (``models.py`` imports it under
``TYPE_CHECKING``); at run time the classes derive from cognee's own ``DataPoint``
(``tests/integration/test_cognee_contract.py`` checks these fields against it).
"""

from __future__ import annotations

from typing import Any, Optional
from uuid import UUID, uuid4

from pydantic import BaseModel, Field


class DataPoint(BaseModel):
    id: UUID = Field(default_factory=uuid4)  # FALSIFY's classes give their nodes the id of their key
    created_at: int = 0
    updated_at: int = 0
    ontology_valid: bool = False
    ontology_uri: Optional[str] = None
    version: int = 1
    topological_rank: Optional[int] = 0
    metadata: dict = {}
    type: str = ""
    belongs_to_set: Optional[list[Any]] = None
    source_pipeline: Optional[str] = None
    source_task: Optional[str] = None
    source_node_set: Optional[str] = None
    source_user: Optional[str] = None
    source_content_hash: Optional[str] = None
    feedback_weight: float = 0.5
    importance_weight: Optional[float] = 0.5

    # signatures only: at run time cognee's DataPoint implements them
    @classmethod
    def vector_collection(cls, field: Optional[str] = None) -> str:
        raise NotImplementedError

    @classmethod
    def id_for(cls, *values: Any) -> UUID:
        raise NotImplementedError
