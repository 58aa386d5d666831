//! `Builtin::CopyElems` (CUDA-C's `cudaMemcpy` in one step): the same copies on `sim` and on the
//! `cpu` device, offsets and overlapping ranges included; and, through `strata run FILE.cu`, the
//! same errors, at the same element, as the element-by-element copy it replaced.

mod common;
use std::path::Path;
use std::process::Command;
use strata_diag::Span;
use strata_ir::ir::{
    Builtin, Expr, Function, IExpr, Level, Lit, Local, Mem, PathStep, Place, Program, ScalarTy, Stmt, Ty,
};

fn elem(root: usize, k: u64) -> Place {
    Place { root, path: vec![PathStep::Deref, PathStep::Elem(IExpr::Const(k))], checks: Vec::new(), span: Span::DUMMY }
}

fn copy(dst_gpu: bool, src_gpu: bool, dst: Expr, src: Expr, n: u64) -> Stmt {
    Stmt::Eval(Expr::Builtin(
        Builtin::CopyElems { dst_gpu, src_gpu },
        vec![dst, src, Expr::Nat(IExpr::Const(n))],
        Span::DUMMY,
    ))
}

/// `h = 10..17` on the host, `d` eight zeros on the GPU; then every kind of copy, with offsets.
fn program() -> Program {
    let arr = || Box::new(Ty::Array { elem: Box::new(Ty::Scalar(ScalarTy::U32)), len: IExpr::Const(8) });
    let load = |l: usize| Expr::Load(Place::local(l, Span::DUMMY));
    let at = |l: usize, k: u64| Expr::Ref(elem(l, k));
    let u32s = |vs: &[u64]| {
        Expr::ArrayList(
            vs.iter()
                .map(|v| Expr::Cast(Box::new(Expr::Lit(Lit::Int(u128::from(*v), ScalarTy::U64))), ScalarTy::U32))
                .collect(),
        )
    };
    let mut body = vec![
        Stmt::Let {
            local: 0,
            init: Some(Expr::Builtin(Builtin::HeapNew, vec![u32s(&[10, 11, 12, 13, 14, 15, 16, 17])], Span::DUMMY)),
            span: Span::DUMMY,
        },
        Stmt::Let {
            local: 2,
            init: Some(Expr::Builtin(Builtin::HeapNew, vec![u32s(&[0; 8])], Span::DUMMY)),
            span: Span::DUMMY,
        },
        Stmt::Let {
            local: 1,
            init: Some(Expr::Builtin(Builtin::GlobalAllocCopy, vec![load(2)], Span::DUMMY)),
            span: Span::DUMMY,
        },
        // d = 0 0 10 11 12 13 14 0
        copy(true, false, at(1, 2), load(0), 5),
        // Overlapping, towards the end: d = 0 0 0 10 11 12 13 0
        copy(true, true, at(1, 1), load(1), 6),
        // Overlapping, towards the start: d = 0 0 10 11 12 13 13 0
        copy(true, true, load(1), at(1, 1), 6),
        // h = 0 0 10 11 12 13 13 0
        copy(false, true, load(0), load(1), 8),
        // Overlapping on the host: h = 0 0 0 10 11 12 13 0, then 0 10 11 12 12 13 0 ... see below
        copy(false, false, at(0, 1), load(0), 6),
        copy(false, false, load(0), at(0, 2), 3),
        // Nothing at all, at the end of the buffer.
        copy(true, false, at(1, 8), load(0), 0),
    ];
    for k in 0..8 {
        body.push(Stmt::Eval(Expr::Builtin(Builtin::PrintInline, vec![Expr::Load(elem(0, k))], Span::DUMMY)));
        body.push(Stmt::Eval(Expr::Builtin(Builtin::PrintInline, vec![Expr::Lit(Lit::Str(" ".into()))], Span::DUMMY)));
    }
    body.push(Stmt::Free { local: 1, gpu: true, span: Span::DUMMY });
    body.push(Stmt::Free { local: 2, gpu: false, span: Span::DUMMY });
    body.push(Stmt::Free { local: 0, gpu: false, span: Span::DUMMY });
    let main = Function::host_main(
        vec![
            Local { name: "h".into(), ty: Ty::Owned(arr(), Mem::Cpu), level: Level::Host },
            Local { name: "d".into(), ty: Ty::Owned(arr(), Mem::GpuGlobal), level: Level::Host },
            Local { name: "z".into(), ty: Ty::Owned(arr(), Mem::Cpu), level: Level::Host },
        ],
        body,
    );
    Program { functions: vec![main], entry: Some(0), ..Default::default() }
}

#[test]
fn copies_agree_on_sim_and_cpu_and_overlap_like_memmove() {
    let (sim, cpu) = common::output_on_both_devices(&program());
    assert_eq!(sim, cpu);
    // After the device copies h = 0 0 10 11 12 13 13 0; h[1..7] = h[0..6] gives
    // 0 0 0 10 11 12 13 0; h[0..3] = h[2..5] gives 0 10 11 10 11 12 13 0.
    assert_eq!(sim, "0 10 11 10 11 12 13 0 ");
}

