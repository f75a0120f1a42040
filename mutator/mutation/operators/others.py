"""O: the taxonomy's Others (keyword-named kwargs, id(), format(), mappingproxy)."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operator import Operator
