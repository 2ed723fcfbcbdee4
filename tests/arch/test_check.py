#!/usr/bin/env python3
"""Self-test of tests/arch/check.py: small trees in a temporary directory, each
rule shown to fire on a violation and to stay quiet when the rule is kept.

    python3 tests/arch/test_check.py
"""

import contextlib
import io
import os
import re
import shutil
import sys
import tempfile
import textwrap
import unittest
import xml.dom.minidom

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import picture  # noqa: E402
import check  # noqa: E402
import walk  # noqa: E402  (tests/arch/walk.py)

BASE = {
    "lib.rs": """\
        //! The crate root.
        pub mod engine;
        pub mod protocol;
        pub mod transport;
        pub fn root_item() {}
        """,
    "transport/mod.rs": """\
        //! The real MPI.
        //!
        //! May import: nothing.

        pub use mpi_sys as mpi;

        pub fn world() -> mpi::MPI_Comm {
            // SAFETY: a constant of the host library, set before main.
            unsafe { mpi::RSMPI_COMM_WORLD }
        }
        """,
    "protocol/mod.rs": """\
        //! Pure protocol state machines.
        //!
        //! May import: nothing.

        pub mod agree;
        """,
    "protocol/agree.rs": """\
        pub fn agree() -> u32 { 1 }
        """,
    "engine/mod.rs": """\
        //! The process runtime.
        //!
        //! May import: protocol, transport.

        pub mod comm;
        """,
    "engine/comm.rs": """\
        use crate::protocol::agree;
        use crate::transport;

        pub fn f() -> u32 { agree::agree() + crate::protocol::agree::agree() }
        """,
}


