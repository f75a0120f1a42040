"""G1-G3: guards (value and shape specialisation, missing guards)."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operator import Operator
