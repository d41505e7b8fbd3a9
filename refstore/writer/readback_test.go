package writer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/fencing/contract"
)

// TestReadBackReturnsTheContractRecords: a writer that knows its node
// writes the contract's records; READ gives back exactly its acknowledged
// writes, intact; a payload changed on the storage is a damaged record;
// a READ from a fenced source is refused.
func TestReadBackReturnsTheContractRecords(t *testing.T) {
	dir := t.TempDir()
	s := startRefstore(t, dir, "127.0.0.1:0")
	defer s.Stop()
	var log syncBuf
	w, err := New(Options{Server: s.Addr().String(), ID: "w1", Node: "n1", Interval: time.Millisecond, StartSeq: 10, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	w.Run(ctx)
	cancel()
	var acked []Attempt
	for _, a := range log.attempts(t) {
		if a.Outcome == OutcomeOK {
			acked = append(acked, a)
		}
		if a.Node != "n1" || a.MonoNs < a.SendMonoNs {
			t.Fatalf("attempt %+v", a)
		}
	}
	recs, done, err := ReadBack(s.Addr().String(), []string{"w1", "nobody"}, 5*time.Second)
	if err != nil || !done.Done || len(done.Writers) != 2 || len(recs) != len(acked) || len(acked) < 3 {
		t.Fatalf("ReadBack: %d records (%d acknowledged), %+v, %v", len(recs), len(acked), done, err)
	}
	for i, r := range recs {
		if !r.Intact || r.Seq != acked[i].Seq || r.StartNs != acked[i].SendNs || r.Node != "n1" {
			t.Fatalf("record %+v for attempt %+v", r, acked[i])
		}
	}
	// What the storage holds, changed: the next read sees it damaged.
	s.Stop()
	audit := filepath.Join(dir, "audit.log")
	b, _ := os.ReadFile(audit)
	rec := contract.Record{Writer: "w1", Seq: acked[0].Seq, Node: "n1", StartNs: acked[0].SendNs}.Encode()
	// Another last character, whatever it was: replacing it by a fixed "0"
	// left one record in 16 (those ending in "0") unchanged.
	last := "0"
	if strings.HasSuffix(rec, "0") {
		last = "1"
	}
	if !strings.Contains(string(b), rec) {
		t.Fatalf("the audit log does not hold the record %q", rec)
	}
	b = []byte(strings.Replace(string(b), rec, rec[:len(rec)-1]+last, 1))
	os.WriteFile(audit, b, 0o644)
	s = startRefstore(t, dir, "127.0.0.1:0")
	defer s.Stop()
	recs, _, _ = ReadBack(s.Addr().String(), []string{"w1"}, 5*time.Second)
	if len(recs) == 0 || recs[0].Intact || recs[0].Seq != acked[0].Seq {
		t.Errorf("a changed record read back as %+v", recs[0])
	}
	if _, err := s.SetBlocklist([]string{"127.0.0.0/8"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadBack(s.Addr().String(), []string{"w1"}, 5*time.Second); err == nil {
		t.Error("a fenced source could read")
	}
}
