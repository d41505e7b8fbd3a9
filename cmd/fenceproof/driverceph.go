package main

import (
	"errors"
	"flag"
	"strings"

	"github.com/fenceproof/fenceproof/driver"
	cephbackend "github.com/fenceproof/fenceproof/driver/backend/ceph"
)

// cephFlags binds the Ceph backend's flags of `fenceproof driver`.
func cephFlags(fs *flag.FlagSet, c *driver.CephOptions) {
	fs.StringVar(&c.Conf, "ceph-conf", "", "ceph backend: ceph.conf path")
	fs.StringVar(&c.User, "ceph-user", "admin", `ceph backend: Ceph user without "client." (least caps: mon 'allow r, allow command "osd blocklist", allow command "sessions"')`)
	fs.StringVar(&c.Keyring, "ceph-keyring", "", "ceph backend: keyring path (overrides the conf's)")
	fs.StringVar(&c.MonHost, "ceph-mon-host", "", "ceph backend: mon_host (overrides the conf's)")
	fs.StringVar(&c.NetNS, "ceph-netns", "", "ceph backend: connect from this network namespace (path, e.g. /run/netns/x)")
	fs.DurationVar(&c.Expiry, "ceph-expiry", cephbackend.DefaultExpiry, "ceph backend: expiry of the blocklist entries (default ceph-csi's five years); re-added at half")
	fs.StringVar(&c.Ranges, "ceph-ranges", cephbackend.RangesAuto, "ceph backend: range entries (osd blocklist range, 16.2.15+): auto | on | off (off: one entry per address)")
	fs.IntVar(&c.MaxEntries, "ceph-max-entries", cephbackend.DefaultMaxEntries, "ceph backend: most blocklist entries one Fence may need; more is INVALID_ARGUMENT")
	fs.DurationVar(&c.MinTime, "ceph-min-time", cephbackend.DefaultMinTime, "ceph backend: no command is sent with less than this left before the RPC deadline")
	fs.DurationVar(&c.MonTimeout, "ceph-mon-timeout", 0, "ceph backend: bound of one mon command (rados_mon_op_timeout; default 30s)")
	fs.BoolVar(&c.NoOSDBarrier, "ceph-no-osd-barrier", false, "ceph backend: acknowledge a fence once the mon committed it, without waiting for every PG to operate under the new epoch (measured: can precede enforcement by milliseconds)")
	fs.StringVar(&c.RecordPath, "ceph-record", "", "ceph backend: ownership record of the entries this driver added (default: --state + .ceph.json)")
}

// checkCephFlags refuses --ceph-* flags without --backend ceph.
func checkCephFlags(fs *flag.FlagSet, o *driver.Options) error {
	var set []string
	fs.Visit(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "ceph-") {
			set = append(set, "--"+f.Name)
		}
	})
	if len(set) > 0 && o.Backend != "ceph" {
		return errors.New(strings.Join(set, ", ") + " go with --backend ceph, and only with it")
	}
	if o.Backend == "ceph" && !driver.CephBuilt {
		return errors.New("--backend ceph: this binary was built without the Ceph backend (cgo and librados-dev): use bin/fenceproof-ceph (make build-ceph)")
	}
	return nil
}
