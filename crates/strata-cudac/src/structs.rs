//! Structs of scalar fields, as values: `struct P { int a; float b; };`, `typedef struct {…} P;`,
//! local variables (`P p = {1, 2.0f};`), field reads and writes (`p.a`), whole assignment
//! (`p = q;`), `sizeof`, and parameters of functions and kernels passed by value.
//!
//! A struct variable is one local per field (consecutive local ids, like `dim3`); a struct
//! parameter is one IR parameter per field.
//!
//! Structs in memory (`P *p`, `P a[N]`, `cudaMalloc(&d, n * sizeof(P))`) are arrays of IR tuples
//! ([`Lx::elem_ty`]): memory holds them field by field, so `p[i].f`, `p->f` and `(*p).f` are
//! places `(*p)[i].k` whose every field `sim` bounds-checks and race-logs on its own; a whole
//! struct read or written (`P v = a[i];`, `a[i] = v;`) is one access per field. Structs returned
//! by functions and members that are arrays or structs are not supported (E0801).

use super::*;
use crate::ptr::PtrE;

/// The type of a struct member: a scalar, a pointer to scalars or structs (`float *x;`,
/// `struct P *next;` of an earlier struct `P`), or an array of scalars or structs of constant
/// lengths (`float v[3];`, `int m[4][4];`, `P parts[8];`: `rows` of `cols` elements, `cols` 1
/// for one dimension). An array member is held as a one-field tuple of the array (a value,
/// copied with its struct as C copies it), in memory and in a struct variable alike.
#[derive(Copy, Clone, Debug, PartialEq)]
pub(crate) enum FTy {
    S(ScalarTy),
    Ptr(Elem),
    Arr { elem: Elem, rows: u64, cols: u64 },
}

impl FTy {
    pub(crate) fn len(self) -> u64 {
        match self {
            FTy::Arr { rows, cols, .. } => rows * cols,
            _ => 1,
        }
    }
}

/// A struct type: its name (for messages), its fields, and its size and alignment with C's
/// layout ([`layout`]).
pub(crate) struct StructDef {
    pub(crate) name: String,
    pub(crate) fields: Vec<(String, FTy)>,
    pub(crate) layout: (u64, u64),
}

/// `sizeof` and alignment of a struct of `fields` with C's layout: each field aligned to its
/// alignment, the whole to the largest (`defs`: the structs defined before, for members that
/// are arrays of structs).
pub(crate) fn layout(fields: &[(String, FTy)], defs: &[StructDef]) -> (u64, u64) {
    let elem = |e: Elem| match e {
        Elem::S(t) => (size_of(t), size_of(t)),
        Elem::Struct(id) | Elem::Split(id) => defs.get(id).map_or((1, 1), |d| d.layout),
    };
    let mut at = 0u64;
    let mut align = 1u64;
    for (_, t) in fields {
        let (s, a) = match *t {
            FTy::S(t) => (size_of(t), size_of(t)),
            FTy::Ptr(_) => (8, 8),
            FTy::Arr { elem: e, .. } => {
                let (s, a) = elem(e);
                (s.saturating_mul(t.len()), a)
            }
        };
        at = at.div_ceil(a).saturating_mul(a).saturating_add(s);
        align = align.max(a);
    }
    (at.div_ceil(align).max(1) * align, align)
}

impl StructDef {
    pub(crate) fn new(name: String, fields: Vec<(String, FTy)>, defs: &[StructDef]) -> StructDef {
        let layout = layout(&fields, defs);
        StructDef { name, fields, layout }
    }

    /// `sizeof` with C's layout.
    pub(crate) fn size(&self) -> u64 {
        self.layout.0
    }

    /// Whether every field is a scalar (no pointer members).
    pub(crate) fn scalars_only(&self) -> bool {
        self.fields.iter().all(|(_, t)| matches!(t, FTy::S(_)))
    }
}

/// The scalar fields of `cudaDeviceProp` that `sim`'s one device reports, with an H100 SXM's
/// values (CUDA's names and types; `uuid` and the other array fields are not among them).
pub(crate) const DEVICE_PROPS: &[(&str, ScalarTy, u64)] = &[
    ("totalGlobalMem", ScalarTy::U64, 85_899_345_920),
    ("sharedMemPerBlock", ScalarTy::U64, 49_152),
    ("regsPerBlock", ScalarTy::I32, 65_536),
    ("warpSize", ScalarTy::I32, 32),
    ("memPitch", ScalarTy::U64, 2_147_483_647),
    ("maxThreadsPerBlock", ScalarTy::I32, 1024),
    ("totalConstMem", ScalarTy::U64, 65_536),
    ("major", ScalarTy::I32, 9),
    ("minor", ScalarTy::I32, 0),
    ("clockRate", ScalarTy::I32, 1_980_000),
    ("textureAlignment", ScalarTy::U64, 512),
    ("deviceOverlap", ScalarTy::I32, 1),
    ("multiProcessorCount", ScalarTy::I32, 132),
    ("kernelExecTimeoutEnabled", ScalarTy::I32, 0),
    ("integrated", ScalarTy::I32, 0),
    ("canMapHostMemory", ScalarTy::I32, 1),
    ("computeMode", ScalarTy::I32, 0),
    ("concurrentKernels", ScalarTy::I32, 1),
    ("ECCEnabled", ScalarTy::I32, 1),
    ("asyncEngineCount", ScalarTy::I32, 2),
    ("unifiedAddressing", ScalarTy::I32, 1),
    ("memoryClockRate", ScalarTy::I32, 2_619_000),
    ("memoryBusWidth", ScalarTy::I32, 5120),
    ("l2CacheSize", ScalarTy::I32, 52_428_800),
    ("maxThreadsPerMultiProcessor", ScalarTy::I32, 2048),
    ("sharedMemPerMultiprocessor", ScalarTy::U64, 233_472),
    ("regsPerMultiprocessor", ScalarTy::I32, 65_536),
    ("managedMemory", ScalarTy::I32, 1),
    ("sharedMemPerBlockOptin", ScalarTy::U64, 232_448),
    ("maxBlocksPerMultiProcessor", ScalarTy::I32, 32),
];

