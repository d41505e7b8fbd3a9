package fencing

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"

	. "github.com/onsi/gomega"

	"github.com/fenceproof/fenceproof/internal/audit"
	"github.com/fenceproof/fenceproof/internal/fencekind"
)

// oracleRun is the write-audit oracle (internal/audit) over everything the
// run produced so far: refstore's audit and enforcement logs, every driver
// pod's log and the case's writer logs. The inputs and the oracle's own
// report are written under reports/fencing/<case>/ first, so a failure can
// be replayed with `fenceproof audit check` on exactly those files.
func (c *fcase) oracleRun(ctx context.Context) *audit.Result {
	dir := filepath.Join(*flagReports, "fencing", c.id)
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	// Only this case's writes: an earlier case (the ack-before-enforce one)
	// must not fail a later one. The driver logs stay whole: the fence
	// history opens the windows.
	files := audit.Files{Audit: []string{filepath.Join(dir, "audit.log")}}
	Expect(os.WriteFile(files.Audit[0], auditSince(auditLog(ctx), c.start.UnixNano()), 0o644)).To(Succeed())
	base := filepath.Dir(w.spec.AuditLogPath())
	if b, err := w.k.NodeFile(ctx, w.storage, base+"/enforce.log"); err == nil {
		files.EnforceLog = filepath.Join(dir, "enforce.log")
		Expect(os.WriteFile(files.EnforceLog, b, 0o644)).To(Succeed())
	}
	logs := w.logs.all(ctx)
	pods := make([]string, 0, len(logs))
	for p := range logs {
		pods = append(pods, p)
	}
	sort.Strings(pods)
	for _, p := range pods {
		f := filepath.Join(dir, "driver-"+p+".log")
		Expect(os.WriteFile(f, logs[p], 0o644)).To(Succeed())
		files.DriverLogs = append(files.DriverLogs, f)
	}
	ids := make([]string, 0, len(c.writers))
	for id := range c.writers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		b, err := w.k.PodLogs(ctx, c.ns, id, "writer", false)
		if err != nil {
			continue // a writer whose pod is gone (the rehearsal's stale one): the audit log still has its writes
		}
		f := filepath.Join(dir, "writer-"+id+".log")
		Expect(os.WriteFile(f, b, 0o644)).To(Succeed())
		files.WriterLogs = append(files.WriterLogs, f)
	}
	in, err := audit.Load(files)
	Expect(err).NotTo(HaveOccurred())
	r := audit.Check(in, audit.Options{})
	Expect(r.WriteReports(dir, "oracle", c.name)).To(Succeed())
	c.event("oracle: %s", r.Summary())
	return r
}

// auditSince keeps the audit lines with t_ns >= from (others unchanged).
func auditSince(b []byte, from int64) []byte {
	var out []byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		recs := fencekind.ParseLines[fencekind.Accepted](line)
		if len(recs) == 1 && recs[0].TNs < from {
			continue
		}
		out = append(out, line...)
	}
	return out
}

// enforcementFigure records refstore's enforcement time of the fence
// acknowledged at ack, relative to the ack (from refstore's enforcement log,
// through the oracle's episodes): negative means enforced before the RPC
// returned, as a correct driver must.
func (c *fcase) enforcementFigure(r *audit.Result, ack int64) {
	for _, e := range r.Episodes {
		if e.AckNs == ack && e.EnforceNs != 0 {
			c.figure(figEnforce, "%+.1f", e.EnforceDeltaMs)
			return
		}
	}
	c.figure(figEnforce, "unknown (no enforcement record)")
}
