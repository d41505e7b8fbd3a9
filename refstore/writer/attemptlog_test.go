package writer

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestAttemptLogCountsAndWritesEveryAttempt(t *testing.T) {
	var buf bytes.Buffer
	l := NewAttemptLog(&buf)
	for _, o := range []string{OutcomeOK, OutcomeRefused, OutcomeOK} {
		if err := l.Record(Attempt{Client: "c", Seq: 1, Outcome: o}); err != nil {
			t.Fatal(err)
		}
	}
	if c := l.Counts(); c[OutcomeOK] != 2 || c[OutcomeRefused] != 1 || len(c) != 2 {
		t.Errorf("counts %v", c)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3: %q", len(lines), buf.String())
	}
	var a Attempt
	if err := json.Unmarshal([]byte(lines[1]), &a); err != nil || a.Outcome != OutcomeRefused {
		t.Errorf("line 2 = %q (%v)", lines[1], err)
	}
	if NewAttemptLog(nil).Record(Attempt{Outcome: OutcomeOK}) != nil {
		t.Error("a count-only log failed")
	}
	if err := NewAttemptLog(failing{}).Record(Attempt{Outcome: OutcomeOK}); err == nil {
		t.Error("a failed log write was not reported")
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk full") }