/// The array fields of `cudaDeviceProp` that `sim`'s device reports, after the scalar ones:
/// `name` (`char[256]`, the text up to a 0), `maxThreadsDim` and `maxGridSize` (`int[3]`).
pub(crate) const DEVICE_NAME: &str = "NVIDIA H100 80GB HBM3";
const DEVICE_ARRAYS: &[(&str, [i64; 3])] =
    &[("maxThreadsDim", [1024, 1024, 64]), ("maxGridSize", [2_147_483_647, 65_535, 65_535])];

/// CUDA's vector types (`float4`, `int2`, `uchar3`, …: `<base><n>` for n = 1 to 4) and their
/// element types: predefined structs of fields `x`, `y`, `z`, `w` ([`Lx::vector_types`]).
pub(crate) const VECTOR_TYPES: &[(&str, ScalarTy)] = &[
    ("char", ScalarTy::I8),
    ("uchar", ScalarTy::U8),
    ("short", ScalarTy::I16),
    ("ushort", ScalarTy::U16),
    ("int", ScalarTy::I32),
    ("uint", ScalarTy::U32),
    ("long", ScalarTy::I64),
    ("ulong", ScalarTy::U64),
    ("longlong", ScalarTy::I64),
    ("ulonglong", ScalarTy::U64),
    ("float", ScalarTy::F32),
    ("double", ScalarTy::F64),
];

impl Lx {
    /// Defines CUDA's vector types as structs (`float4` is `struct { float x, y, z, w; }`, 16
    /// bytes; the sizes are C's layout of the fields, as CUDA's are).
    pub(crate) fn vector_types(&mut self) {
        for (base, t) in VECTOR_TYPES {
            for n in 1..=4 {
                let name = format!("{base}{n}");
                let fields = ["x", "y", "z", "w"][..n].iter().map(|f| (f.to_string(), FTy::S(*t))).collect();
                let def = StructDef::new(name.clone(), fields, &self.structs);
                self.structs.push(def);
                self.struct_names.insert(name, self.structs.len() - 1);
            }
        }
    }

    /// `cudaDeviceProp`: a predefined struct of its scalar fields ([`DEVICE_PROPS`]; `name` and
    /// the array fields are not there, so using them is refused where written), filled by
    /// `cudaGetDeviceProperties` ([`Lx::device_properties`]).
    pub(crate) fn device_prop_type(&mut self) {
        let mut fields: Vec<(String, FTy)> = DEVICE_PROPS.iter().map(|(f, t, _)| (f.to_string(), FTy::S(*t))).collect();
        fields.push(("name".to_string(), FTy::Arr { elem: Elem::S(ScalarTy::I8), rows: 256, cols: 1 }));
        for (f, _) in DEVICE_ARRAYS {
            fields.push((f.to_string(), FTy::Arr { elem: Elem::S(ScalarTy::I32), rows: 3, cols: 1 }));
        }
        let def = StructDef::new("cudaDeviceProp".to_string(), fields, &self.structs);
        self.structs.push(def);
        self.struct_names.insert("cudaDeviceProp".to_string(), self.structs.len() - 1);
    }

