package sanity

import (
	"errors"
	"slices"
	"strings"
	"sync/atomic"

	"google.golang.org/grpc/status"
)

// redactor replaces every secret value the run knows (the configured ones
// and the sentinel) with [REDACTED]. It is installed once per run, before
// anything is sent, and every message the suite keeps or prints passes
// through it, so that a driver that echoes a secret fails ERR-005 without
// the suite spreading the value into stdout, JUnit, JSON, HTML or Markdown.
var redactor atomic.Pointer[strings.Replacer]

// Redacted is what a secret value is replaced with.
const Redacted = "[REDACTED]"

func installRedactor(secrets map[string]string) {
	values := []string{sentinel}
	for _, v := range secrets {
		if len(v) >= 3 {
			values = append(values, v)
		}
	}
	// Longest first, so that a value containing another is replaced whole.
	slices.SortFunc(values, func(a, b string) int { return len(b) - len(a) })
	var pairs []string
	for _, v := range values {
		pairs = append(pairs, v, Redacted)
	}
	redactor.Store(strings.NewReplacer(pairs...))
}

// redact removes every known secret value from s.
func redact(s string) string {
	if r := redactor.Load(); r != nil {
		return r.Replace(s)
	}
	return s
}

// rawMessage is the driver's error message as sent, for the echo checks
// only; everything that is kept or printed uses errMessage.
func rawMessage(err error) string {
	if err == nil {
		return ""
	}
	var h *hungError
	if errors.As(err, &h) {
		return h.Error()
	}
	if st, ok := status.FromError(err); ok {
		return st.Message()
	}
	return err.Error()
}

// echoedSecrets returns the names of the secrets whose value appears in msg
// (the sentinel under its own name), and the names of those too short to
// check, which the report lists.
func echoedSecrets(msg string, secrets map[string]string) (echoed, tooShort []string) {
	if strings.Contains(msg, sentinel) {
		echoed = append(echoed, "sentinel")
	}
	for _, k := range sortedKeys(secrets) {
		v := secrets[k]
		switch {
		case len(v) < minSecretLen:
			tooShort = append(tooShort, k)
		case strings.Contains(msg, v):
			echoed = append(echoed, k)
		}
	}
	return echoed, tooShort
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
