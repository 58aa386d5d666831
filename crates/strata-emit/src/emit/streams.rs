//! Streams and events in host code. On `cuda` they are CUDA's (`cudaStreamCreate`,
//! `cudaMemcpyAsync`, `cudaEventRecord`, …), every call checked. On `cpu` a stream or event is an
//! unused id and all stream work runs synchronously in issue order: that is one of the orders a
//! GPU may choose, and a program without races (which `sim` checks) computes the same result in
//! every order, so nothing is lost by not overlapping.

use super::*;

impl Emitter<'_> {
    /// A stream argument: the default stream (`Lit::Unit`) is CUDA's `0`.
    fn stream_arg(&self, cx: &Cx, e: Option<&Expr>) -> Result<String, E> {
        match e {
            None | Some(Expr::Lit(Lit::Unit)) => Ok("0".into()),
            Some(e) => self.expr(cx, e),
        }
    }

    /// The C of a stream or event builtin ([`Builtin::is_stream_op`]).
    pub(super) fn stream_builtin(&self, cx: &Cx, b: Builtin, args: &[Expr], span: Span) -> Result<String, E> {
        let at = self.at(span);
        let arg = |i: usize| self.stream_arg(cx, args.get(i));
        if b == Builtin::CopyAsync {
            let t = self.referent(cx, &args[0]);
            let ct = c_type(leaf(&t), span)?;
            let n = self.expr(cx, args.get(2).ok_or_else(|| unsupported(span, "`CopyAsync` without a count"))?)?;
            let (dst, src) = (self.expr(cx, &args[0])?, self.expr(cx, &args[1])?);
            let bytes = format!("(size_t)({n}) * sizeof({ct})");
            return Ok(if self.cuda {
                // Unified addressing: the runtime tells host from device memory by the pointers.
                format!(
                    "strata_cuda_check(cudaMemcpyAsync({dst}, {src}, {bytes}, cudaMemcpyDefault, {}), {at})",
                    arg(3)?
                )
            } else {
                format!("memcpy({dst}, {src}, {bytes})")
            });
        }
        if !self.cuda {
            return Ok(match b {
                Builtin::StreamNew | Builtin::EventNew => "0".into(),
                _ => "((void)0)".into(),
            });
        }
        let call = match b {
            Builtin::StreamNew => return Ok(format!("strata_cuda_stream_new({at})")),
            Builtin::EventNew => return Ok(format!("strata_cuda_event_new({at})")),
            Builtin::StreamSync => format!("cudaStreamSynchronize({})", arg(0)?),
            Builtin::StreamDestroy => format!("cudaStreamDestroy({})", arg(0)?),
            Builtin::DeviceSync => "cudaDeviceSynchronize()".into(),
            Builtin::EventRecord => format!("cudaEventRecord({}, {})", arg(0)?, arg(1)?),
            Builtin::EventSync => format!("cudaEventSynchronize({})", arg(0)?),
            Builtin::EventDestroy => format!("cudaEventDestroy({})", arg(0)?),
            Builtin::StreamWaitEvent => format!("cudaStreamWaitEvent({}, {}, 0)", arg(0)?, arg(1)?),
            _ => return Err(unsupported(span, "this builtin here")),
        };
        Ok(format!("strata_cuda_check({call}, {at})"))
    }
}
