"""Moving indexes between backends: scan, copy, verify, export and import.

Every backend holds to one contract, so an index can be copied from any store to any
other and the copy proven to answer like the source (:func:`verify_indexes`). The same
functions back ``vectorport copy``, ``verify``, ``export`` and ``import``; see
docs/copy.md.
"""

from vectorport.transfer.canonical import Checksum, canonical_bytes
from vectorport.transfer.copying import CopyReport, copy_index
from vectorport.transfer.exporting import ExportReport, ImportReport, export_index, import_index
from vectorport.transfer.plan import CopyPlan, NamespacePlan, plan_copy
from vectorport.transfer.verify import NamespaceCheck, VerifyReport, verify_indexes

__all__ = [
    "Checksum",
    "CopyPlan",
    "CopyReport",
    "ExportReport",
    "ImportReport",
    "NamespaceCheck",
    "NamespacePlan",
    "VerifyReport",
    "canonical_bytes",
    "copy_index",
    "export_index",
    "import_index",
    "plan_copy",
    "verify_indexes",
]
