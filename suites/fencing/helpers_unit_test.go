package fencing

import (
	"strings"
	"testing"

	"github.com/fenceproof/fenceproof/internal/fencekind"
)

// Plain unit tests of the suite's pure helpers; they run in `make test`
// without a cluster.

func TestLostWritesCountsRefusalsErrorsAndMissingAcks(t *testing.T) {
	audit := []fencekind.Accepted{{Client: "a", Seq: 1, TNs: 10}, {Client: "a", Seq: 3, TNs: 30}, {Client: "b", Seq: 4, TNs: 40}}
	atts := []fencekind.Attempt{
		{Client: "a", Seq: 1, TNs: 11, Outcome: "ok"},
		{Client: "a", Seq: 2, TNs: 21, Outcome: "refused", Reason: "fenced"},
		{Client: "a", Seq: 3, TNs: 31, Outcome: "ok"},
		{Client: "a", Seq: 4, TNs: 41, Outcome: "ok"}, // acknowledged, not in the audit: lost
		{Client: "a", Seq: 5, TNs: 51, Outcome: "error"},
		{Client: "a", Seq: 6, TNs: 99, Outcome: "refused"}, // outside the window
	}
	lost, total, reasons := lostWrites(atts, audit, "a", 0, 60)
	if lost != 3 || total != 5 {
		t.Fatalf("lost %d of %d (%v), want 3 of 5", lost, total, reasons)
	}
	if !strings.Contains(strings.Join(reasons, ";"), "seq 4 acknowledged but not in the audit log") {
		t.Errorf("reasons %v do not name the missing acknowledged write", reasons)
	}
	if lost, _, _ := lostWrites(atts[:1], audit, "a", 0, 60); lost != 0 {
		t.Errorf("an accepted, audited write counted as lost")
	}
}

func TestAuditSinceKeepsLaterRecordsAndOtherLines(t *testing.T) {
	in := "{\"client\":\"x\",\"seq\":1,\"t_ns\":5}\n{\"client\":\"y\",\"seq\":2,\"t_ns\":15}\n{torn"
	got := string(auditSince([]byte(in), 10))
	if strings.Contains(got, `"seq":1`) || !strings.Contains(got, `"seq":2`) || !strings.HasSuffix(got, "{torn") {
		t.Errorf("auditSince = %q", got)
	}
}

// TestLateAckIsNotJudgedLost pins the lost-ack flake of FENCING-002: a
// write acknowledged after the evidence's snapshot time, whose writer log
// was read after the audit log, is left out of the oracle's writer log.
func TestLateAckIsNotJudgedLost(t *testing.T) {
	in := "{\"client\":\"a\",\"seq\":1,\"t_ns\":5,\"outcome\":\"ok\"}\n{\"client\":\"a\",\"seq\":2,\"t_ns\":15,\"outcome\":\"ok\"}\nnot json\n"
	got := string(ackedBy([]byte(in), 10))
	if !strings.Contains(got, `"seq":1`) || strings.Contains(got, `"seq":2`) || !strings.Contains(got, "not json") {
		t.Errorf("ackedBy = %q", got)
	}
}
