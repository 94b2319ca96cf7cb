#!/usr/bin/env python3
"""The page's import graph: imports in `src/` run one way, with no circles.

Reads every `src/**/*.rs`, builds the module tree from `src/lib.rs` (`mod`
declarations, inline `mod x { ... }` blocks included) and resolves every
path that names the crate: `use crate::…`, `use super::…`, `use self::…`,
the use trees (`{a, b::c, self}`, `as`, globs), `pub use` re-exports (and
private `use` bindings, which a child module can reach through `super::`),
and inline paths such as `crate::web::window()`. A path is followed through
every re-export to the file that *defines* the item it names, and ends an
arrow there and at every file whose re-export it passed through (but the
crate root's: `crate::clock` is a short path, not an import of `lib.rs`).
Comments and string literals are not read.

Then it checks the file-level graph (and, for the core and the catalogue
crates, that their modules have no circle either):

- no circle (a strongly connected set of files is printed as a chain);
- no arrow that runs back up the layering in LAYERS below: a file may
  import a file of a lower layer, or of its own layer; in the `view` layer
  only of its own room (a view never imports another view); the
  experiment and the web leaf (SEALED) import only their own layer;
- every file in `src/` has a layer, and every arrow in ALLOWED is still
  needed (the list can only shrink).

`cfg` attributes are ignored (a test module's imports count too). Run from
anywhere; exits 1 with the offending arrows.

    scripts/import-graph.py            check (what `make test` runs)
    scripts/import-graph.py --stats    also print the numbers: files, arrows,
                                       rooms, arrows among rooms, largest circle
    scripts/import-graph.py --arrows   also print every arrow with its layer
"""

import os
import re
import sys
import textwrap
from collections import defaultdict

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
# The core, the catalogue, the native crates (stampede-redis, its test
# harness stampede-fleet, and the test support both their tests use,
# stampede-testkit) have no layers, only the rule of no circles among the
# modules of their `src/` (a unit test module inside a file counts with its
# file): the core's mechanism runs one way, the catalogue stands on it, and
# so do the driver and its harness. Each crate's tests, examples and
# benches are crates of their own; what they may not do is compile another
# crate's files into themselves (CROSSING below).
CRATES = [
    "crates/stampede/src",
    "crates/catalogue/src",
    "crates/stampede-redis/src",
    "crates/stampede-fleet/src",
    "crates/stampede-testkit/src",
    "crates/stampede-relay/src",
]

# A `#[path = "..."]` that reaches out of its own crate's folder: another
# crate's file compiled in as a module of this one (the fleet's tests once
# took the cache's test helpers so; they are a crate now, stampede-testkit).
CROSSING = re.compile(r'#\[\s*path\s*=\s*"([^"]+)"\s*\]')
# Crossings still to remove, each with its reason, as
#     ("file that crosses", "file it takes"): "why",
# The check fails on an entry no longer there, so this list only shrinks.
CROSSING_ALLOWED = {
    ("crates/catalogue/tests/sentences.rs", "crates/stampede/tests/strategies/mod.rs"):
        "the core's proptest strategies, not yet a test-support crate of their own",
}


def crossing_problems():
    """Every `#[path]` in a crate (its src, tests, examples, benches) that
    names a file outside that crate's folder."""
    problems, seen = [], set()
    base = os.path.normpath(os.path.join(ROOT, ".."))
    for crate in sorted(set(os.path.dirname(c) for c in CRATES)):
        top = os.path.join(base, crate)
        for dirpath, _, names in os.walk(top):
            if "target" in dirpath.split(os.sep):
                continue
            for f in names:
                if not f.endswith(".rs"):
                    continue
                full = os.path.join(dirpath, f)
                text = open(full, encoding="utf-8").read()
                for m in CROSSING.finditer(text):
                    target = os.path.normpath(os.path.join(dirpath, m.group(1)))
                    if not target.startswith(top + os.sep):
                        line = text[: m.start()].count("\n") + 1
                        rel = os.path.relpath(full, base)
                        pair = (rel, os.path.relpath(target, base))
                        seen.add(pair)
                        if pair in CROSSING_ALLOWED:
                            continue
                        problems.append(
                            f"{rel}:{line}: #[path] takes {os.path.relpath(target, base)} from "
                            "another crate: share it as a crate (a dev-dependency) instead"
                        )
    for a, b in sorted(set(CROSSING_ALLOWED) - seen):
        problems.append(
            f"{a} -> {b} is allowed in CROSSING_ALLOWED but no longer crosses: remove it from the list"
        )
    return problems

