package fencing

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	. "github.com/onsi/gomega"

	"github.com/fenceproof/fenceproof/audit"
)

// oracleRun is the write-audit oracle (audit) over the evidence
// of a case: the storage's accepted-writes and enforcement logs, every
// driver pod's log and the case's writer logs. The inputs and the oracle's
// own report are written into the case's directory first, so a failure can
// be replayed with the replay.sh written next to them (`fenceproof audit
// check --since <case start>` on exactly those files).
func (c *fcase) oracleRun(ev *evidence) *audit.Result {
	dir := c.caseDir()
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	// Only this case's writes: an earlier case (the ack-before-enforce one)
	// must not fail a later one. The driver logs stay whole: the fence
	// history opens the windows.
	files := audit.Files{Audit: []string{filepath.Join(dir, "audit.log")}}
	Expect(os.WriteFile(files.Audit[0], auditSince(ev.audit, c.start.UnixNano()), 0o644)).To(Succeed())
	if ev.enforce != nil {
		files.EnforceLog = filepath.Join(dir, "enforce.log")
		Expect(os.WriteFile(files.EnforceLog, ev.enforce, 0o644)).To(Succeed())
	}
	for _, p := range slices.Sorted(maps.Keys(ev.drivers)) {
		f := filepath.Join(dir, "driver-"+p+".log")
		Expect(os.WriteFile(f, ev.drivers[p], 0o644)).To(Succeed())
		files.DriverLogs = append(files.DriverLogs, f)
	}
	// A writer whose pod is gone (the rehearsal's stale one) has no log;
	// the audit log still has its writes. A writer log is read while it
	// still writes: only what was acknowledged by ev.until is judged.
	for _, id := range slices.Sorted(maps.Keys(ev.writers)) {
		f := filepath.Join(dir, "writer-"+id+".log")
		Expect(os.WriteFile(f, ackedBy(ev.writers[id], ev.until), 0o644)).To(Succeed())
		files.WriterLogs = append(files.WriterLogs, f)
	}
	Expect(os.WriteFile(filepath.Join(dir, "replay.sh"), []byte(replayCommand(files, c.start.UnixNano())), 0o755)).To(Succeed())
	in, err := audit.Load(files)
	Expect(err).NotTo(HaveOccurred())
	// Since: an earlier case's fence (the deliberately early ack of the
	// fault case) still opens windows but is not this case's violation.
	r := audit.Check(in, audit.Options{Since: c.start.UnixNano()})
	Expect(r.WriteReports(dir, "oracle", c.name)).To(Succeed())
	c.event("oracle: %s", r.Summary())
	return r
}

// auditSince keeps the audit lines with t_ns >= from (others unchanged).
func auditSince(b []byte, from int64) []byte {
	return keepTimed(b, func(tNs int64) bool { return tNs >= from })
}

// ackedBy keeps a writer log's attempts that ended by until (others
// unchanged): the evidence's audit log was read after until, so it holds
// every write acknowledged by then, and none acknowledged later needs to
// be in it yet.
func ackedBy(b []byte, until int64) []byte {
	return keepTimed(b, func(tNs int64) bool { return tNs <= until })
}

// keepTimed keeps the JSON lines whose t_ns keep accepts, and every line
// that is not a JSON object.
func keepTimed(b []byte, keep func(tNs int64) bool) []byte {
	out := make([]byte, 0, len(b))
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		var rec struct {
			TNs int64 `json:"t_ns"`
		}
		if json.Unmarshal(line, &rec) == nil && !keep(rec.TNs) {
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

// replayCommand is the `fenceproof audit check` call that judges exactly
// what oracleRun judged, from the files it wrote.
func replayCommand(f audit.Files, since int64) string {
	args := []string{"fenceproof", "audit", "check", "--since", strconv.FormatInt(since, 10)}
	for _, a := range f.Audit {
		args = append(args, "--audit", filepath.Base(a))
	}
	if f.EnforceLog != "" {
		args = append(args, "--enforce-log", filepath.Base(f.EnforceLog))
	}
	for _, d := range f.DriverLogs {
		args = append(args, "--driver-log", filepath.Base(d))
	}
	for _, w := range f.WriterLogs {
		args = append(args, "--writer-log", filepath.Base(w))
	}
	return "#!/bin/sh\n# Replays this case's oracle verdict from the files next to this script.\ncd \"$(dirname \"$0\")\" && exec " + strings.Join(args, " ") + " \"$@\"\n"
}
