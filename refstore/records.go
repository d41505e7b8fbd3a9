package refstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sync"
)

// AuditRecord is one line of the audit log: a write the service accepted.
// It is appended and fsynced before the client gets its OK.
type AuditRecord struct {
	Client string `json:"client"`
	Addr   string `json:"addr"` // source ip:port as the service saw it (IPv4-mapped IPv6 unmapped)
	Seq    uint64 `json:"seq"`
	TNs    int64  `json:"t_ns"` // server time (unix ns), taken after the blocklist check
	// Payload is what the write carried (READ gives it back).
	Payload string `json:"payload,omitempty"`
}

// RefusalRecord is one line of the refusals log: a connection or write the
// service refused. Refused writes never appear in the audit log.
type RefusalRecord struct {
	Client string `json:"client,omitempty"` // empty when refused on accept, before any request
	Addr   string `json:"addr"`
	Seq    uint64 `json:"seq,omitempty"`
	TNs    int64  `json:"t_ns"`
	Reason string `json:"reason"`
}

// EnforceRecord is one line of the enforcement log: a blocklist change, with
// the time the new list took effect (after which every write is checked
// against it) and how many open sessions it closed.
type EnforceRecord struct {
	TNs        int64    `json:"t_ns"`
	Generation uint64   `json:"generation"`
	CIDRs      []string `json:"cidrs"`
	Closed     int      `json:"closed"`
	Restored   bool     `json:"restored,omitempty"` // loaded from the state file at start
}

// jsonLog appends JSON lines to a file, optionally fsyncing each one before
// append returns. Concurrent appends share fsyncs (group commit): a line is
// durable once any fsync that started after it was written has returned.
type jsonLog struct {
	mu      sync.Mutex // serialises writes and guards the fields below
	f       *os.File
	sync    bool
	broken  error // set on the first failed write or fsync; every later append fails
	written int64 // bytes written by this process
	synced  int64 // of which known durable

	syncMu sync.Mutex // one fsync at a time
}

func openJSONLog(path string, fsync bool) (*jsonLog, error) {
	if err := repairTail(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if fsync {
		if err := syncDir(path); err != nil {
			f.Close()
			return nil, err
		}
	}
	return &jsonLog{f: f, sync: fsync}, nil
}

// append writes v as one line (and, when the log is synchronous, returns
// only once it is fsynced). After a failure the log is broken for good: a
// partial line may be on disk and nothing may follow it.
func (l *jsonLog) append(v any) error {
	if l == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	l.mu.Lock()
	if l.broken != nil {
		l.mu.Unlock()
		return l.broken
	}
	if _, err := l.f.Write(b); err != nil {
		l.broken = fmt.Errorf("write %s: %w", l.f.Name(), err)
		l.mu.Unlock()
		return l.broken
	}
	l.written += int64(len(b))
	mine := l.written
	l.mu.Unlock()
	if !l.sync {
		return nil
	}
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.mu.Lock()
	done, broken, target := l.synced >= mine, l.broken, l.written
	l.mu.Unlock()
	switch {
	case broken != nil:
		return broken
	case done: // an fsync that started after our write covered it
		return nil
	}
	err = l.f.Sync()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.broken = fmt.Errorf("fsync %s: %w", l.f.Name(), err)
		return l.broken
	}
	l.synced = max(l.synced, target)
	return nil
}

func (l *jsonLog) close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}

// repairTail cuts a torn last line (a crash while appending; that record was
// never acknowledged, since the OK follows the fsync of the whole line) so
// the next record does not run into it. Only regular files are touched.
func repairTail(path string) error {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	n := min(fi.Size(), 64<<10)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, fi.Size()-n); err != nil {
		return err
	}
	if buf[n-1] == '\n' {
		return nil
	}
	cut := int64(0)
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		cut = fi.Size() - n + int64(i) + 1
	} else if fi.Size() > n {
		return fmt.Errorf("%s: the last %d bytes hold no newline; not a JSON-lines log", path, n)
	}
	if err := f.Truncate(cut); err != nil {
		return err
	}
	return f.Sync()
}