# The layers, from the top. A file imports only files of lower layers or of
# its own layer, and a view only files of its own room (a room is a folder of
# `src/` or a file at its top). The `web` leaf imports nothing from the page.
ORDER = ["app", "view", "stage", "page", "experiment", "web"]
# Layers that import nothing of the page outside themselves: the experiment
# reads only the core (host-tested, no web types), the web leaf only the
# browser's bindings.
SEALED = {"experiment", "web"}
LAYERS = {
    # app: the crate's root, the binary, and the page that wires the views
    "lib.rs": "app",
    "main.rs": "app",
    "app.rs": "app",
    # views: each room is one view, and never imports another
    "panels/": "view",
    "lesson/": "view",
    "compare.rs": "view",
    "kit/": "view",
    "playlist.rs": "view",
    "qr.rs": "view",
    "embed.rs": "view",
    # the stage: the canvases, and the loop that advances the experiment
    # and draws them each frame
    "stage/": "stage",
    "engine.rs": "stage",
    # the page: what the views share (no view of its own) and the crash
    # screen
    "page/": "page",
    "panic.rs": "page",
    # the way to the room's relay (a WebSocket), shared by the kit and
    # presenter mode's vote
    "relay/": "page",
    # the experiment: the fleet being run, its clock and its link; no web types
    "experiment/": "experiment",
    # the web leaf: window, document, storage and time, and the DOM kit
    "web.rs": "web",
    "dom.rs": "web",
}

# Back-arrows still to be removed, each with its reason, as
#     ("lesson/drills.rs", "panels/knobs.rs"): "why it still runs back",
# The check fails on an entry whose arrow no longer runs back, so this list
# only shrinks. It is empty: every arrow runs one way.
ALLOWED = {
}

EXTERN = "<outside the crate>"
KEYWORDS = {"fn", "mut", "unsafe", "extern", "async", "const", "_"}


