"""Tests of pyjax.tree_util / pyjax.tree.  Expected values were checked against JAX 0.10.2."""
import collections
import dataclasses
import functools
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pyjax.tree as jtree
import pyjax.tree_util as tu
from pyjax._src.tree_util import is_registered_node

P = collections.namedtuple("P", ["x", "y"])
Q = collections.namedtuple("Q", ["x", "y"])
OD = collections.OrderedDict
DD = collections.defaultdict


class Box:
    """A custom node with one child and an aux value, registered below."""

    def __init__(self, child, aux="meta"):
        self.child, self.aux = child, aux

    def __repr__(self):
        return f"Box({self.child!r}, {self.aux!r})"


tu.register_pytree_node(Box, lambda b: ((b.child,), b.aux), lambda aux, ch: Box(ch[0], aux))


# ------------------------------------------------------------------------------ flatten / repr

@pytest.mark.parametrize("tree, leaves, text", [
    (1, [1], "PyTreeDef(*)"),
    (None, [], "PyTreeDef(None)"),
    ((), [], "PyTreeDef(())"),
    ([], [], "PyTreeDef([])"),
    ({}, [], "PyTreeDef({})"),
    ("abc", ["abc"], "PyTreeDef(*)"),
    ((1,), [1], "PyTreeDef((*,))"),
    ([1, {"a": 2, "b": (3, 4)}, None], [1, 2, 3, 4], "PyTreeDef([*, {'a': *, 'b': (*, *)}, None])"),
    ({"b": 1, "a": 2, "c": 3}, [2, 1, 3], "PyTreeDef({'a': *, 'b': *, 'c': *})"),
    ({2: "x", 1: "y"}, ["y", "x"], "PyTreeDef({1: *, 2: *})"),
    ((None, [None]), [], "PyTreeDef((None, [None]))"),
    (P(1, (2, 3)), [1, 2, 3], "PyTreeDef(CustomNode(namedtuple[P], [*, (*, *)]))"),
    (OD([("b", 1), ("a", 2)]), [1, 2], "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))"),
    (DD(list, {"b": 1, "a": 2}), [2, 1],
     "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'b'))], [*, *]))"),
    (tu.Partial(max, 1, key=2), [1, 2],
     "PyTreeDef(CustomNode(Partial[<built-in function max>], [(*,), {'key': *}]))"),
    (Box([1, 2]), [1, 2], "PyTreeDef(CustomNode(Box[meta], [[*, *]]))"),
    (Box(1, ("s", 1)), [1], "PyTreeDef(CustomNode(Box[('s', 1)], [*]))"),
    (OD(), [], "PyTreeDef(CustomNode(OrderedDict[()], []))"),
])
def test_flatten_leaves_and_repr(tree, leaves, text):
    got_leaves, treedef = tu.tree_flatten(tree)
    assert got_leaves == leaves
    assert repr(treedef) == str(treedef) == text
    assert tu.tree_leaves(tree) == leaves
    assert tu.tree_structure(tree) == treedef


def test_non_container_types_are_leaves():
    arr = np.arange(3)
    class SubTuple(tuple):  # no _fields: not a namedtuple
        pass
    class SubList(list):
        pass
    class SubDict(dict):
        pass
    for x in [arr, np.float32(1), "s", b"b", {1, 2}, range(3), SubTuple((1, 2)), SubList([1]),
              SubDict(a=1), object]:
        leaves, treedef = tu.tree_flatten(x)
        assert leaves[0] is x and repr(treedef) == "PyTreeDef(*)"


def test_namedtuple_subclass_and_nested_in_tuple():
    class P2(P):
        pass
    assert repr(tu.tree_structure(P2(1, 2))) == "PyTreeDef(CustomNode(namedtuple[P2], [*, *]))"
    # A namedtuple inside a tuple of leaves must not be taken for a leaf.
    assert tu.tree_leaves((1, P(2, 3), "a")) == [1, 2, 3, "a"]
    assert repr(tu.tree_structure((P(1, 2),))) == (
        "PyTreeDef((CustomNode(namedtuple[P], [*, *]),))")


def test_unflatten_round_trip_and_dict_order():
    tree = [1, {"b": (2, P(3, None)), "a": OD(z=4, y=5)}, Box([6]), DD(int, {"q": 7})]
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves == [1, 4, 5, 2, 3, 6, 7]
    rebuilt = tu.tree_unflatten(treedef, [x * 10 for x in leaves])
    assert rebuilt[1]["b"] == (20, P(30, None))
    assert list(rebuilt[1]["a"].items()) == [("z", 40), ("y", 50)]
    assert list(rebuilt[1].keys()) == ["a", "b"]  # JAX rebuilds dicts in sorted-key order
    assert rebuilt[2].child == [60] and rebuilt[2].aux == "meta"
    assert rebuilt[3].default_factory is int and dict(rebuilt[3]) == {"q": 70}


