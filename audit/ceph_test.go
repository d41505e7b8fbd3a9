package audit

import (
	"testing"

	"github.com/fenceproof/fenceproof/refstore"
	"github.com/fenceproof/fenceproof/refstore/writer"
)

// TestFirstRefusalAfterTheAck: each fenced source's first refusal from the
// Fence RPC's start on is reported relative to the ack (negative when the
// storage refused before the driver acknowledged); refusals of unfenced
// sources and before the RPC are not.
func TestFirstRefusalAfterTheAck(t *testing.T) {
	drv := []DriverEvent{
		{Kind: EventFence, OK: true, Code: "OK", StartNs: 9_000, TNs: 10_000, CIDRs: []string{"10.0.0.4/30"}, Source: "d:1"},
		{Kind: EventUnfence, OK: true, Code: "OK", StartNs: 20_000, TNs: 21_000, CIDRs: []string{"10.0.0.4/30"}, Source: "d:2"},
	}
	in := Input{Driver: drv,
		Audit: []refstore.AuditRecord{
			{Client: "a", Addr: "10.0.0.4:0", Seq: 1, TNs: 8_000},
			{Client: "n", Addr: "10.0.0.3:0", Seq: 1, TNs: 8_000},
		},
		Writers: []writer.Attempt{
			{Client: "a", Seq: 1, Local: "10.0.0.4:0", SendNs: 7_900, TNs: 8_100, Outcome: writer.OutcomeOK},
			{Client: "a", Seq: 2, Local: "10.0.0.4:0", SendNs: 8_500, TNs: 8_600, Outcome: writer.OutcomeRefused, Reason: "before the RPC"},
			{Client: "a", Seq: 3, Local: "10.0.0.4:0", SendNs: 9_600, TNs: 9_700, Outcome: writer.OutcomeRefused},
			{Client: "a", Seq: 4, Local: "10.0.0.4:0", SendNs: 10_600, TNs: 10_700, Outcome: writer.OutcomeRefused},
			{Client: "n", Seq: 1, Local: "10.0.0.3:0", SendNs: 7_900, TNs: 8_100, Outcome: writer.OutcomeOK},
		}}
	r := Check(in, Options{})
	var a, n *SourceFigures
	for i, s := range r.Episodes[0].Sources {
		switch s.Source {
		case "a@10.0.0.4":
			a = &r.Episodes[0].Sources[i]
		case "n@10.0.0.3":
			n = &r.Episodes[0].Sources[i]
		}
	}
	if a == nil || a.FirstRefusedNs != 9_700 || a.RefusalMs != -0.0003 {
		t.Fatalf("fenced source: %+v", a)
	}
	if n == nil || n.FirstRefusedNs != 0 {
		t.Fatalf("unfenced source: %+v", n)
	}
}