    /// `cudaGetDeviceProperties(&prop, dev)` of a `cudaDeviceProp` variable: its fields set to
    /// the one device's values.
    pub(crate) fn device_properties(&mut self, n: Node, args: &[Node], src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let [target, dev] = args else {
            return Err(self.unsupported(n, src, "`cudaGetDeviceProperties` takes two arguments"));
        };
        if let Ok(d) = self.constant(*dev, src) {
            if d != 0 {
                return Err(self.unsupported(*dev, src, "a device other than 0 (`sim` has one)"));
            }
        }
        let target = self.strip_parens(*target);
        let var = (target.kind() == "pointer_expression"
            && target.child_by_field_name("operator").is_some_and(|o| self.text(o, src) == "&"))
        .then(|| target.child_by_field_name("argument"))
        .flatten()
        .filter(|a| a.kind() == "identifier")
        .and_then(|a| self.lookup(self.text(a, src)));
        let id = self.struct_names.get("cudaDeviceProp").copied();
        let Some(Var { local, ty: CTy::Struct(sid) }) = var.filter(|v| Some(v.ty) == id.map(CTy::Struct)) else {
            return Err(self.unsupported(target, src, "`cudaGetDeviceProperties` of anything but `&variable`"));
        };
        let _ = sid;
        let span = self.span(n, src);
        self.flush(out);
        for (k, (_, t, v)) in DEVICE_PROPS.iter().enumerate() {
            out.push(Stmt::Let {
                local: local + k,
                init: Some(cast(int(u128::from(*v), ScalarTy::U64), ScalarTy::U64, *t)),
                span,
            });
        }
        let mut name: Vec<Expr> = DEVICE_NAME.bytes().map(|b| int(u128::from(b), ScalarTy::I8)).collect();
        name.resize(256, int(0, ScalarTy::I8));
        let mut arrays = vec![name];
        for (_, vs) in DEVICE_ARRAYS {
            arrays.push(vs.iter().map(|v| int(*v as u128, ScalarTy::I32)).collect());
        }
        for (k, vs) in arrays.into_iter().enumerate() {
            let local = local + DEVICE_PROPS.len() + k;
            out.push(Stmt::Let { local, init: Some(Expr::Tuple(vec![Expr::ArrayList(vs)])), span });
        }
        Ok(())
    }

    /// The struct a type node names (`struct P`, or a `typedef` name), if it names one.
    pub(crate) fn struct_type(&self, t: Node, src: &Src) -> Option<usize> {
        match t.kind() {
            "struct_specifier" => {
                let name = t.child_by_field_name("name")?;
                self.struct_names.get(&format!("struct {}", self.text(name, src))).copied()
            }
            "type_identifier" => self.struct_names.get(self.text(t, src)).copied(),
            _ => None,
        }
    }

    /// A file-level `struct P {…};` or `typedef struct [P] {…} Q;` / `typedef struct P Q;`.
    pub(crate) fn struct_item(&mut self, n: Node, src: &Src) -> R<()> {
        let (spec, alias) = match n.kind() {
            "type_definition" => {
                let spec = self.child(n, "type", src)?;
                let d = self.child(n, "declarator", src)?;
                if spec.kind() != "struct_specifier" && d.kind() == "type_identifier" {
                    // `typedef float real;`
                    let t = self.scalar_type(spec, src)?;
                    self.typedefs.insert(self.text(d, src).to_string(), t);
                    return Ok(());
                }
                if spec.kind() != "struct_specifier" || d.kind() != "type_identifier" {
                    return Err(self.unsupported(n, src, "this `typedef`"));
                }
                (spec, Some(self.text(d, src).to_string()))
            }
            _ => (n, None),
        };
        let tag = spec.child_by_field_name("name").map(|x| format!("struct {}", self.text(x, src)));
        let id = match spec.child_by_field_name("body") {
            Some(body) => {
                let mut fields = Vec::new();
                let mut methods = Vec::new();
                let mut c = body.walk();
                for f in body.named_children(&mut c) {
                    if f.kind() == "comment" {
                        continue;
                    }
                    if f.kind() == "function_definition" {
                        // A member function or constructor ([`methods`]).
                        methods.push(f);
                        continue;
                    }
                    if f.kind() != "field_declaration" {
                        return Err(self.unsupported(f, src, "this struct member"));
                    }
                    let tn = self.child(f, "type", src)?;
                    let mut c2 = f.walk();
                    for d in f.children_by_field_name("declarator", &mut c2) {
                        let inner = d.child_by_field_name("declarator");
                        let elem = |lx: &Self| -> R<Elem> {
                            Ok(match lx.struct_type(tn, src) {
                                Some(id) => Elem::Struct(id),
                                None => Elem::S(lx.scalar_type(tn, src)?),
                            })
                        };
                        let t = match (d.kind(), inner.map(|x| x.kind())) {
                            ("field_identifier", _) => FTy::S(self.scalar_type(tn, src)?),
                            // `float *x;`, `struct P *p;` (of a struct defined before).
                            ("pointer_declarator", Some("field_identifier")) => FTy::Ptr(elem(self)?),
                            // `float v[3];`, `int m[4][4];`, `P parts[8];`.
                            ("array_declarator", _) => {
                                let (at, dims) = self.array_declarator(d, src)?;
                                let (rows, cols) = match dims[..] {
                                    [Some(r)] => (r, 1),
                                    [Some(r), Some(c)] => (r, c),
                                    _ => {
                                        return Err(self.unsupported(
                                            d,
                                            src,
                                            "an array member of more than two dimensions or without a length",
                                        ))
                                    }
                                };
                                if rows.saturating_mul(cols) > 1 << 20 {
                                    return Err(self.unsupported(d, src, "an array member of more than 2^20 elements"));
                                }
                                let _ = at;
                                FTy::Arr { elem: elem(self)?, rows, cols }
                            }
                            _ => {
                                return Err(self.unsupported(
                                    d,
                                    src,
                                    "struct members other than scalars, pointers and arrays (of scalars or structs)",
                                ))
                            }
                        };
                        let name = match d.kind() {
                            "field_identifier" => d,
                            "array_declarator" => self.array_declarator(d, src)?.0,
                            _ => inner.unwrap_or(d),
                        };
                        fields.push((self.text(name, src).to_string(), t));
                    }
                }
                if fields.is_empty() {
                    return Err(self.unsupported(spec, src, "an empty struct"));
                }
                let name = alias.clone().or(tag.clone()).unwrap_or_else(|| "struct".to_string());
                let def = StructDef::new(name, fields, &self.structs);
                self.structs.push(def);
                let id = self.structs.len() - 1;
                self.declare_methods(id, &methods, src)?;
                id
            }
            None => match tag.as_ref().and_then(|t| self.struct_names.get(t)) {
                Some(id) => *id,
                None => return Err(self.unsupported(spec, src, "a struct declared without its members")),
            },
        };
        // As in C++ (CUDA is C++), the tag of `struct P` names the type on its own too.
        let bare = tag.as_ref().and_then(|t| t.strip_prefix("struct ")).map(str::to_string);
        for name in tag.into_iter().chain(alias).chain(bare) {
            if self.struct_names.insert(name.clone(), id).is_some_and(|old| old != id) {
                return Err(self.unsupported(n, src, format!("a second definition of `{name}`")));
            }
        }
        Ok(())
    }