def test_unflatten_accepts_iterables_and_checks_count():
    treedef = tu.tree_structure([1, (2, 3)])
    assert treedef.unflatten(iter([1, 2, 3])) == [1, (2, 3)]
    assert tu.tree_unflatten(treedef, (x for x in "abc")) == ["a", ("b", "c")]
    with pytest.raises(ValueError, match=r"^Too few leaves for PyTreeDef; expected 3, got 2$"):
        treedef.unflatten([1, 2])
    with pytest.raises(ValueError, match=r"^Too many leaves for PyTreeDef; expected 3\.$"):
        treedef.unflatten([1, 2, 3, 4])
    assert tu.tree_structure(None).unflatten([]) is None
    assert tu.tree_structure(5).unflatten(["x"]) == "x"


def test_unsortable_dict_keys():
    with pytest.raises(ValueError, match="Comparator raised exception while sorting pytree "
                                         "dictionary keys.") as info:
        tu.tree_flatten({1: "a", "b": 2})
    assert isinstance(info.value.__cause__, TypeError)


# ------------------------------------------------------------------------------ PyTreeDef

def test_treedef_properties():
    treedef = tu.tree_structure([1, {"a": 2, "b": (3, 4)}, None])
    assert (treedef.num_leaves, treedef.num_nodes) == (4, 8)
    assert repr(treedef.children()) == (
        "[PyTreeDef(*), PyTreeDef({'a': *, 'b': (*, *)}), PyTreeDef(None)]")
    assert [c.num_leaves for c in tu.treedef_children(treedef)] == [1, 3, 0]
    assert treedef.node_data() == (list, None)
    assert tu.tree_structure({"b": 1, "a": 2}).node_data() == (dict, ["a", "b"])
    assert tu.tree_structure(P(1, 2)).node_data() == (P, None)
    assert tu.tree_structure(OD(b=1)).node_data() == (OD, ("b",))
    assert tu.tree_structure(None).node_data() == (type(None), None)
    assert tu.tree_structure(1).node_data() is None
    assert tu.tree_structure(1).children() == []
    assert (tu.tree_structure(None).num_leaves, tu.tree_structure(None).num_nodes) == (0, 1)


def test_treedef_equality_and_hash():
    s = tu.tree_structure
    assert s({"a": 1, "b": 2}) == s({"b": 3, "a": 4})
    assert hash(s({"a": 1, "b": 2})) == hash(s({"b": 3, "a": 4}))
    assert s((1, 2)) == s(("x", np.zeros(2)))
    assert hash(s((1, 2))) == hash(s((3, 4)))
    assert s((1, 2)) != s([1, 2])
    assert s([1, 2]) != s([1, None])
    assert s(None) != s(())
    assert s(1) == s("a")
    assert s((1, 2)) != 5
    assert s(P(1, 2)) != s(Q(1, 2)) and s(P(1, 2)) != s((1, 2))
    assert s(OD(a=1, b=2)) != s(OD(b=1, a=2))
    assert s(DD(list, a=1)) != s(DD(set, a=1))
    assert s(Box(1, "x")) == s(Box(2, "x")) and s(Box(1, "x")) != s(Box(1, "y"))
    assert s({1.0: 2}) == s({1: 2})
    assert len({s((1, 2)), s((3, 4)), s([1, 2])}) == 2


def test_treedef_with_unhashable_or_array_aux():
    assert hash(tu.tree_structure(Box(1, {"q": 1}))) == hash(tu.tree_structure(Box(2, {"q": 1})))
    assert tu.tree_structure(Box(1, [1])) == tu.tree_structure(Box(2, [1]))
    with pytest.raises(ValueError, match=re.escape(
            "Exception raised while checking equality of metadata fields of pytree. Make sure "
            "that metadata fields are hashable and have simple equality semantics. (Note: arrays "
            "cannot be passed as metadata fields!)")):
        tu.tree_structure(Box(1, np.arange(3))) == tu.tree_structure(Box(1, np.arange(3)))


def test_flat_tuple_fast_path_matches_general_structure():
    leaf = tu.tree_structure(0)
    flat = tu.tree_structure((1, 2))
    built = tu.treedef_tuple([leaf, leaf])
    assert flat == built and hash(flat) == hash(built)
    assert tu.tree_structure(((1, 2),)).children()[0] == flat
    leaves, treedef = tu.tree_flatten((1, None, (2,)))
    assert leaves == [1, 2] and repr(treedef) == "PyTreeDef((*, None, (*,)))"


