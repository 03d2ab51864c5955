"""The CUAD grader's tables, defined by feature; imported here so Django registers them."""

from grading.audits.models import Audit, AuditCandidate, AuditJudge, AuditVerdict
from grading.comparisons.models import CuadComparison
from grading.contracts.gold.models import GoldSet
from grading.contracts.models import ClauseTaxonomy, ContractSet, ContractText, SetContract
from grading.dataset.models import Category, Contract, CuadDataset, Sample, SampleContract, Span
from grading.runs.models import ConsoleJob, Extraction, ExtractionRun, JobContract

__all__ = [
    "Audit", "AuditCandidate", "AuditJudge", "AuditVerdict", "Category", "ClauseTaxonomy", "ConsoleJob", "Contract",
    "ContractSet", "ContractText", "CuadComparison", "CuadDataset", "Extraction", "ExtractionRun", "GoldSet",
    "JobContract", "Sample", "SampleContract", "SetContract", "Span",
]