class Tree:
    """A temporary src/ tree: BASE, with files replaced or added."""

    def __init__(self, files=None, drop=()):
        self.dir = tempfile.mkdtemp(prefix="archcheck-")
        self.src = os.path.join(self.dir, "src")
        merged = dict(BASE)
        merged.update(files or {})
        for rel, text in merged.items():
            if rel in drop:
                continue
            path = os.path.join(self.src, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(textwrap.dedent(text))

    def run(self):
        tree, res = check.check(self.src)
        return res

    def close(self):
        shutil.rmtree(self.dir)


def found(files=None, drop=(), rule=None):
    """[(path, line, rule, detail)] for a tree of BASE + files, optionally one rule."""
    t = Tree(files, drop)
    try:
        res = t.run()
    finally:
        t.close()
    return [v for v in res.violations if rule is None or v[2] == rule]


def run_check(t, args=()):
    """Runs check.py's main on tree `t` (then removed) with `args`: (exit code, stdout)."""
    try:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = check.main(["--src", t.src, *args])
    finally:
        t.close()
    return rc, out.getvalue()


def run_check_real(args=()):
    """check.py's main on the repository's own src/: (exit code, stdout)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = check.main(list(args))
    return rc, out.getvalue()


def engine_file(body):
    return {"engine/x.rs": body, "engine/mod.rs": BASE["engine/mod.rs"] + "pub mod x;\n"}


class Clean(unittest.TestCase):
    def test_base_tree_is_clean_and_silent(self):
        t = Tree()
        rc, text = run_check(t)
        self.assertEqual(rc, 0)
        self.assertEqual(text, "")

    def test_violation_exits_1_with_path_line_rule(self):
        t = Tree({"protocol/agree.rs": "use crate::engine::comm;\n"})
        rc, text = run_check(t)
        self.assertEqual(rc, 1)
        self.assertRegex(text, r"^src/protocol/agree\.rs:1: import-up: ")


class FolderDoc(unittest.TestCase):
    def test_missing_opening_doc(self):
        v = found({"protocol/mod.rs": "pub mod agree;\n//! May import: nothing.\n"}, rule="folder-doc")
        self.assertTrue(any("must open" in d for _, _, _, d in v), v)

    def test_missing_may_import_line(self):
        v = found({"protocol/mod.rs": "//! Pure protocols.\n\npub mod agree;\n"}, rule="folder-doc")
        self.assertEqual([(p, r) for p, _, r, _ in v], [("src/protocol/mod.rs", "folder-doc")])

    def test_unknown_folder_in_list(self):
        v = found({"protocol/mod.rs": "//! Pure.\n//! May import: transport, layer.\npub mod agree;\n"},
                  rule="folder-doc")
        self.assertEqual(len(v), 1)
        self.assertIn("`layer`", v[0][3])
        self.assertEqual(v[0][1], 2)

    def test_folder_without_mod_rs(self):
        v = found({"calls/p2p.rs": "pub fn send() {}\n"}, rule="folder-doc")
        self.assertEqual([(p, r) for p, _, r, _ in v], [("src/calls", "folder-doc")])

    def test_nothing_and_backticks_and_crate_prefix_accepted(self):
        v = found({"engine/mod.rs": "//! Runtime.\n//! May import: `crate::protocol`, transport.\npub mod comm;\n"})
        self.assertEqual(v, [])


class ImportUp(unittest.TestCase):
    def test_use_of_upper_folder(self):
        v = found({"protocol/agree.rs": "use crate::engine::comm;\npub fn agree() -> u32 { 1 }\n"}, rule="import-up")
        self.assertEqual([(p, ln) for p, ln, _, _ in v], [("src/protocol/agree.rs", 1)])

    def test_path_in_code(self):
        v = found({"protocol/agree.rs": "pub fn agree() -> u32 {\n    crate::engine::comm::f()\n}\n"},
                  rule="import-up")
        self.assertEqual([ln for _, ln, _, _ in v], [2])

    def test_use_group(self):
        v = found({"protocol/agree.rs": "use crate::{\n    engine::comm,\n    transport,\n};\n"}, rule="import-up")
        self.assertEqual(sorted(d.split("`")[3] for _, _, _, d in v), ["crate::engine", "crate::transport"])

    def test_group_allowed_parts_quiet(self):
        v = found(engine_file("use crate::{protocol::{agree::{self, agree as a}}, transport::mpi as m};\n"),
                  rule="import-up")
        self.assertEqual(v, [])

    def test_comments_and_strings_ignored(self):
        body = ('// use crate::engine::comm;\n/* crate::engine::f() */\n'
                'pub fn s() -> &\'static str { "crate::engine::comm" }\n')
        self.assertEqual(found({"protocol/agree.rs": body}, rule="import-up"), [])

    def test_super_super_escape(self):
        body = "pub mod inner {\n    use super::super::super::engine::comm;\n}\n"
        v = found({"protocol/agree.rs": body}, rule="import-up")
        self.assertEqual([ln for _, ln, _, _ in v], [2])
        # super::super from protocol/agree.rs is the crate root's `engine`
        v = found({"protocol/agree.rs": "use super::super::engine::comm;\n"}, rule="import-up")
        self.assertEqual(len(v), 1)
        # super inside its own folder is fine
        self.assertEqual(found({"protocol/agree.rs": "use super::agree as x;\n"}, rule="import-up"), [])

    def test_lib_rs_may_reference_everything(self):
        lib = BASE["lib.rs"] + "pub use crate::engine::comm::f;\npub use crate::protocol::agree;\n"
        self.assertEqual(found({"lib.rs": lib}), [])

    def test_root_items_are_not_folders(self):
        self.assertEqual(found({"protocol/agree.rs": "pub fn g() { crate::root_item() }\n"}), [])

    def test_subfolder_unit(self):
        models = {
            "protocol/mod.rs": "//! Pure.\n//! May import: nothing.\npub mod agree;\npub mod models;\n",
            "protocol/models/mod.rs": "//! Models.\n//!\n//! May import: protocol.\npub mod m;\n",
            "protocol/models/m.rs": "use crate::protocol::agree;\nuse super::super::agree::agree as a;\n",
        }
        self.assertEqual(found(models), [])
        # the parent may not import its models unless it lists them
        bad = dict(models)
        bad["protocol/agree.rs"] = "use crate::protocol::models::m;\n"
        v = found(bad, rule="import-up")
        self.assertEqual([(p, ln) for p, ln, _, _ in v], [("src/protocol/agree.rs", 1)])
        self.assertIn("crate::protocol::models", v[0][3])
        # ... and listing them is enough (a cycle here, reported as such)
        bad["protocol/mod.rs"] = "//! Pure.\n//! May import: protocol::models.\npub mod agree;\npub mod models;\n"
        self.assertEqual(found(bad, rule="import-up"), [])
        self.assertEqual(len(found(bad, rule="layer-cycle")), 1)
        # models may not reach beyond its line
        bad = dict(models)
        bad["protocol/models/m.rs"] = "use crate::transport;\n"
        v = found(bad, rule="import-up")
        self.assertEqual([(p, ln) for p, ln, _, _ in v], [("src/protocol/models/m.rs", 1)])

    def test_subfolder_without_line_is_part_of_parent(self):
        files = {
            "protocol/mod.rs": "//! Pure.\n//! May import: nothing.\npub mod agree;\npub mod util;\n",
            "protocol/util/mod.rs": "//! Helpers.\npub fn h() {}\n",
            "protocol/agree.rs": "use crate::protocol::util::h;\n",
        }
        self.assertEqual(found(files), [])


class LayerCycle(unittest.TestCase):
    def test_cycle(self):
        v = found({"protocol/mod.rs": "//! Pure.\n//! May import: engine.\npub mod agree;\n"}, rule="layer-cycle")
        self.assertEqual(len(v), 1)
        self.assertIn("engine -> protocol -> engine", v[0][3])

    def test_acyclic_quiet(self):
        self.assertEqual(found(rule="layer-cycle"), [])


class Unsafe(unittest.TestCase):
    def rule(self, body):
        return found(engine_file(body), rule="unsafe-without-safety")

    def test_block_without_safety(self):
        v = self.rule("pub fn f(p: *const u8) -> u8 {\n    unsafe { *p }\n}\n")
        self.assertEqual([ln for _, ln, _, _ in v], [2])

    def test_safety_above_let(self):
        body = """\
            pub fn f(p: *const u8) -> u8 {
                // SAFETY: the caller passes a pointer to a live byte.
                let x = unsafe { *p };
                x
            }
            """
        self.assertEqual(self.rule(body), [])

    def test_safety_above_multiline_statement(self):
        body = """\
            pub fn f(p: *const u8) -> u8 {
                // SAFETY: the caller passes a pointer to a live byte.
                let x = g(
                    1,
                    unsafe { *p },
                );
                x
            }
            fn g(a: u8, b: u8) -> u8 { a + b }
            """
        self.assertEqual(self.rule(body), [])

    def test_safety_same_line_and_match_arm(self):
        body = """\
            pub fn f(p: *const u8, k: u8) -> u8 {
                let a = unsafe { *p }; // SAFETY: the caller passes a live byte.
                match k {
                    0 => 1,
                    // SAFETY: the caller passes a live byte here too.
                    1 => unsafe { *p },
                    // SAFETY: an arm over several lines, the block inside.
                    _ => g(
                        a,
                        unsafe { *p },
                    ),
                }
            }
            fn g(a: u8, b: u8) -> u8 { a + b }
            """
        self.assertEqual(self.rule(body), [])

    def test_safety_comment_spanning_lines_and_attributes_between(self):
        body = """\
            pub struct S(*mut u8);
            // SAFETY: S owns its buffer and only
            // one thread at a time touches it.
            #[allow(dead_code)]
            #[cfg(all(
                unix,
                target_pointer_width = "64"
            ))]
            unsafe impl Send for S {}
            """
        self.assertEqual(self.rule(body), [])

    def test_unsafe_impl_without_safety(self):
        v = self.rule("pub struct S(*mut u8);\n// S is sent.\nunsafe impl Send for S {}\n")
        self.assertEqual([ln for _, ln, _, _ in v], [3])

    def test_short_reason(self):
        v = self.rule("pub fn f(p: *const u8) -> u8 {\n    // SAFETY: fine.\n    unsafe { *p }\n}\n")
        self.assertEqual(len(v), 1)
        self.assertIn("too short", v[0][3])

    def test_blank_line_breaks_the_comment(self):
        body = "pub fn f(p: *const u8) -> u8 {\n    // SAFETY: the caller passes a live byte.\n\n    unsafe { *p }\n}\n"
        self.assertEqual(len(self.rule(body)), 1)

    def test_one_comment_does_not_cover_the_next_statement(self):
        body = """\
            pub fn f(p: *const u8) -> u8 {
                // SAFETY: the caller passes a live byte.
                let a = unsafe { *p };
                let b = unsafe { *p };
                a + b
            }
            """
        self.assertEqual([ln for _, ln, _, _ in self.rule(body)], [4])

    def test_unsafe_fn_and_extern_fn_not_blocks(self):
        body = """\
            pub unsafe fn f(p: *const u8) -> u8 { *p }
            pub unsafe extern "C" fn g(p: *const u8) -> u8 { *p }
            pub unsafe trait T {}
            """
        self.assertEqual(self.rule(body), [])

    def test_unsafe_in_comments_and_strings(self):
        body = """\
            // unsafe { this is a comment }
            /* unsafe impl Send for X {} */
            /// Call only from an `unsafe {` block.
            pub fn s() -> &'static str { "unsafe { x }" }
            pub fn r() -> &'static str { r#"unsafe impl "{" X"# }
            """
        self.assertEqual(self.rule(body), [])


class HostMpi(unittest.TestCase):
    def rule(self, body, where="engine/x.rs"):
        files = engine_file(body) if where == "engine/x.rs" else {where: body}
        return found(files, rule="host-mpi-outside-transport")

    def test_mpi_sys_path(self):
        v = self.rule("pub fn f(c: mpi_sys::MPI_Comm) {}\n")
        self.assertEqual(len(v), 1)
        self.assertIn("mpi_sys::MPI_Comm", v[0][3])

    def test_use_mpi_sys_as_alias(self):
        body = """\
            use mpi_sys as host;
            pub fn f() -> i32 {
                // SAFETY: a query the host allows at any time.
                unsafe { host::MPI_Finalized(std::ptr::null_mut()) }
            }
            """
        self.assertEqual(sorted(ln for _, ln, _, _ in self.rule(body)), [1, 4])

    def test_mpi_path(self):
        body = "use crate::transport::{self, mpi};\npub fn f(c: mpi::MPI_Comm) -> mpi::MPI_Comm { c }\n"
        self.assertEqual([ln for _, ln, _, _ in self.rule(body)], [2, 2])

    def test_transport_reexport_alias_any_name(self):
        body = "use crate::transport::mpi;\npub fn w() -> mpi::RSMPI_Comm { todo!() }\n"
        self.assertEqual([ln for _, ln, _, _ in self.rule(body)], [2])
        body = "pub fn w() -> crate::transport::mpi::MPI_Comm { todo!() }\n"
        self.assertEqual([ln for _, ln, _, _ in self.rule(body)], [1])
        body = "use crate::transport;\npub fn w() -> transport::mpi::RSMPI_Comm { todo!() }\n"
        self.assertEqual([ln for _, ln, _, _ in self.rule(body)], [2])

    def test_bare_call(self):
        body = "use mpi_sys::*;\npub fn f() {\n    MPI_Barrier(world());\n}\n"
        self.assertEqual([ln for _, ln, _, _ in self.rule(body)], [1, 3])

    def test_sim_ft_names_not_flagged(self):
        body = """\
            pub fn Sim_FT_MPI_Send(x: i32) -> i32 { x }
            pub const SIM_FT_MPI_X: i32 = 1;
            pub fn f() -> i32 { Sim_FT_MPI_Send(SIM_FT_MPI_X) + RSMPI_X(1) }
            fn RSMPI_X(x: i32) -> i32 { x }
            """
        self.assertEqual(self.rule(body), [])

    def test_own_functions_named_mpi(self):
        body = """\
            pub fn MPI_Barrier(n: u32) -> u32 { n }
            pub fn MPI_Ibarrier(n: u32) -> u32 { MPI_Barrier(n) + describe::MPI_Bcast(n) }
            """
        self.assertEqual(self.rule(body), [])

    def test_extern_block_declaration(self):
        body = 'extern "C" {\n    fn MPI_Abort(c: i32, e: i32) -> i32;\n}\n'
        self.assertEqual([ln for _, ln, _, _ in self.rule(body)], [2])

    def test_comments_strings_quiet(self):
        body = """\
            // calls mpi::MPI_Send( and mpi_sys::MPI_Recv(
            pub fn s() -> &'static str { "MPI_Send(buf) through mpi::MPI_Send" }
            """
        self.assertEqual(self.rule(body), [])

    def test_transport_may(self):
        body = "use mpi_sys::MPI_Comm;\npub fn f() {\n    MPI_Barrier(1);\n}\n"
        files = {"transport/x.rs": body, "transport/mod.rs": BASE["transport/mod.rs"] + "pub mod x;\n"}
        self.assertEqual(found(files, rule="host-mpi-outside-transport"), [])


class Sizes(unittest.TestCase):
    def test_file_length(self):
        ok = "\n".join("// line %d" % i for i in range(600)) + "\n"
        self.assertEqual(found(engine_file(ok), rule="file-too-long"), [])
        v = found(engine_file(ok + "// one more\n"), rule="file-too-long")
        self.assertEqual([(p, d) for p, _, _, d in v], [("src/engine/x.rs", "601 lines (max 600)")])

    def fn_of(self, span, filler="    let _ = 1;"):
        return "pub fn big() {\n" + "\n".join([filler] * (span - 2)) + "\n}\n"

    def test_fn_length_limit(self):
        self.assertEqual(found(engine_file(self.fn_of(80)), rule="fn-too-long"), [])
        v = found(engine_file(self.fn_of(81)), rule="fn-too-long")
        self.assertEqual([(ln, d) for _, ln, _, d in v], [(1, "fn big spans 81 lines (max 80)")])

    def test_braces_in_strings_chars_comments(self):
        tricky = [
            '    let a = "}}} {";',
            "    let b = '}';",
            "    let c = '\\'';",
            "    let d = b'{';",
            '    let e = r#"}" }"#;',
            '    let f = "\\"}";',
            "    // }",
            "    /* } /* nested } */ } */",
            "    let g: &'static str = \"x\";",
            "    'outer: loop { break 'outer; }",
        ]
        body = "pub fn small() {\n" + "\n".join(tricky) + "\n}\n" + self.fn_of(60).replace("big", "after")
        t = Tree(engine_file(body))
        try:
            res = t.run()
        finally:
            t.close()
        spans = {name: span for _, _, name, span in res.fns}
        self.assertEqual(spans["small"], len(tricky) + 2)
        self.assertEqual(spans["after"], 60)
        self.assertEqual([v for v in res.violations if v[2] == "fn-too-long"], [])

    def test_methods_nested_fns_and_tests_count(self):
        inner = "        fn helper() {\n" + "            let _ = 1;\n" * 85 + "        }\n"
        body = "pub struct S;\nimpl S {\n    pub fn m(&self) {\n" + inner + "    }\n}\n"
        body += "#[cfg(test)]\nmod tests {\n    #[test]\n    fn long_test() {\n" + "        let _ = 1;\n" * 90 + "    }\n}\n"
        v = found(engine_file(body), rule="fn-too-long")
        self.assertEqual(sorted(d.split()[1] for _, _, _, d in v), ["helper", "long_test", "m"])

    def test_lifetimes_in_signatures(self):
        body = "pub fn big<'a, 'b>(x: &'a str, y: &'b [u8; 2]) -> &'a str {\n" + "    let _ = '{';\n" * 78 + "    x\n}\n"
        v = found(engine_file(body), rule="fn-too-long")
        self.assertEqual([d for _, _, _, d in v], ["fn big spans 81 lines (max 80)"])

    def test_declarations_without_body(self):
        body = "pub trait T {\n    fn f(&self, x: [u8; 4]) -> u8;\n}\n" + self.fn_of(10)
        t = Tree(engine_file(body))
        try:
            res = t.run()
        finally:
            t.close()
        self.assertEqual([(n, s) for p, _, n, s in res.fns if p == "src/engine/x.rs"], [("big", 10)])


class Outputs(unittest.TestCase):
    def test_summary_exits_0(self):
        t = Tree({"protocol/agree.rs": "use crate::engine::comm;\n"})
        rc, text = run_check(t, ["--summary"])
        self.assertEqual(rc, 0)
        text = text
        for r in check.RULES:
            self.assertIn(r, text)
        self.assertRegex(text, r"import-up\s+1\b")
        self.assertIn("protocol", text)

    def test_svg(self):
        t = Tree({"protocol/agree.rs": "use crate::engine::comm;\n"})
        svg = os.path.join(t.dir, "layers.svg")
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                check.main(["--src", t.src, "--svg", svg])
            with open(svg) as f:
                text = f.read()
        finally:
            t.close()
        xml.dom.minidom.parseString(text)
        for name in ("engine", "protocol", "transport", "The process runtime."):
            self.assertIn(name, text)
        self.assertIn('marker-end="url(#arrow-bad)"', text)
        self.assertIn('marker-end="url(#arrow-ok)"', text)

    def test_floors(self):
        t = Tree()
        try:
            tree, res = check.check(t.src)
        finally:
            t.close()
        self.assertEqual(picture.floors(picture.view(tree, res)), {"transport": 1, "protocol": 1, "engine": 2})

    ROOMS = {
        "engine/mod.rs": BASE["engine/mod.rs"] + "pub mod low;\npub mod high;\n",
        "engine/low/mod.rs": "//! The low room,\n//! on two lines.\n//!\n//! May import: protocol.\n\npub mod a;\n",
        "engine/low/a.rs": "pub fn a() -> u32 { crate::engine::high::b::b() }\n",
        "engine/high/mod.rs": "//! The high room.\n//!\n//! May import: engine::low, protocol.\n\npub mod b;\n",
        "engine/high/b.rs": "pub fn b() -> u32 { 2 }\npub fn c() -> u32 { crate::engine::low::a::a() }\n",
    }

    def test_views(self):
        """The layers draw a folder's rooms as the folder; --inside draws the rooms."""
        t = Tree(self.ROOMS)
        try:
            tree, res = check.check(t.src)
        finally:
            t.close()
        layers = picture.view(tree, res)
        self.assertEqual(sorted(layers.nodes), ["engine", "protocol", "transport"])
        self.assertEqual(layers.nodes["engine"]["files"], 6)
        self.assertEqual(dict(layers.edges), {("engine", "protocol"): [2, 0], ("engine", "transport"): [1, 0]})
        rooms = picture.view(tree, res, inside="engine")
        self.assertEqual(sorted(rooms.nodes), ["high", "low"])
        self.assertEqual(rooms.nodes["low"]["job"], "The low room, on two lines.")
        self.assertEqual(rooms.nodes["high"]["may"], ["low"])
        self.assertEqual(dict(rooms.edges), {("high", "low"): [1, 0], ("low", "high"): [1, 1]})
        self.assertEqual(picture.floors(rooms), {"low": 1, "high": 2})

    def test_svg_inside(self):
        """A chain of rooms is a column: the allowed arrow on the right, the one up in red."""
        t = Tree(self.ROOMS)
        svg = os.path.join(t.dir, "rooms.svg")
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                check.main(["--src", t.src, "--inside", "engine", "--svg", svg])
            with open(svg) as f:
                text = f.read()
        finally:
            t.close()
        xml.dom.minidom.parseString(text)
        self.assertIn("Rooms of src/engine/", text)
        self.assertIn(">high<", text)
        self.assertNotIn("engine::", text)
        self.assertEqual(text.count('marker-end="url(#arrow-bad)"'), 2)  # the arrow and the legend
        self.assertIn("1 import-up", text)


