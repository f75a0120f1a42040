"""Coverage features: arcs and semantic features, reasons normalised, counts bucketed."""

from __future__ import annotations

from mutator.core.features import bucket, encode_arc, is_arc, normalize_reason, semantic_features
from mutator.core.observation import CompileStats

from tests.helpers import call, compiled_run, exc


def test_arc_and_semantic_features_do_not_collide():
    arc = encode_arc("torch/_dynamo/symbolic_convert.py", 120, 121)
    assert is_arc(arc) and arc == encode_arc("torch/_dynamo/symbolic_convert.py", 120, 121)
    assert arc != encode_arc("torch/_dynamo/symbolic_convert.py", 121, 120)
    result = compiled_run(compile_stats=CompileStats(graphs=2, graph_breaks=("Failed to trace builtin operator",),
                                                     recompile_reasons=("L['n'] == 3",)),
                          calls=[call(exception=exc("ValueError"))])
    features = semantic_features(result)
    assert features and not any(is_arc(f) for f in features)
    other = compiled_run(compile_stats=CompileStats(graphs=2, recompile_reasons=("L['n'] == 4",)))
    # the graph-break type, the exception type and the graph-break count's bucket; the two
    # recompile reasons differ only in a constant, so they are one feature
    assert len(semantic_features(result) - semantic_features(other)) == 3


def test_reason_normalisation_and_buckets():
    assert normalize_reason("L['n'] == 3") == normalize_reason("L['m'] == 41") == "L[S] == N"
    assert [bucket(n) for n in (0, 1, 2, 3, 5, 9, 20, 100, 1000)] == [0, 1, 2, 3, 4, 5, 6, 7, 8]