    /// Locals for a struct variable `name` (one per field); returns the first. A pointer member
    /// is a pointer variable of its own (as `T *p;` would be; a reference where `param`).
    pub(crate) fn struct_locals(&mut self, name: &str, id: usize, level: Level, param: bool) -> LocalId {
        let first = self.f.locals.len();
        let fields: Vec<(String, FTy)> = self.structs[id].fields.clone();
        for (f, t) in fields {
            let ty = match t {
                FTy::S(t) => Ty::Scalar(t.ir()),
                FTy::Ptr(e) => {
                    let mem = if self.f.gpu || level == Level::Block { Mem::GpuGlobal } else { Mem::Cpu };
                    self.elem_ptr(e, mem, !self.f.gpu && !param)
                }
                FTy::Arr { .. } => self.field_ty(t),
            };
            self.new_local(&format!("{name}.{f}"), ty, level);
        }
        first
    }

    /// `P a, b = {1, 2.0f}, c = b;`
    pub(crate) fn struct_declaration(&mut self, n: Node, id: usize, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        for (d, init) in self.declarators(n, src)? {
            if let Some(args) = init.filter(|v| v.kind() == "argument_list") {
                // `T v(a, b);`: a constructor ([`methods`]).
                if d.kind() != "identifier" {
                    return Err(self.unsupported(d, src, "this declaration"));
                }
                let list: Vec<Node> = args.named_children(&mut args.walk()).filter(|x| x.kind() != "comment").collect();
                self.construct(d, &list, args, id, src, out)?;
                continue;
            }
            if d.kind() == "function_declarator" && self.is_vexing_construction(d, id, src) {
                self.construct_reparsed(d, id, src, out)?;
                continue;
            }
            if init.is_none() && d.kind() == "identifier" && self.method_index(id, "").is_some() {
                // `T v;` of a struct with a constructor: C++ runs it (with no arguments).
                self.construct(d, &[], d, id, src, out)?;
                continue;
            }
            match d.kind() {
                "identifier" => {}
                "pointer_declarator" => {
                    self.pointer_declaration(d, init, Elem::Struct(id), src, out)?;
                    continue;
                }
                "array_declarator" if self.method_index(id, "").is_some() => {
                    return Err(self.unsupported(d, src, "an array of structs with a constructor"));
                }
                "array_declarator" => {
                    self.host_array(d, init, Elem::Struct(id), src, out)?;
                    continue;
                }
                _ => return Err(self.unsupported(d, src, "this struct declaration")),
            }
            let name = self.text(d, src);
            let values = match init {
                Some(v) => Some(self.struct_value(v, id, src)?),
                None => None,
            };
            self.flush(out);
            let level = self.level();
            let first = self.struct_locals(name, id, level, false);
            let span = self.span(d, src);
            match values {
                Some(vs) => {
                    for (k, v) in vs.into_iter().enumerate() {
                        out.push(Stmt::Let { local: first + k, init: Some(v), span });
                    }
                }
                None => {
                    for k in 0..self.structs[id].fields.len() {
                        out.push(Stmt::Let { local: first + k, init: None, span });
                    }
                }
            }
            self.bind(name, Var { local: first, ty: CTy::Struct(id) });
        }
        Ok(())
    }

