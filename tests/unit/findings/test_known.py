"""Bugs filed before (--known): what counts as known (signatures, merged signatures, reduced
programs, filed reproducers), what the fuzz loop does with a known hit (counts it in
known.json, files nothing), and a finding that reduces to a known program. No torch."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

from mutator.campaign.directory import Campaign, CampaignConfig
from mutator.judge.check import CheckResult, CheckTask
from mutator.campaign.corpus import Corpus, CoverageMap
from mutator.findings.finding import Finding
from mutator.findings.signature import Signature
from mutator.findings.store import FindingStore
from mutator.campaign.filing import Filing
from mutator.campaign.fuzzer import Fuzzer
from mutator.campaign.lane import Job
from mutator.campaign.lanes.reducing import ReductionLane
from mutator.findings.known import KnownBugs, KnownError, KnownHits, Match, mark, reproducer_digests
from mutator.report.issue import known_lines
from mutator.mutation.mutator import Mutator
from mutator.mutation.registry import all_operators
from mutator.judge.oracle import Judgement
from mutator.core.program import Program
from mutator.findings.canonical import canonical_digest
from mutator.reduce.repro import _SEPARATOR
from mutator.campaign.schedule import UniformSchedule
from mutator.core.verdict import Verdict

from tests.helpers import compiled_run, exc, run

REDUCED = '''\
import torch


def fn(x):
    return format(1, "03d"),


def inputs():
    return (torch.randn(1),)
'''
CRASH = Signature("CRASH", "TypeError", "symbolic_convert.py:step")
MISMATCH = Signature("MISMATCH", observation="result:value:str")


def write_finding(root: Path, signature: Signature, *, reduced: str = "", confirmed: bool = True,
                  merged: tuple[Signature, ...] = (), known: dict[str, str] | None = None) -> Path:
    """A finding directory as a campaign leaves it (record and programs), without a campaign."""
    directory = f"findings/{signature.slug()}"
    reduction = dict(confirmed=confirmed, source=reduced, canonical=canonical_digest(reduced)) if reduced else {}
    finding = Finding(signature, "the reason", directory, hits=3, reduction=reduction, known=known or {},
                      merged=[dict(signature=m.as_json(), hits=1, reason="r", directory=f"{directory}/merged/x",
                                   moved_from="findings/x") for m in merged])
    (root / directory).mkdir(parents=True)
    (root / directory / "finding.json").write_text(json.dumps(finding.as_json()))
    (root / directory / "smallest.py").write_text(reduced or "import torch\n")
    return root / directory


def test_a_campaign_makes_its_signatures_merged_ones_and_confirmed_reductions_known(tmp_path: Path):
    first = tmp_path / "first"
    crash = write_finding(first, CRASH, reduced=REDUCED, merged=(Signature("CRASH", "ValueError"),))
    write_finding(first, MISMATCH, reduced=REDUCED.replace("03d", "x"), confirmed=False)
    (first / "queue").mkdir()
    (first / "queue" / "id:000000.py").write_text("import torch\nprint(1)\n")  # a queue entry is no bug
    known = KnownBugs.load([first])
    assert set(known.signatures) == {CRASH, MISMATCH, Signature("CRASH", "ValueError")}
    assert known.by_signature(CRASH) == Match(str(crash.resolve()), "signature")
    assert known.by_canonical(canonical_digest(REDUCED)) == Match(str(crash.resolve()), "canonical form")
    assert list(known.digests) == [canonical_digest(REDUCED)]  # the unconfirmed reduction says nothing
    assert known.by_signature(Signature("CRASH", "KeyError")) is None and known.by_canonical("") is None


def test_a_findings_folder_and_a_single_finding_directory(tmp_path: Path):
    crash = write_finding(tmp_path / "a", CRASH)
    write_finding(tmp_path / "b", MISMATCH)
    assert set(KnownBugs.load([tmp_path / "a" / "findings"]).signatures) == {CRASH}
    assert set(KnownBugs.load([crash, tmp_path / "b" / "findings"]).signatures) == {CRASH, MISMATCH}


def test_a_filed_reproducer_is_known_by_its_program_above_the_footer(tmp_path: Path):
    filed = tmp_path / "filed"
    filed.mkdir()
    renamed = REDUCED.replace("fn(x)", "fn(value)").replace("03d", "05d")  # names and literals do not matter
    (filed / "issue_1234.py").write_text(renamed.rstrip() + "\n\n\n" + _SEPARATOR + "\nexpected = _run(fn)\n")
    without_import = REDUCED.removeprefix("import torch\n")
    (filed / "issue_99.py").write_text("import torch\n" + without_import + "\n" + _SEPARATOR + "\nassert 0\n")
    known = KnownBugs.load([filed])
    assert known.by_canonical(canonical_digest(REDUCED)).where.endswith("issue_1234.py")
    assert canonical_digest(without_import) in known.digests  # repro.py put the import there
    assert reproducer_digests(REDUCED) == {canonical_digest(REDUCED)}  # no footer: the whole file
    assert not known.signatures


def test_a_path_with_nothing_to_know_is_refused_but_an_empty_campaign_is_not(tmp_path: Path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(KnownError, match="campaign directory, a findings folder"):
        KnownBugs.load([tmp_path / "empty"])
    (tmp_path / "fresh" / "findings").mkdir(parents=True)
    assert not KnownBugs.load([tmp_path / "fresh"])


def test_an_unreadable_record_is_a_problem_not_an_end(tmp_path: Path):
    write_finding(tmp_path, CRASH)
    (tmp_path / "findings" / "torn").mkdir()
    (tmp_path / "findings" / "torn" / "finding.json").write_text('{"signature": ')
    known = KnownBugs.load([tmp_path])
    assert set(known.signatures) == {CRASH} and "torn/finding.json: unreadable" in known.problems[0]


def test_a_finding_matches_by_signature_or_reduced_program_but_never_itself(tmp_path: Path):
    known = KnownBugs.load([write_finding(tmp_path / "first", CRASH, reduced=REDUCED)])
    other = Finding(Signature("CRASH", "KeyError"), "r", "findings/k",
                    reduction=dict(confirmed=True, source=REDUCED, canonical=canonical_digest(REDUCED)))
    assert known.match(other).by == "canonical form"
    assert known.match(replace(other, reduction={})) is None
    same = Finding(CRASH, "r", "findings/c")
    assert known.match(same).by == "signature"
    assert known.match(same, directory=tmp_path / "first" / same.directory.replace("c", CRASH.slug())) is None
    assert known.match(Finding(replace(CRASH, part="split1"), "r", "d")).by == "signature"  # a split's base
    assert mark(other, known) and other.known["by"] == "canonical form" and not other.is_new
    assert known_lines(other.known)[0].startswith("Known: filed before in ")


def test_known_hits_are_counted_per_signature_saved_and_resumed(tmp_path: Path):
    known = KnownBugs.load([write_finding(tmp_path / "first", CRASH)])
    hits = KnownHits(tmp_path / "second", known)
    assert not hits.count(MISMATCH, provenance="seed:a.py", size=10, elapsed=1.0)
    assert hits.count(CRASH, provenance="A1.x", size=300, elapsed=2.0)
    assert hits.count(CRASH, provenance="B2.y", size=100, elapsed=3.0)
    hits.save()
    data = json.loads((tmp_path / "second" / "known.json").read_text())
    assert data["sources"] == [str(tmp_path / "first" / "findings" / CRASH.slug())]
    [row] = data["signatures"]
    assert row["hits"] == 2 and row["size"] == 100 and row["provenance"] == "B2.y" and row["first_at"] == 2.0
    again = KnownHits(tmp_path / "second", known)
    assert again.total == 2 and KnownHits.sources_of(tmp_path / "second") == [Path(data["sources"][0])]


def _crash(source: str = REDUCED, type_name: str = "TypeError") -> CheckResult:
    judgement = Judgement(Verdict.CRASH, f"the compiled run raised {type_name}", exception=exc(type_name, dynamo=True))
    return CheckResult(Program.from_source(source, "m.py"), judgement, (run(), compiled_run()))


def _fuzzer(root: Path, known: KnownHits | None) -> Fuzzer:
    campaign = Campaign.create(root, CampaignConfig(corpus=("seeds",)))
    return Fuzzer(corpus=Corpus(), coverage=CoverageMap(), mutator=Mutator(all_operators()),
                  schedule=UniformSchedule(), checker=None, filing=Filing(FindingStore(campaign.root), known),  # type: ignore[arg-type]
                  campaign=campaign, rng=random.Random(0))


def _hit(fuzzer: Fuzzer, result: CheckResult) -> None:
    job = Job(CheckTask(result.program), None, seed_path="m.py")
    job.program = result.program
    fuzzer._process(job, result)


def test_the_loop_counts_a_known_hit_and_files_nothing(tmp_path: Path):
    signature = Signature.of(_crash())
    first = FindingStore(tmp_path / "first")
    first.record(_crash(), provenance="seed:m.py", parent=None, elapsed=1.0)
    fuzzer = _fuzzer(tmp_path / "second", KnownHits(tmp_path / "second", KnownBugs.load([tmp_path / "first"])))
    _hit(fuzzer, _crash())
    _hit(fuzzer, _crash())
    _hit(fuzzer, _crash(type_name="KeyError"))  # not known: filed as new
    assert [f.signature.exception for f in fuzzer.store.findings.values()] == ["KeyError"]
    assert fuzzer.stats.known == 2 and fuzzer.stats.hits == 3
    fuzzer.save(force=True)
    assert json.loads((tmp_path / "second" / "known.json").read_text())["signatures"][0]["hits"] == 2
    snapshot = json.loads((tmp_path / "second" / "stats.json").read_text())["snapshot"]
    assert snapshot["findings"] == 1 and snapshot["known_hits"] == 2 and snapshot["known_signatures"] == 1
    assert not (tmp_path / "second" / "findings" / signature.slug()).exists()


def test_a_signature_filed_here_before_goes_on_counting_here(tmp_path: Path):
    FindingStore(tmp_path / "first").record(_crash(), provenance="seed:m.py", parent=None, elapsed=1.0)
    fuzzer = _fuzzer(tmp_path / "second", None)
    _hit(fuzzer, _crash())  # a session without --known filed it
    fuzzer.filing.known = KnownHits(tmp_path / "second", KnownBugs.load([tmp_path / "first"]))
    _hit(fuzzer, _crash())
    [finding] = fuzzer.store.findings.values()
    assert finding.hits == 2 and fuzzer.stats.known == 0


class _Reduced:
    """A background reduction that has finished: `completed` gives it once."""

    def __init__(self, directory: str, source: str) -> None:
        from mutator.reduce.problem import ReductionStats
        from mutator.reduce.reducer import Reduction
        from mutator.reduce.driver import ReductionReport

        program = Program.from_source(source, "reduced.py")
        reduction = Reduction(program, program, Signature.of(_crash()), _crash(source), True, ReductionStats(), 1.0)
        self.done = [(directory, ReductionReport(directory, reduction=reduction))]
        self.pending = 0

    def completed(self):  # type: ignore[no-untyped-def]
        done, self.done = self.done, []
        return done

    def take_cpu(self):  # type: ignore[no-untyped-def]
        from mutator.core.cpu import Ledger

        return Ledger()


def test_a_finding_that_reduces_to_a_known_program_is_marked_known(tmp_path: Path):
    write_finding(tmp_path / "first", CRASH, reduced=REDUCED)  # another signature, the same program
    fuzzer = _fuzzer(tmp_path / "second", KnownHits(tmp_path / "second", KnownBugs.load([tmp_path / "first"])))
    big = REDUCED + "\n\ndef unused():\n    return 1\n"
    _hit(fuzzer, _crash(big, type_name="KeyError"))
    [finding] = fuzzer.store.findings.values()
    assert finding.is_new
    ReductionLane(_Reduced(finding.directory, REDUCED.replace("03d", "x"))).poll(fuzzer)  # type: ignore[arg-type]
    record = json.loads((tmp_path / "second" / finding.directory / "finding.json").read_text())
    assert record["known"]["by"] == "canonical form" and record["known"]["where"].startswith(str(tmp_path / "first"))
    assert fuzzer.snapshot()["findings"] == 0 and fuzzer.snapshot()["known_findings"] == 1
    assert "filed before in" in (tmp_path / "second" / finding.directory / "README.md").read_text()


class RejudgingChecker:
    """Judges each program as `shows` says (a signature, or None for a pass), counting calls."""

    def __init__(self, shows) -> None:
        self.shows = shows
        self.asked: list[CheckTask] = []

    def submit(self, task: CheckTask):
        from concurrent.futures import Future

        from mutator.judge.check import CheckReply

        self.asked.append(task)
        signature = self.shows(task)
        eager = run()
        if signature is None:
            judgement = Judgement(Verdict.PASS, "compiled matches eager")
        else:
            error = exc(signature.exception, "moved", dynamo=True)
            judgement = Judgement(Verdict[signature.kind], "raised", exception=error)
        result = CheckResult(task.program, judgement, (eager, compiled_run()), configuration=task.configuration)
        future: Future = Future()
        future.set_result(CheckReply(result))
        return future


def test_known_programs_judged_on_this_torch_make_the_signature_they_show_here_known(tmp_path: Path):
    from mutator.core.build import Build

    directory = write_finding(tmp_path / "old", CRASH, reduced=REDUCED)
    (directory / "reduced.py").write_text(REDUCED)
    finding = json.loads((directory / "finding.json").read_text())
    finding["configuration"] = "nested-graph-breaks"
    (directory / "finding.json").write_text(json.dumps(finding))
    known = KnownBugs.load([tmp_path / "old"])
    assert {(p.program.name.rsplit("/", 1)[-1], p.configuration) for p in known.programs} == \
        {("reduced.py", "nested-graph-breaks"), ("smallest.py", "nested-graph-breaks")}
    # the crash site moved since: as RejudgingChecker's exception says it (exc(..., dynamo=True))
    moved = Signature("CRASH", "TypeError", "torch/_dynamo/symbolic_convert.py:step")
    checker = RejudgingChecker(lambda task: moved)
    build = Build(torch="2.15.0", git="abc", python="3.11.7")
    added = known.rejudge(checker, build, backend="eager", offered=("default", "nested-graph-breaks"),
                          cache=tmp_path / "cache")
    assert added == 1 and {t.configuration for t in checker.asked} == {"nested-graph-breaks"}
    assert known.by_signature(moved) == Match(str(directory.resolve()), "signature on this torch")
    again = KnownBugs.load([tmp_path / "old"])  # a second campaign on the same torch: from the cache
    assert again.rejudge(checker, build, backend="eager", offered=("default", "nested-graph-breaks"),
                         cache=tmp_path / "cache") == 1
    assert len(checker.asked) == 2
    other = KnownBugs.load([tmp_path / "old"])  # a torch without the configuration judges nothing
    assert other.rejudge(checker, build, backend="eager", offered=("default",), cache=tmp_path / "cache") == 0


def test_a_reproducer_is_judged_under_the_configuration_it_sets(tmp_path: Path):
    (tmp_path / "filed").mkdir()
    repro = REDUCED + _SEPARATOR + "\nimport torch._dynamo.config\ntorch._dynamo.config.nested_graph_breaks = True\n"
    (tmp_path / "filed" / "bug.py").write_text(repro)
    [program] = KnownBugs.load([tmp_path / "filed"]).programs
    assert program.configuration == "nested-graph-breaks" and program.program.source == REDUCED


def test_a_finding_that_needs_what_a_known_one_needed_and_fails_the_same_way_is_known(tmp_path: Path):
    from mutator.findings.needs import failure_key, message_key

    matters = dict(needed=["a `set` subclass", "`Carrier.__init__`"])
    directory = write_finding(tmp_path / "old", CRASH, reduced=REDUCED)
    record = json.loads((directory / "finding.json").read_text())
    record["reduction"].update(matters=matters, reason="call 1 (fn) raised TypeError: 'set' object is not "
                                                        "callable (in torch/_dynamo/variables/builder.py:12 in _wrap)")
    (directory / "finding.json").write_text(json.dumps(record))
    known = KnownBugs.load([tmp_path / "old"])
    moved = Signature("CRASH", "TypeError", "utils.py:set_base_iter")  # another site on a newer torch
    new = Finding(moved, "r", "findings/new", reduction=dict(
        confirmed=True, source="x = 1\n", canonical="other", matters=dict(needed=["a `frozen` block", "`Pair.__init__`"]),
        reason="call 2 (g) raised TypeError: 'frozenset' object is not callable (in torch/_dynamo/utils.py:99 in f)"))
    assert known.match(new) is None  # other constructs
    new.reduction["matters"] = dict(needed=["`Box.__init__`", "a `set` subclass"])
    assert known.match(new) == Match(str(directory.resolve()), "what it needs and how it fails")
    assert message_key("call 3 (h) raised TypeError: 'x' takes 2 (in torch/_dynamo/a.py:1 in b)") == \
        "raised TypeError: '?' takes N"
    assert failure_key(Finding(moved, "r", "d", reduction=dict(confirmed=True))) is None  # nothing needed: no key


def _wrong(configuration: str = "default", *, needs: bool = False) -> CheckResult:
    from mutator.judge.compare import Divergence

    divergence = Divergence("result", "call 1", "value", "eager 1, compiled 2", True, "Tensor")
    judgement = Judgement(Verdict.MISMATCH, "call 1 result differs", divergence=divergence)
    return CheckResult(Program.from_source(REDUCED, "m.py"), judgement, (run(), compiled_run()),
                       configuration=configuration, needs_configuration=needs)


def test_a_wrong_result_under_a_configuration_that_needs_it_is_not_the_known_wrong_result(tmp_path: Path):
    FindingStore(tmp_path / "first").record(_wrong(), provenance="seed:m.py", parent=None, elapsed=1.0)
    known = KnownBugs.load([tmp_path / "first"])
    assert known.configurations_of(Signature.of(_wrong())) == {"default"}
    fuzzer = _fuzzer(tmp_path / "second", KnownHits(tmp_path / "second", known))
    filing = fuzzer.filing
    # the checker is asked to look under the defaults for a wrong result under another configuration
    assert filing.taken(_wrong("graph-dedup")) and not filing.taken(_wrong("default"))
    assert not filing.taken(replace(_crash(), configuration="graph-dedup"))  # a crash site tells bugs apart
    _hit(fuzzer, _wrong("graph-dedup"))  # failed alike under the defaults: the known bug
    assert not fuzzer.store.findings and fuzzer.stats.known == 1
    _hit(fuzzer, _wrong("graph-dedup", needs=True))  # passed under the defaults: a bug of its own
    [finding] = fuzzer.store.findings.values()
    assert finding.signature.needs == "graph-dedup" and finding.configuration == "graph-dedup"
    assert finding.is_new and fuzzer.stats.known == 1
    assert not filing.taken(_wrong("graph-dedup", needs=True))  # filed here under it: its hits go to it
    second = KnownBugs.load([tmp_path / "second"])  # the next campaign knows it, by the configuration it needs
    assert second.by_signature(Signature.of(_wrong("graph-dedup", needs=True))) is not None
    assert second.by_signature(Signature.of(_wrong("dynamic", needs=True))) is None


def test_a_hit_filed_here_under_another_configuration_is_looked_at_under_the_defaults(tmp_path: Path):
    fuzzer = _fuzzer(tmp_path / "c", None)
    _hit(fuzzer, _wrong("default"))
    assert fuzzer.filing.taken(_wrong("graph-dedup"))
    fuzzer = _fuzzer(tmp_path / "d", None)
    _hit(fuzzer, _wrong("graph-dedup"))  # filed first under it: hits under it are that finding's
    assert not fuzzer.filing.taken(_wrong("graph-dedup")) and fuzzer.filing.taken(_wrong("dynamic"))


def test_a_known_bug_that_needs_its_configuration_is_known_by_it_when_judged_again(tmp_path: Path):
    from mutator.core.build import Build

    needing = replace(Signature.of(_wrong()), needs="graph-dedup")
    directory = write_finding(tmp_path / "old", needing, reduced=REDUCED)
    finding = json.loads((directory / "finding.json").read_text())
    finding["configuration"] = "graph-dedup"
    (directory / "finding.json").write_text(json.dumps(finding))
    known = KnownBugs.load([tmp_path / "old"])
    assert {p.needs for p in known.programs} == {"graph-dedup"}
    # judged again, its run under the configuration gives the plain wrong result (nothing checks
    # it under the defaults there): known as the wrong result that needs the configuration
    from concurrent.futures import Future

    from mutator.judge.check import CheckReply

    class Wrong:
        def submit(self, task: CheckTask):
            future: Future = Future()
            future.set_result(CheckReply(_wrong(task.configuration)))
            return future

    known.signatures.clear()  # as if the finding were known by the signature it shows here alone
    known.rejudge(Wrong(), Build(torch="2.15.0", git="abc", python="3.11.7"), backend="eager",  # type: ignore[arg-type]
                  offered=("default", "graph-dedup"), cache=tmp_path / "cache")
    assert known.by_signature(Signature.of(_wrong())) is None
    assert known.by_signature(needing) == Match(str(directory.resolve()), "signature on this torch")
    assert known.configurations_of(needing) == {"graph-dedup"}


def test_a_finding_filed_as_needing_a_configuration_its_reduction_does_not_need_is_the_plain_known_bug(tmp_path: Path):
    FindingStore(tmp_path / "first").record(_wrong(), provenance="seed:m.py", parent=None, elapsed=1.0)
    known = KnownBugs.load([tmp_path / "first"])
    needing = replace(Signature.of(_wrong()), needs="forced-graph-breaks")
    finding = Finding(needing, "r", "findings/x", reduction=dict(confirmed=True, source=REDUCED,
                                                                needs_configuration=True))
    assert known.match(finding) is None  # the reduced program needs it still: a bug of its own
    finding.reduction["needs_configuration"] = False  # it fails alike under the defaults
    assert known.match(finding) is not None


NO_FORMAT = '''\
import torch


def fn(x):
    return x * 2


def inputs():
    return (torch.randn(1),)
'''


def _wrong_in(source: str, configuration: str = "default", *, graph_breaks: tuple[str, ...] = ()) -> CheckResult:
    from mutator.core.observation import CompileStats

    wrong = _wrong(configuration)
    compiled = replace(wrong.compiled, observation=replace(wrong.compiled.observation,
                                                           compile=CompileStats(graph_breaks=graph_breaks)))
    return replace(wrong, program=Program.from_source(source, "m.py"), runs=(wrong.eager, compiled))


def _known_wrong_result(root: Path, needed: list[str] | None) -> Path:
    """A known wrong result whose reduction found `needed` (None: never reduced)."""
    signature = Signature.of(_wrong())
    directory = write_finding(root, signature, reduced=REDUCED, confirmed=needed is not None)
    if needed is not None:
        record = json.loads((directory / "finding.json").read_text())
        record["reduction"]["matters"] = dict(needed=needed)
        (directory / "finding.json").write_text(json.dumps(record))
    return directory


def test_a_known_wrong_result_whose_program_lacks_what_the_known_bug_needs_is_filed_as_its_own(tmp_path: Path):
    known_dir = _known_wrong_result(tmp_path / "first", ["the format spec `:03d`"])
    fuzzer = _fuzzer(tmp_path / "second", KnownHits(tmp_path / "second", KnownBugs.load([tmp_path / "first"])))
    filing = fuzzer.filing
    assert filing.counts_as_known(_wrong_in(REDUCED)) and not filing.counts_as_known(_wrong_in(NO_FORMAT))
    _hit(fuzzer, _wrong_in(REDUCED))  # has the format spec the known bug needs: a hit of it
    assert not fuzzer.store.findings and fuzzer.stats.known == 1
    _hit(fuzzer, _wrong_in(NO_FORMAT))  # no format spec: not that bug
    _hit(fuzzer, _wrong_in(NO_FORMAT.replace("* 2", "* 3")))  # another such hit joins it
    [finding] = fuzzer.store.findings.values()
    assert finding.is_new and finding.hits == 2 and fuzzer.stats.known == 1
    assert filing.snapshot()["told_apart"] == 2
    fuzzer.save(force=True)  # counted from what was filed: a resumed campaign counts on from there
    assert Filing(FindingStore(tmp_path / "second")).snapshot()["told_apart"] == 2
    assert finding.signature.unlike and finding.signature.as_run() == Signature.of(_wrong())
    assert finding.apart["lacks"] == {str(known_dir.resolve()): ["the format spec `:03d`"]}
    readme = (tmp_path / "second" / finding.directory / "README.md").read_text()
    assert "unlike the known bugs of its signature" in readme and ":03d" in readme
    assert "[unlike the known bugs of it]" in finding.signature.describe()
    # the next campaign knows both: a hit lacking what each needs is told apart from both
    # (the second was never reduced: nothing to tell it by, so its signature's hits are known)
    both = KnownBugs.load([tmp_path / "first", tmp_path / "second"])
    assert both.by_signature(Signature.of(_wrong())) is not None
    assert both.told_apart(Signature.of(_wrong()), lambda: _present(NO_FORMAT)) is None


def _present(source: str, configuration: str = "default", graph_broke: bool = False):  # type: ignore[no-untyped-def]
    from mutator.findings.needs import Present
    from mutator.reduce.constructs import construct_names

    return Present.of(construct_names(source), configuration, graph_broke=graph_broke)


def test_a_known_wrong_result_is_told_apart_only_where_every_known_bug_of_it_has_something_to_tell_by(
        tmp_path: Path):
    signature = Signature.of(_wrong())
    _known_wrong_result(tmp_path / "unreduced", None)
    assert KnownBugs.load([tmp_path / "unreduced"]).told_apart(signature, lambda: _present(NO_FORMAT)) is None
    _known_wrong_result(tmp_path / "nothing", [])  # its reduction found nothing needed
    assert KnownBugs.load([tmp_path / "nothing"]).told_apart(signature, lambda: _present(NO_FORMAT)) is None
    _known_wrong_result(tmp_path / "format", ["the format spec `:03d`"])
    _known_wrong_result(tmp_path / "break", ["a graph break"])
    known = KnownBugs.load([tmp_path / "format", tmp_path / "break"])
    apart = known.told_apart(signature, lambda: _present(NO_FORMAT))
    assert apart is not None and len(apart.lacks) == 2  # lacks what each of the two needs
    assert known.told_apart(signature, lambda: _present(NO_FORMAT, graph_broke=True)) is None  # Dynamo broke it
    assert known.told_apart(signature, lambda: _present(NO_FORMAT, "forced-graph-breaks")) is None
    assert known.told_apart(signature, lambda: _present(REDUCED)) is None  # has the format spec
    assert known.told_apart(CRASH, lambda: _present(NO_FORMAT)) is None  # a crash site tells bugs apart itself
    asked: list[str] = []
    KnownBugs.load([tmp_path / "unreduced"]).told_apart(signature, lambda: asked.append("x") or _present(NO_FORMAT))
    assert not asked  # the program is read only where it can tell


def test_what_a_program_has_of_the_constructs_a_known_bug_needs():
    from mutator.findings.needs import Present

    has = Present.of(["`@wrapper`", "base `Mixin`", "`Bag.helper`", "`Bag.__len__`", "a `no_grad` block",
                      "`getattr(..., '__dict__')`"], "graph-dedup")
    # named by the program's own names: any of its kind will do (another program names it otherwise)
    assert has.has("`@counted`") and has.has("base `Other`") and has.has("`<class>.forward`")
    # named by Python or a library: that one
    assert has.has("`<class>.__len__`") and not has.has("`<class>.__getattr__`")
    assert not has.has("`@functools.wraps`") and not has.has("base `torch.Tensor`") and not has.has("base `dict`")
    assert has.has("a `<user>` block") and has.has("`getattr(..., '__dict__')`") and not has.has("`vars`")
    assert has.has("the configuration graph-dedup (use_graph_deduplication = True)")
    assert not has.has("the configuration dynamic (assume_static_by_default = False)")
    assert not has.has("a graph break") and Present.of([], "default", graph_broke=True).has("a graph break")
    assert Present.of([], "dynamic").has("`dynamic=True`") and not has.has("`dynamic=True`")
    assert has.lacks(["`vars`", "`@counted`", "a graph break"]) == ["`vars`", "a graph break"]
