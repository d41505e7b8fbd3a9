package audit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const (
	goodAudit  = `{"client":"b","addr":"10.0.0.5:1","seq":1,"t_ns":50}` + "\n"
	goodDriver = `{"time":"x","level":"INFO","msg":"driver ready","cidrs":[],"cidr_count":0,"t_ns":10}
{"time":"x","level":"INFO","msg":"rpc","rpc":"FenceClusterNetwork","code":"OK","start_ns":90,"t_ns":100,"cidrs":["10.0.0.5/32"],"cidr_count":1}
`
)

func TestLoadBadInputIsAnInputError(t *testing.T) {
	dir := t.TempDir()
	good := Files{Audit: []string{writeFile(t, dir, "a.log", goodAudit)}, DriverLogs: []string{writeFile(t, dir, "d.log", goodDriver)}}
	for name, c := range map[string]struct {
		mod  func(f *Files)
		want string
	}{
		"no audit":                {func(f *Files) { f.Audit = nil }, "required"},
		"missing file":            {func(f *Files) { f.Audit = []string{filepath.Join(dir, "nope")} }, "no such file"},
		"audit not JSON mid-file": {func(f *Files) { f.Audit = []string{writeFile(t, dir, "x1", "garbage\n"+goodAudit)} }, "x1:1"},
		"audit unknown field": {func(f *Files) {
			f.Audit = []string{writeFile(t, dir, "x2", `{"client":"b","addr":"10.0.0.5:1","seq":1,"t_ns":5,"x":1}`+"\n")}
		}, "x2:1"},
		"audit addr without port": {func(f *Files) {
			f.Audit = []string{writeFile(t, dir, "x3", `{"client":"b","addr":"10.0.0.5","seq":1,"t_ns":5}`+"\n")}
		}, "ip:port"},
		"audit seq zero": {func(f *Files) {
			f.Audit = []string{writeFile(t, dir, "x4", `{"client":"b","addr":"10.0.0.5:1","seq":0,"t_ns":5}`+"\n")}
		}, "seq"},
		"driver cidrs cut": {func(f *Files) {
			f.DriverLogs = []string{writeFile(t, dir, "d1", strings.Replace(goodDriver, `"cidr_count":1`, `"cidr_count":2000`, 1))}
		}, "cut"},
		"driver rpc without times": {func(f *Files) {
			f.DriverLogs = []string{writeFile(t, dir, "d2", strings.Replace(goodDriver, `"start_ns":90,"t_ns":100,`, "", 1))}
		}, "start_ns"},
		"driver broken JSON": {func(f *Files) { f.DriverLogs = []string{writeFile(t, dir, "d3", "{\"msg\":\n"+goodDriver)} }, "d3:1"},
		"writer bad outcome": {func(f *Files) {
			f.WriterLogs = []string{writeFile(t, dir, "w1", `{"client":"b","seq":1,"send_ns":1,"t_ns":2,"outcome":"maybe"}`+"\n")}
		}, "outcome"},
		"enforce not JSON": {func(f *Files) { f.EnforceLog = writeFile(t, dir, "e1", "x\n") }, "e1:1"},
	} {
		t.Run(name, func(t *testing.T) {
			f := good
			c.mod(&f)
			_, err := Load(f)
			var ie *InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an InputError mentioning %q", err, c.want)
			}
		})
	}
	if _, err := Load(good); err != nil {
		t.Fatalf("good input: %v", err)
	}
}

func TestLoadToleratesATornLastLineAndForeignLines(t *testing.T) {
	dir := t.TempDir()
	f := Files{
		Audit:      []string{writeFile(t, dir, "a.log", goodAudit+`{"client":"b","addr":"10.0`)},
		DriverLogs: []string{writeFile(t, dir, "d.log", "panic: something\n\tgoroutine 1\n"+goodDriver+`{"msg":"rpc","rp`)},
		WriterLogs: []string{writeFile(t, dir, "w.log", `{"client":"b","seq":1,"send_ns":40,"t_ns":51,"outcome":"ok","server_ns":50}`+
			"\nfenceproof writer: b: ok 1, refused 0, error 0\n")},
	}
	in, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Audit) != 1 || len(in.Driver) != 2 || len(in.Writers) != 1 || len(in.Warnings) != 4 {
		t.Fatalf("audit %d, driver %d, warnings %q", len(in.Audit), len(in.Driver), in.Warnings)
	}
	// The one audited write (t=50) precedes the ack (t=100): clean.
	if res := Check(in, Options{}); !res.OK() {
		t.Fatal(res.Summary())
	}
}

func TestAFailedRPCWithCutCIDRsIsAccepted(t *testing.T) {
	dir := t.TempDir()
	line := `{"msg":"rpc failed","rpc":"FenceClusterNetwork","code":"InvalidArgument","start_ns":90,"t_ns":100,"cidrs":["x"],"cidr_count":5000}` + "\n"
	in, err := Load(Files{Audit: []string{writeFile(t, dir, "a", goodAudit)}, DriverLogs: []string{writeFile(t, dir, "d", line)}})
	if err != nil || len(in.Driver) != 1 || in.Driver[0].OK {
		t.Fatalf("%v %+v", err, in.Driver)
	}
}
