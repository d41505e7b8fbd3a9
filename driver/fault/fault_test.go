package fault

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

func TestParse(t *testing.T) {
	s, err := Parse([]string{"delay=Fence:50ms", "code=List:INTERNAL", "code=Probe:unavailable", "race", "no-dedupe"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Delay["Fence"] != 50*time.Millisecond || s.Code["List"] != codes.Internal || s.Code["Probe"] != codes.Unavailable || !s.Race || !s.NoDedupe || s.NoAuth {
		t.Fatalf("parsed %+v", s)
	}
	if !s.Active() || len(s.Specs()) != 5 {
		t.Fatalf("Active/Specs wrong: %v", s.Specs())
	}
	start := time.Now()
	if c, ok := s.Before("Fence"); ok || c != codes.OK || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("Before(Fence) = %v %v after %v", c, ok, time.Since(start))
	}
	if c, ok := s.Before("List"); !ok || c != codes.Internal {
		t.Fatalf("Before(List) = %v %v", c, ok)
	}
	var none *Set
	if none.Active() {
		t.Fatal("nil set active")
	}
	if _, ok := none.Before("Fence"); ok {
		t.Fatal("nil set failed an RPC")
	}
}

func TestParseErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"bogus":                   "unknown fault",
		"race=1":                  "takes no argument",
		"delay":                   "want delay=RPC:DURATION",
		"delay=Fence":             "want delay=RPC:DURATION",
		"delay=Fence:soon":        "bad duration",
		"delay=Fence:-1s":         "bad duration",
		"delay=Nope:1s":           "unknown RPC",
		"code=Fence:NOPE":         "unknown or OK",
		"code=Fence:OK":           "unknown or OK",
		"code=Fence":              "want code=RPC:CODE",
		"code=Frobnicate:OK":      "unknown RPC",
		"ack-before-enforce=soon": "ack-before-enforce=DURATION",
		"ack-before-enforce=-1s":  "ack-before-enforce=DURATION",
	} {
		_, err := Parse([]string{spec})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want error mentioning %q", spec, err, want)
		}
	}
}

func TestEveryNameParses(t *testing.T) {
	for _, n := range Names() {
		spec := n
		switch n {
		case "delay":
			spec = "delay=Probe:1ms"
		case "code":
			spec = "code=Probe:UNKNOWN"
		}
		s, err := Parse([]string{spec})
		if err != nil || !s.Active() {
			t.Errorf("Parse(%q) = %v", spec, err)
		}
	}
	if len(Names()) != 45 {
		t.Errorf("got %d fault names, want 45", len(Names()))
	}
}
