"""X: generic structural operators (graph breaks, helpers, repeated and stacked calls, compile options)."""

from __future__ import annotations

import libcst as cst

from mutator.mutation.operator import Operator


class InsertGraphBreak(Operator):
    family = "X"
    name = "insert_graph_break"
    DESCRIPTION = "Insert torch._dynamo.graph_break() between two statements of the compiled region."

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        if not self.is_site(original_node):
            return updated_node
        body = list(updated_node.body)
        first = 1 if _is_docstring(body[0]) else 0
        at = self.rng.randint(first, max(first, len(body) - 1))
        self.add_import("torch")
        body.insert(at, cst.parse_statement("torch._dynamo.graph_break()\n"))
        return updated_node.with_changes(body=body)


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.SimpleString))