def test_treedef_tuple_compose_and_iterable_tree():
    assert repr(tu.treedef_tuple([tu.tree_structure(1), tu.tree_structure((1, 2))])) == (
        "PyTreeDef((*, (*, *)))")
    assert repr(tu.treedef_tuple([])) == "PyTreeDef(())"
    composed = tu.tree_structure([1, 2]).compose(tu.tree_structure((1, None)))
    assert repr(composed) == "PyTreeDef([(*, None), (*, None)])"
    assert (composed.num_leaves, composed.num_nodes) == (2, 7)
    treedef = tu.tree_structure((1, {"a": 2, "b": None}))
    assert tu.build_tree(treedef, [1, [2, []]]) == (1, {"a": 2, "b": None})
    with pytest.raises(ValueError, match="^Arity mismatch between trees$"):
        treedef.from_iterable_tree([1, [2]])


def test_treedef_is_leaf():
    assert tu.treedef_is_leaf(tu.tree_structure(1))
    assert tu.treedef_is_leaf(tu.tree_structure(None))
    assert tu.treedef_is_leaf(tu.tree_structure(()))
    assert not tu.treedef_is_leaf(tu.tree_structure([1, 2]))
    assert not tu.treedef_is_leaf(tu.tree_structure((None,)))


# ------------------------------------------------------------------------------ flatten_up_to

def test_flatten_up_to_returns_subtrees():
    treedef = tu.tree_structure([1, (2, 3)])
    assert treedef.flatten_up_to([[1], ({"a": 2}, 3)]) == [[1], {"a": 2}, 3]
    assert tu.tree_structure({"a": 1, "b": 2}).flatten_up_to({"b": [1], "a": 2}) == [2, [1]]
    assert tu.tree_structure(1).flatten_up_to([1, {"a": 2}]) == [[1, {"a": 2}]]
    assert tu.tree_structure([1, 2]).flatten_up_to([1, None]) == [1, None]


NONE_HINT = ("\n\nIn previous releases of JAX, flatten-up-to used to consider None to be a "
             "tree-prefix of non-None values. To obtain the previous behavior, you can usually "
             "write:\n  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, b, "
             "is_leaf=lambda x: x is None)")


@pytest.mark.parametrize("prefix, full, message", [
    ([1, (2, 3)], [1, (2, 3, 4)], "Tuple arity mismatch: 3 != 2; tuple: (2, 3, 4)."),
    ([1, (2, 3)], [1, (2, 3), 4], "List arity mismatch: 3 != 2; list: [1, (2, 3), 4]."),
    ([1, (2, 3)], (1, (2, 3)), "Expected list, got (1, (2, 3))."),
    ([1, (2, 3)], [1, [2, 3]], "Expected tuple, got [2, 3]."),
    ((1, 2), P(1, 2), "Expected tuple, got P(x=1, y=2)."),
    ({"a": 1, "b": 2}, {"a": 1, "c": 2},
     "Dict key mismatch; expected keys: ['a', 'b']; present keys: ['a', 'c']."),
    ({"a": 1}, OD(a=1), "Expected dict, got OrderedDict([('a', 1)])."),
    ([None], [1], "Expected None, got 1." + NONE_HINT),
    (P(1, 2), (1, 2), "Expected named tuple, got (1, 2)."),
    (P(1, 2), Q(1, 2), "Named tuple type mismatch: expected type: <class '"
     + __name__ + ".P'>, tuple: Q(x=1, y=2)."),
    (Box(1, "x"), Box(1, "y"), "Mismatch custom node data: 'x' != 'y'; value: Box(1, 'y')."),
    (Box(1), 5, f"Custom node type mismatch: expected type: {Box!r}, value: 5."),
    (OD(a=1, b=2), OD(b=1, a=2), "Mismatch custom node data: ('a', 'b') != ('b', 'a'); "
     "value: OrderedDict([('b', 1), ('a', 2)])."),
    # JAX checks children right to left: the last mismatch is the one reported.
    ([(1,), (2,)], [[1], [2]], "Expected tuple, got [2]."),
])
def test_flatten_up_to_errors(prefix, full, message):
    with pytest.raises(ValueError) as info:
        tu.tree_structure(prefix).flatten_up_to(full)
    assert str(info.value) == message


def test_custom_node_arity_checked_after_aux():
    class Var:
        def __init__(self, children, aux):
            self.children, self.aux = children, aux

        def __repr__(self):
            return f"Var({self.children}, {self.aux!r})"
    tu.register_pytree_node(Var, lambda v: (v.children, v.aux), lambda a, c: Var(c, a))
    treedef = tu.tree_structure(Var((1, 2), "x"))
    with pytest.raises(ValueError, match=re.escape(
            "Custom type arity mismatch: 1 != 2; value: Var((1,), 'x').")):
        treedef.flatten_up_to(Var((1,), "x"))
    with pytest.raises(ValueError, match="^Mismatch custom node data: 'x' != 'y'"):
        treedef.flatten_up_to(Var((1,), "y"))


# ------------------------------------------------------------------------------ tree_map

