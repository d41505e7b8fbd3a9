package probeline

import "testing"

func TestParseRoundTrip(t *testing.T) {
	in := Line{To: "10.0.0.1:80", Proto: "tcp", OK: true, Reply: "ok m0", Ms: 3}
	got, err := Parse([]byte("noise\n" + in.String() + "\n"))
	if err != nil || got != in {
		t.Fatalf("Parse = %+v, %v; want %+v", got, err, in)
	}
	for _, bad := range []string{"", "usage: probe", `{"to":"x"}`, "{"} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	down, err := Parse([]byte(`{"to":"x:1","proto":"udp","ok":false,"error":"i/o timeout","reply":"","ms":1000}`))
	if err != nil || down.OK || down.Error != "i/o timeout" {
		t.Errorf("Parse(unreachable) = %+v, %v", down, err)
	}
}