def strip(text):
    """The text with comments, strings and char literals blanked (same
    length, newlines kept), so that only code is read."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a, b):
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif (c in "rb") and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'(?:br|r)(#*)"', text[i:])
            if m:
                close = '"' + m.group(1)
                j = text.find(close, i + m.end())
                j = n if j < 0 else j + len(close)
                blank(i, j)
                i = j
            elif text.startswith('b"', i) or text.startswith("b'", i):
                i += 1
            else:
                i += 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            blank(i, j + 1)
            i = j + 1
        elif c == "'":
            if text.startswith("\\", i + 1):
                j = i + 2
                while j < n and text[j] != "'":
                    j += 2 if text[j] == "\\" else 1
                blank(i, j + 1)
                i = j + 1
            elif i + 2 < n and text[i + 2] == "'":
                blank(i, i + 3)
                i += 3
            else:
                i += 1  # a lifetime
        else:
            i += 1
    return "".join(out)


class Module:
    def __init__(self, name, file, parent):
        self.name, self.file, self.parent = name, file, parent
        self.children = defaultdict(list)  # name -> [Module] (cfg twins)
        self.items = set()  # names defined here
        self.bindings = defaultdict(list)  # name -> [path] from `use`
        self.globs = []  # [path] from `use path::*`

    def root(self):
        m = self
        while m.parent:
            m = m.parent
        return m


def parse_use_tree(s, pos, prefix, out):
    """Parses a use tree at s[pos:]; appends (path, binding name or '*')."""
    ws = re.compile(r"\s*")
    pos = ws.match(s, pos).end()
    path = list(prefix)
    while True:
        pos = ws.match(s, pos).end()
        if s.startswith("::", pos):
            pos += 2
            continue
        if s.startswith("{", pos):
            pos += 1
            while True:
                pos = ws.match(s, pos).end()
                if s.startswith("}", pos):
                    return pos + 1
                pos = parse_use_tree(s, pos, path, out)
                pos = ws.match(s, pos).end()
                if s.startswith(",", pos):
                    pos += 1
        if s.startswith("*", pos):
            out.append((path, "*"))
            return pos + 1
        m = re.compile(r"(?:r#)?([A-Za-z_]\w*)").match(s, pos)
        if not m:
            raise ValueError("cannot read a use tree at: " + s[pos : pos + 40])
        ident, pos = m.group(1), m.end()
        after = ws.match(s, pos).end()
        if s.startswith("::", after):
            path = path + [ident]
            pos = after
            continue
        name = ident
        m2 = re.compile(r"\s+as\s+([A-Za-z_]\w*)").match(s, pos)
        if m2:
            name, pos = m2.group(1), m2.end()
        if ident == "self":
            out.append((path, name if m2 else (path[-1] if path else "self")))
        else:
            out.append((path + [ident], name))
        return pos


class Crate:
    def __init__(self, root):
        self.root_dir = root
        self.files = {}  # rel path -> stripped text
        for dirpath, _, names in os.walk(root):
            for f in names:
                if f.endswith(".rs"):
                    full = os.path.join(dirpath, f)
                    rel = os.path.relpath(full, root).replace(os.sep, "/")
                    with open(full, encoding="utf-8") as fh:
                        self.files[rel] = strip(fh.read())
        self.uses = []  # (module, path, file, line, is_use)
        self.reached = set()
        self.lib = Module("crate", "lib.rs", None)
        self.load(self.lib, "lib.rs", "")
        if "main.rs" in self.files:
            self.main = Module("crate", "main.rs", None)
            self.load(self.main, "main.rs", "")

    def child_file(self, file, child_dir, name):
        for cand in (child_dir + name + ".rs", child_dir + name + "/mod.rs"):
            if cand in self.files:
                return cand
        raise SystemExit(f"import-graph: {file}: no file for `mod {name};`")

    def load(self, module, file, child_dir):
        """Reads `file` into `module`; `child_dir` is where its `mod x;` live."""
        self.reached.add(file)
        s = self.files[file]
        # A stack of open braces: (module, child_dir) for `mod x {`, None otherwise.
        stack = []
        tok = re.compile(
            r"(?P<mod>\bmod\s+(?:r#)?(?P<mname>[A-Za-z_]\w*)\s*(?P<mend>[;{]))"
            r"|(?P<use>\buse\b)"
            r"|(?P<item>\b(?:fn|struct|enum|const|static|type|trait|union)\s+(?:mut\s+)?(?:r#)?(?P<iname>[A-Za-z_]\w*))"
            r"|(?P<macro>\bmacro_rules!\s*(?P<macname>[A-Za-z_]\w*))"
            r"|(?P<path>(?<![\w:$])(?:crate|super|self|stampede_lab)(?:\s*::\s*(?:r#)?[A-Za-z_]\w*)+)"
            r"|(?P<open>\{)|(?P<close>\})"
        )

        def here():
            for entry in reversed(stack):
                if entry is not None:
                    return entry
            return (module, child_dir)

        def at_module_level():
            return not stack or stack[-1] is not None

        pos = 0
        while True:
            m = tok.search(s, pos)
            if not m:
                break
            pos = m.end()
            cur, cdir = here()
            line = s.count("\n", 0, m.start()) + 1
            if m.group("mod"):
                name = m.group("mname")
                if m.group("mend") == ";":
                    f = self.child_file(file, cdir, name)
                    child = Module(name, f, cur)
                    cur.children[name].append(child)
                    sub = f[: -len("mod.rs")] if f.endswith("mod.rs") else f[:-3] + "/"
                    self.load(child, f, sub)
                else:
                    child = Module(name, file, cur)
                    cur.children[name].append(child)
                    stack.append((child, cdir + name + "/"))
            elif m.group("use"):
                end = s.find(";", pos)
                trees = []
                parse_use_tree(s[pos:end], 0, [], trees)
                for path, name in trees:
                    self.uses.append((cur, path, file, line))
                    if at_module_level():
                        if name == "*":
                            cur.globs.append(path)
                        elif name != "_":
                            cur.bindings[name].append(path)
                pos = end + 1
            elif m.group("item"):
                if at_module_level() and m.group("iname") not in KEYWORDS:
                    cur.items.add(m.group("iname"))
                # `const fn x`: read `fn x` next
                pos = m.start() + len(m.group(0).split()[0])
            elif m.group("macro"):
                cur.items.add(m.group("macname"))
            elif m.group("path"):
                path = re.sub(r"\s|r#", "", m.group("path")).split("::")
                self.uses.append((cur, path, file, line))
            elif m.group("open"):
                stack.append(None)
            elif m.group("close"):
                if stack:
                    stack.pop()

    # ------------------------------------------------------------ resolving

    def resolve_path(self, ctx, path, seen):
        """The files defining what `path`, written in module `ctx`, names
        (EXTERN for an outside crate: std, leptos, stampede…); None when the
        crate has no such name."""
        head, rest = path[0], path[1:]
        heads = {"crate": ctx.root(), "stampede_lab": self.lib, "self": ctx}
        if head in heads:
            return self.resolve_in(heads[head], rest, seen) if rest else {heads[head].file}
        if head == "super":
            return self.resolve_path(ctx.parent, ["self"] + rest, seen)
        found = self.resolve_in(ctx, path, seen)
        return {EXTERN} if found is None else found

    def module_of(self, ctx, path):
        """The module of the crate a glob's path names, or None."""
        heads = {"crate": ctx.root(), "stampede_lab": self.lib, "self": ctx, "super": ctx.parent}
        if not path or path[0] not in heads:
            return None
        mod = heads[path[0]]
        for seg in path[1:]:
            if mod is None:
                return None
            if seg == "super":
                mod = mod.parent
                continue
            kids = mod.children.get(seg)
            if not kids:
                return None  # through a binding: not followed for globs
            mod = kids[0]
        return mod

    def resolve_in(self, mod, path, seen):
        """What `path` names inside `mod`: its files, or None when `mod` has
        no such name. Every route is followed (a name can be both a `mod`
        and a `use` under opposite `cfg`s); routes that find nothing drop."""
        if not path:
            return {mod.file}
        key = (id(mod), tuple(path))
        if key in seen:
            return None
        seen = seen | {key}
        name, rest = path[0], path[1:]
        routes = []
        for child in mod.children.get(name, []):
            routes.append(self.resolve_in(child, rest, seen))
        if name in mod.items:
            routes.append({mod.file})
        # A path through a module's `use` names that module's file too (a
        # re-export in a view is still the view's), except the crate root's:
        # its `pub use`s are the crate's short paths.
        via = set() if mod.parent is None else {mod.file}
        for target in mod.bindings.get(name, []):
            r = self.resolve_path(mod, target + rest, seen)
            routes.append(None if r is None else r | via)
        if not any(r is not None for r in routes):
            for g in mod.globs:
                target = self.module_of(mod, g)
                if target is not None:
                    r = self.resolve_in(target, path, seen)
                    routes.append(None if r is None else r | via)
                elif g[0] not in ("crate", "self", "super") and not (
                    g[0] in mod.children or g[0] in mod.items or g[0] in mod.bindings
                ):
                    routes.append({EXTERN} | via)  # `pub use stampede::tour::*`
        found = [r for r in routes if r is not None]
        if not found:
            return None
        return set().union(*found)

    def graph(self):
        arrows = defaultdict(set)  # (from, to) -> {line}
        self.unresolved = []
        for ctx, path, file, line in self.uses:
            targets = self.resolve_path(ctx, path, frozenset())
            if targets is None:
                # A name the reader does not see defined (made by a macro):
                # the deepest module the path reaches is where it lives.
                self.unresolved.append(f"src/{file}:{line}: {'::'.join(path)}")
                mod, p = None, list(path)
                while p and mod is None:
                    p.pop()
                    mod = self.module_of(ctx, p)
                targets = {mod.file} if mod else set()
            for t in targets:
                if t != file and t != EXTERN:
                    arrows[(file, t)].add(line)
        return arrows