    /// The field values of a struct value of type `id`: `{a, b}` (missing fields are 0, as in
    /// C) or another struct variable of the same type.
    pub(crate) fn struct_value(&mut self, n: Node, id: usize, src: &Src) -> R<Vec<Expr>> {
        let fields = self.structs[id].fields.clone();
        match n.kind() {
            "initializer_list" => {
                let mut c = n.walk();
                let parts: Vec<Node> = n.named_children(&mut c).filter(|x| x.kind() != "comment").collect();
                if parts.len() > fields.len() {
                    return Err(self.unsupported(n, src, "more initialisers than the struct has fields"));
                }
                let mut out = Vec::new();
                for (k, (_, t)) in fields.iter().enumerate() {
                    match parts.get(k) {
                        Some(p) if p.kind() == "initializer_pair" => {
                            return Err(self.unsupported(*p, src, "designated initialisers"));
                        }
                        Some(p) => match t {
                            FTy::S(t) => {
                                let (e, et) = self.rvalue(*p, src)?;
                                out.push(self.convert(e, et, CTy::S(*t), *p, src)?);
                            }
                            FTy::Ptr(e) => out.push(self.pointer_init(*p, *e, src)?),
                            FTy::Arr { elem: Elem::S(st), rows, cols } => {
                                let dims = if *cols > 1 { vec![*rows, *cols] } else { vec![*rows] };
                                let mut vs = self.array_init(*p, &dims, *st, src)?;
                                vs.resize((rows * cols) as usize, zero(*st));
                                out.push(Expr::Tuple(vec![Expr::ArrayList(vs)]));
                            }
                            FTy::Arr { .. } => {
                                return Err(self.unsupported(*p, src, "initialisers of array members of structs"))
                            }
                        },
                        None => out.push(self.field_zero(*t)),
                    }
                }
                Ok(out)
            }
            "parenthesized_expression" => {
                let inner = n.named_child(0).ok_or_else(|| self.unsupported(n, src, "empty parentheses"))?;
                self.struct_value(inner, id, src)
            }
            // `make_float4(x, y, z, w)` of a vector type: its fields, each converted.
            "call_expression"
                if self.text(self.child(n, "function", src)?, src).strip_prefix("make_")
                    == Some(self.structs[id].name.as_str())
                    && VECTOR_TYPES.iter().any(|(b, _)| self.structs[id].name.starts_with(b)) =>
            {
                let args = self.args(n, src)?;
                if args.len() != fields.len() {
                    return Err(self.unsupported(n, src, format!("this many arguments (it takes {})", fields.len())));
                }
                let mut out = Vec::new();
                for (a, (_, t)) in args.iter().zip(&fields) {
                    let (e, et) = self.rvalue(*a, src)?;
                    let FTy::S(t) = t else { return Err(self.unsupported(*a, src, "this argument")) };
                    out.push(self.convert(e, et, CTy::S(*t), *a, src)?);
                }
                Ok(out)
            }
            "subscript_expression" | "pointer_expression" | "field_expression" => {
                // A struct in memory (`a[i]`, `*p`): its fields loaded one by one.
                let Some(at) = self.struct_in_memory(n, src)? else {
                    return Err(self.unsupported(n, src, format!("this value as a `{}`", self.structs[id].name)));
                };
                if at.id != id {
                    return Err(self.unsupported(n, src, format!("this value as a `{}`", self.structs[id].name)));
                }
                Ok((0..fields.len()).map(|k| Expr::Load(at.field(k))).collect())
            }
            "identifier" => match self.lookup(self.text(n, src)) {
                Some(Var { local, ty: CTy::Struct(other) }) if other == id => {
                    let span = self.span(n, src);
                    Ok((0..fields.len()).map(|k| Expr::Load(Place::local(local + k, span))).collect())
                }
                Some(Var { local, ty: CTy::SharedStruct(other) }) if other == id => {
                    let span = self.span(n, src);
                    Ok((0..fields.len()).map(|k| Expr::Load(shared_scalar(local + k, span))).collect())
                }
                Some(_) => Err(self.unsupported(n, src, format!("this value as a `{}`", self.structs[id].name))),
                None => Err(self.unknown(n, src)),
            },
            // `x * y` through the struct's `operator*`, `T(a, b)` ([`operators`]).
            "binary_expression" => self.struct_operator(n, id, src),
            "call_expression" if self.is_temporary_of(n, id, src) => self.struct_temporary(n, id, src),
            _ => Err(self.unsupported(n, src, format!("this value as a `{}`", self.structs[id].name))),
        }
    }

    /// A struct in memory, `a[i]` or `*p` (or `p->f` of nothing: never a struct, members are
    /// scalars): where it is and its struct type; `None` when `n` is not one.
    pub(crate) fn struct_in_memory(&mut self, n: Node, src: &Src) -> R<Option<StructAt>> {
        let span = self.span(n, src);
        let n = if n.kind() == "parenthesized_expression" { n.named_child(0).unwrap_or(n) } else { n };
        let (p, i) = match n.kind() {
            "subscript_expression" => {
                let (p, i) = self.subscript(n, src)?;
                (p, Some(i))
            }
            "pointer_expression" if self.text(self.child(n, "operator", src)?, src) == "*" => {
                match self.ptr_expr(self.child(n, "argument", src)?, src)? {
                    Some(p) => (p, None),
                    None => return Ok(None),
                }
            }
            _ => return Ok(None),
        };
        Ok(StructAt::of(p.elem).map(|(id, split)| StructAt { base: self.ptr_place(p, i, span), id, split }))
    }

