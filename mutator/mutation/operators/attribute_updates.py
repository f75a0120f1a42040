"""F1: uncaptured side effects on object attributes.

Functions of the compiled region count calls in new attributes of self or a user object,
cache a tensor in an attribute created on the first call, carry a tensor from one call
to the next through an attribute or the instance __dict__, and update class attributes.
The objects written to come from `ProgramFacts.receivers`: only ones known to accept
new attributes.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from mutator.mutation.operators._facts import NO_ATTR_METHODS, FactsOperator, FloatAssignmentSite
from mutator.mutation.operators._templates import insert_at_top, parse_lines
from mutator.mutation.tree import body_nodes


class AttrCounter(FactsOperator):
    family = "F1"
    name = "attr_counter"
    DESCRIPTION = "Count calls in a new attribute of self or a user object (getattr default, hasattr lazy init, __dict__, setattr)."

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        receivers = self.facts.receivers(original_node) if id(original_node) in self.ctx.region_ids else []
        if not receivers or not self.is_site(original_node):
            return updated_node
        r, c = self.rng.choice(receivers), self.fresh("calls")
        forms = [
            f'{r}.{c} = getattr({r}, "{c}", 0) + 1',
            f'if not hasattr({r}, "{c}"):\n    {r}.{c} = 0\n{r}.{c} += 1',
            f'{r}.__dict__["{c}"] = {r}.__dict__.get("{c}", 0) + 1',
            f'setattr({r}, "{c}", getattr({r}, "{c}", 0) + 1)',
        ]
        return insert_at_top(updated_node, parse_lines(self.rng.choice(forms)))


class LazyAttrCache(FloatAssignmentSite):
    family = "F1"
    name = "lazy_attr_cache"
    DESCRIPTION = "Lazily create an attribute from a tensor on the first call (hasattr/getattr/vars guard) and add it to that tensor."
    NEEDS_RECEIVER = True

    def follow(self, stmt, fn, name, value):  # type: ignore[no-untyped-def]
        r = self.rng.choice(self.facts.receivers(fn))
        c = self.fresh(f"{name}_first")
        reduce = self.rng.choice(["sum", "mean", "amax"])
        cls = self.facts.module_of(r, fn)
        guards = [f'not hasattr({r}, "{c}")', f'getattr({r}, "{c}", None) is None', f'"{c}" not in vars({r})']
        store = f"{r}.{c} = {name}.detach().{reduce}()"
        if cls is not None and cls.is_module and self.rng.random() < 0.4:
            guards = guards[:2]
            store = f'{r}.register_buffer("{c}", {name}.detach().{reduce}())'
        text = f"if {self.rng.choice(guards)}:\n    {store}\n{name} = {name} + {r}.{c}"
        return [stmt, *parse_lines(text)]


class AlternateAttr(FloatAssignmentSite):
    family = "F1"
    name = "alternate_attr"
    DESCRIPTION = "Create an attribute on one call and read then delete it on the next (del, delattr, __dict__.pop)."
    NEEDS_RECEIVER = True

    def follow(self, stmt, fn, name, value):  # type: ignore[no-untyped-def]
        r = self.rng.choice(self.facts.receivers(fn))
        c = self.fresh(f"{name}_carry")
        delete = self.rng.choice([f"del {r}.{c}", f'delattr({r}, "{c}")', f'{r}.__dict__.pop("{c}")'])
        text = (f'if hasattr({r}, "{c}"):\n    {name} = {name} + {r}.{c}\n    {delete}\n'
                f"else:\n    {r}.{c} = {name}.detach().mean()")
        return [stmt, *parse_lines(text)]


class DictEdit(FloatAssignmentSite):
    family = "F1"
    name = "dict_edit"
    DESCRIPTION = "Carry a tensor across calls through an object's __dict__ (update, setdefault, get/set) and read it back."
    NEEDS_RECEIVER = True

    def follow(self, stmt, fn, name, value):  # type: ignore[no-untyped-def]
        r = self.rng.choice(self.facts.receivers(fn))
        c = self.fresh(f"{name}_seen")
        forms = [
            f'{r}.__dict__.update({{"{c}": {name}.detach().sum()}})\n{name} = {name} - {r}.__dict__["{c}"] * 0.5',
            f'{r}.__dict__.setdefault("{c}", {name}.detach().sum())\n{name} = {name} + {r}.{c}',
            (f'{c} = vars({r}).get("{c}")\n{r}.__dict__["{c}"] = {name}.detach().mean()\n'
             f"if {c} is not None:\n    {name} = {name} + {c}"),
        ]
        return [stmt, *parse_lines(self.rng.choice(forms))]


class ClassAttrUpdate(FactsOperator):
    family = "F1"
    name = "class_attr_update"
    DESCRIPTION = "Mutate a class attribute from a method: a class-level counter, or an existing class value updated or shadowed."

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        owner = self.facts.owner_of(original_node)
        if (owner is None or not self.facts.is_method(original_node) or original_node.name.value in NO_ATTR_METHODS
                or not self.is_site(original_node)):
            return updated_node
        c, cls_name = self.fresh("class_calls"), owner.node.name.value
        forms = [f'type(self).{c} = getattr(type(self), "{c}", 0) + 1', f'{cls_name}.{c} = getattr({cls_name}, "{c}", 0) + 1']
        read = {n.attr.value for n in body_nodes(original_node)
                if m.matches(n, m.Attribute(m.Name("self") | m.Name(cls_name) | m.Call(m.Name("type")), m.Name()))}
        for attr, value in owner.class_scalars.items():
            if attr not in read:
                continue
            if m.matches(value, m.Float() | m.UnaryOperation(expression=m.Float())):
                forms.append(f"type(self).{attr} = type(self).{attr} * 0.5 + 0.25")
                if owner.open:
                    forms.append(f"self.{attr} = type(self).{attr} + 0.5")
            elif m.matches(value, m.Name("True") | m.Name("False")) and owner.open:
                forms.append(f"self.{attr} = not type(self).{attr}")
        return insert_at_top(updated_node, parse_lines(self.rng.choice(forms)))
