//! Kernel launches on `sim`: the launch's shape and arguments evaluated where it is issued, the
//! launch limits a GPU enforces, and the blocks run one after another (in index order, or in a
//! random order for `--schedule random` unless the grid is ordered), each with fresh shared memory.

use super::*;

impl Machine<'_, '_> {
    /// The launch's shape, sizes and arguments, evaluated where it is issued.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn prepare_launch(
        &mut self,
        kernel: usize,
        nats: &[IExpr],
        grid: &[IExpr; 3],
        block: &[IExpr; 3],
        args: &[Expr],
        span: Span,
        f: &mut Frame,
    ) -> R<LaunchWork> {
        let func = &self.program.functions[kernel];
        if !matches!(func.kind, FnKind::Kernel { .. }) {
            return Err(fail(codes::UNSUPPORTED, format!("`{}` is not a kernel", func.name), span, "launched here"));
        };
        let mut g = [1u64; 3];
        let mut b = [1u64; 3];
        for i in 0..3 {
            g[i] = self.iexpr(&grid[i], f, HOST)?;
            b[i] = self.iexpr(&block[i], f, HOST)?;
        }
        launch_limits(g, b, span)?;
        let mut kn = HashMap::new();
        for (name, e) in func.nat_params.iter().zip(nats) {
            kn.insert(name.clone(), self.iexpr(e, f, HOST)?);
        }
        let mut arg_values = Vec::new();
        for a in args {
            arg_values.push(self.eval(a, f, HOST)?);
        }
        for v in &arg_values {
            if let Value::Ref { buf, .. } | Value::Owned { buf } = v {
                if self.buffers[*buf].space == Space::Cpu {
                    let name = self.buffers[*buf].name.clone();
                    return Err(fail(
                        codes::RUN_MEMORY_SPACE,
                        format!("a kernel was given host memory `{name}`"),
                        span,
                        "launched with a pointer to `cpu.mem`",
                    ));
                }
            }
        }
        Ok(LaunchWork { g, b, kn, arg_values })
    }

    /// Runs a launch prepared by [`Self::prepare_launch`].
    /// Runs a launch to its end, then writes what its threads printed (also when it stopped with
    /// an error: the prints before it show what led there).
    pub(crate) fn run_launch(&mut self, kernel: usize, work: LaunchWork, span: Span) -> R<()> {
        let r = self.run_launch_threads(kernel, work, span);
        self.flush_kernel_prints();
        r
    }

    pub(crate) fn run_launch_threads(&mut self, kernel: usize, work: LaunchWork, span: Span) -> R<()> {
        let t0 = std::time::Instant::now();
        let LaunchWork { g, b, kn, arg_values } = work;
        let func = &self.program.functions[kernel];
        let FnKind::Kernel { shared, ordered, .. } = &func.kind else {
            return Err(fail(codes::UNSUPPORTED, format!("`{}` is not a kernel", func.name), span, "launched here"));
        };
        self.stats.launches += 1;
        let used = |d: [u64; 3]| {
            if d[2] > 1 {
                3
            } else if d[1] > 1 {
                2
            } else {
                1
            }
        };
        LAUNCH_DIMS.with(|x| x.set(used(g).max(used(b))));
        self.launch = Some(Launch {
            grid: g,
            block: b,
            nats: kn.clone(),
            epoch: 0,
            warp_epochs: HashMap::new(),
            fences: HashMap::new(),
            returned: Default::default(),
            thread_locals: Vec::new(),
        });
        self.races.begin(b[0].saturating_mul(b[1]).saturating_mul(b[2]));
        let blocks = g[0].saturating_mul(g[1]).saturating_mul(g[2]);
        // Blocks run in order, or in a random order that is made (and charged) first; the blocks
        // of an ordered grid start in the order of their index under every schedule, and on
        // `sim` a block ends before the next starts.
        let mut random_order = Vec::new();
        let _order_charge = if self.opts.random_seed.is_some() && !ordered {
            mem::reserve(&mut random_order, blocks)
                .map_err(|e| oom(e, span, &format!("the random order of the launch's {blocks} blocks")))?;
            random_order.extend(0..blocks);
            self.shuffle(&mut random_order);
            Some(mem::Hold::adopt(mem::bytes_of(&random_order)))
        } else {
            None
        };
        for k in 0..blocks {
            let lin = random_order.get(k as usize).copied().unwrap_or(k);
            let bidx = [lin % g[0], (lin / g[0]) % g[1], lin / (g[0] * g[1])];
            self.activations += 1;
            let act = self.activations;
            let mut frame =
                Frame { func: kernel, locals: vec![Value::Uninit; func.locals.len()], nats: kn.clone(), act };
            for (p, v) in func.params.iter().zip(&arg_values) {
                frame.locals[*p] = v.try_clone().map_err(|e| oom(e, span, "an argument of the kernel"))?;
            }
            // Shared memory: fresh and uninitialised for every block.
            let mut shared_bufs = Vec::new();
            for (local, ty, len) in shared {
                let n = self.iexpr(len, &mut frame, HOST)?;
                let name = &func.locals[*local].name;
                let data = Arr::uninit(*ty, n).map_err(|e| {
                    let block = format!("block {}", coords(bidx));
                    oom(e, span, &format!("shared memory `{name}` of {block}"))
                })?;
                let id = self.alloc(data, Space::Shared, name.clone());
                self.buffers[id].named = true;
                frame.locals[*local] = Value::Ref { buf: id, off: 0 };
                shared_bufs.push(id);
            }
            if let Some(l) = self.launch.as_mut() {
                l.epoch = 0;
                l.warp_epochs.clear();
                l.fences.clear();
                l.returned.clear();
                for v in &mut l.thread_locals {
                    v.clear();
                }
            }
            let who = Who { gpu: true, block: bidx, thread: [0; 3], block_lin: lin as u32, thread_lin: 0 };
            self.seq(&func.body, &mut frame, who)?;
            self.settle_uninit()?;
            for id in shared_bufs {
                self.buffers[id].freed = true;
                self.buffers[id].data = Arr::new();
                self.mem_version += 1;
                self.races.forget(id);
            }
        }
        self.launch = None;
        self.races.clear();
        self.stats.launch_times.push((func.name.clone(), t0.elapsed().as_secs_f64()));
        Ok(())
    }

    pub(crate) fn shuffle(&mut self, v: &mut [u64]) {
        for i in (1..v.len()).rev() {
            let j = (self.next_random() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}

/// A launch shape a GPU refuses (`cudaErrorInvalidConfiguration`: the kernel does not run at
/// all, and a program that does not check `cudaGetLastError` goes on with what it did not
/// compute): a block of more than 1024 threads or beyond (1024, 1024, 64), a grid beyond
/// (2^31 - 1, 65535, 65535). Strata programs are held to the same limits by the checker (E0703,
/// E0704, the sm_80 profile); CUDA-C launches are sized at run time, so `sim` checks them here
/// rather than run a kernel a GPU would not. (A zero-sized launch runs nothing here as there.)
pub(crate) fn launch_limits(g: [u64; 3], b: [u64; 3], span: Span) -> R<()> {
    const BLOCK_DIM: [u64; 3] = [1024, 1024, 64];
    const GRID_DIM: [u64; 3] = [(1 << 31) - 1, 65535, 65535];
    let shape = |d: [u64; 3]| format!("({}, {}, {})", d[0], d[1], d[2]);
    let threads = b[0].saturating_mul(b[1]).saturating_mul(b[2]);
    if threads > 1024 || (0..3).any(|i| b[i] > BLOCK_DIM[i]) {
        return Err(fail(
            codes::BLOCK_TOO_LARGE,
            format!(
                "a block of {} ({threads} threads): a GPU allows at most 1024 threads per block and (1024, 1024, 64) per dimension, and refuses the launch",
                shape(b)
            ),
            span,
            "launched here",
        ));
    }
    if (0..3).any(|i| g[i] > GRID_DIM[i]) {
        return Err(fail(
            codes::GRID_TOO_LARGE,
            format!(
                "a grid of {}: a GPU allows at most (2147483647, 65535, 65535) blocks, and refuses the launch",
                shape(g)
            ),
            span,
            "launched here",
        ));
    }
    Ok(())
}