    /// `a[i] = v;` / `*p = v;` of a struct in memory (one store per field), if `left` is one.
    pub(crate) fn struct_store(
        &mut self,
        n: Node,
        left: Node,
        right: Node,
        op: &str,
        src: &Src,
        out: &mut Vec<Stmt>,
    ) -> R<Option<()>> {
        if !matches!(left.kind(), "subscript_expression" | "pointer_expression" | "parenthesized_expression") {
            return Ok(None);
        }
        // Lowered on trial: what the left side needs first is kept only if it is a struct.
        let (pre, target) = self.with_pre(|lx| lx.struct_in_memory(left, src))?;
        let Some(at) = target else { return Ok(None) };
        self.f.pre.extend(pre);
        if op != "=" {
            return Err(self.unsupported(n, src, format!("`{op}` on a struct")));
        }
        let values = self.struct_value(right, at.id, src)?;
        self.flush(out);
        for (k, v) in values.into_iter().enumerate() {
            let mut place = at.field(k);
            place.span = self.span(n, src);
            out.push(Stmt::Store { place, value: v });
        }
        Ok(Some(()))
    }

    /// [`Lx::field_any`] of a scalar field (a pointer member used as a number is refused).
    pub(crate) fn var_field(&mut self, n: Node, src: &Src) -> R<Option<(Place, ScalarTy)>> {
        match self.field_any(n, src)? {
            None => Ok(None),
            Some((p, FTy::S(t))) => Ok(Some((p, t))),
            Some((_, FTy::Ptr(_))) => Err(self.unsupported(n, src, "a pointer member used as a number")),
            Some((_, FTy::Arr { .. })) => Err(self.unsupported(n, src, "an array member used as a number")),
        }
    }

    /// `v.f` of a struct or `dim3` variable, `a[i].f`, `(*p).f` or `p->f` of a struct in memory,
    /// if `n` is one: the field's place and type.
    pub(crate) fn field_any(&mut self, n: Node, src: &Src) -> R<Option<(Place, FTy)>> {
        if let Some(p) = self.dim3_field(n, src)? {
            return Ok(Some((p, FTy::S(ScalarTy::U32))));
        }
        let arg = self.child(n, "argument", src)?;
        let arg = if arg.kind() == "parenthesized_expression" { arg.named_child(0).unwrap_or(arg) } else { arg };
        let arrow = self.text(self.child(n, "operator", src)?, src) == "->";
        let in_memory = if arrow {
            let span = self.span(n, src);
            match self.ptr_expr(arg, src)? {
                Some(p) => match StructAt::of(p.elem) {
                    Some((id, split)) => Some(StructAt { base: self.ptr_place(p, None, span), id, split }),
                    None => return Err(self.unsupported(n, src, "`->` on anything but a pointer to a struct")),
                },
                None => return Err(self.unsupported(n, src, "`->` on anything but a pointer to a struct")),
            }
        } else {
            self.struct_in_memory(arg, src)?
        };
        if let Some(at) = in_memory {
            let field = self.text(self.child(n, "field", src)?, src);
            let def = &self.structs[at.id];
            let Some(k) = def.fields.iter().position(|(f, _)| f == field) else {
                return Err(self.unsupported(n, src, format!("`{}` has no field `{field}`", def.name)));
            };
            let mut place = at.field(k);
            place.span = self.span(n, src);
            return Ok(Some((place, def.fields[k].1)));
        }
        if arg.kind() != "identifier" {
            return Ok(None);
        }
        let (local, id, shared) = match self.lookup(self.text(arg, src)) {
            Some(Var { local, ty: CTy::Struct(id) }) => (local, id, false),
            Some(Var { local, ty: CTy::SharedStruct(id) }) => (local, id, true),
            _ => return Ok(None),
        };
        if self.text(self.child(n, "operator", src)?, src) != "." {
            return Err(self.unsupported(n, src, "`->` on a struct value"));
        }
        let field = self.text(self.child(n, "field", src)?, src);
        let def = &self.structs[id];
        let Some(k) = def.fields.iter().position(|(f, _)| f == field) else {
            return Err(self.unsupported(n, src, format!("`{}` has no field `{field}`", def.name)));
        };
        let span = self.span(n, src);
        // A `__shared__` struct's field is the one element of a buffer of its own.
        let place = if shared { shared_scalar(local + k, span) } else { Place::local(local + k, span) };
        Ok(Some((place, def.fields[k].1)))
    }
}

impl Lx {
    /// The place of the pointer member that `n` names (`s.p`, `a[i].p`, `p->q`), with the type
    /// of its elements; `None` if `n` is not a pointer member. Lowered on trial: what the place
    /// needs first (`a[i++].p`) is kept only if it is one.
    pub(crate) fn member_pointer_place(&mut self, n: Node, src: &Src) -> R<Option<(Place, Elem)>> {
        let n = self.strip_parens(n);
        if n.kind() != "field_expression" {
            return Ok(None);
        }
        let (pre, r) = self.with_pre(|lx| lx.field_any(n, src).or(Ok(None)))?;
        match r {
            Some((place, FTy::Ptr(e))) => {
                self.f.pre.extend(pre);
                Ok(Some((place, e)))
            }
            _ => Ok(None),
        }
    }

