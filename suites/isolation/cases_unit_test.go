package isolation

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"

	"github.com/fenceproof/fenceproof/internal/e2e"
)

// TestCaseTable: every case of the table has exactly one spec with its ID
// and labels, and every spec is a case of the table (a Ginkgo preview: no
// cluster, nothing runs).
func TestCaseTable(t *testing.T) {
	if e2e.Enabled(cfg) {
		t.Skip("the suite ran on a cluster in this process: Ginkgo previews only an unbuilt tree (make test runs this)")
	}
	if err := isolationCases().Check(PreviewSpecs("data-plane isolation")); err != nil {
		t.Fatal(err)
	}
}