def test_tree_map_basic():
    assert tu.tree_map(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)]) == [11, (22, 33)]
    assert tu.tree_map(lambda x, y: (x, y), [1, 2], [(1, 2), {"a": 3}]) == [
        (1, (1, 2)), (2, {"a": 3})]
    assert tu.tree_map(lambda x: x, None) is None
    assert tu.tree_map(lambda x: x * 2, {"b": 1, "a": [2, None]}) == {"a": [4, None], "b": 2}
    assert tu.tree_map(lambda x: x is None, [1, None], is_leaf=lambda x: x is None) == [
        False, True]
    assert jtree.map(lambda x: -x, P(1, 2)) == P(-1, -2)


def _map_error(*trees, **kw):
    with pytest.raises(ValueError) as info:
        tu.tree_map(lambda *xs: xs[0], *trees, **kw)
    assert info.value.__cause__ is None
    return str(info.value)


def test_tree_map_error_different_types():
    assert _map_error([1, (2, 3)], [1, [2, 3]]) == (
        "pytree structure error: different types at key path\n"
        "    tree_map tree[1]\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'tuple'>\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        "    <class 'list'>.")
    assert "tree_map tree[1]\n" in _map_error([1, None], [1, 2])


def test_tree_map_error_lengths():
    assert _map_error([[1, 2]], [[1, 2, 3]]) == (
        "pytree structure error: different lengths of list at key path\n"
        "    tree_map tree[0]\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type list of length "
        "2, but the full pytree has a subtree of the same type but of length 3.")


def test_tree_map_error_children():
    assert _map_error({"a": 1, "b": 2}, {"a": 1}) == (
        "pytree structure error: different numbers of pytree children at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'dict'>\n"
        "with 2 child keys\n"
        "    a b\n"
        "but at the same key path the full pytree has a subtree of the same type but with 1 "
        "child keys\n"
        "    a\n"
        "so the symmetric difference on key sets is\n"
        "    b")


def test_tree_map_error_metadata():
    assert _map_error({"a": 1, "b": 2}, {"a": 1, "c": 2}) == (
        "pytree structure error: different pytree metadata at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'dict'>\n"
        "with metadata\n"
        "    ('a', 'b')\n"
        "but at the same key path the full pytree has a subtree of the same type but with "
        "metadata\n"
        "    ('a', 'c')\n"
        "so the diff in the metadata at these pytree nodes is\n"
        "    - ('a', 'b')\n"
        "    ?        ^\n\n"
        "    + ('a', 'c')\n"
        "    ?        ^\n")
    assert _map_error(Box(1, "x"), Box(1, "y")).endswith(
        "so the diff in the metadata at these pytree nodes is\n    - x\n    + y")


def test_tree_map_error_in_third_tree_and_key_path():
    message = _map_error({"a": [1]}, {"a": [1]}, {"a": [1, 2]})
    assert message.startswith("pytree structure error: different lengths of list at key path\n"
                              "    tree_map tree['a']\n")


def test_tree_map_with_path():
    out = tu.tree_map_with_path(lambda p, x, y: (tu.keystr(p), x, y),
                                {"a": 1, "b": [2]}, {"a": 10, "b": [20]})
    assert out == {"a": ("['a']", 1, 10), "b": [("['b'][0]", 2, 20)]}
    with pytest.raises(ValueError, match=r"(?s)different types at key path\n"
                                         r"    tree_map_with_path tree\['b'\]\n"):
        tu.tree_map_with_path(lambda p, x, y: x, {"a": 1, "b": [2]}, {"a": 10, "b": 20})
    out = jtree.map_with_path(lambda p, x: len(p), [1, [2]],
                              is_leaf=lambda p, x: len(p) == 1, is_leaf_takes_path=True)
    assert out == [1, 1]


# ------------------------------------------------------------------------------ is_leaf

def test_is_leaf():
    assert tu.tree_flatten([1, (2, 3), None], is_leaf=lambda x: isinstance(x, tuple)) == (
        [1, (2, 3)], tu.tree_structure([1, 2, None]))
    leaves, treedef = tu.tree_flatten([1, (2, 3), None], is_leaf=lambda x: x is None)
    assert leaves == [1, 2, 3, None] and repr(treedef) == "PyTreeDef([*, (*, *), *])"
    assert tu.tree_leaves(None, is_leaf=lambda x: x is None) == [None]
    assert tu.tree_leaves([1, 2], is_leaf=lambda x: None) == [1, 2]  # None means "no"


def test_is_leaf_is_called_preorder_on_every_subtree():
    seen = []
    tu.tree_flatten([1, (2, None)], is_leaf=lambda x: seen.append(x))
    assert seen == [[1, (2, None)], 1, (2, None), 2, None]


@pytest.mark.parametrize("answer, shown", [(1, "1"), (np.bool_(True), "np.True_"), ("x", "'x'")])
def test_is_leaf_must_return_bool(answer, shown):
    with pytest.raises(ValueError, match=re.escape(
            f"is_leaf predicate returned a non-boolean value {shown}; expected a boolean")):
        tu.tree_flatten([1], is_leaf=lambda x: answer)


# ------------------------------------------------------------------------------ key paths

def test_key_entries():
    assert [repr(k) for k in [tu.SequenceKey(3), tu.DictKey("a"), tu.GetAttrKey("x"),
                              tu.FlattenedIndexKey(2)]] == [
        "SequenceKey(idx=3)", "DictKey(key='a')", "GetAttrKey(name='x')",
        "FlattenedIndexKey(key=2)"]
    assert [str(k) for k in [tu.SequenceKey(3), tu.DictKey("a"), tu.DictKey((1, "a")),
                             tu.GetAttrKey("x"), tu.FlattenedIndexKey(2)]] == [
        "[3]", "['a']", "[(1, 'a')]", ".x", "[<flat index 2>]"]
    assert tu.SequenceKey(3).idx == 3 and tu.DictKey("a").key == "a"
    assert tu.GetAttrKey("x").name == "x" and tu.FlattenedIndexKey(2).key == 2
    assert tu.SequenceKey(3) == tu.SequenceKey(3)
    assert hash(tu.SequenceKey(3)) == hash(tu.SequenceKey(3))
    assert tu.SequenceKey(3) != tu.FlattenedIndexKey(3)
    assert tu.DictKey("a") != tu.GetAttrKey("a") and tu.DictKey("a") != "a"
    assert tu.DictKey(1) == tu.DictKey(1.0)
    assert tu.SequenceKey(True).idx == 1
    with pytest.raises(AttributeError):
        tu.SequenceKey(1).idx = 2
    with pytest.raises(TypeError):
        tu.SequenceKey("a")
    with pytest.raises(TypeError):
        tu.GetAttrKey(1)
    with pytest.raises(TypeError):
        hash(tu.DictKey([1]))


def test_key_entries_support_match():
    def name(key):
        match key:
            case tu.SequenceKey(idx=i):
                return f"seq{i}"
            case tu.DictKey(k):
                return f"dict{k}"
            case tu.GetAttrKey(n):
                return f"attr{n}"
        return "other"
    assert [name(k) for k in (tu.SequenceKey(1), tu.DictKey("a"), tu.GetAttrKey("b"), 5)] == [
        "seq1", "dicta", "attrb", "other"]


def test_leaves_with_path_all_node_kinds():
    class WithKeys:
        def __init__(self, x, y):
            self.x, self.y = x, y
    tu.register_pytree_with_keys(
        WithKeys, lambda a: (((tu.GetAttrKey("x"), a.x), (tu.DictKey("yy"), a.y)), None),
        lambda aux, ch: WithKeys(*ch))
    tree = [1, {"b": (2, 3), "a": P(4, 5)}, OD(z=6, y=7), DD(int, {"q": 8}), Box(9),
            WithKeys(11, 12), tu.Partial(max, 13, k=14), None]
    got = [(tu.keystr(p), tu.keystr(p, simple=True, separator="/"), leaf)
           for p, leaf in tu.tree_leaves_with_path(tree)]
    assert got == [
        ("[0]", "0", 1), ("[1]['a'].x", "1/a/x", 4), ("[1]['a'].y", "1/a/y", 5),
        ("[1]['b'][0]", "1/b/0", 2), ("[1]['b'][1]", "1/b/1", 3), ("[2]['z']", "2/z", 6),
        ("[2]['y']", "2/y", 7), ("[3]['q']", "3/q", 8), ("[4][<flat index 0>]", "4/0", 9),
        ("[5].x", "5/x", 11), ("[5]['yy']", "5/yy", 12),
        ("[6][<flat index 0>][0]", "6/0/0", 13), ("[6][<flat index 1>]['k']", "6/1/k", 14)]
    pairs, treedef = tu.tree_flatten_with_path(tree)
    assert treedef == tu.tree_structure(tree)
    assert pairs[0] == ((tu.SequenceKey(0),), 1)
    assert tu.tree_leaves_with_path(1) == [((), 1)]
    assert tu.tree_leaves_with_path(None) == []


def test_leaves_with_path_is_leaf():
    tree = [1, [2]]
    expected = [((tu.SequenceKey(0),), 1), ((tu.SequenceKey(1),), [2])]
    assert tu.tree_leaves_with_path(tree, is_leaf=lambda x: x == [2]) == expected
    assert jtree.leaves_with_path(tree, is_leaf=lambda p, x: len(p) == 1,
                                  is_leaf_takes_path=True) == expected


def test_keystr():
    path = (tu.DictKey("a"), tu.GetAttrKey("b"), tu.SequenceKey(0), tu.FlattenedIndexKey(1))
    assert tu.keystr(path) == "['a'].b[0][<flat index 1>]"
    assert tu.keystr(path, simple=True, separator="/") == "a/b/0/1"
    assert tu.keystr((tu.SequenceKey(0), "foo", 3)) == "[0]foo3"
    assert tu.keystr(()) == ""


# ------------------------------------------------------------------------------ registration

def test_register_pytree_node_and_duplicates():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b
    tu.register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
    assert is_registered_node(Pair) and tu.is_tree_node(Pair)
    assert repr(tu.tree_structure(Pair(1, [2, 3]))) == (
        "PyTreeDef(CustomNode(Pair[None], [*, [*, *]]))")
    out = tu.tree_map(lambda x: x + 1, Pair(1, 2))
    assert (type(out), out.a, out.b) == (Pair, 2, 3)
    for typ in (Pair, tuple, dict, type(None), OD):
        with pytest.raises(ValueError, match=re.escape(
                f"Duplicate custom PyTreeDef type registration for {typ}.")):
            tu.register_pytree_node(typ, lambda p: ((), None), lambda _, c: None)


def test_node_type_queries():
    assert tu.is_tree_node(list) and tu.is_tree_node(type(None)) and tu.is_tree_node(P)
    assert not tu.is_tree_node(int)
    assert is_registered_node(dict) and not is_registered_node(P) and not is_registered_node(int)


def test_unflatten_receives_children_tuple_and_flatten_result_checked():
    seen = []
    class Rec:
        def __init__(self, out):
            self.out = out
    def unflatten(aux, children):
        seen.append(type(children))
        return Rec(children)
    tu.register_pytree_node(Rec, lambda r: r.out, unflatten)
    treedef = tu.tree_structure(Rec(([1, 2], None)))
    treedef.unflatten([3, 4])
    assert seen == [tuple]
    assert tu.tree_leaves(Rec(((i for i in range(3)), "aux"))) == [0, 1, 2]
    with pytest.raises(ValueError, match=re.escape(
            "The to_iterable function for a custom PyTree node should return a (children, "
            "aux_data) tuple, got [[1, 2], 'aux']")):
        tu.tree_flatten(Rec([[1, 2], "aux"]))
    with pytest.raises(ValueError, match=re.escape(
            "should return a (children, aux_data) tuple where 'children' is iterable, got "
            "(5, 'aux')")):
        tu.tree_flatten(Rec((5, "aux")))


def test_registering_a_namedtuple_class_overrides_namedtuple_handling():
    R = collections.namedtuple("R", "a b")
    tu.register_pytree_node(R, lambda r: ((r.a,), r.b), lambda b, c: R(c[0], b))
    assert repr(tu.tree_structure(R(1, 2))) == "PyTreeDef(CustomNode(R[2], [*]))"


def test_register_pytree_node_class():
    @tu.register_pytree_node_class
    class NC:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def tree_flatten(self):
            return (self.a,), self.b

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(children[0], aux)
    assert repr(tu.tree_structure(NC([1, 2], "z"))) == "PyTreeDef(CustomNode(NC[z], [[*, *]]))"
    out = tu.tree_map(lambda x: x * 10, NC([1, 2], "z"))
    assert (out.a, out.b) == ([10, 20], "z")


def test_register_pytree_with_keys_class():
    @tu.register_pytree_with_keys_class
    class KC:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def tree_flatten_with_keys(self):
            return ((tu.GetAttrKey("a"), self.a), (tu.GetAttrKey("b"), self.b)), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)
    assert tu.tree_leaves(KC(1, 2)) == [1, 2]
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(KC(1, 2))] == [".a", ".b"]


