//! The abstract syntax tree of Strata: the Descend paper's grammar (Fig. 1, 2, 4, 5) with spans.
//!
//! Every node that can be pointed at in a diagnostic carries a [`Span`]. Trees parsed with
//! [`crate::parse_erased`] carry [`Span::DUMMY`] everywhere, so two such trees are equal exactly
//! when they have the same structure; the formatter's round-trip tests rely on that.

pub use strata_diag::Span;

/// A name with its position.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A whole source file.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub items: Vec<Item>,
    pub span: Span,
}

// Items and statements are few and built once; boxing the large variants would only add indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Fn(FnDecl),
    /// `const N: nat = 1024;` — a compile-time natural number, overridable with `-D N=…`.
    Const(ConstDecl),
    /// `view group_by_row<n: nat, k: nat> = group::<n/k>.transpose.map(transpose);`
    View(ViewDecl),
}

impl Item {
    pub fn span(&self) -> Span {
        match self {
            Item::Fn(f) => f.span,
            Item::Const(c) => c.span,
            Item::View(v) => v.span,
        }
    }
}

/// `fn name<generics>(params) -[exec: ExecTy]-> ret where constraints { body }` (or `;`).
#[derive(Clone, Debug, PartialEq)]
pub struct FnDecl {
    pub name: Ident,
    pub generics: Vec<GenericParam>,
    pub params: Vec<Param>,
    /// The execution resource the function is executed by, e.g. `grid: gpu.grid<X<64>, X<1024>>`.
    pub exec: Option<ExecDecl>,
    pub ret: Option<Ty>,
    pub where_clauses: Vec<NatConstraint>,
    /// `None` for a bodiless declaration (`fn f(…) -[…]-> ();`).
    pub body: Option<Block>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ConstDecl {
    pub name: Ident,
    /// Written with its kind, `const N: nat = …`, rather than the short form `const N = …`; the
    /// formatter keeps the form.
    pub annotated: bool,
    pub value: Nat,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ViewDecl {
    pub name: Ident,
    pub generics: Vec<GenericParam>,
    pub body: Vec<ViewRef>,
    pub span: Span,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Nat,
    Mem,
    /// Data type (`dty`).
    DataTy,
    /// Provenance / lifetime (`prv`, also spelled `rgn`).
    Prv,
    /// A numeric data type (`num`): a `dty` bounded to `i32`, `i64`, `u32`, `u64`, `f32`, `f64`,
    /// on whose values arithmetic and comparisons are allowed.
    Num,
}

impl Kind {
    pub fn keyword(self) -> &'static str {
        match self {
            Kind::Nat => "nat",
            Kind::Mem => "mem",
            Kind::DataTy => "dty",
            Kind::Prv => "prv",
            Kind::Num => "num",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct GenericParam {
    pub name: Ident,
    pub kind: Kind,
    pub span: Span,
}

/// `where` constraint between nats: `n % 32 == 0`, `k <= n`.
#[derive(Clone, Debug, PartialEq)]
pub struct NatConstraint {
    pub lhs: Nat,
    pub op: CmpOp,
    pub rhs: Nat,
    pub span: Span,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

/// A parameter, optionally owned by a sub-resource: `[grid.blocks.forall(X)] tmp: &uniq gpu.shared [f32; 32]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub exec: Option<ExecExpr>,
    pub mutable: bool,
    pub name: Ident,
    pub ty: Ty,
    pub span: Span,
}

/// `-[grid: gpu.grid<X<64>, X<1024>>]->`
#[derive(Clone, Debug, PartialEq)]
pub struct ExecDecl {
    pub name: Ident,
    pub ty: ExecTy,
    pub span: Span,
}

// ------------------------------------------------------------------------------------------------
// Natural numbers, dimensions and execution resources (Fig. 1)

#[derive(Clone, Debug, PartialEq)]
pub struct Nat {
    pub kind: NatKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum NatKind {
    Lit(u64),
    Var(Ident),
    Bin(NatOp, Box<Nat>, Box<Nat>),
    /// A call of a nat function such as `log2(n)`.
    Call(Ident, Vec<Nat>),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum NatOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
}

impl NatOp {
    pub fn symbol(self) -> &'static str {
        match self {
            NatOp::Add => "+",
            NatOp::Sub => "-",
            NatOp::Mul => "*",
            NatOp::Div => "/",
            NatOp::Rem => "%",
            NatOp::Pow => "^",
        }
    }
}

/// One dimension selector: `X`, `Y` or `Z`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DimName {
    X,
    Y,
    Z,
}

impl DimName {
    pub fn letter(self) -> char {
        match self {
            DimName::X => 'X',
            DimName::Y => 'Y',
            DimName::Z => 'Z',
        }
    }
}

/// A shape of up to three dimensions: `X<32>`, `XY<64, 64>`, `XYZ<a, b, c>`.
/// `dims` are in the order written and name distinct, increasing axes.
#[derive(Clone, Debug, PartialEq)]
pub struct Dim {
    pub dims: Vec<(DimName, Nat)>,
    pub span: Span,
}

/// An execution resource expression: `grid`, `grid.blocks`, `block.threads[0..1]_Y`, `cpu.thread`.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecExpr {
    pub base: ExecBase,
    pub path: Vec<ExecStep>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExecBase {
    Var(Ident),
    CpuThread,
    /// A literal grid `gpu.grid<blocks, threads>`.
    Grid(Dim, Dim),
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExecStep {
    Blocks,
    Threads,
    Warps,
    /// `.lanes`: the threads of a warp.
    Lanes,
    ToThreads,
    ToWarps,
    Forall(DimName),
    /// `[a..b]_d`: the sub-resources with index in `a..b` along `d`.
    Range(Nat, Nat, DimName),
    /// `.X` (`.Y`, `.Z`), only in a selection `p[[b.X]]`: select by this dimension of `b` alone.
    Dim(DimName),
}

/// Execution resource types (Fig. 5), written after the function arrow's name.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecTy {
    pub kind: ExecTyKind,
    /// Whether the name after `cpu.`/`gpu.` was written capitalised, as the paper does
    /// (`gpu.Grid`, `cpu.Thread`), rather than in the prototype's lower case (`gpu.grid`,
    /// `cpu.thread`); the formatter keeps the spelling. Always true for the kinds that have only
    /// a capitalised name (`BlockGrp`, `ThreadGrp`, `WarpGrp`, `Any`).
    pub capitalised: bool,
    /// `gpu.ordered_grid` (`gpu.OrderedGrid`): a grid whose blocks start in the order of their
    /// index, so that a block may wait for a lower one (docs/language.md, "Ordered grids").
    pub ordered: bool,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExecTyKind {
    CpuThread,
    Grid(Dim, Dim),
    BlockGrp(Dim, Dim),
    Block(Dim),
    ThreadGrp(Dim),
    WarpGrp(Nat),
    Warp,
    Thread,
    Any,
}

// ------------------------------------------------------------------------------------------------
// Types (Fig. 5)

#[derive(Clone, Debug, PartialEq)]
pub struct Ty {
    pub kind: TyKind,
    pub span: Span,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ScalarTy {
    Bool,
    I8,
    I16,
    U8,
    U16,
    I32,
    I64,
    U32,
    U64,
    F32,
    F64,
    Unit,
    AtomicU32,
    AtomicI32,
    AtomicU64,
    AtomicI64,
    AtomicF32,
    AtomicF64,
}

impl ScalarTy {
    pub fn name(self) -> &'static str {
        match self {
            ScalarTy::Bool => "bool",
            ScalarTy::I8 => "i8",
            ScalarTy::I16 => "i16",
            ScalarTy::U8 => "u8",
            ScalarTy::U16 => "u16",
            ScalarTy::I32 => "i32",
            ScalarTy::I64 => "i64",
            ScalarTy::U32 => "u32",
            ScalarTy::U64 => "u64",
            ScalarTy::F32 => "f32",
            ScalarTy::F64 => "f64",
            ScalarTy::Unit => "()",
            ScalarTy::AtomicU32 => "AtomicU32",
            ScalarTy::AtomicI32 => "AtomicI32",
            ScalarTy::AtomicU64 => "AtomicU64",
            ScalarTy::AtomicI64 => "AtomicI64",
            ScalarTy::AtomicF32 => "AtomicF32",
            ScalarTy::AtomicF64 => "AtomicF64",
        }
    }

    /// The scalar type named by a keyword-like identifier, e.g. `"f32"`.
    pub fn from_name(name: &str) -> Option<ScalarTy> {
        Some(match name {
            "bool" => ScalarTy::Bool,
            "i8" => ScalarTy::I8,
            "i16" => ScalarTy::I16,
            "u8" => ScalarTy::U8,
            "u16" => ScalarTy::U16,
            "i32" => ScalarTy::I32,
            "i64" => ScalarTy::I64,
            "u32" => ScalarTy::U32,
            "u64" => ScalarTy::U64,
            "f32" => ScalarTy::F32,
            "f64" => ScalarTy::F64,
            "AtomicU32" => ScalarTy::AtomicU32,
            "AtomicI32" => ScalarTy::AtomicI32,
            "AtomicU64" => ScalarTy::AtomicU64,
            "AtomicI64" => ScalarTy::AtomicI64,
            "AtomicF32" => ScalarTy::AtomicF32,
            "AtomicF64" => ScalarTy::AtomicF64,
            _ => return None,
        })
    }

    /// Whether this is an atomic type (`AtomicU32` … `AtomicF64`): memory only read and written
    /// by the atomic operations.
    pub fn is_atomic(self) -> bool {
        self.plain().is_some()
    }

    /// The plain type an atomic holds (`u32` for `AtomicU32`); `None` for a plain type.
    pub fn plain(self) -> Option<ScalarTy> {
        Some(match self {
            ScalarTy::AtomicU32 => ScalarTy::U32,
            ScalarTy::AtomicI32 => ScalarTy::I32,
            ScalarTy::AtomicU64 => ScalarTy::U64,
            ScalarTy::AtomicI64 => ScalarTy::I64,
            ScalarTy::AtomicF32 => ScalarTy::F32,
            ScalarTy::AtomicF64 => ScalarTy::F64,
            _ => return None,
        })
    }

    /// The value type with the atomics replaced by the plain type they hold.
    pub fn unatomic(self) -> ScalarTy {
        self.plain().unwrap_or(self)
    }

    /// The width in bits of a (plain) integer type: 8, 16, 32 or 64; `None` for the rest.
    pub fn int_bits(self) -> Option<u32> {
        match self {
            ScalarTy::I8 | ScalarTy::U8 => Some(8),
            ScalarTy::I16 | ScalarTy::U16 => Some(16),
            ScalarTy::I32 | ScalarTy::U32 => Some(32),
            ScalarTy::I64 | ScalarTy::U64 => Some(64),
            _ => None,
        }
    }

    /// Whether this is a plain integer type (`i8` … `u64`).
    pub fn is_int(self) -> bool {
        self.int_bits().is_some()
    }

    /// Whether this is a signed plain integer type.
    pub fn is_signed_int(self) -> bool {
        matches!(self, ScalarTy::I8 | ScalarTy::I16 | ScalarTy::I32 | ScalarTy::I64)
    }

    /// Whether this is a plain unsigned integer type.
    pub fn is_unsigned_int(self) -> bool {
        matches!(self, ScalarTy::U8 | ScalarTy::U16 | ScalarTy::U32 | ScalarTy::U64)
    }

    /// Whether this is one of the small integer types `i8`, `u8`, `i16`, `u16` (C computes
    /// them in `int`).
    pub fn is_small_int(self) -> bool {
        matches!(self, ScalarTy::I8 | ScalarTy::U8 | ScalarTy::I16 | ScalarTy::U16)
    }

    /// The smallest and largest value of a plain integer type.
    pub fn int_range(self) -> Option<(i128, i128)> {
        let bits = self.int_bits()?;
        Some(if self.is_signed_int() {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        })
    }

    /// The plain integer types, narrowest first.
    pub const INTS: [ScalarTy; 8] = [
        ScalarTy::I8,
        ScalarTy::U8,
        ScalarTy::I16,
        ScalarTy::U16,
        ScalarTy::I32,
        ScalarTy::U32,
        ScalarTy::I64,
        ScalarTy::U64,
    ];
}

#[derive(Clone, Debug, PartialEq)]
pub enum TyKind {
    Scalar(ScalarTy),
    /// A type variable of kind `dty`.
    Var(Ident),
    Tuple(Vec<Ty>),
    /// `[T; n]`
    Array(Box<Ty>, Nat),
    /// `[[T; n]]`
    ViewArray(Box<Ty>, Nat),
    /// `&'r uniq gpu.global T`; every part but the referent is optional.
    Ref(RefTy),
    /// `T @ cpu.mem`: an owning pointer to memory allocated in a memory space.
    At(Box<Ty>, Mem),
    /// `_`: left to inference.
    Infer,
    /// `fn(T, U) -> R` or `fn(T, U) -[gpu.thread]-> R`: the type of a function parameter.
    Fn(FnTy),
}

/// A function type: its parameter types, the executing resource (`None`: the thread-level
/// resource of the function that declares the parameter) and its result type.
#[derive(Clone, Debug, PartialEq)]
pub struct FnTy {
    pub params: Vec<Ty>,
    pub exec: Option<ExecTy>,
    pub ret: Box<Ty>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RefTy {
    pub prv: Option<Prv>,
    pub own: Option<Ownership>,
    pub mem: Option<Mem>,
    pub ty: Box<Ty>,
}

/// A provenance: `'a` (a concrete region) or `r` (a variable of kind `prv`).
#[derive(Clone, Debug, PartialEq)]
pub enum Prv {
    Region(Ident),
    Var(Ident),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ownership {
    Shrd,
    Uniq,
}

impl Ownership {
    pub fn keyword(self) -> &'static str {
        match self {
            Ownership::Shrd => "shrd",
            Ownership::Uniq => "uniq",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Mem {
    pub kind: MemKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum MemKind {
    CpuMem,
    GpuGlobal,
    GpuShared,
    GpuLocal,
    Var(Ident),
}

impl MemKind {
    pub fn name(&self) -> &str {
        match self {
            MemKind::CpuMem => "cpu.mem",
            MemKind::GpuGlobal => "gpu.global",
            MemKind::GpuShared => "gpu.shared",
            MemKind::GpuLocal => "gpu.local",
            MemKind::Var(v) => &v.name,
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Views (Fig. 2)

/// A view application `group::<32>`, `transpose`, `map(group::<2>.transpose)`, `group_by_row::<32, 4>`.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewRef {
    pub name: Ident,
    pub nat_args: Vec<Nat>,
    /// The views passed to a higher-order view such as `map`; each is a chain applied in order.
    pub view_args: Vec<Vec<ViewRef>>,
    pub span: Span,
}

// ------------------------------------------------------------------------------------------------
// Terms (Fig. 4)

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// Provenance binders `<'a, 'b> { … }`: regions local to this block.
    pub regions: Vec<Ident>,
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    Let(LetStmt),
    /// An expression statement; `semi` records a trailing `;` (without it, the value of a block's
    /// last statement is the block's value).
    Expr {
        expr: Expr,
        semi: bool,
    },
}

impl Stmt {
    pub fn span(&self) -> Span {
        match self {
            Stmt::Let(l) => l.span,
            Stmt::Expr { expr, .. } => expr.span,
        }
    }
}

/// `let mut x: T = e;` or, declared for a sub-resource without an initialiser, `let [e] x: T;`.
#[derive(Clone, Debug, PartialEq)]
pub struct LetStmt {
    pub exec: Option<ExecExpr>,
    pub mutable: bool,
    pub name: Ident,
    pub ty: Option<Ty>,
    pub init: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

impl Block {
    /// Does `pred` hold for an expression anywhere in the block (initialisers included)?
    pub fn any(&self, pred: &dyn Fn(&Expr) -> bool) -> bool {
        self.stmts.iter().any(|s| match s {
            Stmt::Let(l) => l.init.as_ref().is_some_and(|e| e.any(pred)),
            Stmt::Expr { expr, .. } => expr.any(pred),
        })
    }
}

impl Expr {
    /// Does `pred` hold for this expression or one inside it (the bodies of blocks, loops,
    /// branches and `split` arms included)?
    pub fn any(&self, pred: &dyn Fn(&Expr) -> bool) -> bool {
        if pred(self) {
            return true;
        }
        let sub = |x: &Expr| x.any(pred);
        match &self.kind {
            ExprKind::Lit(_)
            | ExprKind::Path(_)
            | ExprKind::Sync(_)
            | ExprKind::Error
            | ExprKind::Return(None)
            | ExprKind::Break
            | ExprKind::Continue => false,
            ExprKind::Unary(_, x)
            | ExprKind::Cast(x, _)
            | ExprKind::Field(x, _)
            | ExprKind::Deref(x)
            | ExprKind::Select(x, _)
            | ExprKind::View(x, _)
            | ExprKind::Paren(x)
            | ExprKind::Unsafe(x)
            | ExprKind::ArrayRepeat(x, _)
            | ExprKind::Return(Some(x))
            | ExprKind::Borrow { place: x, .. } => sub(x),
            ExprKind::Binary(_, a, c)
            | ExprKind::Index(a, c)
            | ExprKind::Assign(a, c)
            | ExprKind::CompoundAssign(_, a, c) => sub(a) || sub(c),
            ExprKind::Call { args: xs, .. } | ExprKind::Tuple(xs) | ExprKind::ArrayList(xs) => xs.iter().any(sub),
            ExprKind::Block(b) | ExprKind::For { body: b, .. } | ExprKind::Sched { body: b, .. } => b.any(pred),
            ExprKind::While { cond, body } => sub(cond) || body.any(pred),
            ExprKind::If { cond, then, els } => sub(cond) || then.any(pred) || els.as_deref().is_some_and(sub),
            ExprKind::Split { arms, .. } => arms.iter().any(|a| sub(&a.body)),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Lit {
    Bool(bool),
    /// Integer literal with its optional suffix type (`7u32`).
    Int(u128, Option<ScalarTy>),
    /// Float literal kept as written (so printing is exact) with its optional suffix.
    Float(String, Option<ScalarTy>),
    Str(String),
    Unit,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::And => "&&",
            BinOp::Or => "||",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
        }
    }

    /// Binding strength as in Rust: higher binds tighter.
    pub fn precedence(self) -> u8 {
        match self {
            BinOp::Or => 1,
            BinOp::And => 2,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 3,
            BinOp::BitOr => 4,
            BinOp::BitXor => 5,
            BinOp::BitAnd => 6,
            BinOp::Shl | BinOp::Shr => 7,
            BinOp::Add | BinOp::Sub => 8,
            BinOp::Mul | BinOp::Div | BinOp::Rem => 9,
        }
    }

    pub fn is_comparison(self) -> bool {
        self.precedence() == 3
    }
}

/// A generic argument at a call site: `::<32, gpu.global, f32>`. What a bare identifier means
/// (nat, type or memory variable) is decided by the checker, so the parser keeps it as `Nat`.
#[derive(Clone, Debug, PartialEq)]
pub enum GenericArg {
    Nat(Nat),
    Ty(Ty),
    Mem(Mem),
}

/// The part of a call after the function name.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    pub grid: Dim,
    pub block: Dim,
    /// The stream the launch is issued on (`<<<grid, block, s>>>`); `None`: the default stream,
    /// which runs the kernel before the host goes on.
    pub stream: Option<Ident>,
    /// Extra launch arguments after `;` (shared-memory types to allocate).
    pub shared: Vec<Ty>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Field {
    Fst,
    Snd,
    Index(u32),
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Lit(Lit),
    /// A variable or function name; a `path` such as `CpuHeap::new` has several segments.
    Path(Vec<Ident>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Cast(Box<Expr>, Ty),
    /// `.fst`, `.snd`, `.0`
    Field(Box<Expr>, Field),
    Deref(Box<Expr>),
    Index(Box<Expr>, Box<Expr>),
    /// `p[[e]]`: distributes the elements of `p` over the sub-resources of `e`.
    Select(Box<Expr>, ExecExpr),
    /// `p.v`: a view applied to an array place.
    View(Box<Expr>, ViewRef),
    Borrow {
        prv: Option<Prv>,
        own: Ownership,
        /// Written without `shrd` (`&p`, `&'a p`): the paper's short form of a shared borrow,
        /// which the formatter keeps. Only with `own == Ownership::Shrd`.
        short: bool,
        place: Box<Expr>,
    },
    Assign(Box<Expr>, Box<Expr>),
    /// `p += e` and friends.
    CompoundAssign(BinOp, Box<Expr>, Box<Expr>),
    Block(Block),
    /// `for i in a..b { … }` over natural numbers.
    For {
        var: Ident,
        start: Nat,
        end: Nat,
        body: Block,
    },
    While {
        cond: Box<Expr>,
        body: Block,
    },
    If {
        cond: Box<Expr>,
        then: Block,
        els: Option<Box<Expr>>,
    },
    /// `sched(Y, X) thread in block { … }`
    Sched {
        dims: Vec<DimName>,
        var: Ident,
        exec: ExecExpr,
        body: Block,
    },
    /// `split(X) block.threads at 32 { fst => …, snd => … }`
    Split {
        dim: DimName,
        exec: ExecExpr,
        at: Nat,
        arms: Box<[SplitArm; 2]>,
    },
    /// `sync` or `sync(block)`
    Sync(Option<ExecExpr>),
    /// `unsafe { … }` or, as in the paper's SSSP example, `unsafe e`.
    Unsafe(Box<Expr>),
    /// `f::<generics>(args)`; `exec` is the paper's explicit execution resource argument
    /// `f::<…>::<e>(…)`; `launch` makes it a kernel launch `f::<…>::<<<grid, block>>>(…)`.
    Call {
        func: Vec<Ident>,
        generics: Vec<GenericArg>,
        exec: Option<ExecExpr>,
        launch: Option<Launch>,
        args: Vec<Expr>,
    },
    Tuple(Vec<Expr>),
    ArrayList(Vec<Expr>),
    /// `[e; n]`
    ArrayRepeat(Box<Expr>, Nat),
    Return(Option<Box<Expr>>),
    /// `break`: leaves the innermost enclosing `for` or `while` loop.
    Break,
    /// `continue`: goes on with the next iteration of the innermost enclosing loop.
    Continue,
    Paren(Box<Expr>),
    /// Placeholder left where the parser recovered from an error.
    Error,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SplitArm {
    pub name: Ident,
    pub body: Expr,
}
