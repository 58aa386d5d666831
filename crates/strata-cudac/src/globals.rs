//! Global variables: `__device__ int counter;`, `__constant__ float coef[16];` (with
//! `cudaMemcpyToSymbol`/`cudaMemcpyFromSymbol`), and host globals (`int calls = 0;`,
//! `float table[N];`).
//!
//! The IR has no globals, so each global is an allocation made once, at the start of `main`
//! (the *prologue*: a device buffer from `GlobalAllocCopy` for `__device__`/`__constant__`, a host
//! buffer for the rest, holding the initialiser or zeros), and every other function receives the
//! globals of its side as hidden pointer parameters after its own (GPU functions: the device
//! globals; host functions: all), which every call and launch passes on. A scalar global is a
//! one-element buffer used as a `__shared__` scalar is ([`CTy::SharedScalar`]), an array global a
//! pointer. So every access to a global is an access to memory with all of `sim`'s checks: races
//! on a `__device__` counter, bounds of a `__constant__` table, host code touching device globals
//! (E0905). Not supported (E0801): struct globals with initialisers, `__shared__` at file level,
//! `extern` globals; writes to `__constant__` memory from kernels are not reported.

use super::*;

/// A global variable.
#[derive(Clone, Debug)]
pub(crate) struct GlobalDef {
    pub(crate) name: String,
    pub(crate) elem: Elem,
    /// An array's lengths, outermost first ([`arrays`]); empty for a scalar.
    pub(crate) dims: Vec<u64>,
    /// `__device__` or `__constant__`: in device memory.
    pub(crate) device: bool,
    /// The local holding its buffer in the prologue (and in `main`, whose first locals those are).
    pub(crate) local: LocalId,
}

/// The allocations of the globals, as the first locals and statements of `main`.
#[derive(Clone, Debug, Default)]
pub struct Prologue {
    pub(crate) locals: Vec<ir::Local>,
    pub(crate) body: Vec<Stmt>,
    /// The kernels' parameters of 8- and 16-bit integer types (by kernel name and local), with
    /// their bits and signedness: kernel-only mode gives them values of their C type.
    pub(crate) narrow_params: HashMap<(String, LocalId), (u32, bool)>,
}

impl Lx {
    /// A file-level declaration that is not a prototype: global variables, lowered into the
    /// prologue (in the first pass, so every function knows every global).
    pub(crate) fn global_declaration(&mut self, n: Node, src: &Src) -> R<()> {
        let (mut device, mut constant, mut is_const) = (false, false, false);
        let mut c = n.walk();
        if n.children(&mut c).any(|ch| ch.kind() == "__shared__" || self.text(ch, src) == "__shared__") {
            // A file-level `__shared__` variable: every kernel's own (lowered at the start of
            // each kernel, as if declared there: [`Lx::file_shared_in_kernel`]).
            if self.file != self.root_file {
                return Err(self.unsupported(n, src, "a `__shared__` variable in a header"));
            }
            self.file_shared.push((n.start_byte(), n.end_byte(), self.text(n, src).to_string()));
            return Ok(());
        }
        let mut c = n.walk();
        for ch in n.children(&mut c) {
            match (ch.kind(), self.text(ch, src)) {
                ("__device__", _) | ("type_qualifier", "__device__") => device = true,
                ("__constant__", _) | ("type_qualifier", "__constant__") => constant = true,
                ("type_qualifier", "const" | "constexpr") => is_const = true,
                ("type_qualifier", "volatile") | ("storage_class_specifier", "static") => {}
                ("type_qualifier" | "storage_class_specifier" | "attribute_specifier" | "__shared__", t) => {
                    return Err(self.unsupported(ch, src, format!("`{t}` global variables")));
                }
                _ => {}
            }
        }
        let device = device || constant;
        let ty_node = self.child(n, "type", src)?;
        if is_const && !device {
            // `const int BLOCK = 256;`: a named constant, usable on both sides and in array sizes
            // as C++ (and so CUDA) allows: a macro of its value converted to its type.
            if let Some(r) = self.const_scalars(n, ty_node, src) {
                return r;
            }
        }
        let elem = match self.struct_type(ty_node, src) {
            Some(id) => Elem::Struct(id),
            None => Elem::S(self.scalar_type(ty_node, src)?),
        };
        // Lowered as the start of `main`.
        let saved = std::mem::replace(
            &mut self.f,
            FnState { role: Role::Main, scopes: vec![HashMap::new()], ..FnState::default() },
        );
        self.f.locals = std::mem::take(&mut self.prologue.locals);
        let r = self.global_declarators(n, elem, device, src);
        self.prologue.locals = std::mem::take(&mut self.f.locals);
        self.f = saved;
        r
    }

