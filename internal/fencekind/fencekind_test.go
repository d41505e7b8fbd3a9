package fencekind

import (
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestInPrefixes(t *testing.T) {
	cidrs := []string{"10.244.2.0/24", "172.18.0.4/32", "2001:db8::/64"}
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"10.244.2.17:41234", true},
		{"10.244.2.17", true},
		{"10.244.1.17:41234", false},
		{"172.18.0.4:5000", true},
		{"172.18.0.5:5000", false},
		{"[::ffff:10.244.2.9]:80", true}, // IPv4-mapped: compared unmapped
		{"[2001:db8::7]:80", true},
		{"[2001:db9::7]:80", false},
		{"not-an-address", false},
		{"", false},
	} {
		if got := InPrefixes(tc.addr, cidrs); got != tc.want {
			t.Errorf("InPrefixes(%q) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}

func TestSameSet(t *testing.T) {
	if !SameSet([]string{"10.244.2.0/24", "172.18.0.4/32"}, []string{"172.18.0.4/32", "10.244.2.7/24"}) {
		t.Error("the same prefixes in another order and with host bits are the same set")
	}
	if SameSet([]string{"10.244.2.0/24"}, []string{"10.244.2.0/24", "172.18.0.4/32"}) {
		t.Error("a subset is not the same set")
	}
	if SameSet([]string{"100.64.0.7:0"}, []string{"100.64.0.7/32"}) {
		t.Error("a malformed CIDR equals only itself")
	}
}

func TestParseLinesSkipsNoise(t *testing.T) {
	in := "I1123 klog line\n{\"client\":\"w-a\",\"addr\":\"10.0.0.1:5\",\"seq\":7,\"t_ns\":99}\n\n{torn\n{\"client\":\"w-b\",\"seq\":8,\"t_ns\":100}\n"
	got := ParseLines[Accepted]([]byte(in))
	if len(got) != 2 || got[0].Seq != 7 || got[1].Client != "w-b" {
		t.Fatalf("ParseLines = %+v, want the two JSON records", got)
	}
}

func TestRPCsKeepsOnlySuccessfulNamedRPCsInTimeOrder(t *testing.T) {
	log := `{"msg":"rpc","rpc":"FenceClusterNetwork","code":"OK","cidrs":["10.0.0.0/24"],"start_ns":5,"t_ns":20}
{"msg":"rpc failed","rpc":"FenceClusterNetwork","code":"InvalidArgument","cidrs":["100.64.0.7:0"],"t_ns":15}
{"msg":"rpc","rpc":"UnfenceClusterNetwork","code":"OK","cidrs":["10.0.0.0/24"],"t_ns":30}
`
	older := `{"msg":"rpc","rpc":"FenceClusterNetwork","code":"OK","cidrs":["10.1.0.0/24"],"t_ns":10}`
	got := RPCs([][]byte{[]byte(log), []byte(older)}, "FenceClusterNetwork")
	if len(got) != 2 || got[0].TNs != 10 || got[1].TNs != 20 || got[1].StartNs != 5 {
		t.Fatalf("RPCs = %+v, want the two OK fences, oldest first", got)
	}
}

func TestContainsPod(t *testing.T) {
	if !containsPod("pod://fenceproof-driver-7d9-abc.fenceproof-fence:9070", "fenceproof-driver-7d9-abc") {
		t.Error("endpoint with namespace names the pod")
	}
	if containsPod("pod://fenceproof-driver-7d9-abcd.fenceproof-fence:9070", "fenceproof-driver-7d9-abc") {
		t.Error("a pod whose name extends another's is a different pod")
	}
}

func TestDriverStatefulSet(t *testing.T) {
	w := World{Images: DefaultImages, StorageNode: "cp", RunID: "r1", Faults: []string{"ack-before-enforce"}}
	d := DriverStatefulSet(w)
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
		t.Errorf("replicas = %v, want exactly one driver", d.Spec.Replicas)
	}
	spec := d.Spec.Template.Spec
	if len(spec.Containers) != 2 {
		t.Fatalf("want driver + csi-addons sidecar, got %d containers", len(spec.Containers))
	}
	args := strings.Join(spec.Containers[0].Command, " ")
	for _, want := range []string{"--backend=refstore", "--refstore-admin=unix:///run/refstore/admin.sock", "--fault=ack-before-enforce", "--secrets-file="} {
		if !strings.Contains(args, want) {
			t.Errorf("driver command %q lacks %q", args, want)
		}
	}
	if strings.Contains(args, "--secret=") {
		t.Error("the secret value must not be in the command line")
	}
	side := strings.Join(spec.Containers[1].Command, " ")
	for _, want := range []string{"--enable-auth=true", "--pod=$(POD_NAME)", "--namespace=$(POD_NAMESPACE)", "--controller-port=9070"} {
		if !strings.Contains(side, want) {
			t.Errorf("sidecar command %q lacks %q", side, want)
		}
	}
	if spec.NodeSelector["kubernetes.io/hostname"] != "cp" {
		t.Errorf("driver not pinned to the storage node: %v", spec.NodeSelector)
	}
	var paths []string
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			paths = append(paths, v.HostPath.Path)
		}
	}
	if !slices.Contains(paths, "/var/lib/fenceproof-fence/r1/driver") || !slices.Contains(paths, "/run/fenceproof-fence/r1") {
		t.Errorf("driver state and admin socket dirs are per run on the host: %v", paths)
	}
	if faithful := strings.Join(DriverStatefulSet(World{Images: DefaultImages, RunID: "r1"}).Spec.Template.Spec.Containers[0].Command, " "); strings.Contains(faithful, "--fault") {
		t.Errorf("the faithful driver has a fault: %q", faithful)
	}
}

