//! Function definitions: kernels (`__global__`) and `main`.

use super::*;

impl Lx {
    pub(crate) fn function(&mut self, n: Node, src: &Src) -> R<()> {
        let mut kernel = false;
        let mut c = n.walk();
        for ch in n.children(&mut c) {
            match ch.kind() {
                "__global__" => kernel = true,
                "__host__" => {}
                "__device__" | "storage_class_specifier" | "type_qualifier" | "attribute_specifier" => {
                    return Err(self.unsupported(ch, src, format!("functions with `{}`", self.text(ch, src))));
                }
                _ => {}
            }
        }
        let decl = self.child(n, "declarator", src)?;
        if decl.kind() != "function_declarator" {
            return Err(self.unsupported(decl, src, "this function declarator"));
        }
        let name_node = self.child(decl, "declarator", src)?;
        let name = self.text(name_node, src).to_string();
        let ret = self.child(n, "type", src)?;
        let ret_text = self.text(ret, src);
        if kernel && ret_text != "void" {
            return Err(self.unsupported(ret, src, "a kernel must return `void`"));
        }
        if !kernel && name != "main" {
            return Err(self.unsupported(name_node, src, "host or device functions other than `main` and kernels"));
        }
        if name == "main" && ret_text != "int" {
            return Err(self.unsupported(ret, src, "`main` must return `int`"));
        }
        self.f = FnState { kernel, main: !kernel, scopes: vec![HashMap::new()], ..FnState::default() };
        let mut params = Vec::new();
        let mut param_tys = Vec::new();
        let plist = self.child(decl, "parameters", src)?;
        let mut c = plist.walk();
        for p in plist.named_children(&mut c) {
            if p.kind() == "comment" {
                continue;
            }
            if p.kind() != "parameter_declaration" {
                return Err(self.unsupported(p, src, "this parameter"));
            }
            let ty_node = self.child(p, "type", src)?;
            if !kernel {
                // `int main(void)` or `int main(int argc, char **argv)`: the arguments are not
                // available to the program (a use of them is an unknown name).
                continue;
            }
            let t = self.scalar_type(ty_node, src)?;
            let d = self.child(p, "declarator", src)?;
            let (pname, cty) = match d.kind() {
                "identifier" => (self.text(d, src), CTy::S(t)),
                "pointer_declarator" => {
                    let inner = self.child(d, "declarator", src)?;
                    if inner.kind() != "identifier" {
                        return Err(self.unsupported(inner, src, "pointers to pointers"));
                    }
                    (self.text(inner, src), CTy::Ptr(t))
                }
                _ => return Err(self.unsupported(d, src, "this parameter declarator")),
            };
            let ty = match cty {
                CTy::S(t) => Ty::Scalar(t),
                CTy::Ptr(t) => array_ptr(t, Mem::GpuGlobal, false),
            };
            let l = self.new_local(pname, ty, Level::Block);
            self.bind(pname, Var { local: l, ty: cty });
            params.push(l);
            param_tys.push(cty);
        }
        let id = self.functions.len();
        if kernel {
            self.kernels.insert(name.clone(), (id, param_tys));
        }
        let body_node = self.child(n, "body", src)?;
        let mut body = Vec::new();
        self.block(body_node, src, &mut body)?;
        let fs = std::mem::take(&mut self.f);
        let kind = if kernel {
            let one = || [IExpr::Const(1), IExpr::Const(1), IExpr::Const(1)];
            body = vec![Stmt::Threads { set: Vec::new(), body }];
            FnKind::Kernel { grid: one(), block: one(), shared: fs.shared }
        } else {
            FnKind::Host
        };
        self.functions.push(ir::Function {
            name,
            kind,
            nat_params: if kernel { vec![SMEM_PARAM.to_string()] } else { Vec::new() },
            nat_max: HashMap::new(),
            params,
            locals: fs.locals,
            body,
            ret: Ty::Scalar(ScalarTy::Unit),
            span: self.span(n, src),
            shrd_params: Vec::new(),
        });
        Ok(())
    }
}