    fn global_declarators(&mut self, n: Node, elem: Elem, device: bool, src: &Src) -> R<()> {
        for (d, init) in self.declarators(n, src)? {
            // `dims`: the lengths of an array (outermost first), empty for a scalar.
            let (name_node, dims) = match d.kind() {
                "identifier" => (d, Vec::new()),
                "array_declarator" => {
                    let (inner, dims) = self.array_declarator(d, src)?;
                    let Some(dims) = dims.into_iter().collect::<Option<Vec<u64>>>() else {
                        return Err(self.unsupported(d, src, "a global array without a size"));
                    };
                    (inner, dims)
                }
                _ => return Err(self.unsupported(d, src, "this global variable (pointers?)")),
            };
            let name = self.text(name_node, src).to_string();
            if self.globals.iter().any(|g| g.name == name) {
                return Err(self.unsupported(name_node, src, format!("a second definition of `{name}`")));
            }
            let count = self.flat_length(&dims.iter().map(|x| Some(*x)).collect::<Vec<_>>(), d, src)?;
            let span = self.span(d, src);
            let values = match (init, elem) {
                (None, _) => Expr::ArrayRepeat(Box::new(self.elem_zero(elem)), IExpr::Const(count)),
                (Some(v), Elem::S(t)) => {
                    let mut xs = if dims.is_empty() {
                        if v.kind() == "initializer_list" {
                            return Err(self.unsupported(v, src, "this initialiser of a global variable"));
                        }
                        let (e, et) = self.rvalue(v, src)?;
                        vec![self.convert(e, et, CTy::S(t), v, src)?]
                    } else {
                        self.array_init(v, &dims, t, src)?
                    };
                    xs.resize(count as usize, zero(t));
                    Expr::ArrayList(xs)
                }
                (Some(v), Elem::Struct(_) | Elem::Split(_)) => {
                    return Err(self.unsupported(v, src, "initialised struct global variables"));
                }
            };
            if let (Elem::Struct(_), true) = (elem, dims.is_empty()) {
                return Err(self.unsupported(d, src, "struct global variables other than arrays"));
            }
            let mem = if device { Mem::GpuGlobal } else { Mem::Cpu };
            let local = self.new_local(&name, self.elem_ptr(elem, mem, true), Level::Host);
            let host = Expr::Builtin(Builtin::HeapNew, vec![values], span);
            let init = if device { Expr::Builtin(Builtin::GlobalAllocCopy, vec![host], span) } else { host };
            self.prologue.body.push(Stmt::Let { local, init: Some(init), span });
            self.globals.push(GlobalDef { name, elem, dims, device, local });
        }
        Ok(())
    }

    /// `const T a = v, b = w;` of scalars with initialisers, as named constants (`None`: not
    /// of that form, a global variable).
    fn const_scalars(&mut self, n: Node, ty_node: Node, src: &Src) -> Option<R<()>> {
        let t = self.scalar_type(ty_node, src).ok()?;
        let mut c = n.walk();
        let decls: Vec<Node> = n.children_by_field_name("declarator", &mut c).collect();
        let mut pairs = Vec::new();
        for d in decls {
            let name = d.child_by_field_name("declarator").filter(|x| x.kind() == "identifier")?;
            let value = d.child_by_field_name("value").filter(|v| v.kind() != "initializer_list")?;
            pairs.push((self.text(name, src).to_string(), value));
        }
        Some(pairs.into_iter().try_for_each(|(name, value)| {
            // Checked here; where it is named, its value is converted to its type.
            let (_, et) = self.rvalue(value, src)?;
            if !matches!(et, CTy::S(_)) {
                return Err(self.unsupported(value, src, "this constant"));
            }
            self.object_macro(name.clone(), value, src)?;
            self.const_types.insert(name, t);
            Ok(())
        }))
    }

    /// The C type a global is used as in a function body.
    pub(crate) fn global_cty(g: &GlobalDef) -> CTy {
        match (g.dims.is_empty(), g.elem) {
            (true, Elem::S(t)) => CTy::SharedScalar(t),
            _ => CTy::Ptr(g.elem),
        }
    }