def layer_of(file):
    best = None
    for key, layer in LAYERS.items():
        if file == key or (key.endswith("/") and file.startswith(key)):
            if best is None or len(key) > len(best[0]):
                best = (key, layer)
    return best[1] if best else None


def room_of(file):
    return file.split("/")[0] if "/" in file else file


def circles(nodes, edges):
    """Tarjan's strongly connected components with more than one file."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def chain(comp, edges):
    """A closed walk through the circle: a -> b -> … -> a, shortest first
    from the first file, then every file of the circle not yet on it."""
    members = set(comp)

    def path(a, b):
        prev, queue = {a: None}, [a]
        for v in queue:
            for w in sorted(edges.get(v, ())):
                if w in members and w not in prev:
                    prev[w] = v
                    queue.append(w)
        out, v = [], b
        while v is not None:
            out.append(v)
            v = prev[v]
        return out[::-1]

    start = comp[0]
    walk = [start]
    for target in comp[1:] + [start]:
        if target in walk and target != start:
            continue
        walk += path(walk[-1], target)[1:]
    return walk


# The page's state changes only through `Action` (issue 38): `Page`'s
# fields are private to `page/`, so the compiler refuses a write from any
# other file; these keep that so. The one handle on its signals that leaves
# `page/` is the animation loop's (what each frame measured, not a change
# anyone makes), taken by the app alone.
PAGE = "page/mod.rs"
ANIMATION_TAKERS = {"app.rs"}


def page_state_problems(crate):
    """Writes to `Page`'s state outside `page/`: a public field, the page
    built or its signals taken outside `page/`."""
    problems = []
    text = strip(open(os.path.join(ROOT, PAGE), encoding="utf-8").read())
    m = re.search(r"\bpub\s+struct\s+Page\s*\{", text)
    if not m:
        return [f"src/{PAGE}: no `pub struct Page {{ ... }}` to check"]
    depth, i = 1, m.end()
    while i < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    body = text[m.end() : i - 1]
    for f in re.finditer(r"^\s*pub(\([^)]*\))?\s+(\w+)\s*:", body, re.M):
        line = text[: m.end() + f.start()].count("\n") + 2
        problems.append(
            f"src/{PAGE}:{line}: Page's field `{f.group(2)}` is public: its state changes only "
            "through Page::act (a read-only getter instead)"
        )
    for f in sorted(crate.files):
        if f.startswith("page/"):
            continue
        code = strip(open(os.path.join(ROOT, f), encoding="utf-8").read())
        for hit in re.finditer(r"\bPage\s*\{|\.animation\s*\(\s*\)", code):
            line = code[: hit.start()].count("\n") + 1
            what = hit.group(0)
            if what.startswith("Page") and re.match(r"\s*\{", code[hit.end() - 1 :]):
                # `impl Page {` and `-> Page {` are no literal.
                before = code[max(0, hit.start() - 40) : hit.start()]
                if re.search(r"(impl|->|for)\s*$", before):
                    continue
                problems.append(f"src/{f}:{line}: builds a Page outside page/ (Page::new is the one way)")
            elif what.startswith(".animation") and f not in ANIMATION_TAKERS:
                problems.append(
                    f"src/{f}:{line}: takes the page's signals (Page::animation) outside the app: "
                    "change the page through Page::act"
                )
    return problems


def main():
    args = set(sys.argv[1:])
    crate = Crate(os.path.normpath(ROOT))
    arrows = crate.graph()
    edges = defaultdict(set)
    for a, b in arrows:
        edges[a].add(b)
    files = sorted(crate.files)
    problems = []

    unreached = sorted(set(files) - crate.reached)
    for f in unreached:
        problems.append(f"src/{f} is in no module tree (no `mod` declares it)")
    for f in files:
        if layer_of(f) is None:
            problems.append(f"src/{f} has no layer: add it to LAYERS in scripts/import-graph.py")

    problems += page_state_problems(crate)
    problems += crossing_problems()

    comps = circles(files, edges)
    for comp in comps:
        walk = chain(comp, edges)
        problems.append(
            f"a circle of {len(comp)} files (a walk along its arrows through every one):\n"
            + textwrap.fill(" -> ".join(walk), 100, initial_indent="    ", subsequent_indent="    ")
        )

    back = []
    for (a, b), lines in sorted(arrows.items()):
        la, lb = layer_of(a), layer_of(b)
        if la is None or lb is None:
            continue
        ra, rb = ORDER.index(la), ORDER.index(lb)
        bad = None
        if rb < ra:
            bad = f"runs up from {la} to {lb}"
        elif la in SEALED and lb != la:
            bad = f"leaves the {la} layer, which imports nothing of the page outside itself"
        elif la == lb == "view" and room_of(a) != room_of(b):
            bad = f"a view imports another view ({room_of(a)} -> {room_of(b)})"
        if bad:
            back.append((a, b))
            if (a, b) not in ALLOWED:
                where = ", ".join(str(x) for x in sorted(lines))
                problems.append(f"src/{a} -> src/{b} {bad} (line {where})")
    for a, b in sorted(set(ALLOWED) - set(back)):
        problems.append(
            f"src/{a} -> src/{b} is allowed in ALLOWED but no longer runs back: remove it from the list"
        )

    for rel in CRATES:
        other = Crate(os.path.normpath(os.path.join(ROOT, "..", rel)))
        # A module with files of its own (sim/, scenario/) is one room: its
        # children and it may import each other.
        oedges = defaultdict(set)
        for a, b in other.graph():
            if room_of(a) != room_of(b):
                oedges[room_of(a)].add(room_of(b))
        for comp in circles(sorted({room_of(f) for f in other.files}), oedges):
            problems.append(
                f"{rel}: a circle of {len(comp)} modules:\n"
                + textwrap.fill(" -> ".join(chain(comp, oedges)), 100, initial_indent="    ", subsequent_indent="    ")
            )

    if "--stats" in args:
        for u in crate.unresolved:
            print("import-graph: not found (the module's file is used): " + u)
    if "--arrows" in args:
        for (a, b), lines in sorted(arrows.items()):
            print(f"{a} ({layer_of(a)}) -> {b} ({layer_of(b)})  lines {sorted(lines)}")
    if "--stats" in args or problems:
        rooms = {room_of(f) for f in files}
        room_arrows = {(room_of(a), room_of(b)) for a, b in arrows if room_of(a) != room_of(b)}
        redges = defaultdict(set)
        for a, b in room_arrows:
            redges[a].add(b)
        rcomps = circles(rooms, redges)
        print(
            f"import-graph: {len(files)} files, {len(arrows)} arrows between files, "
            f"largest circle {max((len(c) for c in comps), default=0)} files; "
            f"{len(rooms)} rooms, {len(room_arrows)} arrows between rooms, "
            f"largest circle {max((len(c) for c in rcomps), default=0)} rooms; "
            f"{len(back)} back-arrows ({len(ALLOWED)} allowed)"
        )
    if problems:
        for p in problems:
            print("import-graph: " + p, file=sys.stderr)
        print(
            f"import-graph: {len(problems)} problem(s); the layers and the allowlist are in scripts/import-graph.py",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