    /// A pointer member used as a pointer: the pointer variable holding it — the member's own
    /// local for a struct variable (`s.p`, so `s.p[i]` is `(*s.p)[i]`), and for a struct in
    /// memory (`p->q`, `a[i].q`) a new local it is loaded into before the statement.
    pub(crate) fn member_pointer(&mut self, n: Node, src: &Src) -> R<Option<PtrE>> {
        if let Some((place, e, _)) = self.member_array(n, src)? {
            // An array member decays to a pointer to its first element.
            return Ok(Some(self.member_array_start(place, e)));
        }
        let Some((place, e)) = self.member_pointer_place(n, src)? else { return Ok(None) };
        if place.path.is_empty() && place.checks.is_empty() {
            return Ok(Some(PtrE::at(place.root, e)));
        }
        let span = place.span;
        let mem = if self.f.gpu { Mem::GpuGlobal } else { Mem::Cpu };
        let level = self.level();
        let l = self.new_local("member pointer", self.elem_ptr(e, mem, false), level);
        self.f.pre.push(Stmt::Let { local: l, init: Some(Expr::Load(place)), span });
        Ok(Some(PtrE::at(l, e)))
    }

    /// The place of the array that the array member `n` names (`s.v`, `p->m`), its elements'
    /// type and its lengths (rows, columns); `None` if `n` is not an array member.
    pub(crate) fn member_array(&mut self, n: Node, src: &Src) -> R<Option<MemberArray>> {
        let n = self.strip_parens(n);
        if n.kind() != "field_expression" {
            return Ok(None);
        }
        let (pre, r) = self.with_pre(|lx| lx.field_any(n, src).or(Ok(None)))?;
        match r {
            Some((mut place, FTy::Arr { elem, rows, cols })) => {
                self.f.pre.extend(pre);
                place.path.push(PathStep::Field(0));
                Ok(Some((place, elem, (rows, cols))))
            }
            _ => Ok(None),
        }
    }

    /// A pointer variable holding the address of the first element of the array at `place`.
    fn member_array_start(&mut self, mut place: Place, e: Elem) -> PtrE {
        let span = place.span;
        place.path.push(PathStep::Elem(IExpr::Const(0)));
        let mem = if self.f.gpu { Mem::GpuGlobal } else { Mem::Cpu };
        let level = self.level();
        let l = self.new_local("member array", self.elem_ptr(e, mem, false), level);
        self.f.pre.push(Stmt::Let { local: l, init: Some(Expr::Ref(place)), span });
        PtrE::at(l, e)
    }

    /// `F[i]` and `F[i][j]` of an array member `F` (`s.v[i]`, `p->m[i][j]`, `a[k].parts[i]`):
    /// the pointer to its first element and the element offset, each index checked against its
    /// own length (so `s.v[3]` of `float v[3]` is out of bounds even where the struct goes on).
    /// `None` if `n` is not one.
    pub(crate) fn member_array_subscript(&mut self, n: Node, src: &Src) -> R<Option<(PtrE, Expr)>> {
        let index = |lx: &mut Self, s: Node| -> R<Expr> {
            let list = lx.child(s, "indices", src)?;
            match list.named_child(0) {
                Some(i) if list.named_child_count() == 1 => lx.offset(i, src),
                _ => Err(lx.unsupported(list, src, "this subscript")),
            }
        };
        let base = self.strip_parens(self.child(n, "argument", src)?);
        if base.kind() == "field_expression" {
            let Some((place, e, (rows, cols))) = self.member_array(base, src)? else { return Ok(None) };
            if cols > 1 {
                return Err(self.unsupported(
                    n,
                    src,
                    "a row of a two-dimensional array member where an element is expected",
                ));
            }
            let i = index(self, n)?;
            let mut p = self.member_array_start(place, e);
            p.checks.push((IExpr::Value(Box::new(i.clone())), IExpr::Const(rows)));
            return Ok(Some((p, i)));
        }
        if base.kind() != "subscript_expression" {
            return Ok(None);
        }
        let inner = self.strip_parens(self.child(base, "argument", src)?);
        if inner.kind() != "field_expression" {
            return Ok(None);
        }
        let Some((place, e, (rows, cols))) = self.member_array(inner, src)? else { return Ok(None) };
        if cols == 1 {
            return Err(self.unsupported(n, src, "two subscripts of a one-dimensional array member"));
        }
        let i = index(self, base)?;
        let j = index(self, n)?;
        let mut p = self.member_array_start(place, e);
        p.checks.push((IExpr::Value(Box::new(i.clone())), IExpr::Const(rows)));
        p.checks.push((IExpr::Value(Box::new(j.clone())), IExpr::Const(cols)));
        let row = Expr::Binary(BinOp::Mul, Box::new(i), Box::new(int(cols.into(), ScalarTy::I64)));
        Ok(Some((p, Expr::Binary(BinOp::Add, Box::new(row), Box::new(j)))))
    }

