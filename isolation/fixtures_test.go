package isolation

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/yaml"
)

const fixtures = "../fixtures/isolation"

// world is the suite's topology with made-up pod addresses.
type world struct {
	topo  Topology
	ips   map[string]netip.Addr
	names []string
	peers []Peer
	cases []PortProto
}

func newWorld(t *testing.T) world {
	t.Helper()
	topo, err := LoadTopology(filepath.Join(fixtures, "topology.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	w := world{topo: topo, ips: map[string]netip.Addr{}, names: topo.PeerNames()}
	for i, n := range w.names {
		w.ips[n] = netip.MustParseAddr(fmt.Sprintf("10.244.0.%d", 10+i))
		if IsExternal(n) {
			// On kind's Docker network, outside the pod CIDR.
			w.ips[n] = netip.MustParseAddr(fmt.Sprintf("172.18.0.%d", 10+i))
		}
	}
	if w.peers, err = topo.Peers(w.ips); err != nil {
		t.Fatal(err)
	}
	if w.cases, err = topo.Cases(); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w world) generate(t *testing.T, spec string) []networkingv1.NetworkPolicy {
	t.Helper()
	tmpl, err := os.ReadFile(filepath.Join(fixtures, spec))
	if err != nil {
		t.Fatal(err)
	}
	data, err := RenderSpec(tmpl, w.ips)
	if err != nil {
		t.Fatal(err)
	}
	app, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	pols, err := Generate(app)
	if err != nil {
		t.Fatal(err)
	}
	return pols
}

func (w world) predict(t *testing.T, pols []networkingv1.NetworkPolicy) *Matrix {
	return w.predictAs(t, pols, Upstream)
}

func (w world) predictAs(t *testing.T, pols []networkingv1.NetworkPolicy, p Profile) *Matrix {
	t.Helper()
	m, err := NewModel(w.topo.NamespaceLabels(), pols)
	if err != nil {
		t.Fatal(err)
	}
	return Predict(m.WithProfile(p), w.names, w.peers, w.cases)
}

// TestFixtureCases checks every case's pinned cells against the generator
// and the model under every profile, with no cluster.
func TestFixtureCases(t *testing.T) {
	w := newWorld(t)
	cases, err := LoadCases(filepath.Join(fixtures, "cases.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 10 {
		t.Fatalf("only %d cases loaded", len(cases))
	}
	for _, p := range []Profile{Upstream, Cilium} {
		for _, c := range cases {
			t.Run(p.Name+"/"+c.Name, func(t *testing.T) {
				if len(c.Cells) == 0 {
					t.Fatal("a case must pin at least one cell")
				}
				m := w.predictAs(t, w.generate(t, c.Spec), p)
				for _, msg := range CheckCells(m, c.Cells, p.Name) {
					t.Error(msg)
				}
			})
		}
	}
}

func TestLegacyMatrixEqualsLocationMatrix(t *testing.T) {
	w := newWorld(t)
	legacy := w.predict(t, w.generate(t, "apps/legacy.yaml"))
	located := w.predict(t, w.generate(t, "apps/app-workload.yaml"))
	ms, err := Diff(located, legacy)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 0 {
		t.Errorf("legacy selector and its location differ: %v", ms)
	}
	if legacy.Count(Blocked) == 0 || legacy.Count(Allowed) == 0 {
		t.Error("degenerate matrix: the comparison proves nothing")
	}
}

// TestWrongPolicyIsCaught feeds the deliberately wrong fixture policy
// through the model as a synthetic observed matrix: the diff against the
// generated policies must be exactly the one cell it wrongly admits.
func TestWrongPolicyIsCaught(t *testing.T) {
	w := newWorld(t)
	generated := w.generate(t, "apps/app-workload.yaml")
	expected := w.predict(t, generated)

	data, err := os.ReadFile(filepath.Join(fixtures, "wrong-entry-policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var wrong networkingv1.NetworkPolicy
	if err := yaml.UnmarshalStrict(data, &wrong); err != nil {
		t.Fatal(err)
	}
	inCluster := slices.Clone(generated)
	replaced := false
	for i := range inCluster {
		if inCluster[i].Name == wrong.Name && inCluster[i].Namespace == wrong.Namespace {
			inCluster[i], replaced = wrong, true
		}
	}
	if !replaced {
		t.Fatalf("the wrong policy %s/%s replaces no generated policy", wrong.Namespace, wrong.Name)
	}
	observed := w.predict(t, inCluster)

	ms, err := Diff(expected, observed)
	if err != nil {
		t.Fatal(err)
	}
	want := "tcp/80 iso-app/stranger -> iso-mods/m0: expected X (blocked), observed . (allowed)"
	if len(ms) != 1 || ms[0].String() != want {
		t.Fatalf("diff = %v, want exactly [%s]", ms, want)
	}
	row := slices.Index(w.names, "iso-app/stranger")
	col := slices.Index(w.names, "iso-mods/m0")
	table := DiffTable(expected, observed, 0)
	lines := strings.Split(table, "\n")
	line := lines[2+row]
	if line[len(line)-len(w.names)+col] != 'X' {
		t.Errorf("difference table has no X at row %d column %d:\n%s", row, col, table)
	}
	t.Logf("difference table:\n%s", table)
}

// TestExternalIPBlockExcept: the ipBlock admitting the external workload's
// /16 admits it, and the same policy with its address in except blocks it;
// under every profile the two matrices differ in exactly that workload's
// cell to the entry module.
func TestExternalIPBlockExcept(t *testing.T) {
	w := newWorld(t)
	if len(w.topo.External) == 0 {
		t.Fatal("the topology has no external workload")
	}
	want := []string{"tcp/80 external/client -> iso-mods/m0: expected . (allowed), observed X (blocked)"}
	for _, p := range []Profile{Upstream, Cilium} {
		admit := w.predictAs(t, w.generate(t, "apps/ipblock-external.yaml"), p)
		except := w.predictAs(t, w.generate(t, "apps/ipblock-external-except.yaml"), p)
		ms, err := Diff(admit, except)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range ms {
			got = append(got, m.String())
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: admit vs except differ in %q, want exactly %q", p.Name, got, want)
		}
	}
}

func TestTopologyRejectsReservedAndDuplicateExternalNames(t *testing.T) {
	for name, topo := range map[string]Topology{
		"namespace named external": {Namespaces: []Namespace{{Name: ExternalNamespace}}},
		"duplicate external":       {External: []External{{Name: "a"}, {Name: "a"}}},
		"external with a slash":    {External: []External{{Name: "a/b"}}},
		"unnamed external":         {External: []External{{}}},
	} {
		if err := topo.validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	ok := Topology{Namespaces: []Namespace{{Name: "ns", Pods: []Pod{{Name: "p"}}}}, External: []External{{Name: "client"}}}
	if err := ok.validate(); err != nil {
		t.Fatal(err)
	}
	if got := ok.PeerNames(); !slices.Equal(got, []string{"ns/p", "external/client"}) || !IsExternal(got[1]) || IsExternal(got[0]) {
		t.Errorf("peer names %q", got)
	}
	eps, err := ok.Peers(map[string]netip.Addr{"ns/p": netip.MustParseAddr("10.0.0.1"), "external/client": netip.MustParseAddr("172.18.0.5")})
	if err != nil || eps[1].Namespace != "" || eps[1].IP != netip.MustParseAddr("172.18.0.5") {
		t.Errorf("external endpoint %+v, %v: want no namespace (outside the cluster) and its address", eps, err)
	}
	if _, err := ok.Peers(map[string]netip.Addr{"ns/p": netip.MustParseAddr("10.0.0.1")}); err == nil {
		t.Error("no address for the external workload: want an error")
	}
	if len(ok.WithoutExternal().PeerNames()) != 1 {
		t.Error("WithoutExternal kept the external peer")
	}
}

func TestLoadCasesWantsUniqueIDs(t *testing.T) {
	for name, body := range map[string]string{
		"no id":        "- name: a\n  spec: s.yaml\n",
		"duplicate id": "- id: X-001\n  name: a\n  spec: s.yaml\n- id: X-001\n  name: b\n  spec: s.yaml\n",
	} {
		p := filepath.Join(t.TempDir(), "cases.yaml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadCases(p); err == nil || !strings.Contains(err.Error(), "id and name (both unique)") {
			t.Errorf("%s: LoadCases error %v, want one asking for unique ids", name, err)
		}
	}
}
