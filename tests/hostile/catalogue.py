"""Every case of the hostile corpus, from the modules that hold them by input kind."""

from cases_bundles import CASES as BUNDLES
from cases_codebook_audit import CASES as CODEBOOK_AUDIT
from cases_codebooks import CASES as CODEBOOKS
from cases_collector import CASES as COLLECTOR
from cases_counts import CASES as COUNTS
from cases_importers import CASES as IMPORTERS
from cases_outputs import CASES as OUTPUTS
from cases_render import CASES as RENDER
from cases_rules import CASES as RULES
from cases_sheets import CASES as SHEETS

CASES = [*SHEETS, *RULES, *COLLECTOR, *COUNTS, *OUTPUTS, *BUNDLES, *RENDER, *IMPORTERS, *CODEBOOKS, *CODEBOOK_AUDIT]