def engine_files(files, mods=None):
    """BASE + engine files (`a.rs` -> "engine/a.rs"), each declared in engine/mod.rs."""
    names = sorted(mods if mods is not None else [f[:-3] for f in files])
    out = {"engine/" + f: body for f, body in files.items()}
    out["engine/mod.rs"] = BASE["engine/mod.rs"] + "".join("pub mod %s;\n" % n for n in names)
    return out


def cycles(files, args=("--file-cycles",)):
    """(exit code, [file-cycle lines]) of check.py's main on BASE + files."""
    rc, text = run_check(Tree(files), list(args))
    return rc, [ln for ln in text.splitlines() if ": file-cycle: " in ln]


TWO = {
    "a.rs": "use crate::engine::b::g;\n\npub fn f() -> u32 { g() }\n",
    "b.rs": "pub fn g() -> u32 {\n    super::a::f()\n}\n",
}


class FileCycle(unittest.TestCase):
    def test_two_files_importing_each_other(self):
        rc, v = cycles(engine_files(TWO))
        self.assertEqual(rc, 1)
        self.assertEqual(v, ["src/engine/a.rs:1: file-cycle: 2 files: a.rs -> b.rs -> a.rs "
                             "(names taken: a.rs -> b.rs: g; b.rs -> a.rs: f)"])

    def test_three_files_through_a_pub_use(self):
        files = {
            "a.rs": "pub use crate::engine::b::Thing;\n",
            "b.rs": "pub struct Thing;\npub fn g() { crate::engine::c::h() }\n",
            "c.rs": "use crate::engine::a::Thing;\npub fn h() { let _t = Thing; }\n",
        }
        rc, v = cycles(engine_files(files))
        self.assertEqual(v, ["src/engine/a.rs:1: file-cycle: 3 files: a.rs -> b.rs -> c.rs -> a.rs "
                             "(names taken: a.rs -> b.rs: Thing; b.rs -> c.rs: h; c.rs -> a.rs: Thing)"])

    def test_on_by_default_and_off_on_request(self):
        rc, v = cycles(engine_files(TWO), args=())
        self.assertEqual((rc, len(v)), (1, 1))
        self.assertEqual(cycles(engine_files(TWO), args=("--no-file-cycles",)), (0, []))

    def test_the_real_tree_has_no_file_circle(self):
        rc, text = run_check_real(["--summary"])
        self.assertEqual(rc, 0)
        total = [ln for ln in text.splitlines() if ln.startswith("  total (src/)")]
        self.assertEqual(len(total), 1, text)
        files, lines, arrows, up, circles = total[0].split()[2:7]
        self.assertEqual((up, circles), ("0", "0"), total[0])

    def test_one_way_arrows_quiet(self):
        files = {
            "a.rs": "use crate::engine::{b::g, c};\npub fn f() -> u32 { g() + c::h() + crate::engine::top() }\n",
            "b.rs": "use self::inner::x;\nmod inner { pub fn x() {} }\npub fn g() -> u32 { super::c::h() }\n",
            "c.rs": "pub fn h() -> u32 { 1 }\n",
        }
        files = engine_files(files)
        files["engine/mod.rs"] += "pub fn top() -> u32 { 0 }\n"  # a.rs -> mod.rs, one way
        self.assertEqual(cycles(files), (0, []))

    def test_mod_declarations_comments_and_strings_are_not_arrows(self):
        files = {
            "a.rs": "use crate::engine::b::g;\npub fn f() -> u32 { g() }\n",
            "b.rs": ('// use crate::engine::a::f;\n/* super::a::f() */\n'
                     'pub fn g() -> u32 { 1 }\npub fn s() -> &\'static str { "crate::engine::a::f" }\n'
                     'pub fn u() -> u32 { crate::engine::top() }\n'),
        }
        files = engine_files(files)  # mod.rs declares `pub mod a;` and `pub mod b;`
        files["engine/mod.rs"] += ('/// Calls [`a::f`] and [`b::g`]; "b::g()" is b\'s.\n'
                                   'pub fn top() -> u32 { let _s = "a::f()"; 0 }\n')
        self.assertEqual(cycles(files), (0, []))

    def test_mod_rs_using_its_child_is_an_arrow(self):
        # `a::f()` in mod.rs names the child module a; a.rs takes mod.rs's `top`
        files = engine_files({"a.rs": "pub fn f() -> u32 { crate::engine::top() }\n"})
        files["engine/mod.rs"] += "pub fn top() -> u32 { 0 }\npub fn g() -> u32 { a::f() }\n"
        rc, v = cycles(files)
        self.assertEqual(v, ["src/engine/a.rs:1: file-cycle: 2 files: a.rs -> mod.rs -> a.rs "
                             "(names taken: a.rs -> mod.rs: top; mod.rs -> a.rs: f)"])

    def test_module_brought_in_by_use_gives_the_names_used_through_it(self):
        files = {
            "a.rs": "use crate::engine::b;\npub fn f() -> u32 { b::g() + b::k() }\n",
            "b.rs": "use super::a as other;\npub fn g() -> u32 { 1 }\npub fn k() -> u32 { other::f() }\n",
        }
        rc, v = cycles(engine_files(files))
        self.assertEqual(len(v), 1)
        self.assertIn("(names taken: a.rs -> b.rs: g, k; b.rs -> a.rs: f)", v[0])

    def test_circle_across_folders_is_not_a_file_cycle(self):
        self.assertEqual(cycles(ACROSS), (0, []))

    def test_no_file_cycles_leaves_the_rule_out(self):
        files = engine_files(TWO)
        self.assertEqual(cycles(files, ("--no-file-cycles",)), (0, []))
        rc, text = run_check(Tree(files), ["--no-file-cycles"])
        self.assertEqual((rc, text), (0, ""))
        rc, text = run_check(Tree(files), ["--summary", "--no-file-cycles"])
        self.assertRegex(text, r"file-cycle\s+off\n")
        rc, text = run_check(Tree(files), ["--summary"])
        self.assertRegex(text, r"file-cycle\s+1\n")