def test_register_node_with_separate_keys_function():
    class W:
        def __init__(self, x, y):
            self.x, self.y = x, y
    tu.register_pytree_node(
        W, lambda w: ((w.x, w.y), None), lambda _, c: W(*c),
        lambda w: (((tu.GetAttrKey("x"), w.x), (tu.GetAttrKey("y"), w.y)), None))
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(W(1, 2))] == [".x", ".y"]


def test_register_static():
    @tu.register_static
    class S:
        def __init__(self, v):
            self.v = v

        def __repr__(self):
            return f"S({self.v})"

        def __eq__(self, other):
            return isinstance(other, S) and other.v == self.v

        def __hash__(self):
            return hash(self.v)
    leaves, treedef = tu.tree_flatten([S(1), 2])
    assert leaves == [2] and repr(treedef) == "PyTreeDef([CustomNode(S[S(1)], []), *])"
    assert tu.tree_map(lambda x: x + 1, [S(1), 2]) == [S(1), 3]


def test_register_dataclass_decorator_with_static_fields():
    @tu.register_dataclass
    @dataclasses.dataclass
    class D:
        x: object
        y: object
        op: str = dataclasses.field(default="add", metadata=dict(static=True))
        flag: bool = jtree.static(default=False)
    d = D(1, [2, 3], "mul")
    leaves, treedef = tu.tree_flatten(d)
    assert leaves == [1, 2, 3]
    assert repr(treedef) == "PyTreeDef(CustomNode(D[('mul', False)], [*, [*, *]]))"
    assert treedef.node_data() == (D, ("mul", False))
    assert tu.tree_map(lambda v: v * 10, d) == D(10, [20, 30], "mul")
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(d)] == [".x", ".y[0]", ".y[1]"]
    assert tu.tree_structure(D(1, 2)) == tu.tree_structure(D(5, 6))
    assert tu.tree_structure(D(1, 2)) != tu.tree_structure(D(1, 2, "sub"))
    with pytest.raises(ValueError, match=re.escape(
            "Mismatch custom dataclass node data: ('add', False) != ('sub', False); value: ")):
        tu.tree_structure(D(1, 2)).flatten_up_to(D(1, 2, "sub"))
    with pytest.raises(ValueError, match=re.escape(
            f"Custom dataclass node type mismatch: expected type: {D!r}, value: 5.")):
        tu.tree_structure(D(1, 2)).flatten_up_to(5)
    with pytest.raises(ValueError, match=re.escape(
            f"Duplicate custom dataclass PyTreeDef type registration for {D}.")):
        tu.register_dataclass(D)