/// `strata run --format short` of a CUDA-C `main` with `body`: (exit code, stdout, stderr).
fn run_cu(name: &str, body: &str) -> (i32, String, String) {
    let dir = std::env::temp_dir().join(format!("strata-copy-elems-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.cu"));
    std::fs::write(
        &file,
        format!("#include <stdio.h>\n#include <stdlib.h>\nint main(void) {{\n{body}\n    return 0;\n}}\n"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .args(["run", "--format", "short", file.to_str().unwrap()])
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let stderr = text(&out.stderr).replace(&format!("{}/", dir.display()), "");
    (out.status.code().unwrap_or(-1), text(&out.stdout), stderr)
}

#[test]
fn cuda_memcpy_errors_name_the_first_bad_element() {
    let cases = [
        (
            "host_src_too_short",
            "    int h[4];\n    for (int i = 0; i < 4; i++) { h[i] = i; }\n    int *d;\n    cudaMalloc(&d, 8 * sizeof(int));\n    cudaMemcpy(d, h, 8 * sizeof(int), cudaMemcpyHostToDevice);",
            "host_src_too_short.cu:8:5: error[E0903]: out of bounds: `h` has 4 elements, the access is at 4\n",
        ),
        (
            "host_dst_too_short",
            "    int h[4];\n    int *d;\n    cudaMalloc(&d, 8 * sizeof(int));\n    cudaMemcpy(h, d, 8 * sizeof(int), cudaMemcpyDeviceToHost);",
            "host_dst_too_short.cu:7:5: error[E0903]: out of bounds: `h` has 4 elements, the access is at 4\n",
        ),
        (
            "device_too_short",
            "    int h[8];\n    int *d;\n    cudaMalloc(&d, 4 * sizeof(int));\n    cudaMemcpy(h, d, 8 * sizeof(int), cudaMemcpyDeviceToHost);",
            "device_too_short.cu:7:5: error[E0903]: a pointer past the end of its buffer\n",
        ),
        (
            // Element 3 of the destination fails before element 6 of the source would.
            "host_to_host_first_failure",
            "    int *a = (int *) malloc(8 * sizeof(int));\n    int b[3];\n    for (int i = 0; i < 6; i++) { a[i] = i; }\n    cudaMemcpy(b, a, 8 * sizeof(int), cudaMemcpyHostToHost);",
            "host_to_host_first_failure.cu:7:5: error[E0903]: out of bounds: `b` has 3 elements, the access is at 3\n",
        ),
        (
            "host_side_in_gpu_memory",
            "    int h[4];\n    int *d;\n    cudaMalloc(&d, 4 * sizeof(int));\n    cudaMemcpy(h, d, 4 * sizeof(int), cudaMemcpyHostToDevice);",
            "host_side_in_gpu_memory.cu:7:5: error[E0905]: host code accessed `d` in `gpu.global`\n",
        ),
        (
            "host_side_freed",
            "    int *h = (int *) malloc(4 * sizeof(int));\n    free(h);\n    int *d;\n    cudaMalloc(&d, 4 * sizeof(int));\n    cudaMemcpy(d, h, 4 * sizeof(int), cudaMemcpyHostToDevice);",
            "host_side_freed.cu:8:5: error[E0906]: use of `h` after it was freed\n",
        ),
        (
            "device_side_freed",
            "    int h[4];\n    int *d;\n    cudaMalloc(&d, 4 * sizeof(int));\n    cudaFree(d);\n    cudaMemcpy(d, h, 4 * sizeof(int), cudaMemcpyHostToDevice);",
            "device_side_freed.cu:8:5: error[E0906]: use of `d` after it was freed\n",
        ),
    ];
    for (name, body, want) in cases {
        let (code, stdout, stderr) = run_cu(name, body);
        assert_eq!((code, stdout.as_str(), stderr.as_str()), (1, "", want), "{name}");
    }
    // A copy of no elements touches nothing: a freed pointer and one at the end are fine.
    let (code, stdout, stderr) = run_cu(
        "nothing",
        "    int *h = (int *) malloc(4 * sizeof(int));\n    free(h);\n    int *d;\n    cudaMalloc(&d, 4 * sizeof(int));\n    cudaMemcpy(d, h, 0, cudaMemcpyHostToDevice);\n    cudaMemcpy(d + 4, h, 0, cudaMemcpyHostToDevice);\n    printf(\"ok\\n\");",
    );
    assert_eq!((code, stdout.as_str(), stderr.as_str()), (0, "ok\n", ""));
}

#[test]
fn emitted_cuda_of_the_copies_compiles_with_nvcc() {
    let Some(nvcc) = common::nvcc() else {
        eprintln!("copy_elems: nvcc not found ($NVCC or .venv/bin/nvcc); run scripts/setup-nvcc.sh — skipped");
        return;
    };
    let cuda = strata_emit::emit_cuda(&program()).unwrap();
    // Each kind of copy is one `cudaMemcpy` of its kind; host to host is `memmove`.
    for kind in ["cudaMemcpyHostToDevice", "cudaMemcpyDeviceToDevice", "cudaMemcpyDeviceToHost"] {
        assert!(cuda.contains(kind), "{kind} missing:\n{cuda}");
    }
    assert!(cuda.contains("memmove("));
    let dir = std::env::temp_dir().join(format!("strata-copy-elems-nvcc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cu = dir.join("copies.cu");
    std::fs::write(&cu, cuda).unwrap();
    let out = Command::new(nvcc)
        .args(["-Werror", "all-warnings", "-gencode", "arch=compute_80,code=sm_80", "-c", "-o"])
        .arg(dir.join("copies.o"))
        .arg(&cu)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}