    /// Binds the globals in `main` (the prologue's locals, which are `main`'s first ones).
    pub(crate) fn bind_globals_in_main(&mut self) {
        for g in self.globals.clone() {
            self.bind(&g.name, Var { local: g.local, ty: Self::global_cty(&g) });
            if !g.dims.is_empty() {
                self.f.arrays.insert(g.local, (g.elem, g.dims.clone()));
            }
            self.f.global_locals.push(Some(g.local));
        }
    }

    /// The hidden parameters of a function that is not `main` (its side's globals, in order),
    /// bound in its outermost scope unless a parameter has the name.
    pub(crate) fn global_params(&mut self, role: Role) -> Vec<LocalId> {
        let gpu = matches!(role, Role::Kernel | Role::Device);
        let level = if role == Role::Kernel { Level::Block } else { self.level() };
        let mut params = Vec::new();
        for g in self.globals.clone() {
            if gpu && !g.device {
                self.f.global_locals.push(None);
                continue;
            }
            let mem = if g.device { Mem::GpuGlobal } else { Mem::Cpu };
            let l = self.new_local(&g.name, self.elem_ptr(g.elem, mem, false), level);
            if self.f.scopes.first().is_some_and(|s| !s.contains_key(&g.name)) {
                self.bind(&g.name, Var { local: l, ty: Self::global_cty(&g) });
                if !g.dims.is_empty() {
                    self.f.arrays.insert(l, (g.elem, g.dims.clone()));
                }
            }
            self.f.global_locals.push(Some(l));
            params.push(l);
        }
        params
    }

    /// The hidden arguments of a call of a function on the GPU (`gpu`) or host side.
    pub(crate) fn global_args(&self, gpu: bool, span: Span) -> Vec<Expr> {
        self.globals
            .iter()
            .zip(&self.f.global_locals)
            .filter(|(g, _)| !gpu || g.device)
            .filter_map(|(_, l)| l.map(|l| Expr::Load(Place::local(l, span))))
            .collect()
    }

    /// `cudaMemcpyToSymbol(symbol, src, bytes[, 0[, kind]])` and
    /// `cudaMemcpyFromSymbol(dst, symbol, bytes[, 0[, kind]])`: `cudaMemcpy` with the symbol's buffer.
    pub(crate) fn memcpy_symbol(&mut self, n: Node, args: &[Node], src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let name = self.text(self.child(n, "function", src)?, src);
        let to = name == "cudaMemcpyToSymbol";
        if args.len() < 3 || args.len() > 5 {
            return Err(self.unsupported(n, src, format!("`{name}` with {} arguments", args.len())));
        }
        if let Some(off) = args.get(3) {
            if self.constant(*off, src).ok() != Some(0) {
                return Err(self.unsupported(*off, src, format!("`{name}` at an offset other than 0")));
            }
        }
        let sym = if to { args[0] } else { args[1] };
        let is_device_global = sym.kind() == "identifier"
            && self.globals.iter().any(|g| g.device && g.name == self.text(sym, src))
            && self.lookup(self.text(sym, src)).map(|v| v.local) == self.global_local(self.text(sym, src));
        if !is_device_global {
            return Err(self.unsupported(
                sym,
                src,
                format!("`{name}` of anything but a `__device__`/`__constant__` variable"),
            ));
        }
        self.memcpy_kind(n, args, (to, !to), src, out)
    }

    /// The local this function holds global `name` in.
    fn global_local(&self, name: &str) -> Option<LocalId> {
        let k = self.globals.iter().position(|g| g.name == name)?;
        self.f.global_locals.get(k).copied().flatten()
    }
}

impl Lx {
    /// The file-level `__shared__` declarations, lowered at the start of kernel `f`'s body: CUDA
    /// gives each block of every kernel its own copy, exactly as if each kernel declared them.
    pub(crate) fn file_shared_in_kernel(&mut self, f: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let mut root = f;
        while let Some(p) = root.parent() {
            root = p;
        }
        for (start, end, _) in self.file_shared.clone() {
            let Some(d) = root.named_descendant_for_byte_range(start, end).filter(|d| d.kind() == "declaration") else {
                continue;
            };
            self.declaration(d, src, out)?;
        }
        Ok(())
    }

    /// Whether `name` is a file-level `__shared__` variable.
    pub(crate) fn is_file_shared(&self, name: &str) -> bool {
        self.file_shared
            .iter()
            .any(|(_, _, t)| t.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).any(|w| w == name))
    }
}
