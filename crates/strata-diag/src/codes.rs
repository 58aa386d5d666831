//! The registry of every diagnostic code. Codes are stable: once published, a code keeps its
//! meaning. The long explanation of `EXXXX` lives in `explain/EXXXX.md` and is printed by
//! `strata explain EXXXX`.

/// A stable diagnostic code such as `E0010`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Code(&'static str);

impl Code {
    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// The registry entry for this code.
    pub fn info(self) -> Option<&'static CodeInfo> {
        lookup(self.0)
    }

    /// Whether this code reports a problem of the machine (a missing compiler or driver), not of
    /// the program: [`Phase::Environment`].
    pub fn is_environment(self) -> bool {
        self.info().is_some_and(|i| i.phase == Phase::Environment)
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// Which phase raises a code. Lets the test harness know whether a phase exists yet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    Syntax,
    Check,
    /// Found by running the program on the `sim` device.
    Run,
    /// Not a fault of the program: a tool or driver Strata needs is missing from this machine
    /// (the CLI exits with status 2 for these, like other usage and I/O errors).
    Environment,
}

/// One registry entry.
#[derive(Debug)]
pub struct CodeInfo {
    pub code: Code,
    pub phase: Phase,
    pub title: &'static str,
    pub explanation: &'static str,
}

macro_rules! registry {
    ($( $name:ident = $code:literal, $phase:ident, $title:literal; )*) => {
        $( pub const $name: Code = Code($code); )*
        /// Every registered code, in code order.
        pub static ALL: &[CodeInfo] = &[
            $( CodeInfo {
                code: $name,
                phase: Phase::$phase,
                title: $title,
                explanation: include_str!(concat!("../explain/", $code, ".md")),
            }, )*
        ];
    };
}

registry! {
    // --- lexing and parsing (strata-syntax) ---
    UNKNOWN_CHARACTER = "E0001", Syntax, "unknown character";
    UNTERMINATED_COMMENT = "E0002", Syntax, "unterminated block comment";
    UNTERMINATED_STRING = "E0003", Syntax, "unterminated string literal";
    INVALID_LITERAL = "E0004", Syntax, "invalid numeric literal";
    INVALID_UTF8 = "E0005", Syntax, "source file is not valid UTF-8";
    UNEXPECTED_TOKEN = "E0010", Syntax, "unexpected token";
    UNCLOSED_DELIMITER = "E0011", Syntax, "unclosed delimiter";
    NESTING_TOO_DEEP = "E0012", Syntax, "nesting too deep";
    EXPECTED_ITEM = "E0013", Syntax, "expected an item";
    UNKNOWN_DIMENSION = "E0014", Syntax, "unknown dimension";
    UNKNOWN_KIND = "E0015", Syntax, "unknown kind";
    INVALID_ASSIGN_TARGET = "E0016", Syntax, "invalid left-hand side of assignment";
    UNKNOWN_MEMORY_SPACE = "E0017", Syntax, "unknown memory space";
    UNKNOWN_EXEC_TYPE = "E0018", Syntax, "unknown execution resource type";
    // --- names and kinds (strata-check) ---
    UNKNOWN_NAME = "E0101", Check, "cannot find name in this scope";
    DUPLICATE_DEFINITION = "E0102", Check, "name defined more than once";
    KIND_MISMATCH = "E0103", Check, "wrong kind of generic argument";
    GENERIC_ARG_COUNT = "E0104", Check, "wrong number of generic arguments";
    CANNOT_INFER = "E0105", Check, "cannot infer generic argument";
    NO_MAIN = "E0106", Check, "no `main` function";
    JUMP_OUTSIDE_LOOP = "E0107", Check, "`break` or `continue` outside a loop";
    // --- types ---
    MISMATCHED_TYPES = "E0201", Check, "mismatched types";
    ARG_COUNT = "E0202", Check, "wrong number of arguments";
    NOT_CALLABLE = "E0203", Check, "not a function";
    BAD_OPERANDS = "E0204", Check, "invalid operand types for operator";
    ASSIGN_IMMUTABLE = "E0205", Check, "cannot assign twice to immutable variable";
    NO_SUCH_FIELD = "E0206", Check, "no such projection";
    UNINITIALISED = "E0207", Check, "variable declared without a value";
    FN_NOT_VALUE = "E0208", Check, "a function is not a value";
    FN_ARG_MISMATCH = "E0209", Check, "function argument does not fit the function parameter";
    NOT_NUMERIC = "E0210", Check, "not a numeric type";
    // --- sizes and views ---
    SIZE_NOT_PROVEN = "E0301", Check, "size constraint not satisfied";
    INDEX_OUT_OF_BOUNDS = "E0302", Check, "index out of bounds";
    SELECT_SIZE_MISMATCH = "E0303", Check, "selection size does not match execution resource";
    TAKE_OUT_OF_BOUNDS = "E0304", Check, "split position out of bounds";
    UNKNOWN_VIEW = "E0305", Check, "unknown view";
    NOT_AN_ARRAY = "E0306", Check, "view or index applied to a non-array";
    SIZE_ESCAPES = "E0307", Check, "a size bound at run time escapes its scope";
    // --- execution resources ---
    WRONG_EXEC = "E0401", Check, "wrong execution resource";
    INVALID_SCHED = "E0402", Check, "invalid schedule";
    BARRIER_NOT_ALLOWED = "E0403", Check, "barrier not allowed here";
    INVALID_SYNC_TARGET = "E0404", Check, "cannot synchronize this execution resource";
    COLLECTIVE_NOT_ALLOWED = "E0405", Check, "collective operation not allowed here";
    // --- ownership, borrowing and accesses ---
    CONFLICTING_ACCESS = "E0501", Check, "conflicting memory access";
    NARROWING_VIOLATED = "E0502", Check, "narrowing violated";
    USE_AFTER_MOVE = "E0503", Check, "use of moved value";
    BORROW_CONFLICT = "E0504", Check, "cannot borrow because it is already borrowed";
    DANGLING_REFERENCE = "E0505", Check, "reference outlives the value it borrows";
    WRITE_THROUGH_SHARED = "E0506", Check, "cannot write through a shared reference";
    STREAM_PENDING = "E0507", Check, "memory in use by work pending on a stream";
    STREAM_NOT_SYNCED = "E0508", Check, "stream left with pending work";
    STREAM_MISUSE = "E0509", Check, "invalid use of a stream";
    // --- memory spaces ---
    BAD_DEREF = "E0601", Check, "cannot dereference here";
    // --- kernel launches ---
    LAUNCH_SHAPE = "E0701", Check, "launch shape does not match the kernel";
    NOT_A_KERNEL = "E0702", Check, "not a kernel";
    BLOCK_TOO_LARGE = "E0703", Check, "block too large for the target";
    GRID_TOO_LARGE = "E0704", Check, "grid too large for the target";
    ZERO_SIZED_LAUNCH = "E0705", Check, "zero-sized grid or block";
    STATIC_SHARED_TOO_LARGE = "E0706", Check, "static shared memory too large";
    SHARED_ABOVE_ARCH_MAX = "E0707", Check, "shared memory above the target's maximum";
    SHARED_SIZE_NOT_FIXED = "E0708", Check, "shared memory size not fixed for the launch";
    // --- lowering (strata-ir) ---
    UNSUPPORTED = "E0801", Check, "not supported by the IR yet";
    NOTHING_TO_EMIT = "E0806", Check, "nothing to emit";
    // --- run time (the sim device) ---
    RUN_DATA_RACE = "E0901", Run, "data race";
    RUN_BARRIER_DIVERGENCE = "E0902", Run, "barrier divergence";
    RUN_OUT_OF_BOUNDS = "E0903", Run, "out-of-bounds access or out of memory";
    RUN_UNINIT = "E0904", Run, "read of uninitialised memory";
    RUN_MEMORY_SPACE = "E0905", Run, "access to memory of the wrong device";
    RUN_USE_AFTER_FREE = "E0906", Run, "use after free";
    RUN_STEP_LIMIT = "E0907", Run, "step limit reached";
    RUN_ASSERTION = "E0908", Run, "assertion failed";
    RUN_ARITHMETIC = "E0909", Run, "arithmetic error";
    RUN_TIME_LIMIT = "E0910", Run, "time limit exceeded";
    RUN_KILLED = "E0911", Run, "program killed by a signal";
    RUN_PROGRAM_INPUT = "E0912", Run, "program argument or file error";
    RUN_OVERFLOW = "E0913", Run, "integer overflow";
    RUN_DEADLOCK = "E0914", Run, "deadlock: a wait that nothing can end";
    // --- the environment: tools and drivers missing from the machine (exit status 2) ---
    NO_C_COMPILER = "E1001", Environment, "no C compiler found";
    NVCC_MISSING = "E1002", Environment, "nvcc not found";
    NO_GPU_DRIVER = "E1003", Environment, "no usable GPU or GPU driver";
    CACHE_UNUSABLE = "E1004", Environment, "the program cache cannot be used";
}

