"""Hand edits of the C that `strata emit --target c` produces for a one-kernel bench program,
to measure what each suggested change to crates/strata-emit/src/emit.rs would gain (see
docs/benchmarks.md). Not a compiler: plain text substitutions on kernel `f0`, valid for the bench
programs only (their kernels have no `return`, their per-thread locals do not live across a
barrier, and for `B` every power is a power of two).

usage: xform.py IN OUT FLAGS BX BY BZ
  A  block dimensions as compile-time constants (BX, BY, BZ), so `tid % BX` etc. are shifts/masks
  B  `strata_ipow(2, e)` as `1 << e`
  C  no `done[]` array (calloc per block, test per thread) when the kernel has no thread return
  D  a split's thread condition `if (!(tx < e)) continue;` as the bound of the thread loop
  E  shared memory as a block-local array on the stack instead of malloc per block;
     schedule(static) instead of schedule(dynamic, 1)
  F  per-thread locals `tN[tid]` as scalars (registers) when not live across a barrier
  G  atomics on shared memory as plain read-modify-write (a block runs on one OS thread)
"""
import re, sys
src, dst, flags, bx, by, bz = sys.argv[1:7]
s = open(src).read()
head, sep, rest = s.partition('static void f0(')
sig_end = rest.index('{\n') + 2
body_end = rest.index('\n}\n', sig_end)
sig, body, tail = rest[:sig_end], rest[sig_end:body_end], rest[body_end:]
if 'A' in flags:
    sig = sig.replace('uint64_t BX, uint64_t BY, uint64_t BZ)', 'uint64_t BX_, uint64_t BY_, uint64_t BZ_)')
    body = '    const uint64_t BX = %s, BY = %s, BZ = %s; (void)BX_; (void)BY_; (void)BZ_;\n' % (bx, by, bz) + body
if 'B' in flags:
    body = body.replace('strata_ipow(UINT64_C(2), ', 'SHL1(')
    head = head + '#define SHL1(e) ((uint64_t)1 << (e))\n'
if 'C' in flags:
    body = body.replace('unsigned char *done = (unsigned char *)calloc(nthreads ? nthreads : 1, 1);', '')
    body = re.sub(r'\n\s*if \(done\[tid\]\) continue;', '', body)
    body = body.replace('free(done);', '')
if 'D' in flags:
    pat = re.compile(r'for \(uint64_t tid = 0; tid < nthreads; tid\+\+\) \{\n(\s*uint64_t tx = [^\n]*\n\s*\(void\)tx; \(void\)ty; \(void\)tz;\n)\s*if \(!\(\(tx\) >= \(UINT64_C\(0\)\) && \(tx\) < (.*)\)\) continue;\n')
    body = pat.sub(lambda m: 'for (uint64_t tid = 0; tid < %s; tid++) {\n%s' % (m.group(2), m.group(1)), body)
if 'E' in flags:
    body = re.sub(r'(\w+) \*(l\d+) = \(\w+ \*\)strata_alloc\(\(UINT64_C\((\d+)\)\) \* sizeof\(\w+\)\);', r'\1 \2[\3];', body)
    for m in re.findall(r'\w+ (l\d+)\[\d+\];', body):
        body = body.replace('free(%s);' % m, '')
    body = body.replace('schedule(dynamic, 1)', 'schedule(static)')
if 'F' in flags:
    for ty, t in re.findall(r'(\w+) \*(t\d+) = \(\w+ \*\)strata_alloc\(nthreads \* sizeof\(\w+\)\);', body):
        body = body.replace('%s *%s = (%s *)strata_alloc(nthreads * sizeof(%s));' % (ty, t, ty, ty), '%s %s_;' % (ty, t))
        body = body.replace('%s[tid]' % t, '%s_' % t).replace('free(%s);' % t, '')
if 'G' in flags:
    for m in set(re.findall(r'\w+ (l\d+)\[\d+\];', body)) | set(re.findall(r'\w+ \*(l\d+) = \(\w+ \*\)strata_alloc\(\(UINT64_C', body)):
        body = body.replace('__atomic_fetch_add(&(%s)[' % m, 'PLAIN_FETCH_ADD(&(%s)[' % m)
    head = head + '#define PLAIN_FETCH_ADD(p, v, o) (*(p) += (v))\n'
open(dst, 'w').write(head + sep + sig + body + tail)
