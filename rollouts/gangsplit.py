"""Split a gang's nodes into as few waves as its replica and rack caps force (pure).

Each node sits in one DP replica and one rack; a wave may take at most
``per_dp_replica`` nodes of a replica and ``per_rack`` of a rack. Seen as a bipartite
multigraph (replicas on one side, racks on the other, a node an edge), a wave is a
subgraph in which every replica has at most its cap of edges and every rack at most
its own. With ``k = max(ceil(nodes in a domain / its cap))`` over both kinds, the
nodes split into exactly ``k`` such waves: split every vertex of cap ``c`` into ``c``
copies sharing its edges round-robin (each copy then has degree at most ``k``), and
colour the edges with ``k`` colours (König: a bipartite multigraph of maximum degree
``k`` has a proper ``k``-edge-colouring), found by swapping alternating two-colour
paths. Each colour is one wave's share; taking a whole colour leaves nodes that
split into ``k - 1``, so a gang whose replicas span racks is drained ``k`` times,
not more. A greedy fill can strand a replica behind a full rack and need more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rollouts.caps import Limits
from rollouts.topology import Domain, Seat

Vertex = tuple[str, str, int]  # (side, domain value, copy)
_SIDES = ((Domain.dp_replica, "replica"), (Domain.rack, "rack"))


def _ends(
    nodes: Sequence[str], seat_of: Mapping[str, Seat], limits: Limits
) -> dict[str, tuple[Vertex, Vertex]]:
    """Each node's two vertex copies; an uncapped side is the node's own vertex."""
    seen: dict[tuple[str, str], int] = {}
    ends: dict[str, tuple[Vertex, Vertex]] = {}
    for node in nodes:
        pair: list[Vertex] = []
        for domain, side in _SIDES:
            cap = limits.domains.get(domain)
            where = seat_of[node].domains.get(domain)
            if cap is None or where is None:
                pair.append((side, "=" + node, 0))
                continue
            index = seen.get((side, where), 0)
            seen[(side, where)] = index + 1
            pair.append((side, where, index % cap))
        ends[node] = (pair[0], pair[1])
    return ends


def colour_classes(
    nodes: Sequence[str], seat_of: Mapping[str, Seat], limits: Limits
) -> list[list[str]]:
    """``nodes`` in the fewest classes that each respect the replica and rack caps,
    largest first (ties: in ``nodes`` order); every node in exactly one class."""
    ends = _ends(nodes, seat_of, limits)
    degree: dict[Vertex, int] = {}
    for pair in ends.values():
        for vertex in pair:
            degree[vertex] = degree.get(vertex, 0) + 1
    colours = max(degree.values(), default=0)
    at: dict[Vertex, dict[int, str]] = {v: {} for v in degree}  # vertex -> colour -> node
    colour_of: dict[str, int] = {}
    for node in nodes:
        u, v = ends[node]
        a = next(c for c in range(colours) if c not in at[u])
        b = next(c for c in range(colours) if c not in at[v])
        if a not in at[v]:
            _paint(at, colour_of, ends, node, a)
            continue
        _swap_path(at, colour_of, ends, v, a, b)
        _paint(at, colour_of, ends, node, a)
    classes: list[list[str]] = [[] for _ in range(colours)]
    for node in nodes:
        classes[colour_of[node]].append(node)
    order = {n: i for i, n in enumerate(nodes)}
    found = [c for c in classes if c]
    return sorted(found, key=lambda c: (-len(c), order[c[0]]))


def _paint(
    at: dict[Vertex, dict[int, str]],
    colour_of: dict[str, int],
    ends: Mapping[str, tuple[Vertex, Vertex]],
    node: str,
    colour: int,
) -> None:
    colour_of[node] = colour
    for vertex in ends[node]:
        at[vertex][colour] = node


def _swap_path(
    at: dict[Vertex, dict[int, str]],
    colour_of: dict[str, int],
    ends: Mapping[str, tuple[Vertex, Vertex]],
    start: Vertex,
    a: int,
    b: int,
) -> None:
    """Swap colours ``a`` and ``b`` along the alternating path from ``start`` that
    begins with colour ``a``; afterwards ``a`` is free at ``start``. In a bipartite
    graph the path never reaches the vertex where ``a`` was free."""
    path: list[str] = []
    vertex, colour = start, a
    while colour in at[vertex]:
        node = at[vertex][colour]
        path.append(node)
        u, v = ends[node]
        vertex = v if vertex == u else u
        colour = b if colour == a else a
    for node in path:
        for vertex in ends[node]:
            at[vertex].pop(colour_of[node], None)
    for node in path:
        colour_of[node] = b if colour_of[node] == a else a
        for vertex in ends[node]:
            at[vertex][colour_of[node]] = node
