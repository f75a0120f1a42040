"""A1-A4: object initialisation, attribute access, magic methods, descriptors."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operator import Operator
