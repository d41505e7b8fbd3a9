package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAuditCheckExitStatus(t *testing.T) {
	dir := t.TempDir()
	w := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	driverLog := w("driver.log", `{"msg":"rpc","rpc":"FenceClusterNetwork","code":"OK","start_ns":90,"t_ns":100,"cidrs":["10.0.0.5/32"],"cidr_count":1}`+"\n")
	clean := w("clean.log", `{"client":"b","addr":"10.0.0.5:1","seq":1,"t_ns":99}`+"\n")
	dirty := w("dirty.log", `{"client":"b","addr":"10.0.0.5:1","seq":1,"t_ns":99}`+"\n"+`{"client":"b","addr":"10.0.0.5:1","seq":2,"t_ns":101}`+"\n")
	report := filepath.Join(dir, "reports")
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"check", "--audit", clean, "--driver-log", driverLog}, 0},
		{[]string{"check", "--audit", dirty, "--driver-log", driverLog, "--report", report, "--name", "fencing-audit"}, 1},
		{[]string{"check", "--audit", dirty}, 2},
		{[]string{"check", "--audit", filepath.Join(dir, "missing"), "--driver-log", driverLog}, 2},
		{[]string{"check", "--audit", driverLog, "--driver-log", driverLog}, 2},
		{[]string{"check", "--audit", clean, "--driver-log", driverLog, "--skew", "-1s"}, 2},
		{[]string{"check", "--bogus"}, 2},
		{[]string{"verify"}, 2},
		{nil, 2},
	} {
		if got := runAudit(c.args); got != c.want {
			t.Errorf("audit %v: exit %d, want %d", c.args, got, c.want)
		}
	}
	md, err := os.ReadFile(filepath.Join(report, "fencing-audit.md"))
	if err != nil || !strings.Contains(string(md), `"seq":2`) || !strings.Contains(string(md), "**FAIL**") {
		t.Fatalf("report: %v\n%s", err, md)
	}
	if _, err := os.Stat(filepath.Join(report, "fencing-audit-timeline.txt")); err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(report, "fencing-audit.json"))
	if err != nil || !strings.Contains(string(js), `"ok": false`) || !strings.Contains(string(js), `"delta_ms": 0.000001`) {
		t.Fatalf("json report: %v\n%s", err, js)
	}
}