func TestRefstoreAuditOnHostLogDir(t *testing.T) {
	w := World{Images: DefaultImages, StorageNode: "cp", RunID: "r9"}
	if got := w.AuditLogPath(); got != "fenceproof-fence/r9/audit.log" {
		t.Errorf("AuditLogPath = %q", got)
	}
	d := RefstoreDeployment(w)
	found := false
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.HostPath != nil && v.HostPath.Path == HostLogDir+"/r9" {
			found = true
		}
	}
	if !found {
		t.Error("refstore's audit log directory must be the run's directory under /var/log (read through the kubelet)")
	}
}

func TestServerAddrIPv6(t *testing.T) {
	if got := ServerAddr("fd00::10"); got != "[fd00::10]:7070" {
		t.Errorf("ServerAddr = %q", got)
	}
}

// Regression: the controller ran on worker B, so the rehearsal's cut of B
// also cut off the controller and the fence was never reconciled.
func TestControllerOnStorageNodeNotAWorker(t *testing.T) {
	spec := ControllerDeployment(World{StorageNode: "cp"}).Spec.Template.Spec
	if spec.NodeSelector["kubernetes.io/hostname"] != "cp" {
		t.Errorf("controller not pinned to the storage node: %v", spec.NodeSelector)
	}
	if len(spec.Tolerations) == 0 {
		t.Error("controller does not tolerate the control-plane taint")
	}
}

// Regression: ParseLines allocated a 1 MiB scanner buffer per call, and the
// suite parsed the audit log line by line, so one oracle run of a 1 MB log
// allocated gigabytes and took 8 s. A call on one short line allocates
// what the line needs.
func TestParseLinesOfOneLineAllocatesLittle(t *testing.T) {
	line := []byte(`{"client":"c","addr":"10.0.0.1:5","seq":1,"t_ns":5}` + "\n")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		if got := ParseLines[Accepted](line); len(got) != 1 {
			t.Fatalf("ParseLines = %+v", got)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 100; per > 64<<10 {
		t.Errorf("ParseLines of one %d-byte line allocates %d bytes", len(line), per)
	}
}

// The idle client keeps refstore's client list non-empty (see
// IdleClientPod) from a node the suite never fences.
func TestIdleClientOnTheStorageNode(t *testing.T) {
	p := IdleClientPod(World{Images: DefaultImages, StorageNode: "cp"}, "10.96.0.9:7070")
	if p.Spec.NodeSelector["kubernetes.io/hostname"] != "cp" || len(p.Spec.Tolerations) == 0 {
		t.Errorf("idle client not on the storage node: %v %v", p.Spec.NodeSelector, p.Spec.Tolerations)
	}
	cmd := strings.Join(p.Spec.Containers[0].Command, " ")
	for _, want := range []string{"writer", "--server=10.96.0.9:7070", "--id=" + IdleClientName, "--interval=1s"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("idle client command %q lacks %q", cmd, want)
		}
	}
}
