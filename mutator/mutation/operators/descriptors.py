"""A4: descriptors (properties, user descriptors, caches); method binding lives in bound_methods.py.

Routers pass a value of the region through a property (setter, getter, deleter, or
property() used through fget/fset/__get__), a user descriptor (data, non-data, one that
binds methods), or functools caches (cached_property, lru_cache, cache).
"""

from __future__ import annotations

from mutator.mutation.operators._routing import HelperRouter

_PROPERTIES = (
    # getter, setter and a deleter that changes what the getter computes afterwards
    """
class $Holder:
    def __init__(self):
        self.scale = 2.0

    @property
    def value(self):
        return $scale(self._raw, 1.0 / self.scale)

    @value.setter
    def value(self, v):
        self._raw = $scale(v, self.scale)

    @value.deleter
    def value(self):
        self.scale = 4.0


def $route(value):
    holder = $Holder()
    holder.value = value
    del holder.value
    return $scale(holder.value, 2.0)
""",
    # property() built from functions, used through the class: fset, fget and __get__
    """
def $get_value(self):
    return $scale(self._raw, 0.5)


def $set_value(self, v):
    self._raw = $scale(v, 2.0)


class $Holder:
    value = property($get_value, $set_value)


def $route(value):
    holder = $Holder()
    type(holder).value.fset(holder, value)
    first = $Holder.value.__get__(holder, $Holder)
    return type(holder).value.fget(holder) if first is not None else first
""",
    # a subclass replaces only the getter of its base's property; the base setter still runs
    """
class $HolderBase:
    @property
    def value(self):
        return self._raw

    @value.setter
    def value(self, v):
        self._raw = $scale(v, 2.0)


class $Holder($HolderBase):
    @$HolderBase.value.getter
    def value(self):
        return $scale(self._raw, 0.5)


def $route(value):
    holder = $Holder()
    holder.value = value
    return holder.value
""",
)


class RouteThroughProperty(HelperRouter):
    family = "A4"
    name = "route_through_property"
    DESCRIPTION = ("Pass a value of the region through a property: setter, getter and deleter, property() used via "
                   "fget/fset/__get__, or a subclass that replaces only the getter.")
    TEMPLATES = _PROPERTIES


_DESCRIPTORS = (
    # a data descriptor that names its storage slot in __set_name__
    """
class $Scaled:
    def __init__(self, factor):
        self.factor = factor

    def __set_name__(self, owner, name):
        self.slot = "_" + name + "_raw"

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return $scale(getattr(obj, self.slot), 1.0 / self.factor)

    def __set__(self, obj, value):
        setattr(obj, self.slot, $scale(value, self.factor))


class $Holder:
    value = $Scaled(2.0)

    def __init__(self, value):
        self.value = value


def $route(value):
    return $Holder(value).value
""",
    # a non-data descriptor, then an instance attribute of the same name that shadows it
    """
class $Halving:
    def __get__(self, obj, objtype=None):
        if obj is None:
            return 0.5
        return $scale(obj.raw, 0.5)


class $Holder:
    value = $Halving()

    def __init__(self, value):
        self.raw = $scale(value, 4.0)


def $route(value):
    holder = $Holder(value)
    holder.value = holder.value
    return $scale(holder.value, $Holder.value)
""",
    # a descriptor that binds functions like methods do, with types.MethodType
    """
class $Bound:
    def __init__(self, func):
        self.func = func

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self.func
        return types.MethodType(self.func, obj)


class $Holder:
    def __init__(self, gain):
        self.gain = gain

    @$Bound
    def apply(self, value):
        return $scale(value, self.gain)


def $route(value):
    return $Holder(0.5).apply($Holder.apply($Holder(2.0), value))
""",
    # __delete__ on a data descriptor resets the stored value to the class default
    """
class $Resettable:
    def __set_name__(self, owner, name):
        self.slot = "_" + name

    def __get__(self, obj, objtype=None):
        return self if obj is None else obj.__dict__.get(self.slot, 1.0)

    def __set__(self, obj, value):
        obj.__dict__[self.slot] = value

    def __delete__(self, obj):
        obj.__dict__.pop(self.slot, None)


class $Holder:
    gain = $Resettable()


def $route(value):
    holder = $Holder()
    holder.gain = 2.0
    doubled = $scale(value, holder.gain)
    del holder.gain
    return $scale(doubled, holder.gain / 2.0)
""",
)


class RouteThroughDescriptor(HelperRouter):
    family = "A4"
    name = "route_through_descriptor"
    DESCRIPTION = ("Pass a value of the region through a user descriptor: data (__set_name__/__get__/__set__, "
                   "__delete__), non-data shadowed by an instance attribute, or one that binds methods.")
    TEMPLATES = _DESCRIPTORS


_CACHES = (
    # cached_property computes once per instance, and again after its cache is deleted
    """
class $Lazy:
    def __init__(self, value):
        self.value = value
        self.computed = 0

    @functools.cached_property
    def doubled(self):
        self.computed += 1
        return $scale(self.value, 2.0)


def $route(value):
    lazy = $Lazy(value)
    first = lazy.doubled
    again = lazy.doubled
    del lazy.doubled
    return $scale(lazy.doubled if again is first else first, 1.0 / (2 * lazy.computed - 2))
""",
    # lru_cache on a module-level function of hashable arguments, hit on every call after the first
    """
@functools.lru_cache(maxsize=None)
def $factor(power):
    return 2.0 ** power


def $route(value):
    return $scale($scale(value, $factor(3)), $factor(-3))
""",
    # lru_cache on a method of a module-level instance, and functools.cache on a staticmethod
    """
class $Table:
    def __init__(self, base):
        self.base = base

    @functools.lru_cache(maxsize=8)
    def factor(self, power):
        return self.base ** power

    @staticmethod
    @functools.cache
    def inverse(x):
        return 1.0 / x


$table = $Table(2.0)


def $route(value):
    k = $table.factor(2)
    return $scale($scale(value, k), $Table.inverse(k))
""",
)


class RouteThroughCache(HelperRouter):
    family = "A4"
    name = "route_through_cache"
    DESCRIPTION = ("Pass a value of the region through functools.cached_property (read, reread, deleted) or "
                   "lru_cache/cache on functions, methods and staticmethods.")
    TEMPLATES = _CACHES
