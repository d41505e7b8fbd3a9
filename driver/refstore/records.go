package refstore

import (
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

// jsonLog appends JSON lines to a file, optionally fsyncing each one.
type jsonLog struct {
	mu     sync.Mutex
	f      *os.File
	sync   bool
	broken error // set on the first failed write; every later append fails
}

func openJSONLog(path string, fsync bool) (*jsonLog, error) {
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

// append writes v as one line (and fsyncs it when the log is synchronous).
// After a failure the log is broken for good: a partial line may be on disk
// and nothing may follow it.
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
	defer l.mu.Unlock()
	if l.broken != nil {
		return l.broken
	}
	if _, err := l.f.Write(b); err != nil {
		l.broken = fmt.Errorf("write %s: %w", l.f.Name(), err)
		return l.broken
	}
	if l.sync {
		if err := l.f.Sync(); err != nil {
			l.broken = fmt.Errorf("fsync %s: %w", l.f.Name(), err)
			return l.broken
		}
	}
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
