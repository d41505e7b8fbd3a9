package writer

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"sync"
)

// AttemptLog counts attempts by outcome and writes each as one JSON line
// (Attempt); both writers (this one and ceph/writer) log through it, so the
// oracle reads their logs alike. Safe for concurrent use.
type AttemptLog struct {
	mu  sync.Mutex
	cnt map[string]int
	enc *json.Encoder // nil: count only
}

// NewAttemptLog logs to w; a nil w only counts.
func NewAttemptLog(w io.Writer) *AttemptLog {
	l := &AttemptLog{cnt: map[string]int{}}
	if w != nil {
		l.enc = json.NewEncoder(w)
	}
	return l
}

// Record counts a and writes its line.
func (l *AttemptLog) Record(a Attempt) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cnt[a.Outcome]++
	if l.enc == nil {
		return nil
	}
	if err := l.enc.Encode(a); err != nil {
		return fmt.Errorf("writer log: %w", err)
	}
	return nil
}

// Counts returns how many attempts ended in each outcome so far.
func (l *AttemptLog) Counts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.cnt)
}
