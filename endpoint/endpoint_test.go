package endpoint

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		s      string
		use    Use
		target string // "" when refused
		errHas string
	}{
		{"unix:///tmp/d.sock", Dial, "unix:///tmp/d.sock", ""},
		{"tcp://127.0.0.1:9000", Dial, "passthrough:///127.0.0.1:9000", ""},
		{"tcp://[::1]:9000", Dial, "passthrough:///[::1]:9000", ""},
		{"unix://", Dial, "", "absolute socket path"},
		{"unix://driver.sock", Dial, "", "absolute socket path"},
		{"unix:///tmp/", Dial, "", "absolute socket path"},
		{"tcp://localhost", Dial, "", "host:port"},
		{"tcp://", Dial, "", "host:port"},
		{"tcp://:9000", Dial, "", "host:port"},
		{"tcp://127.0.0.1:0", Dial, "", "between 1 and 65535"},
		{"tcp://127.0.0.1:99999", Dial, "", "port"},
		{"driver.sock", Dial, "", "unix:// or tcp://"},
		{"http://x", Dial, "", "unix:// or tcp://"},
		{"", Listen, "", "unix:// or tcp://"},
		{"tcp://127.0.0.1:0", Listen, "passthrough:///127.0.0.1:0", ""},
		{"tcp://:9070", Listen, "passthrough:///:9070", ""},
		{"npipe://./pipe/", Dial, "", "unix:// or tcp://"},
		{"unix:///run/csi-proxy/", Directory, "unix:///run/csi-proxy/", ""},
		{"npipe://./pipe/", Directory, "npipe://./pipe/", ""},
		{"unix://rel/dir", Directory, "", "absolute"},
		{"tcp://127.0.0.1:1", Directory, "", "npipe://"},
	} {
		e, err := Parse(c.s, c.use)
		switch {
		case c.errHas != "" && (err == nil || !strings.Contains(err.Error(), c.errHas)):
			t.Errorf("Parse(%q, %d) = %v, %v; want an error saying %q", c.s, c.use, e, err, c.errHas)
		case c.errHas == "" && (err != nil || e.Target() != c.target):
			t.Errorf("Parse(%q, %d) = %q, %v; want %q", c.s, c.use, e.Target(), err, c.target)
		}
	}
	if e, _ := Parse("npipe://", Directory); e.Address != PipeDir {
		t.Errorf("npipe address %q", e.Address)
	}
}