# transport/mod.rs and transport/coll/mod.rs point at each other: a circle of
# the whole file graph, in two folders
ACROSS = {
    "transport/mod.rs": BASE["transport/mod.rs"] + "pub mod coll;\npub use coll::bcast;\n",
    "transport/coll/mod.rs": "pub fn bcast() -> crate::transport::mpi::MPI_Comm { crate::transport::world() }\n",
}


def table_rows(text):
    """{folder or 'total': [files, lines, arrows, up, circles, in]} of the file table."""
    rows = {}
    part = text.split("File graph (")[1]
    for ln in part.splitlines():
        m = re.match(r"  (\S+/|total \(src/\))\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", ln)
        if m:
            rows[m.group(1)] = [int(x) for x in m.groups()[1:]]
    return rows


class FileGraphSummary(unittest.TestCase):
    def test_counts_on_a_planted_tree(self):
        # BASE: comm.rs -> protocol/agree.rs (takes agree) and -> transport/mod.rs
        # (a `use` never used by path).  Planted: a <-> b (2 up), c -> a, a -> agree.rs.
        files = engine_files({
            "a.rs": "use crate::engine::b::g;\nuse crate::protocol::agree;\npub fn f() -> u32 { g() + agree::agree() }\n",
            "b.rs": "pub fn g() -> u32 { super::a::f() }\n",
            "c.rs": "pub fn h() -> u32 { crate::engine::a::f() }\n",
        })
        rc, text = run_check(Tree(files), ["--summary"])
        self.assertEqual(rc, 0)
        rows = table_rows(text)
        # engine/: mod.rs 5 + 3 lines, comm.rs 4, a.rs 3, b.rs 1, c.rs 1
        self.assertEqual(rows["src/engine/"], [5, 17, 6, 2, 1, 2])
        self.assertEqual(rows["src/protocol/"][2:], [0, 0, 0, 0])
        self.assertEqual(rows["total (src/)"][2:], [6, 2, 1, 2])
        self.assertIn("floors: 3", text)
        self.assertIn("circle of 2 files: src/engine/{a.rs, b.rs}", text)

    def test_no_circle_no_up(self):
        rc, text = run_check(Tree(), ["--summary"])
        rows = table_rows(text)
        self.assertEqual(rows["total (src/)"][2:], [2, 0, 0, 0])
        self.assertIn("floors: 2", text)

    def test_circle_across_folders_counts_in_the_total_only(self):
        rc, text = run_check(Tree(ACROSS), ["--summary"])
        rows = table_rows(text)
        self.assertEqual(rows["src/transport/"][2:], [1, 1, 0, 0])
        self.assertEqual(rows["src/transport/coll/"][2:], [1, 1, 0, 0])
        self.assertEqual(rows["total (src/)"][2:], [4, 2, 1, 2])

    def test_graph_arrows_and_names(self):
        files = engine_files({"a.rs": "use crate::engine::{comm, b::{self as bee, g}};\n"
                                      "pub fn f() { comm::f(); bee::k(); for _i in 0..bee::N {} }\n",
                              "b.rs": "pub const N: u32 = 1;\npub fn g() {}\npub fn k() {}\n"})
        files["engine/mod.rs"] += "pub use self::b::g;\n"
        t = Tree(files)
        try:
            tree, res = check.check(t.src)
        finally:
            t.close()
        names = {(a[4:], b[4:]): sorted(n) for (a, b), n in res.graph.names.items()}
        self.assertEqual(names[("engine/a.rs", "engine/comm.rs")], ["f"])
        self.assertEqual(names[("engine/a.rs", "engine/b.rs")], ["N", "g", "k"])
        self.assertEqual(names[("engine/mod.rs", "engine/b.rs")], ["g"])
        self.assertNotIn(("engine/mod.rs", "engine/a.rs"), names)  # `pub mod a;` only


