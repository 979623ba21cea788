"""The git harvester sources, in the order each commit is given to them.

Adding a source is one module satisfying :class:`~comind.harvest.interface.GitSource` and one
entry here. Kept out of the package's ``__init__``: importing the sources compiles their patterns
(30-50 ms), which a re-harvest with nothing new and every ``comind.harvest.*`` import would pay.
"""

from __future__ import annotations

from comind.harvest import fixes, lore, reverts
from comind.harvest.interface import GitSource

GIT_SOURCES: tuple[GitSource, ...] = (reverts, lore, fixes)