    /// `sizeof` of a member (`sizeof(s.v)`, `sizeof p->data`, `sizeof a[i].m`) of a struct
    /// variable, or of a struct that a pointer or array variable points to, from the types alone
    /// (nothing is evaluated); `None` for anything else.
    pub(crate) fn member_size_of(&self, v: Node, src: &Src) -> Option<u64> {
        let v = self.strip_parens(v);
        if v.kind() != "field_expression" {
            return None;
        }
        let mut base = self.strip_parens(v.child_by_field_name("argument")?);
        let arrow = self.text(v.child_by_field_name("operator")?, src) == "->";
        let id = if !arrow && base.kind() == "identifier" {
            match self.lookup(self.text(base, src))?.ty {
                CTy::Struct(id) | CTy::SharedStruct(id) => id,
                _ => return None,
            }
        } else {
            // `p->f`, `a[i].f`, `(*p).f`: the struct a pointer variable points to.
            if !arrow {
                let deref = base.kind() == "pointer_expression"
                    && base.child_by_field_name("operator").is_some_and(|o| self.text(o, src) == "*");
                if base.kind() != "subscript_expression" && !deref {
                    return None;
                }
                base = self.strip_parens(base.child_by_field_name("argument")?);
            }
            if base.kind() != "identifier" || self.shape(base, src).len() > 1 {
                return None;
            }
            match self.lookup(self.text(base, src))?.ty {
                CTy::Ptr(Elem::Struct(id) | Elem::Split(id)) => id,
                _ => return None,
            }
        };
        let field = self.text(v.child_by_field_name("field")?, src);
        let (_, t) = self.structs[id].fields.iter().find(|(f, _)| f == field)?;
        let elem = |e: Elem| match e {
            Elem::S(t) => size_of(t),
            Elem::Struct(id) | Elem::Split(id) => self.structs[id].size(),
        };
        Some(match *t {
            FTy::S(t) => size_of(t),
            FTy::Ptr(_) => 8,
            FTy::Arr { elem: e, .. } => elem(e).saturating_mul(t.len()),
        })
    }

    /// `s.p = …`, `p->q = …`, `s.p += i`, `s.p++` of a pointer member `left`, if it is one.
    pub(crate) fn member_pointer_assign(
        &mut self,
        n: Node,
        left: Node,
        op: &str,
        right: Option<Node>,
        src: &Src,
        out: &mut Vec<Stmt>,
    ) -> R<Option<()>> {
        let Some((place, e)) = self.member_pointer_place(left, src)? else { return Ok(None) };
        let span = self.span(n, src);
        let value = match (op, right) {
            ("=", Some(r)) => self.pointer_init(r, e, src)?,
            ("+=" | "-=", Some(r)) => {
                let i = self.offset(r, src)?;
                self.member_advanced(place.clone(), e, i, op == "-=", span)
            }
            ("++" | "--", None) => self.member_advanced(place.clone(), e, int(1, ScalarTy::I64), op == "--", span),
            _ => return Err(self.unsupported(n, src, format!("`{op}` on a pointer member"))),
        };
        self.flush(out);
        if place.path.is_empty() && place.checks.is_empty() {
            out.push(Stmt::Let { local: place.root, init: Some(value), span });
        } else {
            out.push(Stmt::Store { place, value });
        }
        Ok(Some(()))
    }

    /// The value `i` elements on (back, with `minus`) from where the pointer member at `place`
    /// points.
    fn member_advanced(&mut self, place: Place, e: Elem, i: Expr, minus: bool, span: Span) -> Expr {
        let root = if place.path.is_empty() && place.checks.is_empty() {
            place.root
        } else {
            let mem = if self.f.gpu { Mem::GpuGlobal } else { Mem::Cpu };
            let level = self.level();
            let l = self.new_local("member pointer", self.elem_ptr(e, mem, false), level);
            self.f.pre.push(Stmt::Let { local: l, init: Some(Expr::Load(place)), span });
            l
        };
        let p = self.advance(PtrE::at(root, e), i, minus);
        self.ptr_value(p, span)
    }
}

/// An array member: the place of the array, its elements' type, its lengths (rows, columns).
pub(crate) type MemberArray = (Place, Elem, (u64, u64));

/// A struct in memory: the place of the whole element, or, for structs in `__shared__` memory
/// (`split`, [`shared_structs`]), of its first field in the first field's buffer.
pub(crate) struct StructAt {
    pub(crate) base: Place,
    pub(crate) id: usize,
    pub(crate) split: bool,
}

impl StructAt {
    /// The struct type and whether it is split by field, of pointers to `e` (`None`: not structs).
    fn of(e: Elem) -> Option<(usize, bool)> {
        match e {
            Elem::Struct(id) => Some((id, false)),
            Elem::Split(id) => Some((id, true)),
            Elem::S(_) => None,
        }
    }

    /// The place of field `k`: a path step into the element, or the same element of the field's
    /// own buffer (the `k`-th local after the first field's).
    pub(crate) fn field(&self, k: usize) -> Place {
        let mut p = self.base.clone();
        if self.split {
            p.root += k;
        } else {
            p.path.push(PathStep::Field(k as u32));
        }
        p
    }
}