def dead_loop(serve_body, extra=""):
    """A tree whose dead rank's loop (`zombie::kill_me` -> `serve`) runs
    `serve_body`, with `transport::request` that has a blocking wait."""
    return {
        "transport/mod.rs": BASE["transport/mod.rs"] + "pub mod request;\n",
        "transport/request.rs": "pub fn wait(r: &mut u32) {}\npub fn test(r: &mut u32) -> bool { true }\n",
        "engine/mod.rs": BASE["engine/mod.rs"] + "pub mod zombie;\npub mod helper;\n",
        "engine/zombie.rs": textwrap.dedent("""\
            use crate::engine::helper;
            use crate::transport;

            pub fn kill_me() {
                serve();
            }

            fn serve() {
            """) + textwrap.indent(textwrap.dedent(serve_body), "    ") + "}\n",
        "engine/helper.rs": "use crate::transport;\n\n" + textwrap.dedent(extra),
    }


class Blocking(unittest.TestCase):
    def test_planted_wait_reachable_from_the_dead_loop(self):
        v = found(dead_loop("helper::step();\n", """\
            pub fn step() {
                let mut r = 0;
                transport::request::wait(&mut r);
            }
            """), rule="blocking-call-unmarked")
        self.assertEqual([(p, ln) for p, ln, _, _ in v], [("src/engine/helper.rs", 5)])
        self.assertIn("zombie::kill_me -> zombie::serve -> helper::step", v[0][3])

    def test_marked_wait_passes(self):
        v = found(dead_loop("helper::step();\n", """\
            pub fn step() {
                let mut r = 0;
                // Blocking: never blocks for ever: a null request completes at once.
                transport::request::wait(&mut r);
            }
            """), rule="blocking-call-unmarked")
        self.assertEqual(v, [])

    def test_mark_at_the_call_covers_what_is_below(self):
        v = found(dead_loop("""\
            // Blocking: in a turn: granted by the turns just before this call.
            helper::step();
            """, """\
            pub fn step() {
                let mut r = 0;
                transport::request::wait(&mut r);
            }
            """), rule="blocking-call-unmarked")
        self.assertEqual(v, [])

    def test_short_reason_and_unknown_kind_fire(self):
        for mark in ("// Blocking: in a turn: yes", "// Blocking: probably fine: it is all right really"):
            v = found(dead_loop("helper::step();\n", """\
                pub fn step() {
                    let mut r = 0;
                    %s
                    transport::request::wait(&mut r);
                }
                """ % mark), rule="blocking-call-unmarked")
            self.assertEqual(len(v), 1, mark)

    def test_unreachable_and_non_blocking_calls_quiet(self):
        v = found(dead_loop("helper::step();\n", """\
            pub fn step() {
                let mut r = 0;
                transport::request::test(&mut r);
            }

            pub fn elsewhere() {
                let mut r = 0;
                transport::request::wait(&mut r);
            }
            """), rule="blocking-call-unmarked")
        self.assertEqual(v, [])

    def test_generated_blocking_collective_fires_and_its_i_form_does_not(self):
        v = found(dead_loop("helper::step();\n", """\
            use crate::transport::generated;

            pub fn step() {
                generated::MPI_Ibcast(0, 1);
                transport::generated::MPI_Comm_rank(0, 1);
                transport::generated::MPI_Bcast(0, 1);
                generated::MPI_Neighbor_alltoallw(0, 1);
            }
            """), rule="blocking-call-unmarked")
        self.assertEqual([(p, ln) for p, ln, _, _ in v], [("src/engine/helper.rs", 8), ("src/engine/helper.rs", 9)])

    def test_listing_names_each_site_and_its_mark(self):
        t = Tree(dead_loop("helper::step();\n", """\
            pub fn step() {
                let mut r = 0;
                // Blocking: kept in flight: completed by the loop's next test.
                transport::request::wait(&mut r);
            }
            """))
        rc, text = run_check(t, ["--blocking"])
        self.assertEqual(rc, 0)
        self.assertIn("src/engine/helper.rs:6  transport::request::wait  [kept in flight]", text)


