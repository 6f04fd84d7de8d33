"""What every importer gives back: one entry per annotation an export holds (and one per
record nobody annotated), before the rule is applied. Pure data, no reading.

An importer reads the tool's documented export and says only what the tool says: who
annotated which unit, with which labels, and whether the tool marks the annotation as
skipped, rejected, ignored, discarded or a draft. Turning labels into codes, and
choosing among an annotator's repeated annotations, is irr_audit.importers.build's job,
the same for every format.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from irr_audit.errors import IrrAuditError


class Reason(str, Enum):
    """Why an annotation did not become a code (the import log's ``outcome``, with CODED)."""

    CODED = "coded"  # became a row of the annotator's sheet
    NOT_ANNOTATED = "not_annotated"  # a record no one annotated (for this question)
    SKIPPED = "skipped"  # Label Studio: skipped (was_cancelled)
    REJECTED = "rejected"  # Prodigy: answer "reject"
    IGNORED = "ignored"  # Prodigy: answer "ignore"
    DISCARDED = "discarded"  # Argilla: response status "discarded"
    DRAFT = "draft"  # Argilla: response status "draft" (not submitted)
    NO_LABEL = "no_label"  # answered, but no label for this question
    UNKNOWN_LABEL = "unknown_label"  # a label the rule does not know
    SEVERAL_LABELS = "several_labels"  # several labels where the rule takes one
    MISSING_ID = "missing_id"  # the record has no unit id
    MISSING_ANNOTATOR = "missing_annotator"  # the annotation names no annotator
    DUPLICATE = "duplicate"  # the same annotator again on the unit, with the same code: one is kept
    SUPERSEDED = "superseded"  # the same annotator again with another code: the later one is kept
    CONFLICT = "conflict"  # the same annotator gave different codes and nothing says which came last


@dataclass(frozen=True)
class Annotation:
    """One annotation of one record by one annotator, as the tool exported it.

    ``record``: where it is in the export, for people ("line 12", "task 3"); ``unit_id``
    the comment id (None when the record has none); ``labels`` the labels chosen for
    the rule's question, as text; ``outcome`` None when the tool says it was answered,
    else the tool's own reason (skipped, rejected, ...); ``when`` the time the tool
    stamped on it, for choosing among one annotator's repeats (None: unknown);
    ``confidence`` a model's confidence, when the export has one.
    """

    record: str
    unit_id: str | None
    annotator: str | None = None
    labels: tuple[str, ...] = ()
    text: str | None = None
    outcome: Reason | None = None
    detail: str = ""
    when: str | None = None
    confidence: float | None = None
    source: str = ""  # the export file it came from


@dataclass(frozen=True)
class ParsedExport:
    """Everything an export holds, as annotations, in file order; ``records`` counts the
    export's records (tasks, lines, rows) so a reader can check none was lost."""

    format: str
    annotations: tuple[Annotation, ...]
    records: int
    question: str | None = None


@dataclass(frozen=True)
class ImportOptions:
    """How an export is read: ``question`` the name of the question in the tool (Label
    Studio's from_name, Argilla's question name, the column of a JSON-MIN or CSV export);
    ``id_field`` the key holding the unit id (default comment_id); ``text_field`` the key
    holding the comment's text (default text, then body)."""

    question: str | None = None
    id_field: str | None = None
    text_field: str | None = None


DEFAULT_ID_FIELD = "comment_id"
TEXT_FIELDS = ("text", "body")


def export_error(subject: str, where: str, problem: str, fix: str, code: str = "import-invalid") -> IrrAuditError:
    """The one message for an export that cannot be read: the file, the record, what is wrong, the fix."""
    place = f"export {subject} {where}" if where else f"export {subject}"
    return IrrAuditError(f"{place}: {problem}", hint=fix, code=code)
