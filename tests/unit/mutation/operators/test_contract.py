"""What every operator promises, checked over every operator and every shipped seed."""

from __future__ import annotations

import random
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import libcst.matchers as m
import pytest

from mutator.mutation.context import MutationContext
from mutator.mutation.mutator import MutantBuilder, Mutator, Recipe
from mutator.mutation.operator import FAMILIES, Declined, Mutant, Operator, Step, apply, hooked_types
from mutator.mutation.registry import all_operators
from mutator.core.program import load_programs

SEEDS = Path(__file__).resolve().parents[4] / "seeds"
LEAF_CLASSES = [f for f in FAMILIES if f not in ("O", "X")]
RNG_SEEDS = (0, 1)


@lru_cache(maxsize=None)
def seed_contexts() -> tuple[MutationContext, ...]:
    programs, errors = load_programs([SEEDS])
    assert not errors
    return tuple(MutationContext.of(p) for p in programs)


def test_ids_descriptions_and_families():
    ops = all_operators()
    assert len({op.id for op in ops}) == len(ops)
    for op in ops:
        assert re.fullmatch(r"(A[1-4]|B[12]|C|D|E[1-4]|F[12]|G[1-3]|O|S|X)\.[a-z][a-z0-9_]*", op.id), op.id
        assert op.DESCRIPTION.strip() and "\n" not in op.DESCRIPTION, op.id
        assert op.DESCRIPTION.endswith("."), op.id


def test_every_leaf_class_has_three_operators():
    per_family = Counter(op.family for op in all_operators())
    assert {f: per_family[f] for f in LEAF_CLASSES if per_family[f] < 3} == {}
    assert sum(per_family[f] for f in LEAF_CLASSES) >= 51


@pytest.mark.parametrize("op", all_operators(), ids=lambda op: op.id)
def test_operator_output_always_compiles_and_records_provenance(op):
    applied = 0
    contexts = seed_contexts()
    # one RNG seed per program, the seeds taking turns: both seeds across the corpus, at half
    # the cost of both on every program (this is the unit suite's longest test); a splice
    # takes its part from one of three seeds further on, the first it applies with
    for i, ctx in enumerate(contexts):
        donors = [contexts[(i * 7 + k) % len(contexts)] for k in (3, 4, 5)] if op.NEEDS_DONOR else [None]
        for seed in RNG_SEEDS[i % len(RNG_SEEDS):][:1]:
            for donor in donors:
                result = apply(op, ctx, random.Random(seed), donor=donor)
                if isinstance(result, Mutant):
                    break
            if isinstance(result, Declined):
                assert "invalid program" not in result.reason and "operator failed" not in result.reason, \
                    f"{ctx.program.name}: {result.reason}"
                continue
            applied += 1
            compile(result.program.source, result.program.name, "exec")
            assert result.program.form is ctx.program.form
            assert [s.op for s in result.steps] == [op.id] and result.steps[0].site
    assert applied > 0, f"{op.id} applies to no shipped seed"


SHARES = 15


def test_counting_only_the_hooked_nodes_finds_every_site_in_order():
    """The counting pass walks only the nodes an operator's hooks fire on and their
    ancestors; it must find exactly the sites, in the order, that a walk of the whole
    target finds (the chosen site, and so every recipe's mutant, depends on both)."""
    pruned, contexts = 0, seed_contexts()
    for k, op in enumerate(all_operators()):
        for ctx in contexts[k % SHARES::SHARES]:  # each operator on a fifteenth of the seeds, every seed by some
            full = op(ctx, random.Random(0))
            full._path = ctx.reaching(op.TARGET)
            ctx.module.visit(full)
            hooked = hooked_types(op, full)
            counter = op(ctx, random.Random(0))
            counter._path = ctx.reaching(op.TARGET, hooked=hooked)
            if counter._path is None or counter._path:
                ctx.module.visit(counter)
            assert [id(n) for n in counter._candidates] == [id(n) for n in full._candidates], \
                f"{op.id} on {ctx.program.name}"
            whole = ctx.reaching(op.TARGET)
            pruned += hooked is not None and (whole is None or len(counter._path) < len(whole))
    assert pruned > 0


