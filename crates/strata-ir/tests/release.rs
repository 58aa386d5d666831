//! The lowering releases owning host locals at the end of their scope (`Stmt::Free`), except
//! those moved out of or still used by the block's value.

use strata_diag::SourceMap;
use strata_ir::ir::{Program, Stmt};

fn lower(src: &str) -> Program {
    let mut sources = SourceMap::new();
    let id = sources.add("test.strata", src);
    let prelude_id = sources.add("<prelude>", strata_check::program::PRELUDE);
    let parsed = strata_syntax::parse(id, sources.source(id));
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    let checked = strata_check::check_program(&parsed.module, prelude_id, &[]);
    assert!(!strata_diag::has_errors(&checked.diagnostics), "{:?}", checked.diagnostics);
    let prelude = strata_check::program::parse_prelude(prelude_id);
    let env = strata_check::program_env(&parsed.module, &prelude, &[]);
    strata_ir::lower(&parsed.module, &env, &checked.types).expect("lowers")
}

/// The names of the locals freed by `body`'s statements, in order, with nested bodies inline.
fn frees(p: &Program, f: usize, body: &[Stmt], out: &mut Vec<String>) {
    for s in body {
        match s {
            Stmt::Free { local, gpu, .. } => {
                out.push(format!("{}{}", p.functions[f].locals[*local].name, if *gpu { "@gpu" } else { "" }))
            }
            Stmt::For { body, .. } | Stmt::While { body, .. } => {
                out.push("{".into());
                frees(p, f, body, out);
                out.push("}".into());
            }
            _ => {}
        }
    }
}

fn main_frees(src: &str) -> Vec<String> {
    let p = lower(src);
    let main = p.entry.expect("main");
    let mut out = Vec::new();
    frees(&p, main, &p.functions[main].body, &mut out);
    out
}

#[test]
fn buffers_are_released_at_the_end_of_their_scope() {
    let got = main_frees(
        "fn main() -[t: cpu.thread]-> () {
            let h = CpuHeap::new([1, 2, 3]);
            for i in 0..4 {
                let d = GpuGlobal::alloc_copy(&shrd h);
                let e = GpuGlobal::alloc_copy(&shrd h);
            }
            let g = GpuGlobal::alloc_copy(&shrd h);
        }",
    );
    assert_eq!(got, ["{", "d@gpu", "e@gpu", "}", "h", "g@gpu"]);
}

#[test]
fn moved_buffers_are_released_by_their_new_owner_only() {
    let got = main_frees(
        "fn consume(d: [i32; 3] @ gpu.global) -[t: cpu.thread]-> () { }
        fn main() -[t: cpu.thread]-> () {
            let h = CpuHeap::new([1, 2, 3]);
            let a = GpuGlobal::alloc_copy(&shrd h);
            let b = a;
            let c = GpuGlobal::alloc_copy(&shrd h);
            consume(c);
        }",
    );
    assert_eq!(got, ["h", "b@gpu"]);
    // The callee owns what it was given by value.
    let p = lower(
        "fn consume(d: [i32; 3] @ gpu.global) -[t: cpu.thread]-> () { }
        fn main() -[t: cpu.thread]-> () {
            let h = CpuHeap::new([1, 2, 3]);
            consume(GpuGlobal::alloc_copy(&shrd h));
        }",
    );
    let consume = p.functions.iter().position(|f| f.name == "consume").expect("consume");
    let mut out = Vec::new();
    frees(&p, consume, &p.functions[consume].body, &mut out);
    assert_eq!(out, ["d@gpu"]);
}

#[test]
fn a_returned_buffer_is_not_released_by_the_callee() {
    let p = lower(
        "fn make(h: &shrd cpu.mem [i32; 3]) -[t: cpu.thread]-> [i32; 3] @ gpu.global {
            let d = GpuGlobal::alloc_copy(h);
            d
        }
        fn main() -[t: cpu.thread]-> () {
            let h = CpuHeap::new([1, 2, 3]);
            let d = make(&shrd h);
        }",
    );
    let make = p.functions.iter().position(|f| f.name == "make").expect("make");
    let mut out = Vec::new();
    frees(&p, make, &p.functions[make].body, &mut out);
    assert!(out.is_empty(), "{out:?}");
    let main = p.entry.expect("main");
    let mut out = Vec::new();
    frees(&p, main, &p.functions[main].body, &mut out);
    assert_eq!(out, ["h", "d@gpu"]);
}
