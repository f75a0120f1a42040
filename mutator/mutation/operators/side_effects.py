"""F1, F2: uncaptured side effects on attributes and tensors."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operator import Operator