class _Hooks(Operator):  # no `name`: never registered, never applied by the other tests
    family = "X"

    def visit_Subscript_slice(self, node):  # type: ignore[no-untyped-def]
        return None

    def leave_Call(self, original_node, updated_node):  # type: ignore[no-untyped-def]
        return updated_node

    @m.leave(m.For())
    def on_for(self, original_node, updated_node):  # type: ignore[no-untyped-def]
        return updated_node


class _Generic(_Hooks):
    def on_leave(self, original_node, updated_node):  # type: ignore[no-untyped-def]
        return updated_node


class _Vague(Operator):
    family = "X"

    @m.leave(m.OneOf(m.Name(), m.Attribute()))
    def on_either(self, original_node, updated_node):  # type: ignore[no-untyped-def]
        return updated_node


def test_hooked_types_reads_hooks_and_matchers_and_gives_up_on_generic_hooks():
    ctx = seed_contexts()[0]
    assert hooked_types(_Hooks, _Hooks(ctx, random.Random(0))) == {"Subscript", "Call", "For"}
    assert hooked_types(_Generic, _Generic(ctx, random.Random(0))) is None
    assert hooked_types(_Vague, _Vague(ctx, random.Random(0))) is None


def test_mutator_stacks_operators_and_keeps_provenance():
    mutator = Mutator(all_operators(), max_stack=3)
    rng = random.Random(7)
    depths = Counter()
    for ctx in seed_contexts()[:20]:
        mutant = mutator.mutate(ctx.program, rng)
        assert isinstance(mutant, Mutant)
        compile(mutant.program.source, "m.py", "exec")
        depths[len(mutant.steps)] += 1
        assert mutant.provenance.count("@") == len(mutant.steps)
    assert depths[1] > 0 and sum(n for d, n in depths.items() if d > 1) > 0


def test_usefulness_feedback_shifts_choice_within_a_family():
    family = [op for op in all_operators() if op.family == "E2"]
    mutator = Mutator(family)
    useful, useless = family[0], family[1]
    for _ in range(50):
        mutator.stats[useful.id].tries += 1
        mutator.stats[useful.id].applied += 1
        mutator.stats[useless.id].tries += 1
    fake = Mutant(seed_contexts()[0].program, (Step(useful.id, "fn:1"),))
    for _ in range(30):
        mutator.record(fake, valid=True, new_features=True, finding=False)
    assert mutator.stats[useful.id].weight() > 10 * mutator.stats[useless.id].weight()
    rng = random.Random(0)
    chosen = Counter(mutator.choose(rng).id for _ in range(2000))
    assert chosen[useful.id] > 5 * max(1, chosen[useless.id])
    assert all(chosen[op.id] > 0 for op in family if op is not useless)  # untried ones keep a fair chance


def test_recent_yield_shifts_choice_between_families_and_forgets():
    ops = [op for op in all_operators() if op.family in ("E2", "B1")]
    mutator = Mutator(ops)
    e2 = next(op for op in ops if op.family == "E2")
    program = seed_contexts()[0].program
    rng = random.Random(0)
    assert 800 < Counter(mutator.choose(rng).family for _ in range(2000))["E2"] < 1200  # untried: uniform

    def feed(n: int, paid: bool) -> Counter:
        for _ in range(n):
            mutator.record(Mutant(program, (Step(e2.id, "fn:1"),)), valid=True, new_features=paid, finding=False)
        return Counter(mutator.choose(rng).family for _ in range(2000))

    barren = feed(40, paid=False)
    assert barren["B1"] > 5 * barren["E2"] and barren["E2"] > 0  # a barren family is still tried
    recovered = feed(40, paid=True)
    assert recovered["E2"] > 800  # the average forgets: a family that pays again gets its share back


