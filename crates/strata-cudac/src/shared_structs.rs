//! Structs in `__shared__` memory: `__shared__ P s;`, `__shared__ struct P s[N];` (of any depth,
//! `s[N][M]`) and `extern __shared__ P s[];`.
//!
//! A kernel's shared buffers are buffers of scalars (the IR's `FnKind::Kernel::shared`), so a
//! struct in shared memory is laid out by field: one `__shared__` buffer per field (`s.a`,
//! `s.b`), each with the array's length, on consecutive locals. `s[i].f` is element `i` of
//! buffer `s.f`, with every check of any shared access: bounds, races (a race on a field is a
//! race on that field's buffer, `s.total[0]`), reads before any write (shared memory starts
//! uninitialised). A whole struct read or written (`P v = s[i];`, `s[i] = v;`) is one access per
//! field, as for structs in device memory ([`structs`]).
//!
//! What the layout cannot give is a pointer to one struct: `&s[i]`, `s` as a `P *` argument,
//! `P *p = s;` are refused (E0801); fields are reached through the array (`s[i].f`, `s->f`,
//! `(*s).f`) or the variable (`s.f`), and `&s[i].f` wherever a pointer to a field may be used.

use super::*;

impl Lx {
    /// `__shared__ P s, t[N][M];` and `extern __shared__ P u[];` (struct type `id`).
    pub(crate) fn shared_struct_declaration(&mut self, n: Node, id: usize, ext: bool, src: &Src) -> R<()> {
        if !self.structs[id].scalars_only() {
            return Err(self.unsupported(n, src, "a `__shared__` struct with pointer or array members"));
        }
        let fields: Vec<(String, ScalarTy)> = self.structs[id]
            .fields
            .iter()
            .filter_map(|(f, t)| match t {
                structs::FTy::S(t) => Some((f.clone(), *t)),
                structs::FTy::Ptr(_) | structs::FTy::Arr { .. } => None,
            })
            .collect();
        for (d, init) in self.declarators(n, src)? {
            if let Some(v) = init {
                return Err(self.unsupported(v, src, "initialisers of `__shared__` variables"));
            }
            let (inner, len, dims) = match (d.kind(), ext) {
                ("identifier", false) => (d, IExpr::Const(1), None),
                ("array_declarator", _) => {
                    let (inner, dims) = self.array_declarator(d, src)?;
                    let len = match (&dims[..], ext) {
                        ([None], true) => IExpr::Param(SMEM_PARAM.to_string()) / IExpr::Const(self.structs[id].size()),
                        (_, false) if dims.iter().all(Option::is_some) => {
                            IExpr::Const(self.flat_length(&dims, d, src)?)
                        }
                        _ => return Err(self.unsupported(d, src, "this `__shared__` array")),
                    };
                    // An `extern` array's length is the launch's: no lengths to check indices by.
                    let dims: Vec<u64> = if ext { Vec::new() } else { dims.into_iter().flatten().collect() };
                    (inner, len, Some(dims))
                }
                _ => return Err(self.unsupported(d, src, "this `__shared__` declaration")),
            };
            let name = self.text(inner, src);
            let first = self.f.locals.len();
            for (f, t) in &fields {
                let l = self.new_local(&format!("{name}.{f}"), array_ptr(*t, Mem::GpuShared, false), Level::Block);
                self.f.shared.push((l, t.ir(), len.clone()));
            }
            match dims {
                None => self.bind(name, Var { local: first, ty: CTy::SharedStruct(id) }),
                Some(dims) => {
                    if !dims.is_empty() {
                        self.f.arrays.insert(first, (Elem::Split(id), dims));
                    }
                    self.bind(name, Var { local: first, ty: CTy::Ptr(Elem::Split(id)) });
                }
            }
        }
        Ok(())
    }

    /// Refuses a pointer value to structs in `__shared__` memory (they are split by field:
    /// [`shared_structs`]).
    pub(crate) fn no_split_pointer(&self, t: Elem, n: Node, src: &Src) -> R<()> {
        match t {
            Elem::Split(id) => Err(self.unsupported(
                n,
                src,
                format!(
                    "a pointer to `__shared__` `{}`s (each field is a buffer of its own: reach the fields \
                     through the array, `s[i].f`)",
                    self.structs[id].name
                ),
            )),
            _ => Ok(()),
        }
    }
}
