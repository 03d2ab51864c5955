"""The statute benchmark's tables, defined by feature; imported here so Django registers them."""

from benchmarks.comparisons.models import DeclaredComparison
from benchmarks.corpus.models import Passage, Provision, SourceSnapshot
from benchmarks.reports.models import HeldoutExposure
from benchmarks.rerank.models import RerankGrade, RerankRun
from benchmarks.retrieval.models import RetrievalCandidate, RetrievalResult, RetrievalRun
from benchmarks.suites.models import NominatedTarget, QueryFamily, Suite, SuiteQuery, TargetProposal

__all__ = [
    "DeclaredComparison", "HeldoutExposure", "NominatedTarget", "Passage", "Provision", "QueryFamily",
    "RerankGrade", "RerankRun", "RetrievalCandidate", "RetrievalResult", "RetrievalRun", "SourceSnapshot",
    "Suite", "SuiteQuery", "TargetProposal",
]