def test_a_recipe_rebuilds_the_same_mutant_in_another_builder():
    """The driver plans, a worker builds: the mutant depends only on the parent and the recipe."""
    mutator = Mutator(all_operators(), max_stack=3)
    rng = random.Random(3)
    for ctx in seed_contexts()[:12]:
        recipe = mutator.plan(rng)
        assert Recipe.from_json(recipe.as_json()) == recipe
        here = MutantBuilder(all_operators()).build(ctx.program, recipe)
        elsewhere = MutantBuilder(all_operators(), cache=1)
        elsewhere.build(seed_contexts()[-1].program, mutator.plan(rng))  # another program parsed first
        there = elsewhere.build(ctx.program, recipe)
        assert here.mutant is not None and there.mutant is not None
        assert here.mutant.program.source == there.mutant.program.source
        assert here.mutant.steps == there.mutant.steps and here.tried == there.tried


def test_built_counts_every_operator_tried_and_the_ones_applied():
    family = [op for op in all_operators() if op.family == "E2"]
    mutator = Mutator(family, max_stack=1)
    program = seed_contexts()[0].program
    nowhere = "X.no_such_operator"  # an id the builder does not know: tried, never applied
    built = mutator.builder.build(program, Recipe(((nowhere, family[0].id, family[1].id),), seed=1))
    mutator.built(built)
    assert built.tried[0] == nowhere
    assert built.mutant is not None and [s.op for s in built.mutant.steps] == [built.tried[-1]]
    assert mutator.stats[nowhere].tries == 1 and mutator.stats[nowhere].applied == 0
    assert sum(u.tries for u in mutator.stats.values()) == len(built.tried)
    assert mutator.stats[built.tried[-1]].applied == 1
    empty = mutator.builder.build(program, Recipe(((nowhere,),), seed=1))
    assert empty.mutant is None and empty.tried == (nowhere,)


def test_a_splice_recipe_carries_its_donor_and_rebuilds_the_same_mutant_elsewhere():
    """A worker that never parsed the donor builds the same splice: the recipe holds it (and
    its JSON, so a queue sidecar rebuilds it too); a recipe without splices holds no donor."""
    mutator = Mutator([op for op in all_operators() if op.family in ("S", "X")], max_stack=2)  # splices: half
    rng = random.Random(5)
    contexts = seed_contexts()
    spliced = 0
    for k in range(60):
        parent, donor = contexts[k % len(contexts)].program, contexts[(k * 11 + 5) % len(contexts)].program
        recipe = mutator.plan(rng, donor=donor)
        uses_splice = any(op.startswith("S.") for step in recipe.plan for op in step)
        assert (recipe.donor is donor) == uses_splice
        assert Recipe.from_json(recipe.as_json()) == recipe
        here = MutantBuilder(all_operators()).build(parent, recipe)
        there = MutantBuilder(all_operators(), cache=1).build(parent, Recipe.from_json(recipe.as_json()))
        assert (here.mutant is None) == (there.mutant is None)
        if here.mutant is not None:
            assert here.mutant.program.source == there.mutant.program.source
            spliced += any(s.op.startswith("S.") for s in here.mutant.steps)
    assert spliced >= 5


def test_without_a_donor_or_with_splice_off_no_splice_is_planned():
    rng = random.Random(1)
    on, off = Mutator(all_operators()), Mutator(all_operators(), splice=False)
    donor = seed_contexts()[0].program
    assert on.splicing and not off.splicing
    assert not any(op.NEEDS_DONOR for op in off.operators)
    for _ in range(200):
        for recipe in (on.plan(rng), off.plan(rng, donor=donor)):
            assert recipe.donor is None and not any(op.startswith("S.") for step in recipe.plan for op in step)
    assert any(on.plan(rng, donor=donor).donor is donor for _ in range(50))