def test_register_dataclass_explicit_fields_order_and_plain_class():
    @functools.partial(tu.register_dataclass, data_fields=["b", "a"], meta_fields=["m"])
    @dataclasses.dataclass
    class E:
        a: int
        m: str
        b: int
    assert tu.tree_flatten(E(1, "q", 2))[0] == [2, 1]
    assert repr(tu.tree_structure(E(1, "q", 2))) == "PyTreeDef(CustomNode(E[('q',)], [*, *]))"

    class Plain:
        def __init__(self, a, b):
            self.a, self.b = a, b
    tu.register_dataclass(Plain, data_fields=["a"], meta_fields=["b"])
    out = tu.tree_map(lambda v: -v, Plain(1, 2))
    assert (out.a, out.b) == (-1, 2)


def test_register_dataclass_errors():
    @dataclasses.dataclass
    class F:
        a: int
        b: int
        c: int = dataclasses.field(init=False, default=0)

    class NotDC:
        pass
    with pytest.raises(TypeError, match="data_fields and meta_fields are required when nodetype "
                                        "is not a dataclass"):
        tu.register_dataclass(NotDC)
    with pytest.raises(TypeError, match="must both be specified when either is specified"):
        tu.register_dataclass(F, data_fields=["a"])
    with pytest.raises(ValueError, match=re.escape(
            "data_fields and meta_fields must include all dataclass fields with ``init=True`` "
            "and only them. Missing fields: {'b'}. Add them to drop_fields to suppress this "
            "error.")):
        tu.register_dataclass(F, data_fields=["a"], meta_fields=[])
    with pytest.raises(ValueError, match=re.escape("Unexpected fields: {'c'}.")):
        tu.register_dataclass(F, data_fields=["a", "b", "c"], meta_fields=[])
    with pytest.raises(ValueError, match=re.escape(
            "data_fields and meta_fields must not overlap. Overlapping fields: {'b'}.")):
        tu.register_dataclass(F, data_fields=["a", "b"], meta_fields=["b"])
    tu.register_dataclass(F, data_fields=["a"], meta_fields=[], drop_fields=["b"])
    assert repr(tu.tree_structure(F(1, 2))) == "PyTreeDef(CustomNode(F[()], [*]))"