# walk.py: comm goes calls/p.rs:send -> engine/a.rs:lookup -> engine/b.rs:key,
# back to a.rs:count; a closure and a method call are not followed.
WALKED = {
    "calls/p.rs": (
        "use crate::engine::a::count;\n"
        "pub fn send(buf: u32, comm: usize) -> u32 {\n"
        "    let c = crate::engine::a::lookup(comm); // lookup(buf) in a comment\n"
        "    let f = |x: usize| crate::engine::b::other(x);\n"
        "    comm.max(1);\n"
        "    count(buf, comm) + f(comm) + c\n"
        "}\n"
    ),
    "engine/a.rs": (
        "pub fn lookup(h: usize) -> u32 { crate::engine::b::key(1, h) }\n"
        "pub fn count(_n: u32, k: usize) -> u32 { k as u32 }\n"
    ),
    "engine/b.rs": "pub fn key(_z: u32, x: usize) -> u32 { x as u32 }\npub fn other(y: usize) -> u32 { y as u32 }\n",
}


class Walk(unittest.TestCase):
    def test_follows_the_argument_and_counts_returns(self):
        t = Tree(WALKED)
        try:
            w = walk.Walker(t.src, 12)
            w.walk("calls/p.rs", "send", "comm")
            text = walk.report(w)
        finally:
            t.close()
        self.assertEqual(w.lines, ["calls/p.rs:send(comm)", "  engine/a.rs:lookup(h)", "    engine/b.rs:key(x)",
                                   "  engine/a.rs:count(k)"])
        self.assertIn("files: 3; returns to a file already visited: 1", text)

    def test_derived_values_are_followed_on_request(self):
        files = dict(WALKED)
        files["calls/p.rs"] = files["calls/p.rs"].replace("+ c\n", "+ crate::engine::b::other(c as usize)\n")
        t = Tree(files)
        try:
            plain, derived = walk.Walker(t.src, 12), walk.Walker(t.src, 12, derived=True)
            plain.walk("calls/p.rs", "send", "comm")
            derived.walk("calls/p.rs", "send", "comm")
        finally:
            t.close()
        self.assertNotIn("  engine/b.rs:other(y)", plain.lines)
        self.assertIn("  engine/b.rs:other(y)", derived.lines)


if __name__ == "__main__":
    unittest.main()
