package driver

import "time"

// CephOptions configures the Ceph backend (--backend ceph, in a binary
// built with -tags ceph; see ceph/README.md).
type CephOptions struct {
	Conf         string        // ceph.conf path
	User         string        // Ceph user without "client." (default admin)
	Keyring      string        // keyring path (overrides the conf's)
	MonHost      string        // mon_host (overrides the conf's)
	NetNS        string        // connect from this network namespace (a path)
	Expiry       time.Duration // blocklist expiry (default five years, like ceph-csi)
	Ranges       string        // range entries: auto (default) | on | off
	MaxEntries   int           // most blocklist entries one request may need (default 1024)
	MinTime      time.Duration // no command is sent with less than this left before the deadline (default 500ms)
	MonTimeout   time.Duration // bound of one mon command (rados_mon_op_timeout, default 30s)
	NoOSDBarrier bool          // acknowledge at the mon's commit, without the per-PG barrier
	RecordPath   string        // ownership record (default: the state file + ".ceph.json")
}

func (c CephOptions) recordPath(statePath string) string {
	if c.RecordPath != "" {
		return c.RecordPath
	}
	return statePath + ".ceph.json"
}
