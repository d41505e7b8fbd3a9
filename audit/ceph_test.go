package audit

import (
	"testing"

	cephwriter "github.com/fenceproof/fenceproof/ceph/writer"
)

// TestFromCephJudgesWritesBySendTime: on Ceph the record of an accepted
// write is built from the writer's side; a write sent after the fence's
// ack and acknowledged is a violation, one sent before the ack and
// acknowledged after it is not; an acknowledged object missing from the
// read-back is a lost write; a -108 while nothing fenced the source is a
// refusal of an unfenced writer; the first refusal's delay is reported.
func TestFromCephJudgesWritesBySendTime(t *testing.T) {
	const ack = int64(10_000)
	drv := []DriverEvent{
		{Kind: EventFence, OK: true, Code: "OK", StartNs: 9_000, TNs: ack, CIDRs: []string{"10.0.0.4/30"}, Source: "d:1"},
		{Kind: EventUnfence, OK: true, Code: "OK", StartNs: 20_000, TNs: 21_000, CIDRs: []string{"10.0.0.4/30"}, Source: "d:2"},
	}
	att := func(client, src string, seq uint64, send, t int64, res string) cephwriter.Attempt {
		return cephwriter.Attempt{Client: client, Seq: seq, Object: cephwriter.ObjectName(client, seq), Source: src, SendNs: send, TNs: t, Result: res}
	}
	inFlight := att("a", "10.0.0.4", 1, 9_500, 10_500, cephwriter.ResultOK) // sent before the ack
	refused := att("a", "10.0.0.4", 2, 10_600, 10_700, cephwriter.ResultBlocklisted)
	neighbour := att("n", "10.0.0.3", 1, 11_000, 11_100, cephwriter.ResultOK)
	for _, c := range []struct {
		name  string
		atts  []cephwriter.Attempt
		lost  []string // objects the read-back does not find
		kinds []string
	}{
		{"clean", []cephwriter.Attempt{inFlight, refused, neighbour}, nil, nil},
		{"acknowledged after the ack", []cephwriter.Attempt{inFlight, refused, att("a", "10.0.0.5", 3, 10_800, 10_900, cephwriter.ResultOK), neighbour}, nil, []string{KindWriteAfterFence}},
		{"lost", []cephwriter.Attempt{inFlight, refused, neighbour}, []string{neighbour.Object}, []string{KindLostAck}},
		{"refused unfenced", []cephwriter.Attempt{inFlight, refused, att("n", "10.0.0.3", 2, 12_000, 12_100, cephwriter.ResultBlocklisted)}, nil, []string{KindRefusedUnfenced}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rbs []cephwriter.ReadBack
			for _, a := range c.atts {
				if a.Result == cephwriter.ResultOK {
					rb := cephwriter.ReadBack{Client: a.Client, Seq: a.Seq, Object: a.Object, Result: cephwriter.ReadOK}
					for _, o := range c.lost {
						if o == a.Object {
							rb.Result = cephwriter.ReadMissing
						}
					}
					rbs = append(rbs, rb)
				}
			}
			r := Check(FromCeph(drv, c.atts, rbs), Options{})
			var kinds []string
			for _, v := range r.Violations {
				kinds = append(kinds, v.Kind)
			}
			if len(kinds) != len(c.kinds) || (len(kinds) > 0 && kinds[0] != c.kinds[0]) {
				t.Fatalf("violations %v, want %v\n%s", kinds, c.kinds, r.Markdown("x"))
			}
			if c.name == "clean" {
				s := r.Episodes[0].Sources
				if len(s) == 0 || s[0].FirstRefusedNs != 10_700 || s[0].RefusalMs != 0.0007 {
					t.Fatalf("first refusal: %+v", s)
				}
			}
		})
	}
}
