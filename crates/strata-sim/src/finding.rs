//! What a failed run found, as data: the threads and accesses behind a run-time error of GPU
//! code, for tools that report findings in their own terms (`strata check FILE.cu`,
//! docs/cuda-c.md). The diagnostic says the same in words; this record is what it was made from.

use strata_diag::Span;

/// The threads, accesses and memory behind a run-time error raised by GPU code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The buffer involved (a race, an out-of-bounds access, an uninitialised read), as named in
    /// the diagnostic, and its memory space (`gpu.global`, `gpu.shared`, …).
    pub buffer: Option<String>,
    pub space: Option<&'static str>,
    /// The element of `buffer`.
    pub index: Option<u64>,
    /// The field of that element, in a buffer of structs (CUDA-C `p[i].f`), counted from 0.
    pub field: Option<u64>,
    /// The accesses, the failing one first: for a race the later access then the earlier one;
    /// for a barrier divergence the waiting thread then the one elsewhere; otherwise one.
    pub accesses: Vec<Access>,
}

/// One thread's part in a finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    /// Where in the source (`Span::DUMMY` when it has no position).
    pub span: Span,
    /// `blockIdx` and `threadIdx` of the thread, (x, y, z).
    pub block: [u64; 3],
    pub thread: [u64; 3],
    pub kind: AccessKind,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AccessKind {
    Read,
    Write,
    /// Waits at a barrier.
    Barrier,
    /// Finished or returned without reaching the barrier.
    Exit,
    /// Executing the statement that failed (bounds, arithmetic, …).
    Executes,
}

impl AccessKind {
    pub fn name(self) -> &'static str {
        match self {
            AccessKind::Read => "read",
            AccessKind::Write => "write",
            AccessKind::Barrier => "barrier",
            AccessKind::Exit => "exit",
            AccessKind::Executes => "executes",
        }
    }
}
