"""How much of a Batch listing one reader takes: the runtimes page with these, and the
monitoring construct checks its declared job budget against them at synthesis."""

from __future__ import annotations

from typing import Final

MAX_PAGE_SIZE: Final = 100
"""ListServiceJobs' and ListQuotaShares' largest ``maxResults``."""
MAX_LISTING_PAGES: Final = 100
"""The most pages one listing reads (10,000 jobs): a misbehaving paginator cannot loop forever."""