# ------------------------------------------------------------------------------ Partial

def test_partial_is_a_pytree():
    p = tu.Partial(pow, 2)
    assert isinstance(p, functools.partial)
    assert repr(p) == "Partial(<built-in function pow>, 2)"
    mapped = tu.tree_map(lambda x: x * 10, p)
    assert mapped(3) == 8000 and mapped.args == (20,)
    assert tu.tree_structure(tu.Partial(pow, 2)) == tu.tree_structure(tu.Partial(pow, 3))
    assert tu.tree_structure(tu.Partial(pow, 2)) != tu.tree_structure(tu.Partial(max, 3))
    assert repr(tu.tree_structure(tu.Partial(pow))) == (
        "PyTreeDef(CustomNode(Partial[<built-in function pow>], [(), {}]))")


def test_partial_of_partial_keeps_its_own_args():
    inner = functools.partial(pow, 2)
    p = tu.Partial(inner, 3)
    assert p() == 8
    assert tu.tree_leaves(p) == [3]  # the inner partial's 2 is static
    assert repr(p) == (
        "Partial(_HashableCallableShim(functools.partial(<built-in function pow>, 2)), 3)")
    assert p.func.func is pow and p.func.args == (2,)
    assert tu.tree_leaves(tu.Partial(tu.Partial(pow, 2), 3)) == [3]
    assert tu.tree_structure(tu.Partial(inner)) == tu.tree_structure(tu.Partial(inner))


# ------------------------------------------------------------------------------ reduce etc.

