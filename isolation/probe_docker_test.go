package isolation

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// fakeDocker writes a docker CLI stand-in that records its arguments and
// prints the given output with the given exit status.
func fakeDocker(t *testing.T, output string, status int) (bin, argsFile string) {
	t.Helper()
	dir := t.TempDir()
	argsFile = filepath.Join(dir, "args")
	bin = filepath.Join(dir, "docker")
	script := "#!/bin/sh\necho \"$@\" > " + argsFile + "\nprintf '%s\\n' '" + output + "'\nexit " + string(rune('0'+status)) + "\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, argsFile
}

var extReq = ProbeRequest{
	From: ProbeEndpoint{Name: "external/client", Container: "fp-ext", IP: netip.MustParseAddr("172.18.0.9")},
	To:   ProbeEndpoint{Name: "iso-mods/m0", Namespace: "iso-mods", Pod: "m0", IP: netip.MustParseAddr("10.244.1.7")},
	Case: PortProto{Port: 80, Protocol: corev1.ProtocolTCP},
}

func TestDockerProber(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		status    int
		reachable bool
		wantErr   string
	}{
		{"reached", `{"to":"10.244.1.7:80","proto":"tcp","ok":true,"reply":"ok m0 from 172.18.0.9"}`, 0, true, ""},
		{"blocked: exit 1 with a line is a verdict, not an error", `{"to":"10.244.1.7:80","proto":"tcp","ok":false,"error":"i/o timeout"}`, 1, false, ""},
		{"no such container", `Error: No such container: fp-ext`, 1, false, "docker exec in fp-ext"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, argsFile := fakeDocker(t, tc.out, tc.status)
			p := &DockerProber{Command: "/usr/local/bin/probe", Timeout: time.Second, Docker: bin}
			res, err := p.Probe(context.Background(), extReq)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("result %+v, err %v: want an error containing %q", res, err, tc.wantErr)
				}
				return
			}
			if err != nil || res.Reachable != tc.reachable {
				t.Fatalf("result %+v, err %v: want reachable=%v", res, err, tc.reachable)
			}
			args, _ := os.ReadFile(argsFile)
			want := "exec fp-ext /usr/local/bin/probe connect --proto tcp --to 10.244.1.7:80 --timeout 1s"
			if strings.TrimSpace(string(args)) != want {
				t.Errorf("docker %s; want docker %s", strings.TrimSpace(string(args)), want)
			}
		})
	}
}

type constProber struct{ reachable bool }

func (c constProber) Probe(context.Context, ProbeRequest) (ProbeResult, error) {
	return ProbeResult{Reachable: c.reachable}, nil
}

func TestByRunner(t *testing.T) {
	b := ByRunner{Pod: constProber{false}, Container: constProber{true}}
	if r, _ := b.Probe(context.Background(), extReq); !r.Reachable {
		t.Error("a container source went to the pod prober")
	}
	podReq := ProbeRequest{From: extReq.To, To: extReq.From, Case: extReq.Case}
	if r, _ := b.Probe(context.Background(), podReq); r.Reachable {
		t.Error("a pod source went to the container prober")
	}
	if _, err := (ByRunner{Pod: constProber{}}).Probe(context.Background(), extReq); err == nil {
		t.Error("a container source without a container prober: want an error")
	}
	if _, err := (&DockerProber{}).Probe(context.Background(), podReq); err == nil {
		t.Error("docker prober asked to probe from a pod: want an error")
	}
}

func readArgs(path string) (string, error) {
	b, err := os.ReadFile(path)
	return strings.TrimSpace(string(b)), err
}
