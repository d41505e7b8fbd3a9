package sanity

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	. "github.com/onsi/ginkgo/v2"
	"google.golang.org/grpc/codes"

	"github.com/fenceproof/fenceproof/rulebook"
)

// The checks every rule body uses. A failure is one sentence the suite
// wrote, with every driver-supplied string quoted by show and the whole
// text cleaned (secrets redacted, unprintable bytes escaped): never a Go
// value dump, never a raw driver byte. An RPC the suite did not send or gave
// up on because the run was cut ends the case as NOT RUN, never FAIL.

// failf fails the current case with a sentence.
func failf(format string, a ...any) {
	GinkgoHelper()
	rulebook.Fail(clean(fmt.Sprintf(format, a...)))
}

// check fails the current case with the sentence unless ok.
func check(ok bool, format string, a ...any) {
	GinkgoHelper()
	if !ok {
		failf(format, a...)
	}
}

// settleCut ends the case as NOT RUN when err says the run was cut.
func settleCut(err error) {
	GinkgoHelper()
	var c *cutError
	if errors.As(err, &c) {
		rulebook.Cut(c.kind, "%s", c.why)
	}
}

// expectOK fails unless the RPC answered OK, naming the call.
func expectOK(err error, what string) {
	GinkgoHelper()
	if err == nil {
		return
	}
	settleCut(err)
	failf("%s: expected OK, got %s: %s", what, codeSpec(err), errText(err))
}

// expectCode fails unless the RPC answered one of the codes (Go names,
// e.g. "InvalidArgument").
func expectCode(err error, what string, want ...string) {
	GinkgoHelper()
	settleCut(err)
	names := make([]string, len(want))
	for i, w := range want {
		names[i] = specName(w)
	}
	if err == nil {
		failf("%s: expected %s, got OK", what, strings.Join(names, " or "))
	}
	if !slices.Contains(want, codeName(err)) {
		failf("%s: expected %s, got %s: %s", what, strings.Join(names, " or "), codeSpec(err), errText(err))
	}
}

// codeSpec is err's code as the spec spells it (INVALID_ARGUMENT).
func codeSpec(err error) string { return specName(codeName(err)) }

// specName turns a Go code name (InvalidArgument) into the spec's
// (INVALID_ARGUMENT).
func specName(goName string) string {
	var c codes.Code
	if strings.ContainsRune(goName, ' ') || c.UnmarshalJSON([]byte(`"`+goName+`"`)) == nil {
		return goName
	}
	var b strings.Builder
	for i, r := range goName {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// note records an observation in the report (shown for INFO rules); the
// text is cleaned.
func note(format string, a ...any) { rulebook.Note("%s", clean(fmt.Sprintf(format, a...))) }

// notSupported ends a case the driver's profile legitimately opts out of.
func notSupported(format string, a ...any) {
	GinkgoHelper()
	rulebook.NotSupported("%s", clean(fmt.Sprintf(format, a...)))
}

// notRun ends a case that cannot run because something it needs is
// missing; the reason names it.
func notRun(format string, a ...any) {
	GinkgoHelper()
	rulebook.NotRun("%s", clean(fmt.Sprintf(format, a...)))
}

// needState ends a case as NOT RUN when the fences cannot be read: List is
// missing (optional) or broken, and no --observe-command was given. The
// missing or broken List fails its own rule (LIST-001), once.
func (s *State) needState() {
	GinkgoHelper()
	if s.stateSource() != SourceNone {
		return
	}
	if s.listMissing {
		notRun("this rule reads the fences, and ListClusterFence is not implemented (profile listClusterFence: optional); give --observe-command to read the storage's fences instead")
	}
	notRun("this rule reads the fences, and %s (LIST-001 fails for it); give --observe-command to read the storage's fences instead", s.listErr)
}

// readFences reads the fences in force for a rule that needs them. A rule
// whose reading fails is NOT RUN (LIST-001 fails for the failure).
func (s *State) readFences(ctx context.Context, when string) fenceView {
	GinkgoHelper()
	s.needState()
	listed, err := s.observed(ctx)
	if err != nil {
		settleCut(err)
		s.noteListFailure(err)
		notRun("reading the fences %s failed (%s: %s), so this rule could not see them; LIST-001 fails for it", when, codeSpec(err), errText(err))
	}
	s.noteOverFence(listed)
	return newView(listed)
}

// noteListFailure records a failed reading of the fences for LIST-001.
func (s *State) noteListFailure(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lists.Failures) < 10 {
		s.lists.Failures = append(s.lists.Failures, fmt.Sprintf("%s: %s", codeSpec(err), errText(err)))
	}
}
