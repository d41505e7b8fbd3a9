package sanity_test

import (
	"strings"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/sanity"
)

// Failures name the inputs that caused them, in the order events happened.

// TestCorpusCreditsTheStringsTheDriverAccepted pins CIDR-001's message that
// named strings the driver had refused, and not the ones it accepted: a
// listed block is credited to the corpus strings that could mean it and
// were accepted (/+24 and /0024 here), never to a refused one (/-24).
func TestCorpusCreditsTheStringsTheDriverAccepted(t *testing.T) {
	r := sanityRun(t, time.Minute, "--driver-backend", "memory", "--driver-fault", "inet-aton", "--label-filter", "CIDR-001")
	rr, _ := r.result.Rule("CIDR-001")
	if rr.Verdict != sanity.VerdictFail {
		t.Fatalf("CIDR-001 is %s: %s", rr.Verdict, rr.Reason)
	}
	for _, want := range []string{`the accepted "192.0.2.0/+24"`, `"192.0.2.0/0024"`} {
		if !strings.Contains(rr.Reason, want) {
			t.Errorf("CIDR-001 does not credit %s: %s", want, rr.Reason)
		}
	}
	if strings.Contains(rr.Reason, "/-24") || strings.Contains(rr.Reason, "/0x18") {
		t.Errorf("CIDR-001 credits a string the driver refused: %s", rr.Reason)
	}
}

// TestLateWorkIsToldInOrder pins TIME-002's message that told a late Fence
// and the Unfence that followed it in the wrong order: the abandoned
// request, then the request that followed, then what was seen.
func TestLateWorkIsToldInOrder(t *testing.T) {
	r := sanityRun(t, time.Minute, "--driver-backend", "memory", "--driver-fault", "ignore-cancel", "--label-filter", "TIME-002")
	rr, _ := r.result.Rule("TIME-002")
	msg := rr.Reason
	order := []string{"FenceClusterNetwork of", "was abandoned", "the UnfenceClusterNetwork of", "sent right after it answered OK", "landed"}
	at := 0
	for _, w := range order {
		i := strings.Index(msg[at:], w)
		if i < 0 {
			t.Fatalf("TIME-002's message does not tell %q after %q: %s", w, msg[:at], msg)
		}
		at += i
	}
	if !strings.Contains(msg, "landed between the two") && !strings.Contains(msg, "landed after the Unfence the client sent next") {
		t.Errorf("TIME-002 does not say the abandoned Fence landed after the Unfence that followed it: %s", msg)
	}
}
