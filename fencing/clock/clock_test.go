package clock

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestEstimateBoundsTheOffset: for samples whose node reading lies
// anywhere between send and receive, the true offset is within the
// estimate's bound, and the shortest round trip is the one used.
func TestEstimateBoundsTheOffset(t *testing.T) {
	const offset = int64(7e6) // the node is 7 ms ahead
	var samples []Sample
	for i, rtt := range []int64{9e6, 3e6, 20e6} {
		sent := int64(1e18) + int64(i)*1e9
		samples = append(samples, Sample{SentNs: sent, NodeNs: sent + rtt/3 + offset, ReceivedNs: sent + rtt})
	}
	e, err := EstimateFrom("n", samples)
	if err != nil {
		t.Fatal(err)
	}
	if e.UncertaintyNs != 1.5e6 || e.AtNs != samples[1].SentNs {
		t.Errorf("estimate %+v: want the 3 ms round trip", e)
	}
	if d := e.OffsetNs - offset; d > e.UncertaintyNs || -d > e.UncertaintyNs || int64(e.Bound()) < offset {
		t.Errorf("estimate %s does not bound the true offset %d", e, offset)
	}
	if Bound(e, Estimate{OffsetNs: -20e6, UncertaintyNs: 1}) != 20e6+1 {
		t.Error("Bound is not the largest")
	}
	if _, err := EstimateFrom("n", []Sample{{SentNs: 5, ReceivedNs: 4}}); err == nil {
		t.Error("a sample whose clock stepped back was used")
	}
}

// TestAgentServesTimeAndLogs: the agent's clock through Measure, its log
// files, their removal, and no way out of its root.
func TestAgentServesTimeAndLogs(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "run1"), 0o755)
	os.WriteFile(filepath.Join(root, "run1", "w.log"), []byte("line\n"), 0o644)
	os.WriteFile(filepath.Join(root, "secret"), []byte("no"), 0o644)
	srv := httptest.NewServer(Agent{Node: "n1", Root: root})
	defer srv.Close()
	get := func(path string) (int, []byte) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b [64]byte
		n, _ := resp.Body.Read(b[:])
		return resp.StatusCode, b[:n]
	}
	e, err := Measure(context.Background(), "n1", 5, func(context.Context) ([]byte, error) { _, b := get("/time"); return b, nil })
	if err != nil || e.Samples != 5 || e.Bound() > time.Second {
		t.Fatalf("Measure: %+v %v", e, err)
	}
	if _, err := Measure(context.Background(), "n2", 1, func(context.Context) ([]byte, error) { _, b := get("/time"); return b, nil }); err == nil {
		t.Error("an answer from another node was taken")
	}
	if code, b := get("/logs/run1/w.log"); code != 200 || string(b) != "line\n" {
		t.Errorf("log: %d %q", code, b)
	}
	for _, p := range []string{"/logs/run1/../secret", "/logs/..%2fsecret/x", "/logs/run1/x/y", "/secret"} {
		if code, _ := get(p); code == 200 {
			t.Errorf("GET %s answered 200", p)
		}
	}
	req, _ := http.NewRequest(http.MethodDelete, srv.URL+"/logs/run1", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	if _, err := os.Stat(filepath.Join(root, "run1")); !os.IsNotExist(err) {
		t.Error("the run's directory is still there")
	}
	var r Reading
	_, b := get("/time")
	if json.Unmarshal(b, &r) != nil || r.Node != "n1" {
		t.Errorf("time: %q", b)
	}
}