/// Looks up a code by its text, e.g. `"E0010"`; accepts lower case and a missing `E`.
pub fn lookup(code: &str) -> Option<&'static CodeInfo> {
    let code = code.trim();
    let digits = code.strip_prefix(['e', 'E']).unwrap_or(code);
    // `501` and `E501` mean E0501.
    let normalized = if !digits.is_empty() && digits.len() < 4 && digits.bytes().all(|b| b.is_ascii_digit()) {
        format!("E{digits:0>4}")
    } else {
        format!("E{digits}")
    };
    ALL.iter().find(|info| info.code.as_str() == normalized)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_sorted() {
        for pair in ALL.windows(2) {
            assert!(pair[0].code < pair[1].code, "{} !< {}", pair[0].code, pair[1].code);
        }
    }

    #[test]
    fn every_code_has_a_real_explanation() {
        for info in ALL {
            let text = info.explanation.trim();
            assert!(
                text.starts_with(&format!("# {}", info.code)),
                "{} explanation must start with its heading",
                info.code
            );
            assert!(text.lines().count() >= 5, "{} explanation is too short", info.code);
        }
    }

    #[test]
    fn lookup_is_forgiving() {
        assert_eq!(lookup("e0010").map(|i| i.code), Some(UNEXPECTED_TOKEN));
        assert_eq!(lookup("0010").map(|i| i.code), Some(UNEXPECTED_TOKEN));
        assert_eq!(lookup("E10").map(|i| i.code), Some(UNEXPECTED_TOKEN));
        assert_eq!(lookup("501").map(|i| i.code), Some(CONFLICTING_ACCESS));
        assert!(lookup("E9999").is_none());
    }

    #[test]
    fn environment_codes_are_the_e10xx() {
        for info in ALL {
            assert_eq!(info.phase == Phase::Environment, info.code.as_str().starts_with("E10"), "{}", info.code);
        }
        assert!(NO_C_COMPILER.is_environment() && !UNSUPPORTED.is_environment());
    }
}