def test_reduce_all_transpose():
    add = lambda a, b: a + b
    assert tu.tree_reduce(add, [1, (2, 3)]) == 6
    assert jtree.reduce(add, [1, (2, 3)], 10) == 16
    assert tu.tree_reduce(add, [], None) is None
    with pytest.raises(TypeError):
        tu.tree_reduce(add, [])
    assert tu.tree_reduce_associative(add, [1, 2, 3, 4]) == 10
    assert jtree.reduce_associative(add, [], identity=0) == 0
    assert tu.tree_all([1, (2, 0)]) is False and jtree.all([]) is True
    assert tu.tree_all([[1, 0]], is_leaf=lambda x: isinstance(x, list) and len(x) == 2)
    outer, inner = tu.tree_structure([0, 0]), tu.tree_structure((0, 0, 0))
    tree = [(1, 2, 3), (4, 5, 6)]
    assert tu.tree_transpose(outer, inner, tree) == ([1, 4], [2, 5], [3, 6])
    assert jtree.transpose(outer, None, tree) == ([1, 4], [2, 5], [3, 6])
    with pytest.raises(TypeError, match=re.escape(
            "Mismatch\nPyTreeDef([(*, *, *), (*, *, *)])\n != \nPyTreeDef([(*, *), (*, *)])")):
        tu.tree_transpose(outer, tu.tree_structure((0, 0)), tree)


def test_broadcast_and_all_leaves():
    assert tu.tree_broadcast((1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0))) == (
        1, {"a": 2, "b": 2}, (3, 3))
    assert jtree.broadcast(5, [0, None, {"a": 1}]) == [5, None, {"a": 5}]
    with pytest.raises(ValueError, match=r"^pytree structure error: different lengths of tuple "
                                         r"at key path\n    broadcast_prefix prefix_tree\n"):
        tu.tree_broadcast((1, 2), (0, 0, 0))
    assert tu.all_leaves([1, 2, 3]) and tu.all_leaves([])
    assert not tu.all_leaves([1, None]) and not tu.all_leaves([1, (3,)])
    assert tu.all_leaves([1, (3,)], is_leaf=lambda x: isinstance(x, tuple))


def test_flatten_one_level():
    assert tu.flatten_one_level({"b": {"c": 3}, "a": [1, 2]}) == (([1, 2], {"c": 3}), ("a", "b"))
    assert tu.flatten_one_level(P(1, 2)) == ([1, 2], P)
    assert tu.flatten_one_level(None) == ((), None)
    assert tu.flatten_one_level(OD(b=1, a=2)) == ([1, 2], ("b", "a"))
    assert tu.flatten_one_level_with_keys([1, 2]) == (
        ((tu.SequenceKey(0), 1), (tu.SequenceKey(1), 2)), None)
    assert tu.flatten_one_level_with_keys(Box(7))[0] == [(tu.FlattenedIndexKey(0), 7)]
    with pytest.raises(ValueError, match="^can't tree-flatten type: <class 'int'>$"):
        tu.flatten_one_level(1)


def test_tree_module_aliases():
    tree = {"a": (1, 2)}
    assert jtree.leaves(tree) == [1, 2]
    assert jtree.structure(tree) == tu.tree_structure(tree)
    leaves, treedef = jtree.flatten(tree)
    assert jtree.unflatten(treedef, leaves) == tree
    assert jtree.flatten_with_path(tree)[0][0] == ((tu.DictKey("a"), tu.SequenceKey(0)), 1)


# ------------------------------------------------------------------------------ properties

_leaf_values = st.one_of(st.integers(), st.text(max_size=3), st.none(), st.floats(allow_nan=False))
_trees = st.recursive(
    _leaf_values,
    lambda kids: st.one_of(
        st.lists(kids, max_size=3),
        st.lists(kids, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=2), kids, max_size=3),
        st.builds(P, kids, kids),
        st.dictionaries(st.text(max_size=2), kids, max_size=3).map(OD)),
    max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(_trees)
def test_round_trip_and_structure_invariants(tree):
    leaves, treedef = tu.tree_flatten(tree)
    assert tu.tree_unflatten(treedef, leaves) == tree
    assert treedef.num_leaves == len(leaves)
    assert all(x is not None and repr(tu.tree_structure(x)) == "PyTreeDef(*)" for x in leaves)
    assert tu.tree_structure(tu.tree_map(lambda x: 0, tree)) == treedef
    assert hash(tu.tree_structure(tu.tree_map(lambda x: 0, tree))) == hash(treedef)
    assert treedef.flatten_up_to(tree) == leaves
    assert [leaf for _, leaf in tu.tree_leaves_with_path(tree)] == leaves
    assert tu.treedef_tuple(treedef.children()) == tu.tree_structure(tuple(
        tu.tree_unflatten(c, [0] * c.num_leaves) for c in treedef.children()))
