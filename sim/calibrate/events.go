package calibrate

// The vocabulary both runs speak, declared once: what an experiment does
// (actions) and what the cluster and its clients do (events). The real
// runner (cephrun) records them, the simulated run derives them from the
// simulator's timeline (simulate.go), the checks read them.

// actionKinds are the experiment's steps and what each does on the real
// cluster and in the simulator.
var actionKinds = map[string]string{
	"pause-host":    "SIGSTOP the host's OSD daemons (a hung host: its peers report it after osd_heartbeat_grace) / the machine hangs",
	"resume-host":   "SIGCONT them: they find themselves marked down and boot again / the machine runs again",
	"kill-host":     "SIGKILL the host's OSD daemons (its peers' connections are refused) / the osd-crash fault",
	"start-host":    "start the host's OSD daemons again, with their stores / osd-start",
	"power-off":     "SIGKILL the host's mon and OSD daemons / the machine loses power",
	"power-on":      "start them again / power returns (the daemons start, no machine boot)",
	"blocklist-add": "`ceph osd blocklist add` of a writing client's address / ceph-csi's blocklist entry of the machine's address",
	"blocklist-rm":  "`ceph osd blocklist rm` of it / the entry expires",
	"cut-client":    "the lock holder's network goes down (its process runs) / the machine's NIC is cut",
	"start-client":  "a second client starts and wants the holder's exclusive lock / the workload's replacement client starts",
	"heal-client":   "the old holder's network comes back / the NIC heals",
}

// eventNames are what the runs show.
var eventNames = map[string]string{
	"down":          "an OSD marked down in the OSD map",
	"out":           "an OSD marked out",
	"up":            "an OSD marked up (booted)",
	"in":            "an OSD marked in",
	"quorum":        "the mons formed a quorum again",
	"clean":         "every PG active+clean again (derived from the samples)",
	"first-refused": "the fenced client's first write refused (EBLOCKLISTED), by send time",
	"resumed":       "the client's first write accepted after the entry went, by send time",
	"lock-broken":   "the new client broke the old holder's lock and blocklisted it",
	"stale-write":   "a write of the old holder accepted after its lock was broken",
}
