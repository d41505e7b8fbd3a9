package pathwriter

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/fencing/contract"
)

// TestWriteAndReadBack: every acknowledged attempt's record is read back
// intact from the file (O_DIRECT both ways); a damaged block and a slot of
// another write are damaged records of their slot; an unwritten slot is
// no record.
func TestWriteAndReadBack(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	w, err := New(Options{Dir: dir, ID: "w1", Node: "n1", Interval: time.Millisecond, StartSeq: 100, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if err := w.Run(ctx); err != context.DeadlineExceeded {
		t.Fatal(err)
	}
	var acked []contract.Attempt
	for _, l := range bytes.Split(bytes.TrimSpace(log.Bytes()), []byte("\n")) {
		var a contract.Attempt
		if err := json.Unmarshal(l, &a); err != nil {
			t.Fatal(err)
		}
		if a.Outcome != contract.OutcomeOK || a.Node != "n1" || a.TNs < a.SendNs || a.MonoNs < a.SendMonoNs {
			t.Fatalf("attempt %+v", a)
		}
		acked = append(acked, a)
	}
	if len(acked) < 5 {
		t.Fatalf("%d attempts in 150 ms", len(acked))
	}
	recs, done, err := ReadBack(dir, []string{"w1", "w2"})
	if err != nil || !done.Done || len(done.Writers) != 2 || len(recs) != len(acked) {
		t.Fatalf("ReadBack: %d records, %+v, %v; want %d", len(recs), done, err, len(acked))
	}
	for i, r := range recs {
		if !r.Intact || r.Seq != acked[i].Seq || r.StartNs != acked[i].SendNs || r.Node != "n1" {
			t.Fatalf("record %d %+v, attempt %+v", i, r, acked[i])
		}
	}

	// Damage slot 1 (one byte), copy slot 0's block into slot 2, and
	// leave a hole at slot len+1.
	f, err := os.OpenFile(w.Path(), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	blk := make([]byte, BlockSize)
	f.ReadAt(blk, 0)
	f.WriteAt(blk, 2*BlockSize)
	f.WriteAt([]byte{'X'}, BlockSize+100)
	f.WriteAt(blk, int64(len(acked)+1)*BlockSize)
	f.Close()
	recs, _, _ = ReadBack(dir, []string{"w1"})
	bad := map[uint64]string{}
	for _, r := range recs {
		if !r.Intact {
			bad[r.Seq] = r.Detail
		}
	}
	if len(bad) != 3 || bad[101] != "block checksum mismatch" || bad[102] == "" || bad[uint64(100+len(acked)+1)] == "" {
		t.Errorf("damaged records %v, want slots 101 (checksum), 102 and %d (another write's record)", bad, 100+len(acked)+1)
	}
}

func TestClassify(t *testing.T) {
	for err, want := range map[error]string{
		nil: contract.OutcomeOK, &os.PathError{Op: "write", Err: syscall.EROFS}: contract.OutcomeRefused,
		syscall.ESHUTDOWN: contract.OutcomeRefused, syscall.EACCES: contract.OutcomeRefused,
		syscall.EIO: contract.OutcomeError, context.DeadlineExceeded: contract.OutcomeError,
	} {
		if got, _ := Classify(err); got != want {
			t.Errorf("Classify(%v) = %s, want %s", err, got, want)
		}
	}
}
